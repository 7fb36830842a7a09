// SPDX-License-Identifier: MIT
// What a header parser produces: the metadata and the tensor table of one file (or, combined, of a
// split/sharded model). This is the C++ shape of ARCHITECTURE.md's `info --json` object.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "weightstream/dtype.h"
#include "weightstream/status.h"

namespace ws {

enum class Format : uint8_t { kUnknown, kGguf, kSafetensors };
const char* format_name(Format f);  // "gguf", "safetensors", "unknown"

// GGUF metadata value types, numbered as on the wire (gguf.h `enum gguf_type`).
enum class ValueType : uint32_t {
    kUint8 = 0,
    kInt8 = 1,
    kUint16 = 2,
    kInt16 = 3,
    kUint32 = 4,
    kInt32 = 5,
    kFloat32 = 6,
    kBool = 7,
    kString = 8,
    kArray = 9,
    kUint64 = 10,
    kInt64 = 11,
    kFloat64 = 12,
    kCount = 13,
};
const char* value_type_name(ValueType t);  // ARCHITECTURE.md names: "uint8" ... "string", "array"
uint32_t value_type_size(ValueType t);     // bytes of a scalar; 0 for string and array

// One metadata value. Scalars live in `bits`; arrays keep their items compactly (a 150k-token
// vocabulary is one vector of strings, not 150k Values).
struct Value {
    ValueType type = ValueType::kUint8;
    uint64_t bits = 0;  // scalar: unsigned ints zero-extended, signed ints sign-extended (two's
                        // complement), float32/float64 as their IEEE bits, bool 0/1
    std::string str;    // kString: the bytes as stored (not validated as UTF-8)

    // kArray only:
    ValueType item_type = ValueType::kUint8;
    uint64_t length = 0;               // number of items
    std::vector<uint8_t> raw;          // scalar items: little-endian, value_type_size(item_type) each
    std::vector<std::string> strings;  // string items
    std::vector<Value> arrays;         // array items (nesting depth is capped by the parser)

    int64_t as_int64() const { return static_cast<int64_t>(bits); }
    uint64_t as_uint64() const { return bits; }
    double as_double() const;  // any numeric scalar as a double (float32 widened exactly)
    // Item i (< length) of an array of scalars, as a scalar Value, and as its bits alone (as `bits` holds them).
    Value scalar_item(uint64_t i) const;
    uint64_t item_bits(uint64_t i) const;
};

struct MetadataEntry {
    std::string key;
    Value value;
    uint64_t offset = 0;  // absolute offset of the entry (its key length) in the file
};

// A metadata entry holding a string (safetensors __metadata__, converted GGUF metadata).
MetadataEntry string_entry(const std::string& key, const std::string& value);

struct TensorInfo {
    std::string name;
    DType dtype = DType::kUnknown;
    uint32_t type_id = 0;  // GGUF: the type id as stored (names UNKNOWN(<id>) types); safetensors: the DType value
    uint32_t n_dims = 0;   // dims in ne (0..4); a safetensors tensor of rank > 4 has 4, see full_shape
    int64_t ne[4] = {1, 1, 1, 1};  // ggml order: ne[0] innermost (contiguous); unused dims are 1
    // Only for rank > 4 (safetensors allows any rank; 5-D conv weights exist): every dim, outermost first.
    // ne then holds the three innermost dims and, in ne[3], the product of the outer ones, so code that
    // walks ne (rows of ne[0] elements) still sees every element; shape() returns full_shape.
    std::vector<int64_t> full_shape;
    uint64_t offset = 0;  // absolute byte offset of the data in its file
    uint64_t nbytes = 0;  // bytes of data; for unknown types inferred from the next tensor (or 0)
    uint64_t n_elements = 0;
    uint32_t file_index = 0;   // which part of a split/sharded model holds the data
    uint64_t info_offset = 0;  // absolute offset of the tensor's header entry (for error messages)

    // The name this tensor's type is listed with ("Q4_K", "UNKNOWN(77)", "F8_E4M3").
    std::string dtype_name() const;
    // Dims outermost first (numpy/PyTorch order): n_dims of them, or full_shape when that is set.
    std::vector<int64_t> shape() const;
};

// A finding that does not make the file unreadable (a lenient-mode layout oddity, a NaN scale).
struct Warning {
    Error code = Error::kOk;  // what kind of rule the finding is about
    uint64_t offset = 0;
    std::string message;
};

struct ModelInfo {
    Format format = Format::kUnknown;
    uint32_t version = 0;      // GGUF version; 0 for safetensors (JSON null)
    bool big_endian = false;   // GGUF files written for big-endian hosts
    uint64_t file_size = 0;    // bytes of the file (sum over parts for a combined model)
    uint64_t data_offset = 0;  // absolute offset of the data section
    uint32_t alignment = 1;    // GGUF general.alignment (default 32); safetensors 1
    std::vector<MetadataEntry> metadata;
    std::vector<TensorInfo> tensors;
    std::vector<Warning> warnings;
    std::vector<std::string> files;  // part file names of a combined model, indexed by file_index

    // The metadata entry with this key, or nullptr.
    const MetadataEntry* find(const std::string& key) const;
    // The tensor with this name, or nullptr.
    const TensorInfo* find_tensor(const std::string& name) const;
};

}  // namespace ws
