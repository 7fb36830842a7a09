// SPDX-License-Identifier: MIT
// `convert IN OUT [--dtype TYPE] [--imatrix FILE] [--threads N]`: GGUF <-> safetensors (OUT's extension
// picks the format; same-format conversions work too). TYPE is f32, f16, bf16 or any ggml type this build
// quantizes to (q8_0, q4_k, iq2_xxs, ...; GGUF only).
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
// Metadata: GGUF -> safetensors writes every key as a string (arrays as JSON text); safetensors -> GGUF
// writes string keys, with general.alignment read back as the u32 ggml requires. split.* keys are dropped
// (the output is one file).
//
// The output is streamed: header first, then one tensor at a time decoded in pieces, so memory stays
// around one piece; it is written through OutputFile (a temporary file renamed over OUT when complete).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "dequant.h"
#include "gguf_writer.h"
#include "header_parser.h"
#include "imatrix.h"
#include "mapped_file.h"
#include "model_json.h"
#include "progress.h"
#include "quant_recipe.h"
#include "quantize.h"
#include "quantize_io.h"
#include "safetensors_writer.h"
#include "tensor_io.h"
#include "utf8.h"

namespace ws::cli {
namespace {

constexpr size_t kCopyPiece = size_t(16) << 20;      // bytes per write when copying
constexpr uint64_t kWidenPiece = uint64_t(1) << 20;  // elements per piece when widening integers

enum class Action { kCopy, kEncode, kWiden };

struct Plan {
    TensorInfo out;  // name, dtype and shape to write
    Action action = Action::kCopy;
    const float* imatrix = nullptr;  // importance for a quantized target (ne[0] * ne[2] values), or nullptr
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
bool plan_tensor(const TensorInfo& t, Format target, DType requested, Plan* plan, std::string* why) {
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
    const bool requested_fits = requested != DType::kUnknown && t.ne[0] % dtype_traits(requested).block_elems == 0;
    if (encodable && requested_fits && requested != t.dtype) return encode_as(requested);
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
    if (!parse_args(argv, {"--json"}, {"--dtype", "--imatrix", "--threads"}, &args)) return kExitUsage;
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

    std::vector<Plan> plans(model.info.tensors.size());
    std::vector<TensorInfo> out_tensors;
    uint64_t total = 0;
    for (size_t i = 0; i < plans.size(); ++i) {
        const TensorInfo& t = model.info.tensors[i];
        std::string why;
        if (big_endian && !big_endian_order_defined(t.dtype)) {
            why = "type " + t.dtype_name() + " has no defined big-endian layout (gguf-py cannot swap it either)";
        }
        if (!why.empty() || !plan_tensor(t, target, requested, &plans[i], &why)) {
            return fail(kExitInvalid, describe(model.paths[t.file_index],
                                               make_error(Error::kUnsupported, t.info_offset, "tensor.type")) +
                                          ": cannot convert tensor " + printable(t.name, 200) + ": " + why);
        }
        if (target == Format::kGguf && t.name.size() > kGgufMaxTensorName) {
            return fail(kExitInvalid, describe(model.paths[t.file_index],
                                               make_error(Error::kTooLarge, t.info_offset, "tensor.name")) +
                                          ": tensor name " + printable(t.name, 200) + " is longer than GGUF's " +
                                          std::to_string(kGgufMaxTensorName) + " bytes");
        }
        if (plans[i].action == Action::kEncode && dtype_traits(plans[i].out.dtype).kind == DTypeKind::kQuantized) {
            const ImatrixEntry* e = imatrix.find(t.name);
            if (e && e->values.size() == static_cast<uint64_t>(t.ne[0]) * static_cast<uint64_t>(t.ne[2])) {
                plans[i].imatrix = e->values.data();
            } else if (quantize_requires_imatrix(plans[i].out.dtype)) {
                return fail(
                    kExitInvalid,
                    describe(model.paths[t.file_index], make_error(Error::kUnsupported, t.info_offset, "imatrix")) +
                        ": tensor " + printable(t.name, 200) + ": " + dtype_name(plans[i].out.dtype) +
                        " needs an importance matrix entry of ne[0] * ne[2] values (--imatrix)");
            }
        }
        out_tensors.push_back(plans[i].out);
        total += t.nbytes;
    }
    std::vector<std::string> warnings;
    const std::vector<MetadataEntry> metadata = plan_metadata(model.info, target, &warnings);
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
    std::vector<uint8_t> encoded;
    for (size_t i = 0; i < plans.size(); ++i) {
        const TensorInfo& t = model.info.tensors[i];
        const Plan& plan = plans[i];
        const uint8_t* data = tensor_bytes_or_fail(model, t, &status);
        if (!data) {
            progress.finish();
            return status;
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
