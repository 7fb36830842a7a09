// SPDX-License-Identifier: MIT
#include "weightstream/gguf.h"

#include <algorithm>
#include <cstring>
#include <numeric>
#include <string>
#include <unordered_set>
#include <utility>

#include "weightstream/dtype.h"

namespace ws {
namespace {

constexpr uint64_t kDefaultAlignment = 32;
constexpr uint32_t kMaxDims = 4;
constexpr uint64_t kMaxTensorName = 63;  // ggml: GGML_MAX_NAME is 64 including the terminating NUL
constexpr uint32_t kValueTypeCount = static_cast<uint32_t>(ValueType::kCount);

// v1 wrote string lengths, counts and dims as u32; v2 widened them to 64 bits.
uint64_t length_width(uint32_t version) {
    return version == 1 ? 4 : 8;
}

bool has_layout(DType t) {
    return dtype_traits(t).block_elems != 0;
}

bool checked_mul(uint64_t a, uint64_t b, uint64_t* out) {
    if (a != 0 && b > UINT64_MAX / a) return false;
    *out = a * b;
    return true;
}

bool align_up(uint64_t x, uint64_t alignment, uint64_t* out) {
    const uint64_t rem = x % alignment;
    if (rem == 0) {
        *out = x;
        return true;
    }
    if (x > UINT64_MAX - (alignment - rem)) return false;
    *out = x + (alignment - rem);
    return true;
}

uint64_t load_uint(const uint8_t* p, uint32_t width, bool big_endian) {
    uint64_t v = 0;
    for (uint32_t i = 0; i < width; ++i) {
        const uint32_t shift = big_endian ? (width - 1 - i) * 8 : i * 8;
        v |= static_cast<uint64_t>(p[i]) << shift;
    }
    return v;
}

// Absolute positions of a tensor entry's fields, recomputed from the parsed entry so that errors found
// after the whole directory is read (and by gguf_check_strict_layout) can still point at the field.
struct TensorFields {
    uint64_t n_dims;
    uint64_t ne;
    uint64_t type;
    uint64_t offset;
};

TensorFields tensor_fields(const TensorInfo& t, uint32_t version) {
    TensorFields f;
    f.n_dims = t.info_offset + length_width(version) + t.name.size();
    f.ne = f.n_dims + 4;
    f.type = f.ne + static_cast<uint64_t>(t.n_dims) * (version == 1 ? 4 : 8);
    f.offset = f.type + 4;
    return f;
}

// A bounds-checked cursor over the bytes available now (one chunk or the carry-over buffer), placed at
// an absolute file offset. A read that cannot be satisfied fails with, in this order: kTruncated when it
// would pass the declared file size, kTooLarge when it would pass max_header_bytes, and kNeedMoreData
// (recording how far the bytes must reach) when the bytes have not arrived yet. The order makes every
// outcome independent of how the file was chunked.
class Cursor {
public:
    Cursor(const uint8_t* data, size_t size, uint64_t base, bool big_endian, const ParseOptions& options)
        : data_(data), size_(size), base_(base), big_endian_(big_endian), options_(options) {}

    uint64_t offset() const { return base_ + pos_; }
    size_t position() const { return pos_; }
    const Status& status() const { return status_; }
    uint64_t need_end() const { return need_end_; }
    void set_big_endian(bool big_endian) { big_endian_ = big_endian; }
    bool big_endian() const { return big_endian_; }

    // Bytes readable now without failing: limited by the window, the file size and the header cap.
    uint64_t room() const {
        uint64_t r = size_ - pos_;
        const uint64_t q = offset();
        if (options_.file_size != kUnknownSize) r = std::min(r, q > options_.file_size ? 0 : options_.file_size - q);
        return std::min(r, q > options_.max_header_bytes ? 0 : options_.max_header_bytes - q);
    }

    bool ensure(uint64_t n, const char* what) {
        const uint64_t q = offset();
        if (options_.file_size != kUnknownSize && (q > options_.file_size || n > options_.file_size - q)) {
            return fail(make_error(Error::kTruncated, q, what));
        }
        if (q > options_.max_header_bytes || n > options_.max_header_bytes - q) {
            return fail(make_error(Error::kTooLarge, q, "header.size"));
        }
        if (n > size_ - pos_) {
            need_end_ = q + n;
            return fail(make_error(Error::kNeedMoreData, q, what));
        }
        return true;
    }

    bool bytes(uint64_t n, const char* what, const uint8_t** out) {
        if (!ensure(n, what)) return false;
        *out = data_ + pos_;
        pos_ += static_cast<size_t>(n);
        return true;
    }

