// SPDX-License-Identifier: MIT
// The core's jobs run in-process (tests/support/job_runner.h), with every step in 1 part and in several parts
// run in shuffled orders: QuantizeJob writes llama-quantize's bytes (the reference runs' sha256) either way, and
// CompareJob gives the same report either way; a truncated file ends a quantize job with truncated and makes a
// compared pair incomparable.
#include <catch2/catch.hpp>
#include <cstring>

#include "support/gguf_builder.h"
#include "support/job_runner.h"
#include "support/parse_model.h"
#include "support/recipe_runs.h"
#include "support/test_util.h"
#include "weightstream/compare_job.h"
#include "weightstream/header_parser.h"
#include "weightstream/hf_checkpoint.h"
#include "weightstream/quantize_job.h"

namespace {

using namespace ws;

}  // namespace

TEST_CASE("QuantizeJob writes llama-quantize's bytes in any number of parts") {
    for (const ws_test::RecipeRun& run : ws_test::recipe_runs()) {
        // Two types per model: a k-quant mix and the legacy Q8_0 (every run is replayed by the CLI elsewhere).
        if (!run.imatrix.empty() || !run.tensor_types.empty() || run.pure || run.leave_output ||
            !run.output_tensor_type.empty() || !run.token_embedding_type.empty() ||
            (run.ftype != "Q4_K_M" && run.ftype != "Q8_0") || !run.record["ok"].get<bool>()) {
            continue;
        }
        INFO(run.record["command"].get<std::string>());
        const std::vector<uint8_t> bytes = ws_test::read_file(ws_test::recipes_dir() + "/" + run.model);
        const ModelInfo in = ws_test::parse_model_bytes(bytes);
        RecipeOptions options;
        REQUIRE(ftype_from_name(run.ftype, &options.ftype));
        for (const uint32_t parts : {1u, 3u, 8u}) {
            Result<std::unique_ptr<QuantizeJob>> job = QuantizeJob::make(in, options);
            REQUIRE(job.ok());
            const ws_test::JobRun r = ws_test::run_job(*job.value(), {bytes}, parts, parts);
            REQUIRE(r.status.ok());
            CHECK(r.work == job.value()->total_work());
            CHECK(r.output.size() == run.record["size"].get<uint64_t>());
            CHECK(ws_test::sha256_hex(r.output.data(), r.output.size()) == run.record["sha256"].get<std::string>());
        }
    }
}

TEST_CASE("QuantizeJob refuses a truncated file and a big-endian one") {
    const std::vector<uint8_t> bytes = ws_test::read_file(ws_test::recipes_dir() + "/ref-llama-gqa8-f16.gguf");
    const ModelInfo in = ws_test::parse_model_bytes(bytes);
    RecipeOptions options;
    REQUIRE(ftype_from_name("Q4_K_M", &options.ftype));
    Result<std::unique_ptr<QuantizeJob>> job = QuantizeJob::make(in, options);
    REQUIRE(job.ok());
    const std::vector<uint8_t> cut(bytes.begin(), bytes.end() - 1000);
    const ws_test::JobRun r = ws_test::run_job(*job.value(), {cut}, 2);
    CHECK(r.status.code == Error::kTruncated);
    CHECK(std::string(r.status.what) == "tensor.data");

    ModelInfo big = in;
    big.big_endian = true;
    Result<std::unique_ptr<QuantizeJob>> refused = QuantizeJob::make(big, options);
    REQUIRE_FALSE(refused.ok());
    CHECK(refused.status().code == Error::kUnsupported);
    CHECK(std::string(refused.status().what) == "endianness");
}

