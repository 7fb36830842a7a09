// SPDX-License-Identifier: MIT
#include <catch2/catch.hpp>
#include <cstring>
#include <string>
#include <vector>

#include "support/test_util.h"
#include "weightstream/gguf.h"
#include "weightstream/gguf_writer.h"
#include "weightstream/safetensors.h"
#include "weightstream/safetensors_writer.h"

using ws::DType;
using ws::Error;
using ws::MetadataEntry;
using ws::TensorInfo;
using ws::Value;
using ws::ValueType;
using ws_test::tensor;

namespace {

MetadataEntry entry(const std::string& key, Value v) {
    MetadataEntry e;
    e.key = key;
    e.value = std::move(v);
    return e;
}

Value scalar(ValueType t, uint64_t bits) {
    Value v;
    v.type = t;
    v.bits = bits;
    return v;
}

Value string_value(const std::string& s) {
    Value v;
    v.type = ValueType::kString;
    v.str = s;
    return v;
}

Value raw_array(ValueType item, std::vector<uint8_t> raw) {
    Value v;
    v.type = ValueType::kArray;
    v.item_type = item;
    v.length = raw.size() / ws::value_type_size(item);
    v.raw = std::move(raw);
    return v;
}

Value string_array(std::vector<std::string> items) {
    Value v;
    v.type = ValueType::kArray;
    v.item_type = ValueType::kString;
    v.length = items.size();
    v.strings = std::move(items);
    return v;
}

Value array_array(std::vector<Value> items) {
    Value v;
    v.type = ValueType::kArray;
    v.item_type = ValueType::kArray;
    v.length = items.size();
    v.arrays = std::move(items);
    return v;
}

void same_value(const Value& a, const Value& b) {
    REQUIRE(a.type == b.type);
    switch (a.type) {
        case ValueType::kString:
            CHECK(a.str == b.str);
            break;
        case ValueType::kArray:
            REQUIRE(a.item_type == b.item_type);
            REQUIRE(a.length == b.length);
            CHECK(a.raw == b.raw);
            CHECK(a.strings == b.strings);
            REQUIRE(a.arrays.size() == b.arrays.size());
            for (size_t i = 0; i < a.arrays.size(); ++i) same_value(a.arrays[i], b.arrays[i]);
            break;
        default:
            CHECK(a.bits == b.bits);
            break;
    }
}

ws::ModelInfo parse_gguf(const std::vector<uint8_t>& file) {
    ws::ParseOptions options;
    options.file_size = file.size();
    options.strict = true;  // ggml's layout rules, as errors
    ws::GgufParser parser(options);
    const ws::Status s = parser.feed(file.data(), file.size());
    INFO("parse status " << ws::error_name(s.code) << " at " << s.offset << " " << s.what);
    REQUIRE(s.ok());
    return parser.take_info();
}

ws::ModelInfo parse_safetensors(const std::vector<uint8_t>& file) {
    ws::ParseOptions options;
    options.file_size = file.size();
    ws::SafetensorsParser parser(options);
    const ws::Status s = parser.feed(file.data(), file.size());
    INFO("parse status " << ws::error_name(s.code) << " at " << s.offset << " " << s.what);
    REQUIRE(s.ok());
    return parser.take_info();
}

std::vector<uint8_t> bytes_of(const std::vector<uint8_t>& file, uint64_t offset, uint64_t n) {
    REQUIRE(offset + n <= file.size());
    return std::vector<uint8_t>(file.begin() + static_cast<ptrdiff_t>(offset),
                                file.begin() + static_cast<ptrdiff_t>(offset + n));
}

std::vector<uint8_t> pattern(size_t n, uint8_t seed) {
    std::vector<uint8_t> out(n);
    for (size_t i = 0; i < n; ++i) out[i] = static_cast<uint8_t>(seed + i * 7);
    return out;
}

void append_le(std::vector<uint8_t>* out, uint64_t v, int n) {
    for (int i = 0; i < n; ++i) out->push_back(static_cast<uint8_t>(v >> (8 * i)));
}
void append_str(std::vector<uint8_t>* out, const std::string& s) {
    append_le(out, s.size(), 8);
    out->insert(out->end(), s.begin(), s.end());
}

ws::Status layout_error(const std::vector<MetadataEntry>& md, const std::vector<TensorInfo>& ts) {
    return ws::gguf_layout(md, ts).status();
}

}  // namespace

