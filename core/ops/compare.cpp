// SPDX-License-Identifier: MIT
#include "weightstream/compare.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <unordered_map>

#include "weightstream/dequant.h"
#include "weightstream/model_json.h"
#include "weightstream/quantize.h"

namespace ws {
namespace {

uint32_t bits_of(float v) {
    uint32_t u;
    std::memcpy(&u, &v, sizeof u);
    return u;
}

bool is_nan_bits(uint32_t u) {
    return (u & 0x7f800000u) == 0x7f800000u && (u & 0x007fffffu) != 0;
}

bool finite_bits(uint32_t u) {
    return (u & 0x7f800000u) != 0x7f800000u;
}

// The hint thresholds. A hypothesis (a mistake undone) explains a difference when its nmse is below
// kExplainedNmse and a hundredth of the actual one: a right explanation leaves quantization noise (1e-5 for
// Q8_0, 1e-2 for 4-bit types), a wrong pairing of weights leaves an nmse near 1 or 2.
constexpr double kExplainedNmse = 0.05;
constexpr double kExplainedRatio = 0.01;
// The transposition test compares per-column sums; it is consulted only for pairs this far apart.
constexpr double kTransposeMinNmse = 0.1;
constexpr double kTransposeMaxStatNmse = 1e-3;
constexpr uint64_t kTransposeMaxColumns = uint64_t(1) << 18;

bool explains(const CompareMetrics& h, double actual_nmse) {
    const double e = h.nmse();
    return h.identical() || (e < kExplainedNmse && e < kExplainedRatio * actual_nmse);
}

// The nmse that quantizing to t typically gives on weights (Gaussian-like values, absmax block scales), with
// a margin of four: Q8_0 about 2.5e-5, every bit fewer about four times more.
double quantization_noise_bound(DType t) {
    const DTypeTraits& traits = dtype_traits(t);
    if (traits.kind != DTypeKind::kQuantized || traits.block_elems == 0) return 0;
    const double bits_per_weight = 8.0 * traits.block_bytes / traits.block_elems;
    return 1e-4 * std::pow(4.0, 8.5 - bits_per_weight);
}

std::string shape_text(const std::vector<int64_t>& shape) {
    std::string s = "[";
    for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
    return s + "]";
}

// v rounded to `digits` significant digits, as the shortest text that reads back as that double ("0.25", "2",
// "3.25e-05"): for the hints' words. Built on the JSON serializer, as the core prints nothing itself.
std::string number_text(double v, int digits) {
    if (!std::isfinite(v) || v == 0) return std::isnan(v) ? "nan" : v == 0 ? "0" : v > 0 ? "inf" : "-inf";
    const int shift = digits - 1 - static_cast<int>(std::floor(std::log10(std::fabs(v))));
    const double scale = std::pow(10.0, std::abs(shift));
    const double rounded = shift >= 0 ? std::round(v * scale) / scale : std::round(v / scale) * scale;
    std::string text = nlohmann::json(rounded).dump();
    if (text.size() > 2 && text.compare(text.size() - 2, 2, ".0") == 0) text.resize(text.size() - 2);
    return text;
}

bool values_equal(const Value& x, const Value& y) {
    if (x.type != y.type) return false;
    if (x.type == ValueType::kString) return x.str == y.str;
    if (x.type != ValueType::kArray) return x.bits == y.bits;
    if (x.item_type != y.item_type || x.length != y.length || x.raw != y.raw || x.strings != y.strings) return false;
    if (x.arrays.size() != y.arrays.size()) return false;
    for (size_t i = 0; i < x.arrays.size(); ++i) {
        if (!values_equal(x.arrays[i], y.arrays[i])) return false;
    }
    return true;
}

// Outer rows of a tensor: the first (outermost) dim; one row for a scalar.
uint64_t outer_rows(const TensorInfo& t) {
    const std::vector<int64_t> shape = t.shape();
    return shape.empty() ? 1 : static_cast<uint64_t>(shape[0]);
}

std::vector<int64_t> inner_shape(const TensorInfo& t) {
    std::vector<int64_t> shape = t.shape();
    if (!shape.empty()) shape.erase(shape.begin());
    return shape;
}

// A pair of whole tensors of the same shape, or one with a problem.
PairPlan whole_pair(int64_t a, int64_t b, const TensorInfo& ta, const TensorInfo& tb, bool source_is_a) {
    PairPlan p;
    p.a = a;
    p.b = b;
    p.source_is_a = source_is_a;
    const std::vector<int64_t> sa = ta.shape(), sb = tb.shape();
    if (sa != sb) {
        std::vector<int64_t> reversed(sb.rbegin(), sb.rend());
        p.problem = "shapes differ: " + shape_text(sa) + " and " + shape_text(sb);
        if (sa == reversed && sa.size() > 1) p.problem += " (the reverse of each other: stored transposed)";
        return p;
    }
    p.rows = outer_rows(ta);
    p.row_elements = p.rows ? ta.n_elements / p.rows : 0;
    return p;
}

// A metadata integer as written by the converter (uint32 mostly), or 0.
uint64_t metadata_count(const ModelInfo& m, const std::string& key) {
    const MetadataEntry* e = m.find(key);
    if (!e) return 0;
    switch (e->value.type) {
        case ValueType::kUint8:
        case ValueType::kUint16:
        case ValueType::kUint32:
        case ValueType::kUint64:
            return e->value.bits;
        case ValueType::kInt8:
        case ValueType::kInt16:
        case ValueType::kInt32:
        case ValueType::kInt64:
            return e->value.as_int64() > 0 ? e->value.bits : 0;
        default:
            return 0;
    }
}

std::string metadata_string(const ModelInfo& m, const std::string& key) {
    const MetadataEntry* e = m.find(key);
    return e && e->value.type == ValueType::kString ? e->value.str : std::string();
}

struct Link {
    int64_t hf = -1, gguf = -1;
    Transform transform = Transform::kNone;
    uint64_t hf_row0 = 0, rows = 0;
    std::string problem;
    uint64_t gguf_row0 = 0;  // kExpert: the expert's first row in the stacked tensor (in the HF tensor's rows)
};

// One expert's matrix against the stacked tensor the converter made of its block's experts: the slice
// [index * rows, (index + 1) * rows) of the stacked tensor's rows of the expert's row length.
Link link_expert(const ModelInfo& hf, const ModelInfo& gguf, int64_t i, int64_t g, uint64_t index) {
    const TensorInfo& t = hf.tensors[static_cast<size_t>(i)];
    Link l;
    l.hf = i;
    l.gguf = g;
    if (g < 0) return l;
    const TensorInfo& tg = gguf.tensors[static_cast<size_t>(g)];
    l.transform = Transform::kExpert;
    if (inner_shape(tg) != t.shape()) {
        l.problem = "shapes differ: " + shape_text(t.shape()) + " is not one expert of " + shape_text(tg.shape());
    } else if (index >= outer_rows(tg)) {
        l.problem = "expert " + std::to_string(index) + " is beyond the " + std::to_string(outer_rows(tg)) +
                    " experts of the stacked tensor";
    } else {
        l.rows = outer_rows(t);
        l.gguf_row0 = index * l.rows;
    }
    return l;
}

// The links of one HF tensor to the GGUF: the converted tensor, or the parts of a fused one.
void link_hf_tensor(const ModelInfo& hf, const ModelInfo& gguf, const std::unordered_map<std::string, int64_t>& index,
                    int64_t i, const std::string& gguf_name, Transform transform, uint64_t n_head, uint64_t n_head_kv,
                    std::vector<Link>* links) {
    const TensorInfo& t = hf.tensors[static_cast<size_t>(i)];
    auto find = [&](const std::string& name) -> int64_t {
        const auto it = index.find(name);
        return it == index.end() ? -1 : it->second;
    };
    const int64_t g = find(gguf_name);
    const uint64_t rows = outer_rows(t);
    const bool suffix_weight = gguf_name.size() > 7 && gguf_name.compare(gguf_name.size() - 7, 7, ".weight") == 0;
    const std::string stem = suffix_weight ? gguf_name.substr(0, gguf_name.size() - 7) : gguf_name;

    // Phi-3's fused projections against a GGUF that keeps the parts apart: one link per part, in row order.
    auto try_split = [&](const std::vector<std::pair<std::string, Transform>>& parts) {
        std::vector<int64_t> ids;
        uint64_t total = 0;
        for (const auto& part : parts) {
            const int64_t id = find(part.first);
            if (id < 0 || inner_shape(gguf.tensors[static_cast<size_t>(id)]) != inner_shape(t)) return false;
            ids.push_back(id);
            total += outer_rows(gguf.tensors[static_cast<size_t>(id)]);
        }
        if (total != rows) return false;
        uint64_t row0 = 0;
        for (size_t k = 0; k < parts.size(); ++k) {
            Link l;
            l.hf = i;
            l.gguf = ids[k];
            l.transform = parts[k].second;
            l.hf_row0 = row0;
            l.rows = outer_rows(gguf.tensors[static_cast<size_t>(ids[k])]);
            row0 += l.rows;
            links->push_back(l);
        }
        return true;
    };
    if (suffix_weight && stem.size() > 9 && stem.compare(stem.size() - 9, 9, ".attn_qkv") == 0 && g < 0) {
        const std::string blk = stem.substr(0, stem.size() - 9);
        if (try_split({{blk + ".attn_q.weight", Transform::kSplitQ},
                       {blk + ".attn_k.weight", Transform::kSplitK},
                       {blk + ".attn_v.weight", Transform::kSplitV}})) {
            return;
        }
    }
    if (suffix_weight && stem.size() > 7 && stem.compare(stem.size() - 7, 7, ".ffn_up") == 0 &&
        t.name.find("gate_up_proj") != std::string::npos &&
        (g < 0 || outer_rows(gguf.tensors[static_cast<size_t>(g)]) != rows)) {
        const std::string blk = stem.substr(0, stem.size() - 7);
        if (try_split(
                {{blk + ".ffn_gate.weight", Transform::kSplitGate}, {blk + ".ffn_up.weight", Transform::kSplitUp}})) {
            return;
        }
    }
    if (g < 0) {
        links->push_back(Link{i, -1, Transform::kNone, 0, 0, ""});
        return;
    }
    const TensorInfo& tg = gguf.tensors[static_cast<size_t>(g)];
    Link l;
    l.hf = i;
    l.gguf = g;
    l.transform = transform;
    // Gemma 3 drops the embedding rows past the tokenizer's vocabulary.
    if (gguf_name == "token_embd.weight" && inner_shape(tg) == inner_shape(t) && outer_rows(tg) < rows) {
        l.transform = Transform::kVocabTrim;
        l.rows = outer_rows(tg);
        links->push_back(l);
        return;
    }
    const PairPlan whole = whole_pair(0, 0, t, tg, true);
    l.problem = whole.problem;
    l.rows = whole.rows;
    if (l.problem.empty() && (transform == Transform::kPermuteQ || transform == Transform::kPermuteK)) {
        const uint64_t heads = transform == Transform::kPermuteQ ? n_head : (n_head_kv ? n_head_kv : n_head);
        if (heads == 0) {
            l.problem =
                "no head count for the Q/K permutation (attention.head_count in the GGUF, "
                "num_attention_heads in config.json)";
        } else if (rows % heads != 0 || (rows / heads) % 2 != 0) {
            l.problem = "the Q/K permutation needs rows in pairs per head: " + std::to_string(rows) +
                        " rows are not that for " + std::to_string(heads) + " heads";
        }
    }
    links->push_back(l);
}

}  // namespace

// ---- metrics ---------------------------------------------------------------------------------------------------

double CompareMetrics::rmse() const {
    return n_finite ? std::sqrt(sum_sq_diff / static_cast<double>(n_finite)) : std::nan("");
}

double CompareMetrics::nmse() const {
    if (sum_sq_a == 0) return sum_sq_diff == 0 ? 0.0 : HUGE_VAL;
    return sum_sq_diff / sum_sq_a;
}

double CompareMetrics::cosine() const {
    if (sum_sq_a == 0 || sum_sq_b == 0) return std::nan("");
    return sum_ab / std::sqrt(sum_sq_a * sum_sq_b);
}

MetricsAccumulator::MetricsAccumulator(uint64_t first) : first_(first) {}

void MetricsAccumulator::add(const float* a, const float* b, uint64_t n) {
    uint64_t index = first_ + n_;
    for (uint64_t i = 0; i < n; ++i, ++index) {
        const float x = a[i], y = b[i];
        const uint32_t ux = bits_of(x), uy = bits_of(y);
        const bool fx = finite_bits(ux), fy = finite_bits(uy);
        if (ux != uy) {
            const bool nan_x = !fx && is_nan_bits(ux), nan_y = !fy && is_nan_bits(uy);
            if (!(nan_x && nan_y)) {
                ++counts_.n_diff;
                if (!fx || !fy) ++counts_.n_nonfinite_diff;
            }
        }
        if (fx && fy) {
            const double dx = x, dy = y, d = dx - dy;
            const size_t lane = index & 3;
            lanes_[0][lane] += d * d;
            lanes_[1][lane] += dx * dx;
            lanes_[2][lane] += dy * dy;
            lanes_[3][lane] += dx * dy;
            ++counts_.n_finite;
            const double ad = std::fabs(d);
            if (ad > counts_.max_abs) {
                counts_.max_abs = ad;
                counts_.max_abs_index = index;
            }
        } else {
            if (!fx) ++(is_nan_bits(ux) ? counts_.n_nan_a : counts_.n_inf_a);
            if (!fy) ++(is_nan_bits(uy) ? counts_.n_nan_b : counts_.n_inf_b);
        }
        if ((index + 1) % kCompareRun == 0) {
            n_ = index + 1 - first_;
            close_run();
        }
    }
    n_ = index - first_;
    counts_.n_elements = n_;
}

void MetricsAccumulator::close_run() {
    Node node;
    node.run = (first_ + n_ - 1) / kCompareRun;
    for (int k = 0; k < kSums; ++k) {
        node.sum[k] = (lanes_[k][0] + lanes_[k][1]) + (lanes_[k][2] + lanes_[k][3]);
        for (double& l : lanes_[k]) l = 0;
    }
    push(node);
}

void MetricsAccumulator::push(Node node) {
    // Two nodes combine when they are the two children of one node of the tree over run numbers.
    while (!stack_.empty()) {
        const Node& left = stack_.back();
        const uint64_t span = uint64_t(1) << left.level;
        if (left.level != node.level || left.run + span != node.run || left.run % (2 * span) != 0) break;
        Node parent;
        parent.run = left.run;
        parent.level = left.level + 1;
        for (int k = 0; k < kSums; ++k) parent.sum[k] = left.sum[k] + node.sum[k];
        stack_.pop_back();
        node = parent;
    }
    stack_.push_back(node);
}

Status MetricsAccumulator::merge(const MetricsAccumulator& next) {
    if (next.first_ != end()) return make_error(Error::kInternal, next.first_, "compare.merge.position");
    if (next.n_ == 0) return ok_status();
    if (n_ != 0 && end() % kCompareRun != 0) return make_error(Error::kInternal, end(), "compare.merge.run");
    for (const Node& node : next.stack_) push(node);
    std::memcpy(lanes_, next.lanes_, sizeof lanes_);
    const CompareMetrics& o = next.counts_;
    if (o.max_abs > counts_.max_abs) {
        counts_.max_abs = o.max_abs;
        counts_.max_abs_index = o.max_abs_index;
    }
    counts_.n_finite += o.n_finite;
    counts_.n_diff += o.n_diff;
    counts_.n_nonfinite_diff += o.n_nonfinite_diff;
    counts_.n_nan_a += o.n_nan_a;
    counts_.n_nan_b += o.n_nan_b;
    counts_.n_inf_a += o.n_inf_a;
    counts_.n_inf_b += o.n_inf_b;
    n_ += next.n_;
    counts_.n_elements = n_;
    return ok_status();
}

CompareMetrics MetricsAccumulator::metrics() const {
    CompareMetrics m = counts_;
    // The rightmost nodes combine first: the open run, then the stack from its top down.
    double sum[kSums];
    bool any = end() % kCompareRun != 0 && n_ > 0;
    for (int k = 0; k < kSums; ++k) sum[k] = any ? (lanes_[k][0] + lanes_[k][1]) + (lanes_[k][2] + lanes_[k][3]) : 0;
    for (auto it = stack_.rbegin(); it != stack_.rend(); ++it) {
        for (int k = 0; k < kSums; ++k) sum[k] = any ? it->sum[k] + sum[k] : it->sum[k];
        any = true;
    }
    m.sum_sq_diff = sum[0];
    m.sum_sq_a = sum[1];
    m.sum_sq_b = sum[2];
    m.sum_ab = sum[3];
    return m;
}

const char* verdict_name(Verdict v) {
    switch (v) {
        case Verdict::kIdentical:
            return "identical";
        case Verdict::kDifferent:
            return "different";
        case Verdict::kNonFinite:
            return "non_finite";
        case Verdict::kOnlyA:
            return "only_a";
        case Verdict::kOnlyB:
            return "only_b";
        case Verdict::kIncomparable:
            return "incomparable";
    }
    return "incomparable";
}

// ---- pairing ---------------------------------------------------------------------------------------------------

ComparePlan pair_models(const ModelInfo& a, const ModelInfo& b, const PairingOptions& options) {
    ComparePlan plan;
    std::unordered_map<std::string, int64_t> index_b;
    for (size_t j = 0; j < b.tensors.size(); ++j) index_b.emplace(b.tensors[j].name, static_cast<int64_t>(j));
    std::vector<bool> paired_b(b.tensors.size(), false);

    const bool mixed = (a.format == Format::kSafetensors && b.format == Format::kGguf) ||
                       (a.format == Format::kGguf && b.format == Format::kSafetensors);
    std::string family;
    const bool hf_is_a = a.format == Format::kSafetensors;
    const ModelInfo& hf = hf_is_a ? a : b;
    const ModelInfo& gguf = hf_is_a ? b : a;
    const HfConfig* config = hf_is_a ? options.config_a : options.config_b;
    std::string arch;
    if (mixed) {
        arch = metadata_string(gguf, "general.architecture");
        family = hf_family(arch);
        if (family.empty() && config) family = hf_family(config->model_type);
        if (family.empty() && config) family = hf_family(config->text_model_type);
    }

    if (family.empty()) {
        plan.mapping = "names";
        for (size_t i = 0; i < a.tensors.size(); ++i) {
            const auto it = index_b.find(a.tensors[i].name);
            if (it == index_b.end()) {
                PairPlan p;
                p.a = static_cast<int64_t>(i);
                plan.pairs.push_back(p);
                continue;
            }
            paired_b[static_cast<size_t>(it->second)] = true;
            plan.pairs.push_back(whole_pair(static_cast<int64_t>(i), it->second, a.tensors[i],
                                            b.tensors[static_cast<size_t>(it->second)], true));
        }
    } else {
        plan.mapping = "hf-to-gguf:" + family;
        uint64_t n_head = metadata_count(gguf, arch + ".attention.head_count");
        uint64_t n_head_kv = metadata_count(gguf, arch + ".attention.head_count_kv");
        if (n_head == 0 && config && config->n_head > 0) n_head = static_cast<uint64_t>(config->n_head);
        if (n_head_kv == 0 && config && config->n_head_kv > 0) n_head_kv = static_cast<uint64_t>(config->n_head_kv);
        std::unordered_map<std::string, int64_t> index_a;
        if (!hf_is_a) {
            for (size_t i = 0; i < a.tensors.size(); ++i) index_a.emplace(a.tensors[i].name, static_cast<int64_t>(i));
        }
        const std::unordered_map<std::string, int64_t>& index_gguf = hf_is_a ? index_b : index_a;
        std::vector<Link> links;
        for (size_t i = 0; i < hf.tensors.size(); ++i) {
            std::string name;
            Transform transform = Transform::kNone;
            HfExpert expert;
            if (!hf_to_gguf_name(family, hf.tensors[i].name, &name, &transform, &expert)) {
                links.push_back(Link{static_cast<int64_t>(i), -1, Transform::kNone, 0, 0, ""});
                continue;
            }
            if (expert.kinds > 0) {
                const auto it = index_gguf.find(name);
                links.push_back(link_expert(hf, gguf, static_cast<int64_t>(i), it == index_gguf.end() ? -1 : it->second,
                                            expert.index));
                continue;
            }
            link_hf_tensor(hf, gguf, index_gguf, static_cast<int64_t>(i), name, transform, n_head, n_head_kv, &links);
        }
        auto to_pair = [&](const Link& l) {
            PairPlan p;
            p.a = hf_is_a ? l.hf : l.gguf;
            p.b = hf_is_a ? l.gguf : l.hf;
            p.source_is_a = hf_is_a;
            p.transform = l.transform;
            p.problem = l.problem;
            if (l.gguf >= 0 && l.problem.empty()) {
                const TensorInfo& t = hf.tensors[static_cast<size_t>(l.hf)];
                p.rows = l.rows;
                p.row_elements = outer_rows(t) ? t.n_elements / outer_rows(t) : 0;
                (hf_is_a ? p.a_row0 : p.b_row0) = l.hf_row0;
                (hf_is_a ? p.b_row0 : p.a_row0) = l.gguf_row0;
                if (l.transform == Transform::kPermuteQ) p.heads = n_head;
                if (l.transform == Transform::kPermuteK) p.heads = n_head_kv ? n_head_kv : n_head;
            }
            return p;
        };
        std::vector<bool> linked_gguf(gguf.tensors.size(), false);
        for (const Link& l : links) {
            if (l.gguf >= 0) linked_gguf[static_cast<size_t>(l.gguf)] = true;
        }
        if (hf_is_a) {
            for (const Link& l : links) plan.pairs.push_back(to_pair(l));
            paired_b = linked_gguf;
        } else {
            // Rows in A's (the GGUF's) order: each GGUF tensor's links, or only_a.
            std::vector<std::vector<size_t>> by_gguf(gguf.tensors.size());
            for (size_t k = 0; k < links.size(); ++k) {
                if (links[k].gguf >= 0) by_gguf[static_cast<size_t>(links[k].gguf)].push_back(k);
            }
            for (size_t i = 0; i < a.tensors.size(); ++i) {
                if (by_gguf[i].empty()) {
                    PairPlan p;
                    p.a = static_cast<int64_t>(i);
                    plan.pairs.push_back(p);
                }
                for (size_t k : by_gguf[i]) plan.pairs.push_back(to_pair(links[k]));
            }
            for (const Link& l : links) {
                if (l.gguf >= 0) paired_b[static_cast<size_t>(l.hf)] = true;
            }
        }
    }
    for (size_t j = 0; j < b.tensors.size(); ++j) {
        if (paired_b[j]) continue;
        PairPlan p;
        p.b = static_cast<int64_t>(j);
        plan.pairs.push_back(p);
    }
    return plan;
}

CompareRow plan_row(const ModelInfo& a, const ModelInfo& b, const PairPlan& pair) {
    CompareRow row;
    if (pair.a >= 0) {
        const TensorInfo& t = a.tensors[static_cast<size_t>(pair.a)];
        row.a = t.name;
        row.dtype_a = t.dtype_name();
        row.shape_a = t.shape();
    }
    if (pair.b >= 0) {
        const TensorInfo& t = b.tensors[static_cast<size_t>(pair.b)];
        row.b = t.name;
        row.dtype_b = t.dtype_name();
        row.shape_b = t.shape();
    }
    row.transform = pair.transform;
    row.heads = pair.heads;
    row.verdict = pair.a < 0 ? Verdict::kOnlyB : pair.b < 0 ? Verdict::kOnlyA : Verdict::kIncomparable;
    row.hint = pair.problem;
    return row;
}

// ---- one pair --------------------------------------------------------------------------------------------------

PairComparator::PairComparator(const PairPlan& pair, DType a_dtype, DType b_dtype)
    : pair_(pair), a_dtype_(a_dtype), b_dtype_(b_dtype), source_dtype_(pair.source_is_a ? a_dtype : b_dtype) {
    const bool permute = pair.transform == Transform::kPermuteQ || pair.transform == Transform::kPermuteK;
    if (permute && pair.heads > 0) window_rows_ = std::max<uint64_t>(1, pair.rows / pair.heads);
    if (permute) {
        hypotheses_.push_back({"matches the source without the Q/K permutation", MetricsAccumulator()});
        hypotheses_.push_back({"matches the source with the Q/K permutation applied twice", MetricsAccumulator()});
    } else if (pair.transform == Transform::kPlusOne) {
        hypotheses_.push_back({"matches the source without Gemma's +1 on norm weights", MetricsAccumulator()});
        hypotheses_.push_back({"matches the source with Gemma's +1 applied twice", MetricsAccumulator()});
    }
    rounding_ = a_dtype != b_dtype &&
                (a_dtype == DType::F16 || a_dtype == DType::BF16 || b_dtype == DType::F16 || b_dtype == DType::BF16);
    const bool a_requantizable = quantize_supported(a_dtype) && dtype_traits(a_dtype).kind == DTypeKind::kQuantized;
    const bool b_requantizable = quantize_supported(b_dtype) && dtype_traits(b_dtype).kind == DTypeKind::kQuantized;
    requantize_ = a_dtype != b_dtype && (a_requantizable || b_requantizable) && pair.row_elements % 32 == 0;
    const bool whole = pair.transform == Transform::kNone || pair.transform == Transform::kPermuteQ ||
                       pair.transform == Transform::kPermuteK || pair.transform == Transform::kPlusOne;
    transpose_test_ = whole && pair.rows > 1 && pair.row_elements > 1 && pair.row_elements <= kTransposeMaxColumns;
    if (transpose_test_) {
        src_col_sum_.assign(pair.row_elements, 0.0);
        src_col_sq_.assign(pair.row_elements, 0.0);
        tgt_run_sum_.assign(pair.row_elements, 0.0);
        tgt_run_sq_.assign(pair.row_elements, 0.0);
    }
}

// The source window with the transform applied `times` times (0: as stored), in scratch_ / twice_ or src itself;
// nullptr when the transform refuses the window (the pairing and add_window() rule that out).
const float* PairComparator::transform_source(const float* src, uint64_t first_row, uint64_t n_rows, int times) {
    const bool changes_values = pair_.transform == Transform::kPermuteQ || pair_.transform == Transform::kPermuteK ||
                                pair_.transform == Transform::kPlusOne;
    if (times == 0 || !changes_values) return src;
    const uint64_t n = n_rows * pair_.row_elements;
    const HfRows window{pair_.rows, first_row, n_rows, pair_.row_elements};
    scratch_.resize(static_cast<size_t>(n));
    if (!hf_convert_rows(pair_.transform, source_dtype_, pair_.heads, window, src, scratch_.data()).ok()) {
        return nullptr;
    }
    if (times == 1) return scratch_.data();
    twice_.resize(static_cast<size_t>(n));
    if (!hf_convert_rows(pair_.transform, source_dtype_, pair_.heads, window, scratch_.data(), twice_.data()).ok()) {
        return nullptr;
    }
    return twice_.data();
}

void PairComparator::add_oriented(MetricsAccumulator* acc, const float* source, const float* target, uint64_t n) const {
    if (pair_.source_is_a) {
        acc->add(source, target, n);
    } else {
        acc->add(target, source, n);
    }
}

// Counts the pairs where one side is the other rounded to F16 or BF16 (the side stored in that type).
void PairComparator::count_rounding(const float* a, const float* b, uint64_t n) {
    auto count = [&](DType t, const float* from, const float* stored, uint64_t* out) {
        encoded_.resize(static_cast<size_t>(n) * 2);
        rounded_.resize(static_cast<size_t>(n));
        if (!quantize(t, from, n, encoded_.data()).ok() || !dequantize(t, encoded_.data(), n, rounded_.data()).ok()) {
            return;
        }
        for (uint64_t i = 0; i < n; ++i) {
            const uint32_t x = bits_of(rounded_[static_cast<size_t>(i)]), y = bits_of(stored[i]);
            *out += x == y || (is_nan_bits(x) && is_nan_bits(y));
        }
    };
    for (DType t : {DType::F16, DType::BF16}) {
        uint64_t* forward = t == DType::F16 ? &round_f16_ : &round_bf16_;
        uint64_t* back = t == DType::F16 ? &round_f16_back_ : &round_bf16_back_;
        if (b_dtype_ == t && a_dtype_ != t) count(t, a, b, forward);
        if (a_dtype_ == t && b_dtype_ != t) count(t, b, a, back);
    }
}

// Counts the pairs where the quantized side equals the other side quantized to its type by ggml's reference
// quantizer and decoded.
uint64_t PairComparator::count_requantized(uint64_t first_row, uint64_t n_rows, const float* a, const float* b,
                                           RequantizeScratch* scratch) const {
    const uint64_t n = n_rows * pair_.row_elements;
    // The source as add_window() compares it: with the transform applied once.
    const float* source = pair_.source_is_a ? a : b;
    const bool changes_values = pair_.transform == Transform::kPermuteQ || pair_.transform == Transform::kPermuteK ||
                                pair_.transform == Transform::kPlusOne;
    if (changes_values) {
        scratch->converted.resize(static_cast<size_t>(n));
        const HfRows window{pair_.rows, first_row, n_rows, pair_.row_elements};
        if (!hf_convert_rows(pair_.transform, source_dtype_, pair_.heads, window, source, scratch->converted.data())
                 .ok()) {
            return 0;
        }
        source = scratch->converted.data();
    }
    const float* av = pair_.source_is_a ? source : a;
    const float* bv = pair_.source_is_a ? b : source;
    const bool b_quantized = quantize_supported(b_dtype_) && dtype_traits(b_dtype_).kind == DTypeKind::kQuantized;
    const DType t = b_quantized ? b_dtype_ : a_dtype_;
    const float* from = b_quantized ? av : bv;
    const float* stored = b_quantized ? bv : av;
    uint64_t bytes = 0;
    if (!dtype_bytes_for(t, n, &bytes)) return 0;
    scratch->encoded.resize(static_cast<size_t>(bytes));
    scratch->rounded.resize(static_cast<size_t>(n));
    if (!quantize(t, from, n, scratch->encoded.data()).ok() ||
        !dequantize(t, scratch->encoded.data(), n, scratch->rounded.data()).ok()) {
        return 0;
    }
    uint64_t matches = 0;
    for (uint64_t i = 0; i < n; ++i) {
        const uint32_t x = bits_of(scratch->rounded[static_cast<size_t>(i)]), y = bits_of(stored[i]);
        matches += x == y || (is_nan_bits(x) && is_nan_bits(y));
    }
    return matches;
}

void PairComparator::add_column_stats(const float* source, const float* target, uint64_t first_row, uint64_t n_rows) {
    const uint64_t cols = pair_.row_elements, rows = pair_.rows;
    for (uint64_t r = 0; r < n_rows; ++r) {
        const float* s = source + r * cols;
        const float* t = target + r * cols;
        const uint64_t index0 = (first_row + r) * cols;
        for (uint64_t c = 0; c < cols; ++c) {
            if (finite_bits(bits_of(s[c]))) {
                src_col_sum_[static_cast<size_t>(c)] += s[c];
                src_col_sq_[static_cast<size_t>(c)] += static_cast<double>(s[c]) * s[c];
            }
            if (finite_bits(bits_of(t[c]))) {
                const size_t run = static_cast<size_t>((index0 + c) / rows);
                tgt_run_sum_[run] += t[c];
                tgt_run_sq_[run] += static_cast<double>(t[c]) * t[c];
            }
        }
    }
}

Status PairComparator::add_window(uint64_t first_row, uint64_t n_rows, const float* a, const float* b) {
    if (first_row != next_row_ || first_row % window_rows_ != 0 || n_rows > pair_.rows - first_row ||
        (n_rows % window_rows_ != 0 && first_row + n_rows != pair_.rows)) {
        return make_error(Error::kInternal, first_row, "compare.window");
    }
    next_row_ += n_rows;
    const uint64_t n = n_rows * pair_.row_elements;
    if (n == 0) return ok_status();
    const float* source = pair_.source_is_a ? a : b;
    const float* target = pair_.source_is_a ? b : a;
    const float* converted = transform_source(source, first_row, n_rows, 1);
    if (!converted) return make_error(Error::kInternal, first_row, "compare.transform");
    // Everything about the converted values first: the hypotheses below reuse the scratch window.
    add_oriented(&main_, converted, target, n);
    const float* av = pair_.source_is_a ? converted : target;
    const float* bv = pair_.source_is_a ? target : converted;
    if (transpose_test_) add_column_stats(converted, target, first_row, n_rows);
    if (rounding_) count_rounding(av, bv, n);
    for (size_t h = 0; h < hypotheses_.size(); ++h) {
        const float* alt = transform_source(source, first_row, n_rows, h == 0 ? 0 : 2);
        if (!alt) return make_error(Error::kInternal, first_row, "compare.transform");
        add_oriented(&hypotheses_[h].acc, alt, target, n);
    }
    return ok_status();
}

std::string PairComparator::hint(const CompareMetrics& m) const {
    if (m.identical()) return "";
    if (m.n_nonfinite_diff > 0) {
        // No rounding or conversion mistake explains a NaN or Inf the other side does not have.
        auto side = [](uint64_t nan, uint64_t inf) {
            return std::to_string(nan) + " NaN and " + std::to_string(inf) + " Inf";
        };
        return std::to_string(m.n_nonfinite_diff) + " of " + std::to_string(m.n_elements) +
               " values are NaN or Inf on one side and not the same on the other (A has " + side(m.n_nan_a, m.n_inf_a) +
               ", B " + side(m.n_nan_b, m.n_inf_b) + ")";
    }
    const double nmse = m.nmse();
    const std::string a_type = dtype_name(a_dtype_), b_type = dtype_name(b_dtype_);
    if (requantize_ && requantized_ == m.n_elements) {
        const bool b_quantized = quantize_supported(b_dtype_) && dtype_traits(b_dtype_).kind == DTypeKind::kQuantized;
        return b_quantized ? "B is A quantized to " + b_type + " by ggml's reference quantizer: quantization alone"
                           : "A is B quantized to " + a_type + " by ggml's reference quantizer: quantization alone";
    }
    if (rounding_) {
        if (round_f16_ == m.n_elements) return "B is A rounded to F16: bf16/f16 rounding only";
        if (round_bf16_ == m.n_elements) return "B is A rounded to BF16: bf16/f16 rounding only";
        if (round_f16_back_ == m.n_elements) return "A is B rounded to F16: bf16/f16 rounding only";
        if (round_bf16_back_ == m.n_elements) return "A is B rounded to BF16: bf16/f16 rounding only";
    }
    for (const Hypothesis& h : hypotheses_) {
        if (explains(h.acc.metrics(), nmse)) return h.words;
    }
    if (transpose_test_ && nmse > kTransposeMinNmse) {
        auto stat_nmse = [](const std::vector<double>& x, const std::vector<double>& y) {
            double d = 0, s = 0;
            for (size_t i = 0; i < x.size(); ++i) {
                d += (x[i] - y[i]) * (x[i] - y[i]);
                s += x[i] * x[i];
            }
            return s > 0 ? d / s : (d == 0 ? 0.0 : HUGE_VAL);
        };
        if (stat_nmse(src_col_sum_, tgt_run_sum_) < kTransposeMaxStatNmse &&
            stat_nmse(src_col_sq_, tgt_run_sq_) < kTransposeMaxStatNmse) {
            return "matches the source transposed with its shape kept (the data of the transpose under the "
                   "original shape)";
        }
    }
    // B = s * A: the best s is sum_ab / sum_sq_a, leaving sum_sq_b * (1 - cosine^2) of B's energy.
    if (m.sum_sq_a > 0 && m.sum_sq_b > 0) {
        const double scale = m.sum_ab / m.sum_sq_a;
        const double cosine = m.cosine();
        const double residual = 1.0 - cosine * cosine;
        if (residual < kExplainedNmse && residual < kExplainedRatio * nmse && std::fabs(scale - 1.0) > 1e-3) {
            return "B is A times a constant: scale factor " + number_text(scale, 4);
        }
    }
    if (a_dtype_ != b_dtype_) {
        const double bound = std::max(quantization_noise_bound(a_dtype_), quantization_noise_bound(b_dtype_));
        if (bound > 0 && nmse <= bound) {
            const std::string coarser =
                quantization_noise_bound(a_dtype_) >= quantization_noise_bound(b_dtype_) ? a_type : b_type;
            return "different quantization types (" + a_type + " and " + b_type + "): an nmse of " +
                   number_text(nmse, 3) + " is the size of " + coarser + " rounding";
        }
    }
    return "";
}

CompareRow PairComparator::finish(CompareRow row) const {
    row.has_metrics = true;
    row.metrics = main_.metrics();
    row.verdict = row.metrics.identical()            ? Verdict::kIdentical
                  : row.metrics.n_nonfinite_diff > 0 ? Verdict::kNonFinite
                                                     : Verdict::kDifferent;
    row.hint = hint(row.metrics);
    return row;
}

// ---- metadata and the report -----------------------------------------------------------------------------------

MetadataDiff diff_metadata(const ModelInfo& a, const ModelInfo& b) {
    MetadataDiff d;
    if (a.format != b.format) return d;
    std::unordered_map<std::string, size_t> in_b, in_a;
    for (size_t j = 0; j < b.metadata.size(); ++j) in_b.emplace(b.metadata[j].key, j);
    for (size_t i = 0; i < a.metadata.size(); ++i) in_a.emplace(a.metadata[i].key, i);
    for (const MetadataEntry& e : a.metadata) {
        const auto it = in_b.find(e.key);
        if (it == in_b.end()) {
            d.only_a.push_back(e.key);
        } else if (!values_equal(e.value, b.metadata[it->second].value)) {
            d.changed.push_back({e.key, e.value, b.metadata[it->second].value});
        }
    }
    for (const MetadataEntry& e : b.metadata) {
        if (in_a.find(e.key) == in_a.end()) d.only_b.push_back(e.key);
    }
    return d;
}

CompareSummary summarize(const std::vector<CompareRow>& rows) {
    CompareSummary s;
    for (const CompareRow& r : rows) {
        switch (r.verdict) {
            case Verdict::kIdentical:
                ++s.identical;
                break;
            case Verdict::kDifferent:
                ++s.different;
                break;
            case Verdict::kNonFinite:
                ++s.non_finite;
                break;
            case Verdict::kOnlyA:
                ++s.only_a;
                break;
            case Verdict::kOnlyB:
                ++s.only_b;
                break;
            case Verdict::kIncomparable:
                ++s.incomparable;
                break;
        }
    }
    return s;
}

nlohmann::json compare_report_to_json(const CompareReport& report) {
    using nlohmann::json;
    auto name_or_null = [](const std::string& s) { return s.empty() ? json(nullptr) : json(s); };
    json j;
    j["a"] = {{"path", report.a.path}, {"format", format_name(report.a.format)}};
    j["b"] = {{"path", report.b.path}, {"format", format_name(report.b.format)}};
    j["mapping"] = report.mapping;
    json changed = json::array();
    for (const MetadataChange& c : report.metadata.changed) {
        changed.push_back({{"key", c.key}, {"a", value_to_json(c.a)}, {"b", value_to_json(c.b)}});
    }
    j["metadata"] = {{"only_a", report.metadata.only_a}, {"only_b", report.metadata.only_b}, {"changed", changed}};
    json tensors = json::array();
    for (const CompareRow& r : report.tensors) {
        json t;
        t["a"] = name_or_null(r.a);
        t["b"] = name_or_null(r.b);
        t["dtype_a"] = name_or_null(r.dtype_a);
        t["dtype_b"] = name_or_null(r.dtype_b);
        t["shape_a"] = r.a.empty() ? json(nullptr) : json(r.shape_a);
        t["shape_b"] = r.b.empty() ? json(nullptr) : json(r.shape_b);
        const char* transform = transform_name(r.transform);
        t["transform"] = transform ? json(transform) : json(nullptr);
        t["heads"] = r.heads ? json(r.heads) : json(nullptr);
        t["verdict"] = verdict_name(r.verdict);
        if (r.has_metrics) {
            const CompareMetrics& m = r.metrics;
            t["metrics"] = {{"max_abs", m.max_abs},
                            {"max_abs_index", m.max_abs_index},
                            {"rmse", m.rmse()},
                            {"nmse", m.nmse()},
                            {"cosine", m.cosine()},
                            {"n_diff", m.n_diff},
                            {"n_nan_a", m.n_nan_a},
                            {"n_nan_b", m.n_nan_b},
                            {"n_inf_a", m.n_inf_a},
                            {"n_inf_b", m.n_inf_b},
                            {"n_nonfinite_diff", m.n_nonfinite_diff}};
        } else {
            t["metrics"] = nullptr;
        }
        t["hint"] = name_or_null(r.hint);
        tensors.push_back(std::move(t));
    }
    j["tensors"] = std::move(tensors);
    const CompareSummary s = summarize(report.tensors);
    j["summary"] = {{"identical", s.identical}, {"different", s.different}, {"non_finite", s.non_finite},
                    {"only_a", s.only_a},       {"only_b", s.only_b},       {"incomparable", s.incomparable}};
    return j;
}

}  // namespace ws
