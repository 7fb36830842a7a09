// SPDX-License-Identifier: MIT
// core/compare and core/hf_names: pairing across naming schemes, the converter's transforms undone, metrics
// against plain double loops, window and merge invariance, and one hint per known conversion mistake.
#include "weightstream/compare.h"

#include <catch2/catch.hpp>
#include <cmath>
#include <map>
#include <random>

#include "support/compare_fixtures.h"
#include "support/parse_model.h"
#include "weightstream/header_parser.h"
#include "weightstream/hf_names.h"

using namespace ws_test;

namespace {

// Runs the comparison as a driver would: every planned pair window by window (`rows_per_window` outer rows,
// rounded up to the comparator's unit), decoding rows with dequantize.
struct Compared {
    ws::ComparePlan plan;
    std::vector<ws::CompareRow> rows;
    const ws::CompareRow* find_a(const std::string& a) const {
        for (const auto& r : rows) {
            if (r.a == a) return &r;
        }
        return nullptr;
    }
    const ws::CompareRow* find_b(const std::string& b) const {
        for (const auto& r : rows) {
            if (r.b == b) return &r;
        }
        return nullptr;
    }
};

Compared compare(const std::vector<uint8_t>& fa, const std::vector<uint8_t>& fb, uint64_t rows_per_window = 7,
                 const ws::HfConfig* config_a = nullptr) {
    const ws::ModelInfo a = ws_test::parse_model_bytes(fa), b = ws_test::parse_model_bytes(fb);
    ws::PairingOptions options;
    options.config_a = config_a;
    Compared out;
    out.plan = ws::pair_models(a, b, options);
    for (const ws::PairPlan& p : out.plan.pairs) {
        ws::CompareRow row = ws::plan_row(a, b, p);
        if (p.a < 0 || p.b < 0 || !p.problem.empty()) {
            out.rows.push_back(row);
            continue;
        }
        const ws::TensorInfo& ta = a.tensors[static_cast<size_t>(p.a)];
        const ws::TensorInfo& tb = b.tensors[static_cast<size_t>(p.b)];
        const std::vector<float> va = ws_test::decode_tensor(fa, ta), vb = ws_test::decode_tensor(fb, tb);
        ws::PairComparator cmp(p, ta.dtype, tb.dtype);
        ws::PairComparator::RequantizeScratch scratch;
        const uint64_t unit = cmp.window_rows();
        const uint64_t step = (rows_per_window + unit - 1) / unit * unit;
        for (uint64_t r = 0; r < p.rows; r += step) {
            const uint64_t n = std::min(step, p.rows - r);
            const float* wa = va.data() + (p.a_row0 + r) * p.row_elements;
            const float* wb = vb.data() + (p.b_row0 + r) * p.row_elements;
            REQUIRE(cmp.add_window(r, n, wa, wb).ok());
            if (cmp.requantize_test()) cmp.add_requantized(cmp.count_requantized(r, n, wa, wb, &scratch));
        }
        out.rows.push_back(cmp.finish(row));
    }
    return out;
}

// The metrics by definition, in plain double loops over the finite pairs.
struct Expected {
    double max_abs = 0, sum_d2 = 0, sum_a2 = 0, sum_b2 = 0, sum_ab = 0;
    uint64_t max_index = 0, n_diff = 0, n_finite = 0, n_nonfinite_diff = 0;
};
Expected expected_metrics(const std::vector<float>& a, const std::vector<float>& b) {
    Expected e;
    for (size_t i = 0; i < a.size(); ++i) {
        uint32_t x, y;
        std::memcpy(&x, &a[i], 4);
        std::memcpy(&y, &b[i], 4);
        const bool finite = std::isfinite(a[i]) && std::isfinite(b[i]);
        if (x != y && !(std::isnan(a[i]) && std::isnan(b[i]))) {
            ++e.n_diff;
            e.n_nonfinite_diff += !finite;
        }
        if (!finite) continue;
        ++e.n_finite;
        const double d = static_cast<double>(a[i]) - b[i];
        e.sum_d2 += d * d;
        e.sum_a2 += static_cast<double>(a[i]) * a[i];
        e.sum_b2 += static_cast<double>(b[i]) * b[i];
        e.sum_ab += static_cast<double>(a[i]) * b[i];
        if (std::fabs(d) > e.max_abs) {
            e.max_abs = std::fabs(d);
            e.max_index = i;
        }
    }
    return e;
}

void check_metrics(const ws::CompareMetrics& m, const Expected& e) {
    CHECK(m.max_abs == e.max_abs);
    CHECK(m.max_abs_index == e.max_index);
    CHECK(m.n_diff == e.n_diff);
    CHECK(m.n_nonfinite_diff == e.n_nonfinite_diff);
    CHECK(m.n_finite == e.n_finite);
    CHECK(m.sum_sq_diff == Approx(e.sum_d2).epsilon(1e-12));
    CHECK(m.sum_sq_a == Approx(e.sum_a2).epsilon(1e-12));
    CHECK(m.sum_sq_b == Approx(e.sum_b2).epsilon(1e-12));
    CHECK(m.sum_ab == Approx(e.sum_ab).epsilon(1e-12));
    CHECK(m.nmse() == Approx(e.sum_d2 / e.sum_a2).epsilon(1e-12));
    CHECK(m.cosine() == Approx(e.sum_ab / std::sqrt(e.sum_a2 * e.sum_b2)).epsilon(1e-12));
    CHECK(m.rmse() == Approx(std::sqrt(e.sum_d2 / static_cast<double>(e.n_finite))).epsilon(1e-12));
}

const char* kQuantizedQ8 = "B is A quantized to Q8_0 by ggml's reference quantizer: quantization alone";

}  // namespace

