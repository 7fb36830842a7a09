// SPDX-License-Identifier: MIT
// VerifyJob and HashJob run in-process (tests/support/job_runner.h) in 1 to 64 parts per step, run in shuffled
// orders: the same findings and digests whatever the parts; digests equal to the same digest over the whole
// tensor (its stored bytes, its decode) and over the whole model; a truncated file, a tensor that does not decode
// and NaN/Inf block scales give the verdicts `verify` and `hash` report.
#include <catch2/catch.hpp>
#include <cstring>

#include "support/gguf_builder.h"
#include "support/job_runner.h"
#include "support/parse_model.h"
#include "support/scale_blocks.h"
#include "support/test_util.h"
#include "weightstream/dequant.h"
#include "weightstream/hash_job.h"
#include "weightstream/verify_job.h"

namespace {

using namespace ws;

constexpr uint32_t kPartCounts[] = {1, 2, 3, 7, 64};

// FNV-1a 64 as a streaming digest; algo seeds it, so two algorithms give different digests of the same bytes.
class Fnv final : public Digest {
public:
    explicit Fnv(uint32_t algo) : h_(0xcbf29ce484222325ull ^ algo) {}
    void update(const uint8_t* data, uint64_t size) override {
        for (uint64_t i = 0; i < size; ++i) h_ = (h_ ^ data[i]) * 0x100000001b3ull;
    }
    std::vector<uint8_t> finish() override {
        std::vector<uint8_t> out(8);
        std::memcpy(out.data(), &h_, 8);
        return out;
    }

private:
    uint64_t h_;
};

std::unique_ptr<Digest> make_fnv(uint32_t algo) {
    return std::unique_ptr<Digest>(new Fnv(algo));
}

std::vector<uint8_t> fnv_of(uint32_t algo, const uint8_t* data, uint64_t size) {
    Fnv f(algo);
    f.update(data, size);
    return f.finish();
}

// Q8_0 with a NaN scale in block 1 and an Inf one in block 2 (of 4), a Q4_K whose block 1 has a NaN dmin, an
// all-zero F16 tensor and an F32 one.
std::vector<uint8_t> scales_file() {
    const ws_test::ScaleBlocks blocks = ws_test::nan_inf_scale_blocks();
    const std::vector<uint8_t>& q8 = blocks.q8_0;
    const std::vector<uint8_t>& q4k = blocks.q4_k;
    ws_test::GgufSpec spec;
    spec.tensors = {{"q8", 8, {128}, q8, ws_test::kAutoOffset},
                    {"zero", 1, {64}, std::vector<uint8_t>(128, 0), ws_test::kAutoOffset},
                    {"q4k", 12, {256, 2}, q4k, ws_test::kAutoOffset},
                    {"f32", 0, {16}, {}, ws_test::kAutoOffset}};
    return ws_test::build_gguf(spec).bytes;
}

}  // namespace

TEST_CASE("VerifyJob finds NaN/Inf scales and zero tensors in any number of parts") {
    const std::vector<uint8_t> bytes = scales_file();
    const ModelInfo m = ws_test::parse_model_bytes(bytes);
    for (uint32_t parts : kPartCounts) {
        INFO(parts);
        VerifyJob job(m, true);
        const ws_test::JobRun r = ws_test::run_job(job, {bytes}, parts, parts);
        REQUIRE(r.status.ok());
        CHECK(r.work == job.total_work());
        const VerifyReport& v = job.report();
        CHECK(v.failed == -1);
        CHECK(v.decoded == 4);
        REQUIRE(v.scales.size() == 2);
        CHECK(v.scales[0].tensor == 0);
        CHECK(v.scales[0].blocks == 4);
        CHECK(v.scales[0].nan_blocks == 1);
        CHECK(v.scales[0].inf_blocks == 1);
        CHECK(v.scales[0].first_offset == m.tensors[0].offset + 34);
        CHECK(v.scales[1].tensor == 2);
        CHECK(v.scales[1].nan_blocks == 1);
        CHECK(v.scales[1].inf_blocks == 0);
        CHECK(v.scales[1].first_offset == m.tensors[2].offset + 144);
        CHECK(v.zeros == std::vector<size_t>{1});
    }
}

