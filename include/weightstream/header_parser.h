// SPDX-License-Identifier: MIT
// One entry point for both formats: detects GGUF or safetensors from the first bytes, then forwards
// every chunk to that format's push parser. The native CLI and the wasm bindings both use this.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include "weightstream/gguf.h"
#include "weightstream/model_info.h"
#include "weightstream/parse_options.h"
#include "weightstream/safetensors.h"
#include "weightstream/status.h"

namespace ws {

// The format the first bytes of a file announce: kGguf for "GGUF", kSafetensors for a u64 length
// followed by '{' (or by JSON whitespace when the length is at most kSafetensorsMaxHeader), kUnknown
// otherwise. Needs at least 9 bytes to decide (fewer: kUnknown).
Format detect_format(const uint8_t* data, size_t size);

// Same contract as GgufParser (include/weightstream/gguf.h); safe on untrusted input. Bytes that announce neither
// format are kBadMagic, unless ParseOptions::format_hint names one: then that format's parser reports the error.
class HeaderParser {
public:
    explicit HeaderParser(const ParseOptions& options = ParseOptions());
    Status feed(const uint8_t* data, size_t size);
    uint64_t bytes_needed() const;
    uint64_t bytes_expected() const;  // GgufParser::bytes_expected(); a safetensors header's exact rest
    uint64_t bytes_fed() const;
    Format format() const { return format_; }
    const ModelInfo& info() const;
    ModelInfo take_info();

private:
    ParseOptions options_;
    Format format_ = Format::kUnknown;
    uint8_t prefix_[9] = {};  // the bytes seen before the format is known
    size_t prefix_size_ = 0;
    std::unique_ptr<GgufParser> gguf_;
    std::unique_ptr<SafetensorsParser> safetensors_;
    Status status_ = {Error::kNeedMoreData, 0, ""};
};

}  // namespace ws