TEST_CASE("hf_to_gguf_name maps the families' names and the converter's transforms") {
    std::string g;
    ws::Transform t;
    REQUIRE(ws::hf_to_gguf_name("llama", "model.layers.12.self_attn.q_proj.weight", &g, &t));
    CHECK(g == "blk.12.attn_q.weight");
    CHECK(t == ws::Transform::kPermuteQ);
    REQUIRE(ws::hf_to_gguf_name("llama", "model.layers.0.self_attn.k_proj.bias", &g, &t));
    CHECK((g == "blk.0.attn_k.bias" && t == ws::Transform::kPermuteK));
    REQUIRE(ws::hf_to_gguf_name("qwen2", "model.layers.3.self_attn.q_proj.bias", &g, &t));
    CHECK((g == "blk.3.attn_q.bias" && t == ws::Transform::kNone));
    REQUIRE(ws::hf_to_gguf_name("gemma2", "model.layers.1.post_attention_layernorm.weight", &g, &t));
    CHECK((g == "blk.1.post_attention_norm.weight" && t == ws::Transform::kPlusOne));
    REQUIRE(ws::hf_to_gguf_name("llama", "model.layers.1.post_attention_layernorm.weight", &g, &t));
    CHECK((g == "blk.1.ffn_norm.weight" && t == ws::Transform::kNone));
    REQUIRE(ws::hf_to_gguf_name("gemma3", "language_model.model.layers.0.self_attn.k_norm.weight", &g, &t));
    CHECK((g == "blk.0.attn_k_norm.weight" && t == ws::Transform::kPlusOne));
    REQUIRE(ws::hf_to_gguf_name("gemma3", "model.language_model.norm.weight", &g, &t));
    CHECK((g == "output_norm.weight" && t == ws::Transform::kPlusOne));
    REQUIRE(ws::hf_to_gguf_name("phi3", "model.layers.0.mlp.gate_up_proj.weight", &g, &t));
    CHECK(g == "blk.0.ffn_up.weight");
    REQUIRE(ws::hf_to_gguf_name("phi3", "lm_head.weight", &g, &t));
    CHECK(g == "output.weight");
    // Dropped or unknown: gemma's tied lm_head, rotary buffers, vision towers, q_norm outside qwen3/gemma3,
    // block numbers with a leading zero.
    CHECK_FALSE(ws::hf_to_gguf_name("gemma", "lm_head.weight", &g, &t));
    CHECK_FALSE(ws::hf_to_gguf_name("llama", "model.layers.0.self_attn.rotary_emb.inv_freq", &g, &t));
    CHECK_FALSE(ws::hf_to_gguf_name("gemma3", "vision_tower.encoder.layers.0.mlp.fc1.weight", &g, &t));
    CHECK_FALSE(ws::hf_to_gguf_name("llama", "model.layers.0.self_attn.q_norm.weight", &g, &t));
    CHECK_FALSE(ws::hf_to_gguf_name("llama", "model.layers.01.mlp.up_proj.weight", &g, &t));
    CHECK_FALSE(ws::hf_to_gguf_name("falcon", "model.layers.0.mlp.up_proj.weight", &g, &t));
    CHECK(ws::hf_family("mistral") == "llama");
    CHECK(ws::hf_family("gemma3_text") == "gemma3");
    CHECK(ws::hf_family("bert").empty());
}

