// SPDX-License-Identifier: MIT
// The streamed model JSON (include/weightstream/model_json.h, include/weightstream/json_writer.h) against the nlohmann
// DOM it replaced: the same bytes, pretty (`info --json`) and compact (the wasm transfer), for hand-made hostile values
// and for every model in the fixtures and the shared corpus.
#include "weightstream/model_json.h"

#include <dirent.h>

#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>

#include "support/test_util.h"
#include "weightstream/header_parser.h"
#include "weightstream/model_facts.h"
#include "weightstream/row_window.h"
#include "weightstream/utf8.h"

namespace {

using nlohmann::json;
using ws::Format;
using ws::ModelInfo;
using ws::Value;
using ws::ValueType;

// The DOM builder that `info --json` used before it streamed (model_json.cpp at e8303f0): the reference.
json reference_tensor(const ModelInfo& info, const ws::TensorInfo& t) {
    json j;
    j["name"] = t.name;
    if (!ws::utf8_valid(t.name)) j["name_hex"] = ws::hex_of(t.name);
    j["dtype"] = t.dtype_name();
    j["shape"] = t.shape();
    if (info.format == Format::kGguf) j["ne"] = std::vector<int64_t>(t.ne, t.ne + t.n_dims);
    j["offset"] = t.offset;
    j["nbytes"] = t.nbytes;
    j["n_elements"] = t.n_elements;
    j["rows"] = ws::row_count(t);
    if (info.files.size() > 1) j["file"] = info.files[t.file_index];
    return j;
}

// "facts" (include/weightstream/model_facts.h) as a DOM: the writer must serialize the same values the same way.
json reference_facts(const ModelInfo& info) {
    const ws::ModelFacts f = ws::model_facts(info);
    json j;
    j["parameter_count"] = f.parameter_count;
    j["data_bytes"] = f.data_bytes;
    j["bits_per_weight"] = std::isnan(f.bits_per_weight) ? json(nullptr) : json(f.bits_per_weight);
    j["file_type"] = f.file_type_name ? json(f.file_type_name) : json(nullptr);
    j["file_type_id"] = f.has_file_type ? json(f.file_type_id) : json(nullptr);
    j["layers"] = f.layer_count;
    return j;
}

json reference_model(const ModelInfo& info, const ws::JsonParts& parts) {
    json j;
    if (parts.metadata) {
        j["format"] = ws::format_name(info.format);
        j["version"] = info.format == Format::kGguf ? json(info.version) : json(nullptr);
        if (info.format == Format::kGguf) j["endian"] = info.big_endian ? "big" : "little";
        j["file_size"] = info.file_size;
        j["data_offset"] = info.data_offset;
        j["alignment"] = info.alignment;
        if (info.files.size() > 1) j["files"] = info.files;
        j["facts"] = reference_facts(info);
        json metadata = json::array();
        for (const ws::MetadataEntry& e : info.metadata) {
            json m;
            m["key"] = e.key;
            if (!ws::utf8_valid(e.key)) m["key_hex"] = ws::hex_of(e.key);
            if (e.value.type == ValueType::kString && !ws::utf8_valid(e.value.str)) {
                m["bytes_hex"] = ws::hex_of(e.value.str);
            }
            if (e.value.type == ValueType::kArray && e.value.item_type == ValueType::kString &&
                parts.flat_array_items) {
                json invalid = json::array();
                for (size_t i = 0; i < e.value.strings.size(); ++i) {
                    if (!ws::utf8_valid(e.value.strings[i])) {
                        invalid.push_back({{"index", i}, {"bytes_hex", ws::hex_of(e.value.strings[i])}});
                    }
                }
                if (!invalid.empty()) m["invalid_items"] = std::move(invalid);
            }
            m["type"] = ws::value_type_name(e.value.type);
            if (e.value.type == ValueType::kArray) {
                m["item_type"] = ws::value_type_name(e.value.item_type);
                m["length"] = e.value.length;
            }
            const bool flat = e.value.type == ValueType::kArray && e.value.item_type != ValueType::kArray;
            m["value"] = flat && !parts.flat_array_items ? json::array() : ws::value_to_json(e.value);
            metadata.push_back(std::move(m));
        }
        j["metadata"] = std::move(metadata);
    }
    json tensors = json::array();
    if (parts.tensors) {
        for (const ws::TensorInfo& t : info.tensors) tensors.push_back(reference_tensor(info, t));
    }
    j["tensors"] = std::move(tensors);
    if (parts.metadata && !info.warnings.empty()) {
        json warnings = json::array();
        for (const ws::Warning& w : info.warnings) {
            warnings.push_back({{"code", ws::error_name(w.code)}, {"offset", w.offset}, {"message", w.message}});
        }
        j["warnings"] = std::move(warnings);
    }
    return j;
}

// Every JsonParts the callers use, pretty and compact.
void check_same_bytes(const ModelInfo& info) {
    const ws::JsonParts all;
    const ws::JsonParts tensors_only{false, true, true};
    const ws::JsonParts transfer{true, false, false};
    for (const ws::JsonParts& parts : {all, tensors_only, transfer}) {
        for (int indent : {1, -1, 0, 4}) {
            INFO("parts " << parts.metadata << parts.flat_array_items << parts.tensors << " indent " << indent);
            CHECK(ws::model_json(info, parts, indent) == ws::json_dump(reference_model(info, parts), indent));
        }
    }
}

Value scalar(ValueType type, uint64_t bits) {
    Value v;
    v.type = type;
    v.bits = bits;
    return v;
}

uint64_t float_bits(float f) {
    uint32_t b;
    std::memcpy(&b, &f, 4);
    return b;
}

uint64_t double_bits(double d) {
    uint64_t b;
    std::memcpy(&b, &d, 8);
    return b;
}

Value scalar_array(ValueType item_type, const std::vector<uint64_t>& items) {
    Value v;
    v.type = ValueType::kArray;
    v.item_type = item_type;
    v.length = items.size();
    const uint32_t size = ws::value_type_size(item_type);
    for (uint64_t bits : items) {
        for (uint32_t b = 0; b < size; ++b) v.raw.push_back(static_cast<uint8_t>(bits >> (8 * b)));
    }
    return v;
}

Value string_array(const std::vector<std::string>& items) {
    Value v;
    v.type = ValueType::kArray;
    v.item_type = ValueType::kString;
    v.length = items.size();
    v.strings = items;
    return v;
}

ws::MetadataEntry entry(const std::string& key, Value v) {
    ws::MetadataEntry e;
    e.key = key;
    e.value = std::move(v);
    return e;
}

ModelInfo hostile_info() {
    ModelInfo info;
    info.format = Format::kGguf;
    info.version = 3;
    info.big_endian = true;
    info.file_size = 18446744073709551615ull;
    info.data_offset = 4096;
    info.alignment = 32;
    const std::string controls("a\0b\x01\x1f\x7f\b\t\n\f\r\"\\/", 15);
    info.metadata.push_back(entry("plain", ws::string_entry("", "text").value));
    info.metadata.push_back(entry(controls, ws::string_entry("", controls).value));
    info.metadata.push_back(entry("bad\xff key", ws::string_entry("", "ok").value));
    // Ill-formed: a lone continuation, an overlong, a surrogate, above U+10FFFF, a sequence cut at the end.
    info.metadata.push_back(
        entry("bad.value", ws::string_entry("", "x\x80y\xc0\xafz\xed\xa0\x80\xf4\x90\x80\x80\xe2\x82").value));
    info.metadata.push_back(
        entry("utf8", ws::string_entry("", "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80 \xc4\xa0the").value));
    info.metadata.push_back(entry("empty", ws::string_entry("", "").value));
    info.metadata.push_back(entry("b0", scalar(ValueType::kBool, 0)));
    info.metadata.push_back(entry("b1", scalar(ValueType::kBool, 1)));
    info.metadata.push_back(entry("i8", scalar(ValueType::kInt8, static_cast<uint64_t>(int64_t(-128)))));
    info.metadata.push_back(entry("i64min", scalar(ValueType::kInt64, uint64_t(1) << 63)));
    info.metadata.push_back(entry("u64max", scalar(ValueType::kUint64, ~uint64_t(0))));
    info.metadata.push_back(entry("u32", scalar(ValueType::kUint32, 4294967295u)));
    const float floats[] = {1e-5f, 0.1f, 10000.0f, -0.0f, 0.0f, 3.4028235e38f, 1.4e-45f, NAN, INFINITY, -INFINITY};
    for (size_t i = 0; i < sizeof floats / sizeof floats[0]; ++i) {
        info.metadata.push_back(entry("f32." + std::to_string(i), scalar(ValueType::kFloat32, float_bits(floats[i]))));
    }
    const double doubles[] = {1e-300, 1e300, 0.1, 123456789012345678.0, -2.5, 5e-324, -NAN, -INFINITY};
    for (size_t i = 0; i < sizeof doubles / sizeof doubles[0]; ++i) {
        info.metadata.push_back(
            entry("f64." + std::to_string(i), scalar(ValueType::kFloat64, double_bits(doubles[i]))));
    }
    std::vector<uint64_t> float_items;
    for (float f : floats) float_items.push_back(float_bits(f));
    info.metadata.push_back(entry("a.f32", scalar_array(ValueType::kFloat32, float_items)));
    info.metadata.push_back(entry("a.i16", scalar_array(ValueType::kInt16, {0x8000, 0x7fff, 0xffff, 1})));
    info.metadata.push_back(entry("a.u8", scalar_array(ValueType::kUint8, {0, 255})));
    info.metadata.push_back(entry("a.bool", scalar_array(ValueType::kBool, {1, 0})));
    info.metadata.push_back(entry("a.empty", scalar_array(ValueType::kInt32, {})));
    info.metadata.push_back(entry("a.str", string_array({"\xc4\xa0hello", "\xff", "", "\"q\"", "\xe2\x82", "ok"})));
    info.metadata.push_back(entry("a.str.empty", string_array({})));
    Value nested;
    nested.type = ValueType::kArray;
    nested.item_type = ValueType::kArray;
    nested.length = 3;
    nested.arrays = {scalar_array(ValueType::kInt8, {0xff, 1}), string_array({"x", "\xfe"}), string_array({})};
    info.metadata.push_back(entry("a.nested", nested));

    ws::TensorInfo t = ws_test::tensor("tok\xff_embd", ws::DType::Q4_0, {64, 3});
    t.offset = 0;
    t.nbytes = 108;
    info.tensors.push_back(t);
    ws::TensorInfo u = ws_test::tensor("output.weight", ws::DType::F32, {5});
    u.offset = 128;
    u.nbytes = 20;
    u.file_index = 1;
    info.tensors.push_back(u);
    info.files = {"m-00001-of-00002.gguf", "m-00002-of-00002\xff.gguf"};
    info.warnings.push_back({ws::Error::kBadAlignment, 77, "a \"warning\"\n"});
    return info;
}

void collect_models(const std::string& dir, std::vector<std::string>* out) {
    DIR* d = opendir(dir.c_str());
    if (!d) return;
    while (dirent* e = readdir(d)) {
        const std::string name = e->d_name;
        if (name == "." || name == "..") continue;
        const std::string path = dir + "/" + name;
        if (e->d_type == DT_DIR) {
            collect_models(path, out);
        } else if (name.size() > 5 &&
                   (name.rfind(".gguf") == name.size() - 5 || name.find(".safetensors") != std::string::npos)) {
            out->push_back(path);
        }
    }
    closedir(d);
}

}  // namespace

