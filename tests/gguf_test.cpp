// SPDX-License-Identifier: MIT
#include "weightstream/gguf.h"

#include <dirent.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cctype>
#include <cmath>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "support/gguf_builder.h"
#include "support/gguf_catalogue.h"
#include "support/test_util.h"

using ws::Error;
using ws::ModelInfo;
using ws::Status;
using ws::Value;
using ws::ValueType;

namespace {

ws::ParseOptions make_options(uint64_t file_size = ws::kUnknownSize, bool strict = false) {
    ws::ParseOptions o;
    o.file_size = file_size;
    o.strict = strict;
    return o;
}

// A copy of bytes in a heap block of exactly that size, so ASan flags any read past the end.
class ExactBuffer {
public:
    ExactBuffer(const uint8_t* data, size_t size) : data_(new uint8_t[size ? size : 1]), size_(size) {
        if (size) std::memcpy(data_.get(), data, size);
    }
    explicit ExactBuffer(const std::vector<uint8_t>& v) : ExactBuffer(v.data(), v.size()) {}
    const uint8_t* data() const { return data_.get(); }
    size_t size() const { return size_; }

private:
    std::unique_ptr<uint8_t[]> data_;
    size_t size_;
};

struct Parsed {
    Status status;
    ModelInfo info;
};

Parsed parse_whole(const std::vector<uint8_t>& bytes, const ws::ParseOptions& options) {
    const ExactBuffer buf(bytes);
    ws::GgufParser parser(options);
    Parsed p;
    p.status = parser.feed(buf.data(), buf.size());
    p.info = parser.take_info();
    return p;
}

// Feeds `bytes` in chunks whose sizes come from next_size(); every chunk is its own exact allocation
// (when `separate`) so a parser that reads past a chunk is caught.
template <typename NextSize>
Parsed parse_chunked(const std::vector<uint8_t>& bytes, const ws::ParseOptions& options, NextSize next_size,
                     bool separate = true) {
    ws::GgufParser parser(options);
    Parsed p;
    p.status = {Error::kNeedMoreData, 0, ""};
    size_t pos = 0;
    while (pos < bytes.size() && p.status.code == Error::kNeedMoreData) {
        const size_t n = std::min<size_t>(bytes.size() - pos, next_size());
        if (separate) {
            const ExactBuffer chunk(bytes.data() + pos, n);
            p.status = parser.feed(chunk.data(), chunk.size());
        } else {
            p.status = parser.feed(bytes.data() + pos, n);
        }
        pos += n;
    }
    REQUIRE(parser.bytes_fed() == pos);
    p.info = parser.take_info();
    return p;
}

void require_same_status(const Status& a, const Status& b) {
    REQUIRE(ws::error_name(a.code) == std::string(ws::error_name(b.code)));
    REQUIRE(a.offset == b.offset);
    REQUIRE(std::string(a.what) == b.what);
}

void require_same_value(const Value& a, const Value& b) {
    REQUIRE(a.type == b.type);
    REQUIRE(a.bits == b.bits);
    REQUIRE(a.str == b.str);
    REQUIRE(a.item_type == b.item_type);
    REQUIRE(a.length == b.length);
    REQUIRE(a.raw == b.raw);
    REQUIRE(a.strings == b.strings);
    REQUIRE(a.arrays.size() == b.arrays.size());
    for (size_t i = 0; i < a.arrays.size(); ++i) require_same_value(a.arrays[i], b.arrays[i]);
}

// Every field of two ModelInfos.
void require_same_info(const ModelInfo& a, const ModelInfo& b) {
    REQUIRE(a.format == b.format);
    REQUIRE(a.version == b.version);
    REQUIRE(a.big_endian == b.big_endian);
    REQUIRE(a.file_size == b.file_size);
    REQUIRE(a.data_offset == b.data_offset);
    REQUIRE(a.alignment == b.alignment);
    REQUIRE(a.files == b.files);
    REQUIRE(a.metadata.size() == b.metadata.size());
    for (size_t i = 0; i < a.metadata.size(); ++i) {
        INFO("metadata " << i << " " << a.metadata[i].key);
        REQUIRE(a.metadata[i].key == b.metadata[i].key);
        REQUIRE(a.metadata[i].offset == b.metadata[i].offset);
        require_same_value(a.metadata[i].value, b.metadata[i].value);
    }
    REQUIRE(a.tensors.size() == b.tensors.size());
    for (size_t i = 0; i < a.tensors.size(); ++i) {
        const ws::TensorInfo& x = a.tensors[i];
        const ws::TensorInfo& y = b.tensors[i];
        INFO("tensor " << i << " " << x.name);
        REQUIRE(x.name == y.name);
        REQUIRE(x.dtype == y.dtype);
        REQUIRE(x.type_id == y.type_id);
        REQUIRE(x.n_dims == y.n_dims);
        REQUIRE(std::equal(x.ne, x.ne + 4, y.ne));
        REQUIRE(x.offset == y.offset);
        REQUIRE(x.nbytes == y.nbytes);
        REQUIRE(x.n_elements == y.n_elements);
        REQUIRE(x.file_index == y.file_index);
        REQUIRE(x.info_offset == y.info_offset);
    }
    REQUIRE(a.warnings.size() == b.warnings.size());
    for (size_t i = 0; i < a.warnings.size(); ++i) {
        REQUIRE(a.warnings[i].code == b.warnings[i].code);
        REQUIRE(a.warnings[i].offset == b.warnings[i].offset);
        REQUIRE(a.warnings[i].message == b.warnings[i].message);
    }
}

// The end of the tensor entries (where the parser reports kOk), recomputed from the parsed entries.
uint64_t header_end(const ModelInfo& info) {
    if (info.tensors.empty()) return info.data_offset;
    const ws::TensorInfo& t = info.tensors.back();
    const uint64_t lw = info.version == 1 ? 4 : 8;
    return t.info_offset + lw + t.name.size() + 4 + t.n_dims * lw + 4 + 8;
}

// The end of the last tensor's data: a file cut before it is truncated.
uint64_t data_end(const ModelInfo& info) {
    uint64_t end = header_end(info);
    for (const ws::TensorInfo& t : info.tensors) end = std::max(end, t.offset + t.nbytes);
    return end;
}

const ws::Warning* find_warning(const ModelInfo& info, Error code, uint64_t offset) {
    for (const ws::Warning& w : info.warnings) {
        if (w.code == code && w.offset == offset) return &w;
    }
    return nullptr;
}

bool starts_with(const std::string& s, const std::string& prefix) {
    return s.compare(0, prefix.size(), prefix) == 0;
}

// ---- manifest ----------------------------------------------------------------------------------------

struct Fixture {
    std::string path;
    nlohmann::json manifest;  // the manifest's entry for this file
};

void add_fixtures(std::vector<Fixture>* out, const std::string& dir) {
    const nlohmann::json m = ws_test::read_json(dir + "/manifest.json");
    for (const auto& f : m.at("files")) out->push_back({dir + "/" + f.at("file").get<std::string>(), f});
}

std::vector<Fixture> manifest_fixtures() {
    std::vector<Fixture> all;
    add_fixtures(&all, ws_test::data_path("ggml"));
    const std::string shared_vocab = ws_test::shared_path("ggml/vocab");
    if (ws_test::file_exists(shared_vocab + "/manifest.json")) {
        add_fixtures(&all, shared_vocab);
    } else {
        add_fixtures(&all, ws_test::data_path("ggml/vocab"));
    }
    return all;
}

std::vector<uint8_t> le_bytes(uint64_t v, unsigned width) {
    std::vector<uint8_t> b;
    for (unsigned i = 0; i < width; ++i) b.push_back(static_cast<uint8_t>(v >> (8 * i)));
    return b;
}

// The array's element bytes exactly as stored after its (type, count) header, as the manifest hashes
// them; strings as u64 length + bytes.
std::vector<uint8_t> payload_bytes(const Value& v) {
    if (v.item_type != ValueType::kString) return v.raw;
    std::vector<uint8_t> out;
    for (const std::string& s : v.strings) {
        const std::vector<uint8_t> len = le_bytes(s.size(), 8);
        out.insert(out.end(), len.begin(), len.end());
        out.insert(out.end(), s.begin(), s.end());
    }
    return out;
}

uint64_t hex_bits(const nlohmann::json& j) {
    return std::stoull(j.get<std::string>(), nullptr, 16);
}

void check_scalar(ValueType type, uint64_t bits, const nlohmann::json& kv, const nlohmann::json& expected) {
    switch (type) {
        case ValueType::kUint8:
        case ValueType::kUint16:
        case ValueType::kUint32:
        case ValueType::kUint64:
            CHECK(bits == expected.get<uint64_t>());
            break;
        case ValueType::kInt8:
        case ValueType::kInt16:
        case ValueType::kInt32:
        case ValueType::kInt64:
            CHECK(static_cast<int64_t>(bits) == expected.get<int64_t>());
            break;
        case ValueType::kBool:
            CHECK(bits == (expected.get<bool>() ? 1u : 0u));
            break;
        case ValueType::kFloat32:
        case ValueType::kFloat64:
            if (kv.contains("value_bits")) {
                CHECK(bits == hex_bits(kv.at("value_bits")));
            } else if (type == ValueType::kFloat32) {  // array items: the shortest repr round-trips
                uint32_t b32 = static_cast<uint32_t>(bits);
                float f;
                std::memcpy(&f, &b32, 4);
                if (expected.is_null()) {
                    CHECK(std::isnan(f));
                } else if (expected.is_number_integer() && expected.get<int64_t>() == 0) {
                    CHECK(f == 0.0f);  // the JSON reader drops the sign of "-0"; payload_sha256 checks it
                } else {
                    const float want = static_cast<float>(expected.get<double>());
                    CHECK(std::memcmp(&f, &want, 4) == 0);
                }
            } else {
                double d;
                std::memcpy(&d, &bits, 8);
                if (expected.is_null()) {
                    CHECK(std::isnan(d));
                } else {
                    const double want = expected.get<double>();
                    CHECK(std::memcmp(&d, &want, 8) == 0);
                }
            }
            break;
        default:
            FAIL("not a scalar type");
    }
}

// Item i of a scalar array, widened like Value::bits.
uint64_t array_item_bits(const Value& v, size_t i) {
    const uint32_t size = ws::value_type_size(v.item_type);
    uint64_t bits = 0;
    for (uint32_t b = 0; b < size; ++b) bits |= static_cast<uint64_t>(v.raw[i * size + b]) << (8 * b);
    switch (v.item_type) {
        case ValueType::kInt8:
            return static_cast<uint64_t>(int64_t(int8_t(bits)));
        case ValueType::kInt16:
            return static_cast<uint64_t>(int64_t(int16_t(bits)));
        case ValueType::kInt32:
            return static_cast<uint64_t>(int64_t(int32_t(bits)));
        default:
            return bits;
    }
}

void check_manifest(const ModelInfo& info, const nlohmann::json& f) {
    CHECK(info.format == ws::Format::kGguf);
    CHECK(info.version == f.at("gguf_version").get<uint32_t>());
    CHECK_FALSE(info.big_endian);
    CHECK(info.alignment == f.at("alignment").get<uint32_t>());
    CHECK(info.data_offset == f.at("data_offset").get<uint64_t>());
    CHECK(info.warnings.empty());
    REQUIRE(info.metadata.size() == f.at("n_kv").get<size_t>());
    const auto& kvs = f.at("kv");
    for (size_t i = 0; i < kvs.size(); ++i) {
        const auto& kv = kvs[i];
        const ws::MetadataEntry& e = info.metadata[kv.at("index").get<size_t>()];
        INFO("key " << kv.at("key").get<std::string>());
        CHECK(e.key == kv.at("key").get<std::string>());
        const uint32_t type_id = kv.at("type_id").get<uint32_t>();
        REQUIRE(static_cast<uint32_t>(e.value.type) == type_id);
        const Value& v = e.value;
        if (v.type == ValueType::kString) {
            CHECK(v.str == kv.at("value").get<std::string>());
            CHECK(v.str.size() == kv.at("byte_length").get<size_t>());
        } else if (v.type != ValueType::kArray) {
            check_scalar(v.type, v.bits, kv, kv.at("value"));
        } else {
            REQUIRE(static_cast<uint32_t>(v.item_type) == kv.at("array_type_id").get<uint32_t>());
            REQUIRE(v.length == kv.at("length").get<uint64_t>());
            CHECK(kv.at("truncated").get<bool>() == (v.length > 16));
            const auto& values = kv.at("values");
            REQUIRE(values.size() == std::min<uint64_t>(v.length, 16));
            if (v.item_type == ValueType::kString) {
                REQUIRE(v.strings.size() == v.length);
                for (size_t k = 0; k < values.size(); ++k) CHECK(v.strings[k] == values[k].get<std::string>());
            } else {
                REQUIRE(v.raw.size() == v.length * ws::value_type_size(v.item_type));
                for (size_t k = 0; k < values.size(); ++k) {
                    check_scalar(v.item_type, array_item_bits(v, k), nlohmann::json::object(), values[k]);
                }
            }
            const std::vector<uint8_t> payload = payload_bytes(v);
            CHECK(ws_test::sha256_hex(payload.data(), payload.size()) == kv.at("payload_sha256").get<std::string>());
        }
    }
    REQUIRE(info.tensors.size() == f.at("n_tensors").get<size_t>());
    const auto& tensors = f.at("tensors");
    for (size_t i = 0; i < tensors.size(); ++i) {
        const auto& mt = tensors[i];
        const ws::TensorInfo& t = info.tensors[i];
        INFO("tensor " << mt.at("name").get<std::string>());
        CHECK(t.name == mt.at("name").get<std::string>());
        CHECK(t.type_id == mt.at("ggml_type_id").get<uint32_t>());
        std::string upper = mt.at("ggml_type").get<std::string>();
        for (char& ch : upper) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
        CHECK(t.dtype_name() == upper);
        REQUIRE(t.n_dims == mt.at("n_dims").get<uint32_t>());
        const auto& ne = mt.at("ne");
        for (uint32_t d = 0; d < 4; ++d) CHECK(t.ne[d] == (d < t.n_dims ? ne[d].get<int64_t>() : 1));
        CHECK(t.offset == mt.at("absolute_offset").get<uint64_t>());
        CHECK(t.offset - info.data_offset == mt.at("offset").get<uint64_t>());
        CHECK(t.nbytes == mt.at("size_bytes").get<uint64_t>());
        CHECK(t.n_elements == mt.at("n_elements").get<uint64_t>());
    }
}

// ---- builder fixtures ----------------------------------------------------------------------------------

// Every value type, arrays of every item type, nested arrays, and tensors of several types.
ws_test::GgufSpec rich_spec(uint32_t version, bool big_endian) {
    using namespace ws_test;
    GgufSpec s;
    s.version = version;
    s.big_endian = big_endian;
    s.kvs = {
        {"general.architecture", val_str("llama")},
        {"general.alignment", val_u32(64)},
        {"v.u8", val_u8(0xfe)},
        {"v.i8", val_i8(-100)},
        {"v.u16", val_u16(0xbeef)},
        {"v.i16", val_i16(-30000)},
        {"v.u32", val_u32(0xdeadbeef)},
        {"v.i32", val_i32(-2000000000)},
        {"v.f32", val_f32(-1.5f)},
        {"v.bool", val_bool(true)},
        {"v.str", val_str("h\xc3\xa9llo, a string value longer than any key")},
        {"v.u64", val_u64(0x0123456789abcdefull)},
        {"v.i64", val_i64(INT64_MIN)},
        {"v.f64", val_f64(3.25)},
        {"a.u16", val_array<uint16_t>(ValueType::kUint16, {1, 0x8001, 0xffff})},
        {"a.i64", val_array<int64_t>(ValueType::kInt64, {-1, 5, INT64_MAX})},
        {"a.f64", val_array<double>(ValueType::kFloat64, {0.5, -0.0})},
        {"a.bool", val_array<uint8_t>(ValueType::kBool, {1, 0, 0, 1})},
        {"a.str", val_array_str({"x", "", "yz"})},
        {"a.empty", val_array<int32_t>(ValueType::kInt32, {})},
        {"a.nested", val_array_arr({val_array<uint32_t>(ValueType::kUint32, {7, 8}),
                                    val_array_arr({val_array_str({"deep"})}), val_array_str({})})},
    };
    s.tensors = {
        {"tok_embd.weight", 12, {256, 3}, {}, kAutoOffset},  // Q4_K
        {"norm.weight", 0, {5}, {}, kAutoOffset},            // F32
        {"scalar", 1, {}, {}, kAutoOffset},                  // 0-dim F16
        {"q8.3d", 8, {32, 2, 2, 1}, {}, kAutoOffset},        // Q8_0, 4 dims
    };
    return s;
}

}  // namespace

