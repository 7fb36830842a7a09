// SPDX-License-Identifier: MIT
#include "weightstream/convert_plan.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <unordered_map>

#include "weightstream/dequant.h"
#include "weightstream/gguf_writer.h"
#include "weightstream/header_parser.h"
#include "weightstream/hf_general.h"
#include "weightstream/model_json.h"
#include "weightstream/quant_recipe.h"
#include "weightstream/quantize.h"
#include "weightstream/safetensors_writer.h"
#include "weightstream/utf8.h"

namespace ws {
namespace {

// What plan_tensor() needs besides the tensor.
struct Rules {
    Format target = Format::kGguf;
    DType requested = DType::kUnknown;  // the dtype option, or kUnknown
    // convert_hf_to_gguf.py's rule, which keeps the tensors llama-quantize never quantizes (1-D tensors,
    // norms, ...: tensor_allows_quantization()) in F32 whatever --outtype is. It applies with a dtype and
    // to a Hugging Face checkpoint; a plain copy keeps every type.
    bool keep_f32 = false;
    // A Hugging Face checkpoint: convert_hf_to_gguf.py counts dims as stored (numpy's len(shape)), so a [1, 64]
    // matrix (qwen2-moe's shared_expert_gate) is 2-D and takes the dtype, where ggml_n_dims() and llama-quantize
    // see one dim.
    bool stored_dims = false;
    bool allow_requantize = false;
};

// Whether the F32 rule keeps tensor t in F32 (see Rules::keep_f32).
bool kept_f32(const TensorInfo& t, const Rules& rules) {
    if (!rules.stored_dims) return !tensor_allows_quantization(t, false);
    return t.n_dims < 2 || !tensor_name_allows_quantization(t.name, false);
}

bool target_holds(Format target, DType t) {
    const DTypeKind kind = dtype_traits(t).kind;
    if (target == Format::kSafetensors) return kind == DTypeKind::kFloat || kind == DTypeKind::kInteger;
    return t < DType::kGgmlCount &&
           (kind == DTypeKind::kFloat || kind == DTypeKind::kInteger || kind == DTypeKind::kQuantized);
}

DType wider_signed(DType t) {
    switch (t) {
        case DType::BOOL:
            return DType::I8;
        case DType::U8:
            return DType::I16;
        case DType::U16:
            return DType::I32;
        case DType::U32:
            return DType::I64;
        default:
            return DType::kUnknown;
    }
}

// What to do with tensor t, which carries its output name (a Hugging Face name is already mapped); false with
// *why when it cannot be written to the target.
bool plan_tensor(const TensorInfo& t, const Rules& rules, ConvertTensor* plan, std::string* why) {
    const Format target = rules.target;
    const DType requested = rules.requested;
    const DTypeTraits& traits = dtype_traits(t.dtype);
    plan->out = t;
    plan->out.offset = 0;
    plan->out.nbytes = 0;
    plan->out.file_index = 0;
    if (target == Format::kGguf && !t.full_shape.empty()) {
        *why = "it has " + std::to_string(t.full_shape.size()) + " dims and GGUF holds at most 4";
        return false;
    }
    auto encode_as = [&](DType d) {
        plan->out.dtype = d;
        plan->out.type_id = static_cast<uint32_t>(d);
        plan->action = ConvertAction::kEncode;
        return true;
    };
    const bool encodable = dtype_decodable(t.dtype) && t.dtype != DType::C64 &&
                           (traits.kind == DTypeKind::kFloat || traits.kind == DTypeKind::kQuantized);
    if (target == Format::kGguf && rules.keep_f32 && encodable && kept_f32(t, rules)) {
        if (t.dtype == DType::F32 || traits.kind == DTypeKind::kQuantized) {
            plan->action = ConvertAction::kCopy;
            return true;
        }
        return encode_as(DType::F32);
    }
    const bool requested_fits = requested != DType::kUnknown && t.ne[0] % dtype_traits(requested).block_elems == 0;
    if (encodable && requested_fits && requested != t.dtype) {
        // llama-quantize refuses to requantize without --allow-requantize; convert keeps such a tensor.
        const bool requantize =
            traits.kind == DTypeKind::kQuantized && dtype_traits(requested).kind == DTypeKind::kQuantized;
        if (!requantize || rules.allow_requantize) return encode_as(requested);
        plan->kept_quantized = true;
    }
    if (target_holds(target, t.dtype)) {
        plan->action = ConvertAction::kCopy;
        return true;
    }
    if (encodable) return encode_as(DType::F32);
    if (target == Format::kGguf && wider_signed(t.dtype) != DType::kUnknown) {
        plan->out.dtype = wider_signed(t.dtype);
        plan->out.type_id = static_cast<uint32_t>(plan->out.dtype);
        plan->action = ConvertAction::kWiden;
        return true;
    }
    if (!dtype_decodable(t.dtype)) {
        *why = "type " + t.dtype_name() + " has no float decoder";
    } else {
        *why =
            "type " + t.dtype_name() + " has no " + (target == Format::kGguf ? "GGUF" : "safetensors") + " counterpart";
    }
    return false;
}

std::string float_text(double v, int digits) {
    if (std::isnan(v)) return "nan";
    if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
    char buf[40];
    std::snprintf(buf, sizeof buf, "%.*g", digits, v);
    return buf;
}

// A GGUF value as the string safetensors metadata holds: scalars as text (floats with enough digits to
// read back the same bits), strings as they are, arrays as JSON.
std::string value_text(const Value& v) {
    switch (v.type) {
        case ValueType::kString:
            return utf8_replace_invalid(v.str);
        case ValueType::kArray:
            return json_dump(value_to_json(v), -1);
        case ValueType::kBool:
            return v.bits ? "true" : "false";
        case ValueType::kFloat32:
            return float_text(v.as_double(), 9);
        case ValueType::kFloat64:
            return float_text(v.as_double(), 17);
        case ValueType::kInt8:
        case ValueType::kInt16:
        case ValueType::kInt32:
        case ValueType::kInt64:
            return std::to_string(v.as_int64());
        default:
            return std::to_string(v.as_uint64());
    }
}

bool is_split_key(const std::string& key) {
    return key == "split.no" || key == "split.count" || key == "split.tensors.count";
}

std::vector<MetadataEntry> plan_metadata(const ModelInfo& in, Format target, std::vector<std::string>* warnings) {
    std::vector<MetadataEntry> out;
    for (const MetadataEntry& e : in.metadata) {
        if (is_split_key(e.key)) continue;
        if (target == Format::kSafetensors) {
            out.push_back(string_entry(utf8_replace_invalid(e.key), value_text(e.value)));
            continue;
        }
        if (e.key.empty()) {
            warnings->push_back("metadata entry with an empty key dropped (GGUF does not allow it)");
            continue;
        }
        if (in.format == Format::kGguf || e.key != "general.alignment") {
            MetadataEntry copy = e;
            copy.offset = 0;
            out.push_back(std::move(copy));
            continue;
        }
        // ggml requires general.alignment to be a u32 power of two.
        char* end = nullptr;
        const unsigned long long a = std::strtoull(e.value.str.c_str(), &end, 10);
        if (e.value.type != ValueType::kString || e.value.str.empty() || *end != '\0' || a == 0 || a > 0xffffffffull ||
            (a & (a - 1)) != 0) {
            warnings->push_back("metadata general.alignment '" + e.value.str + "' dropped (GGUF needs a power of two)");
            continue;
        }
        MetadataEntry aligned;
        aligned.key = e.key;
        aligned.value.type = ValueType::kUint32;
        aligned.value.bits = a;
        out.push_back(std::move(aligned));
    }
    return out;
}

Value u32_value(uint64_t v) {
    Value out;
    out.type = ValueType::kUint32;
    out.bits = v;
    return out;
}

// Replaces the value of `key` in place, or appends the entry.
void set_value(std::vector<MetadataEntry>* kv, const std::string& key, const Value& v) {
    for (MetadataEntry& e : *kv) {
        if (e.key == key) {
            e.value = v;
            return;
        }
    }
    MetadataEntry e;
    e.key = key;
    e.value = v;
    kv->push_back(std::move(e));
}

void erase_key(std::vector<MetadataEntry>* kv, const std::string& key) {
    kv->erase(std::remove_if(kv->begin(), kv->end(), [&](const MetadataEntry& e) { return e.key == key; }), kv->end());
}

// Reads the header about to be written back with the rules `verify` applies to it (strict: what ggml
// accepts), so convert never writes a file it would itself reject: the writers lay out what they are
// given, and some inputs (a zero-element tensor with dims whose product overflows in GGUF's order) are
// valid in one format but not in the other.
Status check_readable(const std::vector<uint8_t>& header, uint64_t file_size, Format target) {
    ParseOptions options;
    options.file_size = file_size;
    options.strict = true;
    options.format_hint = target;
    HeaderParser parser(options);
    const Status s = parser.feed(header.data(), header.size());
    if (s.code == Error::kNeedMoreData) return make_error(Error::kInternal, header.size(), "header");
    if (!s.ok()) return s;
    if (parser.format() != target) return make_error(Error::kInternal, 0, "header.format");
    return ok_status();
}

std::string general_name(const std::vector<MetadataEntry>& kv) {
    for (const MetadataEntry& e : kv) {
        if (e.key == "general.name") return e.value.str;
    }
    return std::string();
}

// The tokenizer of a Hugging Face checkpoint, appended to *kv, and the check on the way out. An error (with the
// sentence saying it last in *warnings) refuses the conversion.
Status plan_vocab(const ConvertOptions& options, const HfConfig& hf, const std::string& name,
                  std::vector<MetadataEntry>* kv, std::vector<std::string>* warnings) {
    const char* no_tokenizer = "no tokenizer written (tokenizer.ggml.*): llama.cpp cannot load the file without one";
    if (!options.vocab_files) {
        warnings->push_back(no_tokenizer);
        return ok_status();
    }
    std::string chkhsh;
    Result<HfVocab> vocab = hf_vocab(*options.vocab_files, hf, name, &chkhsh);
    if (!vocab.ok()) {
        const Status& s = vocab.status();
        if (s.code == Error::kUnsupported && s.what == std::string("tokenizer.model")) {
            warnings->push_back(std::string(no_tokenizer) +
                                "; there is no tokenizer.model or tokenizer.json beside the checkpoint");
            return ok_status();
        }
        if (s.code == Error::kUnsupported && !chkhsh.empty() && s.what != std::string("model.type")) {
            // The converter's words, with the hash to add to its table.
            warnings->push_back(std::string("cannot convert the tokenizer: ") + s.what + " (chkhsh " + chkhsh +
                                ": a pre-tokenizer llama.cpp does not know)");
            return make_error(Error::kUnsupported, 0, "tokenizer.json");
        }
        std::string where =
            (s.what == std::string("tokenizer.model") ? " (byte " : " (entry ") + std::to_string(s.offset) + ")";
        if (s.what == std::string("config.json.vocab_size")) {
            where = ": the tokenizer has more tokens than config.json's vocab_size (" + std::to_string(s.offset) + ")";
        }
        warnings->push_back(std::string("cannot convert the tokenizer: ") + error_name(s.code) + " in " + s.what +
                            where);
        return s;
    }
    for (std::string& w : vocab.value().warnings) warnings->push_back(std::move(w));
    const std::string check = hf_vocab_check(vocab.value(), *options.vocab_files);
    if (!check.empty()) {
        warnings->push_back(check);
        if (options.strict_tokenizer) return make_error(Error::kBadKey, 0, "tokenizer.check");
    }
    for (MetadataEntry& e : vocab.value().metadata) kv->push_back(std::move(e));
    return ok_status();
}

// Lists at most three names, as a warning quotes them.
std::string some_names(const std::vector<std::string>& names) {
    std::string list;
    for (size_t k = 0; k < names.size() && k < 3; ++k) list += (k ? ", " : "") + names[k];
    if (names.size() > 3) list += ", ...";
    return list;
}

// A tensor's shape as the messages give it: "[128, 64]", outermost first.
std::string shape_text(const TensorInfo& t) {
    std::string text = "[";
    for (int64_t d : t.shape()) text += (text.size() > 1 ? ", " : "") + std::to_string(d);
    return text + "]";
}

// One output tensor before planning: the input tensor it is, or the experts a stacked tensor is made of.
struct Source {
    std::vector<size_t> inputs;  // the input tensor, or the experts in expert order
    bool stacked = false;
    Transform transform = Transform::kNone;
    TensorInfo info;  // the tensor as the output will have it before typing: name, type and shape
};

struct ExpertRefusal {
    ConvertRefusal::About about = ConvertRefusal::About::kTensor;
    int64_t tensor = -1;
    std::string why;
};

// The experts of one stacked tensor as found: (expert index, input tensor), in input order until sorted.
struct ExpertGroup {
    std::string name;   // the stacked tensor's GGUF name
    std::string block;  // "blk.N"
    std::vector<std::pair<uint64_t, size_t>> experts;
};

// A block's stacked tensors: their groups by kind order (SIZE_MAX for a kind without experts), and the input index
// of its last expert tensor.
struct Block {
    std::vector<size_t> by_order;
    size_t last = 0;
};

// The output tensors of a Hugging Face checkpoint, in convert_hf_to_gguf.py's order: every tensor it converts
// under its GGUF name in input order, except that per-expert matrices are stacked, a block's stacked tensors coming
// where its last expert tensor is, in the family's kind order (modify_tensors collects the experts and yields the
// stacked tensors when the block is complete). The tensors it drops are named in *dropped. Errors as
// plan_conversion() documents them for experts, with *refusal.
Status hf_sources(const ModelInfo& in, const HfConfig& hf, std::vector<Source>* sources,
                  std::vector<std::string>* dropped, ExpertRefusal* refusal) {
    auto refuse = [&](size_t tensor, Status s, std::string why, ConvertRefusal::About about) {
        *refusal = {about, static_cast<int64_t>(tensor), std::move(why)};
        return s;
    };
    std::vector<ExpertGroup> groups;
    std::unordered_map<std::string, size_t> group_index;        // a stacked tensor's name -> its group
    std::unordered_map<std::string, Block> blocks;              // "blk.N" -> its groups
    std::vector<size_t> group_of(in.tensors.size(), SIZE_MAX);  // per input tensor: its group, if an expert
    std::vector<std::string> names(in.tensors.size());
    std::vector<Transform> transforms(in.tensors.size(), Transform::kNone);
    std::vector<bool> kept(in.tensors.size(), false);
    for (size_t i = 0; i < in.tensors.size(); ++i) {
        HfExpert expert;
        expert.kinds = 0;
        if (!hf_to_gguf_name(hf.family, in.tensors[i].name, &names[i], &transforms[i], &expert)) {
            dropped->push_back(in.tensors[i].name);
            continue;
        }
        kept[i] = true;
        if (expert.kinds == 0) continue;
        const std::string& name = names[i];
        const auto found = group_index.emplace(name, groups.size());
        const size_t g = found.first->second;
        if (found.second) {
            groups.push_back(ExpertGroup{name, name.substr(0, name.find('.', 4)), {}});
            Block& block = blocks[groups[g].block];
            if (block.by_order.empty()) block.by_order.assign(expert.kinds, SIZE_MAX);
            block.by_order[expert.order] = g;
        }
        groups[g].experts.emplace_back(expert.index, i);
        blocks[groups[g].block].last = i;
        group_of[i] = g;
    }
    // Every group complete: experts 0 .. expert_count - 1, each once, of one type and shape.
    for (ExpertGroup& group : groups) {
        const size_t first = group.experts[0].second;
        if (hf.n_expert <= 0) {
            return refuse(first, make_error(Error::kBadKey, in.tensors[first].info_offset, "config.num_experts"),
                          "config.json has no num_local_experts / num_experts: tensor " + in.tensors[first].name +
                              " is an expert of " + group.name,
                          ConvertRefusal::About::kConfig);
        }
        const uint64_t count = static_cast<uint64_t>(hf.n_expert);
        for (const auto& e : group.experts) {
            if (e.first >= count) {
                const TensorInfo& t = in.tensors[e.second];
                return refuse(e.second, make_error(Error::kBadShape, t.info_offset, "tensor.expert"),
                              "tensor " + t.name + ": expert " + std::to_string(e.first) +
                                  " is beyond config.json's expert count (" + std::to_string(count) + ")",
                              ConvertRefusal::About::kTensor);
            }
        }
        std::stable_sort(group.experts.begin(), group.experts.end(),
                         [](const auto& a, const auto& b) { return a.first < b.first; });
        for (uint64_t k = 0; k < count; ++k) {
            if (k < group.experts.size() && group.experts[k].first == k) continue;
            const bool twice = k < group.experts.size() && k > 0 && group.experts[k].first == k - 1;
            const size_t at = k < group.experts.size() ? group.experts[k].second : group.experts.back().second;
            return refuse(at,
                          make_error(twice ? Error::kDuplicateName : Error::kBadShape, in.tensors[at].info_offset,
                                     twice ? "tensor.name" : "tensor.expert"),
                          group.name + ": expert " + std::to_string(twice ? k - 1 : k) +
                              (twice ? " is there twice (" + in.tensors[at].name + ")"
                                     : " of " + std::to_string(count) + " is missing from the checkpoint"),
                          ConvertRefusal::About::kTensor);
        }
        const TensorInfo& e0 = in.tensors[group.experts[0].second];
        for (const auto& e : group.experts) {
            const TensorInfo& t = in.tensors[e.second];
            if (t.dtype != e0.dtype) {
                return refuse(e.second, make_error(Error::kBadType, t.info_offset, "tensor.type"),
                              "tensor " + t.name + " is " + t.dtype_name() + " but " + e0.name + " is " +
                                  e0.dtype_name() + ": the experts of " + group.name + " must be of one type",
                              ConvertRefusal::About::kTensor);
            }
            if (!std::equal(t.ne, t.ne + 4, e0.ne) || t.n_dims != e0.n_dims || !t.full_shape.empty() ||
                t.nbytes != e0.nbytes) {
                return refuse(e.second, make_error(Error::kBadShape, t.info_offset, "tensor.ne"),
                              "tensor " + t.name + " has shape " + shape_text(t) + " but " + e0.name + " has " +
                                  shape_text(e0) + ": the experts of " + group.name + " must be of one shape",
                              ConvertRefusal::About::kTensor);
            }
        }
    }
    // A block's kinds all there (mixtral's three, qwen's three).
    for (const ExpertGroup& group : groups) {
        const Block& block = blocks[group.block];
        const auto present =
            std::count_if(block.by_order.begin(), block.by_order.end(), [](size_t g) { return g != SIZE_MAX; });
        if (static_cast<size_t>(present) != block.by_order.size()) {
            const size_t at = group.experts[0].second;
            return refuse(at, make_error(Error::kBadShape, in.tensors[at].info_offset, "tensor.expert"),
                          group.block + " has experts of " + std::to_string(present) + " kinds (" + group.name +
                              ", ...) where the converter stacks " + std::to_string(block.by_order.size()),
                          ConvertRefusal::About::kTensor);
        }
    }
    for (size_t i = 0; i < in.tensors.size(); ++i) {
        if (!kept[i]) continue;
        if (group_of[i] == SIZE_MAX) {
            Source s{{i}, false, transforms[i], in.tensors[i]};
            s.info.name = names[i];
            sources->push_back(std::move(s));
            continue;
        }
        // The block's stacked tensors go where its last expert tensor is, in kind order.
        const Block& block = blocks[groups[group_of[i]].block];
        if (block.last != i) continue;
        for (size_t g : block.by_order) {
            const ExpertGroup& group = groups[g];
            Source s;
            s.stacked = true;
            for (const auto& e : group.experts) s.inputs.push_back(e.second);
            const TensorInfo& e0 = in.tensors[group.experts[0].second];
            s.info = e0;
            s.info.name = group.name;
            const uint32_t n_dims = e0.n_dims;
            const uint64_t n = group.experts.size();
            // torch.stack adds the outermost dimension: ne[n_dims] in ggml's order.
            if (n_dims >= 4 || !e0.full_shape.empty() || n > uint64_t(INT64_MAX) ||
                (e0.nbytes && n > UINT64_MAX / e0.nbytes) || (e0.n_elements && n > UINT64_MAX / e0.n_elements)) {
                return refuse(group.experts[0].second, make_error(Error::kBadShape, e0.info_offset, "tensor.ne"),
                              "cannot stack the " + std::to_string(n) + " experts of " + group.name + " (shape " +
                                  shape_text(e0) + ") into one GGUF tensor",
                              ConvertRefusal::About::kTensor);
            }
            s.info.ne[n_dims] = static_cast<int64_t>(n);
            s.info.n_dims = n_dims + 1;
            s.info.n_elements = e0.n_elements * n;
            s.info.nbytes = e0.nbytes * n;
            sources->push_back(std::move(s));
        }
    }
    return ok_status();
}

}  // namespace

const char* convert_action_name(ConvertAction a) {
    switch (a) {
        case ConvertAction::kCopy:
            return "copy";
        case ConvertAction::kEncode:
            return "encode";
        case ConvertAction::kWiden:
            return "widen";
    }
    return "copy";
}

Result<ConvertPlan> plan_conversion(const ModelInfo& in, const ConvertOptions& options, ConvertRefusal* refusal) {
    ConvertRefusal ignored;
    if (!refusal) refusal = &ignored;
    auto refuse = [&](ConvertRefusal::About about, int64_t tensor, Status s, std::string why) {
        *refusal = {about, tensor, std::move(why)};
        return s;
    };
    const Format target = options.target;
    const DType requested = options.dtype;
    const bool quantizing = requested != DType::kUnknown && dtype_traits(requested).kind == DTypeKind::kQuantized;
    if (requested != DType::kUnknown &&
        ((!quantizing && requested != DType::F32 && requested != DType::F16 && requested != DType::BF16) ||
         !quantize_supported(requested) || (quantizing && target != Format::kGguf))) {
        return refuse(ConvertRefusal::About::kOutput, -1, make_error(Error::kUnsupported, 0, "dtype"),
                      std::string("cannot encode tensors as ") + dtype_name(requested) +
                          (quantizing && target != Format::kGguf ? " in safetensors" : ""));
    }
    ConvertPlan plan;
    plan.target = target;
    // A Hugging Face checkpoint: GGUF names, the converter's transforms and config.json's hyperparameters.
    const HfConfig* hf =
        in.format == Format::kSafetensors && target == Format::kGguf && options.hf && !options.hf->family.empty()
            ? options.hf
            : nullptr;
    plan.hf = hf != nullptr;
    if (in.format == Format::kSafetensors && target == Format::kGguf && !hf) {
        bool hf_named = false;
        for (const TensorInfo& t : in.tensors) hf_named = hf_named || t.name.rfind("model.", 0) == 0;
        if (options.hf) {
            plan.warnings.push_back(options.config_name + ": model_type '" +
                                    utf8_replace_invalid(options.hf->model_type.substr(0, 40)) +
                                    "' is not a family this converter knows (" + hf_known_model_types() +
                                    "): tensor names kept, no hyperparameters written; llama.cpp will not load the "
                                    "file");
        } else if (!options.config_problem.empty()) {
            plan.warnings.push_back(options.config_problem);
        } else if (hf_named) {
            plan.warnings.push_back("no " + options.config_name +
                                    ": Hugging Face tensor names kept, no hyperparameters written; llama.cpp will not "
                                    "load the file");
        }
    }

    Rules rules;
    rules.target = target;
    rules.requested = requested;
    rules.keep_f32 = requested != DType::kUnknown || plan.hf;
    rules.stored_dims = plan.hf;
    rules.allow_requantize = options.allow_requantize;
    // The output tensors before planning, in output order: each input tensor under its output name, or, for a
    // Hugging Face checkpoint, under its GGUF name, with a block's experts stacked (hf_sources()).
    std::vector<Source> sources;
    std::vector<std::string> dropped;
    if (hf) {
        ExpertRefusal er;
        const Status s = hf_sources(in, *hf, &sources, &dropped, &er);
        if (!s.ok()) return refuse(er.about, er.tensor, s, er.why);
    } else {
        for (size_t i = 0; i < in.tensors.size(); ++i)
            sources.push_back(Source{{i}, false, Transform::kNone, in.tensors[i]});
    }
    std::vector<TensorInfo> out_tensors;
    for (const Source& source : sources) {
        const size_t i = source.inputs[0];
        TensorInfo t = source.info;
        const int64_t index = static_cast<int64_t>(i);
        const Transform transform = source.transform;
        ConvertTensor p;
        p.input = i;
        if (source.stacked) p.experts = source.inputs;
        p.transform = transform;
        if (transform == Transform::kPermuteQ || transform == Transform::kPermuteK) {
            if (hf->n_head <= 0) {
                return refuse(ConvertRefusal::About::kConfig, index,
                              make_error(Error::kBadKey, t.info_offset, "config.num_attention_heads"),
                              "config.json has no num_attention_heads / num_key_value_heads: tensor " +
                                  in.tensors[i].name + " needs them for the Q/K permutation");
            }
            const int64_t n_head_kv = hf->n_head_kv > 0 ? hf->n_head_kv : hf->n_head;
            p.heads = static_cast<uint64_t>(transform == Transform::kPermuteQ ? hf->n_head : n_head_kv);
        }
        std::string why;
        if (in.big_endian && !big_endian_order_defined(t.dtype)) {
            why = "type " + t.dtype_name() + " has no defined big-endian layout (gguf-py cannot swap it either)";
        }
        if (!why.empty() || !plan_tensor(t, rules, &p, &why)) {
            return refuse(ConvertRefusal::About::kTensor, index,
                          make_error(Error::kUnsupported, t.info_offset, "tensor.type"),
                          "cannot convert tensor " + t.name + ": " + why);
        }
        if (transform == Transform::kPlusOne && !dtype_decodable(t.dtype)) {
            return refuse(ConvertRefusal::About::kTensor, index,
                          make_error(Error::kUnsupported, t.info_offset, "tensor.type"),
                          "tensor " + t.name + ": type " + t.dtype_name() + " cannot be decoded for Gemma's norm + 1");
        }
        if (target == Format::kGguf && t.name.size() > kGgufMaxTensorName) {
            return refuse(
                ConvertRefusal::About::kTensor, index, make_error(Error::kTooLarge, t.info_offset, "tensor.name"),
                "tensor name " + t.name + " is longer than GGUF's " + std::to_string(kGgufMaxTensorName) + " bytes");
        }
        if (p.action == ConvertAction::kEncode && dtype_traits(p.out.dtype).kind == DTypeKind::kQuantized) {
            const ImatrixEntry* e = options.imatrix ? options.imatrix->find(t.name) : nullptr;
            if (e && e->values.size() == static_cast<uint64_t>(t.ne[0]) * static_cast<uint64_t>(t.ne[2])) {
                p.imatrix = e->values.data();
            } else if (quantize_requires_imatrix(p.out.dtype)) {
                return refuse(ConvertRefusal::About::kTensor, index,
                              make_error(Error::kUnsupported, t.info_offset, "imatrix"),
                              "tensor " + t.name + ": " + dtype_name(p.out.dtype) +
                                  " needs an importance matrix entry of ne[0] * ne[2] values (--imatrix)");
            }
        }
        out_tensors.push_back(p.out);
        plan.tensors.push_back(std::move(p));
    }
    std::vector<std::string>& warnings = plan.warnings;
    // Already quantized tensors kept (one line per type), and requantized ones (llama-quantize's words).
    std::vector<DType> kept, requantized;
    for (const ConvertTensor& p : plan.tensors) {
        const DType in_type = in.tensors[p.input].dtype;
        if (p.kept_quantized && std::find(kept.begin(), kept.end(), in_type) == kept.end()) kept.push_back(in_type);
        if (p.action == ConvertAction::kEncode && dtype_traits(in_type).kind == DTypeKind::kQuantized &&
            dtype_traits(p.out.dtype).kind == DTypeKind::kQuantized &&
            std::find(requantized.begin(), requantized.end(), in_type) == requantized.end()) {
            requantized.push_back(in_type);
        }
    }
    for (DType d : kept) {
        warnings.push_back(std::string("tensors already of type ") + dtype_name(d) + " kept as they are, not " +
                           dtype_name(requested) + " (--allow-requantize requantizes them, at lower quality)");
    }
    for (DType d : requantized) {
        warnings.push_back(std::string("requantizing from ") + dtype_name(d) +
                           ": quality is lower than quantizing from 16 or 32 bit floats");
    }
    if (!dropped.empty()) {
        warnings.push_back(std::to_string(dropped.size()) + " tensor" + (dropped.size() == 1 ? "" : "s") +
                           " that convert_hf_to_gguf.py does not convert for " + hf->family +
                           " dropped: " + some_names(dropped));
    }

    plan.metadata = plan_metadata(in, target, &warnings);
    if (hf) {
        // convert_hf_to_gguf.py's keys, in its order; the checkpoint's own __metadata__ ("format": "pt") is not
        // kept: general.architecture, general.* from the folder's name, the hyperparameters, the tokenizer, and
        // general.quantization_version (GGML_QNT_VERSION) last.
        plan.metadata = hf_hparams(*hf, &warnings);
        std::vector<MetadataEntry> general = hf_general_metadata(options.model_name, *hf, out_tensors);
        plan.metadata.insert(plan.metadata.begin() + 1, std::make_move_iterator(general.begin()),
                             std::make_move_iterator(general.end()));
        Status vocab = plan_vocab(options, *hf, general_name(plan.metadata), &plan.metadata, &warnings);
        if (!vocab.ok()) {
            return refuse(ConvertRefusal::About::kTokenizer, -1, vocab, warnings.empty() ? "" : warnings.back());
        }
        set_value(&plan.metadata, "general.quantization_version", u32_value(2));
    }
    // general.file_type (GGUF only; safetensors carries GGUF metadata as text, as it was): kept when every
    // tensor is copied from a GGUF that has it; otherwise the llama_ftype of the result, as
    // convert_hf_to_gguf.py writes it for --outtype (the ftype of the dtype when any tensor got it), else
    // llama_model_loader's guess from the most common tensor type.
    bool reencoded = plan.hf || in.format != target;
    for (const ConvertTensor& p : plan.tensors) reencoded = reencoded || p.action != ConvertAction::kCopy;
    if (reencoded && target == Format::kGguf) {
        bool any_requested = false;
        for (const TensorInfo& t : out_tensors) any_requested = any_requested || t.dtype == requested;
        const DType basis = any_requested ? requested : majority_tensor_type(out_tensors);
        Ftype ftype;
        if (basis == DType::kUnknown) {
            erase_key(&plan.metadata, "general.file_type");
        } else if (!ftype_of_majority_type(basis, &ftype)) {
            erase_key(&plan.metadata, "general.file_type");
            warnings.push_back(std::string("no llama.cpp file type for a model of mostly ") + dtype_name(basis) +
                               " tensors: general.file_type not written");
        } else {
            set_value(&plan.metadata, "general.file_type", u32_value(static_cast<uint32_t>(ftype)));
        }
    }
    if (target == Format::kGguf && quantizing) {
        bool quantized = false;
        for (const TensorInfo& t : out_tensors) {
            quantized = quantized || dtype_traits(t.dtype).kind == DTypeKind::kQuantized;
        }
        if (quantized && !in.find("general.quantization_version")) {
            set_value(&plan.metadata, "general.quantization_version", u32_value(2));
        }
    }

    // The layout: header bytes, and where each tensor goes (GGUF: with zero padding after it).
    std::vector<uint64_t> offsets, nbytes, padding;
    if (target == Format::kGguf) {
        Result<GgufLayout> layout = gguf_layout(plan.metadata, out_tensors);
        if (!layout.ok()) {
            const Status& s = layout.status();
            return refuse(ConvertRefusal::About::kOutput, -1, s,
                          std::string("cannot be written as GGUF: ") + error_name(s.code) + ": " + s.what);
        }
        plan.header = std::move(layout.value().header);
        offsets = std::move(layout.value().tensor_offsets);
        nbytes = std::move(layout.value().tensor_nbytes);
        padding = std::move(layout.value().tensor_padding);
        plan.file_size = layout.value().file_size;
    } else {
        Result<SafetensorsLayout> layout = safetensors_layout(plan.metadata, out_tensors);
        if (!layout.ok()) {
            const Status& s = layout.status();
            return refuse(ConvertRefusal::About::kOutput, -1, s,
                          std::string("cannot be written as safetensors: ") + error_name(s.code) + ": " + s.what);
        }
        plan.header = std::move(layout.value().header);
        offsets = std::move(layout.value().tensor_offsets);
        nbytes = std::move(layout.value().tensor_nbytes);
        padding.assign(nbytes.size(), 0);
        plan.file_size = layout.value().file_size;
    }
    for (size_t k = 0; k < plan.tensors.size(); ++k) {
        plan.tensors[k].out.offset = offsets[k];
        plan.tensors[k].out.nbytes = nbytes[k];
        plan.tensors[k].padding = padding[k];
    }
    const Status readable = check_readable(plan.header, plan.file_size, target);
    if (!readable.ok()) {
        return refuse(ConvertRefusal::About::kOutput, -1, readable,
                      std::string("cannot be written as ") + format_name(target) +
                          ": the output would be rejected when read: " + error_name(readable.code) + ": " +
                          readable.what + " (byte " + std::to_string(readable.offset) + " of OUT)");
    }
    return plan;
}

Result<ModelInfo> converted_model(const ConvertPlan& plan) {
    if (plan.target != Format::kGguf) return make_error(Error::kUnsupported, 0, "format");
    ParseOptions options;
    options.file_size = plan.file_size;
    options.format_hint = Format::kGguf;
    HeaderParser parser(options);
    const Status s = parser.feed(plan.header.data(), plan.header.size());
    if (s.code == Error::kNeedMoreData) return make_error(Error::kInternal, plan.header.size(), "header");
    if (!s.ok()) return s;
    return parser.take_info();
}

}  // namespace ws
