// SPDX-License-Identifier: MIT
#include "weightstream/safetensors.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "support/safetensors_builder.h"
#include "support/safetensors_catalogue.h"
#include "support/test_util.h"
#include "weightstream/header_parser.h"

using ws::Error;
using ws::ParseOptions;
using ws::SafetensorsParser;
using ws::Status;

namespace {

struct Fixture {
    std::string path;
    nlohmann::json entry;  // the file's object in manifest.json
};

// The committed fixtures, plus the reference corpus when it sits next to the checkout.
std::vector<Fixture> fixtures() {
    std::vector<Fixture> out;
    for (const std::string& dir : {ws_test::data_path("safetensors"), ws_test::shared_path("safetensors")}) {
        if (!ws_test::file_exists(dir + "/manifest.json")) continue;
        const nlohmann::json manifest = ws_test::read_json(dir + "/manifest.json");
        for (const auto& f : manifest.at("files")) out.push_back({dir + "/" + f.at("file").get<std::string>(), f});
    }
    REQUIRE(out.size() >= 5);
    return out;
}

// The bytes in an allocation of exactly their size, so ASan flags any read past the end.
std::unique_ptr<uint8_t[]> exact_copy(const uint8_t* data, size_t size) {
    std::unique_ptr<uint8_t[]> p(new uint8_t[size]);
    if (size) std::memcpy(p.get(), data, size);
    return p;
}

ParseOptions with_size(uint64_t size) {
    ParseOptions o;
    o.file_size = size;
    return o;
}

// Feeds bytes in chunks of the given sizes (cycled) until the parser stops asking for more.
Status feed_chunked(SafetensorsParser& parser, const std::vector<uint8_t>& bytes, const std::vector<size_t>& sizes) {
    Status s = {Error::kNeedMoreData, 0, ""};
    size_t pos = 0, i = 0;
    while (s.code == Error::kNeedMoreData && pos < bytes.size()) {
        const size_t n = std::min(sizes[i++ % sizes.size()], bytes.size() - pos);
        std::unique_ptr<uint8_t[]> chunk = exact_copy(bytes.data() + pos, n);
        s = parser.feed(chunk.get(), n);
        pos += n;
    }
    return s;
}

Status parse_whole(const std::vector<uint8_t>& bytes, const ParseOptions& options, ws::ModelInfo* info = nullptr) {
    std::unique_ptr<uint8_t[]> copy = exact_copy(bytes.data(), bytes.size());
    SafetensorsParser parser(options);
    const Status s = parser.feed(copy.get(), bytes.size());
    if (info) *info = parser.take_info();
    return s;
}

void require_same(const ws::ModelInfo& a, const ws::ModelInfo& b) {
    REQUIRE(a.format == b.format);
    REQUIRE(a.version == b.version);
    REQUIRE(a.file_size == b.file_size);
    REQUIRE(a.data_offset == b.data_offset);
    REQUIRE(a.alignment == b.alignment);
    REQUIRE(a.warnings.size() == b.warnings.size());
    REQUIRE(a.metadata.size() == b.metadata.size());
    for (size_t i = 0; i < a.metadata.size(); ++i) {
        CHECK(a.metadata[i].key == b.metadata[i].key);
        CHECK(a.metadata[i].offset == b.metadata[i].offset);
        CHECK(a.metadata[i].value.type == b.metadata[i].value.type);
        CHECK(a.metadata[i].value.str == b.metadata[i].value.str);
    }
    REQUIRE(a.tensors.size() == b.tensors.size());
    for (size_t i = 0; i < a.tensors.size(); ++i) {
        const ws::TensorInfo& x = a.tensors[i];
        const ws::TensorInfo& y = b.tensors[i];
        CHECK(x.name == y.name);
        CHECK(x.dtype == y.dtype);
        CHECK(x.type_id == y.type_id);
        CHECK(x.n_dims == y.n_dims);
        CHECK(std::equal(x.ne, x.ne + 4, y.ne));
        CHECK(x.full_shape == y.full_shape);
        CHECK(x.offset == y.offset);
        CHECK(x.nbytes == y.nbytes);
        CHECK(x.n_elements == y.n_elements);
        CHECK(x.info_offset == y.info_offset);
    }
}

}  // namespace

