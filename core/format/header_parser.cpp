// SPDX-License-Identifier: MIT
#include "weightstream/header_parser.h"

#include <algorithm>
#include <cstring>

namespace ws {

namespace {
constexpr size_t kDetectBytes = 9;  // safetensors needs its u64 length and the JSON's first byte

bool is_json_whitespace(uint8_t c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

uint64_t load_u64_le(const uint8_t* p) {
    uint64_t v = 0;
    for (int i = 0; i < 8; ++i) v |= static_cast<uint64_t>(p[i]) << (8 * i);
    return v;
}
}  // namespace

Format detect_format(const uint8_t* data, size_t size) {
    if (size >= 4 && std::memcmp(data, "GGUF", 4) == 0) return Format::kGguf;
    if (size < kDetectBytes) return Format::kUnknown;
    if (data[8] == '{') return Format::kSafetensors;
    // The crate also accepts JSON whitespace before the '{'. Whitespace alone says little (any text file
    // has it), so it counts only with a header length the crate would accept: the u64 of a text file's
    // first 8 bytes is far above 100,000,000.
    if (is_json_whitespace(data[8]) && load_u64_le(data) <= kSafetensorsMaxHeader) return Format::kSafetensors;
    return Format::kUnknown;
}

HeaderParser::HeaderParser(const ParseOptions& options) : options_(options) {}

Status HeaderParser::feed(const uint8_t* data, size_t size) {
    if (status_.code != Error::kNeedMoreData) return status_;
    if (format_ == Format::kUnknown) {
        const size_t take = std::min(size, kDetectBytes - prefix_size_);
        if (take) std::memcpy(prefix_ + prefix_size_, data, take);  // data may be null when size is 0 (an empty file)
        prefix_size_ += take;
        data += take;
        size -= take;
        format_ = detect_format(prefix_, prefix_size_);
        if (format_ == Format::kUnknown && options_.format_hint != Format::kUnknown && prefix_size_ >= 4) {
            format_ = options_.format_hint;  // not "GGUF": let the expected format's parser say what is wrong
        }
        if (format_ == Format::kUnknown) {
            if (prefix_size_ < kDetectBytes) return status_;  // "GGUF" decides after 4 bytes, else wait for 9
            status_ = make_error(Error::kBadMagic, 0, "magic");
            return status_;
        }
        if (format_ == Format::kGguf) {
            gguf_ = std::make_unique<GgufParser>(options_);
            status_ = gguf_->feed(prefix_, prefix_size_);
        } else {
            safetensors_ = std::make_unique<SafetensorsParser>(options_);
            status_ = safetensors_->feed(prefix_, prefix_size_);
        }
        if (status_.code != Error::kNeedMoreData || size == 0) return status_;
    }
    status_ = gguf_ ? gguf_->feed(data, size) : safetensors_->feed(data, size);
    return status_;
}

uint64_t HeaderParser::bytes_needed() const {
    if (format_ == Format::kUnknown) return kDetectBytes - prefix_size_;
    return gguf_ ? gguf_->bytes_needed() : safetensors_->bytes_needed();
}

uint64_t HeaderParser::bytes_expected() const {
    if (format_ == Format::kUnknown) return kDetectBytes - prefix_size_;
    return gguf_ ? gguf_->bytes_expected() : safetensors_->bytes_needed();
}

uint64_t HeaderParser::bytes_fed() const {
    if (format_ == Format::kUnknown) return prefix_size_;
    return gguf_ ? gguf_->bytes_fed() : safetensors_->bytes_fed();
}

const ModelInfo& HeaderParser::info() const {
    static const ModelInfo kEmpty;
    if (gguf_) return gguf_->info();
    if (safetensors_) return safetensors_->info();
    return kEmpty;
}

ModelInfo HeaderParser::take_info() {
    if (gguf_) return gguf_->take_info();
    if (safetensors_) return safetensors_->take_info();
    return ModelInfo();
}

}  // namespace ws