TEST_CASE("parse_hf_config reads model_type and head counts, and rejects non-objects") {
    const std::string text =
        "{\"model_type\": \"gemma3\", \"architectures\": [\"Gemma3ForConditionalGeneration\"],"
        " \"text_config\": {\"model_type\": \"gemma3_text\", \"num_attention_heads\": 8, \"num_key_value_heads\": 4}}";
    auto c = ws::parse_hf_config(reinterpret_cast<const uint8_t*>(text.data()), text.size());
    REQUIRE(c.ok());
    CHECK(c.value().model_type == "gemma3");
    CHECK(c.value().architecture == "Gemma3ForConditionalGeneration");
    CHECK(c.value().text_model_type == "gemma3_text");
    CHECK(c.value().n_head == 8);
    CHECK(c.value().n_head_kv == 4);
    for (const std::string bad : {"[1, 2]", "{\"model_type\": ", "", "null"}) {
        auto r = ws::parse_hf_config(reinterpret_cast<const uint8_t*>(bad.data()), bad.size());
        CHECK(r.status().code == ws::Error::kBadJson);
    }
    const std::string wrong_types = "{\"model_type\": 3, \"num_attention_heads\": \"8\"}";
    auto w = ws::parse_hf_config(reinterpret_cast<const uint8_t*>(wrong_types.data()), wrong_types.size());
    REQUIRE(w.ok());
    CHECK(w.value().model_type.empty());
    CHECK(w.value().n_head == 0);
}