    bool uint(uint32_t width, const char* what, uint64_t* out) {
        const uint8_t* p;
        if (!bytes(width, what, &p)) return false;
        *out = load_uint(p, width, big_endian_);
        return true;
    }

    bool u32(const char* what, uint32_t* out) {
        uint64_t v;
        if (!uint(4, what, &v)) return false;
        *out = static_cast<uint32_t>(v);
        return true;
    }

private:
    bool fail(Status s) {
        status_ = s;
        return false;
    }

    const uint8_t* data_;
    size_t size_;
    size_t pos_ = 0;
    uint64_t base_;
    bool big_endian_;
    const ParseOptions& options_;
    Status status_;
    uint64_t need_end_ = 0;
};

// Inside a parse step: a read that fails ends the step with the cursor's status.
#define WS_GGUF_READ(expr)              \
    do {                                \
        if (!(expr)) return c.status(); \
    } while (0)

enum class Phase : uint8_t { kHeader, kMetadata, kTensors, kDone, kFailed };

// An array value being read item by item (arrays of arrays nest these).
struct ArrayFrame {
    Value value;
    uint64_t items = 0;        // items read so far
    uint64_t item_bytes = 0;   // bytes those items took (string items only: what bytes_expected() averages)
    uint32_t depth = 1;        // 1 for the value of a KV
    bool bool_warned = false;  // one warning per array for bool items other than 0/1
};

Warning make_warning(Error code, uint64_t offset, const char* what, const std::string& detail) {
    Warning w;
    w.code = code;
    w.offset = offset;
    w.message = std::string(what) + ": " + detail;
    return w;
}

// The ggml layout check, shared by strict mode (errors) and lenient mode (a warning for the first
// deviation). With stop_at_unsized, a tensor whose type has no known size fails the check. *bad receives
// the index of the offending tensor.
Status check_layout(const ModelInfo& info, bool stop_at_unsized, size_t* bad) {
    if (info.format != Format::kGguf || info.alignment == 0) {
        return make_error(Error::kInternal, 0, "gguf_check_strict_layout");
    }
    uint64_t expected = 0;
    for (size_t i = 0; i < info.tensors.size(); ++i) {
        const TensorInfo& t = info.tensors[i];
        *bad = i;
        const TensorFields f = tensor_fields(t, info.version);
        if (stop_at_unsized && !has_layout(t.dtype)) return make_error(Error::kBadType, f.type, "tensor.type");
        if (t.offset < info.data_offset || t.offset - info.data_offset != expected) {
            return make_error(Error::kBadOffset, f.offset, "tensor.offset");
        }
        uint64_t padded;
        if (!align_up(t.nbytes, info.alignment, &padded) || padded > UINT64_MAX - expected) {
            return make_error(Error::kOverflow, f.offset, "tensor.offset");
        }
        expected += padded;
    }
    // ggml reads the whole padded data section (the last tensor's padding included) in one read, so a file
    // that ends inside that padding fails to load there. An unknown size (file_size 0) is not judged.
    if (!info.tensors.empty() && info.file_size != 0 &&
        (info.data_offset > info.file_size || expected > info.file_size - info.data_offset)) {
        *bad = info.tensors.size() - 1;
        return make_error(Error::kTruncated, info.file_size, "data.padding");
    }
    return ok_status();
}

}  // namespace

struct GgufParser::State {
    explicit State(const ParseOptions& o) : options(o), memory(o.max_header_memory) {
        status = make_error(Error::kNeedMoreData, 0, "header.magic");
    }

    Status feed(const uint8_t* data, size_t size);
    Status run(const uint8_t* data, size_t size, uint64_t base, size_t* consumed);
    Status conclude(const Status& s);
    Status step(Cursor& c);
    Status parse_header(Cursor& c);
    Status parse_kv(Cursor& c);
    Status parse_array_item(Cursor& c);
    Status parse_tensor(Cursor& c);
    Status read_string(Cursor& c, const char* what, uint64_t max_len, std::string* out);
    Status read_array_header(Cursor& c, uint32_t depth, Value* out);
    Status check_key_type(const std::string& key, ValueType type, uint64_t type_offset) const;
    void finish_array();
    Status charge(uint64_t bytes, uint64_t consumed, uint64_t item_offset);
    Status charge_counted(uint64_t bytes, uint64_t item_offset);
    Status finish_header(uint64_t header_end);

    ParseOptions options;
    HeaderMemory memory;  // what info and the sets below hold, in nominal bytes
    ModelInfo info;
    Phase phase = Phase::kHeader;
    Status status;               // the last kNeedMoreData, or the sticky error
    uint64_t need_end = 4;       // absolute offset the bytes must reach before parsing again (the magic)
    uint64_t fed = 0;            // bytes passed to feed()
    std::vector<uint8_t> carry;  // bytes of the item being parsed that arrived in earlier chunks
    uint64_t checkpoint = 0;     // absolute offset of the first unparsed byte (carry[0] when not empty)

