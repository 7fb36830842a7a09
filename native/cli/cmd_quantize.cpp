// SPDX-License-Identifier: MIT
// `quantize IN OUT --type FTYPE [--imatrix FILE] [--threads N] [--tensor-type REGEX=TYPE ...] [--pure]
//  [--output-tensor-type TYPE] [--token-embedding-type TYPE] [--leave-output-tensor] [--allow-requantize]`:
// llama-quantize's recipes (include/weightstream/quant_recipe.h), streamed. The plan gives the header and every
// tensor's place; tensors are then written one after the other, each decoded and quantized a row window at a time, so
// memory stays around one window of floats and its output whatever the model size. The output goes to OUT.tmp and is
// renamed over OUT only when complete; a failure leaves an existing OUT untouched.
#include <algorithm>
#include <cstdio>
#include <regex>

#include "cli/progress.h"
#include "cli/quantize_io.h"
#include "io/mapped_file.h"
#include "io/tensor_io.h"
#include "weightstream/imatrix.h"
#include "weightstream/model_json.h"
#include "weightstream/quant_recipe.h"
#include "weightstream/quantize.h"

namespace ws::cli {
namespace {

constexpr size_t kCopyPiece = size_t(16) << 20;

// Why a plan failed, in words, for the fields plan_quantization() names.
std::string plan_problem(const Status& s) {
    const std::string what = s.what;
    if (what == "imatrix.required") return "this quantization requires an importance matrix (--imatrix)";
    if (what == "imatrix.size") return "the importance matrix entry has another size than the tensor's rows";
    if (what == "tensor.type") return "cannot quantize from this tensor type (quantized: needs --allow-requantize)";
    if (what == "tensor.ne") return "the tensor's rows do not fit the target type's blocks and it has no fallback";
    if (what == "expert_used_count") return "a model with experts needs <arch>.expert_used_count";
    return error_name(s.code);
}

// The tensor data written: every tensor's bytes, without the header and the padding.
uint64_t total_out_bytes(const QuantPlan& plan) {
    uint64_t n = 0;
    for (const PlannedTensor& p : plan.tensors) n += p.out.nbytes;
    return n;
}

}  // namespace

int cmd_quantize(const std::vector<std::string>& argv) {
    Args args;
    if (!parse_args(
            argv, {"--pure", "--leave-output-tensor", "--allow-requantize", "--json"},
            {"--type", "--imatrix", "--threads", "--tensor-type", "--output-tensor-type", "--token-embedding-type"},
            &args)) {
        return kExitUsage;
    }
    if (args.positional.size() != 2 || !args.has("--type")) return usage_error();
    const std::string& in_path = args.positional[0];
    const std::string& out_path = args.positional[1];

    RecipeOptions options;
    if (!ftype_from_name(args.get("--type"), &options.ftype)) {
        return fail(kExitUsage, "--type takes a llama-quantize file type (Q4_K_M, Q8_0, IQ2_XXS, ...), not '" +
                                    printable(args.get("--type"), 40) + "'");
    }
    options.pure = args.has("--pure");
    options.leave_output_tensor = args.has("--leave-output-tensor");
    options.allow_requantize = args.has("--allow-requantize");
    for (const char* opt : {"--output-tensor-type", "--token-embedding-type"}) {
        if (!args.has(opt)) continue;
        DType t;
        if (!ggml_type_from_name(args.get(opt), &t)) {
            return fail(kExitUsage, std::string(opt) + ": unknown ggml type '" + printable(args.get(opt), 40) + "'");
        }
        (std::string(opt) == "--output-tensor-type" ? options.output_tensor_type : options.token_embedding_type) = t;
    }
    std::vector<std::regex> patterns;
    for (const auto& [name, value] : args.options) {
        if (name != "--tensor-type") continue;
        TensorTypeOverride o;
        if (!parse_tensor_type_override(value, &o)) {
            return fail(kExitUsage,
                        "--tensor-type takes NAME=TYPE with a ggml type, not '" + printable(value, 80) + "'");
        }
        try {
            patterns.emplace_back(o.pattern);
        } catch (const std::regex_error& e) {
            return fail(kExitUsage, "--tensor-type: bad regular expression '" + printable(o.pattern, 80) + "'");
        }
        options.overrides.push_back(o);
    }
    bool regex_failed = false;
    options.matcher = [&](size_t i, const std::string& name) {
        try {
            return std::regex_search(name, patterns[i]);
        } catch (const std::regex_error&) {  // too complex for the engine: treat as no match, report below
            regex_failed = true;
            return false;
        }
    };
    unsigned threads = 1;
    if (!parse_threads(args, &threads)) return kExitUsage;

    LoadedModel model;
    int status = kExitOk;
    if (!load(in_path, false, &model, &status)) return status;
    if (model.info.big_endian) {
        return fail(kExitInvalid, describe(in_path, make_error(Error::kUnsupported, 0, "endianness")) +
                                      ": a big-endian GGUF stores its data byte-swapped and cannot be quantized");
    }

    Imatrix imatrix;
    if (args.has("--imatrix")) {
        options.imatrix_path = args.get("--imatrix");
        MappedFile file;
        std::string error;
        if (!file.open(options.imatrix_path, &error)) return fail(kExitIo, options.imatrix_path + ": " + error);
        Result<Imatrix> r = parse_imatrix(file.data(), static_cast<size_t>(file.size()));
        if (!r.ok()) return fail(kExitInvalid, describe(options.imatrix_path, r.status()));
        imatrix = std::move(r).value();
        options.imatrix = &imatrix;
        std::fprintf(stderr, "weightstream: %s: %s, %s\n", options.imatrix_path.c_str(),
                     counted(imatrix.entries.size(), "importance matrix entry", "importance matrix entries").c_str(),
                     counted(static_cast<uint64_t>(std::max<int64_t>(0, imatrix.chunk_count)), "chunk").c_str());
    }

    Result<QuantPlan> planned = plan_quantization(model.info, options);
    if (regex_failed) return fail(kExitUsage, "--tensor-type: a regular expression is too complex to match");
    if (!planned.ok()) {
        const Status& s = planned.status();
        std::string where;
        for (const TensorInfo& t : model.info.tensors) {
            if (t.info_offset == s.offset && s.offset != 0) where = ": tensor " + printable(t.name, 200);
        }
        return fail(kExitInvalid, describe(in_path, s) + where + ": " + plan_problem(s));
    }
    const QuantPlan& plan = planned.value();
    for (const std::string& w : plan.warnings) warn(w);
    for (const PlannedTensor& p : plan.tensors) {
        if (p.quantize && !quantize_supported(p.out.dtype)) {
            return fail(kExitInvalid, "tensor " + printable(p.out.name, 200) + ": quantizing to " +
                                          dtype_name(p.out.dtype) + " is not supported by this build");
        }
    }

    uint64_t total = 0;
    for (const PlannedTensor& p : plan.tensors) total += model.info.tensors[p.input_index].nbytes;
    OutputFile out;
    if (!out.open(out_path, input_files(model)) || !out.write(plan.layout.header.data(), plan.layout.header.size())) {
        return fail(kExitIo, out.error());
    }
    Progress progress("quantize", total);
    auto io_error = [&] {
        progress.finish();
        return fail(kExitIo, out.error());
    };
    size_t quantized = 0;
    for (size_t i = 0; i < plan.tensors.size(); ++i) {
        const PlannedTensor& p = plan.tensors[i];
        const TensorInfo& t = model.info.tensors[p.input_index];
        progress.set_label("quantize [" + std::to_string(i + 1) + "/" + std::to_string(plan.tensors.size()) + "]");
        TensorBytes held;
        const uint8_t* data = tensor_bytes_or_fail(model, t, &held, &status);
        if (!data) {
            progress.finish();
            return status;
        }
        const bool mapped = model.files[t.file_index].mapped();
        auto bad_tensor = [&](const Status& s, const std::string& why) {
            progress.finish();
            return fail(kExitInvalid, describe(model.paths[t.file_index], make_error(s.code, t.offset, s.what)) +
                                          ": tensor " + printable(t.name, 200) + ": " + why);
        };
        uint64_t written = 0;
        if (!p.quantize) {
            // Copied as stored; llama-quantize's loader still checks the values.
            if (!validate_row_data(t.dtype, data, t.nbytes)) {
                return bad_tensor(make_error(Error::kBadShape, 0, "tensor.data"), "NaN or infinite values");
            }
            for (uint64_t done = 0; done < t.nbytes;) {
                const size_t n = static_cast<size_t>(std::min<uint64_t>(kCopyPiece, t.nbytes - done));
                if (!out.write(data + done, n)) return io_error();
                done += n;
                progress.add(n);
            }
            written = t.nbytes;
        } else {
            RowJob job;
            job.in_type = t.dtype;
            job.src = data;
            std::copy(t.ne, t.ne + 4, job.ne);
            job.out_type = p.out.dtype;
            job.imatrix = p.imatrix ? p.imatrix->values.data() : nullptr;
            job.drop_pages = mapped;
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
                const std::string what = s.what;
                return bad_tensor(s, what == "tensor.data" ? "NaN or infinite values (llama-quantize refuses them)"
                                     : what == "quantized.data"
                                         ? "a quantized block scale came out NaN or infinite"
                                         : std::string("cannot quantize to ") + dtype_name(p.out.dtype));
            }
            ++quantized;
        }
        if (written != p.out.nbytes) {
            progress.finish();
            return fail(kExitInvalid, "internal error: tensor " + printable(t.name, 200) + " came out at " +
                                          std::to_string(written) + " bytes, the layout has " +
                                          std::to_string(p.out.nbytes));
        }
        if (!out.write_zeros(static_cast<size_t>(plan.layout.tensor_padding[i]))) return io_error();
    }
    progress.finish();
    if (!out.commit()) return fail(kExitIo, out.error());
    if (args.has("--json")) {
        nlohmann::json tensors = nlohmann::json::array();
        for (const PlannedTensor& p : plan.tensors) {
            tensors.push_back({{"name", p.out.name},
                               {"dtype", p.out.dtype_name()},
                               {"shape", p.out.shape()},
                               {"bytes", p.out.nbytes},
                               {"source_dtype", model.info.tensors[p.input_index].dtype_name()},
                               {"quantized", p.quantize}});
        }
        const nlohmann::json j = {{"output", out_path},
                                  {"ftype", ftype_name(options.ftype)},
                                  {"file_size", plan.layout.file_size},
                                  {"tensors", std::move(tensors)},
                                  {"totals",
                                   {{"tensors", plan.tensors.size()},
                                    {"quantized", quantized},
                                    {"fallbacks", plan.n_fallback},
                                    {"bytes", total_out_bytes(plan)}}},
                                  {"warnings", plan.warnings}};
        std::printf("%s\n", json_dump(j).c_str());
        return kExitOk;
    }
    std::printf("%s: %s, %s (%s quantized, %s), %s bytes\n", out_path.c_str(), ftype_name(options.ftype),
                counted(plan.tensors.size(), "tensor").c_str(), with_commas(quantized).c_str(),
                counted(static_cast<uint64_t>(plan.n_fallback), "fallback").c_str(),
                with_commas(plan.layout.file_size).c_str());
    return kExitOk;
}

}  // namespace ws::cli
