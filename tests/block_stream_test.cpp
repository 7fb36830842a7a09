// SPDX-License-Identifier: MIT
#include "weightstream/block_stream.h"

#include <catch2/catch.hpp>
#include <cstring>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "support/gguf_builder.h"
#include "support/test_util.h"
#include "weightstream/dequant.h"
#include "weightstream/dtype.h"
#include "weightstream/model_info.h"
#include "weightstream/row_window.h"

using ws::BlockStream;
using ws::DType;
using ws::Error;

namespace {

struct CorpusTensor {
    ws::TensorInfo info;  // as a parser would fill it: dtype, ne, absolute offset, sizes
    const std::vector<uint8_t>* file;
};

// The ggml corpus files and their tensors, read at the manifest's offsets (no GGUF parser involved).
struct Corpus {
    std::vector<std::unique_ptr<std::vector<uint8_t>>> files;
    std::vector<CorpusTensor> tensors;
};

const Corpus& corpus() {
    static const Corpus c = [] {
        Corpus out;
        const nlohmann::json manifest = ws_test::read_json(ws_test::data_path("ggml/manifest.json"));
        for (const auto& file : manifest.at("files")) {
            out.files.push_back(std::make_unique<std::vector<uint8_t>>(
                ws_test::read_file(ws_test::data_path("ggml/" + file.at("file").get<std::string>()))));
            for (const auto& t : file.at("tensors")) {
                CorpusTensor ct;
                ct.info.name = t.at("name").get<std::string>();
                ct.info.type_id = t.at("ggml_type_id").get<uint32_t>();
                ct.info.dtype = ws::dtype_from_ggml_id(ct.info.type_id);
                const auto& ne = t.at("ne");
                ct.info.n_dims = static_cast<uint32_t>(ne.size());
                for (size_t d = 0; d < ne.size(); ++d) ct.info.ne[d] = ne[d].get<int64_t>();
                ct.info.offset = t.at("absolute_offset").get<uint64_t>();
                ct.info.nbytes = t.at("size_bytes").get<uint64_t>();
                ct.info.n_elements = t.at("n_elements").get<uint64_t>();
                ct.file = out.files.back().get();
                out.tensors.push_back(ct);
            }
        }
        return out;
    }();
    return c;
}

const uint8_t* tensor_bytes(const CorpusTensor& t) {
    return t.file->data() + t.info.offset;
}

std::vector<float> whole_decode(DType t, const uint8_t* src, uint64_t n) {
    std::vector<float> out(n * ws::dequant_floats_per_element(t));
    REQUIRE(ws::dequantize(t, src, n, out.data()).ok());
    return out;
}

// Feeds `bytes` in chunks of the given sizes (cycled), each chunk copied to the end of its own exact-size
// allocation, and each feed writing into an exact-size output allocation of floats_for(chunk) floats.
std::vector<float> chunked_decode(DType t, uint64_t n, const uint8_t* bytes, size_t size,
                                  const std::vector<size_t>& chunk_sizes, bool big_endian = false) {
    BlockStream stream(t, n, big_endian);
    REQUIRE(stream.status().ok());
    REQUIRE(stream.bytes_total() == size);
    std::vector<float> out;
    size_t pos = 0;
    size_t k = 0;
    while (pos < size) {
        const size_t chunk = std::min(chunk_sizes[k++ % chunk_sizes.size()], size - pos);
        std::unique_ptr<uint8_t[]> in(new uint8_t[chunk]);
        std::memcpy(in.get(), bytes + pos, chunk);
        const size_t cap = stream.floats_for(chunk);
        std::unique_ptr<float[]> dst(new float[cap == 0 ? 1 : cap]);
        size_t written = 0;
        REQUIRE(stream.feed(in.get(), chunk, dst.get(), cap, &written).ok());
        REQUIRE(written == cap);
        out.insert(out.end(), dst.get(), dst.get() + written);
        pos += chunk;
        CHECK(stream.done() == (pos == size));
    }
    REQUIRE(stream.finish().ok());
    CHECK(stream.floats_written() == out.size());
    return out;
}

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
    return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0);
}

}  // namespace