// ---- GGUF --------------------------------------------------------------------------------------------------

TEST_CASE("gguf writer emits the GGUF v3 encoding byte for byte") {
    const std::vector<MetadataEntry> md = {
        entry("general.architecture", string_value("llama")), entry("x.u16", scalar(ValueType::kUint16, 0xbeef)),
        entry("x.i8", scalar(ValueType::kInt8, static_cast<uint64_t>(-2))),
        entry("x.arr", raw_array(ValueType::kInt32, {1, 0, 0, 0, 0xff, 0xff, 0xff, 0xff}))};
    const std::vector<TensorInfo> ts = {tensor("t", DType::F32, {3})};
    auto r = ws::gguf_layout(md, ts);
    REQUIRE(r.ok());
    const ws::GgufLayout& l = r.value();

    std::vector<uint8_t> expected = {'G', 'G', 'U', 'F', 3, 0, 0, 0};
    append_le(&expected, 1, 8);  // n_tensors
    append_le(&expected, 4, 8);  // n_kv
    append_str(&expected, "general.architecture");
    append_le(&expected, 8, 4);
    append_str(&expected, "llama");
    append_str(&expected, "x.u16");
    append_le(&expected, 2, 4);
    append_le(&expected, 0xbeef, 2);
    append_str(&expected, "x.i8");
    append_le(&expected, 1, 4);
    expected.push_back(0xfe);
    append_str(&expected, "x.arr");
    append_le(&expected, 9, 4);  // array
    append_le(&expected, 5, 4);  // of int32
    append_le(&expected, 2, 8);
    append_le(&expected, 1, 4);
    append_le(&expected, 0xffffffff, 4);
    append_str(&expected, "t");
    append_le(&expected, 1, 4);  // n_dims
    append_le(&expected, 3, 8);  // ne[0]
    append_le(&expected, 0, 4);  // F32
    append_le(&expected, 0, 8);  // offset
    const size_t unpadded = expected.size();
    expected.resize((unpadded + 31) / 32 * 32, 0);

    CHECK(l.header == expected);
    CHECK(l.alignment == 32);
    CHECK(l.data_offset == expected.size());
    CHECK(l.tensor_offsets == std::vector<uint64_t>{expected.size()});
    CHECK(l.tensor_nbytes == std::vector<uint64_t>{12});
    CHECK(l.tensor_padding == std::vector<uint64_t>{20});
    CHECK(l.file_size == expected.size() + 32);

    auto file = ws::gguf_write(md, ts, {pattern(12, 1)});
    REQUIRE(file.ok());
    REQUIRE(file.value().size() == l.file_size);
    CHECK(bytes_of(file.value(), 0, l.data_offset) == expected);
    CHECK(bytes_of(file.value(), l.data_offset, 12) == pattern(12, 1));
    CHECK(bytes_of(file.value(), l.data_offset + 12, 20) == std::vector<uint8_t>(20, 0));
}