TEST_CASE("safetensors fixtures reproduce their manifest") {
    for (const Fixture& f : fixtures()) {
        INFO(f.path);
        const std::vector<uint8_t> bytes = ws_test::read_file(f.path);
        REQUIRE(bytes.size() == f.entry.at("file_size").get<uint64_t>());
        ws::ModelInfo info;
        REQUIRE(parse_whole(bytes, with_size(bytes.size()), &info).code == Error::kOk);

        CHECK(info.format == ws::Format::kSafetensors);
        CHECK(info.version == 0);
        CHECK(info.alignment == 1);
        CHECK(info.file_size == bytes.size());
        CHECK(info.data_offset - 8 == f.entry.at("header_length").get<uint64_t>());
        CHECK(info.data_offset == f.entry.at("data_start").get<uint64_t>());

        const nlohmann::json& metadata = f.entry.at("metadata");
        if (metadata.is_null()) {
            CHECK(info.metadata.empty());
        } else {
            REQUIRE(info.metadata.size() == metadata.size());
            for (const ws::MetadataEntry& e : info.metadata) {
                CHECK(e.value.type == ws::ValueType::kString);
                CHECK(metadata.at(e.key).get<std::string>() == e.value.str);
                // The entry's offset is its key, quoted, in the header.
                const std::string quoted = "\"" + e.key + "\"";
                CHECK(std::string(bytes.begin() + e.offset, bytes.begin() + e.offset + quoted.size()) == quoted);
            }
        }

        const nlohmann::json& expected = f.entry.at("tensors");
        REQUIRE(info.tensors.size() == expected.size());
        for (const auto& want : expected) {
            const std::string name = want.at("name").get<std::string>();
            INFO(name);
            const ws::TensorInfo* t = info.find_tensor(name);
            REQUIRE(t != nullptr);
            CHECK(t->dtype_name() == want.at("dtype").get<std::string>());
            CHECK(t->type_id == static_cast<uint32_t>(t->dtype));
            const std::vector<int64_t> shape = want.at("shape").get<std::vector<int64_t>>();
            CHECK(t->shape() == shape);
            CHECK(t->n_dims == shape.size());
            for (size_t i = 0; i < shape.size(); ++i) CHECK(t->ne[i] == shape[shape.size() - 1 - i]);
            CHECK(t->offset == want.at("absolute_offsets").at(0).get<uint64_t>());
            CHECK(t->offset + t->nbytes == want.at("absolute_offsets").at(1).get<uint64_t>());
            CHECK(t->nbytes == want.at("n_bytes").get<uint64_t>());
            CHECK(t->n_elements == want.at("n_elements").get<uint64_t>());
            CHECK(t->file_index == 0);
            CHECK(ws_test::sha256_hex(bytes.data() + t->offset, t->nbytes) == want.at("sha256").get<std::string>());
            const std::string quoted = "\"" + name + "\"";
            CHECK(std::string(bytes.begin() + t->info_offset, bytes.begin() + t->info_offset + quoted.size()) ==
                  quoted);
        }
        // Data order: each tensor starts where the previous one ended, the last ends the file.
        uint64_t next = info.data_offset;
        for (const ws::TensorInfo& t : info.tensors) {
            CHECK(t.offset == next);
            next = t.offset + t.nbytes;
        }
        CHECK(next == bytes.size());
    }
}

TEST_CASE("safetensors chunked parsing equals whole-buffer parsing") {
    std::mt19937 rng(20240611);
    std::uniform_int_distribution<size_t> random_size(1, 300);
    std::vector<size_t> random_sizes(97);
    for (size_t& n : random_sizes) n = random_size(rng);
    const std::vector<std::vector<size_t>> chunkings = {{1}, {7}, {8}, {3, 5, 1, 64}, random_sizes};

    for (const Fixture& f : fixtures()) {
        INFO(f.path);
        const std::vector<uint8_t> bytes = ws_test::read_file(f.path);
        for (const ParseOptions& options : {with_size(bytes.size()), ParseOptions()}) {
            ws::ModelInfo whole;
            REQUIRE(parse_whole(bytes, options, &whole).code == Error::kOk);
            for (const std::vector<size_t>& sizes : chunkings) {
                INFO("first chunk size " << sizes[0]);
                SafetensorsParser parser(options);
                REQUIRE(feed_chunked(parser, bytes, sizes).code == Error::kOk);
                CHECK(parser.bytes_needed() == 0);
                CHECK(parser.bytes_fed() >= whole.data_offset);
                CHECK(parser.bytes_fed() < whole.data_offset + sizes[0] + 300);
                require_same(parser.info(), whole);
            }
        }
    }
}