TEST_CASE("VerifyJob carries a tensor's findings across its windows") {
    // Q8_0 of two windows and a bit; NaN scales in the first block of the second and third window.
    const uint64_t elements = 2 * kVerifyWindowElements + 64, blocks = elements / 32;
    std::vector<uint8_t> q8(static_cast<size_t>(blocks * 34), 0);
    const uint64_t second = kVerifyWindowElements / 32, third = 2 * second;
    ws_test::put_u16(&q8, static_cast<size_t>(second * 34), 0x7e01);
    ws_test::put_u16(&q8, static_cast<size_t>(third * 34), 0x7c00);
    ws_test::GgufSpec spec;
    spec.tensors = {{"big", 8, {static_cast<int64_t>(elements)}, q8, ws_test::kAutoOffset}};
    const std::vector<uint8_t> bytes = ws_test::build_gguf(spec).bytes;
    const ModelInfo m = ws_test::parse_model_bytes(bytes);
    for (uint32_t parts : {1u, 5u}) {
        VerifyJob job(m, true);
        const ws_test::JobRun r = ws_test::run_job(job, {bytes}, parts, parts);
        REQUIRE(r.status.ok());
        CHECK(r.steps == 3);
        const VerifyReport& v = job.report();
        REQUIRE(v.scales.size() == 1);
        CHECK(v.scales[0].blocks == blocks);
        CHECK(v.scales[0].nan_blocks == 1);
        CHECK(v.scales[0].inf_blocks == 1);
        CHECK(v.scales[0].first_offset == m.tensors[0].offset + second * 34);
        // NaN * 0 is NaN: not all zeros.
        CHECK(v.zeros.empty());
    }
}

TEST_CASE("VerifyJob decodes a model of every type the same in any number of parts") {
    const std::vector<uint8_t> bytes = ws_test::read_file(ws_test::data_path("ggml/ggml-types.gguf"));
    const ModelInfo m = ws_test::parse_model_bytes(bytes);
    size_t decodable = 0;
    for (const TensorInfo& t : m.tensors) decodable += decode_problem(m, t).empty();
    for (uint32_t parts : kPartCounts) {
        VerifyJob job(m, true);
        const ws_test::JobRun r = ws_test::run_job(job, {bytes}, parts, parts);
        REQUIRE(r.status.ok());
        CHECK(job.report().decoded == decodable);
        CHECK(r.work == job.total_work());
    }
}

TEST_CASE("VerifyJob ends at a truncated tensor and at one that does not decode, with what came before") {
    const std::vector<uint8_t> bytes = scales_file();
    const ModelInfo m = ws_test::parse_model_bytes(bytes);
    // Cut inside q4k: q8 and zero decoded, q4k's bytes lie outside the file.
    const std::vector<uint8_t> cut(bytes.begin(),
                                   bytes.begin() + static_cast<std::ptrdiff_t>(m.tensors[2].offset + 100));
    for (uint32_t parts : kPartCounts) {
        VerifyJob job(m, true);
        const ws_test::JobRun r = ws_test::run_job(job, {cut}, parts, parts);
        CHECK(r.status.code == Error::kTruncated);
        const VerifyReport& v = job.report();
        CHECK(v.failed == 2);
        CHECK(v.unreadable);
        CHECK(v.failure.code == Error::kTruncated);
        CHECK(v.failure.offset == m.tensors[2].offset);
        CHECK(std::string(v.failure.what) == "tensor.data");
        CHECK(v.decoded == 2);
        CHECK(v.scales.size() == 1);
        CHECK(v.zeros == std::vector<size_t>{1});
    }
    // A Q8_0 tensor of 100 elements is not a whole number of blocks.
    ModelInfo odd = m;
    odd.tensors[2].dtype = DType::Q8_0;
    odd.tensors[2].n_elements = 100;
    VerifyJob job(odd, false);
    const ws_test::JobRun r = ws_test::run_job(job, {bytes}, 3);
    CHECK(r.status.ok());  // the job ends at next(): the verdict is the report's
    CHECK(job.report().failed == 2);
    CHECK_FALSE(job.report().unreadable);
    CHECK(job.report().failure.code == Error::kBadShape);
    CHECK(job.report().failure.offset == odd.tensors[2].info_offset);
    CHECK(job.report().decoded == 2);
}