TEST_CASE("metrics equal plain double loops, and do not depend on windows or merges") {
    std::mt19937 rng(7);
    std::normal_distribution<float> normal(0.0f, 1.0f);
    const size_t n = 3 * ws::kCompareRun * 5 + 123;  // 15 runs and a partial one
    std::vector<float> a(n), b(n);
    for (size_t i = 0; i < n; ++i) {
        a[i] = normal(rng);
        b[i] = (i % 5 == 0) ? a[i] : a[i] + 0.01f * normal(rng);
    }
    a[100] = NAN;
    b[100] = NAN;  // equal: two NaNs
    a[200] = INFINITY;
    b[300] = -INFINITY;
    b[400] = NAN;
    a[500] = 0.0f;
    b[500] = -0.0f;  // differ in bits
    b[9000] = a[9000] + 3.0f;

    ws::MetricsAccumulator whole;
    whole.add(a.data(), b.data(), n);
    const ws::CompareMetrics m = whole.metrics();
    check_metrics(m, expected_metrics(a, b));
    CHECK(m.max_abs_index == 9000);
    CHECK(m.n_nan_a == 1);
    CHECK(m.n_nan_b == 2);
    CHECK(m.n_inf_a == 1);
    CHECK(m.n_inf_b == 1);
    CHECK(m.n_nonfinite_diff == 3);  // 200, 300 and 400; not the two NaNs at 100
    CHECK(m.n_elements == n);

    auto same_bits = [](const ws::CompareMetrics& x, const ws::CompareMetrics& y) {
        return std::memcmp(&x.sum_sq_diff, &y.sum_sq_diff, sizeof(double)) == 0 &&
               std::memcmp(&x.sum_sq_a, &y.sum_sq_a, sizeof(double)) == 0 &&
               std::memcmp(&x.sum_sq_b, &y.sum_sq_b, sizeof(double)) == 0 &&
               std::memcmp(&x.sum_ab, &y.sum_ab, sizeof(double)) == 0 && x.max_abs == y.max_abs &&
               x.max_abs_index == y.max_abs_index && x.n_diff == y.n_diff && x.n_finite == y.n_finite;
    };
    for (size_t window : {size_t(1), size_t(3), size_t(1000), size_t(4096), size_t(5000), n}) {
        ws::MetricsAccumulator acc;
        for (size_t i = 0; i < n; i += window) acc.add(a.data() + i, b.data() + i, std::min(window, n - i));
        CHECK(same_bits(acc.metrics(), m));
    }
    // Partial accumulators over whole runs, merged in order, in several cuts.
    for (size_t cut_runs : {size_t(1), size_t(2), size_t(3), size_t(6), size_t(11)}) {
        ws::MetricsAccumulator acc;
        for (size_t first = 0; first < n; first += cut_runs * ws::kCompareRun) {
            ws::MetricsAccumulator part(first);
            const size_t len = std::min(cut_runs * ws::kCompareRun, n - first);
            part.add(a.data() + first, b.data() + first, len);
            REQUIRE(acc.merge(part).ok());
        }
        CHECK(same_bits(acc.metrics(), m));
    }
    // Merges that could not be exact are refused.
    ws::MetricsAccumulator head;
    head.add(a.data(), b.data(), 10);
    ws::MetricsAccumulator tail(10);
    tail.add(a.data() + 10, b.data() + 10, 10);
    CHECK(head.merge(tail).code == ws::Error::kInternal);
    ws::MetricsAccumulator gap(4096 * 2);
    gap.add(a.data(), b.data(), 1);
    ws::MetricsAccumulator run;
    run.add(a.data(), b.data(), 4096);
    CHECK(run.merge(gap).code == ws::Error::kInternal);
}

TEST_CASE("identical and empty streams") {
    std::vector<float> a = {1.0f, -2.0f, NAN, 0.0f};
    ws::MetricsAccumulator acc;
    acc.add(a.data(), a.data(), a.size());
    const ws::CompareMetrics m = acc.metrics();
    CHECK(m.identical());
    CHECK(m.nmse() == 0.0);
    CHECK(m.cosine() == Approx(1.0));
    CHECK(m.max_abs == 0.0);
    const ws::CompareMetrics e = ws::MetricsAccumulator().metrics();
    CHECK(e.identical());
    CHECK(std::isnan(e.rmse()));
    CHECK(std::isnan(e.cosine()));
}

TEST_CASE("each family's checkpoint pairs with its conversion; transforms undone, Q8_0 recognised") {
    for (const char* name : {"llama", "qwen2", "gemma", "gemma2", "gemma3", "phi3"}) {
        DYNAMIC_SECTION(name) {
            Family f;
            f.name = name;
            const auto hf = make_checkpoint(f);
            const auto converted = convert(f, hf, Mistake::kNone);
            const auto st = write_safetensors(hf);
            const auto gg = write_gguf(f, converted);
            const std::string family = std::string(name);
            for (bool hf_first : {true, false}) {
                const Compared c = hf_first ? compare(st, gg) : compare(gg, st);
                CHECK(c.plan.mapping == "hf-to-gguf:" + family);
                const ws::CompareSummary s = ws::summarize(c.rows);
                CHECK(s.only_a == 0);
                CHECK(s.only_b == 0);
                CHECK(s.incomparable == 0);
                REQUIRE(c.rows.size() == hf.size());
                for (size_t i = 0; i < hf.size(); ++i) {
                    const HfTensor& t = hf[i];
                    const GgufTensor& g = converted[i];
                    const ws::CompareRow* row = hf_first ? c.find_a(t.name) : c.find_b(t.name);
                    REQUIRE(row);
                    CHECK((hf_first ? row->b : row->a) == g.name);
                    // The expected transform, from the fixture's own rules.
                    const bool q = t.name.find("q_proj") != std::string::npos;
                    const bool k = t.name.find("k_proj") != std::string::npos;
                    const bool norm = t.name.find("norm.weight") != std::string::npos;
                    ws::Transform want = ws::Transform::kNone;
                    if (family == "llama" && q) want = ws::Transform::kPermuteQ;
                    if (family == "llama" && k) want = ws::Transform::kPermuteK;
                    if (family.rfind("gemma", 0) == 0 && norm) want = ws::Transform::kPlusOne;
                    CHECK(row->transform == want);
                    // Expected metrics: the converted floats (before encoding) against the stored decode.
                    const std::vector<float> stored =
                        g.dtype == ws::DType::F32 ? g.values : round_trip(g.dtype, g.values);
                    REQUIRE(row->has_metrics);
                    check_metrics(row->metrics,
                                  hf_first ? expected_metrics(g.values, stored) : expected_metrics(stored, g.values));
                    if (g.dtype == ws::DType::F32) {
                        CHECK(row->verdict == ws::Verdict::kIdentical);
                        CHECK(row->hint.empty());
                    } else {
                        CHECK(row->verdict == ws::Verdict::kDifferent);
                        CHECK(row->hint == (hf_first ? std::string(kQuantizedQ8)
                                                     : "A is B quantized to Q8_0 by ggml's reference quantizer: "
                                                       "quantization alone"));
                        CHECK(row->metrics.nmse() < 1e-4);
                    }
                }
            }
        }
    }
}

