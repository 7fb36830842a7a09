// SPDX-License-Identifier: MIT
// Comparing two models tensor by tensor: "did this conversion break my model?"
//
// Three layers, all pure computation (no I/O, no threads), so the native CLI and the wasm build drive the
// same code and print the same JSON:
//   pair_models()     pairs the tensors of model A with those of model B: by name for two models of the same
//                     format, by llama.cpp's conversion rules (hf_names.h) for a Hugging Face safetensors
//                     checkpoint against a GGUF, with the converter's transform for each pair;
//   PairComparator    consumes one pair's decoded float32 values window by window (a window is a run of
//                     whole outer rows of both sides) and gives the metrics and a hint naming the conversion
//                     mistake that explains a difference;
//   compare_report_to_json()   the one JSON writer of the result (`weightstream diff --json`, JS compare()).
//
// Element order. A pair's elements are compared in the element order of the GGUF side (of B for two models
// of the same format); the transform (a Q/K permutation, + 1) is applied to the Hugging Face side first, by
// hf_convert_rows() (hf_checkpoint.h), the values convert_hf_to_gguf.py writes.
// max_abs_index is an index in that order.
//
// Summation order (what makes the numbers deterministic). The sums behind rmse, nmse and cosine are taken in
// double over the pairs where both values are finite. Elements are grouped in runs of kCompareRun by their
// index; inside a run element i adds into lane i % 4 in index order and the lanes are added as
// (l0 + l1) + (l2 + l3); run totals are then added in a fixed binary tree over run numbers (the node over runs
// [k 2^l, (k + 1) 2^l) is its left child plus its right child, a missing right child is skipped). The result
// depends only on the values, never on how they were cut into windows or on how partial accumulators covering
// whole runs were merged.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "weightstream/dtype.h"
#include "weightstream/hf_checkpoint.h"
#include "weightstream/model_info.h"
#include "weightstream/status.h"

namespace ws {

constexpr uint64_t kCompareRun = 4096;  // elements per summation run (see above)

// The metrics of one compared pair of tensors (JSON "metrics").
struct CompareMetrics {
    uint64_t n_elements = 0;     // pairs compared
    uint64_t n_finite = 0;       // pairs where both values are finite: the sums are over these
    double max_abs = 0;          // the largest |a - b| over the finite pairs (0 when there are none)
    uint64_t max_abs_index = 0;  // the first element with that difference
    double sum_sq_diff = 0;      // sum of (a - b)^2
    double sum_sq_a = 0;         // sum of a^2
    double sum_sq_b = 0;         // sum of b^2
    double sum_ab = 0;           // sum of a * b
    uint64_t n_diff = 0;         // pairs whose float32 bits differ (two NaNs count as equal, -0 and +0 differ)
    uint64_t n_nan_a = 0, n_nan_b = 0, n_inf_a = 0, n_inf_b = 0;
    // Pairs that differ where either value is NaN or Inf (NaN or Inf against a finite value, +Inf against -Inf
    // or NaN): the sums leave them out, so the nmse cannot see them; they make the verdict non_finite.
    uint64_t n_nonfinite_diff = 0;

    bool identical() const { return n_diff == 0; }
    double rmse() const;    // sqrt(sum_sq_diff / n_finite); NaN when n_finite is 0
    double nmse() const;    // sum_sq_diff / sum_sq_a; 0 when both are 0, +Inf when only sum_sq_a is
    double cosine() const;  // sum_ab / sqrt(sum_sq_a * sum_sq_b); NaN when either is 0
};

// The metrics of a stream of float pairs, added in index order (see the summation order above).
class MetricsAccumulator {
public:
    // `first` is the index of the first pair this accumulator will see: 0, or for a partial accumulator that
    // is merged later, a multiple of kCompareRun.
    explicit MetricsAccumulator(uint64_t first = 0);

    // Adds pairs (a[i], b[i]), i < n, as the next n elements. NaN and Inf are counted, never summed.
    void add(const float* a, const float* b, uint64_t n);
    // Appends `next`, which must start where this one ends, and this one must end on a run boundary (or be
    // empty); kInternal otherwise. The merged numbers equal those of one accumulator over all the pairs.
    Status merge(const MetricsAccumulator& next);
    // The metrics so far (this accumulator is unchanged and may take more pairs).
    CompareMetrics metrics() const;
    uint64_t end() const { return first_ + n_; }  // index after the last pair added

private:
    static constexpr int kSums = 4;  // (a - b)^2, a^2, b^2, a * b
    struct Node {
        uint64_t run = 0;    // first run covered
        uint32_t level = 0;  // covers 2^level runs
        double sum[kSums] = {};
    };
    void close_run();
    void push(Node node);