    bool big_endian = false;
    uint64_t n_tensors = 0;
    uint64_t n_kv = 0;
    uint64_t alignment = kDefaultAlignment;
    std::unordered_set<std::string> keys;
    std::unordered_set<std::string> names;
    MetadataEntry pending;            // the KV whose array value is being read
    std::vector<ArrayFrame> frames;   // that array and the arrays nested in it, innermost last
    uint64_t tensor_entry_bytes = 0;  // bytes the tensor entries read so far took
};

Status GgufParser::State::feed(const uint8_t* data, size_t size) {
    fed += size;
    if (phase == Phase::kDone) return ok_status();
    if (phase == Phase::kFailed) return status;
    // Bytes must reach need_end before parsing again, unless the file ends sooner (then parsing reports
    // the truncation).
    const auto short_of_need = [this](uint64_t end) { return end < need_end && end < options.file_size; };
    while (true) {
        if (!carry.empty()) {
            // Complete the pending item from this chunk, copying no more than it needs.
            uint64_t end = checkpoint + carry.size();
            if (end < need_end && size > 0) {
                const size_t take = static_cast<size_t>(std::min<uint64_t>(size, need_end - end));
                carry.insert(carry.end(), data, data + take);
                data += take;
                size -= take;
                end += take;
            }
            if (short_of_need(end)) return status;
            size_t consumed = 0;
            const Status s = run(carry.data(), carry.size(), checkpoint, &consumed);
            carry.erase(carry.begin(), carry.begin() + static_cast<std::ptrdiff_t>(consumed));
            checkpoint += consumed;
            if (s.code != Error::kNeedMoreData) return conclude(s);
            if (size == 0) return s;
            continue;
        }
        // Nothing carried over: parse in place, keep only the unparsed tail.
        if (short_of_need(checkpoint + size)) {
            carry.assign(data, data + size);
            return status;
        }
        size_t consumed = 0;
        const Status s = run(data, size, checkpoint, &consumed);
        checkpoint += consumed;
        if (s.code != Error::kNeedMoreData) return conclude(s);
        carry.assign(data + consumed, data + size);
        return s;
    }
}

Status GgufParser::State::conclude(const Status& s) {
    phase = s.ok() ? Phase::kDone : Phase::kFailed;
    status = s;
    std::vector<uint8_t>().swap(carry);
    return s;
}

Status GgufParser::State::run(const uint8_t* data, size_t size, uint64_t base, size_t* consumed) {
    while (phase != Phase::kDone) {
        Cursor c(data + *consumed, size - *consumed, base + *consumed, big_endian, options);
        const Status s = step(c);
        if (!s.ok()) {
            if (s.code == Error::kNeedMoreData) {
                need_end = c.need_end();
                status = s;
            }
            return s;
        }
        *consumed += c.position();
    }
    return ok_status();
}

// Parses one item (the fixed header, a KV up to its value or array header, a run of array items, one
// tensor entry). An item changes the parser's state only once it has been read completely, so an item
// cut by the end of the available bytes is simply parsed again from its start when more arrive.
Status GgufParser::State::step(Cursor& c) {
    switch (phase) {
        case Phase::kHeader:
            WS_TRY(parse_header(c));
            break;
        case Phase::kMetadata:
            WS_TRY(frames.empty() ? parse_kv(c) : parse_array_item(c));
            break;
        case Phase::kTensors:
            WS_TRY(parse_tensor(c));
            break;
        case Phase::kDone:
        case Phase::kFailed:
            return make_error(Error::kInternal, c.offset(), "gguf.phase");
    }
    if (phase == Phase::kMetadata && frames.empty() && info.metadata.size() == n_kv) {
        info.alignment = static_cast<uint32_t>(alignment);
        phase = Phase::kTensors;
    }
    if (phase == Phase::kTensors && info.tensors.size() == n_tensors) return finish_header(c.offset());
    return ok_status();
}

Status GgufParser::State::parse_header(Cursor& c) {
    const uint8_t* magic;
    WS_GGUF_READ(c.bytes(4, "header.magic", &magic));
    if (std::memcmp(magic, "GGUF", 4) != 0) return make_error(Error::kBadMagic, 0, "header.magic");

    // The magic is the same bytes in both byte orders; a byte-swapped version means a big-endian file.
    const uint8_t* vbytes;
    WS_GGUF_READ(c.bytes(4, "header.version", &vbytes));
    uint32_t version = static_cast<uint32_t>(load_uint(vbytes, 4, false));
    bool be = false;
    if (version < 1 || version > 3) {
        const uint32_t swapped = static_cast<uint32_t>(load_uint(vbytes, 4, true));
        if (swapped < 1 || swapped > 3) return make_error(Error::kUnsupportedVersion, 4, "header.version");
        version = swapped;
        be = true;
    }
    c.set_big_endian(be);

    const uint32_t width = static_cast<uint32_t>(length_width(version));
    const uint64_t n_tensors_offset = c.offset();
    uint64_t tensors;
    WS_GGUF_READ(c.uint(width, "header.n_tensors", &tensors));
    if (tensors > options.max_tensor_count) return make_error(Error::kTooLarge, n_tensors_offset, "header.n_tensors");
    const uint64_t n_kv_offset = c.offset();
    uint64_t kvs;
    WS_GGUF_READ(c.uint(width, "header.n_kv", &kvs));
    if (kvs > options.max_kv_count) return make_error(Error::kTooLarge, n_kv_offset, "header.n_kv");

    // Every entry needs some bytes: a tensor entry at least a name length, n_dims, type and offset; a KV
    // at least a name length, a 1-byte key, a type and a 1-byte value. Counts that cannot fit in the file
    // fail here, before anything is allocated for them.
    if (options.file_size != kUnknownSize) {
        const uint64_t left = options.file_size - c.offset();  // the reads above stayed inside the file
        const uint64_t min_tensor = width + 4 + 4 + 8;
        const uint64_t min_kv = width + 1 + 4 + 1;
        if (tensors > left / min_tensor) return make_error(Error::kTruncated, n_tensors_offset, "header.n_tensors");
        if (kvs > (left - tensors * min_tensor) / min_kv)
            return make_error(Error::kTruncated, n_kv_offset, "header.n_kv");
    }

    big_endian = be;
    n_tensors = tensors;
    n_kv = kvs;
    info.format = Format::kGguf;
    info.version = version;
    info.big_endian = be;
    info.file_size = options.file_size == kUnknownSize ? 0 : options.file_size;
    info.alignment = static_cast<uint32_t>(alignment);
    phase = Phase::kMetadata;
    return ok_status();
}

// Every item is charged once, when it is complete and before it changes the state (an item cut by the end
// of a chunk is parsed again), so the budget runs out at the same item however the file is chunked.
Status GgufParser::State::charge(uint64_t bytes, uint64_t consumed, uint64_t item_offset) {
    if (memory.charge_item(bytes, consumed)) return ok_status();
    return make_error(Error::kTooLarge, item_offset, "header.memory");
}

Status GgufParser::State::charge_counted(uint64_t bytes, uint64_t item_offset) {
    if (memory.charge_counted(bytes)) return ok_status();
    return make_error(Error::kTooLarge, item_offset, "header.memory");
}

Status GgufParser::State::read_string(Cursor& c, const char* what, uint64_t max_len, std::string* out) {
    const uint64_t length_offset = c.offset();
    uint64_t length;
    WS_GGUF_READ(c.uint(static_cast<uint32_t>(length_width(info.version)), what, &length));
    if (length > max_len) return make_error(Error::kTooLarge, length_offset, what);
    if (options.file_size != kUnknownSize && length > options.file_size - c.offset()) {
        return make_error(Error::kTruncated, length_offset, what);
    }
    const uint8_t* p;
    WS_GGUF_READ(c.bytes(length, what, &p));
    out->assign(reinterpret_cast<const char*>(p), static_cast<size_t>(length));
    return ok_status();
}

Status GgufParser::State::check_key_type(const std::string& key, ValueType type, uint64_t type_offset) const {
    struct Required {
        const char* key;
        ValueType type;
    };
    // ggml: general.alignment must be u32. llama.cpp's gguf-split writes the split keys with these types.
    static const Required kRequired[] = {
        {"general.alignment", ValueType::kUint32},
        {"split.no", ValueType::kUint16},
        {"split.count", ValueType::kUint16},
        {"split.tensors.count", ValueType::kInt32},
    };
    for (const Required& r : kRequired) {
        if (key == r.key && type != r.type) return make_error(Error::kBadKey, type_offset, r.key);
    }
    return ok_status();
}

Status GgufParser::State::read_array_header(Cursor& c, uint32_t depth, Value* out) {
    const uint64_t type_offset = c.offset();
    uint32_t item_type;
    WS_GGUF_READ(c.u32("kv.array.type", &item_type));
    if (item_type >= kValueTypeCount) return make_error(Error::kBadType, type_offset, "kv.array.type");
    const ValueType item = static_cast<ValueType>(item_type);
    if (item == ValueType::kArray && depth >= options.max_array_depth) {
        return make_error(Error::kTooLarge, type_offset, "kv.array.depth");
    }
    const uint32_t width = static_cast<uint32_t>(length_width(info.version));
    const uint64_t count_offset = c.offset();
    uint64_t count;
    WS_GGUF_READ(c.uint(width, "kv.array.length", &count));
    if (count > options.max_array_length) return make_error(Error::kTooLarge, count_offset, "kv.array.length");
    if (options.file_size != kUnknownSize) {
        const uint64_t size = value_type_size(item);
        const uint64_t min_item = size ? size : item == ValueType::kString ? width : 4 + width;
        if (count > (options.file_size - c.offset()) / min_item) {
            return make_error(Error::kTruncated, count_offset, "kv.array.length");
        }
    }
    out->type = ValueType::kArray;
    out->item_type = item;
    out->length = count;
    return ok_status();
}

Status GgufParser::State::parse_kv(Cursor& c) {
    MetadataEntry e;
    e.offset = c.offset();
    WS_TRY(read_string(c, "kv.key", options.max_string_bytes, &e.key));
    if (e.key.empty()) return make_error(Error::kBadKey, e.offset, "kv.key");
    if (keys.count(e.key)) return make_error(Error::kDuplicateName, e.offset, "kv.key");

    const uint64_t type_offset = c.offset();
    uint32_t type_id;
    WS_GGUF_READ(c.u32("kv.type", &type_id));
    if (type_id >= kValueTypeCount) return make_error(Error::kBadType, type_offset, "kv.type");
    const ValueType type = static_cast<ValueType>(type_id);
    WS_TRY(check_key_type(e.key, type, type_offset));
    e.value.type = type;

    if (type == ValueType::kArray) {
        if (options.max_array_depth < 1) return make_error(Error::kTooLarge, type_offset, "kv.array.depth");
        ArrayFrame frame;
        WS_TRY(read_array_header(c, 1, &frame.value));
        WS_TRY(charge_counted(HeaderMemory::kEntry + HeaderMemory::kSetNode + 2 * e.key.size(), e.offset));
        pending = std::move(e);
        frames.push_back(std::move(frame));
        return ok_status();
    }

    bool bad_bool = false;
    const uint64_t value_offset = c.offset();
    if (type == ValueType::kString) {
        WS_TRY(read_string(c, "kv.value", options.max_string_bytes, &e.value.str));
    } else {
        const uint32_t size = value_type_size(type);
        uint64_t bits;
        WS_GGUF_READ(c.uint(size, "kv.value", &bits));
        switch (type) {
            case ValueType::kInt8:
                bits = static_cast<uint64_t>(static_cast<int64_t>(static_cast<int8_t>(bits)));
                break;
            case ValueType::kInt16:
                bits = static_cast<uint64_t>(static_cast<int64_t>(static_cast<int16_t>(bits)));
                break;
            case ValueType::kInt32:
                bits = static_cast<uint64_t>(static_cast<int64_t>(static_cast<int32_t>(bits)));
                break;
            case ValueType::kBool:
                // ggml reads any nonzero byte as true; keep the file readable and say so.
                bad_bool = bits > 1;
                bits = bits != 0;
                break;
            default:
                break;
        }
        e.value.bits = bits;
        if (e.key == "general.alignment" && (bits == 0 || (bits & (bits - 1)) != 0)) {
            return make_error(Error::kBadAlignment, value_offset, "general.alignment");
        }
    }

    Warning bool_warning;
    uint64_t cost = HeaderMemory::kEntry + HeaderMemory::kSetNode + 2 * e.key.size() + e.value.str.size();
    if (bad_bool) {
        bool_warning = make_warning(Error::kBadType, value_offset, "kv.value",
                                    "bool '" + e.key + "' is stored as a byte other than 0 or 1; read as true");
        cost += HeaderMemory::kWarning + bool_warning.message.size();
    }
    WS_TRY(charge_counted(cost, e.offset));
    if (bad_bool) info.warnings.push_back(std::move(bool_warning));
    if (e.key == "general.alignment") alignment = e.value.bits;
    keys.insert(e.key);
    info.metadata.push_back(std::move(e));
    return ok_status();
}

Status GgufParser::State::parse_array_item(Cursor& c) {
    ArrayFrame& f = frames.back();
    if (f.items == f.value.length) {
        finish_array();
        return ok_status();
    }
    const ValueType item = f.value.item_type;
    const uint32_t size = value_type_size(item);
    if (size != 0) {
        // Scalar items: take every whole item that is here in one go, stored little-endian.
        const uint64_t n = std::min(c.room() / size, f.value.length - f.items);
        if (n == 0) {
            WS_GGUF_READ(c.ensure(size, "kv.array.item"));
            return make_error(Error::kInternal, c.offset(), "kv.array.item");  // room() said it would fail
        }
        const uint64_t first_offset = c.offset();
        // Scalars take one byte of memory per byte read, within the ratio: only the total cap can stop them,
        // at the first item past it. Bools are charged one by one below (a warning may come with one).
        if (item != ValueType::kBool && n > memory.room() / size) {
            return make_error(Error::kTooLarge, first_offset + memory.room() / size * size, "header.memory");
        }
        const uint8_t* p;
        WS_GGUF_READ(c.bytes(n * size, "kv.array.item", &p));
        std::vector<uint8_t>& raw = f.value.raw;
        const size_t old = raw.size();
        raw.resize(old + static_cast<size_t>(n * size));
        uint8_t* dst = raw.data() + old;
        if (!big_endian || size == 1) {
            std::memcpy(dst, p, static_cast<size_t>(n * size));
        } else {
            for (uint64_t i = 0; i < n; ++i) {
                for (uint32_t b = 0; b < size; ++b) dst[i * size + b] = p[i * size + size - 1 - b];
            }
        }
        if (item == ValueType::kBool) {
            for (uint64_t i = 0; i < n; ++i) {
                Warning w;
                const bool warn = dst[i] > 1 && !f.bool_warned;
                if (warn) {
                    w = make_warning(
                        Error::kBadType, first_offset + i, "kv.array.item",
                        "a bool item of '" + pending.key + "' is stored as a byte other than 0 or 1; read as true");
                }
                WS_TRY(charge(1 + (warn ? HeaderMemory::kWarning + w.message.size() : 0), first_offset + i + 1,
                              first_offset + i));
                if (warn) {
                    info.warnings.push_back(std::move(w));
                    f.bool_warned = true;
                }
                if (dst[i] > 1) dst[i] = 1;
            }
        } else {
            WS_TRY(charge(n * size, c.offset(), first_offset));
        }
        f.items += n;
        return ok_status();
    }
    const uint64_t item_offset = c.offset();
    if (item == ValueType::kString) {
        std::string s;
        WS_TRY(read_string(c, "kv.array.item", options.max_string_bytes, &s));
        WS_TRY(charge(HeaderMemory::kString + s.size(), c.offset(), item_offset));
        f.value.strings.push_back(std::move(s));
        ++f.items;
        f.item_bytes += c.offset() - item_offset;
        return ok_status();
    }
    ArrayFrame child;
    child.depth = f.depth + 1;
    WS_TRY(read_array_header(c, child.depth, &child.value));
    WS_TRY(charge(HeaderMemory::kValue, c.offset(), item_offset));
    frames.push_back(std::move(child));  // invalidates f
    return ok_status();
}

void GgufParser::State::finish_array() {
    ArrayFrame done = std::move(frames.back());
    frames.pop_back();
    if (!frames.empty()) {
        frames.back().value.arrays.push_back(std::move(done.value));
        ++frames.back().items;
        return;
    }
    pending.value = std::move(done.value);
    keys.insert(pending.key);
    info.metadata.push_back(std::move(pending));
    pending = MetadataEntry();
}

Status GgufParser::State::parse_tensor(Cursor& c) {
    TensorInfo t;
    t.info_offset = c.offset();
    WS_TRY(read_string(c, "tensor.name", std::min(kMaxTensorName, options.max_string_bytes), &t.name));
    if (names.count(t.name)) return make_error(Error::kDuplicateName, t.info_offset, "tensor.name");

    const uint64_t n_dims_offset = c.offset();
    WS_GGUF_READ(c.u32("tensor.n_dims", &t.n_dims));
    if (t.n_dims > kMaxDims) return make_error(Error::kBadShape, n_dims_offset, "tensor.n_dims");
    const uint64_t ne_offset = c.offset();
    for (uint32_t i = 0; i < t.n_dims; ++i) {
        const uint64_t dim_offset = c.offset();
        uint64_t v;
        WS_GGUF_READ(c.uint(info.version == 1 ? 4 : 8, "tensor.ne", &v));
        t.ne[i] = static_cast<int64_t>(v);
        if (t.ne[i] < 0) return make_error(Error::kBadShape, dim_offset, "tensor.ne");
    }
    // Like ggml: the element count (and every partial product) must stay below INT64_MAX.
    uint64_t n = 1;
    for (int64_t d : t.ne) {
        if (!checked_mul(n, static_cast<uint64_t>(d), &n) || n >= static_cast<uint64_t>(INT64_MAX)) {
            return make_error(Error::kOverflow, ne_offset, "tensor.ne");
        }
    }
    t.n_elements = n;

    const uint64_t type_offset = c.offset();
    WS_GGUF_READ(c.u32("tensor.type", &t.type_id));
    t.dtype = dtype_from_ggml_id(t.type_id);
    const DTypeTraits& traits = dtype_traits(t.dtype);
    const bool sized = has_layout(t.dtype);
    if (sized) {
        if (static_cast<uint64_t>(t.ne[0]) % traits.block_elems != 0) {
            return make_error(Error::kBadShape, ne_offset, "tensor.ne");
        }
        if (!checked_mul(n / traits.block_elems, traits.block_bytes, &t.nbytes)) {
            return make_error(Error::kOverflow, ne_offset, "tensor.nbytes");
        }
    }

    const uint64_t offset_offset = c.offset();
    WS_GGUF_READ(c.uint(8, "tensor.offset", &t.offset));
    if (t.offset % alignment != 0) return make_error(Error::kBadAlignment, offset_offset, "tensor.offset");

    uint64_t cost = HeaderMemory::kTensor + HeaderMemory::kSetNode + 2 * t.name.size();
    Warning unsized;
    if (!sized) {
        const std::string kind = traits.kind == DTypeKind::kRemoved ? std::string(traits.name) + ", removed from ggml"
                                                                    : "not a type this build knows";
        unsized = make_warning(Error::kBadType, type_offset, "tensor.type",
                               "tensor '" + t.name + "' has type id " + std::to_string(t.type_id) + " (" + kind +
                                   "); its size is inferred from the next tensor");
        cost += HeaderMemory::kWarning + unsized.message.size();
    }
    WS_TRY(charge_counted(cost, t.info_offset));
    if (!sized) info.warnings.push_back(std::move(unsized));
    names.insert(t.name);
    tensor_entry_bytes += c.offset() - t.info_offset;
    info.tensors.push_back(std::move(t));
    return ok_status();
}

// The directory is complete: place the data section, size the tensors of unknown types, and check the
// tensor ranges against the file and each other.
Status GgufParser::State::finish_header(uint64_t header_end) {
    info.data_offset = header_end;
    // ggml pads to the alignment only when there is tensor data to align.
    if (!info.tensors.empty() && !align_up(header_end, alignment, &info.data_offset)) {
        return make_error(Error::kOverflow, header_end, "header.data_offset");
    }
    for (TensorInfo& t : info.tensors) {
        if (t.offset > UINT64_MAX - info.data_offset) {
            return make_error(Error::kOverflow, tensor_fields(t, info.version).offset, "tensor.offset");
        }
        t.offset += info.data_offset;
    }

    std::vector<size_t> order(info.tensors.size());
    std::iota(order.begin(), order.end(), size_t(0));
    std::stable_sort(order.begin(), order.end(),
                     [this](size_t a, size_t b) { return info.tensors[a].offset < info.tensors[b].offset; });
    const bool size_known = options.file_size != kUnknownSize;
    for (size_t k = 0; k < order.size(); ++k) {
        TensorInfo& t = info.tensors[order[k]];
        if (has_layout(t.dtype)) continue;
        if (k + 1 < order.size()) {
            t.nbytes = info.tensors[order[k + 1]].offset - t.offset;
        } else {
            t.nbytes = size_known && t.offset <= options.file_size ? options.file_size - t.offset : 0;
        }
    }

    for (const TensorInfo& t : info.tensors) {
        const uint64_t field = tensor_fields(t, info.version).offset;
        if (size_known && (t.offset > options.file_size || t.nbytes > options.file_size - t.offset)) {
            return make_error(Error::kTruncated, field, "tensor.data");
        }
        if (t.nbytes > UINT64_MAX - t.offset) return make_error(Error::kOverflow, field, "tensor.offset");
    }

    uint64_t covered_end = 0;
    for (size_t index : order) {
        const TensorInfo& t = info.tensors[index];
        if (t.nbytes == 0) continue;
        if (t.offset < covered_end) {
            return make_error(Error::kBadOffset, tensor_fields(t, info.version).offset, "tensor.offset");
        }
        covered_end = t.offset + t.nbytes;
    }

    if (options.strict) {
        WS_TRY(gguf_check_strict_layout(info));
    } else {
        size_t bad = 0;
        const Status layout = check_layout(info, false, &bad);
        if (!layout.ok()) {
            const TensorInfo& t = info.tensors[bad];
            const std::string detail = layout.code == Error::kTruncated
                                           ? "the file ends before the alignment padding after the last tensor '" +
                                                 t.name + "'; ggml reads the padded data section and rejects the file"
                                           : "tensor '" + t.name + "' is at data offset " +
                                                 std::to_string(t.offset - info.data_offset) +
                                                 ": tensor data is not contiguous in header order as ggml requires";
            info.warnings.push_back(make_warning(layout.code, layout.offset, layout.what, detail));
        }
    }
    phase = Phase::kDone;
    return ok_status();
}

GgufParser::GgufParser(const ParseOptions& options) : state_(new State(options)) {}

GgufParser::~GgufParser() {
    delete state_;
}

Status GgufParser::feed(const uint8_t* data, size_t size) {
    return state_->feed(data, size);
}

uint64_t GgufParser::bytes_needed() const {
    const State& s = *state_;
    if (s.phase == Phase::kDone || s.phase == Phase::kFailed) return 0;
    const uint64_t current = s.need_end > s.fed ? s.need_end - s.fed : 0;
    if (s.phase == Phase::kHeader) return current;
    // The rest of the current item, plus the smallest size of every item the counts say comes after it: a
    // caller reading this much never reads past the header, yet a 100k-string vocabulary is fetched in a
    // few reads instead of one per string. Hostile counts were checked against the caps; saturate anyway.
    uint64_t total = current;
    const auto add = [&total](uint64_t count, uint64_t each) {
        uint64_t bytes = 0;
        if (!checked_mul(count, each, &bytes) || bytes > UINT64_MAX - total) {
            total = UINT64_MAX;
        } else {
            total += bytes;
        }
    };
    const uint64_t width = length_width(s.info.version);
    const auto min_item = [width](ValueType t) -> uint64_t {
        const uint64_t size = value_type_size(t);
        return size ? size : t == ValueType::kString ? width : 4 + width;  // a string's length, an array's header
    };
    const auto after = [](uint64_t count, uint64_t done) { return count > done ? count - done - 1 : 0; };
    if (s.phase == Phase::kMetadata) {
        // The items after the current one in every open array, innermost first (an outer array's current
        // item is the inner array), then the KVs after the one being read.
        for (const ArrayFrame& f : s.frames) add(after(f.value.length, f.items), min_item(f.value.item_type));
        add(after(s.n_kv, s.info.metadata.size()), width + 1 + 4 + 1);  // key length, 1-byte key, type, value
        add(s.n_tensors, width + 4 + 4 + 8);                            // name length, n_dims, type, offset
    } else {
        add(after(s.n_tensors, s.info.tensors.size()), width + 4 + 4 + 8);
    }
    return total;
}

uint64_t GgufParser::bytes_expected() const {
    const State& s = *state_;
    const uint64_t needed = bytes_needed();
    if (s.phase != Phase::kMetadata && s.phase != Phase::kTensors) return needed;
    uint64_t total = needed;
    // Items still to come after the current one, each at the mean size of those already read beyond the
    // smallest size bytes_needed() counted for it. Saturates: hostile counts were checked against the caps.
    const auto add_mean = [&total](uint64_t count, uint64_t done, uint64_t done_bytes, uint64_t min_each) {
        if (done == 0 || count <= done + 1) return;
        const uint64_t mean = done_bytes / done;
        if (mean <= min_each) return;
        uint64_t extra = 0;
        if (!checked_mul(count - done - 1, mean - min_each, &extra) || extra > UINT64_MAX - total) {
            total = UINT64_MAX;
        } else {
            total += extra;
        }
    };
    const uint64_t width = length_width(s.info.version);
    if (s.phase == Phase::kMetadata) {
        for (const ArrayFrame& f : s.frames) {
            if (f.value.item_type == ValueType::kString) add_mean(f.value.length, f.items, f.item_bytes, width);
        }
        // A GGUF without tensors has no data section: the rest of the file is most likely the rest of the
        // header (a vocabulary-only file). Trailing bytes past 4 times the guess are not counted on.
        if (s.n_tensors == 0 && s.options.file_size != kUnknownSize && s.fed < s.options.file_size) {
            const uint64_t rest = s.options.file_size - s.fed;
            const uint64_t cap = total > UINT64_MAX / 4 ? UINT64_MAX : total * 4;
            total = std::max(total, std::min(rest, cap));
        }
    } else {
        add_mean(s.n_tensors, s.info.tensors.size(), s.tensor_entry_bytes, width + 4 + 4 + 8);
    }
    return total;
}

uint64_t GgufParser::bytes_fed() const {
    return state_->fed;
}

const ModelInfo& GgufParser::info() const {
    return state_->info;
}

ModelInfo GgufParser::take_info() {
    return std::move(state_->info);
}

Status gguf_check_strict_layout(const ModelInfo& info) {
    size_t bad = 0;
    return check_layout(info, true, &bad);
}

}  // namespace ws