TEST_CASE("model_json: the DOM's bytes for hostile values, every part and indent") {
    ModelInfo info = hostile_info();
    check_same_bytes(info);
    info.format = Format::kSafetensors;  // version null, no endian, no ne
    info.files.clear();
    for (ws::TensorInfo& t : info.tensors) t.file_index = 0;
    check_same_bytes(info);
    check_same_bytes(ModelInfo());
}

void append_to(void* context, const char* data, size_t size) {
    static_cast<std::vector<std::string>*>(context)->emplace_back(data, size);
}

TEST_CASE("model_json: through a sink, with an ill-formed item after more than a chunk of items") {
    ModelInfo info = hostile_info();
    std::vector<std::string> many(40000, "\xc4\xa0token");
    many.push_back("\xc4");  // cut: the entry is written again with "invalid_items" first
    info.metadata.push_back(entry("tokenizer.ggml.tokens", string_array(many)));
    for (int indent : {1, -1}) {
        std::vector<std::string> pieces;
        ws::JsonWriter w(indent, append_to, &pieces);
        ws::write_model_json(info, ws::JsonParts(), &w);
        CHECK(w.finish().empty());
        std::string joined;
        for (const std::string& p : pieces) joined += p;
        CHECK(pieces.size() >= 2);  // the held entry, then the rest
        CHECK(joined == ws::json_dump(reference_model(info, ws::JsonParts()), indent));
        const bool listed =
            joined.find("\"invalid_items\": [\n    {\n     \"bytes_hex\": \"c4\",\n     \"index\": 40000") !=
            std::string::npos;
        CHECK((listed || indent < 0));
    }
}