TEST_CASE("QuantizeJob names the next step that reads, as it then reads it") {
    // The driver reads a step's next_inputs while the step runs: they must be the inputs of the next step that
    // has any (the header and padding steps read nothing), across copied, quantized (in several windows) and
    // padded tensors.
    ws_test::GgufSpec spec;
    spec.kvs.push_back({"general.architecture", ws_test::val_str("llama")});
    spec.kvs.push_back({"llama.block_count", ws_test::val_u32(1)});
    auto floats = [](size_t n) {
        std::vector<uint8_t> b(n * 4);
        for (size_t i = 0; i < n; ++i) {
            const float v = static_cast<float>(static_cast<int>(i % 97) - 48) / 64.f;
            std::memcpy(b.data() + 4 * i, &v, 4);
        }
        return b;
    };
    const int64_t rows = static_cast<int64_t>(kQuantizeWindowElements / 4096) * 2 + 3;  // three windows
    spec.tensors.push_back({"blk.0.attn_norm.weight", 0, {5}, floats(5)});              // copied, then padded
    spec.tensors.push_back({"blk.0.ffn_up.weight", 0, {4096, rows}, floats(4096 * static_cast<size_t>(rows))});
    spec.tensors.push_back({"blk.0.ffn_norm.weight", 0, {7}, floats(7)});
    spec.tensors.push_back({"blk.0.attn_q.weight", 0, {64, 4}, floats(256)});
    const std::vector<uint8_t> bytes = ws_test::build_gguf(spec).bytes;
    const ModelInfo in = ws_test::parse_model_bytes(bytes);
    RecipeOptions options;
    REQUIRE(ftype_from_name("Q8_0", &options.ftype));
    Result<std::unique_ptr<QuantizeJob>> made = QuantizeJob::make(in, options);
    REQUIRE(made.ok());
    QuantizeJob& job = *made.value();
    JobStep step;
    std::vector<ByteRange> announced;
    size_t reading = 0, without = 0;
    uint64_t written = 0;
    while (job.next(&step)) {
        if (!step.inputs.empty()) {
            if (reading++ > 0) {
                REQUIRE(announced.size() == step.inputs.size());
                CHECK(announced[0].source == step.inputs[0].source);
                CHECK(announced[0].offset == step.inputs[0].offset);
                CHECK(announced[0].size == step.inputs[0].size);
            }
            announced = step.next_inputs;
        } else if (reading > 0) {
            ++without;
            REQUIRE(step.next_inputs.size() == announced.size());  // a padding step: the same guess again
            if (!announced.empty()) CHECK(step.next_inputs[0].offset == announced[0].offset);
        }
        std::vector<ByteSpan> inputs;
        for (const ByteRange& r : step.inputs) inputs.push_back({bytes.data() + r.offset, r.size});
        job.run(inputs.data(), 0, 1);
        ByteSpan out;
        REQUIRE(job.complete(&out).ok());
        written += out.size;
    }
    CHECK(announced.empty());  // the last step that reads knows it is the last
    CHECK(reading == 2 + 3 + 1);
    CHECK(without >= 2);  // the norms' paddings
    // Looking ahead moved nothing: each quantized tensor counted once, every byte handed out.
    CHECK(job.quantized() == 2);
    CHECK(written == job.plan().layout.file_size);
}

TEST_CASE("CompareJob's report does not depend on the parts; a truncated side is incomparable") {
    const std::string dir = ws_test::shared_path("convert/tiny-llama-spm/");
    const std::vector<uint8_t> hf = ws_test::read_file(dir + "model.safetensors");
    const std::vector<uint8_t> config_bytes = ws_test::read_file(dir + "config.json");
    Result<HfConfig> config = parse_hf_config(config_bytes.data(), config_bytes.size());
    REQUIRE(config.ok());
    PairingOptions pairing;
    pairing.config_a = &config.value();
    const ModelInfo a = ws_test::parse_model_bytes(hf);
    for (const char* ref : {"tiny-llama-spm-f32.gguf", "tiny-llama-spm-q8_0.gguf"}) {
        INFO(ref);
        const std::vector<uint8_t> gguf = ws_test::read_file(ws_test::shared_path("convert/ref/") + ref);
        const ModelInfo b = ws_test::parse_model_bytes(gguf);
        nlohmann::json first;
        for (const uint32_t parts : {1u, 4u, 64u}) {
            CompareJob job(a, b, pairing, {"a", a.format}, {"b", b.format});
            const ws_test::JobRun r = ws_test::run_job(job, {hf, gguf}, parts, parts);
            REQUIRE(r.status.ok());
            CHECK(r.output.empty());
            CHECK(r.work == job.total_work());
            const std::vector<size_t> finished = job.take_finished();
            CHECK(finished.size() == job.report().tensors.size());
            const nlohmann::json report = compare_report_to_json(job.report());
            if (parts == 1) {
                first = report;
                const CompareSummary s = summarize(job.report().tensors);
                CHECK(s.incomparable == 0);
                CHECK(s.only_a + s.only_b == 0);
                // The F32 conversion is exact: every pair identical once the Q/K permutation is undone.
                if (std::string(ref).find("f32") != std::string::npos) CHECK(s.different == 0);
                // Q8_0: every quantized tensor is the permuted source quantized by ggml's reference quantizer, which
                // the requantization test (counted in slices a step behind each window) must find in full.
                if (std::string(ref).find("q8_0") != std::string::npos) {
                    CHECK(s.different > 0);
                    for (const CompareRow& row : job.report().tensors) {
                        if (row.verdict == Verdict::kDifferent)
                            CHECK(row.hint.find("quantization alone") != std::string::npos);
                    }
                }
            } else {
                CHECK(report == first);
            }
        }
    }
    // B cut short: the pairs whose data lies past the cut are incomparable, the job goes on.
    const std::vector<uint8_t> gguf = ws_test::read_file(ws_test::shared_path("convert/ref/tiny-llama-spm-f32.gguf"));
    const ModelInfo b = ws_test::parse_model_bytes(gguf);
    const std::vector<uint8_t> cut(gguf.begin(), gguf.begin() + static_cast<std::ptrdiff_t>(gguf.size() / 2));
    CompareJob job(a, b, pairing, {"a", a.format}, {"b", b.format});
    const ws_test::JobRun r = ws_test::run_job(job, {hf, cut}, 2);
    REQUIRE(r.status.ok());
    const CompareSummary s = summarize(job.report().tensors);
    CHECK(s.incomparable > 0);
    CHECK(s.identical > 0);
    bool named = false;
    for (const CompareRow& row : job.report().tensors) {
        if (row.verdict == Verdict::kIncomparable)
            named = row.hint == "B: the tensor's data lies outside its file (truncated?)";
    }
    CHECK(named);
}