TEST_CASE("gguf tensor offsets follow ggml's padding rule") {
    // Sizes 12, 34, 10, 0, 1024 and 18 bytes: each tensor starts at the previous end rounded up.
    const std::vector<TensorInfo> ts = {tensor("a", DType::F32, {3}),       tensor("b", DType::Q8_0, {32}),
                                        tensor("c", DType::F16, {5}),       tensor("empty", DType::F32, {0, 4}),
                                        tensor("d", DType::Q4_K, {256, 7}), tensor("e", DType::Q4_0, {32})};
    const std::vector<uint64_t> sizes = {12, 34, 10, 0, 144 * 7, 18};

    for (uint32_t align : {32u, 64u, 1u, 256u}) {
        INFO("alignment " << align);
        std::vector<MetadataEntry> md = {entry("general.name", string_value("pad"))};
        if (align != 32) md.push_back(entry("general.alignment", scalar(ValueType::kUint32, align)));
        auto r = ws::gguf_layout(md, ts);
        REQUIRE(r.ok());
        const ws::GgufLayout& l = r.value();
        CHECK(l.alignment == align);
        CHECK(l.header.size() % align == 0);
        CHECK(l.data_offset == l.header.size());
        CHECK(l.tensor_nbytes == sizes);
        uint64_t rel = 0;
        for (size_t i = 0; i < ts.size(); ++i) {
            CHECK(l.tensor_offsets[i] == l.data_offset + rel);
            const uint64_t padded = (sizes[i] + align - 1) / align * align;
            CHECK(l.tensor_padding[i] == padded - sizes[i]);
            rel += padded;
        }
        CHECK(l.file_size == l.data_offset + rel);

        std::vector<std::vector<uint8_t>> data;
        for (size_t i = 0; i < ts.size(); ++i) data.push_back(pattern(sizes[i], static_cast<uint8_t>(i)));
        auto file = ws::gguf_write(md, ts, data);
        REQUIRE(file.ok());
        const ws::ModelInfo info = parse_gguf(file.value());
        CHECK(info.alignment == align);
        CHECK(info.data_offset == l.data_offset);
        REQUIRE(info.tensors.size() == ts.size());
        for (size_t i = 0; i < ts.size(); ++i) {
            CHECK(info.tensors[i].offset == l.tensor_offsets[i]);
            CHECK(bytes_of(file.value(), info.tensors[i].offset, info.tensors[i].nbytes) == data[i]);
        }
    }
}

TEST_CASE("a GGUF without tensors has no padding after its header") {
    for (bool custom_alignment : {false, true}) {
        std::vector<MetadataEntry> md = {entry("general.architecture", string_value("llama"))};
        if (custom_alignment) md.push_back(entry("general.alignment", scalar(ValueType::kUint32, 64)));
        auto r = ws::gguf_layout(md, {});
        REQUIRE(r.ok());
        // magic, version, counts; key + type + string; key + type + u32
        const uint64_t exact = 24 + (8 + 20 + 4 + 8 + 5) + (custom_alignment ? 8 + 17 + 4 + 4 : 0);
        CHECK(r.value().header.size() == exact);
        CHECK(r.value().data_offset == exact);
        CHECK(r.value().file_size == exact);
        CHECK(r.value().tensor_offsets.empty());

        auto file = ws::gguf_write(md, {}, {});
        REQUIRE(file.ok());
        CHECK(file.value() == r.value().header);
        const ws::ModelInfo info = parse_gguf(file.value());
        CHECK(info.data_offset == exact);
        CHECK(info.metadata.size() == md.size());
    }
}

