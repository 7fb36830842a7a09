// SPDX-License-Identifier: MIT
// `quantize IN OUT --type FTYPE [--imatrix FILE] [--threads N] [--tensor-type REGEX=TYPE ...] [--pure]
//  [--output-tensor-type TYPE] [--token-embedding-type TYPE] [--leave-output-tensor] [--allow-requantize]`:
// llama-quantize's recipes as the core's QuantizeJob (weightstream/quantize_job.h), run by the job driver
// (io/job_driver.h): the header, then every tensor a row window at a time, so memory stays around one window
// of floats and its output whatever the model size. The output goes to a temporary file renamed over OUT only
// when complete; a failure leaves an existing OUT untouched.
//
// IN may be a Hugging Face checkpoint (its folder, its model.safetensors or its model.safetensors.index.json, with
// config.json beside it): the one pass. The conversion `convert IN tmp.gguf --dtype F` would run (F: --outtype
// auto's choice, hf_auto_dtype()) is planned and the quantization planned from the header of the file it would write
// (converted_model()), so the output is byte for byte `convert` then `quantize`, without the intermediate file: the
// QuantizeJob reads each tensor's rows from the checkpoint through the conversion (QuantizeJob::make_converted()).
#include <algorithm>
#include <cstdio>

#include "cli/hf_config_file.h"
#include "cli/job_output.h"
#include "cli/split_output.h"
#include "io/mapped_file.h"
#include "io/tensor_io.h"
#include "weightstream/convert_job.h"
#include "weightstream/imatrix.h"
#include "weightstream/model_json.h"
#include "weightstream/quant_recipe.h"
#include "weightstream/quantize_job.h"