TEST_CASE("chunked decoding equals whole-tensor decoding for every corpus tensor") {
    std::mt19937 rng(7);
    std::vector<size_t> random_sizes(64);
    for (size_t& s : random_sizes) s = 1 + rng() % 300;
    const std::vector<std::vector<size_t>> chunkings = {{1}, {7}, {13}, {209, 3, 1000}, random_sizes};
    for (const CorpusTensor& t : corpus().tensors) {
        INFO(t.info.name);
        const std::vector<float> whole = whole_decode(t.info.dtype, tensor_bytes(t), t.info.n_elements);
        for (const auto& chunking : chunkings) {
            INFO("first chunk size " << chunking[0]);
            const std::vector<float> chunked =
                chunked_decode(t.info.dtype, t.info.n_elements, tensor_bytes(t), t.info.nbytes, chunking);
            CHECK(same_bits(chunked, whole));
        }
    }
}

TEST_CASE("big-endian corpus tensors (swapped as gguf-py swaps them) decode to the little-endian floats") {
    std::set<DType> seen;
    for (const CorpusTensor& t : corpus().tensors) {
        INFO("tensor " << t.info.name);
        std::vector<uint8_t> be(tensor_bytes(t), tensor_bytes(t) + t.info.nbytes);
        const bool defined = ws_test::to_big_endian_data(t.info.type_id, &be);
        CHECK(ws::big_endian_order_defined(t.info.dtype) == defined);
        if (!defined) {
            CHECK(BlockStream(t.info.dtype, t.info.n_elements, true).status().code == Error::kUnsupported);
            std::vector<uint8_t> copy = be;
            CHECK(ws::swap_to_little_endian(t.info.dtype, copy.data(), copy.size()).code == Error::kUnsupported);
            CHECK(copy == be);
            continue;
        }
        seen.insert(t.info.dtype);
        const std::vector<float> want = whole_decode(t.info.dtype, tensor_bytes(t), t.info.n_elements);
        for (const std::vector<size_t>& chunks : {std::vector<size_t>{1}, {7, 300, 5}, {9000}, {1 << 20}}) {
            const std::vector<float> got =
                chunked_decode(t.info.dtype, t.info.n_elements, be.data(), be.size(), chunks, true);
            REQUIRE(got.size() == want.size());
            CHECK(std::memcmp(got.data(), want.data(), want.size() * sizeof(float)) == 0);
        }
        // The core swap gives the little-endian bytes back, and swapping twice is the identity.
        std::vector<uint8_t> le = be;
        REQUIRE(ws::swap_to_little_endian(t.info.dtype, le.data(), le.size()).ok());
        CHECK(std::memcmp(le.data(), tensor_bytes(t), le.size()) == 0);
        REQUIRE(ws::swap_to_little_endian(t.info.dtype, le.data(), le.size()).ok());
        CHECK(le == be);
        if (ws::dtype_traits(t.info.dtype).block_bytes > 1) {
            CHECK(ws::swap_to_little_endian(t.info.dtype, le.data(), le.size() - 1).code == Error::kBadShape);
        }
    }
    // gguf-py's set, all present in the corpus: F32 F16 BF16 Q4_0 Q8_0 Q4_K Q6_K MXFP4 I8 I16 I32 I64 F64.
    CHECK(seen.size() == 13);
}