// ---- 1. manifest reproduction ---------------------------------------------------------------------------

TEST_CASE("gguf parser reproduces what ggml reads from the reference files") {
    const std::vector<Fixture> fixtures = manifest_fixtures();
    // The two ggml files, and the 12 vocab files of the shared corpus (or the 2 committed ones).
    if (ws_test::file_exists(ws_test::shared_path("ggml/vocab/manifest.json"))) {
        REQUIRE(fixtures.size() == 14);
    } else {
        WARN("shared corpus not present: only the committed vocab files are checked");
        REQUIRE(fixtures.size() == 4);
    }
    for (const Fixture& f : fixtures) {
        INFO(f.path);
        const std::vector<uint8_t> bytes = ws_test::read_file(f.path);
        REQUIRE(bytes.size() == f.manifest.at("file_size").get<uint64_t>());
        const Parsed p = parse_whole(bytes, make_options(bytes.size()));
        REQUIRE(p.status.ok());
        CHECK(p.info.file_size == bytes.size());
        check_manifest(p.info, f.manifest);
        if (f.manifest.at("n_tensors").get<uint64_t>() == 0) CHECK(p.info.data_offset == bytes.size());
        // ggml accepts every one of them, so strict mode does too.
        const Parsed strict = parse_whole(bytes, make_options(bytes.size(), true));
        REQUIRE(strict.status.ok());
        CHECK(ws::gguf_check_strict_layout(strict.info).ok());
    }
}