TEST_CASE("safetensors: every truncated prefix needs more data, or is truncated when the size is known") {
    for (const Fixture& f : fixtures()) {
        INFO(f.path);
        const std::vector<uint8_t> bytes = ws_test::read_file(f.path);
        const uint64_t data_offset = f.entry.at("data_start").get<uint64_t>();
        for (size_t len = 0; len < data_offset; ++len) {
            INFO("prefix " << len);
            std::unique_ptr<uint8_t[]> prefix = exact_copy(bytes.data(), len);
            SafetensorsParser parser;
            const Status s = parser.feed(prefix.get(), len);
            REQUIRE(s.code == Error::kNeedMoreData);
            CHECK(parser.bytes_fed() == len);
            const uint64_t needed = parser.bytes_needed();
            CHECK(needed == (len < 8 ? 8 - len : data_offset - len));
            // The bytes it asks for are exactly what completes the header (or the length field).
            std::unique_ptr<uint8_t[]> rest = exact_copy(bytes.data() + len, needed);
            const Status s2 = parser.feed(rest.get(), needed);
            CHECK(s2.code == (len + needed == data_offset ? Error::kOk : Error::kNeedMoreData));

            // With the file size known, the same prefix is a truncated file.
            SafetensorsParser sized(with_size(len));
            const Status t = sized.feed(prefix.get(), len);
            CHECK(t.code == Error::kTruncated);
            CHECK(std::string(t.what) == "header_length");
            CHECK(t.offset == len);
        }
        // Cut inside the data section: the header parses, the layout check reports the end of the file.
        const uint64_t size = bytes.size();
        for (uint64_t len : {data_offset, data_offset + 1, (data_offset + size) / 2, size - 1}) {
            INFO("prefix " << len);
            std::unique_ptr<uint8_t[]> prefix = exact_copy(bytes.data(), len);
            SafetensorsParser sized(with_size(len));
            const Status t = sized.feed(prefix.get(), len);
            CHECK(t.code == Error::kTruncated);
            CHECK(std::string(t.what) == "data");
            CHECK(t.offset == len);
        }
    }
}

TEST_CASE("safetensors corrupt-file catalogue") {
    const std::vector<ws_test::CorruptSafetensors> catalogue = ws_test::safetensors_catalogue();
    REQUIRE(catalogue.size() >= 20);
    for (const ws_test::CorruptSafetensors& c : catalogue) {
        INFO(c.name);
        const ParseOptions options = c.size_known ? with_size(c.bytes.size()) : ParseOptions();
        const Status whole = parse_whole(c.bytes, options);
        CHECK(ws::error_name(whole.code) == std::string(ws::error_name(c.code)));
        CHECK(std::string(whole.what) == c.what);
        CHECK(whole.offset == c.offset);

        // Byte by byte: the same verdict, and it is sticky.
        SafetensorsParser parser(options);
        const Status chunked = feed_chunked(parser, c.bytes, {1});
        CHECK(chunked.code == whole.code);
        CHECK(chunked.offset == whole.offset);
        CHECK(std::string(chunked.what) == whole.what);
        const uint8_t more[1] = {0};
        CHECK(parser.feed(more, 1).code == whole.code);
        CHECK(parser.bytes_needed() == 0);
    }
}