TEST_CASE("phi3's fused projections pair with a GGUF that splits them") {
    Family f;
    f.name = "phi3";
    const auto hf = make_checkpoint(f);
    const auto converted = convert(f, hf, Mistake::kNone, ws::DType::Q8_0, true);
    const Compared c = compare(write_safetensors(hf), write_gguf(f, converted));
    const ws::CompareSummary s = ws::summarize(c.rows);
    CHECK(s.only_a == 0);
    CHECK(s.only_b == 0);
    CHECK(s.incomparable == 0);
    const std::map<std::string, std::pair<std::string, ws::Transform>> want = {
        {"blk.0.attn_q.weight", {"model.layers.0.self_attn.qkv_proj.weight", ws::Transform::kSplitQ}},
        {"blk.0.attn_k.weight", {"model.layers.0.self_attn.qkv_proj.weight", ws::Transform::kSplitK}},
        {"blk.1.attn_v.weight", {"model.layers.1.self_attn.qkv_proj.weight", ws::Transform::kSplitV}},
        {"blk.0.ffn_gate.weight", {"model.layers.0.mlp.gate_up_proj.weight", ws::Transform::kSplitGate}},
        {"blk.1.ffn_up.weight", {"model.layers.1.mlp.gate_up_proj.weight", ws::Transform::kSplitUp}},
    };
    for (const auto& w : want) {
        const ws::CompareRow* row = c.find_b(w.first);
        REQUIRE(row);
        CHECK(row->a == w.second.first);
        CHECK(row->transform == w.second.second);
        CHECK(row->verdict == ws::Verdict::kDifferent);
        CHECK(row->hint == kQuantizedQ8);
        for (const GgufTensor& g : converted) {
            if (g.name == w.first)
                check_metrics(row->metrics, expected_metrics(g.values, round_trip(g.dtype, g.values)));
        }
    }
}

