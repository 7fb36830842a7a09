// SPDX-License-Identifier: MIT
#include "weightstream/safetensors.h"

#include <algorithm>
#include <cstddef>
#include <iterator>
#include <nlohmann/json.hpp>
#include <unordered_map>
#include <unordered_set>

#include "base/le_bytes.h"

namespace ws {
namespace {

using Json = nlohmann::json;

constexpr uint64_t kLengthBytes = 8;  // the u64 header length

// nlohmann reports positions only to parse_error(), so the JSON is fed to its SAX parser through an
// iterator that records how far the lexer has read. Every token except ',' and ':' produces exactly
// one SAX event, delivered right after the lexer has read that token (a number plus one byte of
// lookahead), so the token's start is the first byte after the previous token that is not whitespace
// or a separator.
class TokenPositions {
public:
    class Iterator {
    public:
        using iterator_category = std::input_iterator_tag;
        using value_type = char;
        using difference_type = std::ptrdiff_t;
        using pointer = const char*;
        using reference = const char&;

        Iterator(const char* p, TokenPositions* owner) : p_(p), owner_(owner) {}
        reference operator*() const { return *p_; }
        Iterator& operator++() {
            ++p_;
            owner_->read_ = static_cast<size_t>(p_ - owner_->text_);
            return *this;
        }
        Iterator operator++(int) {
            Iterator old = *this;
            ++*this;
            return old;
        }
        bool operator==(const Iterator& other) const { return p_ == other.p_; }
        bool operator!=(const Iterator& other) const { return p_ != other.p_; }

    private:
        const char* p_;
        TokenPositions* owner_;
    };

    TokenPositions(const uint8_t* text, size_t size) : text_(reinterpret_cast<const char*>(text)), size_(size) {}

    Iterator begin() { return Iterator(text_, this); }
    Iterator end() { return Iterator(text_ + size_, this); }

    // The position (in the text) of the token whose SAX event is being delivered. Call once per event.
    size_t token_start(bool is_number) {
        size_t p = scan_;
        while (p < read_ && is_separator(text_[p])) ++p;
        if (is_number) {
            size_t q = p;
            while (q < size_ && is_number_char(text_[q])) ++q;
            scan_ = q;
        } else {
            scan_ = read_;
        }
        return p;
    }
    // Where the last token ended (one past its last byte).
    size_t token_end() const { return scan_; }
    // After a successful parse: where something other than whitespace follows the JSON value, or the
    // text's size. nlohmann takes a NUL byte for the end of the input, so "{}\0junk" parses; serde does not.
    size_t trailing_garbage() const {
        size_t p = scan_;
        while (p < size_ && is_whitespace(text_[p])) ++p;
        return p;
    }
    const char* text() const { return text_; }
    static bool is_whitespace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

private:
    static bool is_separator(char c) { return is_whitespace(c) || c == ',' || c == ':'; }
    static bool is_number_char(char c) {
        return (c >= '0' && c <= '9') || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E';
    }

    const char* text_;
    size_t size_;
    size_t read_ = 0;  // bytes the lexer has taken from the iterator
    size_t scan_ = 0;  // end of the last token located
};

// The kinds of JSON value a SAX event announces.
enum class Kind { kNull, kBool, kUnsigned, kNegative, kFloat, kString, kObject, kArray };

// The SAX interface nlohmann requires, mapped onto on_value(kind, position) / on_key / on_end events.
// Derived handlers return false to stop the parse after recording an error in status_.
template <typename Derived>
class SaxBase {
public:
    SaxBase(TokenPositions& positions, uint64_t base) : positions_(positions), base_(base) {}