TEST_CASE("safetensors accepts all 22 dtypes with their byte sizes") {
    struct Case {
        const char* dtype;
        std::vector<uint64_t> shape;
        uint64_t nbytes;
        ws::DType expected;
    };
    const Case cases[] = {
        {"BOOL", {3}, 3, ws::DType::BOOL},
        {"U8", {2, 3}, 6, ws::DType::U8},
        {"I8", {5}, 5, ws::DType::I8},
        {"I16", {5}, 10, ws::DType::I16},
        {"U16", {5}, 10, ws::DType::U16},
        {"F16", {2, 2}, 8, ws::DType::F16},
        {"BF16", {3}, 6, ws::DType::BF16},
        {"I32", {3}, 12, ws::DType::I32},
        {"U32", {3}, 12, ws::DType::U32},
        {"F32", {2, 3}, 24, ws::DType::F32},
        {"F64", {3}, 24, ws::DType::F64},
        {"I64", {3}, 24, ws::DType::I64},
        {"U64", {3}, 24, ws::DType::U64},
        {"C64", {3}, 24, ws::DType::C64},
        {"F8_E4M3", {7}, 7, ws::DType::F8_E4M3},
        {"F8_E5M2", {7}, 7, ws::DType::F8_E5M2},
        {"F8_E8M0", {7}, 7, ws::DType::F8_E8M0},
        {"F8_E4M3FNUZ", {7}, 7, ws::DType::F8_E4M3FNUZ},
        {"F8_E5M2FNUZ", {7}, 7, ws::DType::F8_E5M2FNUZ},
        {"F6_E2M3", {2, 4}, 6, ws::DType::F6_E2M3},
        {"F6_E3M2", {12}, 9, ws::DType::F6_E3M2},
        {"F4", {3, 2}, 3, ws::DType::F4},
    };
    ws_test::SafetensorsBuilder builder;
    for (const Case& c : cases) builder.tensor(std::string("t_") + c.dtype, c.dtype, c.shape, c.nbytes);
    const std::vector<uint8_t> bytes = builder.build();
    ws::ModelInfo info;
    REQUIRE(parse_whole(bytes, with_size(bytes.size()), &info).code == Error::kOk);
    REQUIRE(info.tensors.size() == 22);
    uint64_t offset = info.data_offset;
    for (size_t i = 0; i < 22; ++i) {
        const Case& c = cases[i];
        const ws::TensorInfo& t = info.tensors[i];  // added in this order, so also in data order
        INFO(c.dtype);
        CHECK(t.name == std::string("t_") + c.dtype);
        CHECK(t.dtype == c.expected);
        CHECK(t.dtype_name() == c.dtype);
        CHECK(t.type_id == static_cast<uint32_t>(c.expected));
        CHECK(t.nbytes == c.nbytes);
        CHECK(t.offset == offset);
        offset += c.nbytes;
    }
    CHECK(offset == bytes.size());
    CHECK((info.data_offset - 8) % 8 == 0);  // the builder pads like the reference writer
}

TEST_CASE("safetensors scalars, empty tensors and rank > 4") {
    ws_test::SafetensorsBuilder builder;
    builder.tensor("scalar", "F32", {}, 4)
        .tensor("empty", "F16", {0, 5}, 0)
        .tensor("conv3d", "BF16", {2, 3, 4, 5, 6}, 2 * 3 * 4 * 5 * 6 * 2)
        .tensor("six", "U8", {1, 2, 1, 3, 1, 2}, 12)
        .tensor("four", "I8", {2, 3, 4, 5}, 120);
    const std::vector<uint8_t> bytes = builder.build();
    ws::ModelInfo info;
    REQUIRE(parse_whole(bytes, with_size(bytes.size()), &info).code == Error::kOk);

    const ws::TensorInfo* scalar = info.find_tensor("scalar");
    REQUIRE(scalar);
    CHECK(scalar->n_dims == 0);
    CHECK(scalar->n_elements == 1);
    CHECK(scalar->shape().empty());

    const ws::TensorInfo* empty = info.find_tensor("empty");
    REQUIRE(empty);
    CHECK(empty->n_elements == 0);
    CHECK(empty->nbytes == 0);
    CHECK(empty->shape() == std::vector<int64_t>{0, 5});

    const ws::TensorInfo* conv = info.find_tensor("conv3d");
    REQUIRE(conv);
    CHECK(conv->n_dims == 4);
    CHECK(conv->shape() == std::vector<int64_t>{2, 3, 4, 5, 6});
    CHECK(conv->ne[0] == 6);
    CHECK(conv->ne[1] == 5);
    CHECK(conv->ne[2] == 4);
    CHECK(conv->ne[3] == 6);  // 2 x 3 folded
    CHECK(conv->n_elements == 720);

    const ws::TensorInfo* six = info.find_tensor("six");
    REQUIRE(six);
    CHECK(six->shape() == std::vector<int64_t>{1, 2, 1, 3, 1, 2});
    CHECK(six->ne[3] == 2);  // the outer 1 x 2 x 1
    CHECK(six->ne[0] * six->ne[1] * six->ne[2] * six->ne[3] == 12);

    const ws::TensorInfo* four = info.find_tensor("four");
    REQUIRE(four);
    CHECK(four->full_shape.empty());
    CHECK(four->shape() == std::vector<int64_t>{2, 3, 4, 5});
    CHECK(four->ne[3] == 2);
}