TEST_CASE("each conversion mistake is named by the hint") {
    struct Case {
        const char* family;
        Mistake mistake;
        const char* tensor;  // GGUF name of a tensor the mistake touches
        const char* hint;
    };
    const Case cases[] = {
        {"llama", Mistake::kNoPermute, "blk.0.attn_q.weight", "matches the source without the Q/K permutation"},
        {"llama", Mistake::kNoPermute, "blk.1.attn_k.weight", "matches the source without the Q/K permutation"},
        {"llama", Mistake::kPermuteTwice, "blk.0.attn_k.weight",
         "matches the source with the Q/K permutation applied twice"},
        {"gemma", Mistake::kNoPlusOne, "blk.0.attn_norm.weight",
         "matches the source without Gemma's +1 on norm weights"},
        {"gemma2", Mistake::kPlusOneTwice, "output_norm.weight", "matches the source with Gemma's +1 applied twice"},
        {"qwen2", Mistake::kTransposed, "blk.0.ffn_down.weight",
         "matches the source transposed with its shape kept (the data of the transpose under the original shape)"},
        {"llama", Mistake::kScaled, "blk.1.attn_output.weight", "B is A times a constant: scale factor 0.25"},
    };
    for (const Case& k : cases) {
        DYNAMIC_SECTION(k.family << " " << k.tensor << " " << k.hint) {
            Family f;
            f.name = k.family;
            const auto hf = make_checkpoint(f);
            const auto converted = convert(f, hf, k.mistake);
            const Compared c = compare(write_safetensors(hf), write_gguf(f, converted));
            const ws::CompareRow* row = c.find_b(k.tensor);
            REQUIRE(row);
            CHECK(row->verdict == ws::Verdict::kDifferent);
            CHECK(row->hint == k.hint);
            CHECK(row->metrics.nmse() > 0.01);
            // Tensors the mistake does not touch keep the plain quantization hint.
            const ws::CompareRow* embd = c.find_b("token_embd.weight");
            REQUIRE(embd);
            CHECK(embd->hint == kQuantizedQ8);
        }
    }
}

TEST_CASE("rounding, requantization and quantization-type hints") {
    Family f;
    f.name = "llama";
    std::vector<HfTensor> hf = make_checkpoint(f);
    // An F32 source (values with more precision than BF16) against F16 and BF16 conversions: rounding only.
    std::mt19937 rng(3);
    std::normal_distribution<float> normal(0.0f, 0.02f);
    for (HfTensor& t : hf) {
        t.dtype = ws::DType::F32;
        for (float& v : t.values) v += normal(rng) * 1e-3f;
    }
    const auto st = write_safetensors(hf);
    for (ws::DType t : {ws::DType::F16, ws::DType::BF16}) {
        const Compared c = compare(st, write_gguf(f, convert(f, hf, Mistake::kNone, t)));
        const ws::CompareRow* row = c.find_b("blk.0.ffn_down.weight");
        REQUIRE(row);
        CHECK(row->verdict == ws::Verdict::kDifferent);
        CHECK(row->hint ==
              std::string("B is A rounded to ") + (t == ws::DType::F16 ? "F16" : "BF16") + ": bf16/f16 rounding only");
    }
    // GGUF against GGUF: Q8_0 against Q4_0 of the same weights is a different quantization type; both are
    // from the same source, so neither is the other requantized.
    const auto q8 = write_gguf(f, convert(f, hf, Mistake::kNone, ws::DType::Q8_0));
    const auto q4 = write_gguf(f, convert(f, hf, Mistake::kNone, ws::DType::Q4_0));
    const Compared c = compare(q8, q4);
    CHECK(c.plan.mapping == "names");
    const ws::CompareRow* row = c.find_a("blk.0.ffn_up.weight");
    REQUIRE(row);
    CHECK(row->verdict == ws::Verdict::kDifferent);
    CHECK(row->hint.rfind("different quantization types (Q8_0 and Q4_0): an nmse of ", 0) == 0);
    CHECK(row->hint.find("is the size of Q4_0 rounding") != std::string::npos);
    // The HF source against Q4_0: exactly ggml's quantizer.
    const Compared exact = compare(st, q4);
    CHECK(exact.find_b("blk.0.ffn_up.weight")->hint ==
          "B is A quantized to Q4_0 by ggml's reference quantizer: quantization alone");
}

