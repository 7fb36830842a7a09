// SPDX-License-Identifier: MIT
#include "io/stream_input.h"

#include <algorithm>
#include <memory>

#include "weightstream/header_parser.h"

namespace ws {

bool read_stream_header(const std::string& path, MappedFile* file, ParseOptions options, ModelInfo* info,
                        LoadError* error, uint64_t known_size) {
    options.file_size = known_size;
    HeaderParser parser(options);
    std::unique_ptr<uint8_t[]> piece(new uint8_t[kStreamPiece]);
    Status s = make_error(Error::kNeedMoreData, 0, "header");
    while (s.code == Error::kNeedMoreData) {
        const uint64_t start = file->position();
        const int64_t n = file->read_next(piece.get(), kStreamPiece, &error->message);
        if (n < 0) {
            error->file = path;
            error->status = make_error(Error::kIo, start, "");
            return false;
        }
        if (n == 0) {
            s = make_error(Error::kTruncated, start, "header");
            break;
        }
        s = parser.feed(piece.get(), static_cast<size_t>(n));
        if (s.ok()) {
            // The piece may reach into the data: give those bytes back for the tensors.
            const ModelInfo& parsed = parser.info();
            const uint64_t end = start + static_cast<uint64_t>(n);
            if (parsed.data_offset < end) {
                const uint64_t from = std::max(parsed.data_offset, start);
                file->unread(piece.get() + (from - start), static_cast<size_t>(end - from));
            }
        }
    }
    if (!s.ok()) {
        error->file = path;
        error->status = s;
        return false;
    }
    *info = parser.take_info();
    info->file_size = known_size == kUnknownSize ? 0 : known_size;
    return true;
}

bool read_stream_range(const std::string& path, MappedFile* file, uint64_t offset, uint64_t size,
                       std::vector<uint8_t>* out, LoadError* error) {
    // The buffer is reused from range to range (resizing it within its size writes nothing).
    if (size == 0) {  // it may share its offset with the range read before it
        out->clear();
        return true;
    }
    error->file = path;
    if (file->position() > offset) {
        error->status = make_error(Error::kNotSeekable, 0, "");
        error->message = "the stream is already past byte " + std::to_string(offset) +
                         " (its tensors overlap): it cannot be read out of order";
        return false;
    }
    // The bytes before offset are read into the same buffer and dropped, a piece at a time.
    out->resize(static_cast<size_t>(std::max<uint64_t>(size, kStreamPiece)));
    const uint64_t end = offset + size;
    while (file->position() < end) {
        const uint64_t at = file->position();
        const uint64_t into = at < offset ? 0 : at - offset;
        const uint64_t want = at < offset ? std::min<uint64_t>(offset - at, out->size()) : end - at;
        const int64_t n = file->read_next(out->data() + into, static_cast<size_t>(want), &error->message);
        if (n < 0) {
            error->status = make_error(Error::kIo, at, "");
            return false;
        }
        if (n == 0) {
            error->status = make_error(Error::kTruncated, at, "tensor.data");
            return false;
        }
    }
    out->resize(static_cast<size_t>(size));
    return true;
}

}  // namespace ws