    bool null() { return self().on_value(Kind::kNull, at(false)); }
    bool boolean(bool) { return self().on_value(Kind::kBool, at(false)); }
    bool number_integer(Json::number_integer_t v) {
        // nlohmann reports "-0" as a signed 0; like serde, take it as the unsigned 0.
        if (v == 0) {
            unsigned_ = 0;
            return self().on_value(Kind::kUnsigned, at(true));
        }
        return self().on_value(Kind::kNegative, at(true));
    }
    bool number_unsigned(Json::number_unsigned_t v) {
        unsigned_ = v;
        return self().on_value(Kind::kUnsigned, at(true));
    }
    bool number_float(Json::number_float_t, const Json::string_t&) { return self().on_value(Kind::kFloat, at(true)); }
    bool string(Json::string_t& s) {
        string_ = &s;
        return self().on_value(Kind::kString, at(false));
    }
    bool binary(Json::binary_t&) { return fail(make_error(Error::kBadJson, base_, syntax_what_)); }  // not in JSON
    bool start_object(std::size_t) { return self().on_value(Kind::kObject, at(false)); }
    bool start_array(std::size_t) { return self().on_value(Kind::kArray, at(false)); }
    bool key(Json::string_t& s) {
        string_ = &s;
        return self().on_key(at(false));
    }
    bool end_object() { return self().on_end(at(false)); }
    bool end_array() { return self().on_end(at(false)); }
    bool parse_error(std::size_t position, const std::string&, const Json::exception&) {
        // position counts the bytes the lexer read, the offending one included.
        return fail(make_error(Error::kBadJson, base_ + (position > 0 ? position - 1 : 0), syntax_what_));
    }

    const Status& status() const { return status_; }

protected:
    Derived& self() { return static_cast<Derived&>(*this); }
    // The absolute offset of the current token.
    uint64_t at(bool is_number) { return base_ + positions_.token_start(is_number); }
    bool fail(Status s) {
        if (status_.ok()) status_ = s;
        return false;
    }

    TokenPositions& positions_;
    uint64_t base_;  // absolute offset of the JSON text's first byte
    const char* syntax_what_ = "header";
    Status status_;
    Json::number_unsigned_t unsigned_ = 0;  // the payload of the current event
    Json::string_t* string_ = nullptr;
};

// What the handler expects next.
enum class State {
    kDocument,       // the top-level value
    kTopKeys,        // a tensor name or "__metadata__", or the end of the header
    kMetadataValue,  // the value of "__metadata__"
    kMetadataKeys,   // a metadata key or the end of __metadata__
    kMetadataItem,   // a metadata value
    kTensorValue,    // a tensor's object
    kTensorKeys,     // a field name or the end of the tensor
    kDtype,          // the dtype string
    kShapeValue,     // the shape array
    kShapeItems,     // a dim or the end of the shape
    kOffsetsValue,   // the data_offsets array
    kOffsetsItems,   // an offset or the end of data_offsets
    kIgnoredValue,   // the value of an unknown tensor field
    kSkipping,       // inside an ignored object/array
    kDone,
};

struct PendingTensor {
    TensorInfo info;
    std::vector<uint64_t> dims;  // outermost first
    uint64_t begin = 0, end = 0;
    uint64_t shape_at = 0, offsets_at = 0;  // absolute offsets of the field values
    bool has_dtype = false, has_shape = false, has_offsets = false;
    size_t n_offsets = 0;
};

class HeaderHandler : public SaxBase<HeaderHandler> {
public:
    HeaderHandler(TokenPositions& positions, const ParseOptions& options)
        : SaxBase(positions, kLengthBytes), options_(options), memory_(options.max_header_memory) {}

