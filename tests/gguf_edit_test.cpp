// SPDX-License-Identifier: MIT
// include/weightstream/gguf_edit.h: --set's argument syntax, typed values and inference, and the edited layout (the
// input's alignment, every tensor re-aligned with the same bytes, in-place only when the data stays where it is).
#include "weightstream/gguf_edit.h"

#include <sys/resource.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstring>

#include "support/test_util.h"
#include "weightstream/gguf_writer.h"
#include "weightstream/header_parser.h"

using namespace ws;

namespace {

Value value_of(const std::string& text, const std::string& type = "", const Value* existing = nullptr,
               bool json = false) {
    EditValue v;
    v.text = text;
    v.type = type;
    v.json = json;
    Result<Value> r = parse_edit_value(v, existing);
    REQUIRE(r.ok());
    return r.value();
}

Status error_of(const std::string& text, const std::string& type = "", const Value* existing = nullptr,
                bool json = false) {
    EditValue v;
    v.text = text;
    v.type = type;
    v.json = json;
    Result<Value> r = parse_edit_value(v, existing);
    REQUIRE_FALSE(r.ok());
    return r.status();
}

uint32_t f32_bits(float f) {
    uint32_t b;
    std::memcpy(&b, &f, 4);
    return b;
}

ModelInfo parse(const std::vector<uint8_t>& bytes) {
    ParseOptions options;
    options.file_size = bytes.size();
    HeaderParser parser(options);
    REQUIRE(parser.feed(bytes.data(), bytes.size()).ok());
    return parser.take_info();
}

}  // namespace

TEST_CASE("parse_set_argument: KEY=VALUE[:TYPE], a suffix only when it names a type") {
    std::string key;
    EditValue v;
    REQUIRE(parse_set_argument("a.b=12:u8", &key, &v));
    CHECK(key == "a.b");
    CHECK(v.text == "12");
    CHECK(v.type == "u8");
    REQUIRE(parse_set_argument("url=http://x:8080", &key, &v));
    CHECK(v.text == "http://x:8080");
    CHECK(v.type.empty());
    REQUIRE(parse_set_argument("k=a=b", &key, &v));
    CHECK(key == "k");
    CHECK(v.text == "a=b");
    REQUIRE(parse_set_argument("s=x:str:str", &key, &v));
    CHECK(v.text == "x:str");
    CHECK(v.type == "str");
    CHECK_FALSE(parse_set_argument("novalue", &key, &v));
    CHECK_FALSE(parse_set_argument("=x", &key, &v));
}

TEST_CASE("parse_edit_value: inference for a new key") {
    Value v = value_of("42");
    CHECK(v.type == ValueType::kUint32);
    CHECK(v.bits == 42);
    v = value_of("-3");
    CHECK(v.type == ValueType::kInt32);
    CHECK(v.as_int64() == -3);
    v = value_of("5000000000");
    CHECK(v.type == ValueType::kInt64);
    CHECK(v.bits == 5000000000ull);
    v = value_of("18446744073709551615");
    CHECK(v.type == ValueType::kUint64);
    CHECK(v.bits == ~0ull);
    v = value_of("1.5");
    CHECK(v.type == ValueType::kFloat32);
    CHECK(v.bits == f32_bits(1.5f));
    CHECK(value_of("true").type == ValueType::kBool);
    CHECK(value_of("true").bits == 1);
    v = value_of("hello");
    CHECK(v.type == ValueType::kString);
    CHECK(v.str == "hello");
    // Arrays: the item type that holds every item.
    v = value_of("[1, -1, 4294967295]");
    CHECK(v.type == ValueType::kArray);
    CHECK(v.item_type == ValueType::kInt64);
    CHECK(v.length == 3);
    CHECK(v.raw.size() == 24);
    v = value_of("[1, 2.5]");
    CHECK(v.item_type == ValueType::kFloat32);
    v = value_of("[\"a\", \"b\"]");
    CHECK(v.item_type == ValueType::kString);
    CHECK(v.strings == std::vector<std::string>{"a", "b"});
}