TEST_CASE("safetensors lists tensors in data order, ties by name") {
    // Zero-size tensors share an offset; the crate sorts by (begin, end) and we break ties by name.
    const std::string h =
        R"({"z":{"dtype":"U8","shape":[2],"data_offsets":[0,2]},"m":{"dtype":"U8","shape":[0],"data_offsets":[2,2]},)"
        R"("b":{"dtype":"F32","shape":[0,3],"data_offsets":[2,2]},"a":{"dtype":"U8","shape":[1],"data_offsets":[2,3]},)"
        R"("c":{"dtype":"U8","shape":[0],"data_offsets":[0,0]}})";
    const std::vector<uint8_t> bytes = ws_test::safetensors_file(h, 3);
    ws::ModelInfo info;
    REQUIRE(parse_whole(bytes, with_size(bytes.size()), &info).code == Error::kOk);
    std::vector<std::string> names;
    for (const ws::TensorInfo& t : info.tensors) names.push_back(t.name);
    CHECK(names == std::vector<std::string>{"c", "z", "b", "m", "a"});
    CHECK(info.find_tensor("a")->offset == info.data_offset + 2);
    CHECK(info.find_tensor("a")->info_offset == ws_test::at(h, "\"a\""));
}

TEST_CASE("safetensors metadata: JSON order, escapes, null and empty") {
    const std::string h = R"({"__metadata__":{"zeta":"1","alpha":"caf\u00e9 \"q\"","empty":""},)"
                          R"("t":{"dtype":"U8","shape":[1],"data_offsets":[0,1]}})";
    const std::vector<uint8_t> bytes = ws_test::safetensors_file(h, 1);
    ws::ModelInfo info;
    REQUIRE(parse_whole(bytes, with_size(bytes.size()), &info).code == Error::kOk);
    REQUIRE(info.metadata.size() == 3);
    CHECK(info.metadata[0].key == "zeta");
    CHECK(info.metadata[1].key == "alpha");
    CHECK(info.metadata[1].value.str == "caf\xc3\xa9 \"q\"");
    CHECK(info.metadata[2].value.str.empty());
    CHECK(info.metadata[1].offset == ws_test::at(h, "\"alpha\""));
    for (const ws::MetadataEntry& e : info.metadata) CHECK(e.value.type == ws::ValueType::kString);

    for (const std::string& header :
         {std::string(R"({"__metadata__":null})"), std::string(R"({"__metadata__":{}})"), std::string("{}")}) {
        INFO(header);
        const std::vector<uint8_t> b = ws_test::safetensors_file(header, 0);
        ws::ModelInfo i;
        REQUIRE(parse_whole(b, with_size(b.size()), &i).code == Error::kOk);
        CHECK(i.metadata.empty());
        CHECK(i.tensors.empty());
        CHECK(i.data_offset == b.size());
    }
}

TEST_CASE("safetensors ignores unknown tensor fields, as serde does") {
    const std::string h = R"({"t":{"extra":{"deep":[1,[2,{"x":null}]]},)"
                          R"("dtype":"U8","note":"hi","shape":[2],"more":[],"data_offsets":[0,2],"z":-1.5}})";
    const std::vector<uint8_t> bytes = ws_test::safetensors_file(h, 2);
    ws::ModelInfo info;
    REQUIRE(parse_whole(bytes, with_size(bytes.size()), &info).code == Error::kOk);
    REQUIRE(info.tensors.size() == 1);
    CHECK(info.tensors[0].nbytes == 2);
    CHECK(info.tensors[0].shape() == std::vector<int64_t>{2});
}