    uint64_t first_ = 0;
    uint64_t n_ = 0;
    double lanes_[kSums][4] = {};  // the open run
    std::vector<Node> stack_;      // complete dyadic nodes, levels strictly decreasing (at most 64)
    CompareMetrics counts_;        // everything but the sums
};

// kNonFinite: the pair differs where a value is NaN or Inf (CompareMetrics::n_nonfinite_diff > 0), whatever
// its nmse over the finite pairs (0 for a tensor that is all NaN): a gate on the nmse fails it.
enum class Verdict : uint8_t { kIdentical, kDifferent, kNonFinite, kOnlyA, kOnlyB, kIncomparable };
// "identical", "different", "non_finite", "only_a", "only_b", "incomparable"
const char* verdict_name(Verdict v);

// One pair to compare, as pair_models() plans it. A pair compares `rows` outer rows (slices along the first,
// outermost dim; a 1-D tensor has one-element rows) of `row_elements` elements each: rows
// [a_row0, a_row0 + rows) of A's tensor with rows [b_row0, b_row0 + rows) of B's.
struct PairPlan {
    int64_t a = -1;  // index in A's tensors, -1 for a row only in B
    int64_t b = -1;  // index in B's tensors, -1 for a row only in A
    Transform transform = Transform::kNone;
    bool source_is_a = false;  // the transform applies to A's values (A is the Hugging Face side)
    uint64_t heads = 0;        // kPermuteQ/kPermuteK: the head count the permutation is by
    uint64_t a_row0 = 0, b_row0 = 0;
    uint64_t rows = 0;
    uint64_t row_elements = 0;
    std::string problem;  // not empty: the pair cannot be compared (the row is incomparable), and why
};

// Where the models come from and how they pair (JSON "a", "b", "mapping").
struct ComparePlan {
    std::string mapping;  // "names" or "hf-to-gguf:<family>"
    std::vector<PairPlan> pairs;
};

// What pair_models() knows beyond the two tensor tables: config.json beside a safetensors side.
struct PairingOptions {
    const HfConfig* config_a = nullptr;  // parsed config.json of A (when A is safetensors and one was found)
    const HfConfig* config_b = nullptr;
};

// Pairs every tensor of A with one of B (or none). Same format: by name. Safetensors against GGUF: the
// family comes from the GGUF's general.architecture, else from config.json (model_type, then
// text_config.model_type); an unknown family pairs by name. The head counts of the Q/K permutation come
// from the GGUF's <arch>.attention.head_count / head_count_kv, else from config.json. Rows are in A's tensor
// order (a fused tensor gives one row per part), then B's unpaired tensors in B's order. Never fails: a
// pair that cannot be compared (shapes that disagree, no head count) gets a `problem`.
ComparePlan pair_models(const ModelInfo& a, const ModelInfo& b, const PairingOptions& options);

// One row of the report (JSON "tensors"[i]).
struct CompareRow {
    std::string a, b;  // tensor names ("" for none: JSON null)
    std::string dtype_a, dtype_b;
    std::vector<int64_t> shape_a, shape_b;  // outermost first
    Transform transform = Transform::kNone;
    uint64_t heads = 0;  // the Q/K permutation's head count (JSON "heads", null for 0: no permutation)
    Verdict verdict = Verdict::kIncomparable;
    bool has_metrics = false;
    CompareMetrics metrics;
    std::string hint;  // "" for none (JSON null)
};

// A row for a plan entry before any value is compared: the names, dtypes, shapes and transform; the verdict
// only_a / only_b / incomparable (with the problem as the hint) when the plan already decides it.
CompareRow plan_row(const ModelInfo& a, const ModelInfo& b, const PairPlan& pair);

// Consumes one pair's values and gives its verdict, metrics and hint.
// Memory: a window of the transformed source side (two for a Q/K permutation or + 1: once, and twice for the
// hint), one of the requantized/rounded values and, for 2-D pairs with rows of at most 2^18 elements, four
// doubles per row element (the transposition test).
class PairComparator {
public:
    // a_dtype, b_dtype: the stored types of A's and B's tensor (for the rounding and quantization hints).
    PairComparator(const PairPlan& pair, DType a_dtype, DType b_dtype);