namespace ws::cli {
namespace {

// Why a plan failed, in words, for the fields plan_quantization() names.
std::string plan_problem(const Status& s) {
    const std::string what = s.what;
    if (what == "imatrix.required") return "this quantization requires an importance matrix (--imatrix)";
    if (what == "imatrix.size") return "the importance matrix entry has another size than the tensor's rows";
    if (what == "tensor.type") return "cannot quantize from this tensor type (quantized: needs --allow-requantize)";
    if (what == "tensor.ne") return "the tensor's rows do not fit the target type's blocks and it has no fallback";
    if (what == "endianness") return "a big-endian GGUF stores its data byte-swapped and cannot be quantized";
    if (what == "dtype") return "this build cannot quantize to the type planned for it";
    if (what == "expert_used_count") return "a model with experts needs <arch>.expert_used_count";
    return error_name(s.code);
}

// What is wrong with an importance matrix file, in words: the codes' own descriptions speak of a model's tensors
// ("an impossible tensor shape"), which is not what a bad entry count or a NaN importance is. Empty for an error
// of the GGUF container itself (described as any GGUF's).
std::string imatrix_problem(const Status& s) {
    const std::string what = s.what;
    const bool past_end = s.code == Error::kTruncated;
    if (what == "imatrix.n_entries") {
        if (s.code == Error::kTooLarge) {
            return "it claims more than " + with_commas(kMaxImatrixEntries) +
                   " entries (llama-imatrix writes one per weight matrix)";
        }
        return past_end ? "it ends before its entry count" : "its entry count is not at least 1";
    }
    if (what == "imatrix.name") {
        return past_end ? "an entry's name runs past the end of the file" : "an entry's name length is negative";
    }
    if (what == "imatrix.ncall") return "an entry's call count runs past the end of the file";
    if (what == "imatrix.nval") {
        return past_end ? "an entry's value count runs past the end of the file"
                        : "an entry has no values (its value count is not at least 1)";
    }
    if (what == "imatrix.values") return "an entry's values run past the end of the file";
    if (what == "imatrix.chunk_count" && s.code == Error::kBadKey) return "imatrix.chunk_count is not a u32";
    if (what == "imatrix.chunk_count" || what == "imatrix.dataset") {
        return past_end ? "the trailer (chunk count, dataset name) after the entries is cut short"
                        : "the trailer's dataset name length is negative";
    }
    if (what == "imatrix.value") {
        return "an importance value is NaN or infinite (llama-quantize refuses the file too)";
    }
    if (what == "imatrix.n_tensors") return "a GGUF without tensors, not an importance matrix";
    if (what == "imatrix.metadata") {
        return "imatrix.datasets, imatrix.chunk_count or imatrix.chunk_size is missing: not an importance matrix "
               "llama-imatrix wrote";
    }
    if (what == "imatrix.datasets") return "imatrix.datasets is not an array of strings";
    if (what == "imatrix.chunk_size") return "imatrix.chunk_size is not a u32";
    if (what == "imatrix.in_sum2") {
        return s.code == Error::kBadType ? "an .in_sum2 tensor is not F32"
                                         : "a .counts tensor without its .in_sum2, or an .in_sum2 that is not a "
                                           "matrix of one row per expert";
    }
    if (what == "imatrix.counts") {
        return s.code == Error::kBadType ? "a .counts tensor is not F32"
                                         : "an .in_sum2 tensor without its .counts, or .counts whose size is not "
                                           "the .in_sum2's row count";
    }
    return "";
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
    if (!parse_args(argv,
                    joined({"--pure", "--leave-output-tensor", "--allow-requantize", "--json", "--strict-tokenizer"},
                           kSplitFlags),
                    joined({"--type", "--imatrix", "--threads", "--tensor-type", "--output-tensor-type",
                            "--token-embedding-type"},
                           kSplitValued),
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
    std::vector<Regex> patterns;  // the linear-time engine: a pattern like (.*)*x costs time linear in a name
    for (const auto& [name, value] : args.options) {
        if (name != "--tensor-type") continue;
        TensorTypeOverride o;
        if (!parse_tensor_type_override(value, &o)) {
            return fail(kExitUsage,
                        "--tensor-type takes NAME=TYPE with a ggml type, not '" + printable(value, 80) + "'");
        }
        Result<Regex> r = Regex::compile(o.pattern);
        if (!r.ok()) return fail(kExitUsage, regex_error("--tensor-type", o.pattern, r.status()));
        patterns.push_back(std::move(r).value());
        options.overrides.push_back(o);
    }
    options.matcher = [&](size_t i, const std::string& name) { return patterns[i].search(name); };
    unsigned threads = 1;
    if (!parse_threads(args, &threads)) return kExitUsage;
    SplitOptions split;  // --split-max-*: the parts of OUT's split instead of OUT
    bool splitting = false;
    if (!parse_split_options(args, &split, &splitting)) return kExitUsage;

    std::string model_path;
    if (!checkpoint_model_path(in_path, &model_path)) {
        return fail(kExitIo, in_path + ": a folder without model.safetensors.index.json or model.safetensors");
    }
    LoadedModel model;
    int status = kExitOk;
    if (!load(model_path, false, &model, &status)) return status;

    // A Hugging Face checkpoint: converted on the way (a safetensors file without config.json is quantized as it
    // is when it carries GGUF names and general.architecture, as `convert x.gguf y.safetensors` writes it).
    HfCheckpointFiles checkpoint;
    std::unique_ptr<ConvertJob> conversion;
    bool one_pass = false;
    if (model.info.format == Format::kSafetensors) {
        checkpoint.read(model_path);
        if (!checkpoint.failed.empty()) return fail(kExitIo, checkpoint.failed);
        ConvertOptions found;
        checkpoint.apply(&found);
        std::string why;
        if (!QuantizeJob::one_pass_source(model.info, found, &one_pass, &why).ok()) return fail(kExitInvalid, why);
    }
    if (one_pass) {
        ConvertOptions convert;
        convert.target = Format::kGguf;
        convert.dtype = hf_auto_dtype(model.info);
        checkpoint.apply(&convert);
        convert.strict_tokenizer = args.has("--strict-tokenizer");
        ConvertRefusal refusal;
        Result<std::unique_ptr<ConvertJob>> made = ConvertJob::make(model.info, convert, &refusal);
        if (!made.ok()) return fail_conversion(model, model_path, made.status(), refusal);
        conversion = std::move(made).value();
        for (const std::string& w : checkpoint.vocab_problems) warn(w);
        for (const std::string& w : conversion->plan().warnings) warn(w);
    }
    // What the quantization reads: the model, or the file the conversion would write.
    ModelInfo converted;
    if (conversion) {
        Result<ModelInfo> view = converted_model(conversion->plan());
        if (!view.ok()) return fail(kExitInvalid, describe(model_path, view.status()) + ": the converted header");
        converted = std::move(view).value();
    }
    const ModelInfo& in = conversion ? converted : model.info;

    Imatrix imatrix;
    if (args.has("--imatrix")) {
        options.imatrix_path = args.get("--imatrix");
        MappedFile file;
        std::string error;
        if (!file.open(options.imatrix_path, &error)) return fail(kExitIo, options.imatrix_path + ": " + error);
        Result<Imatrix> r = parse_imatrix(file.data(), static_cast<size_t>(file.size()));
        if (!r.ok()) {
            const Status& e = r.status();
            const std::string problem = imatrix_problem(e);
            if (problem.empty()) return fail(kExitInvalid, describe(options.imatrix_path, e));
            return fail(kExitInvalid, options.imatrix_path + ": " + error_name(e.code) + ": " + problem + " (byte " +
                                          std::to_string(e.offset) + ")");
        }
        imatrix = std::move(r).value();
        options.imatrix = &imatrix;
        std::fprintf(stderr, "weightstream: %s: %s, %s\n", options.imatrix_path.c_str(),
                     counted(imatrix.entries.size(), "importance matrix entry", "importance matrix entries").c_str(),
                     counted(static_cast<uint64_t>(std::max<int64_t>(0, imatrix.chunk_count)), "chunk").c_str());
    }

    Result<std::unique_ptr<QuantizeJob>> made =
        conversion ? QuantizeJob::make_converted(converted, std::move(conversion), options)
                   : QuantizeJob::make(model.info, options);
    if (!made.ok()) {
        const Status& s = made.status();
        std::string where, name;
        for (const TensorInfo& t : in.tensors) {
            if (t.info_offset == s.offset && s.offset != 0) name = t.name;
        }
        if (!name.empty()) where = ": tensor " + printable(name, 200);
        const ImatrixEntry* entry = options.imatrix ? options.imatrix->find(name) : nullptr;
        if (std::string(s.what) == "imatrix.size" && entry) {
            // The importance matrix does not fit this model: said of the imatrix file, not of the model.
            const TensorInfo* t = in.find_tensor(name);
            return fail(kExitInvalid, options.imatrix_path + ": its entry for " + printable(name, 200) + " has " +
                                          with_commas(entry->values.size()) + " values where the tensor in " + in_path +
                                          " has " + with_commas(static_cast<uint64_t>(t ? t->ne[0] * t->ne[2] : 0)) +
                                          " columns (ne[0] x ne[2]): an importance matrix of another model?");
        }
        // One pass: the offset would be in the file not written; the tensor's name says where.
        if (&in == &converted) {
            return fail(kExitInvalid, in_path + ": " + error_name(s.code) + where + ": " + plan_problem(s));
        }
        return fail(kExitInvalid, describe(in_path, s) + where + ": " + plan_problem(s));
    }
    QuantizeJob& job = *made.value();
    const QuantPlan& plan = job.plan();
    for (const std::string& w : plan.warnings) warn(w);

    const StepProblem problem = [&](const Status& s, int64_t tensor) {
        const std::string what = s.what;
        if (what == "tensor.data") return std::string("NaN or infinite values (llama-quantize refuses them)");
        if (what == "quantized.data") return std::string("a quantized block scale came out NaN or infinite");
        if (s.code == Error::kTruncated) return std::string("the tensor's data lies outside its file (truncated?)");
        DType planned = DType::kUnknown;
        for (const PlannedTensor& p : plan.tensors) {
            if (static_cast<int64_t>(job.source_tensor(p)) == tensor) planned = p.out.dtype;
        }
        return std::string("cannot quantize to ") + dtype_name(planned);
    };
    if (splitting) {  // the parts of OUT's split (cli/split_output.h)
        std::vector<TensorInfo> outs;
        for (const PlannedTensor& p : plan.tensors) outs.push_back(p.out);
        const int written = write_output_split(job, plan.metadata, outs, plan.layout, split, model, out_path, threads,
                                               "quantize", problem, args.has("--json"));
        if (written != kExitOk || !args.has("--json")) return written;
    } else {
        const int written = write_job_output(job, model, out_path, threads, "quantize", plan.tensors.size(), problem);
        if (written != kExitOk) return written;
    }
    const size_t quantized = job.quantized();
    if (args.has("--json")) {
        nlohmann::json tensors = nlohmann::json::array();
        for (const PlannedTensor& p : plan.tensors) {
            tensors.push_back({{"name", p.out.name},
                               {"dtype", p.out.dtype_name()},
                               {"shape", p.out.shape()},
                               {"bytes", p.out.nbytes},
                               {"source_dtype", in.tensors[p.input_index].dtype_name()},
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