TEST_CASE("chunked decoding equals whole decoding for every decodable type (random bytes)") {
    std::mt19937_64 rng(99);
    for (uint32_t v = 0; v < static_cast<uint32_t>(DType::kEnd); ++v) {
        const DType t = static_cast<DType>(v);
        const ws::DTypeTraits& traits = ws::dtype_traits(t);
        if (!ws::dtype_decodable(t)) continue;
        INFO(traits.name);
        const uint64_t n = 5ull * traits.block_elems * (traits.block_elems == 1 ? 37 : 1);
        uint64_t size = 0;
        REQUIRE(ws::dtype_bytes_for(t, n, &size));
        std::vector<uint8_t> bytes(size);
        for (uint8_t& b : bytes) b = static_cast<uint8_t>(rng());
        const std::vector<float> whole = whole_decode(t, bytes.data(), n);
        for (const std::vector<size_t>& chunking : {std::vector<size_t>{1}, {7}, {13}, {5, 300, 2}}) {
            CHECK(same_bits(chunked_decode(t, n, bytes.data(), bytes.size(), chunking), whole));
        }
    }
}

TEST_CASE("block stream writes into a caller's whole-tensor buffer") {
    // The typical wasm use: one output array for the tensor, each feed writing at floats_written().
    const CorpusTensor* q6 = nullptr;
    for (const CorpusTensor& t : corpus().tensors) {
        if (t.info.name == "q6_k.weight") q6 = &t;
    }
    REQUIRE(q6 != nullptr);
    const std::vector<float> whole = whole_decode(q6->info.dtype, tensor_bytes(*q6), q6->info.n_elements);
    BlockStream stream(q6->info.dtype, q6->info.n_elements);
    std::vector<float> out(q6->info.n_elements);
    size_t pos = 0;
    for (size_t chunk : {100, 211, 419, 1, 1000, 10000}) {
        chunk = std::min(chunk, static_cast<size_t>(q6->info.nbytes) - pos);
        const size_t at = static_cast<size_t>(stream.floats_written());
        size_t written = 0;
        REQUIRE(stream.feed(tensor_bytes(*q6) + pos, chunk, out.data() + at, out.size() - at, &written).ok());
        pos += chunk;
    }
    CHECK(stream.done());
    CHECK(same_bits(out, whole));
}

TEST_CASE("block stream refuses what it cannot do without changing state") {
    // Q4_0: 18-byte blocks of 32 elements; a tensor of 2 blocks.
    std::vector<uint8_t> bytes(36);
    for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<uint8_t>(i * 37 + 1);
    const std::vector<float> whole = whole_decode(DType::Q4_0, bytes.data(), 64);
    BlockStream stream(DType::Q4_0, 64);
    float out[64];
    size_t written = 99;

    // A partial block writes nothing and needs no capacity.
    REQUIRE(stream.feed(bytes.data(), 10, nullptr, 0, &written).ok());
    CHECK(written == 0);
    CHECK(stream.bytes_consumed() == 10);
    CHECK(stream.floats_for(8) == 32);
    CHECK(stream.floats_for(27) == 0);  // 10 + 27 > 36: would run past the end

    // Not enough room for the completed block: kTooLarge, nothing consumed.
    ws::Status s = stream.feed(bytes.data() + 10, 20, out, 31, &written);
    CHECK(s.code == Error::kTooLarge);
    CHECK(written == 0);
    CHECK(stream.bytes_consumed() == 10);

    // More bytes than the tensor has: kTrailingData, nothing consumed.
    s = stream.feed(bytes.data() + 10, 27, out, 64, &written);
    CHECK(s.code == Error::kTrailingData);
    CHECK(stream.bytes_consumed() == 10);
    CHECK(stream.finish().code == Error::kTruncated);
    CHECK(stream.finish().offset == 10);

    // Recovery: the rest in two pieces.
    REQUIRE(stream.feed(bytes.data() + 10, 20, out, 32, &written).ok());
    CHECK(written == 32);
    REQUIRE(stream.feed(bytes.data() + 30, 6, out + 32, 32, &written).ok());
    CHECK(written == 32);
    CHECK(stream.done());
    CHECK(stream.finish().ok());
    CHECK(std::memcmp(out, whole.data(), sizeof out) == 0);
    // Nothing more fits, not even an empty tail beyond the end.
    CHECK(stream.feed(bytes.data(), 1, out, 64, &written).code == Error::kTrailingData);
    CHECK(stream.feed(bytes.data(), 0, out, 64, &written).ok());
}