TEST_CASE("safetensors header padding and JSON details") {
    SECTION("padding with spaces and other JSON whitespace, as serde_json accepts") {
        for (const std::string& pad : {std::string("    "), std::string(" \n\t\r")}) {
            const std::string h = R"({"t":{"dtype":"I16","shape":[1],"data_offsets":[0,2]}})" + pad;
            const std::vector<uint8_t> bytes = ws_test::safetensors_file(h, 2);
            ws::ModelInfo info;
            REQUIRE(parse_whole(bytes, with_size(bytes.size()), &info).code == Error::kOk);
            CHECK(info.data_offset == 8 + h.size());
            CHECK(info.tensors[0].offset == 8 + h.size());
        }
    }
    SECTION("leading whitespace before the '{', as the crate accepts (test_whitespace_leading_padded_header)") {
        for (const std::string& lead : {std::string("  "), std::string("\n\t\r ")}) {
            const std::string h = lead + R"({"t":{"dtype":"I16","shape":[1],"data_offsets":[0,2]}})" + "   ";
            const std::vector<uint8_t> bytes = ws_test::safetensors_file(h, 2);
            // The format is recognised from the first 9 bytes, so HeaderParser routes it here too.
            CHECK(ws::detect_format(bytes.data(), bytes.size()) == ws::Format::kSafetensors);
            ws::HeaderParser parser(with_size(bytes.size()));
            REQUIRE(parser.feed(bytes.data(), bytes.size()).code == Error::kOk);
            const ws::ModelInfo& info = parser.info();
            CHECK(info.data_offset == 8 + h.size());
            REQUIRE(info.tensors.size() == 1);
            CHECK(info.tensors[0].offset == 8 + h.size());
            CHECK(info.tensors[0].info_offset == ws_test::at(h, "\"t\""));
        }
    }
    SECTION("a text file is not taken for a whitespace-led header") {
        const std::string text = "weights: see the README";  // byte 8 is a space, the length field is huge
        const std::vector<uint8_t> bytes(text.begin(), text.end());
        CHECK(ws::detect_format(bytes.data(), bytes.size()) == ws::Format::kUnknown);
        ws::HeaderParser parser(with_size(bytes.size()));
        const Status s = parser.feed(bytes.data(), bytes.size());
        CHECK(s.code == Error::kBadMagic);
    }
    SECTION("whitespace inside the JSON and escaped names") {
        const std::string h =
            "{ \"t\\u0031\" : { \"dtype\" : \"F\\u00332\" , \"shape\" : [ 1 , 2 ] , \"data_offsets\" : [ 0 , 8 ] } }";
        const std::vector<uint8_t> bytes = ws_test::safetensors_file(h, 8);
        ws::ModelInfo info;
        REQUIRE(parse_whole(bytes, with_size(bytes.size()), &info).code == Error::kOk);
        REQUIRE(info.tensors.size() == 1);
        CHECK(info.tensors[0].name == "t1");
        CHECK(info.tensors[0].dtype == ws::DType::F32);
        CHECK(info.tensors[0].info_offset == ws_test::at(h, "\"t\\u0031\""));
    }
    SECTION("-0 is the integer 0, as serde reads it") {
        const std::string h = R"({"t":{"dtype":"U8","shape":[-0],"data_offsets":[-0,0]}})";
        const std::vector<uint8_t> bytes = ws_test::safetensors_file(h, 0);
        REQUIRE(parse_whole(bytes, with_size(bytes.size())).code == Error::kOk);
    }
    SECTION("the size check is skipped when the file size is unknown") {
        const std::string h = R"({"t":{"dtype":"U8","shape":[4],"data_offsets":[0,4]}})";
        for (size_t data : {0, 4, 9}) {
            const std::vector<uint8_t> bytes = ws_test::safetensors_file(h, data);
            ws::ModelInfo info;
            REQUIRE(parse_whole(bytes, ParseOptions(), &info).code == Error::kOk);
            CHECK(info.file_size == 0);
            CHECK(info.tensors[0].nbytes == 4);
        }
    }
}

TEST_CASE("safetensors caps from ParseOptions") {
    ws_test::SafetensorsBuilder builder;
    builder.metadata("a", "1").metadata("b", "22").tensor("x", "U8", {1}, 1).tensor("y", "U8", {1}, 1);
    const std::vector<uint8_t> bytes = builder.build();
    const std::string header(bytes.begin() + 8, bytes.end() - 2);
    REQUIRE(parse_whole(bytes, with_size(bytes.size())).code == Error::kOk);

    ParseOptions o = with_size(bytes.size());
    o.max_header_bytes = header.size() - 1;
    Status s = parse_whole(bytes, o);
    CHECK(s.code == Error::kTooLarge);
    CHECK(std::string(s.what) == "header_length");
    o.max_header_bytes = header.size();
    CHECK(parse_whole(bytes, o).code == Error::kOk);

    o = with_size(bytes.size());
    o.max_tensor_count = 1;
    s = parse_whole(bytes, o);
    CHECK(s.code == Error::kTooLarge);
    CHECK(std::string(s.what) == "tensor count");
    CHECK(s.offset == ws_test::at(header, "\"y\""));

    o = with_size(bytes.size());
    o.max_kv_count = 1;
    s = parse_whole(bytes, o);
    CHECK(s.code == Error::kTooLarge);
    CHECK(s.offset == ws_test::at(header, "\"b\""));

    o = with_size(bytes.size());
    o.max_string_bytes = 1;
    s = parse_whole(bytes, o);
    CHECK(s.code == Error::kTooLarge);
    CHECK(std::string(s.what) == "__metadata__");
    CHECK(s.offset == ws_test::at(header, "\"22\""));
}