// ---- 2. chunked == whole ----------------------------------------------------------------------------------

TEST_CASE("gguf chunked parsing gives the same ModelInfo as one whole-buffer feed") {
    std::vector<std::pair<std::string, std::vector<uint8_t>>> files;
    for (const Fixture& f : manifest_fixtures()) files.push_back({f.path, ws_test::read_file(f.path)});
    for (uint32_t version : {1u, 2u, 3u}) {
        for (bool be : {false, true}) {
            files.push_back({"rich v" + std::to_string(version) + (be ? " BE" : " LE"),
                             ws_test::build_gguf(rich_spec(version, be)).bytes});
        }
    }
    for (const ws_test::GgufCorruptCase& c : ws_test::gguf_corrupt_catalogue()) files.push_back({c.name, c.bytes});

    for (const auto& file : files) {
        const std::vector<uint8_t>& bytes = file.second;
        INFO(file.first);
        for (const uint64_t size : {ws::kUnknownSize, static_cast<uint64_t>(bytes.size())}) {
            INFO("file_size " << (size == ws::kUnknownSize ? std::string("unknown") : std::to_string(size)));
            const ws::ParseOptions options = make_options(size);
            const Parsed whole = parse_whole(bytes, options);
            // The whole buffer, 1 byte at a time, 7 at a time and in random sizes from tiny to large.
            // Chunks of the large vocab files are fed in place rather than copied one by one (for speed).
            const bool separate = bytes.size() < (1 << 20);
            const Parsed ones = parse_chunked(
                bytes, options, [] { return size_t(1); }, separate);
            const Parsed sevens = parse_chunked(
                bytes, options, [] { return size_t(7); }, separate);
            std::mt19937 rng(20240601);
            const Parsed random =
                parse_chunked(bytes, options, [&rng] { return 1 + rng() % (size_t(1) << (rng() % 17)); });
            for (const Parsed* p : {&ones, &sevens, &random}) {
                require_same_status(p->status, whole.status);
                if (whole.status.ok()) require_same_info(p->info, whole.info);
            }
        }
    }
}

