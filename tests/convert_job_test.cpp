// SPDX-License-Identifier: MIT
// ConvertJob (include/weightstream/convert_job.h) run step by step in-process, as a driver runs it: the same bytes
// for any number of parts per step (parts run in reverse order, too), the same bytes as `weightstream convert`, and
// for the tiny checkpoints of ../shared/testdata/convert the tensors convert_hf_to_gguf.py wrote, byte for byte.
// Also: copied pieces are zero-copy, a permuted Q/K tensor goes a window of whole heads at a time, and the errors
// name the tensor.
#include "weightstream/convert_job.h"

#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "support/gguf_builder.h"
#include "support/parse_model.h"
#include "support/run_cli.h"
#include "support/test_util.h"
#include "weightstream/header_parser.h"
#include "weightstream/quantize.h"
#include "weightstream/safetensors_writer.h"

using namespace ws_test;

namespace {

struct Run {
    std::vector<uint8_t> bytes;  // the output
    std::vector<ws::JobStep> steps;
    std::vector<bool> zero_copy;  // per step: its output points into its input
};

// Drives `job` over `file` (its only source) as the native driver does, each step in min(parts, max_parts) parts,
// run last part first.
Run run_job(ws::Job& job, const std::vector<uint8_t>& file, uint32_t parts) {
    Run run;
    ws::JobStep step;
    while (job.next(&step)) {
        std::vector<ws::ByteSpan> inputs;
        for (const ws::ByteRange& r : step.inputs) {
            REQUIRE(r.source == 0);
            REQUIRE(r.offset + r.size <= file.size());
            inputs.push_back({file.data() + r.offset, r.size});
        }
        const uint32_t k = std::min(parts, std::max<uint32_t>(1, step.max_parts));
        for (uint32_t i = k; i-- > 0;) job.run(inputs.data(), i, k);
        ws::ByteSpan out;
        const ws::Status s = job.complete(&out);
        INFO("step " << run.steps.size() << ": " << ws::error_name(s.code) << " " << s.what);
        REQUIRE(s.ok());
        run.zero_copy.push_back(!inputs.empty() && out.size > 0 && out.data >= inputs[0].data &&
                                out.data + out.size <= inputs[0].data + inputs[0].size);
        run.bytes.insert(run.bytes.end(), out.data, out.data + out.size);
        run.steps.push_back(step);
    }
    return run;
}

std::unique_ptr<ws::ConvertJob> make_job(const ws::ModelInfo& in, const ws::ConvertOptions& options) {
    ws::ConvertRefusal refusal;
    ws::Result<std::unique_ptr<ws::ConvertJob>> made = ws::ConvertJob::make(in, options, &refusal);
    INFO(ws::error_name(made.status().code) << " " << made.status().what << ": " << refusal.why);
    REQUIRE(made.ok());
    return std::move(made).value();
}

// n floats of a deterministic pattern, with a spread of magnitudes and signs.
std::vector<float> pattern(size_t n, uint32_t seed) {
    std::vector<float> v(n);
    uint32_t x = seed * 2654435761u + 1;
    for (size_t i = 0; i < n; ++i) {
        x = x * 1664525u + 1013904223u;
        v[i] = (static_cast<float>(x >> 8) / 16777216.0f - 0.5f) * (1 + (x & 7));
    }
    return v;
}

std::vector<uint8_t> encoded(ws::DType t, const std::vector<float>& values) {
    uint64_t n = 0;
    REQUIRE(ws::dtype_bytes_for(t, values.size(), &n));
    std::vector<uint8_t> out(static_cast<size_t>(n));
    REQUIRE(ws::quantize(t, values.data(), values.size(), out.data()).ok());
    return out;
}

// A GGUF of llama-like tensors of four types; the first is large enough for several windows (4,718,592 elements).
std::vector<uint8_t> llama_gguf(bool big_endian) {
    GgufSpec spec;
    spec.big_endian = big_endian;
    ws::Value arch;
    arch.type = ws::ValueType::kString;
    arch.str = "llama";
    spec.kvs.push_back({"general.architecture", arch});
    const std::tuple<const char*, ws::DType, std::vector<int64_t>> tensors[] = {
        {"token_embd.weight", ws::DType::F32, {4096, 1152}},
        {"blk.0.attn_norm.weight", ws::DType::F32, {4096}},
        {"blk.0.attn_q.weight", ws::DType::F16, {256, 96}},
        {"blk.0.ffn_down.weight", ws::DType::Q4_0, {256, 64}}};
    uint32_t seed = 1;
    for (const auto& [name, type, ne] : tensors) {
        int64_t n = 1;
        for (int64_t d : ne) n *= d;
        std::vector<uint8_t> data = encoded(type, pattern(size_t(n), seed++));
        const uint32_t id = static_cast<uint32_t>(type);
        if (big_endian) REQUIRE(to_big_endian_data(id, &data));
        spec.tensors.push_back({name, id, ne, std::move(data), kAutoOffset});
    }
    return build_gguf(spec).bytes;
}

// A llama checkpoint (Hugging Face names, F16) whose q_proj, 1024 rows of 4096 (32 heads of 32 rows), is permuted
// over several windows of whole heads; k_proj has 8 heads.
std::vector<uint8_t> llama_checkpoint() {
    const std::pair<const char*, std::vector<int64_t>> tensors[] = {
        {"model.layers.0.self_attn.q_proj.weight", {4096, 1024}},
        {"model.layers.0.self_attn.k_proj.weight", {4096, 256}},
        {"model.layers.0.input_layernorm.weight", {4096}},
        {"model.norm.weight", {4096}},
    };
    std::vector<ws::TensorInfo> infos;
    std::vector<std::vector<uint8_t>> data;
    uint32_t seed = 7;
    for (const auto& [name, ne] : tensors) {
        infos.push_back(tensor(name, ws::DType::F16, ne));
        int64_t n = 1;
        for (int64_t d : ne) n *= d;
        data.push_back(encoded(ws::DType::F16, pattern(size_t(n), seed++)));
    }
    ws::Result<std::vector<uint8_t>> file = ws::safetensors_write({}, infos, data);
    REQUIRE(file.ok());
    return std::move(file).value();
}

const std::string kLlamaConfig =
    R"({"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 4096,
        "num_attention_heads": 32, "num_key_value_heads": 8, "num_hidden_layers": 1, "vocab_size": 32})";

