// SPDX-License-Identifier: MIT
// The header read policy (include/weightstream/header_reads.h), the one the CLI and the package follow: reads
// that start where the last one ended, a small header in one read, a vocabulary in a few, never more than the
// header + kHeaderReadAhead + 10 % of it, and the same reads however the parser's bytes were chunked.
#include "weightstream/header_reads.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "support/gguf_builder.h"
#include "support/test_util.h"
#include "weightstream/gguf_writer.h"

namespace {

using ws::ByteRange;

// The reads that parse `file` (its size known, or not), each fed to the parser in pieces of `piece` bytes, as a
// reader over a source does; and the parser's final status.
struct Reading {
    std::vector<ByteRange> reads;
    ws::Status status;
    uint64_t header = 0;  // data_offset, when parsed
};

Reading read_header(const std::vector<uint8_t>& file, bool size_known, size_t piece = SIZE_MAX,
                    uint64_t source_read_size = 0) {
    ws::ParseOptions options;
    if (size_known) options.file_size = file.size();
    ws::HeaderParser parser(options);
    ws::HeaderReads policy(source_read_size);
    Reading r;
    ByteRange range = policy.first();
    for (;;) {
        r.reads.push_back(range);
        REQUIRE(r.reads.size() < 100);
        const uint64_t end = std::min<uint64_t>(file.size(), range.offset + range.size);
        if (range.offset >= end) {
            r.status = ws::make_error(ws::Error::kTruncated, range.offset, "header");
            return r;
        }
        for (uint64_t at = range.offset; at < end;) {
            const size_t n = static_cast<size_t>(std::min<uint64_t>(piece, end - at));
            r.status = parser.feed(file.data() + at, n);
            at += n;
            if (r.status.code != ws::Error::kNeedMoreData) {
                if (r.status.ok()) r.header = parser.info().data_offset;
                return r;
            }
        }
        range = policy.next(parser, size_known ? file.size() : ws::kUnknownSize);
    }
}

uint64_t bytes_of(const Reading& r, uint64_t file_size) {
    uint64_t total = 0;
    for (const ByteRange& b : r.reads) total += std::min(file_size, b.offset + b.size) - std::min(file_size, b.offset);
    return total;
}

ws::TensorInfo f32_tensor(const std::string& name, int64_t ne0, int64_t ne1) {
    ws::TensorInfo t;
    t.name = name;
    t.dtype = ws::DType::F32;
    t.n_dims = 2;
    t.ne[0] = ne0;
    t.ne[1] = ne1;
    return t;
}

// A GGUF whose header is a vocabulary of `tokens` strings, with one 1 MiB tensor after it or none.
std::vector<uint8_t> vocab_file(int tokens, bool with_tensor) {
    std::vector<std::string> items;
    for (int i = 0; i < tokens; ++i) items.push_back("tok_" + std::to_string(i * 7919 % 100003) + "_piece");
    ws::MetadataEntry vocab;
    vocab.key = "tokenizer.ggml.tokens";
    vocab.value = ws_test::val_array_str(items);
    std::vector<ws::TensorInfo> tensors;
    std::vector<std::vector<uint8_t>> data;
    if (with_tensor) {
        tensors.push_back(f32_tensor("w", 512, 512));
        data.emplace_back(size_t(512) * 512 * 4, 0);
    }
    auto bytes = ws::gguf_write({ws::string_entry("general.architecture", "llama"), vocab}, tensors, data);
    REQUIRE(bytes.ok());
    return bytes.value();
}

void check_contiguous(const Reading& r) {
    REQUIRE(!r.reads.empty());
    CHECK(r.reads[0].offset == 0);
    CHECK(r.reads[0].size == ws::kHeaderReadAhead);
    for (size_t i = 1; i < r.reads.size(); ++i) {
        CHECK(r.reads[i].offset == r.reads[i - 1].offset + r.reads[i - 1].size);
        CHECK(r.reads[i].size >= 1);
    }
}

}  // namespace

TEST_CASE("header reads: a small header is one read of kHeaderReadAhead") {
    const std::vector<uint8_t> file = ws_test::read_file(std::string(WS_TESTDATA) + "/ggml/ggml-types.gguf");
    const Reading r = read_header(file, true);
    REQUIRE(r.status.ok());
    REQUIRE(r.reads.size() == 1);
    CHECK(r.reads[0].offset == 0);
    CHECK(r.reads[0].size == ws::kHeaderReadAhead);
    // A local source reads a chunk at a time: the first read is that chunk when it is larger.
    CHECK(ws::HeaderReads(1 << 20).first().size == uint64_t(1) << 20);
    CHECK(ws::HeaderReads(1024).first().size == ws::kHeaderReadAhead);
}

TEST_CASE("header reads: a vocabulary without tensors is read in two, to the file's end") {
    const std::vector<uint8_t> file = vocab_file(100000, false);
    const Reading r = read_header(file, true);
    REQUIRE(r.status.ok());
    check_contiguous(r);
    CHECK(r.reads.size() == 2);
    CHECK(bytes_of(r, file.size()) == file.size());
}

TEST_CASE("header reads: a vocabulary followed by data: few reads, within the header + 64 KiB + 10 %") {
    const std::vector<uint8_t> file = vocab_file(100000, true);
    for (const bool size_known : {true, false}) {
        INFO("size known: " << size_known);
        const Reading r = read_header(file, size_known);
        REQUIRE(r.status.ok());
        check_contiguous(r);
        CHECK(r.reads.size() <= 6);
        const uint64_t header = r.header;
        REQUIRE(header > 2000000);
        CHECK(bytes_of(r, file.size()) <= header + ws::kHeaderReadAhead + header / 10);
    }
}

TEST_CASE("header reads: the reads depend on the bytes fed, not on how they were chunked") {
    const std::vector<uint8_t> file = vocab_file(30000, true);
    const Reading whole = read_header(file, true);
    REQUIRE(whole.status.ok());
    for (const size_t piece : {size_t(1) << 14, size_t(4093), size_t(65536)}) {
        INFO("pieces of " << piece);
        const Reading chunked = read_header(file, true, piece);
        REQUIRE(chunked.reads.size() == whole.reads.size());
        for (size_t i = 0; i < whole.reads.size(); ++i) {
            CHECK(chunked.reads[i].offset == whole.reads[i].offset);
            CHECK(chunked.reads[i].size == whole.reads[i].size);
        }
    }
}

TEST_CASE("header reads: a file that ends inside its header ends the reads; a hostile count asks for little") {
    std::vector<uint8_t> file = vocab_file(30000, false);
    file.resize(file.size() / 2);
    const Reading cut = read_header(file, true);
    CHECK(cut.status.code == ws::Error::kTruncated);
    CHECK(cut.reads.back().offset >= file.size());
    CHECK(cut.reads.back().size == 1);

    // GGUF v3 declaring 2^40 KVs: a guess of the rest far beyond any header, capped.
    std::vector<uint8_t> hostile = {'G', 'G', 'U', 'F', 3, 0, 0, 0};
    for (const uint64_t v : {uint64_t(0), uint64_t(1) << 40}) {
        for (int i = 0; i < 8; ++i) hostile.push_back(static_cast<uint8_t>(v >> (8 * i)));
    }
    ws::HeaderParser parser;
    if (parser.feed(hostile.data(), hostile.size()).code == ws::Error::kNeedMoreData) {
        ws::HeaderReads policy;
        const ByteRange next = policy.next(parser, ws::kUnknownSize);
        CHECK(next.offset == hostile.size());
        CHECK(next.size <= ws::kMaxHeaderRead);
    }
}