TEST_CASE("gguf writer rejects what ggml would reject") {
    const std::vector<MetadataEntry> md = {entry("general.name", string_value("x"))};
    const TensorInfo ok = tensor("w", DType::Q8_0, {64, 2});
    REQUIRE(ws::gguf_layout(md, {ok}).ok());

    TensorInfo t = ok;
    t.name = std::string(63, 'n');
    CHECK(layout_error(md, {t}).ok());
    t.name = std::string(64, 'n');
    CHECK(layout_error(md, {t}).code == Error::kTooLarge);

    CHECK(layout_error(md, {ok, ok}).code == Error::kDuplicateName);
    CHECK(layout_error({md[0], md[0]}, {ok}).code == Error::kDuplicateName);
    CHECK(layout_error({entry("", scalar(ValueType::kUint8, 1))}, {ok}).code == Error::kBadKey);

    t = ok;
    t.ne[0] = 48;  // not a multiple of 32
    CHECK(layout_error(md, {t}).code == Error::kBadShape);
    t = ok;
    t.ne[1] = -1;
    CHECK(layout_error(md, {t}).code == Error::kBadShape);
    t = ok;
    t.ne[2] = 3;  // beyond n_dims = 2
    CHECK(layout_error(md, {t}).code == Error::kBadShape);
    t = ok;
    t.n_dims = 5;
    CHECK(layout_error(md, {t}).code == Error::kBadShape);
    t = ok;
    t.nbytes = 99;
    CHECK(layout_error(md, {t}).code == Error::kBadShape);
    t.nbytes = 68 * 2;
    CHECK(layout_error(md, {t}).ok());
    t = tensor("big", DType::F32, {int64_t(1) << 32, int64_t(1) << 31});
    CHECK(layout_error(md, {t}).code == Error::kOverflow);
    t = tensor("big", DType::F64, {int64_t(1) << 31, int64_t(1) << 31});  // 2^62 elements x 8 bytes
    CHECK(layout_error(md, {t}).code == Error::kOverflow);

    for (DType bad : {DType::Q4_2, DType::Q4_0_4_4, DType::U8, DType::F8_E4M3, DType::kUnknown}) {
        t = ok;
        t.dtype = bad;
        CHECK(layout_error(md, {t}).code == Error::kBadType);
    }

    CHECK(layout_error({entry("general.alignment", scalar(ValueType::kUint32, 48))}, {ok}).code ==
          Error::kBadAlignment);
    CHECK(layout_error({entry("general.alignment", scalar(ValueType::kUint32, 0))}, {ok}).code == Error::kBadAlignment);
    CHECK(layout_error({entry("general.alignment", scalar(ValueType::kUint64, 32))}, {ok}).code == Error::kBadKey);

    Value bad_len = raw_array(ValueType::kUint16, {1, 2, 3, 4});
    bad_len.length = 3;
    CHECK(layout_error({entry("a", bad_len)}, {}).code == Error::kBadShape);
    Value bad_strings = string_array({"a", "b"});
    bad_strings.length = 1;
    CHECK(layout_error({entry("a", bad_strings)}, {}).code == Error::kBadShape);
    Value not_array_item = array_array({string_value("x")});
    CHECK(layout_error({entry("a", not_array_item)}, {}).code == Error::kBadType);
    CHECK(layout_error({entry("a", scalar(ValueType::kCount, 0))}, {}).code == Error::kBadType);

    // gguf_write: one data buffer per tensor, each of the tensor's size.
    CHECK(ws::gguf_write(md, {ok}, {}).status().code == Error::kBadShape);
    CHECK(ws::gguf_write(md, {ok}, {std::vector<uint8_t>(135)}).status().code == Error::kBadShape);
    CHECK(ws::gguf_write(md, {ok}, {std::vector<uint8_t>(136)}).ok());
}