TEST_CASE("same-format models pair by name; metadata differences are listed") {
    Family f;
    f.name = "llama";
    const auto hf = make_checkpoint(f);
    const auto conv = convert(f, hf, Mistake::kNone);
    const auto a = write_gguf(f, conv, {ws::string_entry("general.name", "a"), u32_entry("only.a", 1)});
    auto conv_b = conv;
    conv_b.pop_back();  // output.weight only in A
    const auto b = write_gguf(f, conv_b, {ws::string_entry("general.name", "b"), u32_entry("only.b", 2)});
    const ws::ModelInfo ia = ws_test::parse_model_bytes(a), ib = ws_test::parse_model_bytes(b);
    const ws::MetadataDiff d = ws::diff_metadata(ia, ib);
    CHECK(d.only_a == std::vector<std::string>{"only.a"});
    CHECK(d.only_b == std::vector<std::string>{"only.b"});
    REQUIRE(d.changed.size() == 1);
    CHECK(d.changed[0].key == "general.name");
    CHECK(d.changed[0].a.str == "a");
    CHECK(d.changed[0].b.str == "b");
    const Compared c = compare(a, b);
    const ws::CompareSummary s = ws::summarize(c.rows);
    CHECK(s.identical == conv.size() - 1);
    CHECK(s.only_a == 1);
    CHECK(c.rows.back().a == "output.weight");
    CHECK(c.rows.back().verdict == ws::Verdict::kOnlyA);
    CHECK(c.rows.back().b.empty());
    // Different formats: no metadata comparison.
    CHECK(ws::diff_metadata(ia, ws_test::parse_model_bytes(write_safetensors(hf))).only_a.empty());

    // safetensors against safetensors, one tensor scaled.
    auto hf2 = hf;
    for (float& v : hf2[3].values) v *= 2.0f;
    const Compared cs = compare(write_safetensors(hf), write_safetensors(hf2));
    CHECK(cs.plan.mapping == "names");
    const ws::CompareRow* scaled = cs.find_a(hf[3].name);
    REQUIRE(scaled);
    CHECK(scaled->verdict == ws::Verdict::kDifferent);
    CHECK(scaled->hint == "B is A times a constant: scale factor 2");
    CHECK(ws::summarize(cs.rows).identical == hf.size() - 1);
}

TEST_CASE("pairs that cannot be compared are incomparable with the reason") {
    Family f;
    f.name = "llama";
    auto hf = make_checkpoint(f);
    auto conv = convert(f, hf, Mistake::kNone);
    // ffn_down stored with its shape reversed; attn_v of layer 1 with a different row count.
    for (GgufTensor& g : conv) {
        if (g.name == "blk.0.ffn_down.weight") std::swap(g.shape[0], g.shape[1]);
        if (g.name == "blk.1.attn_v.weight") {
            g.shape[0] /= 2;
            g.values.resize(g.values.size() / 2);
        }
    }
    const Compared c = compare(write_safetensors(hf), write_gguf(f, conv));
    const ws::CompareRow* down = c.find_b("blk.0.ffn_down.weight");
    REQUIRE(down);
    CHECK(down->verdict == ws::Verdict::kIncomparable);
    CHECK_FALSE(down->has_metrics);
    CHECK(down->hint == "shapes differ: [64, 128] and [128, 64] (the reverse of each other: stored transposed)");
    const ws::CompareRow* v = c.find_b("blk.1.attn_v.weight");
    REQUIRE(v);
    CHECK(v->verdict == ws::Verdict::kIncomparable);
    CHECK(v->hint == "shapes differ: [32, 64] and [16, 64]");

    // No head count anywhere: the permuted tensors cannot be undone.
    auto conv2 = convert(f, hf, Mistake::kNone);
    std::vector<ws::TensorInfo> infos;
    std::vector<std::vector<uint8_t>> data;
    for (const GgufTensor& g : conv2) {
        infos.push_back(info_of(g.name, g.dtype, g.shape));
        data.push_back(encode(g.dtype, g.values));
    }
    auto bare = ws::gguf_write({ws::string_entry("general.architecture", "llama")}, infos, data);
    REQUIRE(bare.ok());
    const Compared n = compare(write_safetensors(hf), bare.value());
    CHECK(n.find_b("blk.0.attn_q.weight")->verdict == ws::Verdict::kIncomparable);
    CHECK(n.find_b("blk.0.attn_q.weight")->hint.rfind("no head count", 0) == 0);
    // ... unless config.json gives them.
    ws::HfConfig config;
    config.model_type = "llama";
    config.n_head = f.n_head;
    config.n_head_kv = f.n_head_kv;
    const Compared with_config = compare(write_safetensors(hf), bare.value(), 5, &config);
    CHECK(with_config.find_b("blk.0.attn_q.weight")->hint == kQuantizedQ8);
    // A head count the rows do not divide.
    config.n_head = 5;
    const Compared odd = compare(write_safetensors(hf), bare.value(), 5, &config);
    CHECK(odd.find_b("blk.0.attn_q.weight")->hint.rfind("the Q/K permutation needs rows in pairs per head", 0) == 0);
}