TEST_CASE("safetensors parser protocol: in-place parse, sticky results, take_info") {
    ws_test::SafetensorsBuilder builder;
    builder.tensor("w", "F32", {4}, 16);
    const std::vector<uint8_t> bytes = builder.build();
    SafetensorsParser parser(with_size(bytes.size()));
    CHECK(parser.bytes_needed() == 8);
    CHECK(parser.feed(bytes.data(), 0).code == Error::kNeedMoreData);
    CHECK(parser.feed(bytes.data(), 3).code == Error::kNeedMoreData);
    CHECK(parser.bytes_needed() == 5);
    CHECK(parser.feed(bytes.data() + 3, 5).code == Error::kNeedMoreData);
    const uint64_t header_end = bytes.size() - 16;
    CHECK(parser.bytes_needed() == header_end - 8);
    // The rest of the file in one go: the header completes and the data bytes are not needed.
    CHECK(parser.feed(bytes.data() + 8, bytes.size() - 8).code == Error::kOk);
    CHECK(parser.bytes_fed() == bytes.size());
    CHECK(parser.bytes_needed() == 0);
    CHECK(parser.feed(bytes.data(), 1).code == Error::kOk);  // ignored
    CHECK(parser.bytes_fed() == bytes.size());
    ws::ModelInfo info = parser.take_info();
    REQUIRE(info.tensors.size() == 1);
    CHECK(info.tensors[0].offset == header_end);
}

TEST_CASE("safetensors index: a valid index") {
    const std::string json = R"({
  "metadata": {"total_size": 123456, "format": "pt", "ratio": 1.5e3, "flag": true, "none": null,
               "nested": {"a": [1, 2]}},
  "weight_map": {
    "lm_head.weight": "model-00002-of-00002.safetensors",
    "model.embed_tokens.weight": "model-00001-of-00002.safetensors",
    "model.norm.weight": "model-00002-of-00002.safetensors"
  },
  "other": [1, {"x": 2}]
}
)";
    ws::Result<ws::SafetensorsIndex> r =
        ws::parse_safetensors_index(reinterpret_cast<const uint8_t*>(json.data()), json.size());
    REQUIRE(r.ok());
    const ws::SafetensorsIndex& index = r.value();
    CHECK(index.shard_files ==
          std::vector<std::string>{"model-00002-of-00002.safetensors", "model-00001-of-00002.safetensors"});
    REQUIRE(index.weight_map.size() == 3);
    CHECK(index.weight_map[0] == std::make_pair(std::string("lm_head.weight"), 0u));
    CHECK(index.weight_map[1] == std::make_pair(std::string("model.embed_tokens.weight"), 1u));
    CHECK(index.weight_map[2] == std::make_pair(std::string("model.norm.weight"), 0u));
    REQUIRE(index.metadata.size() == 6);
    CHECK(index.metadata[0].key == "total_size");
    CHECK(index.metadata[0].value.type == ws::ValueType::kString);
    CHECK(index.metadata[0].value.str == "123456");
    CHECK(index.metadata[0].offset == json.find("\"total_size\""));
    CHECK(index.metadata[1].value.str == "pt");
    CHECK(index.metadata[2].value.str == "1.5e3");
    CHECK(index.metadata[3].value.str == "true");
    CHECK(index.metadata[4].value.str == "null");
    CHECK(index.metadata[5].value.str == R"({"a": [1, 2]})");
}

