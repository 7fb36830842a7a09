// SPDX-License-Identifier: MIT
// Which bytes to read next while a header is parsed from a source where every read costs (an HTTP Range
// request, a Blob slice, a file read): the one policy of the CLI (native/io/model.cpp) and the package
// (wasm/js/model.js), so that the same file costs the same requests in both.
#pragma once

#include <cstdint>

#include "weightstream/byte_range.h"
#include "weightstream/header_parser.h"

namespace ws {

// The first read of a header, and the least read-ahead of every later one: a small header takes one read.
constexpr uint64_t kHeaderReadAhead = 64 * 1024;
// The longest read asked for: ParseOptions::max_header_bytes' default, so a hostile guess of the header's
// size never asks for more than a header may hold (and offsets stay exact as JavaScript numbers).
constexpr uint64_t kMaxHeaderRead = uint64_t(1) << 30;

// The reads that fetch a header, each decided once the read before it has been fed whole, from the parser's
// state alone (so the requests are a function of the file, not of how its bytes arrived):
//   first: [0, max(kHeaderReadAhead, source_read_size)).
//   next:  from bytes_fed(), what the parser expects the rest to take (bytes_expected(), at least
//          bytes_needed()) plus 1/32 of it, plus a read-ahead that starts at the first read's length and
//          doubles with every read, but never beyond a tenth of the read's end; clamped to the file size.
// bytes_expected() extrapolates a string array from its items so far, and takes a GGUF without tensors to be
// all header, so a small header costs one request, a 4 MB vocabulary without tensors two, one followed by
// tensor data four to six; the bytes read past the header stay within kHeaderReadAhead + 10 % of it.
// Not thread-safe; a plain value (copyable).
class HeaderReads {
public:
    // source_read_size: the size a source reads at no extra cost (a local file's chunk size), 0 for a remote
    // source, where every byte is a download.
    explicit HeaderReads(uint64_t source_read_size = 0);

    ByteRange first() const;
    // The read after every byte read so far was fed to `parser` and it answered kNeedMoreData. file_size:
    // the file's size, or kUnknownSize. The range starts at parser.bytes_fed() and is at least 1 byte long
    // (at the end of the file it lies past it, and the read finds nothing: the header is truncated).
    ByteRange next(const HeaderParser& parser, uint64_t file_size);

private:
    uint64_t least_;       // the first read's length, the read-ahead's floor
    uint64_t read_ahead_;  // the next read's read-ahead
};

}  // namespace ws