TEST_CASE("gguf parser asks for exactly the bytes of the item it is waiting for") {
    ws_test::GgufSpec spec;
    spec.kvs = {{"a", ws_test::val_u32(1)}, {"chat_template", ws_test::val_str(std::string(1000, 'c'))}};
    const ws_test::BuiltGguf built = ws_test::build_gguf(spec);
    const std::vector<uint8_t>& bytes = built.bytes;
    ws::GgufParser parser;
    CHECK(parser.bytes_needed() == 4);  // the magic
    // Up to 10 bytes into the template: the parser wants the rest of it, no more.
    const size_t cut = static_cast<size_t>(built.layout.kvs[1].value + 8 + 10);
    Status s = parser.feed(bytes.data(), cut);
    REQUIRE(s.code == Error::kNeedMoreData);
    CHECK(s.offset == built.layout.kvs[1].value + 8);
    CHECK(std::string(s.what) == "kv.value");
    CHECK(parser.bytes_needed() == 990);
    CHECK(parser.info().metadata.size() == 1);
    s = parser.feed(bytes.data() + cut, 989);
    REQUIRE(s.code == Error::kNeedMoreData);
    CHECK(parser.bytes_needed() == 1);
    s = parser.feed(bytes.data() + cut + 989, bytes.size() - cut - 989);
    REQUIRE(s.ok());
    CHECK(parser.bytes_needed() == 0);
    CHECK(parser.info().metadata[1].value.str == std::string(1000, 'c'));
    // Once done, further bytes are ignored.
    const uint8_t junk[3] = {1, 2, 3};
    CHECK(parser.feed(junk, 3).ok());
    CHECK(parser.bytes_fed() == bytes.size() + 3);
    CHECK(parser.info().metadata.size() == 2);
}

TEST_CASE("gguf parser guesses the rest of a string array from the mean size of its items") {
    std::vector<std::string> tokens;
    for (int i = 0; i < 1000; ++i) tokens.push_back("token" + std::to_string(10000 + i));  // 10 bytes each
    ws_test::GgufSpec spec;
    spec.kvs = {{"tokens", ws_test::val_array_str(tokens)}, {"n", ws_test::val_u32(7)}};
    spec.tensors = {{"w", 0, {8}, {}, ws_test::kAutoOffset}};
    const ws_test::BuiltGguf built = ws_test::build_gguf(spec);
    const std::vector<uint8_t>& bytes = built.bytes;
    // The array's items start after its item type (4) and count (8); 100 items of 18 bytes, then 5 bytes of the
    // next item's length.
    const size_t cut = static_cast<size_t>(built.layout.kvs[0].value + 12 + 100 * 18 + 5);
    ws::GgufParser parser;
    REQUIRE(parser.feed(bytes.data(), cut).code == Error::kNeedMoreData);
    // Lower bound: the rest of the length (3), 899 more lengths, the KV "n" (14) and one tensor entry (24).
    const uint64_t needed = 3 + 899 * 8 + 14 + 24;
    CHECK(parser.bytes_needed() == needed);
    // Guess: the 899 items at their mean 18 bytes; the rest (KV, tensor entry) still at their smallest.
    CHECK(parser.bytes_expected() == needed + 899 * 10);
    // Short of the header's end by the current string (10), "n"'s value (4 - 1) and the entry's name and dim
    // (1 + 8): what no count tells.
    CHECK(built.layout.header_end - cut - parser.bytes_expected() == 10 + 3 + 9);
}

TEST_CASE("gguf parser guesses the rest of the tensor directory from the mean entry") {
    ws_test::GgufSpec spec;
    spec.kvs = {{"a", ws_test::val_u32(1)}};
    for (int i = 0; i < 10; ++i)
        spec.tensors.push_back({"blk." + std::to_string(i) + ".weight", 0, {8, 2}, {}, ws_test::kAutoOffset});
    const ws_test::BuiltGguf built = ws_test::build_gguf(spec);
    // Two entries (8 + 12 name + 4 + 16 dims + 4 + 8 = 52 bytes each) and 3 bytes of the third.
    const size_t cut = static_cast<size_t>(built.layout.tensors[2].entry + 3);
    REQUIRE(built.layout.tensors[1].entry - built.layout.tensors[0].entry == 52);
    ws::GgufParser parser;
    REQUIRE(parser.feed(built.bytes.data(), cut).code == Error::kNeedMoreData);
    // The third entry's length field wants 5 more bytes, then 7 entries of at least 24.
    CHECK(parser.bytes_needed() == 5 + 7 * 24);
    CHECK(parser.bytes_expected() == 5 + 7 * 52);
    CHECK(parser.bytes_expected() < built.layout.header_end - cut);  // the third entry's own rest is its bound
}

TEST_CASE("gguf parser guesses that a file without tensors is all header") {
    // The 102,400-token deepseek vocabulary of the reference corpus (next to the checkout; always in CI).
    const std::string path = ws_test::shared_path("ggml/vocab/ggml-vocab-deepseek-llm.gguf");
    INFO(path);
    REQUIRE(ws_test::file_exists(path));
    const std::vector<uint8_t> bytes = ws_test::read_file(path);
    REQUIRE(bytes.size() == 3970167);
    const size_t cut = 65536;
    {
        // Size unknown: the vocabulary (tokenizer.ggml.tokens: 102,400 strings from byte 639 to 1,754,519, as
        // an independent walk of the file gives) is guessed from the mean of the strings in the first 64 KiB;
        // those are shorter than the rest (byte tokens), so the guess falls short, by a quarter.
        ws::GgufParser parser;
        REQUIRE(parser.feed(bytes.data(), cut).code == Error::kNeedMoreData);
        const uint64_t tokens_rest = 1754519 - cut;
        CHECK(parser.bytes_needed() < tokens_rest / 2);
        CHECK(parser.bytes_expected() > tokens_rest * 7 / 10);
        CHECK(parser.bytes_expected() < tokens_rest);
    }
    {
        ws::GgufParser parser(make_options(bytes.size()));
        REQUIRE(parser.feed(bytes.data(), cut).code == Error::kNeedMoreData);
        CHECK(parser.bytes_expected() == bytes.size() - cut);
    }
    {
        // Bytes past 4 times the guess are not taken for header.
        ws::GgufParser unknown;
        REQUIRE(unknown.feed(bytes.data(), cut).code == Error::kNeedMoreData);
        ws::GgufParser padded(make_options(cut + 100 * unknown.bytes_expected()));
        REQUIRE(padded.feed(bytes.data(), cut).code == Error::kNeedMoreData);
        CHECK(padded.bytes_expected() == 4 * unknown.bytes_expected());
    }
}

TEST_CASE("gguf parser errors are sticky") {
    std::vector<uint8_t> bytes = ws_test::build_gguf(ws_test::gguf_catalogue_base()).bytes;
    bytes[0] = 'X';
    ws::GgufParser parser;
    const Status first = parser.feed(bytes.data(), 10);
    REQUIRE(first.code == Error::kBadMagic);
    const Status again = parser.feed(bytes.data() + 10, bytes.size() - 10);
    require_same_status(again, first);
    CHECK(parser.bytes_needed() == 0);
}

// ---- 3. every truncated prefix ---------------------------------------------------------------------------