TEST_CASE("safetensors index: hostile and malformed indexes") {
    struct Case {
        const char* name;
        std::string json;
        Error code;
        const char* what;
        std::string needle;  // the offset is where this first occurs
    };
    const Case cases[] = {
        {"parent directory", R"({"weight_map":{"a":"../secret.safetensors"}})", Error::kBadJson, "weight_map", "\"../"},
        {"absolute path", R"({"weight_map":{"a":"/etc/passwd"}})", Error::kBadJson, "weight_map", "\"/etc"},
        {"subdirectory", R"({"weight_map":{"a":"sub/x.safetensors"}})", Error::kBadJson, "weight_map", "\"sub"},
        {"backslash", R"({"weight_map":{"a":"..\\x.safetensors"}})", Error::kBadJson, "weight_map", "\"..\\"},
        {"windows path", R"({"weight_map":{"a":"C:\\x.safetensors"}})", Error::kBadJson, "weight_map", "\"C:"},
        {"hidden file", R"({"weight_map":{"a":".x.safetensors"}})", Error::kBadJson, "weight_map", "\".x"},
        {"dot", R"({"weight_map":{"a":"."}})", Error::kBadJson, "weight_map", "\".\""},
        {"empty file name", R"({"weight_map":{"a":""}})", Error::kBadJson, "weight_map", "\"\""},
        {"NUL in a file name", R"({"weight_map":{"a":"x.safetensors\u0000/../y"}})", Error::kBadJson, "weight_map",
         "\"x."},
        {"escaped slash", R"({"weight_map":{"a":"..\/x"}})", Error::kBadJson, "weight_map", "\"..\\/"},
        {"file name not a string", R"({"weight_map":{"a":1}})", Error::kBadJson, "weight_map", "1}"},
        {"duplicate tensor", R"({"weight_map":{"a":"x.safetensors","b":"x.safetensors","a":"y.safetensors"}})",
         Error::kDuplicateName, "weight_map", "\"a\":\"y"},
        {"weight_map twice", R"({"weight_map":{},"weight_map":{}})", Error::kDuplicateName, "weight_map",
         "\"weight_map\":{}}"},
        {"missing weight_map", R"({"metadata":{"total_size":1}})", Error::kBadJson, "weight_map", "{"},
        {"weight_map not an object", R"({"weight_map":["a","x"]})", Error::kBadJson, "weight_map", "["},
        {"metadata not an object", R"({"metadata":7,"weight_map":{}})", Error::kBadJson, "metadata", "7"},
        {"duplicate metadata key", R"({"metadata":{"k":1,"k":2},"weight_map":{}})", Error::kDuplicateName, "metadata",
         "\"k\":2"},
        {"not an object", R"(["weight_map"])", Error::kBadJson, "index", "["},
        {"not JSON", R"({"weight_map":{"a":"x.safetensors"})", Error::kBadJson, "index", "<end>"},
        {"trailing NUL and junk", std::string("{\"weight_map\":{}}\0junk", 22), Error::kBadJson, "index",
         std::string(1, '\0')},
        {"empty", "", Error::kBadJson, "index", "<end>"},
    };
    for (const Case& c : cases) {
        INFO(c.name);
        const uint64_t offset = c.needle == "<end>" ? c.json.size() : c.json.find(c.needle);
        REQUIRE(offset != std::string::npos);
        std::unique_ptr<uint8_t[]> copy = exact_copy(reinterpret_cast<const uint8_t*>(c.json.data()), c.json.size());
        ws::Result<ws::SafetensorsIndex> r = ws::parse_safetensors_index(copy.get(), c.json.size());
        REQUIRE_FALSE(r.ok());
        CHECK(ws::error_name(r.status().code) == std::string(ws::error_name(c.code)));
        CHECK(std::string(r.status().what) == c.what);
        CHECK(r.status().offset == offset);
    }
}

TEST_CASE("safetensors header memory: the total cap of ParseOptions stops tensors and metadata") {
    using M = ws::HeaderMemory;
    std::string h = R"({"__metadata__":{"k":"vv"},)";
    for (int i = 0; i < 10; ++i) {
        h += (i ? "," : "") + std::string("\"t") + std::to_string(i) +
             R"(":{"dtype":"U8","shape":[0],"data_offsets":[0,0]})";
    }
    h += "}";
    const std::vector<uint8_t> bytes = ws_test::safetensors_file(h, 0);
    ParseOptions options = with_size(bytes.size());
    const uint64_t metadata = M::kEntry + M::kSetNode + 2 * 1 + 2;
    options.max_header_memory = metadata + 10 * (M::kTensor + M::kSetNode + 2 * 2);
    CHECK(parse_whole(bytes, options).code == Error::kOk);
    options.max_header_memory -= 1;
    const Status s = parse_whole(bytes, options);
    CHECK(s.code == Error::kTooLarge);
    CHECK(s.what == std::string("header.memory"));
    CHECK(s.offset == ws_test::at(h, "\"t9\""));
    options.max_header_memory = metadata - 1;  // the metadata value is the last of it
    CHECK(parse_whole(bytes, options).offset == ws_test::at(h, "\"vv\""));
}