TEST_CASE("block stream rejects types without a decoder and partial blocks") {
    CHECK(BlockStream(DType::Q4_2, 32).status().code == Error::kUnsupported);
    CHECK(BlockStream(DType::Q4_0_4_4, 32).status().code == Error::kUnsupported);
    // Big-endian data of a type gguf-py defines no big-endian layout for.
    CHECK(BlockStream(DType::Q5_K, 256, true).status().code == Error::kUnsupported);
    CHECK(BlockStream(DType::Q5_K, 256, false).status().ok());
    CHECK(BlockStream(DType::kUnknown, 1).status().code == Error::kUnsupported);
    CHECK(BlockStream(DType::Q4_K, 255).status().code == Error::kBadShape);
    CHECK(BlockStream(DType::F4, 3).status().code == Error::kBadShape);
    CHECK(BlockStream(DType::F32, UINT64_MAX / 2).status().code == Error::kOverflow);
    BlockStream bad(DType::Q4_2, 256);
    size_t written = 7;
    float out[1];
    const uint8_t byte = 0;
    CHECK(bad.feed(&byte, 1, out, 1, &written).code == Error::kUnsupported);
    CHECK(written == 0);
    CHECK(!bad.done());

    BlockStream empty(DType::Q4_K, 0);
    CHECK(empty.status().ok());
    CHECK(empty.done());
    CHECK(empty.finish().ok());
}

TEST_CASE("row windows decode to the matching slice of the whole tensor") {
    size_t windows = 0;
    for (const CorpusTensor& t : corpus().tensors) {
        INFO(t.info.name);
        const std::vector<float> whole = whole_decode(t.info.dtype, tensor_bytes(t), t.info.n_elements);
        const uint64_t ne0 = static_cast<uint64_t>(t.info.ne[0]);
        const uint64_t rows = t.info.n_elements / ne0;
        for (uint64_t start = 0; start <= rows; ++start) {
            for (uint64_t count = 0; start + count <= rows; ++count) {
                INFO("rows " << start << " + " << count);
                const ws::Result<ws::RowWindow> w = ws::row_window(t.info, start, count);
                REQUIRE(w.ok());
                const uint64_t offset = w.value().offset;
                const uint64_t nbytes = w.value().nbytes;
                CHECK(w.value().n_elements == count * ne0);
                CHECK(w.value().total_rows == rows);
                CHECK(w.value().shape == std::vector<int64_t>{static_cast<int64_t>(count), t.info.ne[0]});
                REQUIRE(offset >= t.info.offset);
                REQUIRE(offset + nbytes <= t.info.offset + t.info.nbytes);
                if (start + count == rows) CHECK(offset + nbytes == t.info.offset + t.info.nbytes);
                const std::vector<float> window = whole_decode(t.info.dtype, t.file->data() + offset, count * ne0);
                const std::vector<float> slice(whole.begin() + static_cast<std::ptrdiff_t>(start * ne0),
                                               whole.begin() + static_cast<std::ptrdiff_t>((start + count) * ne0));
                CHECK(same_bits(window, slice));
                ++windows;
            }
        }
    }
    CHECK(windows > 1000);
}