TEST_CASE("gguf: every truncated prefix wants more data, or is truncated when the file size says so") {
    std::vector<std::pair<std::string, std::vector<uint8_t>>> files = {
        {"ggml-types.gguf", ws_test::read_file(ws_test::data_path("ggml/ggml-types.gguf"))},
        {"ggml-types-ext.gguf", ws_test::read_file(ws_test::data_path("ggml/ggml-types-ext.gguf"))},
        {"catalogue base", ws_test::build_gguf(ws_test::gguf_catalogue_base()).bytes},
        {"rich v1 BE", ws_test::build_gguf(rich_spec(1, true)).bytes},
        {"rich v3 LE", ws_test::build_gguf(rich_spec(3, false)).bytes},
    };
    ws_test::GgufSpec no_tensors = rich_spec(2, false);
    no_tensors.tensors.clear();
    files.push_back({"rich v2 without tensors", ws_test::build_gguf(no_tensors).bytes});

    for (const auto& file : files) {
        const std::vector<uint8_t>& bytes = file.second;
        INFO(file.first);
        const Parsed whole = parse_whole(bytes, make_options());
        REQUIRE(whole.status.ok());
        const uint64_t h_end = header_end(whole.info);
        const uint64_t d_end = data_end(whole.info);
        REQUIRE(h_end <= d_end);
        REQUIRE(d_end <= bytes.size());
        std::vector<uint64_t> tensor_ends;
        for (const ws::TensorInfo& t : whole.info.tensors) tensor_ends.push_back(t.offset + t.nbytes);
        for (size_t n = 0; n < bytes.size(); ++n) {
            // Every prefix that ends in the header or next to the end of a tensor's data; in between, the
            // parser reads the same header whatever the prefix holds, so those are sampled.
            const bool near_tensor_end = std::any_of(tensor_ends.begin(), tensor_ends.end(),
                                                     [n](uint64_t end) { return n + 1 >= end && n <= end + 1; });
            if (n > h_end + 64 && !near_tensor_end && n % 61 != 0) continue;
            const ExactBuffer prefix(bytes.data(), n);
            // The file size is the prefix: the file is cut short.
            {
                ws::GgufParser parser(make_options(n));
                const Status s = parser.feed(prefix.data(), prefix.size());
                if (n < d_end) {
                    if (s.code != Error::kTruncated) FAIL_CHECK("prefix " << n << ": " << ws::error_name(s.code));
                } else if (!s.ok()) {
                    FAIL_CHECK("prefix " << n << ": " << ws::error_name(s.code));
                }
            }
            for (const uint64_t size : {ws::kUnknownSize, static_cast<uint64_t>(bytes.size())}) {
                ws::GgufParser parser(make_options(size));
                const Status s = parser.feed(prefix.data(), prefix.size());
                if (n < h_end) {
                    if (s.code != Error::kNeedMoreData || parser.bytes_needed() == 0 ||
                        parser.bytes_needed() > h_end - n) {
                        FAIL_CHECK("prefix " << n << ": " << ws::error_name(s.code) << " needs "
                                             << parser.bytes_needed());
                    }
                } else if (!s.ok()) {
                    FAIL_CHECK("prefix " << n << ": " << ws::error_name(s.code));
                }
            }
        }
    }
}

// ---- 4. corrupt-file catalogue ---------------------------------------------------------------------------

TEST_CASE("gguf corrupt-file catalogue: each defect gives its exact error, field and offset") {
    const std::vector<ws_test::GgufCorruptCase> catalogue = ws_test::gguf_corrupt_catalogue();
    REQUIRE(catalogue.size() >= 30);
    std::vector<std::string> names;
    for (const auto& c : catalogue) names.push_back(c.name);
    std::sort(names.begin(), names.end());
    REQUIRE(std::adjacent_find(names.begin(), names.end()) == names.end());

    // The unmodified base file is valid for ggml: no errors, no warnings, in either mode.
    const std::vector<uint8_t> base = ws_test::build_gguf(ws_test::gguf_catalogue_base()).bytes;
    for (bool strict : {false, true}) {
        const Parsed p = parse_whole(base, make_options(base.size(), strict));
        REQUIRE(p.status.ok());
        REQUIRE(p.info.warnings.empty());
    }

    for (const ws_test::GgufCorruptCase& c : catalogue) {
        INFO(c.name << ": expect " << ws::error_name(c.code) << " '" << c.what << "' at " << c.offset);
        for (bool strict : {false, true}) {
            INFO((strict ? "strict" : "lenient"));
            const ws::ParseOptions options = make_options(c.bytes.size(), strict);
            const Parsed p = parse_whole(c.bytes, options);
            const bool as_warning = c.warning_only || (c.strict_only && !strict);
            if (as_warning) {
                REQUIRE(p.status.ok());
                const ws::Warning* w = find_warning(p.info, c.code, c.offset);
                REQUIRE(w != nullptr);
                CHECK(starts_with(w->message, std::string(c.what) + ": "));
            } else {
                INFO("got " << ws::error_name(p.status.code) << " '" << p.status.what << "' at " << p.status.offset);
                CHECK(p.status.code == c.code);
                CHECK(std::string(p.status.what) == c.what);
                CHECK(p.status.offset == c.offset);
            }
            // Byte by byte, the same answer.
            const Parsed chunked = parse_chunked(c.bytes, options, [] { return size_t(1); });
            require_same_status(chunked.status, p.status);
            if (p.status.ok()) require_same_info(chunked.info, p.info);
        }
    }
}

TEST_CASE("gguf catalogue defects found without the file size do not depend on it") {
    // Defects in fields the parser can judge alone give the same error for a stream of unknown length.
    for (const ws_test::GgufCorruptCase& c : ws_test::gguf_corrupt_catalogue()) {
        if (c.code == Error::kTruncated || c.strict_only || c.warning_only) continue;
        INFO(c.name);
        const Parsed p = parse_whole(c.bytes, make_options());
        CHECK(p.status.code == c.code);
        CHECK(p.status.offset == c.offset);
    }
}