TEST_CASE("HashJob's digests are the whole tensors' and model's, in any number of parts and lanes") {
    for (const std::string& path : {ws_test::data_path("ggml/ggml-types.gguf"), std::string()}) {
        const std::vector<uint8_t> bytes = path.empty() ? scales_file() : ws_test::read_file(path);
        const ModelInfo m = ws_test::parse_model_bytes(bytes);
        // The expected digests, each over its whole stream.
        std::vector<std::vector<uint8_t>> stored7, stored9, decoded;
        Fnv whole7(7);
        for (const TensorInfo& t : m.tensors) {
            const uint8_t* data = bytes.data() + t.offset;
            stored7.push_back(fnv_of(7, data, t.nbytes));
            stored9.push_back(fnv_of(9, data, t.nbytes));
            whole7.update(data, t.nbytes);
            if (!decode_problem(m, t).empty()) {
                decoded.emplace_back();
                continue;
            }
            std::vector<float> floats(static_cast<size_t>(t.n_elements * dequant_floats_per_element(t.dtype)));
            REQUIRE(dequantize(t.dtype, data, t.n_elements, floats.data()).ok());
            decoded.push_back(
                fnv_of(7, reinterpret_cast<const uint8_t*>(floats.data()), floats.size() * sizeof(float)));
        }
        const std::vector<uint8_t> whole = whole7.finish();
        for (uint32_t lanes : {1u, 3u}) {
            for (uint32_t parts : kPartCounts) {
                // Pieces of a block (or 7 KiB) too: every tensor in many steps.
                const uint64_t piece = parts % 2 ? kHashPieceBytes : 7 << 10;
                INFO(path << ", " << lanes << " lanes, " << parts << " parts, pieces of " << piece);
                HashJobOptions options;
                // Backwards, to show that the order read does not change a tensor's digests.
                for (size_t i = m.tensors.size(); i-- > 0;) options.tensors.push_back(i);
                options.stored = {7, 9};
                options.decoded = 7;
                options.lanes = lanes;
                options.piece_bytes = parts == 1 ? 1 : piece;
                HashJob job(m, std::move(options), make_fnv);
                const ws_test::JobRun r = ws_test::run_job(job, {bytes}, parts, parts);
                REQUIRE(r.status.ok());
                CHECK(r.work == job.total_work());
                const HashReport& h = job.report();
                CHECK(h.failed == -1);
                for (size_t i = 0; i < m.tensors.size(); ++i) {
                    INFO(m.tensors[i].name);
                    REQUIRE(h.tensors[i].done);
                    CHECK(h.tensors[i].stored == std::vector<std::vector<uint8_t>>{stored7[i], stored9[i]});
                    CHECK(h.tensors[i].decoded == decoded[i]);
                    CHECK(h.tensors[i].decodable == !decoded[i].empty());
                }
            }
        }
        // The whole-model digest, in directory order.
        for (uint32_t parts : kPartCounts) {
            HashJobOptions options;
            for (size_t i = 0; i < m.tensors.size(); ++i) options.tensors.push_back(i);
            options.stored = {9};
            options.whole.push_back(make_fnv(7));
            options.piece_bytes = parts % 2 ? kHashPieceBytes : 1;
            HashJob job(m, std::move(options), make_fnv);
            const ws_test::JobRun r = ws_test::run_job(job, {bytes}, parts, parts);
            REQUIRE(r.status.ok());
            REQUIRE(job.report().whole.size() == 1);
            CHECK(job.report().whole[0] == whole);
            for (size_t i = 0; i < m.tensors.size(); ++i) CHECK(job.report().tensors[i].stored[0] == stored9[i]);
        }
    }
}

