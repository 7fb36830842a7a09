// SPDX-License-Identifier: MIT
// Corrupt safetensors files, one per defect, with the error the parser must report: code, field and the
// absolute byte offset (located in the literal header by a needle, so the expectation does not come from
// the parser). Unless size_known is false, the file size is passed to the parser.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "safetensors_builder.h"
#include "weightstream/status.h"

namespace ws_test {

struct CorruptSafetensors {
    std::string name;
    std::vector<uint8_t> bytes;
    ws::Error code;
    std::string what;
    uint64_t offset;
    bool size_known = true;
};

inline std::vector<CorruptSafetensors> safetensors_catalogue() {
    using ws::Error;
    std::vector<CorruptSafetensors> c;
    auto add = [&c](const std::string& name, std::vector<uint8_t> bytes, Error code, const std::string& what,
                    uint64_t offset, bool size_known = true) {
        c.push_back({name, std::move(bytes), code, what, offset, size_known});
    };
    // A header around one literal JSON text, no padding, data_size bytes of data.
    auto file = [](const std::string& header, size_t data_size) { return safetensors_file(header, data_size); };

    // --- the header length
    add("header length 2^64-1", safetensors_raw(UINT64_MAX, "{}", 0), Error::kTooLarge, "header_length", 0);
    add("header length 100,000,001", safetensors_raw(100000001, "{}", 0), Error::kTooLarge, "header_length", 0);
    add("header length 100,000,001, size unknown", safetensors_raw(100000001, "{}", 0), Error::kTooLarge,
        "header_length", 0, false);
    add("header length at the cap, past the end of the file", safetensors_raw(100000000, "{}", 0), Error::kTruncated,
        "header_length", 10);
    add("header length past the end of the file", safetensors_raw(64, "{}      ", 0), Error::kTruncated,
        "header_length", 16);
    add("file shorter than the length field", {2, 0, 0, 0}, Error::kTruncated, "header_length", 4);
    add("header length 0", safetensors_raw(0, "", 0), Error::kBadJson, "header", 8);

    // --- the JSON text
    add("not JSON", file("{hello}", 0), Error::kBadJson, "header", 9);
    add("JSON not an object", file("[1,2]", 0), Error::kBadJson, "header", 8);
    add("JSON a string", file("\"{}\"", 0), Error::kBadJson, "header", 8);
    add("leading whitespace before an array", file("  [1]", 0), Error::kBadJson, "header", 8 + 2);
    add("JSON cut short", file(R"({"a":{"dtype")", 0), Error::kBadJson, "header", 8 + 13);
    add("garbage after the JSON", file("{}  x", 0), Error::kBadJson, "header", 8 + 4);
    add("padded with NUL bytes", file(std::string("{}\0\0\0\0\0\0", 8), 0), Error::kBadJson, "header", 8 + 2);
    add("a second JSON object", file("{}{}", 0), Error::kBadJson, "header", 8 + 2);
    add("invalid UTF-8 in a name", file("{\"\xff\":{}}", 0), Error::kBadJson, "header", 8 + 2);
    add("a comment", file("{/**/}", 0), Error::kBadJson, "header", 9);

    // --- tensor entries
    {
        const std::string h = R"({"a":[1]})";
        add("tensor entry not an object", file(h, 0), Error::kBadJson, "tensor", at(h, "["));
    }
    {
        const std::string h = R"({"a":{"shape":[4],"data_offsets":[0,4]}})";
        add("missing dtype", file(h, 4), Error::kBadJson, "tensor.dtype", at(h, "\"a\""));
    }
    {
        const std::string h = R"({"a":{"dtype":"U8","data_offsets":[0,4]}})";
        add("missing shape", file(h, 4), Error::kBadJson, "tensor.shape", at(h, "\"a\""));
    }
    {
        const std::string h = R"({"b":{"dtype":"U8","shape":[0],"data_offsets":[0,0]},"a":{"dtype":"U8","shape":[4]}})";
        add("missing data_offsets", file(h, 4), Error::kBadJson, "tensor.data_offsets", at(h, "\"a\""));
    }
    {
        const std::string h = R"({"a":{"dtype":32,"shape":[4],"data_offsets":[0,4]}})";
        add("dtype not a string", file(h, 4), Error::kBadJson, "tensor.dtype", at(h, "32"));
    }
    {
        const std::string h = R"({"a":{"dtype":"F128","shape":[4],"data_offsets":[0,64]}})";
        add("unknown dtype", file(h, 64), Error::kBadType, "tensor.dtype", at(h, "\"F128\""));
    }
    {
        const std::string h = R"({"a":{"dtype":"f32","shape":[1],"data_offsets":[0,4]}})";
        add("dtype in lower case", file(h, 4), Error::kBadType, "tensor.dtype", at(h, "\"f32\""));
    }
    {
        const std::string h = R"({"a":{"dtype":"Q4_K","shape":[256],"data_offsets":[0,144]}})";
        add("a GGUF-only type", file(h, 144), Error::kBadType, "tensor.dtype", at(h, "\"Q4_K\""));
    }
    {
        const std::string h = R"({"a":{"dtype":"U8","shape":4,"data_offsets":[0,4]}})";
        add("shape not an array", file(h, 4), Error::kBadJson, "tensor.shape", at(h, "4,"));
    }
    {
        const std::string h = R"({"a":{"dtype":"U8","shape":[2,-2],"data_offsets":[0,4]}})";
        add("negative dim", file(h, 4), Error::kBadShape, "tensor.shape", at(h, "-2"));
    }
    {
        const std::string h = R"({"a":{"dtype":"U8","shape":[2.5],"data_offsets":[0,2]}})";
        add("non-integer dim", file(h, 2), Error::kBadJson, "tensor.shape", at(h, "2.5"));
    }
    {
        const std::string h = R"({"a":{"dtype":"U8","shape":[4.0],"data_offsets":[0,4]}})";
        add("dim written as a float", file(h, 4), Error::kBadJson, "tensor.shape", at(h, "4.0"));
    }
    {
        const std::string h = R"({"a":{"dtype":"U8","shape":["4"],"data_offsets":[0,4]}})";
        add("dim as a string", file(h, 4), Error::kBadJson, "tensor.shape", at(h, "\"4\""));
    }
    {
        const std::string h = R"({"a":{"dtype":"U8","shape":[[4]],"data_offsets":[0,4]}})";
        add("nested shape", file(h, 4), Error::kBadJson, "tensor.shape", at(h, "[4]"));
    }
    {
        const std::string h = R"({"a":{"dtype":"U8","shape":[18446744073709551616],"data_offsets":[0,4]}})";
        add("dim beyond 64 bits", file(h, 4), Error::kBadJson, "tensor.shape", at(h, "1844"));
    }
    {
        const std::string h = R"({"a":{"dtype":"U8","shape":[4294967296,4294967296],"data_offsets":[0,0]}})";
        add("shape product overflow", file(h, 0), Error::kOverflow, "tensor.shape", at(h, "[4294967296"));
    }
    {
        // The crate's checked product stops at the overflow even though a later dim is 0.
        const std::string h = R"({"a":{"dtype":"U8","shape":[4294967296,4294967296,0],"data_offsets":[0,0]}})";
        add("shape product overflow before a zero dim", file(h, 0), Error::kOverflow, "tensor.shape",
            at(h, "[4294967296"));
    }
    {
        const std::string h = R"({"a":{"dtype":"U8","shape":[0,9223372036854775808],"data_offsets":[0,0]}})";
        add("dim beyond int64 in an empty tensor", file(h, 0), Error::kOverflow, "tensor.shape", at(h, "[0,"));
    }
    {
        const std::string h = R"({"a":{"dtype":"F64","shape":[2305843009213693952],"data_offsets":[0,0]}})";
        add("element bits overflow", file(h, 0), Error::kOverflow, "tensor.shape", at(h, "[2305"));
    }
    {
        std::string dims = "1";
        for (int i = 1; i < 65; ++i) dims += ",1";
        const std::string h = R"({"a":{"dtype":"U8","shape":[)" + dims + R"(],"data_offsets":[0,1]}})";
        add("65 dims", file(h, 1), Error::kBadShape, "tensor.shape", at(h, "[1,") + 1 + 64 * 2);
    }
    {
        const std::string h = R"({"a":{"dtype":"U8","shape":[4],"data_offsets":[0,3]}})";
        add("byte size mismatch", file(h, 3), Error::kBadShape, "tensor.data_offsets", at(h, "[0,3]"));
    }
    {
        const std::string h = R"({"a":{"dtype":"F32","shape":[2,2],"data_offsets":[0,12]}})";
        add("byte size short of elements x 4", file(h, 12), Error::kBadShape, "tensor.data_offsets", at(h, "[0,12]"));
    }
    {
        const std::string h = R"({"a":{"dtype":"F4","shape":[3],"data_offsets":[0,2]}})";
        add("F4 with an odd element count", file(h, 2), Error::kBadShape, "tensor.shape", at(h, "[3]"));
    }
    {
        const std::string h = R"({"a":{"dtype":"F6_E2M3","shape":[6],"data_offsets":[0,5]}})";
        add("F6 with a count not a multiple of 4", file(h, 5), Error::kBadShape, "tensor.shape", at(h, "[6]"));
    }
    {
        const std::string h = R"({"a":{"dtype":"U8","shape":[4],"data_offsets":[0,4],"dtype":"I8"}})";
        add("a field given twice", file(h, 4), Error::kDuplicateName, "tensor.dtype", at(h, "\"dtype\"", 2));
    }

    // --- data offsets and layout
    {
        const std::string h = R"({"a":{"dtype":"U8","shape":[4],"data_offsets":[1,5]}})";
        add("offsets not starting at 0", file(h, 5), Error::kBadOffset, "tensor.data_offsets", at(h, "[1,5]"));
    }
    {
        const std::string h = R"({"a":{"dtype":"U8","shape":[4],"data_offsets":[0,4]},)"
                              R"("b":{"dtype":"U8","shape":[4],"data_offsets":[6,10]}})";
        add("a hole between tensors", file(h, 10), Error::kBadOffset, "tensor.data_offsets", at(h, "[6,10]"));
    }
    {
        const std::string h = R"({"a":{"dtype":"U8","shape":[4],"data_offsets":[0,4]},)"
                              R"("b":{"dtype":"U8","shape":[4],"data_offsets":[2,6]}})";
        add("overlapping tensors", file(h, 6), Error::kBadOffset, "tensor.data_offsets", at(h, "[2,6]"));
    }
    {
        const std::string h = R"({"b":{"dtype":"U8","shape":[4],"data_offsets":[0,4]},)"
                              R"("a":{"dtype":"U8","shape":[4],"data_offsets":[0,4]}})";
        // Sorted by (begin, end, name): "a" first, so "b" is the one that overlaps.
        add("two tensors on the same bytes", file(h, 4), Error::kBadOffset, "tensor.data_offsets", at(h, "[0,4]", 1));
    }
    {
        const std::string h = R"({"a":{"dtype":"U8","shape":[0],"data_offsets":[4,0]}})";
        add("begin > end", file(h, 4), Error::kBadOffset, "tensor.data_offsets", at(h, "[4,0]"));
    }
    {
        const std::string h = R"({"a":{"dtype":"U8","shape":[4],"data_offsets":[-1,3]}})";
        add("negative offset", file(h, 4), Error::kBadOffset, "tensor.data_offsets", at(h, "-1"));
    }
    {
        const std::string h = R"({"a":{"dtype":"U8","shape":[4],"data_offsets":[0,4,8]}})";
        add("three offsets", file(h, 8), Error::kBadJson, "tensor.data_offsets", at(h, "8]"));
    }
    {
        const std::string h = R"({"a":{"dtype":"U8","shape":[4],"data_offsets":[4]}})";
        add("one offset", file(h, 4), Error::kBadJson, "tensor.data_offsets", at(h, "[4]", 2));
    }
    {
        const std::string h = R"({"a":{"dtype":"U8","shape":[4],"data_offsets":{"begin":0,"end":4}}})";
        add("offsets as an object", file(h, 4), Error::kBadJson, "tensor.data_offsets", at(h, "{\"begin"));
    }
    {
        const std::string h = R"({"a":{"dtype":"U8","shape":[4],"data_offsets":[0.0,4]}})";
        add("offset written as a float", file(h, 4), Error::kBadJson, "tensor.data_offsets", at(h, "0.0"));
    }
    {
        const std::string h = R"({"a":{"dtype":"U8","shape":[4],"data_offsets":[0,4]}})";
        add("trailing bytes after the last tensor", file(h, 6), Error::kTrailingData, "data", 8 + h.size() + 4);
        add("data section cut short", file(h, 3), Error::kTruncated, "data", 8 + h.size() + 3);
        add("no data section at all", file(h, 0), Error::kTruncated, "data", 8 + h.size());
    }
    {
        const std::string h = R"({"a":{"dtype":"U8","shape":[4],"data_offsets":[0,4]},)"
                              R"("a":{"dtype":"U8","shape":[4],"data_offsets":[4,8]}})";
        add("duplicate tensor name", file(h, 8), Error::kDuplicateName, "tensor.name", at(h, "\"a\"", 2));
    }
    {
        // 8 I64 tensors of 2^61 - 8 bytes each end at 2^64 - 64: valid offsets, but the absolute end
        // (data offset + 2^64 - 64) does not fit in 64 bits.
        std::string h = "{";
        uint64_t offset = 0;
        const uint64_t n = (uint64_t(1) << 58) - 1;
        for (int i = 0; i < 8; ++i) {
            if (i) h += ",";
            h += "\"t" + std::to_string(i) + "\":{\"dtype\":\"I64\",\"shape\":[" + std::to_string(n) +
                 "],\"data_offsets\":[" + std::to_string(offset) + "," + std::to_string(offset + n * 8) + "]}";
            offset += n * 8;
        }
        h += "}";
        add("absolute offsets beyond 64 bits", file(h, 0), Error::kOverflow, "tensor.data_offsets",
            at(h, "[" + std::to_string(offset - n * 8)), false);
    }

    // --- __metadata__
    {
        const std::string h = R"({"__metadata__":"x","a":{"dtype":"U8","shape":[4],"data_offsets":[0,4]}})";
        add("__metadata__ a string", file(h, 4), Error::kBadJson, "__metadata__", at(h, "\"x\""));
    }
    {
        const std::string h = R"({"__metadata__":[["k","v"]]})";
        add("__metadata__ an array", file(h, 0), Error::kBadJson, "__metadata__", at(h, "[["));
    }
    {
        const std::string h = R"({"__metadata__":{"format":"pt","step":100}})";
        add("__metadata__ value a number", file(h, 0), Error::kBadJson, "__metadata__", at(h, "100"));
    }
    {
        const std::string h = R"({"__metadata__":{"format":null}})";
        add("__metadata__ value null", file(h, 0), Error::kBadJson, "__metadata__", at(h, "null"));
    }
    {
        const std::string h = R"({"__metadata__":{"config":{"layers":2}}})";
        add("__metadata__ value an object", file(h, 0), Error::kBadJson, "__metadata__", at(h, "{\"layers"));
    }
    {
        const std::string h = R"({"__metadata__":{"k":"1","k":"2"}})";
        add("duplicate metadata key", file(h, 0), Error::kDuplicateName, "__metadata__", at(h, "\"k\"", 2));
    }
    {
        const std::string h = R"({"__metadata__":{"k":"1"},"__metadata__":null})";
        add("__metadata__ given twice", file(h, 0), Error::kDuplicateName, "__metadata__",
            at(h, "\"__metadata__\"", 2));
    }
    return c;
}

}  // namespace ws_test