ws::HfConfig config_of(const std::string& text) {
    ws::Result<ws::HfConfig> c = ws::parse_hf_config(reinterpret_cast<const uint8_t*>(text.data()), text.size());
    REQUIRE(c.ok());
    return std::move(c).value();
}

struct Case {
    std::string name;
    std::vector<uint8_t> in;
    std::string in_name, out_name;  // file names, for the CLI (OUT's extension is the target)
    ws::ConvertOptions options;
    std::string args;    // the same options for the CLI
    std::string config;  // config.json beside IN, or ""
};

}  // namespace

TEST_CASE("ConvertJob writes the same bytes for any number of parts per step, and the CLI's") {
    const std::vector<uint8_t> gguf = llama_gguf(false), big = llama_gguf(true), hf = llama_checkpoint();
    const ws::HfConfig config = config_of(kLlamaConfig);
    std::vector<Case> cases;
    auto add = [&](const std::string& name, const std::vector<uint8_t>& in, const std::string& in_name,
                   const std::string& out_name, ws::DType dtype, const std::string& args, bool with_config) {
        Case c;
        c.name = name;
        c.in = in;
        c.in_name = in_name;
        c.out_name = out_name;
        c.options.target = out_name == "out.safetensors" ? ws::Format::kSafetensors : ws::Format::kGguf;
        c.options.dtype = dtype;
        c.options.hf = with_config ? &config : nullptr;
        c.options.allow_requantize = args.find("--allow-requantize") != std::string::npos;
        c.args = args;
        c.config = with_config ? kLlamaConfig : "";
        cases.push_back(std::move(c));
    };
    add("GGUF copy", gguf, "in.gguf", "out.gguf", ws::DType::kUnknown, "", false);
    add("GGUF -> Q8_0", gguf, "in.gguf", "out.gguf", ws::DType::Q8_0, " --dtype q8_0", false);
    add("GGUF -> Q4_K", gguf, "in.gguf", "out.gguf", ws::DType::Q4_K, " --dtype q4_k", false);
    add("GGUF -> Q4_K, requantized", gguf, "in.gguf", "out.gguf", ws::DType::Q4_K, " --dtype q4_k --allow-requantize",
        false);
    add("GGUF -> safetensors BF16", gguf, "in.gguf", "out.safetensors", ws::DType::BF16, " --dtype bf16", false);
    add("big-endian GGUF copy", big, "in.gguf", "out.gguf", ws::DType::kUnknown, "", false);
    add("big-endian GGUF -> safetensors F16", big, "in.gguf", "out.safetensors", ws::DType::F16, " --dtype f16", false);
    add("checkpoint -> GGUF", hf, "model.safetensors", "out.gguf", ws::DType::kUnknown, "", true);
    add("checkpoint -> GGUF F32", hf, "model.safetensors", "out.gguf", ws::DType::F32, " --dtype f32", true);
    add("checkpoint -> GGUF Q8_0", hf, "model.safetensors", "out.gguf", ws::DType::Q8_0, " --dtype q8_0", true);

    for (const Case& c : cases) {
        INFO(c.name);
        const ws::ModelInfo in = ws_test::parse_model_bytes(c.in);
        // The CLI's folder (general.name of a checkpoint comes from its name).
        TempDir dir;
        ws::ConvertOptions options = c.options;
        options.model_name = dir.path.substr(dir.path.rfind('/') + 1);
        std::vector<uint8_t> first;
        for (uint32_t parts : {1u, 3u, 16u}) {
            INFO(parts << " parts");
            std::unique_ptr<ws::ConvertJob> job = make_job(in, options);
            const Run run = run_job(*job, c.in, parts);
            CHECK(run.bytes.size() == job->plan().file_size);
            if (parts == 1) {
                first = run.bytes;
                // A window's input: at most kConvertWindowElements elements (of at most 4 bytes) or one granule.
                for (const ws::JobStep& s : run.steps) {
                    for (const ws::ByteRange& r : s.inputs) CHECK(r.size <= 4 * ws::kConvertWindowElements);
                }
                // Each step that reads names the next one's inputs (the driver reads them while it runs); the
                // last names none.
                std::vector<const ws::JobStep*> reading;
                for (const ws::JobStep& s : run.steps) {
                    if (!s.inputs.empty()) reading.push_back(&s);
                }
                REQUIRE(reading.size() > 1);
                for (size_t i = 0; i < reading.size(); ++i) {
                    const std::vector<ws::ByteRange>& next = reading[i]->next_inputs;
                    const std::vector<ws::ByteRange> none;
                    const std::vector<ws::ByteRange>& want = i + 1 < reading.size() ? reading[i + 1]->inputs : none;
                    REQUIRE(next.size() == want.size());
                    for (size_t j = 0; j < next.size(); ++j) {
                        CHECK(next[j].source == want[j].source);
                        CHECK(next[j].offset == want[j].offset);
                        CHECK(next[j].size == want[j].size);
                    }
                }
            } else {
                CHECK(run.bytes == first);
            }
        }
        // The CLI: the same job, driven natively on its own threads.
        write_file(dir.file(c.in_name), c.in);
        if (!c.config.empty())
            write_file(dir.file("config.json"), std::vector<uint8_t>(c.config.begin(), c.config.end()));
        const CliResult r = run_cli("convert " + quote(dir.file(c.in_name)) + " " + quote(dir.file(c.out_name)) +
                                    c.args + " --threads 3");
        INFO(r.err);
        REQUIRE(r.status == 0);
        CHECK(read_file(dir.file(c.out_name)) == first);
    }
}

