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

Status read_stream_tensor(MappedFile* file, const TensorInfo& t, const std::function<void(const uint8_t*, size_t)>& fn,
                          std::string* io_error) {
    if (t.nbytes == 0) return ok_status();  // it may share its offset with the tensor read before it
    if (file->position() > t.offset) return make_error(Error::kInternal, t.info_offset, "tensor.offset");
    std::unique_ptr<uint8_t[]> piece(new uint8_t[kStreamPiece]);
    const uint64_t end = t.offset + t.nbytes;  // the parser checked that it does not overflow
    while (file->position() < end) {
        const uint64_t at = file->position();
        const int64_t n = file->read_next(piece.get(), kStreamPiece, io_error);
        if (n < 0) return make_error(Error::kInternal, at, "read");
        if (n == 0) return make_error(Error::kTruncated, at, "tensor.data");
        const uint64_t got_end = at + static_cast<uint64_t>(n);
        const uint64_t from = std::max(at, t.offset), to = std::min(got_end, end);
        if (from < to) fn(piece.get() + (from - at), static_cast<size_t>(to - from));
        if (got_end > end) file->unread(piece.get() + (end - at), static_cast<size_t>(got_end - end));
    }
    return ok_status();
}

}  // namespace ws