TEST_CASE("model_json: known bytes") {
    ModelInfo info;
    info.format = Format::kGguf;
    info.version = 3;
    info.metadata.push_back(entry("k", scalar(ValueType::kFloat32, float_bits(NAN))));
    info.metadata.push_back(entry("s", ws::string_entry("", "\x01\xff").value));
    CHECK(ws::model_json(info, ws::JsonParts(), -1) ==
          "{\"alignment\":1,\"data_offset\":0,\"endian\":\"little\",\"facts\":{\"bits_per_weight\":null,"
          "\"data_bytes\":0,\"file_type\":null,\"file_type_id\":null,\"layers\":0,\"parameter_count\":0},"
          "\"file_size\":0,\"format\":\"gguf\",\"metadata\":"
          "[{\"key\":\"k\",\"type\":\"float32\",\"value\":\"NaN\"},{\"bytes_hex\":\"01ff\",\"key\":\"s\",\"type\":"
          "\"string\",\"value\":\"\\u0001\xef\xbf\xbd\"}],\"tensors\":[],\"version\":3}");
    CHECK(ws::model_json(ModelInfo(), ws::JsonParts{false, true, true}, 1) == "{\n \"tensors\": []\n}");
}

TEST_CASE("model_json: the DOM's bytes for every model of the fixtures and the shared corpus") {
    std::vector<std::string> paths;
    collect_models(WS_TESTDATA, &paths);
    collect_models(WS_SHARED_TESTDATA, &paths);
    REQUIRE(paths.size() >= 10);
    size_t parsed = 0;
    for (const std::string& path : paths) {
        INFO(path);
        const std::vector<uint8_t> bytes = ws_test::read_file(path);
        ws::ParseOptions options;
        options.file_size = bytes.size();
        ws::HeaderParser parser(options);
        if (!parser.feed(bytes.data(), bytes.size()).ok()) continue;  // the corpus holds broken files too
        ModelInfo info = parser.take_info();
        info.file_size = bytes.size();
        check_same_bytes(info);
        ++parsed;
    }
    CHECK(parsed >= 10);
}