    bool on_value(Kind kind, uint64_t pos) {
        switch (state_) {
            case State::kDocument:
                if (kind != Kind::kObject) return fail(make_error(Error::kBadJson, pos, "header"));
                state_ = State::kTopKeys;
                return true;
            case State::kMetadataValue:
                if (kind == Kind::kNull) {
                    state_ = State::kTopKeys;
                    return true;
                }
                if (kind != Kind::kObject) return fail(make_error(Error::kBadJson, pos, "__metadata__"));
                state_ = State::kMetadataKeys;
                return true;
            case State::kMetadataItem:
                if (kind != Kind::kString) return fail(make_error(Error::kBadJson, pos, "__metadata__"));
                if (string_->size() > options_.max_string_bytes) {
                    return fail(make_error(Error::kTooLarge, pos, "__metadata__"));
                }
                if (!memory_.charge_counted(string_->size())) {
                    return fail(make_error(Error::kTooLarge, pos, "header.memory"));
                }
                metadata_.back().value.str = std::move(*string_);
                state_ = State::kMetadataKeys;
                return true;
            case State::kTensorValue:
                if (kind != Kind::kObject) return fail(make_error(Error::kBadJson, pos, "tensor"));
                state_ = State::kTensorKeys;
                return true;
            case State::kDtype: {
                PendingTensor& t = tensors_.back();
                if (kind != Kind::kString) return fail(make_error(Error::kBadJson, pos, "tensor.dtype"));
                if (!dtype_from_safetensors_name(string_->data(), string_->size(), &t.info.dtype)) {
                    return fail(make_error(Error::kBadType, pos, "tensor.dtype"));
                }
                state_ = State::kTensorKeys;
                return true;
            }
            case State::kShapeValue:
                tensors_.back().shape_at = pos;
                if (kind != Kind::kArray) return fail(make_error(Error::kBadJson, pos, "tensor.shape"));
                state_ = State::kShapeItems;
                return true;
            case State::kShapeItems: {
                if (kind == Kind::kNegative) return fail(make_error(Error::kBadShape, pos, "tensor.shape"));
                if (kind != Kind::kUnsigned) return fail(make_error(Error::kBadJson, pos, "tensor.shape"));
                std::vector<uint64_t>& dims = tensors_.back().dims;
                if (dims.size() >= kSafetensorsMaxDims) return fail(make_error(Error::kBadShape, pos, "tensor.shape"));
                dims.push_back(unsigned_);
                return true;
            }
            case State::kOffsetsValue:
                tensors_.back().offsets_at = pos;
                if (kind != Kind::kArray) return fail(make_error(Error::kBadJson, pos, "tensor.data_offsets"));
                state_ = State::kOffsetsItems;
                return true;
            case State::kOffsetsItems: {
                PendingTensor& t = tensors_.back();
                if (kind == Kind::kNegative) return fail(make_error(Error::kBadOffset, pos, "tensor.data_offsets"));
                if (kind != Kind::kUnsigned || t.n_offsets == 2) {
                    return fail(make_error(Error::kBadJson, pos, "tensor.data_offsets"));
                }
                (t.n_offsets++ == 0 ? t.begin : t.end) = unsigned_;
                return true;
            }
            case State::kIgnoredValue:
                if (kind == Kind::kObject || kind == Kind::kArray) {
                    skip_depth_ = 1;
                    state_ = State::kSkipping;
                } else {
                    state_ = State::kTensorKeys;
                }
                return true;
            case State::kSkipping:
                if (kind == Kind::kObject || kind == Kind::kArray) ++skip_depth_;
                return true;
            case State::kTopKeys:
            case State::kMetadataKeys:
            case State::kTensorKeys:
            case State::kDone:
                break;
        }
        return fail(make_error(Error::kInternal, pos, "header"));  // the parser delivers keys here
    }

    bool on_key(uint64_t pos) {
        switch (state_) {
            case State::kTopKeys:
                if (*string_ == "__metadata__") {
                    if (seen_metadata_) return fail(make_error(Error::kDuplicateName, pos, "__metadata__"));
                    seen_metadata_ = true;
                    state_ = State::kMetadataValue;
                    return true;
                }
                if (tensors_.size() >= options_.max_tensor_count) {
                    return fail(make_error(Error::kTooLarge, pos, "tensor count"));
                }
                if (!memory_.charge_counted(HeaderMemory::kTensor + HeaderMemory::kSetNode + 2 * string_->size())) {
                    return fail(make_error(Error::kTooLarge, pos, "header.memory"));
                }
                if (!names_.insert(*string_).second) return fail(make_error(Error::kDuplicateName, pos, "tensor.name"));
                tensors_.emplace_back();
                tensors_.back().info.name = std::move(*string_);
                tensors_.back().info.info_offset = pos;
                state_ = State::kTensorValue;
                return true;
            case State::kMetadataKeys: {
                if (metadata_.size() >= options_.max_kv_count) {
                    return fail(make_error(Error::kTooLarge, pos, "__metadata__"));
                }
                if (!memory_.charge_counted(HeaderMemory::kEntry + HeaderMemory::kSetNode + 2 * string_->size())) {
                    return fail(make_error(Error::kTooLarge, pos, "header.memory"));
                }
                if (!metadata_keys_.insert(*string_).second) {
                    return fail(make_error(Error::kDuplicateName, pos, "__metadata__"));
                }
                MetadataEntry entry;
                entry.key = std::move(*string_);
                entry.value.type = ValueType::kString;
                entry.offset = pos;
                metadata_.push_back(std::move(entry));
                state_ = State::kMetadataItem;
                return true;
            }
            case State::kTensorKeys: {
                PendingTensor& t = tensors_.back();
                bool* seen = nullptr;
                const char* what = "";
                if (*string_ == "dtype") {
                    seen = &t.has_dtype;
                    what = "tensor.dtype";
                    state_ = State::kDtype;
                } else if (*string_ == "shape") {
                    seen = &t.has_shape;
                    what = "tensor.shape";
                    state_ = State::kShapeValue;
                } else if (*string_ == "data_offsets") {
                    seen = &t.has_offsets;
                    what = "tensor.data_offsets";
                    state_ = State::kOffsetsValue;
                } else {
                    state_ = State::kIgnoredValue;
                    return true;
                }
                if (*seen) return fail(make_error(Error::kDuplicateName, pos, what));
                *seen = true;
                return true;
            }
            case State::kSkipping:
                return true;
            default:
                break;
        }
        return fail(make_error(Error::kInternal, pos, "header"));  // the parser delivers values here
    }