TEST_CASE("ConvertJob copies pieces zero-copy and permutes Q/K a window of whole heads at a time") {
    const std::vector<uint8_t> gguf = llama_gguf(false);
    const ws::ModelInfo in = ws_test::parse_model_bytes(gguf);
    std::unique_ptr<ws::ConvertJob> job = make_job(in, ws::ConvertOptions());
    const Run copy = run_job(*job, gguf, 4);
    CHECK(copy.bytes == gguf);  // our builder lays a GGUF out as ggml does
    for (size_t i = 0; i < copy.steps.size(); ++i) {
        if (!copy.steps[i].inputs.empty()) CHECK(copy.zero_copy[i]);
    }

    const std::vector<uint8_t> hf = llama_checkpoint();
    const ws::ModelInfo checkpoint = ws_test::parse_model_bytes(hf);
    const ws::HfConfig config = config_of(kLlamaConfig);
    ws::ConvertOptions options;
    options.hf = &config;
    job = make_job(checkpoint, options);
    REQUIRE(job->plan().hf);
    const Run run = run_job(*job, hf, 1);
    // q_proj: 1024 rows of 4096 F16 elements, 32 rows a head; windows of 1024 rows (4 Mi elements) would be the
    // whole tensor, so check the steps' bounds and cuts by the head's bytes instead.
    const uint64_t head_bytes = 32 * 4096 * 2;
    size_t q_steps = 0;
    for (const ws::JobStep& s : run.steps) {
        if (s.tensor < 0 || checkpoint.tensors[size_t(s.tensor)].name != "model.layers.0.self_attn.q_proj.weight") {
            continue;
        }
        ++q_steps;
        REQUIRE(s.inputs.size() == 1);
        CHECK(s.inputs[0].size % head_bytes == 0);
        CHECK(s.inputs[0].size <= ws::kConvertWindowElements * 2);
        CHECK(s.max_parts > 1);
    }
    CHECK(q_steps == 1);
    // Each head's rows are interleaved: output row 2j + i of a head is input row i * 16 + j.
    const ws::ModelInfo out = ws_test::parse_model_bytes(run.bytes);
    const ws::TensorInfo* q = nullptr;
    for (const ws::TensorInfo& t : out.tensors) {
        if (t.name == "blk.0.attn_q.weight") q = &t;
    }
    REQUIRE(q != nullptr);
    const ws::TensorInfo& stored = checkpoint.tensors[0];
    REQUIRE(stored.name == "model.layers.0.self_attn.q_proj.weight");
    const uint64_t row = 4096 * 2;
    for (uint64_t h = 0; h < 32; ++h) {
        for (uint64_t j = 0; j < 16; ++j) {
            for (uint64_t i = 0; i < 2; ++i) {
                const uint8_t* a = run.bytes.data() + q->offset + (h * 32 + 2 * j + i) * row;
                const uint8_t* b = hf.data() + stored.offset + (h * 32 + i * 16 + j) * row;
                REQUIRE(std::memcmp(a, b, row) == 0);
            }
        }
    }
}

