// SPDX-License-Identifier: MIT
// `verify`: every structural check in strict mode (what ggml itself accepts), then every tensor's type and
// byte range, then every tensor decoded. Block scales that are NaN or Inf (f16 fields with an all-ones
// exponent) are reported as warnings: the file is valid, but the values they scale are NaN/Inf.
#include <cstddef>
#include <cstdio>

#include "cli/progress.h"
#include "cli/verify.h"
#include "io/tensor_io.h"
#include "weightstream/dequant.h"
#include "weightstream/model_json.h"
#include "weightstream/quant_blocks.h"

namespace ws::cli {
namespace {

// Where the f16 scales (and mins) sit in each block. MXFP4's E8M0 and NVFP4's UE4M3 scales have no NaN or
// Inf code in ggml's decode; IQ1_M's f16 scale is assembled from nibbles (see iq1_m_scale).
struct ScaleFields {
    DType type;
    uint32_t count;
    uint32_t offsets[2];
};

constexpr ScaleFields kScaleFields[] = {
    {DType::Q4_0, 1, {offsetof(block_q4_0, d)}},
    {DType::Q4_1, 2, {offsetof(block_q4_1, d), offsetof(block_q4_1, m)}},
    {DType::Q5_0, 1, {offsetof(block_q5_0, d)}},
    {DType::Q5_1, 2, {offsetof(block_q5_1, d), offsetof(block_q5_1, m)}},
    {DType::Q8_0, 1, {offsetof(block_q8_0, d)}},
    {DType::Q8_1, 1, {offsetof(block_q8_1, d)}},
    {DType::Q1_0, 1, {offsetof(block_q1_0, d)}},
    {DType::Q2_0, 1, {offsetof(block_q2_0, d)}},
    {DType::TQ1_0, 1, {offsetof(block_tq1_0, d)}},
    {DType::TQ2_0, 1, {offsetof(block_tq2_0, d)}},
    {DType::Q2_K, 2, {offsetof(block_q2_K, d), offsetof(block_q2_K, dmin)}},
    {DType::Q3_K, 1, {offsetof(block_q3_K, d)}},
    {DType::Q4_K, 2, {offsetof(block_q4_K, d), offsetof(block_q4_K, dmin)}},
    {DType::Q5_K, 2, {offsetof(block_q5_K, d), offsetof(block_q5_K, dmin)}},
    {DType::Q6_K, 1, {offsetof(block_q6_K, d)}},
    {DType::IQ2_XXS, 1, {offsetof(block_iq2_xxs, d)}},
    {DType::IQ2_XS, 1, {offsetof(block_iq2_xs, d)}},
    {DType::IQ2_S, 1, {offsetof(block_iq2_s, d)}},
    {DType::IQ3_XXS, 1, {offsetof(block_iq3_xxs, d)}},
    {DType::IQ3_S, 1, {offsetof(block_iq3_s, d)}},
    {DType::IQ1_S, 1, {offsetof(block_iq1_s, d)}},
    {DType::IQ4_NL, 1, {offsetof(block_iq4_nl, d)}},
    {DType::IQ4_XS, 1, {offsetof(block_iq4_xs, d)}},
};

uint16_t load_u16(const uint8_t* p) {
    return static_cast<uint16_t>(p[0] | p[1] << 8);
}

// IQ1_M: the f16 super-block scale is the top nibbles of the four u16 scale words (ggml's iq1m_scale_t).
uint16_t iq1_m_scale(const uint8_t* block) {
    const uint8_t* sc = block + offsetof(block_iq1_m, scales);
    return static_cast<uint16_t>((load_u16(sc) >> 12) | ((load_u16(sc + 2) >> 8) & 0x00f0) |
                                 ((load_u16(sc + 4) >> 4) & 0x0f00) | (load_u16(sc + 6) & 0xf000));
}

struct ScaleFindings {
    uint64_t blocks = 0;
    uint64_t nan_blocks = 0;
    uint64_t inf_blocks = 0;
    uint64_t first_offset = 0;  // absolute offset of the first such block
};

// Counts blocks with a NaN or Inf scale. data holds the tensor's nbytes, whole blocks; big_endian: the f16
// fields are stored byte-swapped (every type with scales here that a big-endian file can hold swaps them).
ScaleFindings check_scales(const TensorInfo& t, const uint8_t* data, bool big_endian) {
    ScaleFindings f;
    const ScaleFields* fields = nullptr;
    for (const ScaleFields& s : kScaleFields) {
        if (s.type == t.dtype) fields = &s;
    }
    if (!fields && t.dtype != DType::IQ1_M) return f;
    const uint32_t block_bytes = dtype_traits(t.dtype).block_bytes;
    f.blocks = t.nbytes / block_bytes;
    for (uint64_t b = 0; b < f.blocks; ++b) {
        const uint8_t* block = data + b * block_bytes;
        bool nan = false, inf = false;
        const uint32_t n = fields ? fields->count : 1;
        for (uint32_t i = 0; i < n; ++i) {
            uint16_t h = fields ? load_u16(block + fields->offsets[i]) : iq1_m_scale(block);
            if (big_endian) h = static_cast<uint16_t>(h >> 8 | h << 8);
            if ((h & 0x7c00) != 0x7c00) continue;
            ((h & 0x03ff) ? nan : inf) = true;
        }
        if ((nan || inf) && f.nan_blocks + f.inf_blocks == 0) f.first_offset = t.offset + b * block_bytes;
        f.nan_blocks += nan;
        f.inf_blocks += inf && !nan;
    }
    return f;
}

// Sets the verdict of a failed check (file, s and message may point into *v).
void set_failure(Verdict* v, int status, const std::string& file, const Status& s, const std::string& message) {
    v->status = status;
    v->code = s.code;
    v->message = printable(message, SIZE_MAX);
    v->offset = s.offset;
    v->what = s.what;
    v->file = file;
}

}  // namespace

Verdict verify_model(const std::string& source, const VerifyOptions& options, LoadedModel* model) {
    Verdict v;
    ParseOptions parse;
    parse.strict = true;
    if (!load_model(source, parse, model, &v.load_error)) {
        const LoadError& e = v.load_error;
        set_failure(&v, e.source_failed() ? kExitIo : kExitInvalid, e.file, e.status, load_error_text(e));
        return v;
    }
    v.loaded = true;

    // A quantized type without a decoder, or without a defined big-endian layout in a big-endian file, is
    // valid (ggml accepts it) but not decoded: a warning. Removed and unknown ids have no layout: an error.
    uint64_t total = 0;
    for (const TensorInfo& t : model->info.tensors) {
        const std::string& file = model->paths[t.file_index];
        const DTypeKind kind = dtype_traits(t.dtype).kind;
        if (kind == DTypeKind::kUnknown || kind == DTypeKind::kRemoved) {
            const Status s = make_error(Error::kBadType, t.info_offset, "tensor.type");
            set_failure(&v, kExitInvalid, file, s,
                        describe(file, s) + ": tensor " + t.name + " has type " + t.dtype_name());
            return v;
        }
        if (!model->tensor_in_file(t)) {
            const Status s = make_error(Error::kTruncated, t.offset, "tensor.data");
            set_failure(&v, kExitInvalid, file, s, describe(file, s) + ": tensor " + t.name);
            return v;
        }
        const std::string problem = decode_problem(model->info, t);
        if (!problem.empty()) {
            v.warnings.push_back(
                printable(file + ": tensor " + printable(t.name, 200) + ": not decoded: " + problem, SIZE_MAX));
            continue;
        }
        total += t.nbytes;
    }
    if (!options.decode) return v;

    Progress progress("verify", total, options.progress);
    for (const TensorInfo& t : model->info.tensors) {
        if (!decode_problem(model->info, t).empty()) continue;
        TensorBytes held;
        LoadError read_error;
        if (!model->read_tensor(t, t.offset, t.nbytes, &held, &read_error)) {
            progress.finish();
            if (read_error.source_failed()) {
                set_failure(&v, kExitIo, read_error.file, read_error.status, load_error_text(read_error));
            } else {
                const Status s = make_error(Error::kTruncated, t.offset, "tensor.data");
                const std::string& file = model->paths[t.file_index];
                set_failure(&v, kExitInvalid, file, s, describe(file, s) + ": tensor " + t.name);
            }
            return v;
        }
        const uint8_t* data = held.data;
        const DTypeTraits& traits = dtype_traits(t.dtype);
        const uint32_t per_element = dequant_floats_per_element(t.dtype);
        bool all_zero = true;
        const Status s = for_each_decoded(
            t.dtype, data, t.n_elements, options.threads,
            [&](const float* floats, uint64_t, uint64_t n) {
                progress.add(n / traits.block_elems * traits.block_bytes);
                for (uint64_t i = 0; options.find_zeros && all_zero && i < n * per_element; ++i) {
                    all_zero = floats[i] == 0.0f;
                }
                return true;
            },
            model->info.big_endian);
        if (!s.ok()) {
            progress.finish();
            const std::string& file = model->paths[t.file_index];
            const Status at = make_error(s.code, t.info_offset, s.what);
            set_failure(&v, kExitInvalid, file, at, describe(file, at) + ": tensor " + t.name + " does not decode");
            return v;
        }
        ++v.decoded;
        if (options.find_zeros && all_zero && t.n_elements > 0) v.zeros.push_back(t.name);
        const ScaleFindings f = check_scales(t, data, model->info.big_endian);
        if (f.nan_blocks + f.inf_blocks > 0) {
            v.scales.push_back(ScaleFinding{t.name, f.blocks, f.nan_blocks, f.inf_blocks, f.first_offset});
            std::string w = model->paths[t.file_index] + ": tensor " + printable(t.name, 200) + ": ";
            if (f.nan_blocks)
                w += with_commas(f.nan_blocks) + " of " + counted(f.blocks, "block") +
                     (f.nan_blocks == 1 ? " has" : " have") + " a NaN scale";
            if (f.nan_blocks && f.inf_blocks) w += ", ";
            if (f.inf_blocks)
                w += with_commas(f.inf_blocks) + " of " + counted(f.blocks, "block") +
                     (f.inf_blocks == 1 ? " has" : " have") + " an Inf scale";
            v.warnings.push_back(printable(w + " (first at byte " + std::to_string(f.first_offset) + ")", SIZE_MAX));
        }
    }
    progress.finish();
    return v;
}

std::string verdict_name(const Verdict& v) {
    return v.ok() ? "ok" : error_name(v.code);
}

nlohmann::json verdict_error_json(const Verdict& v) {
    if (v.ok()) return nullptr;
    const bool source = is_source_error(v.code);
    nlohmann::json error = {{"file", v.file}, {"message", v.message}};
    error["offset"] = source ? nlohmann::json(nullptr) : nlohmann::json(v.offset);
    error["what"] = source ? nlohmann::json(nullptr) : nlohmann::json(v.what);
    return error;
}

int cmd_verify(const std::vector<std::string>& argv) {
    Args args;
    if (!parse_args(argv, {"--json"}, {"--threads"}, &args)) return kExitUsage;
    if (args.positional.size() != 1) return usage_error();
    VerifyOptions options;
    if (!parse_threads(args, &options.threads)) return kExitUsage;
    const std::string& path = args.positional[0];
    LoadedModel model;
    const Verdict v = verify_model(path, options, &model);
    if (args.has("--json")) {
        // The verdict as scan reports it, plus the counts of the text line; the error line still goes to stderr.
        nlohmann::json j = {
            {"source", path}, {"verdict", verdict_name(v)}, {"error", verdict_error_json(v)}, {"warnings", v.warnings}};
        j["tensors"] = v.loaded ? nlohmann::json(model.info.tensors.size()) : nlohmann::json(nullptr);
        j["decoded"] = v.decoded;
        j["metadata_keys"] = v.loaded ? nlohmann::json(model.info.metadata.size()) : nlohmann::json(nullptr);
        nlohmann::json scales = nlohmann::json::array();
        for (const ScaleFinding& f : v.scales) {
            scales.push_back({{"tensor", f.tensor},
                              {"blocks", f.blocks},
                              {"nan_blocks", f.nan_blocks},
                              {"inf_blocks", f.inf_blocks},
                              {"first_offset", f.first_offset}});
        }
        j["scales"] = std::move(scales);
        std::printf("%s\n", json_dump(j).c_str());
    }
    if (!v.ok()) return fail(v.status, v.message);
    for (const std::string& w : v.warnings) warn(w);
    if (args.has("--json")) return kExitOk;
    const std::string tensors =
        v.decoded == model.info.tensors.size() ? std::string(" decoded") : ", " + with_commas(v.decoded) + " decoded";
    std::printf("%s: ok: %s%s, %s%s\n", path.c_str(), counted(model.info.tensors.size(), "tensor").c_str(),
                tensors.c_str(), counted(model.info.metadata.size(), "metadata key").c_str(),
                v.warnings.empty() ? "" : (", " + counted(v.warnings.size(), "warning")).c_str());
    return kExitOk;
}

}  // namespace ws::cli