    bool on_end(uint64_t pos) {
        switch (state_) {
            case State::kTopKeys:
                state_ = State::kDone;
                return true;
            case State::kMetadataKeys:
                state_ = State::kTopKeys;
                return true;
            case State::kTensorKeys:
                state_ = State::kTopKeys;
                return finish_tensor(tensors_.back());
            case State::kShapeItems:
                state_ = State::kTensorKeys;
                return true;
            case State::kOffsetsItems: {
                const PendingTensor& t = tensors_.back();
                if (t.n_offsets != 2) return fail(make_error(Error::kBadJson, t.offsets_at, "tensor.data_offsets"));
                if (t.begin > t.end) return fail(make_error(Error::kBadOffset, t.offsets_at, "tensor.data_offsets"));
                state_ = State::kTensorKeys;
                return true;
            }
            case State::kSkipping:
                if (--skip_depth_ == 0) state_ = State::kTensorKeys;
                return true;
            default:
                break;
        }
        return fail(make_error(Error::kInternal, pos, "header"));
    }

    std::vector<MetadataEntry>& metadata() { return metadata_; }
    std::vector<PendingTensor>& tensors() { return tensors_; }

private:
    // A tensor's object has closed: check its fields and size it.
    bool finish_tensor(PendingTensor& t) {
        const uint64_t name_at = t.info.info_offset;
        if (!t.has_dtype) return fail(make_error(Error::kBadJson, name_at, "tensor.dtype"));
        if (!t.has_shape) return fail(make_error(Error::kBadJson, name_at, "tensor.shape"));
        if (!t.has_offsets) return fail(make_error(Error::kBadJson, name_at, "tensor.data_offsets"));

        // Like the crate, multiply dim by dim and fail on the first overflow; the bound is INT64_MAX
        // because dims and element counts are int64_t downstream.
        uint64_t n = 1;
        for (uint64_t d : t.dims) {
            if (d > static_cast<uint64_t>(INT64_MAX))
                return fail(make_error(Error::kOverflow, t.shape_at, "tensor.shape"));
            if (d != 0 && n > static_cast<uint64_t>(INT64_MAX) / d) {
                return fail(make_error(Error::kOverflow, t.shape_at, "tensor.shape"));
            }
            n *= d;
        }
        const DTypeTraits& traits = dtype_traits(t.info.dtype);
        const uint64_t bits = uint64_t(traits.block_bytes) * 8 / traits.block_elems;
        if (n > UINT64_MAX / bits) return fail(make_error(Error::kOverflow, t.shape_at, "tensor.shape"));
        uint64_t bytes = 0;
        if ((n * bits) % 8 != 0 || !dtype_bytes_for(t.info.dtype, n, &bytes)) {
            return fail(make_error(Error::kBadShape, t.shape_at, "tensor.shape"));
        }
        if (bytes != t.end - t.begin) return fail(make_error(Error::kBadShape, t.offsets_at, "tensor.data_offsets"));

        TensorInfo& info = t.info;
        info.type_id = static_cast<uint32_t>(info.dtype);
        info.n_elements = n;
        info.nbytes = bytes;
        const size_t rank = t.dims.size();
        info.n_dims = static_cast<uint32_t>(std::min<size_t>(rank, 4));
        for (size_t i = 0; i < rank && i < 3; ++i) info.ne[i] = static_cast<int64_t>(t.dims[rank - 1 - i]);
        if (rank == 4) info.ne[3] = static_cast<int64_t>(t.dims[0]);
        if (rank > 4) {
            // The outer dims are a prefix of the product checked above, so this cannot overflow.
            int64_t outer = 1;
            for (size_t i = 0; i + 3 < rank; ++i) outer *= static_cast<int64_t>(t.dims[i]);
            info.ne[3] = outer;
            info.full_shape.assign(t.dims.begin(), t.dims.end());
        }
        return true;
    }