TEST_CASE("HashJob ends at a truncated tensor and at one that does not decode") {
    const std::vector<uint8_t> bytes = scales_file();
    const ModelInfo m = ws_test::parse_model_bytes(bytes);
    const std::vector<uint8_t> cut(bytes.begin(),
                                   bytes.begin() + static_cast<std::ptrdiff_t>(m.tensors[2].offset + 100));
    for (uint32_t parts : kPartCounts) {
        HashJobOptions options;
        for (size_t i = 0; i < m.tensors.size(); ++i) options.tensors.push_back(i);
        options.stored = {1};
        options.decoded = 1;
        HashJob job(m, std::move(options), make_fnv);
        const ws_test::JobRun r = ws_test::run_job(job, {cut}, parts, parts);
        CHECK(r.status.code == Error::kTruncated);
        CHECK(job.report().failed == 2);
        CHECK(job.report().unreadable);
        CHECK(job.report().tensors[1].done);
        CHECK_FALSE(job.report().tensors[2].done);
    }
    ModelInfo odd = m;
    odd.tensors[2].dtype = DType::Q8_0;
    odd.tensors[2].n_elements = 100;
    HashJobOptions options;
    for (size_t i = 0; i < m.tensors.size(); ++i) options.tensors.push_back(i);
    options.decoded = 1;
    HashJob job(odd, std::move(options), make_fnv);
    const ws_test::JobRun r = ws_test::run_job(job, {bytes}, 2);
    CHECK(r.status.ok());  // the job ends at next(): the verdict is the report's
    CHECK(job.report().failed == 2);
    CHECK_FALSE(job.report().unreadable);
    CHECK(job.report().failure.code == Error::kBadShape);
    CHECK(job.report().failure.offset == odd.tensors[2].info_offset);
}

TEST_CASE("VerifyJob and HashJob name the step after each step, as they then read it") {
    const std::vector<uint8_t> bytes = ws_test::read_file(ws_test::data_path("ggml/ggml-types.gguf"));
    const ModelInfo m = ws_test::parse_model_bytes(bytes);
    // Runs the job in one part, checking each step's inputs against what the step before announced.
    auto check = [&](Job& job) {
        JobStep step;
        std::vector<ByteRange> announced;
        size_t steps = 0;
        while (job.next(&step)) {
            if (steps++ > 0) {
                REQUIRE(announced.size() == step.inputs.size());
                for (size_t i = 0; i < announced.size(); ++i) {
                    CHECK(announced[i].offset == step.inputs[i].offset);
                    CHECK(announced[i].size == step.inputs[i].size);
                }
            }
            announced = step.next_inputs;
            std::vector<ByteSpan> inputs;
            for (const ByteRange& r : step.inputs) inputs.push_back({bytes.data() + r.offset, r.size});
            job.run(inputs.data(), 0, 1);
            ByteSpan out;
            REQUIRE(job.complete(&out).ok());
        }
        CHECK(steps > 1);
        CHECK(announced.empty());
    };
    VerifyJob verify(m, false);
    check(verify);
    for (uint32_t lanes : {1u, 3u}) {
        HashJobOptions options;
        for (size_t i = 0; i < m.tensors.size(); ++i) options.tensors.push_back(i);
        options.stored = {1};
        options.lanes = lanes;
        HashJob job(m, std::move(options), make_fnv);
        check(job);
    }
}