TEST_CASE("an unknown architecture pairs by name; the family may come from config.json") {
    Family f;
    f.name = "llama";
    const auto hf = make_checkpoint(f);
    const auto conv = convert(f, hf, Mistake::kNone);
    Family other = f;
    other.name = "mystery";
    const auto gg = write_gguf(other, conv);
    const Compared c = compare(write_safetensors(hf), gg);
    CHECK(c.plan.mapping == "names");
    CHECK(ws::summarize(c.rows).only_a == hf.size());
    ws::HfConfig config;
    config.model_type = "mistral";
    config.n_head = f.n_head;
    config.n_head_kv = f.n_head_kv;
    const Compared m = compare(write_safetensors(hf), gg, 3, &config);
    CHECK(m.plan.mapping == "hf-to-gguf:llama");
    CHECK(ws::summarize(m.rows).only_a == 0);
}

TEST_CASE("pair JSON has exactly the documented shape") {
    Family f;
    f.name = "llama";
    const auto hf = make_checkpoint(f);
    const Compared c = compare(write_safetensors(hf), write_gguf(f, convert(f, hf, Mistake::kNone)));
    ws::CompareReport report;
    report.a = {"a.safetensors", ws::Format::kSafetensors};
    report.b = {"b.gguf", ws::Format::kGguf};
    report.mapping = c.plan.mapping;
    report.tensors = c.rows;
    ws::CompareRow only;
    only.b = "extra";
    only.dtype_b = "F32";
    only.shape_b = {3};
    only.verdict = ws::Verdict::kOnlyB;
    report.tensors.push_back(only);
    const nlohmann::json j = ws::compare_report_to_json(report);
    CHECK(j["a"] == nlohmann::json({{"path", "a.safetensors"}, {"format", "safetensors"}}));
    CHECK(j["mapping"] == "hf-to-gguf:llama");
    CHECK(j["metadata"] == nlohmann::json({{"only_a", nlohmann::json::array()},
                                           {"only_b", nlohmann::json::array()},
                                           {"changed", nlohmann::json::array()}}));
    const nlohmann::json& q = j["tensors"][2];
    CHECK(q["a"] == "model.layers.0.self_attn.q_proj.weight");
    CHECK(q["b"] == "blk.0.attn_q.weight");
    CHECK(q["transform"] == "permute_q");
    CHECK(q["heads"] == f.n_head);
    CHECK(q["shape_a"] == nlohmann::json({32 * 2, 64}));
    std::vector<std::string> keys;
    for (auto it = q.begin(); it != q.end(); ++it) keys.push_back(it.key());
    CHECK(keys == std::vector<std::string>{"a", "b", "dtype_a", "dtype_b", "heads", "hint", "metrics", "shape_a",
                                           "shape_b", "transform", "verdict"});
    keys.clear();
    for (auto it = q["metrics"].begin(); it != q["metrics"].end(); ++it) keys.push_back(it.key());
    CHECK(keys == std::vector<std::string>{"cosine", "max_abs", "max_abs_index", "n_diff", "n_inf_a", "n_inf_b",
                                           "n_nan_a", "n_nan_b", "n_nonfinite_diff", "nmse", "rmse"});
    const nlohmann::json& last = j["tensors"].back();
    CHECK(last["a"].is_null());
    CHECK(last["metrics"].is_null());
    CHECK(last["hint"].is_null());
    CHECK(last["transform"].is_null());
    CHECK(last["heads"].is_null());
    CHECK(j["summary"] == nlohmann::json({{"identical", 5},
                                          {"different", 16},
                                          {"non_finite", 0},
                                          {"only_a", 0},
                                          {"only_b", 1},
                                          {"incomparable", 0}}));
}