    const ParseOptions& options_;
    // Tensors and metadata entries are charged as they appear (their numbers are capped; the whole JSON
    // text, at most 100,000,000 bytes, is the header's own cost), as GgufParser does.
    HeaderMemory memory_;
    State state_ = State::kDocument;
    uint32_t skip_depth_ = 0;
    bool seen_metadata_ = false;
    std::unordered_set<std::string> names_;
    std::unordered_set<std::string> metadata_keys_;
    std::vector<MetadataEntry> metadata_;
    std::vector<PendingTensor> tensors_;
};

}  // namespace

SafetensorsParser::SafetensorsParser(const ParseOptions& options) : options_(options) {}

uint64_t SafetensorsParser::bytes_needed() const {
    if (status_.code != Error::kNeedMoreData) return 0;
    const uint64_t target = have_length_ ? kLengthBytes + header_length_ : kLengthBytes;
    return target - buffer_.size();
}

uint64_t SafetensorsParser::bytes_fed() const {
    return fed_;
}

const ModelInfo& SafetensorsParser::info() const {
    return info_;
}

ModelInfo SafetensorsParser::take_info() {
    return std::move(info_);
}

Status SafetensorsParser::read_length(const uint8_t* first8) {
    header_length_ = load_le64(first8);
    have_length_ = true;
    if (header_length_ > kSafetensorsMaxHeader || header_length_ > options_.max_header_bytes) {
        return make_error(Error::kTooLarge, 0, "header_length");
    }
    if (options_.file_size != kUnknownSize && kLengthBytes + header_length_ > options_.file_size) {
        return make_error(Error::kTruncated, options_.file_size, "header_length");
    }
    return make_error(Error::kNeedMoreData, 0, "");
}

Status SafetensorsParser::feed(const uint8_t* data, size_t size) {
    if (status_.code != Error::kNeedMoreData) return status_;
    fed_ += size;
    if (options_.file_size < kLengthBytes) {
        return status_ = make_error(Error::kTruncated, options_.file_size, "header_length");
    }
    // In place: nothing buffered yet and this chunk holds the whole header.
    if (buffer_.empty() && size >= kLengthBytes) {
        status_ = read_length(data);
        if (status_.code != Error::kNeedMoreData) return status_;
        if (size - kLengthBytes >= header_length_) return status_ = parse_header(data);
    }
    if (buffer_.size() < kLengthBytes) {
        const size_t take = std::min<size_t>(size, kLengthBytes - buffer_.size());
        buffer_.insert(buffer_.end(), data, data + take);
        data += take;
        size -= take;
        if (buffer_.size() < kLengthBytes) return status_;
        status_ = read_length(buffer_.data());
        if (status_.code != Error::kNeedMoreData) return status_;
    }
    // The header length is capped above, so the buffer grows to at most kSafetensorsMaxHeader + 8 bytes,
    // and only as the bytes arrive.
    const uint64_t total = kLengthBytes + header_length_;
    const size_t take = static_cast<size_t>(std::min<uint64_t>(size, total - buffer_.size()));
    buffer_.insert(buffer_.end(), data, data + take);
    if (buffer_.size() == total) {
        status_ = parse_header(buffer_.data());
        std::vector<uint8_t>().swap(buffer_);
    }
    return status_;
}

Status SafetensorsParser::parse_header(const uint8_t* file) {
    const uint8_t* json = file + kLengthBytes;
    const size_t n = static_cast<size_t>(header_length_);
    // The JSON must be an object. Leading JSON whitespace is accepted, as the crate does since 2026-04
    // (its test_whitespace_leading_padded_header); anything else before the '{' is not.
    size_t start = 0;
    while (start < n && TokenPositions::is_whitespace(static_cast<char>(json[start]))) ++start;
    if (start == n || json[start] != '{') return make_error(Error::kBadJson, kLengthBytes + start, "header");

    TokenPositions positions(json, n);
    HeaderHandler handler(positions, options_);
    if (!Json::sax_parse(positions.begin(), positions.end(), &handler) || !handler.status().ok()) {
        return handler.status().ok() ? make_error(Error::kBadJson, kLengthBytes, "header") : handler.status();
    }
    const size_t garbage = positions.trailing_garbage();
    if (garbage != n) return make_error(Error::kBadJson, kLengthBytes + garbage, "header");

    const uint64_t data_offset = kLengthBytes + header_length_;
    std::vector<PendingTensor>& tensors = handler.tensors();
    // Data order; the crate sorts by (begin, end), ties broken here by name so the order is stable.
    std::sort(tensors.begin(), tensors.end(), [](const PendingTensor& a, const PendingTensor& b) {
        if (a.begin != b.begin) return a.begin < b.begin;
        if (a.end != b.end) return a.end < b.end;
        return a.info.name < b.info.name;
    });
    uint64_t expected = 0;
    for (const PendingTensor& t : tensors) {
        if (t.begin != expected) return make_error(Error::kBadOffset, t.offsets_at, "tensor.data_offsets");
        expected = t.end;
    }
    if (expected > UINT64_MAX - data_offset) {
        return make_error(Error::kOverflow, tensors.back().offsets_at, "tensor.data_offsets");
    }
    const uint64_t data_end = data_offset + expected;
    if (options_.file_size != kUnknownSize) {
        if (data_end > options_.file_size) return make_error(Error::kTruncated, options_.file_size, "data");
        if (data_end < options_.file_size) return make_error(Error::kTrailingData, data_end, "data");
    }

    info_ = ModelInfo();
    info_.format = Format::kSafetensors;
    info_.version = 0;
    info_.alignment = 1;
    info_.data_offset = data_offset;
    info_.file_size = options_.file_size != kUnknownSize ? options_.file_size : 0;
    info_.metadata = std::move(handler.metadata());
    info_.tensors.reserve(tensors.size());
    for (PendingTensor& t : tensors) {
        t.info.offset = data_offset + t.begin;
        info_.tensors.push_back(std::move(t.info));
    }
    return ok_status();
}

namespace {

enum class IndexState {
    kDocument,
    kTopKeys,
    kIgnoredValue,  // the value of an unknown top-level key
    kSkipping,      // inside an ignored object/array
    kMetadataValue,
    kMetadataKeys,
    kMetadataItem,
    kMetadataNested,  // inside a metadata value that is an object/array: kept as JSON text
    kWeightMapValue,
    kWeightMapKeys,
    kWeightMapItem,
    kDone,
};

class IndexHandler : public SaxBase<IndexHandler> {
public:
    explicit IndexHandler(TokenPositions& positions) : SaxBase(positions, 0) { syntax_what_ = "index"; }

