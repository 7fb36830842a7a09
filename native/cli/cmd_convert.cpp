// SPDX-License-Identifier: MIT
// `convert IN OUT [--dtype TYPE] [--allow-requantize] [--imatrix FILE] [--threads N]`: GGUF <-> safetensors
// (OUT's extension picks the format; same-format conversions work too). TYPE is f32, f16, bf16 or any ggml type this
// build quantizes to (q8_0, q4_k, iq2_xxs, ...; GGUF only).
//
// Per tensor, by what the target format can hold:
//   - a type the target holds is copied byte for byte, unless --dtype applies to it;
//   - --dtype applies to the float and quantized tensors (not integers, not C64): they are decoded and
//     re-encoded as F32/F16/BF16 (ggml's rounding) or quantized (ggml_quantize_chunk's bytes, row by row,
//     with the --imatrix entry of the tensor's name when its size is ne[0] * ne[2]; only tensors whose
//     rows, ne[0], are a multiple of the type's block; the others follow the default);
//   - otherwise a decodable float or quantized type the target lacks becomes F32 (GGUF quants for
//     safetensors; F8/F6/F4 for GGUF), an unsigned integer becomes the next wider signed one for GGUF
//     (BOOL -> I8, U8 -> I16, U16 -> I32, U32 -> I64); U64, C64 and types without a decoder are refused.
// To GGUF, as llama.cpp's tools write it:
//   - with --dtype (and from a Hugging Face checkpoint), the float tensors llama-quantize never quantizes
//     (tensor_allows_quantization(): 1-D tensors, norms, ffn_gate_inp, position embeddings, ...) are F32, as
//     convert_hf_to_gguf.py writes them whatever --outtype is;
//   - a tensor already quantized is kept as it is when --dtype is another quantized type (a warning per type),
//     unless --allow-requantize (llama-quantize's rule and words);
//   - general.file_type is kept when every tensor is copied from a GGUF that has it, else it is the llama_ftype
//     of --dtype when some tensor got it (convert_hf_to_gguf.py's --outtype), else llama_model_loader's guess
//     from the most common tensor type (dropped, with a warning, for a type llama.cpp has no file type for);
//     general.quantization_version 2 is added with quantized output.
// A safetensors checkpoint whose config.json (beside it) names a family include/weightstream/hf_names.h knows is
// converted as convert_hf_to_gguf.py converts it (include/weightstream/hf_checkpoint.h): GGUF tensor names (tensors
// the converter drops are dropped, with a warning), q/k rows permuted by the head counts for llama, Gemma's norms
// + 1, and the metadata replaced by general.architecture and the family's hyperparameters from config.json
// (hf_hparams()). What llama.cpp would still need (the tokenizer, which this command does not convert) is a
// warning, as is a checkpoint with Hugging Face names and no usable config.json.
// Metadata: GGUF -> safetensors writes every key as a string (arrays as JSON text); safetensors -> GGUF
// writes string keys, with general.alignment read back as the u32 ggml requires. split.* keys are dropped
// (the output is one file).
//
// The output is streamed: header first, then one tensor at a time decoded in pieces, so memory stays
// around one piece (a permuted q/k tensor is staged whole, once: the permutation mixes rows across a head); it is
// written through OutputFile (a temporary file renamed over OUT when complete).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <nlohmann/json.hpp>

#include "cli/hf_config_file.h"
#include "cli/progress.h"
#include "cli/quantize_io.h"
#include "io/mapped_file.h"
#include "io/tensor_io.h"
#include "weightstream/dequant.h"
#include "weightstream/gguf_writer.h"
#include "weightstream/header_parser.h"
#include "weightstream/hf_checkpoint.h"
#include "weightstream/imatrix.h"
#include "weightstream/model_json.h"
#include "weightstream/quant_recipe.h"
#include "weightstream/quantize.h"
#include "weightstream/safetensors_writer.h"
#include "weightstream/utf8.h"