TEST_CASE("gguf writer output parses back to the same metadata and tensors") {
    std::vector<MetadataEntry> md = {
        entry("general.architecture", string_value("llama")),
        entry("u8", scalar(ValueType::kUint8, 255)),
        entry("i8", scalar(ValueType::kInt8, static_cast<uint64_t>(int64_t(-128)))),
        entry("u16", scalar(ValueType::kUint16, 65535)),
        entry("i16", scalar(ValueType::kInt16, static_cast<uint64_t>(int64_t(-32768)))),
        entry("u32", scalar(ValueType::kUint32, 0xffffffffu)),
        entry("i32", scalar(ValueType::kInt32, static_cast<uint64_t>(int64_t(INT32_MIN)))),
        entry("u64", scalar(ValueType::kUint64, UINT64_MAX)),
        entry("i64", scalar(ValueType::kInt64, static_cast<uint64_t>(INT64_MIN))),
        entry("f32", scalar(ValueType::kFloat32, 0x80000000u)),            // -0.0f
        entry("f64", scalar(ValueType::kFloat64, 0x0000000000000001ull)),  // smallest subnormal
        entry("bool.true", scalar(ValueType::kBool, 1)),
        entry("bool.false", scalar(ValueType::kBool, 0)),
        entry("str.empty", string_value("")),
        entry("str.utf8", string_value("\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80 \"q\" \\ \n\t")),
        entry("arr.u8", raw_array(ValueType::kUint8, {0, 1, 2, 255})),
        entry("arr.bool", raw_array(ValueType::kBool, {1, 0, 1})),
        entry("arr.f64", raw_array(ValueType::kFloat64, pattern(24, 3))),
        entry("arr.i16.empty", raw_array(ValueType::kInt16, {})),
        entry("arr.str", string_array({"a", "", "\xe4\xb8\xad", std::string(300, 'x')})),
        entry("arr.str.empty", string_array({})),
        entry("arr.nested", array_array({raw_array(ValueType::kInt32, pattern(8, 9)), string_array({"p", "q"}),
                                         array_array({raw_array(ValueType::kUint8, {7})}), array_array({})})),
    };
    const std::vector<TensorInfo> ts = {tensor("token_embd.weight", DType::Q4_0, {64, 3}),
                                        tensor("norm.weight", DType::F32, {64}),
                                        tensor("blk.0.q.weight", DType::Q6_K, {256, 2, 1, 2}),
                                        tensor("x.bf16", DType::BF16, {7, 1, 3}), tensor("x.i64", DType::I64, {5})};
    std::vector<std::vector<uint8_t>> data;
    auto layout = ws::gguf_layout(md, ts);
    REQUIRE(layout.ok());
    for (size_t i = 0; i < ts.size(); ++i) data.push_back(pattern(layout.value().tensor_nbytes[i], uint8_t(40 + i)));
    auto file = ws::gguf_write(md, ts, data);
    REQUIRE(file.ok());

    const ws::ModelInfo info = parse_gguf(file.value());
    CHECK(info.version == 3);
    CHECK(info.file_size == file.value().size());
    CHECK(info.data_offset == layout.value().data_offset);
    CHECK(info.warnings.empty());
    REQUIRE(info.metadata.size() == md.size());
    for (size_t i = 0; i < md.size(); ++i) {
        INFO("key " << md[i].key);
        CHECK(info.metadata[i].key == md[i].key);
        same_value(info.metadata[i].value, md[i].value);
    }
    REQUIRE(info.tensors.size() == ts.size());
    for (size_t i = 0; i < ts.size(); ++i) {
        INFO("tensor " << ts[i].name);
        const TensorInfo& t = info.tensors[i];
        CHECK(t.name == ts[i].name);
        CHECK(t.dtype == ts[i].dtype);
        CHECK(t.type_id == static_cast<uint32_t>(ts[i].dtype));
        CHECK(t.n_dims == ts[i].n_dims);
        for (int j = 0; j < 4; ++j) CHECK(t.ne[j] == ts[i].ne[j]);
        CHECK(t.offset == layout.value().tensor_offsets[i]);
        CHECK(t.nbytes == layout.value().tensor_nbytes[i]);
        CHECK(bytes_of(file.value(), t.offset, t.nbytes) == data[i]);
    }
}

TEST_CASE("gguf_n_dims drops trailing 1s like ggml_n_dims") {
    const int64_t a[4] = {512, 8, 1, 1};
    const int64_t b[4] = {64, 1, 1, 1};
    const int64_t c[4] = {1, 1, 1, 1};
    const int64_t d[4] = {256, 1, 3, 1};
    const int64_t e[4] = {2, 3, 4, 5};
    CHECK(ws::gguf_n_dims(a) == 2);
    CHECK(ws::gguf_n_dims(b) == 1);
    CHECK(ws::gguf_n_dims(c) == 1);
    CHECK(ws::gguf_n_dims(d) == 3);
    CHECK(ws::gguf_n_dims(e) == 4);
}

