// SPDX-License-Identifier: MIT
// StatsJob run in-process (tests/support/job_runner.h) in 1 to 64 parts per step, run in shuffled orders, and in
// steps of any size: the statistics are the same bits every time and equal to one StatsAccumulator over the
// decoded floats, for whole tensors (one of them two steps long), a window of rows and a big-endian file; a
// tensor that cannot be decoded and a window outside its tensor are settled without steps; a truncated file
// fails the job at the tensor.
#include "weightstream/stats_job.h"

#include <catch2/catch.hpp>
#include <cstring>

#include "support/gguf_builder.h"
#include "support/job_runner.h"
#include "support/parse_model.h"
#include "support/same_stats.h"

namespace {

using namespace ws;

Stats direct(const float* x, size_t n, uint32_t bins) {
    StatsAccumulator acc;
    acc.add(x, n);
    return acc.finish(bins);
}

// Finite values of every size of exponent, some NaN and Inf: f32 bits from a fixed pattern.
std::vector<uint8_t> f32_bytes(size_t n) {
    std::vector<uint8_t> bytes(n * 4);
    uint32_t x = 12345;
    for (size_t i = 0; i < n; ++i) {
        x = x * 1664525u + 1013904223u;
        const uint32_t bits = (i % 1000 == 7) ? 0x7fc00000u : (i % 4096 == 9) ? 0 : (x & 0xbfffffffu) | 0x30000000u;
        std::memcpy(bytes.data() + i * 4, &bits, 4);
    }
    return bytes;
}

// Q8_0 blocks with finite scales.
std::vector<uint8_t> q8_0_bytes(size_t blocks) {
    std::vector<uint8_t> bytes(blocks * 34);
    for (size_t b = 0; b < blocks; ++b) {
        bytes[b * 34] = static_cast<uint8_t>(b * 7);
        bytes[b * 34 + 1] = 0x14 + static_cast<uint8_t>(b % 8);  // d: 2^-10 .. about 2^-8 as binary16
        for (size_t i = 0; i < 32; ++i) bytes[b * 34 + 2 + i] = static_cast<uint8_t>(b * 31 + i * 17);
    }
    return bytes;
}

// big: 5 Mi F32 values (20 MiB: two steps); q: 96 rows of 4096 Q8_0 values (6 runs); small: 77,000 F32 values.
ws_test::GgufSpec spec() {
    ws_test::GgufSpec s;
    s.tensors.push_back({"big", static_cast<uint32_t>(DType::F32), {1 << 20, 5}, f32_bytes(size_t(5) << 20)});
    s.tensors.push_back({"q", static_cast<uint32_t>(DType::Q8_0), {4096, 96}, q8_0_bytes(4096 / 32 * 96)});
    s.tensors.push_back({"small", static_cast<uint32_t>(DType::F32), {1000, 77}, f32_bytes(77000)});
    return s;
}

}  // namespace

TEST_CASE("StatsJob gives one StatsAccumulator's bits over the decoded values in any number of parts") {
    const std::vector<uint8_t> file = ws_test::build_gguf(spec()).bytes;
    const ModelInfo info = ws_test::parse_model_bytes(file);
    std::vector<StatsRequest> requests;
    for (size_t i = 0; i < info.tensors.size(); ++i) requests.push_back({i, false, 0, 0, kStatsDefaultBins});
    requests.push_back({1, true, 3, 5, 7});  // rows 3..7 of q, 7 bins
    requests.push_back({2, false, 0, 0, 4096});

    std::vector<Stats> want;
    for (const StatsRequest& q : requests) {
        const TensorInfo& t = info.tensors[q.tensor];
        const std::vector<float> x = ws_test::decode_tensor(file, t);
        const size_t first = q.window ? static_cast<size_t>(q.first_row * static_cast<uint64_t>(t.ne[0])) : 0;
        const size_t n = q.window ? static_cast<size_t>(q.rows * static_cast<uint64_t>(t.ne[0])) : x.size();
        want.push_back(direct(x.data() + first, n, q.bins));
    }
    for (uint32_t parts = 1; parts <= 64; parts = parts < 8 ? parts + 1 : parts * 2) {
        INFO(parts << " parts");
        StatsJob job(info, requests);
        const ws_test::JobRun r = ws_test::run_job(job, {file}, parts, parts);
        REQUIRE(r.status.ok());
        CHECK(r.output.empty());
        CHECK(r.work == job.total_work());
        CHECK(r.steps == requests.size() + 1);  // big takes two steps
        for (size_t i = 0; i < requests.size(); ++i) {
            INFO("request " << i);
            REQUIRE(job.result(i).status.ok());
            REQUIRE(job.result(i).done);
            ws_test::check_same_stats(job.result(i).stats, want[i]);
        }
    }
    // Steps of one run each (the package's are smaller than the CLI's): the same numbers.
    StatsJob job(info, requests, 1);
    const ws_test::JobRun r = ws_test::run_job(job, {file}, 3);
    REQUIRE(r.status.ok());
    CHECK(r.steps == 80 + 6 + 2 + 1 + 2);  // big 80 runs, q 6, small 2 (twice), the window 1
    for (size_t i = 0; i < requests.size(); ++i) ws_test::check_same_stats(job.result(i).stats, want[i]);
}