namespace ws::cli {
namespace {

constexpr size_t kCopyPiece = size_t(16) << 20;      // bytes per write when copying
constexpr uint64_t kWidenPiece = uint64_t(1) << 20;  // elements per piece when widening integers

enum class Action { kCopy, kEncode, kWiden };

struct Plan {
    size_t input = 0;  // index into the input's tensors
    TensorInfo out;    // name, dtype and shape to write
    Action action = Action::kCopy;
    const float* imatrix = nullptr;          // importance for a quantized target (ne[0] * ne[2] values), or nullptr
    Transform transform = Transform::kNone;  // convert_hf_to_gguf.py's change to the values on the way
    uint64_t heads = 0;                      // kPermuteQ/kPermuteK: the head count the rows are permuted by
    bool kept_quantized = false;             // already quantized and copied rather than requantized to --dtype
};

// What plan_tensor() needs besides the tensor.
struct Rules {
    Format target = Format::kGguf;
    DType requested = DType::kUnknown;  // --dtype, or kUnknown
    // convert_hf_to_gguf.py's rule, which keeps the tensors llama-quantize never quantizes (1-D tensors,
    // norms, ...: tensor_allows_quantization()) in F32 whatever --outtype is. It applies with --dtype and
    // to a Hugging Face checkpoint; a plain copy keeps every type.
    bool keep_f32 = false;
    bool allow_requantize = false;
};

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

// What to do with tensor t; false with *why when it cannot be written to the target.
// `t` carries its output name (a Hugging Face name is already mapped).
bool plan_tensor(const TensorInfo& t, const Rules& rules, Plan* plan, std::string* why) {
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
        plan->action = Action::kEncode;
        return true;
    };
    const bool encodable = dtype_decodable(t.dtype) && t.dtype != DType::C64 &&
                           (traits.kind == DTypeKind::kFloat || traits.kind == DTypeKind::kQuantized);
    if (target == Format::kGguf && rules.keep_f32 && encodable && !tensor_allows_quantization(t, false)) {
        if (t.dtype == DType::F32 || traits.kind == DTypeKind::kQuantized) {
            plan->action = Action::kCopy;
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
        plan->action = Action::kCopy;
        return true;
    }
    if (encodable) return encode_as(DType::F32);
    if (target == Format::kGguf && wider_signed(t.dtype) != DType::kUnknown) {
        plan->out.dtype = wider_signed(t.dtype);
        plan->out.type_id = static_cast<uint32_t>(plan->out.dtype);
        plan->action = Action::kWiden;
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
            warnings->push_back("metadata general.alignment '" + printable(e.value.str, 40) +
                                "' dropped (GGUF needs a power of two)");
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

// BOOL/U8/U16/U32 elements -> the little-endian signed type twice as wide (BOOL: I8 0/1).
void widen(DType from, const uint8_t* src, uint64_t n, std::vector<uint8_t>* dst) {
    const uint32_t in_size = dtype_traits(from).block_bytes;
    const uint32_t out_size = from == DType::BOOL ? 1 : 2 * in_size;
    dst->assign(static_cast<size_t>(n * out_size), 0);
    for (uint64_t i = 0; i < n; ++i) {
        uint64_t v = 0;
        for (uint32_t b = 0; b < in_size; ++b) v |= static_cast<uint64_t>(src[i * in_size + b]) << (8 * b);
        if (from == DType::BOOL) v = v != 0;
        for (uint32_t b = 0; b < out_size; ++b) (*dst)[i * out_size + b] = static_cast<uint8_t>(v >> (8 * b));
    }
}

std::string dir_of(const std::string& path) {
    const size_t slash = path.rfind('/');
    return slash == std::string::npos ? std::string() : path.substr(0, slash + 1);
}

bool file_exists(const std::string& path) {
    FILE* f = std::fopen(path.c_str(), "rb");
    if (f) std::fclose(f);
    return f != nullptr;
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

// The stored rows of a q/k tensor in convert_hf_to_gguf.py's order for `heads` heads (hf_permute_rows(): rows
// move whole, so the stored bytes are permuted as they are).
Status permute_rows(const TensorInfo& t, uint64_t heads, const uint8_t* src, std::vector<uint8_t>* out) {
    const uint64_t rows = static_cast<uint64_t>(t.ne[gguf_n_dims(t.ne) - 1]);
    const Result<uint64_t> head_rows = hf_head_rows(rows, heads);
    if (!head_rows.ok() || t.nbytes % rows != 0) return make_error(Error::kBadShape, t.info_offset, "tensor.ne");
    out->resize(static_cast<size_t>(t.nbytes));
    return hf_permute_rows(src, rows, head_rows.value(), t.nbytes / rows, out->data());
}

// Gemma's norm weights + 1 as the converter writes them (hf_convert_rows()), as F32 bytes.
Status plus_one(const TensorInfo& t, const uint8_t* src, std::vector<uint8_t>* out) {
    std::vector<float> x(static_cast<size_t>(t.n_elements));
    WS_TRY(dequantize(t.dtype, src, t.n_elements, x.data()));
    const HfRows all{1, 0, 1, t.n_elements};
    WS_TRY(hf_convert_rows(Transform::kPlusOne, t.dtype, 0, all, x.data(), x.data()));
    out->resize(x.size() * 4);
    std::memcpy(out->data(), x.data(), out->size());
    return ok_status();
}

// f32, f16, bf16 or a quantized ggml type name (case-insensitive).
bool parse_dtype(const std::string& s, DType* out) {
    DType t;
    if (!ggml_type_from_name(s, &t)) return false;
    if (t != DType::F32 && t != DType::F16 && t != DType::BF16 && dtype_traits(t).kind != DTypeKind::kQuantized) {
        return false;
    }
    *out = t;
    return true;
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

// convert --json (its fields: usage.cpp): what was written, tensor by tensor, as the layout placed it.
void print_convert_json(const std::string& out_path, Format target, uint64_t file_size, size_t metadata_keys,
                        const std::vector<TensorInfo>& in, const std::vector<Plan>& plans,
                        const std::vector<uint64_t>& nbytes, const std::vector<std::string>& warnings) {
    static const char* const kActions[] = {"copy", "encode", "widen"};  // Action's order
    nlohmann::json tensors = nlohmann::json::array();
    uint64_t bytes = 0;
    size_t re_encoded = 0;
    for (size_t i = 0; i < plans.size(); ++i) {
        tensors.push_back({{"name", plans[i].out.name},
                           {"dtype", plans[i].out.dtype_name()},
                           {"shape", plans[i].out.shape()},
                           {"bytes", nbytes[i]},
                           {"source_dtype", in[i].dtype_name()},
                           {"action", kActions[static_cast<int>(plans[i].action)]}});
        bytes += nbytes[i];
        re_encoded += plans[i].action != Action::kCopy;
    }
    const nlohmann::json j = {{"output", out_path},
                              {"format", format_name(target)},
                              {"file_size", file_size},
                              {"metadata_keys", metadata_keys},
                              {"tensors", std::move(tensors)},
                              {"totals", {{"tensors", plans.size()}, {"re_encoded", re_encoded}, {"bytes", bytes}}},
                              {"warnings", warnings}};
    std::printf("%s\n", json_dump(j).c_str());
}

}  // namespace

int cmd_convert(const std::vector<std::string>& argv) {
    Args args;
    if (!parse_args(argv, {"--allow-requantize", "--json"}, {"--dtype", "--imatrix", "--threads"}, &args)) {
        return kExitUsage;
    }
    if (args.positional.size() != 2) return usage_error();
    const std::string& in_path = args.positional[0];
    const std::string& out_path = args.positional[1];
    Format target;
    if (ends_with(out_path, ".safetensors")) {
        target = Format::kSafetensors;
    } else if (ends_with(out_path, ".gguf")) {
        target = Format::kGguf;
    } else {
        return fail(kExitUsage, "convert: OUT must end in .gguf or .safetensors");
    }
    DType requested = DType::kUnknown;
    if (args.has("--dtype") && !parse_dtype(args.get("--dtype"), &requested)) {
        return fail(kExitUsage, "--dtype takes f32, f16, bf16 or a quantized ggml type (q8_0, q4_k, ...), not '" +
                                    printable(args.get("--dtype"), 40) + "'");
    }
    if (requested != DType::kUnknown && !quantize_supported(requested)) {
        return fail(kExitUsage,
                    "--dtype " + args.get("--dtype") + ": this build cannot quantize to " + dtype_name(requested));
    }
    const bool quantizing = requested != DType::kUnknown && dtype_traits(requested).kind == DTypeKind::kQuantized;
    if (target == Format::kSafetensors && quantizing) {
        return fail(kExitUsage, "--dtype " + args.get("--dtype") + " is a GGUF type: safetensors cannot hold it");
    }
    if (args.has("--imatrix") && !quantizing) return fail(kExitUsage, "--imatrix needs a quantized --dtype");
    Imatrix imatrix;
    if (args.has("--imatrix")) {
        const std::string path = args.get("--imatrix");
        MappedFile file;
        std::string error;
        if (!file.open(path, &error)) return fail(kExitIo, path + ": " + error);
        Result<Imatrix> r = parse_imatrix(file.data(), static_cast<size_t>(file.size()));
        if (!r.ok()) return fail(kExitInvalid, describe(path, r.status()));
        imatrix = std::move(r).value();
    }
    unsigned threads = 1;
    if (!parse_threads(args, &threads)) return kExitUsage;

    LoadedModel model;
    int status = kExitOk;
    if (!load(in_path, false, &model, &status)) return status;
    // A big-endian GGUF's tensor data is swapped to little-endian on the way (the output is little-endian).
    const bool big_endian = model.info.big_endian;

    // A Hugging Face checkpoint: GGUF names, the converter's transforms and config.json's hyperparameters.
    HfConfig hf;
    std::vector<std::string> warnings;
    const bool from_hf = model.info.format == Format::kSafetensors && target == Format::kGguf;
    if (from_hf) {
        std::string problem;
        const ConfigFile config = read_hf_config(in_path, &hf, &problem);
        bool hf_named = false;
        for (const TensorInfo& t : model.info.tensors) hf_named = hf_named || t.name.rfind("model.", 0) == 0;
        if (config == ConfigFile::kRead && hf.family.empty()) {
            warnings.push_back(dir_of(in_path) + "config.json: model_type '" + printable(hf.model_type, 40) +
                               "' is not a family this converter knows (llama, mistral, qwen2, qwen3, gemma, "
                               "gemma2, gemma3, phi3): tensor names kept, no hyperparameters written; "
                               "llama.cpp will not load the file");
        } else if (config == ConfigFile::kUnusable) {
            warnings.push_back(problem);
        } else if (config == ConfigFile::kMissing && hf_named) {
            warnings.push_back("no config.json beside " + in_path +
                               ": Hugging Face tensor names kept, no hyperparameters written; llama.cpp will not "
                               "load the file");
        }
    }
    const bool hf_mode = !hf.family.empty();

    Rules rules;
    rules.target = target;
    rules.requested = requested;
    rules.keep_f32 = requested != DType::kUnknown || hf_mode;
    rules.allow_requantize = args.has("--allow-requantize");
    std::vector<Plan> plans;
    std::vector<TensorInfo> out_tensors;
    std::vector<std::string> dropped;
    uint64_t total = 0;
    for (size_t i = 0; i < model.info.tensors.size(); ++i) {
        TensorInfo t = model.info.tensors[i];
        Transform transform = Transform::kNone;
        if (hf_mode) {
            std::string gguf_name;
            if (!hf_to_gguf_name(hf.family, t.name, &gguf_name, &transform)) {
                dropped.push_back(t.name);
                continue;
            }
            t.name = gguf_name;
        }
        Plan plan;
        plan.input = i;
        plan.transform = transform;
        if (transform == Transform::kPermuteQ || transform == Transform::kPermuteK) {
            const int64_t n_head_kv = hf.n_head_kv > 0 ? hf.n_head_kv : hf.n_head;
            plan.heads = static_cast<uint64_t>(transform == Transform::kPermuteQ ? hf.n_head : n_head_kv);
            if (hf.n_head <= 0) {
                return fail(kExitInvalid, "config.json has no num_attention_heads / num_key_value_heads: tensor " +
                                              printable(model.info.tensors[i].name, 200) +
                                              " needs them for the Q/K permutation");
            }
        }
        std::string why;
        if (big_endian && !big_endian_order_defined(t.dtype)) {
            why = "type " + t.dtype_name() + " has no defined big-endian layout (gguf-py cannot swap it either)";
        }
        if (!why.empty() || !plan_tensor(t, rules, &plan, &why)) {
            return fail(kExitInvalid, describe(model.paths[t.file_index],
                                               make_error(Error::kUnsupported, t.info_offset, "tensor.type")) +
                                          ": cannot convert tensor " + printable(t.name, 200) + ": " + why);
        }
        if (transform == Transform::kPlusOne && !dtype_decodable(t.dtype)) {
            return fail(kExitInvalid, "tensor " + printable(t.name, 200) + ": type " + t.dtype_name() +
                                          " cannot be decoded for Gemma's norm + 1");
        }
        if (target == Format::kGguf && t.name.size() > kGgufMaxTensorName) {
            return fail(kExitInvalid, describe(model.paths[t.file_index],
                                               make_error(Error::kTooLarge, t.info_offset, "tensor.name")) +
                                          ": tensor name " + printable(t.name, 200) + " is longer than GGUF's " +
                                          std::to_string(kGgufMaxTensorName) + " bytes");
        }
        if (plan.action == Action::kEncode && dtype_traits(plan.out.dtype).kind == DTypeKind::kQuantized) {
            const ImatrixEntry* e = imatrix.find(t.name);
            if (e && e->values.size() == static_cast<uint64_t>(t.ne[0]) * static_cast<uint64_t>(t.ne[2])) {
                plan.imatrix = e->values.data();
            } else if (quantize_requires_imatrix(plan.out.dtype)) {
                return fail(kExitInvalid, describe(model.paths[t.file_index],
                                                   make_error(Error::kUnsupported, t.info_offset, "imatrix")) +
                                              ": tensor " + printable(t.name, 200) + ": " + dtype_name(plan.out.dtype) +
                                              " needs an importance matrix entry of ne[0] * ne[2] values (--imatrix)");
            }
        }
        out_tensors.push_back(plan.out);
        plans.push_back(std::move(plan));
        total += t.nbytes;
    }
    // Already quantized tensors kept (one line per type), and requantized ones (llama-quantize's words).
    std::vector<DType> kept, requantized;
    for (const Plan& p : plans) {
        const DType in_type = model.info.tensors[p.input].dtype;
        if (p.kept_quantized && std::find(kept.begin(), kept.end(), in_type) == kept.end()) kept.push_back(in_type);
        if (p.action == Action::kEncode && dtype_traits(in_type).kind == DTypeKind::kQuantized &&
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
        std::string list;
        for (size_t k = 0; k < dropped.size() && k < 3; ++k) list += (k ? ", " : "") + printable(dropped[k], 80);
        if (dropped.size() > 3) list += ", ...";
        warnings.push_back(std::to_string(dropped.size()) + " tensor" + (dropped.size() == 1 ? "" : "s") +
                           " that convert_hf_to_gguf.py does not convert for " + hf.family + " dropped: " + list);
    }

    std::vector<MetadataEntry> metadata = plan_metadata(model.info, target, &warnings);
    if (hf_mode) {
        // convert_hf_to_gguf.py's keys first; the checkpoint's own __metadata__ ("format": "pt") is not kept.
        metadata = hf_hparams(hf, &warnings);
        set_value(&metadata, "general.quantization_version", u32_value(2));  // GGML_QNT_VERSION
    }
    // general.file_type (GGUF only; safetensors carries GGUF metadata as text, as it was): kept when every
    // tensor is copied from a GGUF that has it; otherwise the llama_ftype of the result, as
    // convert_hf_to_gguf.py writes it for --outtype (the ftype of --dtype when any tensor got it), else
    // llama_model_loader's guess from the most common tensor type.
    bool reencoded = hf_mode || model.info.format != target;
    for (const Plan& p : plans) reencoded = reencoded || p.action != Action::kCopy;
    if (reencoded && target == Format::kGguf) {
        bool any_requested = false;
        for (const TensorInfo& t : out_tensors) any_requested = any_requested || t.dtype == requested;
        const DType basis = any_requested ? requested : majority_tensor_type(out_tensors);
        Ftype ftype;
        if (basis == DType::kUnknown) {
            erase_key(&metadata, "general.file_type");
        } else if (!ftype_of_majority_type(basis, &ftype)) {
            erase_key(&metadata, "general.file_type");
            warnings.push_back(std::string("no llama.cpp file type for a model of mostly ") + dtype_name(basis) +
                               " tensors: general.file_type not written");
        } else {
            set_value(&metadata, "general.file_type", u32_value(static_cast<uint32_t>(ftype)));
        }
    }
    if (target == Format::kGguf && requested != DType::kUnknown &&
        dtype_traits(requested).kind == DTypeKind::kQuantized) {
        bool quantized = false;
        for (const TensorInfo& t : out_tensors)
            quantized = quantized || dtype_traits(t.dtype).kind == DTypeKind::kQuantized;
        if (quantized && !model.info.find("general.quantization_version")) {
            set_value(&metadata, "general.quantization_version", u32_value(2));
        }
    }
    // What llama.cpp still needs that this command does not write.
    if (hf_mode) {
        const std::string tokenizer = dir_of(in_path) + "tokenizer.json";
        warnings.push_back(std::string("no tokenizer written (tokenizer.ggml.*): llama.cpp cannot load the file "
                                       "without one; ") +
                           (file_exists(tokenizer) ? tokenizer + " is there, but this command does not convert it "
                                                                 "(convert_hf_to_gguf.py does)"
                                                   : "convert_hf_to_gguf.py converts tokenizer.json"));
    }
    for (const std::string& w : warnings) warn(w);

    // The layout: header bytes, and where each tensor goes (GGUF: with zero padding after it).
    std::vector<uint8_t> header;
    std::vector<uint64_t> nbytes, padding;
    uint64_t file_size = 0;
    if (target == Format::kGguf) {
        Result<GgufLayout> layout = gguf_layout(metadata, out_tensors);
        if (!layout.ok()) {
            return fail(kExitInvalid, in_path + ": cannot be written as GGUF: " + error_name(layout.status().code) +
                                          ": " + layout.status().what);
        }
        header = std::move(layout.value().header);
        nbytes = layout.value().tensor_nbytes;
        padding = layout.value().tensor_padding;
        file_size = layout.value().file_size;
    } else {
        Result<SafetensorsLayout> layout = safetensors_layout(metadata, out_tensors);
        if (!layout.ok()) {
            return fail(kExitInvalid, in_path + ": cannot be written as safetensors: " +
                                          error_name(layout.status().code) + ": " + layout.status().what);
        }
        header = std::move(layout.value().header);
        nbytes = layout.value().tensor_nbytes;
        padding.assign(nbytes.size(), 0);
        file_size = layout.value().file_size;
    }
    const Status readable = check_readable(header, file_size, target);
    if (!readable.ok()) {
        return fail(kExitInvalid, in_path + ": cannot be written as " + format_name(target) +
                                      ": the output would be rejected when read: " + error_name(readable.code) + ": " +
                                      readable.what + " (byte " + std::to_string(readable.offset) + " of OUT)");
    }

    OutputFile out;
    if (!out.open(out_path, input_files(model)) || !out.write(header.data(), header.size()))
        return fail(kExitIo, out.error());
    Progress progress("convert", total);
    auto io_error = [&] {
        progress.finish();
        return fail(kExitIo, out.error());
    };
    std::vector<uint8_t> encoded, staged;
    for (size_t i = 0; i < plans.size(); ++i) {
        const Plan& base_plan = plans[i];
        const TensorInfo& stored = model.info.tensors[base_plan.input];
        TensorBytes held;
        const uint8_t* data = tensor_bytes_or_fail(model, stored, &held, &status);
        if (!data) {
            progress.finish();
            return status;
        }
        // A transform makes a staged copy of the tensor (its values as the converter changes them) that the
        // action below reads instead of the stored bytes; `t` describes what the action reads.
        TensorInfo t = stored;
        Plan plan = base_plan;
        if (plan.transform == Transform::kPermuteQ || plan.transform == Transform::kPermuteK ||
            plan.transform == Transform::kPlusOne) {
            const Status s = plan.transform == Transform::kPlusOne ? plus_one(stored, data, &staged)
                                                                   : permute_rows(stored, plan.heads, data, &staged);
            if (!s.ok()) {
                progress.finish();
                return fail(kExitInvalid,
                            describe(model.paths[t.file_index], make_error(s.code, t.info_offset, s.what)) +
                                ": tensor " + printable(t.name, 200) + ": cannot apply " +
                                transform_name(plan.transform) +
                                (plan.transform == Transform::kPlusOne
                                     ? std::string()
                                     : " (" + std::to_string(t.ne[gguf_n_dims(t.ne) - 1]) + " rows, " +
                                           std::to_string(plan.heads) + " heads)"));
            }
            data = staged.data();
            if (plan.transform == Transform::kPlusOne) {
                t.dtype = DType::F32;
                t.nbytes = staged.size();
                plan.action = plan.out.dtype == DType::F32 ? Action::kCopy : Action::kEncode;
            }
        }
        uint64_t written = 0;
        if (plan.action == Action::kCopy) {
            // Big-endian data is swapped in pieces of whole blocks (t.nbytes is whole blocks).
            const size_t block = dtype_traits(t.dtype).block_bytes;
            const size_t piece = big_endian ? kCopyPiece / block * block : kCopyPiece;
            for (uint64_t done = 0; done < t.nbytes;) {
                const size_t n = static_cast<size_t>(std::min<uint64_t>(piece, t.nbytes - done));
                const uint8_t* from = data + done;
                if (big_endian) {
                    encoded.assign(from, from + n);
                    const Status s = swap_to_little_endian(t.dtype, encoded.data(), n);
                    if (!s.ok()) {
                        progress.finish();
                        return fail(kExitInvalid,
                                    describe(model.paths[t.file_index], make_error(s.code, t.info_offset, s.what)) +
                                        ": tensor " + printable(t.name, 200));
                    }
                    from = encoded.data();
                }
                if (!out.write(from, n)) return io_error();
                done += n;
                progress.add(n);
            }
            written = t.nbytes;
        } else if (plan.action == Action::kWiden) {
            const uint32_t in_size = dtype_traits(t.dtype).block_bytes;
            for (uint64_t first = 0; first < t.n_elements; first += kWidenPiece) {
                const uint64_t n = std::min(kWidenPiece, t.n_elements - first);
                widen(t.dtype, data + first * in_size, n, &encoded);
                if (!out.write(encoded.data(), encoded.size())) return io_error();
                written += encoded.size();
                progress.add(n * in_size);
            }
        } else if (dtype_traits(plan.out.dtype).kind == DTypeKind::kQuantized) {
            // Whole rows, so row-wise quantizers and importance weights see what ggml_quantize_chunk sees.
            RowJob job;
            job.in_type = t.dtype;
            job.src = data;
            std::copy(t.ne, t.ne + 4, job.ne);
            job.out_type = plan.out.dtype;
            job.imatrix = plan.imatrix;
            job.validate = false;
            bool write_ok = true;
            const Status s = quantize_rows_streaming(
                job, threads,
                [&](const uint8_t* bytes, size_t n) {
                    written += n;
                    return write_ok = out.write(bytes, n);
                },
                [&](uint64_t n) { progress.add(n); });
            if (!write_ok) return io_error();
            if (!s.ok()) {
                progress.finish();
                return fail(kExitInvalid,
                            describe(model.paths[t.file_index], make_error(s.code, t.info_offset, s.what)) +
                                ": tensor " + printable(t.name, 200));
            }
        } else {
            const DTypeTraits& traits = dtype_traits(t.dtype);
            bool ok = true;
            Status encode_status = ok_status();
            const Status s = for_each_decoded(
                t.dtype, data, t.n_elements, threads,
                [&](const float* x, uint64_t, uint64_t n) {
                    uint64_t size = 0;
                    if (!dtype_bytes_for(plan.out.dtype, n, &size)) {
                        encode_status = make_error(Error::kBadShape, t.info_offset, "tensor.ne");
                        return false;
                    }
                    encoded.resize(static_cast<size_t>(size));
                    encode_status = quantize(plan.out.dtype, x, n, encoded.data());
                    if (!encode_status.ok()) return false;
                    ok = out.write(encoded.data(), encoded.size());
                    written += size;
                    progress.add(n / traits.block_elems * traits.block_bytes);
                    return ok;
                },
                big_endian);
            if (!ok) return io_error();
            const Status bad = !s.ok() ? s : encode_status;
            if (!bad.ok()) {
                progress.finish();
                return fail(kExitInvalid,
                            describe(model.paths[t.file_index], make_error(bad.code, t.info_offset, bad.what)) +
                                ": tensor " + printable(t.name, 200));
            }
        }
        if (written != nbytes[i]) {
            progress.finish();
            return fail(kExitInvalid, "internal error: tensor " + printable(t.name, 200) + " came out at " +
                                          std::to_string(written) + " bytes, the layout has " +
                                          std::to_string(nbytes[i]));
        }
        if (!out.write_zeros(static_cast<size_t>(padding[i]))) return io_error();
    }
    progress.finish();
    if (!out.commit()) return fail(kExitIo, out.error());
    size_t encoded_count = 0;
    for (const Plan& p : plans) encoded_count += p.action != Action::kCopy;
    if (args.has("--json")) {
        print_convert_json(out_path, target, file_size, metadata.size(), model.info.tensors, plans, nbytes, warnings);
        return kExitOk;
    }
    std::printf("%s: %s (%s re-encoded), %s, %s bytes\n", out_path.c_str(), counted(plans.size(), "tensor").c_str(),
                with_commas(encoded_count).c_str(), counted(metadata.size(), "metadata key").c_str(),
                with_commas(file_size).c_str());
    return kExitOk;
}

}  // namespace ws::cli