TEST_CASE("row_window rejects windows and shapes it cannot serve") {
    ws::TensorInfo t;
    t.dtype = DType::Q4_K;
    t.ne[0] = 512;
    t.ne[1] = 8;
    t.n_elements = 4096;
    t.offset = 1000;
    t.nbytes = 8 * 288;
    auto code = [](const ws::TensorInfo& info, uint64_t start, uint64_t count) {
        return ws::row_window(info, start, count).status().code;
    };
    const ws::Result<ws::RowWindow> w = ws::row_window(t, 3, 2);
    REQUIRE(w.ok());
    CHECK(w.value().offset == 1000 + 3 * 288);
    CHECK(w.value().nbytes == 2 * 288);
    CHECK(w.value().n_elements == 2 * 512);
    CHECK(w.value().total_rows == 8);
    CHECK(ws::row_window(t, 8, 0).ok());
    CHECK(code(t, 7, 2) == Error::kBadOffset);
    CHECK(code(t, 9, 0) == Error::kBadOffset);
    CHECK(code(t, UINT64_MAX, 2) == Error::kBadOffset);
    CHECK(code(t, 2, UINT64_MAX) == Error::kBadOffset);

    ws::TensorInfo odd = t;
    odd.ne[0] = 100;  // not a whole number of 256-element blocks
    CHECK(code(odd, 0, 1) == Error::kBadShape);
    ws::TensorInfo ragged = t;
    ragged.n_elements = 4096 + 256;  // not a whole number of rows
    CHECK(code(ragged, 0, 1) == Error::kBadShape);
    ws::TensorInfo negative = t;
    negative.ne[1] = -8;
    CHECK(code(negative, 0, 1) == Error::kBadShape);
    ws::TensorInfo unknown = t;
    unknown.dtype = DType::kUnknown;
    CHECK(code(unknown, 0, 1) == Error::kBadType);

    ws::TensorInfo huge = t;
    huge.dtype = DType::F32;
    huge.ne[0] = int64_t(1) << 62;
    huge.ne[1] = 2;
    huge.n_elements = uint64_t(1) << 63;
    CHECK(code(huge, 0, 1) == Error::kOverflow);
    ws::TensorInfo far = t;
    far.offset = UINT64_MAX - 10;
    CHECK(code(far, 1, 1) == Error::kOverflow);

    // Sub-byte safetensors types: a row of 6 F4 values is 3 bytes; an odd row length is not addressable.
    ws::TensorInfo f4;
    f4.dtype = DType::F4;
    f4.ne[0] = 6;
    f4.ne[1] = 4;
    f4.n_elements = 24;
    f4.offset = 8;
    const ws::Result<ws::RowWindow> f4_rows = ws::row_window(f4, 1, 2);
    REQUIRE(f4_rows.ok());
    CHECK(f4_rows.value().offset == 11);
    CHECK(f4_rows.value().nbytes == 6);
    f4.ne[0] = 3;
    f4.ne[1] = 8;
    CHECK(code(f4, 0, 1) == Error::kBadShape);

    // Rows of zero elements take zero bytes; they are counted from the outer dimensions (numpy's (5, 0) array
    // has 5 rows), by the window and by row_count alike.
    ws::TensorInfo empty;
    empty.dtype = DType::F16;
    empty.ne[0] = 0;
    empty.ne[1] = 5;
    empty.n_elements = 0;
    empty.offset = 64;
    const ws::Result<ws::RowWindow> none = ws::row_window(empty, 2, 3);
    REQUIRE(none.ok());
    CHECK(none.value().offset == 64);
    CHECK(none.value().nbytes == 0);
    CHECK(none.value().n_elements == 0);
    CHECK(none.value().total_rows == 5);
    CHECK(none.value().shape == std::vector<int64_t>{3, 0});
    CHECK(ws::row_count(empty) == 5);
    CHECK(code(empty, 2, 4) == Error::kBadOffset);
    empty.ne[2] = 2;
    CHECK(ws::row_count(empty) == 10);
}