TEST_CASE("parse_edit_value: explicit types, the existing key's type, and errors") {
    Value v = value_of("[1,2]", "i16");
    CHECK(v.item_type == ValueType::kInt16);
    CHECK(v.raw == std::vector<uint8_t>{1, 0, 2, 0});
    v = value_of("-1", "i8");
    CHECK(v.type == ValueType::kInt8);
    CHECK(v.as_int64() == -1);
    v = value_of("0.1", "f64");
    double d = 0.1;
    uint64_t bits;
    std::memcpy(&bits, &d, 8);
    CHECK(v.bits == bits);
    CHECK(value_of("12", "str").str == "12");
    CHECK(value_of("[1]", "str").str == "[1]");  // a string is verbatim, brackets and all
    CHECK(value_of("[]", "u8").length == 0);

    Value u16;
    u16.type = ValueType::kUint16;
    CHECK(value_of("7", "", &u16).type == ValueType::kUint16);
    Value str;
    str.type = ValueType::kString;
    CHECK(value_of("12", "", &str).str == "12");
    Value arr;
    arr.type = ValueType::kArray;
    arr.item_type = ValueType::kInt32;
    CHECK(value_of("[5]", "", &arr).item_type == ValueType::kInt32);

    CHECK(error_of("300", "u8").code == Error::kBadType);
    CHECK(error_of("-1", "u32").code == Error::kBadType);
    CHECK(error_of("abc", "", &u16).code == Error::kBadType);
    CHECK(error_of("5", "", &arr).code == Error::kBadType);  // an array key needs an array
    CHECK(error_of("[1,", "").code == Error::kBadJson);
    CHECK(error_of("[[1]]", "").code == Error::kBadType);
    CHECK(error_of("[1, \"a\"]", "").code == Error::kBadType);
    CHECK(error_of("[]", "").code == Error::kBadType);
    CHECK(error_of("1", "u128").code == Error::kBadType);
    CHECK(error_of("1.5", "i32").code == Error::kBadType);

    // JSON values (the package's): numbers, strings, and numeric strings for numeric types.
    CHECK(value_of("\"x\"", "", nullptr, true).str == "x");
    CHECK(value_of("\"18446744073709551615\"", "u64", nullptr, true).bits == ~0ull);
    CHECK(value_of("12", "", nullptr, true).type == ValueType::kUint32);
    CHECK(error_of("12", "str", nullptr, true).code == Error::kBadType);
    CHECK(error_of("{}", "", nullptr, true).code == Error::kBadType);
    CHECK(error_of("nope", "", nullptr, true).code == Error::kBadJson);
}

TEST_CASE("parse_edit_value: a number its type cannot hold is refused, never stored as another") {
    auto range = [](const std::string& text, const std::string& type, const Value* existing = nullptr,
                    bool json = false) {
        INFO(text << ":" << type);
        const ws::Status s = error_of(text, type, existing, json);
        CHECK(s.code == Error::kBadType);
        CHECK(std::string(s.what) == "value.range");
    };
    Value f32;
    f32.type = ValueType::kFloat32;
    range("1e39", "f32");
    range("1e39", "", &f32);  // was +Inf
    range("-1e39", "", &f32);
    range("1e39", "");      // a new key infers f32
    range("1e-50", "f32");  // was 0
    range("1e39", "", nullptr, true);
    range("[1, 1e39]", "f32");
    range("1e400", "f64");  // strtod's Inf; was stored as the string "1e400" untyped
    range("1e400", "");
    range("1e-400", "f64");
    range("18446744073709551616", "");  // 2^64: was f32 1.8e19
    range("18446744073709551616", "u64");
    range("-9223372036854775809", "i64");
    range("[1, 18446744073709551616]", "");
    range("\"18446744073709551616\"", "u64", nullptr, true);  // a BigInt's digits from the package
    range("300", "u8");
    range("-1", "u32");
    range("[1, 300]", "u8");
    // What fits is kept: the largest f32, the smallest normal and subnormal ones, 2^64 - 1 as f32 (rounded, in
    // range), "inf" and "nan" as strings.
    CHECK(value_of("3.4028234e38", "f32").bits == f32_bits(3.4028234e38f));
    CHECK(value_of("1e-45", "f32").bits == 1);
    CHECK(value_of("18446744073709551615", "f32").bits == f32_bits(18446744073709551615.0f));
    CHECK(value_of("inf").str == "inf");
    CHECK(error_of("inf", "f32").code == Error::kBadType);
}

