// SPDX-License-Identifier: MIT
// `convert IN OUT [--dtype TYPE] [--allow-requantize] [--imatrix FILE] [--threads N] [--strict-tokenizer]`: GGUF <->
// safetensors (OUT's extension picks the format; same-format conversions work too), and a Hugging Face checkpoint with
// its config.json -> GGUF as convert_hf_to_gguf.py writes it. TYPE is f32, f16, bf16 or any ggml type this build
// quantizes to (q8_0, q4_k, iq2_xxs, ...; GGUF only). What each tensor becomes is the core's plan
// (weightstream/convert_plan.h); the conversion is the core's ConvertJob (weightstream/convert_job.h), run by the
// job driver (io/job_driver.h): the header, then every tensor copied in pieces or a window of rows at a time, so
// memory stays around one window whatever the model size. This file reads the files (config.json beside IN, the
// imatrix, the model, and for a Hugging Face checkpoint the tokenizer files and chat template beside it), warns
// what the plan warns (a tokenizer it does not convert, one that tokenizes differently from the source's --
// --strict-tokenizer refuses that --, no usable config.json), and writes through OutputFile (a temporary file
// renamed over OUT when complete).
#include <algorithm>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "cli/hf_config_file.h"
#include "cli/job_output.h"
#include "cli/split_output.h"
#include "io/mapped_file.h"
#include "io/tensor_io.h"
#include "weightstream/convert_job.h"
#include "weightstream/imatrix.h"
#include "weightstream/model_json.h"
#include "weightstream/quant_recipe.h"
#include "weightstream/quantize.h"

namespace ws::cli {
namespace {

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

// convert --json (its fields: usage.cpp): what was written, tensor by tensor, as the layout placed it.
void print_convert_json(const std::string& out_path, const ModelInfo& in, const ConvertPlan& plan,
                        const std::vector<std::string>& warnings) {
    nlohmann::json tensors = nlohmann::json::array();
    uint64_t bytes = 0;
    size_t re_encoded = 0;
    for (const ConvertTensor& p : plan.tensors) {
        tensors.push_back({{"name", p.out.name},
                           {"dtype", p.out.dtype_name()},
                           {"shape", p.out.shape()},
                           {"bytes", p.out.nbytes},
                           {"source_dtype", in.tensors[p.input].dtype_name()},
                           {"action", convert_action_name(p.action)}});
        bytes += p.out.nbytes;
        re_encoded += p.action != ConvertAction::kCopy;
    }
    const nlohmann::json j = {
        {"output", out_path},
        {"format", format_name(plan.target)},
        {"file_size", plan.file_size},
        {"metadata_keys", plan.metadata.size()},
        {"tensors", std::move(tensors)},
        {"totals", {{"tensors", plan.tensors.size()}, {"re_encoded", re_encoded}, {"bytes", bytes}}},
        {"warnings", warnings}};
    std::printf("%s\n", json_dump(j).c_str());
}

}  // namespace

int cmd_convert(const std::vector<std::string>& argv) {
    Args args;
    if (!parse_args(argv, joined({"--allow-requantize", "--json", "--strict-tokenizer"}, kSplitFlags),
                    joined({"--dtype", "--imatrix", "--threads"}, kSplitValued), &args)) {
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
    SplitOptions split;  // --split-max-*: the parts of OUT's split instead of OUT (cli/split_output.h)
    bool splitting = false;
    if (!parse_split_options(args, &split, &splitting)) return kExitUsage;
    if (splitting && target != Format::kGguf) return fail(kExitUsage, "--split-max-*: only a GGUF output is split");

    LoadedModel model;
    int status = kExitOk;
    if (!load(in_path, false, &model, &status)) return status;

    // A Hugging Face checkpoint: config.json beside it (the plan names, transforms and warns by it).
    // And the tokenizer files beside it (the plan converts them as the converter does).
    HfCheckpointFiles checkpoint;
    if (model.info.format == Format::kSafetensors && target == Format::kGguf) checkpoint.read(in_path);
    if (!checkpoint.failed.empty()) return fail(kExitIo, checkpoint.failed);

    ConvertOptions options;
    options.target = target;
    options.dtype = requested;
    options.allow_requantize = args.has("--allow-requantize");
    options.imatrix = &imatrix;
    checkpoint.apply(&options);
    options.strict_tokenizer = args.has("--strict-tokenizer");
    ConvertRefusal refusal;
    Result<std::unique_ptr<ConvertJob>> made = ConvertJob::make(model.info, options, &refusal);
    if (!made.ok()) return fail_conversion(model, in_path, made.status(), refusal);
    ConvertJob& job = *made.value();
    const ConvertPlan& plan = job.plan();
    std::vector<std::string> warnings = checkpoint.vocab_problems;
    warnings.insert(warnings.end(), plan.warnings.begin(), plan.warnings.end());
    for (const std::string& w : warnings) warn(w);

    int written = kExitOk;
    if (splitting) {
        GgufLayout layout;  // the single file's, whose bytes go to the parts
        layout.data_offset = plan.header.size();
        layout.file_size = plan.file_size;
        std::vector<TensorInfo> outs;
        for (const ConvertTensor& p : plan.tensors) {
            outs.push_back(p.out);
            layout.tensor_offsets.push_back(p.out.offset);
            layout.tensor_nbytes.push_back(p.out.nbytes);
            layout.tensor_padding.push_back(p.padding);
        }
        written = write_output_split(job, plan.metadata, outs, layout, split, model, out_path, threads, "convert",
                                     nullptr, args.has("--json"));
        if (written != kExitOk || !args.has("--json")) return written;
    } else {
        written = write_job_output(job, model, out_path, threads, "convert", plan.tensors.size(), nullptr);
    }
    if (written != kExitOk) return written;
    if (args.has("--json")) {
        print_convert_json(out_path, model.info, plan, warnings);
        return kExitOk;
    }
    size_t encoded_count = 0;
    for (const ConvertTensor& p : plan.tensors) encoded_count += p.action != ConvertAction::kCopy;
    std::printf("%s: %s (%s re-encoded), %s, %s bytes\n", out_path.c_str(),
                counted(plan.tensors.size(), "tensor").c_str(), with_commas(encoded_count).c_str(),
                counted(plan.metadata.size(), "metadata key").c_str(), with_commas(plan.file_size).c_str());
    return kExitOk;
}

}  // namespace ws::cli