namespace {

// Re-writes a GGUF written by ggml (or gguf-py) from its parsed header and data: the result must be the
// original file, byte for byte.
void check_gguf_rewrite(const std::string& path) {
    INFO(path);
    const std::vector<uint8_t> original = ws_test::read_file(path);
    const ws::ModelInfo info = parse_gguf(original);
    auto layout = ws::gguf_layout(info.metadata, info.tensors);
    REQUIRE(layout.ok());
    const ws::GgufLayout& l = layout.value();
    CHECK(l.data_offset == info.data_offset);
    CHECK(l.header == bytes_of(original, 0, info.data_offset));
    CHECK(l.file_size == original.size());
    REQUIRE(l.tensor_offsets.size() == info.tensors.size());
    std::vector<std::vector<uint8_t>> data;
    for (size_t i = 0; i < info.tensors.size(); ++i) {
        CHECK(l.tensor_offsets[i] == info.tensors[i].offset);
        data.push_back(bytes_of(original, info.tensors[i].offset, info.tensors[i].nbytes));
    }
    auto file = ws::gguf_write(info.metadata, info.tensors, data);
    REQUIRE(file.ok());
    CHECK(file.value() == original);
}

}  // namespace

TEST_CASE("re-writing ggml's own GGUF files reproduces them byte for byte") {
    check_gguf_rewrite(ws_test::data_path("ggml/ggml-types.gguf"));
    check_gguf_rewrite(ws_test::data_path("ggml/ggml-types-ext.gguf"));
    check_gguf_rewrite(ws_test::data_path("ggml/vocab/ggml-vocab-llama-spm.gguf"));
    check_gguf_rewrite(ws_test::data_path("ggml/vocab/ggml-vocab-bert-bge.gguf"));
    // The full corpus, when it sits next to the checkout.
    const std::string manifest = ws_test::shared_path("ggml/vocab/manifest.json");
    if (ws_test::file_exists(manifest)) {
        const nlohmann::json vocab = ws_test::read_json(manifest);
        for (const auto& f : vocab.at("files")) {
            check_gguf_rewrite(ws_test::shared_path("ggml/vocab/" + f.at("file").get<std::string>()));
        }
    }
}

// ---- safetensors -------------------------------------------------------------------------------------------

TEST_CASE("safetensors writer emits the crate's header: compact JSON padded with spaces to 8 bytes") {
    const std::vector<MetadataEntry> md = {entry("format", string_value("pt")),
                                           entry("note", string_value("a \"q\"\n\x01\xc3\xa9"))};
    const std::vector<TensorInfo> ts = {tensor("x", DType::F32, {3, 2}), tensor("y.z", DType::BF16, {5})};
    auto r = ws::safetensors_layout(md, ts);
    REQUIRE(r.ok());
    const ws::SafetensorsLayout& l = r.value();
    std::string json =
        "{\"__metadata__\":{\"format\":\"pt\",\"note\":\"a \\\"q\\\"\\n\\u0001\xc3\xa9\"},"
        "\"x\":{\"dtype\":\"F32\",\"shape\":[2,3],\"data_offsets\":[0,24]},"
        "\"y.z\":{\"dtype\":\"BF16\",\"shape\":[5],\"data_offsets\":[24,34]}}";
    json.append((8 - json.size() % 8) % 8, ' ');
    std::vector<uint8_t> expected;
    append_le(&expected, json.size(), 8);
    expected.insert(expected.end(), json.begin(), json.end());
    CHECK(std::string(l.header.begin() + 8, l.header.end()) == json);
    CHECK(l.header == expected);
    CHECK(l.data_offset % 8 == 0);
    CHECK(l.tensor_offsets == std::vector<uint64_t>{l.data_offset, l.data_offset + 24});
    CHECK(l.tensor_nbytes == std::vector<uint64_t>{24, 10});
    CHECK(l.file_size == l.data_offset + 34);

    // No metadata: no "__metadata__" key; no tensors: "{}" padded.
    auto bare = ws::safetensors_layout({}, {});
    REQUIRE(bare.ok());
    CHECK(std::string(bare.value().header.begin() + 8, bare.value().header.end()) == "{}      ");
    CHECK(bare.value().file_size == 16);
    const ws::ModelInfo info = parse_safetensors(bare.value().header);
    CHECK(info.tensors.empty());
    CHECK(info.metadata.empty());
}