TEST_CASE("StatsJob settles an undecodable tensor and a window outside its tensor without a step") {
    // Big-endian data of Q5_K has no defined layout; F32 and Q8_0 do, and give the little-endian file's numbers.
    ws_test::GgufSpec be = spec();
    be.big_endian = true;
    for (ws_test::TensorSpec& t : be.tensors) REQUIRE(ws_test::to_big_endian_data(t.type_id, &t.data));
    be.tensors.push_back({"k", static_cast<uint32_t>(DType::Q5_K), {256}, std::vector<uint8_t>(176, 3)});
    const std::vector<uint8_t> big_file = ws_test::build_gguf(be).bytes;
    const ModelInfo big = ws_test::parse_model_bytes(big_file);
    REQUIRE(big.big_endian);
    const std::vector<uint8_t> little_file = ws_test::build_gguf(spec()).bytes;
    const ModelInfo little = ws_test::parse_model_bytes(little_file);

    const std::vector<StatsRequest> requests = {
        {3, false, 0, 0, 32}, {1, false, 0, 0, 32}, {1, true, 90, 7, 32}, {2, false, 0, 0, 32}};
    StatsJob job(big, requests);
    CHECK(job.result(0).status.code == Error::kUnsupported);
    CHECK(job.result(0).status.offset == big.tensors[3].info_offset);
    CHECK(job.result(0).problem == "type Q5_K has no defined big-endian layout (gguf-py cannot swap it either)");
    CHECK(job.result(2).status.code == Error::kBadOffset);
    CHECK(job.total_work() == big.tensors[1].nbytes + big.tensors[2].nbytes);
    const ws_test::JobRun r = ws_test::run_job(job, {big_file}, 3);
    REQUIRE(r.status.ok());
    CHECK(r.steps == 2);
    CHECK_FALSE(job.result(0).done);
    CHECK_FALSE(job.result(2).done);

    StatsJob reference(little, {requests[1], requests[3]});
    REQUIRE(ws_test::run_job(reference, {little_file}, 1).status.ok());
    ws_test::check_same_stats(job.result(1).stats, reference.result(0).stats);
    ws_test::check_same_stats(job.result(3).stats, reference.result(1).stats);
}

TEST_CASE("StatsJob fails on a truncated file with truncated at the tensor, as the CLI reports it") {
    const std::vector<uint8_t> file = ws_test::build_gguf(spec()).bytes;
    const ModelInfo info = ws_test::parse_model_bytes(file);
    const TensorInfo& big = info.tensors[0];
    // Cut inside big's second step: its first step runs, the second cannot be read.
    const std::vector<uint8_t> cut(file.begin(), file.begin() + static_cast<std::ptrdiff_t>(big.offset + (18 << 20)));
    StatsJob job(info, {{0, false, 0, 0, 32}, {1, false, 0, 0, 32}});
    const ws_test::JobRun r = ws_test::run_job(job, {cut}, 4);
    CHECK(r.status.code == Error::kTruncated);
    CHECK(r.status.offset == big.offset);
    CHECK(std::string(r.status.what) == "tensor.data");
    CHECK(r.steps == 2);
    CHECK_FALSE(job.result(0).done);
    CHECK_FALSE(job.result(1).done);
}