    bool on_value(Kind kind, uint64_t pos) {
        const bool nested = kind == Kind::kObject || kind == Kind::kArray;
        switch (state_) {
            case IndexState::kDocument:
                if (kind != Kind::kObject) return fail(make_error(Error::kBadJson, pos, "index"));
                state_ = IndexState::kTopKeys;
                return true;
            case IndexState::kIgnoredValue:
                if (nested) {
                    depth_ = 1;
                    state_ = IndexState::kSkipping;
                } else {
                    state_ = IndexState::kTopKeys;
                }
                return true;
            case IndexState::kSkipping:
            case IndexState::kMetadataNested:
                if (nested) ++depth_;
                return true;
            case IndexState::kMetadataValue:
                if (kind != Kind::kObject) return fail(make_error(Error::kBadJson, pos, "metadata"));
                state_ = IndexState::kMetadataKeys;
                return true;
            case IndexState::kMetadataItem:
                if (kind == Kind::kString) {
                    index_.metadata.back().value.str = std::move(*string_);
                } else if (nested) {
                    value_start_ = pos;
                    depth_ = 1;
                    state_ = IndexState::kMetadataNested;
                    return true;
                } else {
                    index_.metadata.back().value.str = text(pos, positions_.token_end());
                }
                state_ = IndexState::kMetadataKeys;
                return true;
            case IndexState::kWeightMapValue:
                if (kind != Kind::kObject) return fail(make_error(Error::kBadJson, pos, "weight_map"));
                state_ = IndexState::kWeightMapKeys;
                return true;
            case IndexState::kWeightMapItem: {
                if (kind != Kind::kString || !plain_file_name(*string_)) {
                    return fail(make_error(Error::kBadJson, pos, "weight_map"));
                }
                auto found = file_ids_.find(*string_);
                uint32_t id;
                if (found != file_ids_.end()) {
                    id = found->second;
                } else {
                    id = static_cast<uint32_t>(index_.shard_files.size());
                    file_ids_.emplace(*string_, id);
                    index_.shard_files.push_back(std::move(*string_));
                }
                index_.weight_map.back().second = id;
                state_ = IndexState::kWeightMapKeys;
                return true;
            }
            default:
                break;
        }
        return fail(make_error(Error::kInternal, pos, "index"));
    }