TEST_CASE("slice_plan reads the wanted blocks of the selected rows and says how to cut them") {
    ws::TensorInfo t;
    t.dtype = DType::Q4_K;  // 256 elements in 144 bytes
    t.n_dims = 3;
    t.ne[0] = 768;  // 3 blocks a row: 432 bytes
    t.ne[1] = 4;
    t.ne[2] = 2;
    t.n_elements = 768 * 8;
    t.offset = 1000;
    t.nbytes = 8 * 432;
    auto plan = [&](std::vector<uint64_t> begin, std::vector<uint64_t> end, uint64_t max_gap) {
        return ws::slice_plan(t, begin.data(), end.data(), begin.size(), max_gap);
    };
    // numpy [1:2, 1:3, 300:520]: rows 5 and 6 (i2 = 1, i1 = 1..2), blocks 1..2 of each.
    ws::Result<ws::SlicePlan> p = plan({1, 1, 300}, {2, 3, 520}, 0);
    REQUIRE(p.ok());
    CHECK(p.value().shape == std::vector<int64_t>{1, 2, 220});
    CHECK(p.value().n_elements == 440);
    CHECK(p.value().take == 220);
    CHECK(p.value().skip == 300 - 256);
    CHECK(p.value().run_row_stride == 768);
    REQUIRE(p.value().runs.size() == 2);
    CHECK(p.value().runs[0].offset == 1000 + 5 * 432 + 144);
    CHECK(p.value().runs[0].nbytes == 288);
    CHECK(p.value().runs[0].first_row == 0);
    CHECK(p.value().runs[0].rows == 1);
    CHECK(p.value().runs[1].offset == 1000 + 6 * 432 + 144);
    CHECK(p.value().runs[1].first_row == 1);
    // With a gap of one block allowed, the two rows are one read: from row 5's block 1 to row 6's block 2.
    p = plan({1, 1, 300}, {2, 3, 520}, 144);
    REQUIRE(p.ok());
    REQUIRE(p.value().runs.size() == 1);
    CHECK(p.value().runs[0].offset == 1000 + 5 * 432 + 144);
    CHECK(p.value().runs[0].nbytes == 432 + 288);
    CHECK(p.value().runs[0].rows == 2);
    // Whole rows of both outer indices: one run over rows 1..2 and 5..6 is not contiguous, so two.
    p = plan({0, 1}, {2, 3}, 0);
    REQUIRE(p.ok());
    CHECK(p.value().take == 768);
    CHECK(p.value().skip == 0);
    REQUIRE(p.value().runs.size() == 2);
    CHECK(p.value().runs[0].offset == 1000 + 1 * 432);
    CHECK(p.value().runs[0].nbytes == 2 * 432);
    CHECK(p.value().runs[1].offset == 1000 + 5 * 432);
    CHECK(p.value().runs[1].first_row == 2);
    // No ranges: the whole tensor in one read.
    p = plan({}, {}, 0);
    REQUIRE(p.ok());
    REQUIRE(p.value().runs.size() == 1);
    CHECK(p.value().runs[0].nbytes == t.nbytes);
    CHECK(p.value().shape == std::vector<int64_t>{2, 4, 768});
    // An empty range: no read at all.
    p = plan({0, 0, 5}, {2, 4, 5}, 0);
    REQUIRE(p.ok());
    CHECK(p.value().n_elements == 0);
    CHECK(p.value().runs.empty());

    CHECK(plan({1}, {0}, 0).status().code == Error::kBadOffset);
    CHECK(plan({0}, {3}, 0).status().code == Error::kBadOffset);
    CHECK(plan({0, 0, 0, 0}, {1, 1, 1, 1}, 0).status().code == Error::kBadShape);
    ws::TensorInfo huge = t;
    huge.offset = UINT64_MAX - 100;
    CHECK(ws::slice_plan(huge, nullptr, nullptr, 0, 0).status().code == Error::kOverflow);
    ws::TensorInfo odd = t;
    odd.ne[0] = 100;
    odd.n_elements = 800;
    CHECK(ws::slice_plan(odd, nullptr, nullptr, 0, 0).status().code == Error::kBadShape);
}
