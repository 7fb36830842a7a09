// SPDX-License-Identifier: MIT
#include "weightstream/header_reads.h"

#include <algorithm>

namespace ws {
namespace {

uint64_t saturating_add(uint64_t a, uint64_t b) {
    return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

}  // namespace

HeaderReads::HeaderReads(uint64_t source_read_size)
    : least_(std::min(std::max(kHeaderReadAhead, source_read_size), kMaxHeaderRead)), read_ahead_(least_) {}

ByteRange HeaderReads::first() const {
    return ByteRange{0, 0, least_};
}

ByteRange HeaderReads::next(const HeaderParser& parser, uint64_t file_size) {
    const uint64_t fed = parser.bytes_fed();
    const uint64_t expected = parser.bytes_expected();
    const uint64_t want = std::max(parser.bytes_needed(), saturating_add(expected, expected / 32));
    uint64_t end = saturating_add(fed, saturating_add(want, read_ahead_));
    if (file_size != kUnknownSize) end = std::min(end, file_size);
    const uint64_t length = std::clamp<uint64_t>(end > fed ? end - fed : 0, 1, kMaxHeaderRead);
    // Grows geometrically for a long header, but stays within a tenth of what the header is known to take.
    read_ahead_ = std::min(read_ahead_ > UINT64_MAX / 2 ? UINT64_MAX : read_ahead_ * 2,
                           std::max(least_, saturating_add(fed, length) / 10));
    return ByteRange{0, fed, length};
}

}  // namespace ws