    bool on_key(uint64_t pos) {
        switch (state_) {
            case IndexState::kTopKeys: {
                IndexState next = IndexState::kIgnoredValue;
                if (*string_ == "metadata") {
                    if (seen_metadata_) return fail(make_error(Error::kDuplicateName, pos, "metadata"));
                    seen_metadata_ = true;
                    next = IndexState::kMetadataValue;
                } else if (*string_ == "weight_map") {
                    if (seen_weight_map_) return fail(make_error(Error::kDuplicateName, pos, "weight_map"));
                    seen_weight_map_ = true;
                    next = IndexState::kWeightMapValue;
                }
                state_ = next;
                return true;
            }
            case IndexState::kSkipping:
            case IndexState::kMetadataNested:
                return true;
            case IndexState::kMetadataKeys: {
                if (!metadata_keys_.insert(*string_).second) {
                    return fail(make_error(Error::kDuplicateName, pos, "metadata"));
                }
                MetadataEntry entry;
                entry.key = std::move(*string_);
                entry.value.type = ValueType::kString;
                entry.offset = pos;
                index_.metadata.push_back(std::move(entry));
                state_ = IndexState::kMetadataItem;
                return true;
            }
            case IndexState::kWeightMapKeys:
                if (!tensor_names_.insert(*string_).second) {
                    return fail(make_error(Error::kDuplicateName, pos, "weight_map"));
                }
                index_.weight_map.emplace_back(std::move(*string_), 0);
                state_ = IndexState::kWeightMapItem;
                return true;
            default:
                break;
        }
        return fail(make_error(Error::kInternal, pos, "index"));
    }

    bool on_end(uint64_t pos) {
        switch (state_) {
            case IndexState::kTopKeys:
                state_ = IndexState::kDone;
                return true;
            case IndexState::kSkipping:
                if (--depth_ == 0) state_ = IndexState::kTopKeys;
                return true;
            case IndexState::kMetadataNested:
                if (--depth_ == 0) {
                    index_.metadata.back().value.str = text(value_start_, positions_.token_end());
                    state_ = IndexState::kMetadataKeys;
                }
                return true;
            case IndexState::kMetadataKeys:
            case IndexState::kWeightMapKeys:
                state_ = IndexState::kTopKeys;
                return true;
            default:
                break;
        }
        return fail(make_error(Error::kInternal, pos, "index"));
    }

    bool has_weight_map() const { return seen_weight_map_; }
    SafetensorsIndex& index() { return index_; }

private:
    // A shard must be a file beside the index: a hostile index must not reach elsewhere.
    static bool plain_file_name(const std::string& name) {
        if (name.empty() || name[0] == '.') return false;
        return name.find_first_of(std::string("/\\\0", 3)) == std::string::npos;
    }
    std::string text(uint64_t begin, uint64_t end) const {
        return std::string(positions_.text() + begin, positions_.text() + end);
    }

    IndexState state_ = IndexState::kDocument;
    uint32_t depth_ = 0;
    uint64_t value_start_ = 0;
    bool seen_metadata_ = false;
    bool seen_weight_map_ = false;
    std::unordered_set<std::string> metadata_keys_;
    std::unordered_set<std::string> tensor_names_;
    std::unordered_map<std::string, uint32_t> file_ids_;
    SafetensorsIndex index_;
};

}  // namespace

Result<SafetensorsIndex> parse_safetensors_index(const uint8_t* json, size_t size) {
    TokenPositions positions(json, size);
    IndexHandler handler(positions);
    if (!Json::sax_parse(positions.begin(), positions.end(), &handler) || !handler.status().ok()) {
        return handler.status().ok() ? make_error(Error::kBadJson, 0, "index") : handler.status();
    }
    const size_t garbage = positions.trailing_garbage();
    if (garbage != size) return make_error(Error::kBadJson, garbage, "index");
    if (!handler.has_weight_map()) return make_error(Error::kBadJson, 0, "weight_map");
    return std::move(handler.index());
}

}  // namespace ws