    // Windows must cover whole multiples of this many rows (the last window may be shorter): a head for the
    // Q/K permutation (it mixes rows only within a head), else 1.
    uint64_t window_rows() const { return window_rows_; }
    // Adds rows [first_row, first_row + n_rows) of the pair (relative to a_row0 / b_row0): a and b hold
    // n_rows * row_elements decoded floats of A and B. Windows come in order, without gaps or overlap, and
    // first_row is a multiple of window_rows(); kInternal otherwise.
    Status add_window(uint64_t first_row, uint64_t n_rows, const float* a, const float* b);

    // The requantization test, when requantize_test(): whether the quantized side is the other side quantized
    // by ggml's reference quantizer. It runs a quantizer over every value, by far the costliest test, so it is
    // apart from add_window() and may run on several threads: the caller counts every window it added, in
    // slices of rows cut at window_rows() and at the blocks of both types (as windows are), with
    // count_requantized() (const: any slices at once, each with its own scratch), and adds the counts with
    // add_requantized() before finish(). Arguments as add_window()'s, for the slice.
    bool requantize_test() const { return requantize_; }
    struct RequantizeScratch {
        std::vector<float> converted, rounded;
        std::vector<uint8_t> encoded;
    };
    uint64_t count_requantized(uint64_t first_row, uint64_t n_rows, const float* a, const float* b,
                               RequantizeScratch* scratch) const;
    void add_requantized(uint64_t matches) { requantized_ += matches; }
    // After the last window: the row with verdict, metrics and hint filled in (other fields from `row`).
    CompareRow finish(CompareRow row) const;

private:
    struct Hypothesis {
        const char* words;  // the hint when this explains the difference
        MetricsAccumulator acc;
    };
    const float* transform_source(const float* src, uint64_t first_row, uint64_t n_rows, int times);
    void add_oriented(MetricsAccumulator* acc, const float* source, const float* target, uint64_t n) const;
    void count_rounding(const float* source, const float* target, uint64_t n);
    void add_column_stats(const float* source, const float* target, uint64_t first_row, uint64_t n_rows);
    std::string hint(const CompareMetrics& m) const;

    PairPlan pair_;
    DType a_dtype_, b_dtype_;
    DType source_dtype_;
    uint64_t window_rows_ = 1;
    uint64_t next_row_ = 0;
    MetricsAccumulator main_;
    std::vector<Hypothesis> hypotheses_;
    std::vector<float> scratch_;  // the transformed source window
    std::vector<float> twice_;    // ... with the transform applied twice (a hypothesis)
    std::vector<float> rounded_;  // re-encoded values (rounding and requantization tests)
    std::vector<uint8_t> encoded_;
    // Rounding: pairs where the target equals the source rounded to F16 / BF16, or the other way round.
    uint64_t round_f16_ = 0, round_bf16_ = 0, round_f16_back_ = 0, round_bf16_back_ = 0;
    uint64_t requantized_ = 0;  // pairs where target == the source quantized to the target's type
    bool requantize_ = false, rounding_ = false;
    // Transposition test (a 2-D source of R rows and C columns): per column c the sum and sum of squares of
    // the source's column c, and of the target's c-th run of R consecutive elements (which is source column c
    // when the data was transposed but the shape kept).
    bool transpose_test_ = false;
    std::vector<double> src_col_sum_, src_col_sq_, tgt_run_sum_, tgt_run_sq_;
};

// Metadata differences of two models of the same format (JSON "metadata"): keys only in A, only in B, and
// those whose values differ, in A's key order (only_b in B's order).
struct MetadataChange {
    std::string key;
    Value a, b;
};
struct MetadataDiff {
    std::vector<std::string> only_a, only_b;
    std::vector<MetadataChange> changed;
};
// Empty lists for models of different formats (their keys are not comparable).
MetadataDiff diff_metadata(const ModelInfo& a, const ModelInfo& b);

struct CompareSide {
    std::string path;
    Format format = Format::kUnknown;
};

struct CompareReport {
    CompareSide a, b;
    std::string mapping;
    MetadataDiff metadata;
    std::vector<CompareRow> tensors;
};

// The count of each verdict over the rows.
struct CompareSummary {
    uint64_t identical = 0, different = 0, non_finite = 0, only_a = 0, only_b = 0, incomparable = 0;
};
CompareSummary summarize(const std::vector<CompareRow>& rows);

// The report as `diff --json` prints it (and JS compare() returns it): non-finite numbers are null.
nlohmann::json compare_report_to_json(const CompareReport& report);

}  // namespace ws