TEST_CASE("ConvertJob writes convert_hf_to_gguf.py's files for the tiny checkpoints, byte for byte") {
    const std::string root = shared_path("convert");
    const std::pair<const char*, ws::DType> outtypes[] = {
        {"f32", ws::DType::F32}, {"f16", ws::DType::F16}, {"bf16", ws::DType::BF16}, {"q8_0", ws::DType::Q8_0}};
    for (const char* name : {"tiny-llama-spm", "tiny-gemma", "tiny-phi3"}) {
        const std::vector<uint8_t> file = read_file(root + "/" + name + "/model.safetensors");
        const ws::ModelInfo in = ws_test::parse_model_bytes(file);
        const std::vector<uint8_t> config_bytes = read_file(root + "/" + name + "/config.json");
        const ws::HfConfig config = config_of(std::string(config_bytes.begin(), config_bytes.end()));
        // The tokenizer files beside it, and the folder's name (general.name): the whole file is the converter's.
        std::vector<std::string> held;
        ws::HfVocabFiles files;
        for (const char* f : {"tokenizer.model", "tokenizer_config.json", "added_tokens.json", "config.json"}) {
            const std::string path = root + "/" + name + "/" + f;
            if (!file_exists(path)) continue;
            const std::vector<uint8_t> bytes = read_file(path);
            held.emplace_back(bytes.begin(), bytes.end());
        }
        size_t k = 0;
        for (const char* f : {"tokenizer.model", "tokenizer_config.json", "added_tokens.json", "config.json"}) {
            if (file_exists(root + "/" + name + "/" + f)) *ws::hf_vocab_file_slot(&files, f) = held[k++];
        }
        for (const auto& [outtype, dtype] : outtypes) {
            INFO(name << " --outtype " << outtype);
            ws::ConvertOptions options;
            options.dtype = dtype;
            options.hf = &config;
            options.vocab_files = &files;
            options.model_name = name;
            std::unique_ptr<ws::ConvertJob> job = make_job(in, options);
            const Run run = run_job(*job, file, 5);
            CHECK(run.bytes == read_file(root + "/ref/" + name + "-" + outtype + ".gguf"));
            const ws::ModelInfo ours = ws_test::parse_model_bytes(run.bytes);
            const std::vector<uint8_t> ref_file = read_file(root + "/ref/" + name + "-" + outtype + ".gguf");
            const ws::ModelInfo ref = ws_test::parse_model_bytes(ref_file);
            std::map<std::string, const ws::TensorInfo*> by_name;
            for (const ws::TensorInfo& t : ours.tensors) by_name[t.name] = &t;
            REQUIRE(ours.tensors.size() == ref.tensors.size());
            for (const ws::TensorInfo& r : ref.tensors) {
                INFO(r.name);
                REQUIRE(by_name.count(r.name) == 1);
                const ws::TensorInfo& t = *by_name[r.name];
                CHECK(t.dtype == r.dtype);
                REQUIRE(t.nbytes == r.nbytes);
                CHECK(std::memcmp(run.bytes.data() + t.offset, ref_file.data() + r.offset, size_t(r.nbytes)) == 0);
            }
        }
    }
}