TEST_CASE("gguf lenient mode sizes tensors of unknown types from the next tensor or the file end") {
    ws_test::GgufSpec spec = ws_test::gguf_catalogue_base();
    ws_test::BuiltGguf built = ws_test::build_gguf(spec);
    const auto& L = built.layout;
    ws_test::put_field(built.bytes, L.tensors[0].type, 77, 4);  // a.weight: unknown
    ws_test::put_field(built.bytes, L.tensors[2].type, 31, 4);  // c.weight: Q4_0_4_4, removed from ggml

    const Parsed known = parse_whole(built.bytes, make_options(built.bytes.size()));
    REQUIRE(known.status.ok());
    const auto& t = known.info.tensors;
    CHECK(t[0].dtype == ws::DType::kUnknown);
    CHECK(t[0].type_id == 77);
    CHECK(t[0].dtype_name() == "UNKNOWN(77)");
    CHECK(t[0].nbytes == L.tensors[1].data - L.tensors[0].data);  // up to b.weight
    CHECK(t[0].n_elements == 16);
    CHECK(t[2].dtype == ws::DType::Q4_0_4_4);
    CHECK(t[2].dtype_name() == "UNKNOWN(31)");
    CHECK(t[2].nbytes == built.bytes.size() - L.tensors[2].data);  // up to the end of the file
    REQUIRE(known.info.warnings.size() == 2);
    CHECK(known.info.warnings[0].code == Error::kBadType);
    CHECK(known.info.warnings[0].offset == L.tensors[0].type);
    CHECK(known.info.warnings[0].message.find("'a.weight'") != std::string::npos);
    CHECK(known.info.warnings[1].offset == L.tensors[2].type);
    CHECK(known.info.warnings[1].message.find("Q4_0_4_4") != std::string::npos);

    // Without the file size the last one cannot be sized.
    const Parsed unknown = parse_whole(built.bytes, make_options());
    REQUIRE(unknown.status.ok());
    CHECK(unknown.info.tensors[2].nbytes == 0);
    CHECK(unknown.info.tensors[0].nbytes == known.info.tensors[0].nbytes);

    // Strict mode (and the standalone check) reject the first one.
    const Parsed strict = parse_whole(built.bytes, make_options(built.bytes.size(), true));
    CHECK(strict.status.code == Error::kBadType);
    CHECK(strict.status.offset == L.tensors[0].type);
    const Status check = ws::gguf_check_strict_layout(known.info);
    CHECK(check.code == Error::kBadType);
    CHECK(check.offset == L.tensors[0].type);
    CHECK(std::string(check.what) == "tensor.type");
}

TEST_CASE("gguf lenient mode reads tensors in any order and warns once") {
    const ws_test::GgufCorruptCase c = ws_test::make_gguf_defect(ws_test::GgufDefect::kOutOfOrderOffsets);
    const Parsed p = parse_whole(c.bytes, make_options(c.bytes.size()));
    REQUIRE(p.status.ok());
    REQUIRE(p.info.warnings.size() == 1);
    CHECK(p.info.warnings[0].code == Error::kBadOffset);
    CHECK(p.info.tensors[0].offset == p.info.data_offset + 96);
    CHECK(p.info.tensors[1].offset == p.info.data_offset + 32);
    CHECK(p.info.tensors[2].offset == p.info.data_offset + 0);
    const Status s = ws::gguf_check_strict_layout(p.info);
    CHECK(s.code == Error::kBadOffset);
    CHECK(s.offset == c.offset);
}

TEST_CASE("gguf caps from ParseOptions fail with kTooLarge before allocating") {
    const std::vector<uint8_t> bytes = ws_test::build_gguf(rich_spec(3, false)).bytes;
    const ws_test::GgufLayout L = ws_test::build_gguf(rich_spec(3, false)).layout;
    struct Case {
        const char* name;
        void (*set)(ws::ParseOptions*);
        const char* what;
        uint64_t offset;
    };
    const Case cases[] = {
        {"kv count", [](ws::ParseOptions* o) { o->max_kv_count = 20; }, "header.n_kv", 16},
        {"tensor count", [](ws::ParseOptions* o) { o->max_tensor_count = 3; }, "header.n_tensors", 8},
        {"string", [](ws::ParseOptions* o) { o->max_string_bytes = 20; }, "kv.value", L.kvs[10].value},
        {"array", [](ws::ParseOptions* o) { o->max_array_length = 3; }, "kv.array.length", L.kvs[17].value + 4},
        {"depth", [](ws::ParseOptions* o) { o->max_array_depth = 2; }, "kv.array.depth", L.kvs[20].value + 12 + 12 + 8},
        {"header", [](ws::ParseOptions* o) { o->max_header_bytes = 100; }, "header.size", L.kvs[1].value},
    };
    for (const Case& c : cases) {
        INFO(c.name);
        for (const uint64_t size : {ws::kUnknownSize, static_cast<uint64_t>(bytes.size())}) {
            ws::ParseOptions o = make_options(size);
            c.set(&o);
            const Parsed p = parse_whole(bytes, o);
            INFO("got " << ws::error_name(p.status.code) << " '" << p.status.what << "' at " << p.status.offset);
            CHECK(p.status.code == Error::kTooLarge);
            CHECK(std::string(p.status.what) == c.what);
            CHECK(p.status.offset == c.offset);
            const Parsed chunked = parse_chunked(bytes, o, [] { return size_t(3); });
            require_same_status(chunked.status, p.status);
        }
    }
}

TEST_CASE("gguf count of 2^40 KVs in a small file fails at once") {
    ws_test::GgufWriter w;
    w.header(0, uint64_t(1) << 40 >> 21);  // 2^19: under the default cap, far more than the file holds
    w.kv("a", ws_test::val_u8(1));
    const Parsed sized = parse_whole(w.bytes(), make_options(w.size()));
    CHECK(sized.status.code == Error::kTruncated);
    CHECK(std::string(sized.status.what) == "header.n_kv");
    CHECK(sized.status.offset == 16);
    // A stream of unknown length: the parser reads what is there and waits, holding only one KV.
    const Parsed stream = parse_whole(w.bytes(), make_options());
    CHECK(stream.status.code == Error::kNeedMoreData);
    CHECK(stream.info.metadata.size() == 1);
}

// ---- 5. big-endian and v1 ------------------------------------------------------------------------------