TEST_CASE("safetensors writer rejects what the format cannot hold") {
    const TensorInfo ok = tensor("w", DType::F16, {4});
    REQUIRE(ws::safetensors_layout({}, {ok}).ok());
    auto err = [](const std::vector<MetadataEntry>& md, const std::vector<TensorInfo>& ts) {
        return ws::safetensors_layout(md, ts).status().code;
    };
    TensorInfo t = ok;
    for (DType bad : {DType::Q8_0, DType::Q4_K, DType::Q4_2, DType::kUnknown}) {
        t.dtype = bad;
        CHECK(err({}, {t}) == Error::kBadType);
    }
    CHECK(err({entry("n", scalar(ValueType::kUint32, 1))}, {ok}) == Error::kBadType);
    CHECK(err({entry("n", string_value("\xff"))}, {ok}) == Error::kBadJson);
    CHECK(err({entry("\xc0\x80", string_value("overlong"))}, {ok}) == Error::kBadJson);
    CHECK(err({entry("n", string_value("a")), entry("n", string_value("b"))}, {ok}) == Error::kDuplicateName);
    t = ok;
    t.name = "\xed\xa0\x80";  // a UTF-16 surrogate
    CHECK(err({}, {t}) == Error::kBadJson);
    t.name = "__metadata__";
    CHECK(err({}, {t}) == Error::kBadKey);
    CHECK(err({}, {ok, ok}) == Error::kDuplicateName);
    t = tensor("f4", DType::F4, {3});
    CHECK(err({}, {t}) == Error::kBadShape);
    t = tensor("f6", DType::F6_E2M3, {6});
    CHECK(err({}, {t}) == Error::kBadShape);
    t = tensor("neg", DType::F32, {-1});
    CHECK(err({}, {t}) == Error::kBadShape);
    t = tensor("huge", DType::F64, {int64_t(1) << 31, int64_t(1) << 31});
    CHECK(err({}, {t}) == Error::kOverflow);
    t = ok;
    t.nbytes = 7;
    CHECK(err({}, {t}) == Error::kBadShape);
    CHECK(ws::safetensors_write({}, {ok}, {std::vector<uint8_t>(7)}).status().code == Error::kBadShape);
}