TEST_CASE("ConvertJob refuses what it cannot write and names the tensor of a failed step") {
    SECTION("a type the target lacks, before any step") {
        std::vector<ws::TensorInfo> infos = {tensor("a", ws::DType::F32, {4}), tensor("ids", ws::DType::U64, {4})};
        ws::Result<std::vector<uint8_t>> file =
            ws::safetensors_write({}, infos, {std::vector<uint8_t>(16), std::vector<uint8_t>(32)});
        REQUIRE(file.ok());
        const ws::ModelInfo in = ws_test::parse_model_bytes(file.value());
        ws::ConvertRefusal refusal;
        ws::Result<std::unique_ptr<ws::ConvertJob>> made = ws::ConvertJob::make(in, ws::ConvertOptions(), &refusal);
        REQUIRE_FALSE(made.ok());
        CHECK(made.status().code == ws::Error::kUnsupported);
        CHECK(std::string(made.status().what) == "tensor.type");
        CHECK(made.status().offset == in.tensors[1].info_offset);
        CHECK(refusal.about == ws::ConvertRefusal::About::kTensor);
        CHECK(refusal.tensor == 1);
        CHECK(refusal.why == "cannot convert tensor ids: type U64 has no GGUF counterpart");
    }
    SECTION("a Q/K tensor whose rows are not whole heads") {
        const std::vector<uint8_t> hf = llama_checkpoint();
        const ws::ModelInfo in = ws_test::parse_model_bytes(hf);
        const ws::HfConfig config =
            config_of(R"({"model_type": "llama", "num_attention_heads": 48, "num_key_value_heads": 8})");
        ws::ConvertOptions options;
        options.hf = &config;
        ws::ConvertRefusal refusal;
        ws::Result<std::unique_ptr<ws::ConvertJob>> made = ws::ConvertJob::make(in, options, &refusal);
        REQUIRE_FALSE(made.ok());
        CHECK(made.status().code == ws::Error::kBadShape);
        CHECK(std::string(made.status().what) == "tensor.ne");
        CHECK(refusal.tensor == 0);
        CHECK(refusal.why ==
              "tensor model.layers.0.self_attn.q_proj.weight: cannot apply permute_q (1024 rows, 48 heads)");
    }
    SECTION("a range the driver cannot read: truncated at the tensor's data offset") {
        const std::vector<uint8_t> gguf = llama_gguf(false);
        const ws::ModelInfo in = ws_test::parse_model_bytes(gguf);
        ws::ConvertOptions options;
        options.dtype = ws::DType::Q8_0;
        std::unique_ptr<ws::ConvertJob> job = make_job(in, options);
        ws::JobStep step;
        REQUIRE(job->next(&step));  // the header
        ws::ByteSpan out;
        REQUIRE(job->complete(&out).ok());
        REQUIRE(job->next(&step));  // token_embd's first window
        REQUIRE(step.tensor == 0);
        const ws::Status s = job->unreadable(step.inputs[0]);
        CHECK(s.code == ws::Error::kTruncated);
        CHECK(s.offset == in.tensors[0].offset);
        CHECK(std::string(s.what) == "tensor.data");
        CHECK_FALSE(job->next(&step));
    }
}

TEST_CASE("ConvertJob writes a big-endian GGUF as its little-endian twin, copied, re-encoded or quantized") {
    const std::vector<uint8_t> le = llama_gguf(false), be = llama_gguf(true);
    const ws::ModelInfo le_info = ws_test::parse_model_bytes(le), be_info = ws_test::parse_model_bytes(be);
    REQUIRE(be_info.big_endian);
    for (ws::DType dtype : {ws::DType::kUnknown, ws::DType::BF16, ws::DType::Q8_0}) {
        for (ws::Format target : {ws::Format::kGguf, ws::Format::kSafetensors}) {
            if (dtype == ws::DType::Q8_0 && target == ws::Format::kSafetensors) continue;
            INFO(ws::dtype_name(dtype) << " " << ws::format_name(target));
            ws::ConvertOptions options;
            options.target = target;
            options.dtype = dtype;
            std::unique_ptr<ws::ConvertJob> a = make_job(le_info, options), b = make_job(be_info, options);
            CHECK(run_job(*b, be, 3).bytes == run_job(*a, le, 1).bytes);
        }
    }
}
