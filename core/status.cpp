// SPDX-License-Identifier: MIT
#include "status.h"

namespace ws {

const char* error_name(Error e) {
    switch (e) {
        case Error::kOk:
            return "ok";
        case Error::kNeedMoreData:
            return "need_more_data";
        case Error::kBadMagic:
            return "bad_magic";
        case Error::kUnsupportedVersion:
            return "unsupported_version";
        case Error::kTruncated:
            return "truncated";
        case Error::kTooLarge:
            return "too_large";
        case Error::kOverflow:
            return "overflow";
        case Error::kBadType:
            return "bad_type";
        case Error::kBadShape:
            return "bad_shape";
        case Error::kBadAlignment:
            return "bad_alignment";
        case Error::kBadOffset:
            return "bad_offset";
        case Error::kDuplicateName:
            return "duplicate_name";
        case Error::kBadJson:
            return "bad_json";
        case Error::kBadKey:
            return "bad_key";
        case Error::kTrailingData:
            return "trailing_data";
        case Error::kUnsupported:
            return "unsupported";
        case Error::kBadSplit:
            return "bad_split";
        case Error::kInternal:
            return "internal";
        case Error::kBadSource:
            return "bad_source";
        case Error::kEnd:
            break;
    }
    return "internal";
}

}  // namespace ws