TEST_CASE("gguf big-endian and v1/v2 files read as the little-endian v3 equivalent") {
    const ws_test::GgufSpec reference_spec = rich_spec(3, false);
    const Parsed reference = parse_whole(ws_test::build_gguf(reference_spec).bytes, make_options());
    REQUIRE(reference.status.ok());
    REQUIRE(reference.info.warnings.empty());

    // The parsed values are the values the builder was given.
    REQUIRE(reference.info.metadata.size() == reference_spec.kvs.size());
    for (size_t i = 0; i < reference_spec.kvs.size(); ++i) {
        INFO(reference_spec.kvs[i].first);
        CHECK(reference.info.metadata[i].key == reference_spec.kvs[i].first);
        require_same_value(reference.info.metadata[i].value, reference_spec.kvs[i].second);
    }
    CHECK(reference.info.alignment == 64);
    CHECK(reference.info.data_offset % 64 == 0);
    const auto& rt = reference.info.tensors;
    REQUIRE(rt.size() == 4);
    CHECK(rt[0].dtype == ws::DType::Q4_K);
    CHECK(rt[0].nbytes == 3 * 144);
    CHECK(rt[1].offset - reference.info.data_offset == 448);  // 432 padded to 64
    CHECK(rt[2].n_dims == 0);
    CHECK(rt[2].n_elements == 1);
    CHECK(rt[2].nbytes == 2);
    CHECK(rt[3].n_dims == 4);
    CHECK(rt[3].nbytes == 4 * 34);

    for (uint32_t version : {1u, 2u, 3u}) {
        for (bool be : {false, true}) {
            INFO("v" << version << (be ? " big-endian" : " little-endian"));
            const ws_test::BuiltGguf built = ws_test::build_gguf(rich_spec(version, be));
            const Parsed p = parse_whole(built.bytes, make_options(built.bytes.size()));
            REQUIRE(p.status.ok());
            CHECK(p.info.version == version);
            CHECK(p.info.big_endian == be);
            CHECK(p.info.warnings.empty());
            CHECK(p.info.data_offset == built.layout.data_offset);
            REQUIRE(p.info.metadata.size() == reference.info.metadata.size());
            for (size_t i = 0; i < p.info.metadata.size(); ++i) {
                CHECK(p.info.metadata[i].key == reference.info.metadata[i].key);
                CHECK(p.info.metadata[i].offset == built.layout.kvs[i].entry);
                require_same_value(p.info.metadata[i].value, reference.info.metadata[i].value);
            }
            REQUIRE(p.info.tensors.size() == rt.size());
            for (size_t i = 0; i < rt.size(); ++i) {
                const ws::TensorInfo& t = p.info.tensors[i];
                CHECK(t.name == rt[i].name);
                CHECK(t.dtype == rt[i].dtype);
                CHECK(t.n_dims == rt[i].n_dims);
                CHECK(std::equal(t.ne, t.ne + 4, rt[i].ne));
                CHECK(t.nbytes == rt[i].nbytes);
                CHECK(t.n_elements == rt[i].n_elements);
                CHECK(t.offset - p.info.data_offset == rt[i].offset - reference.info.data_offset);
                CHECK(t.info_offset == built.layout.tensors[i].entry);
            }
            CHECK(ws::gguf_check_strict_layout(p.info).ok());
        }
    }
}

TEST_CASE("gguf v1 layout: u32 counts, lengths and dims (hand-written bytes)") {
    // As candle and pre-v2 ggml read it: n_tensors/n_kv, string lengths, array counts and dims are u32.
    std::vector<uint8_t> f = {'G', 'G', 'U', 'F', 1, 0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0};
    const auto add = [&f](std::initializer_list<int> b) {
        for (int x : b) f.push_back(static_cast<uint8_t>(x));
    };
    add({3, 0, 0, 0, 'a', 'b', 'c', 4, 0, 0, 0, 5, 0, 0, 0});                                 // abc: u32 5
    add({1, 0, 0, 0, 's', 9, 0, 0, 0, 8, 0, 0, 0, 2, 0, 0, 0, 1, 0, 0, 0, 'x', 0, 0, 0, 0});  // s: [str] "x", ""
    add({1, 0, 0, 0, 't', 2, 0, 0, 0, 4, 0, 0, 0, 3, 0, 0, 0, 0, 0, 0, 0});                   // t: 2 dims (4, 3), F32
    add({0, 0, 0, 0, 0, 0, 0, 0});                                                            // offset: u64 0
    const size_t header = f.size();
    REQUIRE(header == 86);
    f.resize(96 + 48, 0);
    const Parsed p = parse_whole(f, make_options(f.size()));
    REQUIRE(p.status.ok());
    CHECK(p.info.version == 1);
    REQUIRE(p.info.metadata.size() == 2);
    CHECK(p.info.metadata[0].key == "abc");
    CHECK(p.info.metadata[0].value.bits == 5);
    CHECK(p.info.metadata[1].value.strings == std::vector<std::string>{"x", ""});
    CHECK(p.info.metadata[1].offset == 31);
    REQUIRE(p.info.tensors.size() == 1);
    CHECK(p.info.tensors[0].info_offset == 57);
    CHECK(p.info.tensors[0].ne[0] == 4);
    CHECK(p.info.tensors[0].ne[1] == 3);
    CHECK(p.info.tensors[0].nbytes == 48);
    CHECK(p.info.data_offset == 96);
    CHECK(p.info.tensors[0].offset == 96);
}

TEST_CASE("gguf big-endian: every number byte-swapped, array items normalised to little-endian") {
    std::vector<uint8_t> f = {'G', 'G', 'U', 'F', 0, 0, 0, 3, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2};
    const auto add = [&f](std::initializer_list<int> b) {
        for (int x : b) f.push_back(static_cast<uint8_t>(x));
    };
    add({0, 0, 0, 0, 0, 0, 0, 1, 'u', 0, 0, 0, 5, 0xff, 0xff, 0x80, 0x00});  // u: i32 -32768
    add({0, 0, 0, 0, 0, 0, 0, 1, 'a', 0, 0, 0, 9, 0, 0, 0, 3, 0, 0, 0, 0, 0, 0, 0, 2, 0xff, 0xfe, 0x01, 0x02});
    const Parsed p = parse_whole(f, make_options(f.size()));
    REQUIRE(p.status.ok());
    CHECK(p.info.big_endian);
    CHECK(p.info.version == 3);
    REQUIRE(p.info.metadata.size() == 2);
    CHECK(p.info.metadata[0].value.type == ValueType::kInt32);
    CHECK(p.info.metadata[0].value.as_int64() == -32768);
    const Value& a = p.info.metadata[1].value;
    CHECK(a.item_type == ValueType::kInt16);
    CHECK(a.length == 2);
    CHECK(a.raw == std::vector<uint8_t>{0xfe, 0xff, 0x02, 0x01});  // -2, 0x0102
    CHECK(p.info.data_offset == f.size());                         // no tensors: no padding
}

// ---- 6. zero tensors, alignment, nesting ---------------------------------------------------------------

TEST_CASE("gguf without tensors: the data section starts right after the header, unpadded") {
    ws_test::GgufSpec spec;
    spec.kvs = {{"general.architecture", ws_test::val_str("bert")}, {"x", ws_test::val_u8(1)}};
    const ws_test::BuiltGguf built = ws_test::build_gguf(spec);
    REQUIRE(built.bytes.size() % 32 != 0);
    for (const uint64_t size : {ws::kUnknownSize, static_cast<uint64_t>(built.bytes.size())}) {
        const Parsed p = parse_whole(built.bytes, make_options(size));
        REQUIRE(p.status.ok());
        CHECK(p.info.data_offset == built.bytes.size());
        CHECK(p.info.data_offset == built.layout.header_end);
        CHECK(p.info.tensors.empty());
        CHECK(p.info.alignment == 32);
    }
    // Neither KVs nor tensors: a 24-byte file.
    ws_test::GgufWriter w;
    w.header(0, 0);
    const Parsed empty = parse_whole(w.bytes(), make_options(w.size(), true));
    REQUIRE(empty.status.ok());
    CHECK(empty.info.data_offset == 24);
}