TEST_CASE("safetensors writer output parses back, every dtype and rank") {
    std::vector<TensorInfo> ts = {
        tensor("scalar", DType::F32, {}),     tensor("f16", DType::F16, {3, 2}),
        tensor("bf16", DType::BF16, {5}),     tensor("f64", DType::F64, {1, 1, 2}),
        tensor("i8", DType::I8, {9}),         tensor("u64", DType::U64, {2}),
        tensor("bool", DType::BOOL, {3}),     tensor("c64", DType::C64, {2}),
        tensor("f8", DType::F8_E4M3, {4, 4}), tensor("f8e8", DType::F8_E8M0, {3}),
        tensor("f6", DType::F6_E3M2, {8}),    tensor("f4", DType::F4, {6, 2}),
        tensor("zero", DType::I32, {0, 5}),   tensor("\xe6\x9d\x83\xe9\x87\x8d", DType::U16, {2})};
    TensorInfo rank5;
    rank5.name = "conv5d";
    rank5.dtype = DType::F16;
    rank5.full_shape = {2, 1, 3, 2, 2};
    ts.push_back(rank5);
    const std::vector<MetadataEntry> md = {entry("format", string_value("pt")), entry("empty", string_value(""))};

    auto layout = ws::safetensors_layout(md, ts);
    REQUIRE(layout.ok());
    std::vector<std::vector<uint8_t>> data;
    for (size_t i = 0; i < ts.size(); ++i) data.push_back(pattern(layout.value().tensor_nbytes[i], uint8_t(i)));
    auto file = ws::safetensors_write(md, ts, data);
    REQUIRE(file.ok());
    CHECK(file.value().size() == layout.value().file_size);

    const ws::ModelInfo info = parse_safetensors(file.value());
    CHECK(info.data_offset == layout.value().data_offset);
    REQUIRE(info.metadata.size() == md.size());
    for (size_t i = 0; i < md.size(); ++i) {
        CHECK(info.metadata[i].key == md[i].key);
        same_value(info.metadata[i].value, md[i].value);
    }
    REQUIRE(info.tensors.size() == ts.size());
    for (size_t i = 0; i < ts.size(); ++i) {
        INFO("tensor " << ts[i].name);
        const TensorInfo& t = info.tensors[i];
        CHECK(t.name == ts[i].name);
        CHECK(t.dtype == ts[i].dtype);
        CHECK(t.shape() == ts[i].shape());
        CHECK(t.offset == layout.value().tensor_offsets[i]);
        CHECK(t.nbytes == layout.value().tensor_nbytes[i]);
        CHECK(bytes_of(file.value(), t.offset, t.nbytes) == data[i]);
    }
    CHECK(info.tensors[0].n_elements == 1);             // shape [] is a scalar
    CHECK(layout.value().tensor_nbytes[10] == 6);       // 8 x 6 bits
    CHECK(layout.value().tensor_nbytes[11] == 6);       // 12 x 4 bits
    CHECK(layout.value().tensor_nbytes[14] == 2 * 24);  // 24 f16 elements
}

TEST_CASE("every committed safetensors file re-writes to the same table and data") {
    const nlohmann::json manifest = ws_test::read_json(ws_test::data_path("safetensors/manifest.json"));
    const auto& files = manifest.at("files");
    REQUIRE(files.size() == 5);
    int identical = 0;
    for (const auto& f : files) {
        const std::string name = f.at("file").get<std::string>();
        INFO(name);
        const std::vector<uint8_t> original = ws_test::read_file(ws_test::data_path("safetensors/" + name));
        const ws::ModelInfo info = parse_safetensors(original);
        std::vector<std::vector<uint8_t>> data;
        for (const TensorInfo& t : info.tensors) data.push_back(bytes_of(original, t.offset, t.nbytes));

        auto written = ws::safetensors_write(info.metadata, info.tensors, data);
        REQUIRE(written.ok());
        const ws::ModelInfo again = parse_safetensors(written.value());
        CHECK(again.data_offset % 8 == 0);
        CHECK(again.file_size == written.value().size());
        REQUIRE(again.metadata.size() == info.metadata.size());
        for (size_t i = 0; i < info.metadata.size(); ++i) {
            CHECK(again.metadata[i].key == info.metadata[i].key);
            same_value(again.metadata[i].value, info.metadata[i].value);
        }
        REQUIRE(again.tensors.size() == info.tensors.size());
        for (size_t i = 0; i < info.tensors.size(); ++i) {
            const TensorInfo& a = again.tensors[i];
            const TensorInfo& b = info.tensors[i];
            INFO(b.name);
            CHECK(a.name == b.name);
            CHECK(a.dtype == b.dtype);
            CHECK(a.shape() == b.shape());
            CHECK(a.nbytes == b.nbytes);
            // The original data section is contiguous from 0 too, so relative offsets are unchanged.
            CHECK(a.offset - again.data_offset == b.offset - info.data_offset);
            CHECK(ws_test::sha256_hex(written.value().data() + a.offset, a.nbytes) ==
                  ws_test::sha256_hex(original.data() + b.offset, b.nbytes));
        }
        // Files the crate wrote with keys in data order and no metadata come out byte-identical.
        if (written.value() == original) ++identical;
    }
    CHECK(identical == 3);  // jfk-codes, mel_filters, voices
}