TEST_CASE("plan_gguf_edit: the layout of the edited metadata with the input's tensors, alignment kept") {
    MetadataEntry align;
    align.key = "general.alignment";
    align.value.type = ValueType::kUint32;
    align.value.bits = 64;
    const std::vector<MetadataEntry> meta = {string_entry("general.name", "abc"), align,
                                             string_entry("general.url", "u")};
    const std::vector<TensorInfo> tensors = {ws_test::tensor("a", DType::F32, {3}),
                                             ws_test::tensor("b", DType::F16, {5, 2})};
    const std::vector<std::vector<uint8_t>> data = {std::vector<uint8_t>(12, 1), std::vector<uint8_t>(20, 2)};
    Result<std::vector<uint8_t>> file = gguf_write(meta, tensors, data);
    REQUIRE(file.ok());
    const ModelInfo in = parse(file.value());

    MetadataEdits edits;
    EditValue name;
    name.text = "abcdefghijklmnopqrstuvwxyz0123456789-abcdefghijklmnopqrstuvwxyz";
    edits.set.emplace_back("general.name", name);
    EditValue added;
    added.text = "[1,2,3]";
    edits.set.emplace_back("x.ids", added);
    edits.remove.push_back("general.url");
    Result<EditPlan> plan = plan_gguf_edit(in, edits);
    REQUIRE(plan.ok());
    const EditPlan& p = plan.value();
    REQUIRE(p.metadata.size() == 3);
    CHECK(p.metadata[0].key == "general.name");
    CHECK(p.metadata[1].key == "general.alignment");
    CHECK(p.metadata[2].key == "x.ids");
    CHECK(p.layout.alignment == 64);
    CHECK(p.layout.data_offset % 64 == 0);
    REQUIRE(p.layout.tensor_offsets.size() == 2);
    CHECK(p.layout.tensor_offsets[0] == p.layout.data_offset);
    CHECK(p.layout.tensor_offsets[1] == p.layout.data_offset + 64);
    CHECK(p.layout.tensor_padding[0] == 64 - 12);
    CHECK(p.layout.tensor_padding[1] == 64 - 20);
    // The header grew past the old padding: not in place. The same header is in place.
    CHECK(p.layout.data_offset > in.data_offset);
    CHECK_FALSE(edit_fits_in_place(in, p));
    MetadataEdits same;
    EditValue same_name;
    same_name.text = "xyz";
    same.set.emplace_back("general.name", same_name);
    Result<EditPlan> in_place = plan_gguf_edit(in, same);
    REQUIRE(in_place.ok());
    CHECK(in_place.value().layout.data_offset == in.data_offset);
    CHECK(edit_fits_in_place(in, in_place.value()));
    // The rewritten header is the input's but for the name's bytes.
    std::vector<uint8_t> expected(file.value().begin(), file.value().begin() + in.data_offset);
    const std::string old_name = "abc";
    const auto at = std::search(expected.begin(), expected.end(), old_name.begin(), old_name.end());
    REQUIRE(at != expected.end());
    std::copy(same_name.text.begin(), same_name.text.end(), at);
    CHECK(in_place.value().layout.header == expected);

    // Refusals, with the key.
    std::string key;
    MetadataEdits bad;
    bad.remove.push_back("no.such");
    Result<EditPlan> r = plan_gguf_edit(in, bad, &key);
    REQUIRE_FALSE(r.ok());
    CHECK(r.status().code == Error::kBadKey);
    CHECK(std::string(r.status().what) == "delete");
    CHECK(key == "no.such");
    MetadataEdits align_edit;
    EditValue a;
    a.text = "32";
    align_edit.set.emplace_back("general.alignment", a);
    r = plan_gguf_edit(in, align_edit, &key);
    REQUIRE_FALSE(r.ok());
    CHECK(std::string(r.status().what) == "general.alignment");
    MetadataEdits empty_key;
    empty_key.set.emplace_back("", a);
    CHECK(plan_gguf_edit(in, empty_key).status().code == Error::kBadKey);
    ModelInfo st = in;
    st.format = Format::kSafetensors;
    CHECK(plan_gguf_edit(st, same).status().code == Error::kUnsupported);
}

TEST_CASE("parse_edit_value: a large array in memory about its stored size, and one past the reader's cap refused") {
    // 4M small numbers as JSON (the package's edit() passes its values so): a JSON document and a list of parsed
    // items took ~90 bytes per item (edit() of 40M items trapped the wasm module at 3.3 GB); now two passes over
    // the text build only the value (4 bytes per u32 item).
    std::string text = "[";
    for (int i = 0; i < 4000000; ++i) text += i == 0 ? "7" : ",7";
    text += "]";
    struct rusage before, after;
    getrusage(RUSAGE_SELF, &before);
    const Value v = value_of(text, "", nullptr, true);
    getrusage(RUSAGE_SELF, &after);
    CHECK(v.length == 4000000);
    CHECK(v.item_type == ValueType::kUint32);
    CHECK(v.raw.size() == 16000000);
    INFO("peak RSS grew by " << (after.ru_maxrss - before.ru_maxrss) << " KB");
    CHECK(after.ru_maxrss - before.ru_maxrss < 64 * 1024);
    // Mixed items still infer as before; nested arrays, objects and null are not scalars; bad JSON is bad JSON.
    CHECK(value_of("[1, -1, 4294967295]", "", nullptr, true).item_type == ValueType::kInt64);
    CHECK(value_of("[1, 2.5]", "", nullptr, true).item_type == ValueType::kFloat32);
    CHECK(error_of("[1, [2]]", "", nullptr, true).code == Error::kBadType);
    CHECK(error_of("[1, {}]", "", nullptr, true).code == Error::kBadType);
    CHECK(error_of("[null]", "", nullptr, true).code == Error::kBadType);
    CHECK(error_of("[1, 2", "", nullptr, true).code == Error::kBadJson);
    CHECK(error_of("[18446744073709551615, -1]", "", nullptr, true).code == Error::kBadType);
    // More items than the GGUF reader takes in one array (ParseOptions::max_array_length): kTooLarge, not a
    // file that would be written and then refused.
    std::string huge = "[";
    huge.reserve(2 * (ParseOptions().max_array_length + 1) + 2);
    for (uint64_t i = 0; i <= ParseOptions().max_array_length; ++i) huge += i == 0 ? "0" : ",0";
    huge += "]";
    const Status s = error_of(huge, "u8", nullptr, true);
    CHECK(s.code == Error::kTooLarge);
    CHECK(std::string(s.what) == "value.length");
}