TEST_CASE("gguf general.alignment sets the padding and the offset rule") {
    ws_test::GgufSpec spec = ws_test::gguf_catalogue_base();
    spec.kvs.push_back({"general.alignment", ws_test::val_u32(256)});
    const ws_test::BuiltGguf built = ws_test::build_gguf(spec);
    const Parsed p = parse_whole(built.bytes, make_options(built.bytes.size(), true));
    REQUIRE(p.status.ok());
    CHECK(p.info.alignment == 256);
    CHECK(p.info.data_offset % 256 == 0);
    CHECK(p.info.tensors[1].offset == p.info.data_offset + 256);
    // Offsets aligned to 32 but not to 256 fail.
    std::vector<uint8_t> bad = built.bytes;
    ws_test::put_field(bad, built.layout.tensors[1].offset, 64, 8);
    const Parsed q = parse_whole(bad, make_options(bad.size()));
    CHECK(q.status.code == Error::kBadAlignment);
    CHECK(q.status.offset == built.layout.tensors[1].offset);
}

TEST_CASE("gguf arrays of arrays are read up to max_array_depth") {
    using namespace ws_test;
    Value v = val_array<int16_t>(ValueType::kInt16, {-1, 2});
    for (int i = 0; i < 3; ++i) v = val_array_arr({v, val_array_str({})});  // depth 4 in all
    GgufSpec spec;
    spec.kvs = {{"deep", v}};
    const BuiltGguf built = build_gguf(spec);
    const Parsed p = parse_whole(built.bytes, make_options(built.bytes.size()));
    REQUIRE(p.status.ok());
    require_same_value(p.info.metadata[0].value, v);
    const Value* inner = &p.info.metadata[0].value;
    for (int i = 0; i < 3; ++i) inner = &inner->arrays[0];
    CHECK(inner->raw == std::vector<uint8_t>{0xff, 0xff, 2, 0});

    ws::ParseOptions o = make_options(built.bytes.size());
    o.max_array_depth = 3;
    const Parsed capped = parse_whole(built.bytes, o);
    CHECK(capped.status.code == Error::kTooLarge);
    CHECK(std::string(capped.status.what) == "kv.array.depth");
    CHECK(capped.status.offset == built.layout.kvs[0].value + 24);
}

TEST_CASE("gguf bool bytes other than 0 or 1 read as true with a warning") {
    const ws_test::GgufCorruptCase c = ws_test::make_gguf_defect(ws_test::GgufDefect::kBadBoolArrayItem);
    const Parsed p = parse_whole(c.bytes, make_options(c.bytes.size()));
    REQUIRE(p.status.ok());
    const Value& v = p.info.find("test.bools")->value;
    CHECK(v.raw == std::vector<uint8_t>{1, 0, 1});
    const ws_test::GgufCorruptCase s = ws_test::make_gguf_defect(ws_test::GgufDefect::kBadBool);
    const Parsed q = parse_whole(s.bytes, make_options(s.bytes.size()));
    REQUIRE(q.status.ok());
    CHECK(q.info.find("test.flag")->value.bits == 1);
    REQUIRE(q.info.warnings.size() == 1);
}

TEST_CASE("gguf_check_strict_layout rejects what is not a GGUF header") {
    ws::ModelInfo info;
    CHECK(ws::gguf_check_strict_layout(info).code == Error::kInternal);
}

namespace {

// One KV "a" holding `n` empty arrays of u8: 12 bytes each on disk, a whole Value each in memory.
std::vector<uint8_t> empty_arrays_file(uint64_t n, uint64_t* first_item) {
    ws_test::GgufWriter w;
    w.header(0, 1).str("a").u32(static_cast<uint32_t>(ValueType::kArray));
    w.u32(static_cast<uint32_t>(ValueType::kArray)).length(n);
    *first_item = w.size();
    for (uint64_t i = 0; i < n; ++i) w.u32(static_cast<uint32_t>(ValueType::kUint8)).length(0);
    return w.bytes();
}

}  // namespace

TEST_CASE("gguf header memory: array items may not take more than a ratio of the bytes read") {
    using M = ws::HeaderMemory;
    uint64_t first = 0;
    const std::vector<uint8_t> bytes = empty_arrays_file(1000000, &first);
    // The first item k whose Value (136 nominal bytes) passes 6 x (bytes read up to its end) + 32 MiB; the KV
    // itself (176 + 56 + 2 x key) counts against the total only.
    const uint64_t entry = M::kEntry + M::kSetNode + 2;
    uint64_t k = 0;
    while (entry + M::kValue * (k + 1) <= M::kRatio * (first + 12 * (k + 1)) + M::kSlack) ++k;
    REQUIRE(k < 1000000);
    const uint64_t expected = first + 12 * k;
    for (const uint64_t size : {static_cast<uint64_t>(bytes.size()), ws::kUnknownSize}) {
        const Parsed whole = parse_whole(bytes, make_options(size));
        CHECK(whole.status.code == Error::kTooLarge);
        CHECK(std::string(whole.status.what) == "header.memory");
        CHECK(whole.status.offset == expected);
        std::mt19937 rng(7);
        const Parsed chunked = parse_chunked(
            bytes, make_options(size), [&rng] { return size_t(1) + rng() % 100000; }, false);
        require_same_status(chunked.status, whole.status);
    }
    // 6,291,505 bytes into a 10M-array file (the figure the CLI reports for it).
    CHECK(expected == 6291505);
}

TEST_CASE("gguf header memory: the total cap of ParseOptions stops strings, KVs and tensors") {
    using M = ws::HeaderMemory;
    // Three KVs of 1 MiB strings under a 3 MiB cap: the third does not fit.
    ws_test::GgufSpec spec;
    for (const char* key : {"s.a", "s.b", "s.c"})
        spec.kvs.push_back({key, ws_test::val_str(std::string(1 << 20, 'x'))});
    const ws_test::BuiltGguf built = ws_test::build_gguf(spec);
    ws::ParseOptions options = make_options(built.bytes.size());
    options.max_header_memory = 3 << 20;
    const Parsed p = parse_whole(built.bytes, options);
    CHECK(p.status.code == Error::kTooLarge);
    CHECK(std::string(p.status.what) == "header.memory");
    CHECK(p.status.offset == built.layout.kvs[2].entry);
    // With room for exactly the three, it parses.
    options.max_header_memory = 3 * (M::kEntry + M::kSetNode + 2 * 3 + (1 << 20));
    CHECK(parse_whole(built.bytes, options).status.ok());
    options.max_header_memory -= 1;
    CHECK(parse_whole(built.bytes, options).status.offset == built.layout.kvs[2].entry);

    // Tensors: each costs kTensor + kSetNode + 2 x its name.
    ws_test::GgufSpec tensors;
    for (int i = 0; i < 10; ++i) tensors.tensors.push_back({"t" + std::to_string(i), 0, {0}, {}, 0});
    const ws_test::BuiltGguf t = ws_test::build_gguf(tensors);
    ws::ParseOptions small = make_options(t.bytes.size());
    small.max_header_memory = 9 * (M::kTensor + M::kSetNode + 2 * 2) + 1;
    const Parsed tp = parse_whole(t.bytes, small);
    CHECK(tp.status.code == Error::kTooLarge);
    CHECK(tp.status.offset == t.layout.tensors[9].entry);
}
