// SPDX-License-Identifier: MIT
#include "weightstream/status.h"

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
        case Error::kIo:
            return "io";
        case Error::kNetwork:
            return "network";
        case Error::kHttp:
            return "http";
        case Error::kSourceChanged:
            return "source_changed";
        case Error::kNotSeekable:
            return "not_seekable";
        case Error::kEnd:
            break;
    }
    return "internal";
}

const char* error_description(Error e) {
    switch (e) {
        case Error::kOk:
            return "no error";
        case Error::kNeedMoreData:
            return "more bytes are needed";
        case Error::kBadMagic:
            return "not a GGUF or safetensors file";
        case Error::kUnsupportedVersion:
            return "a format version this build does not read";
        case Error::kTruncated:
            return "the file ends too early";
        case Error::kTooLarge:
            return "a size in the file is beyond the limits";
        case Error::kOverflow:
            return "a size in the file overflows";
        case Error::kBadType:
            return "an unknown type";
        case Error::kBadShape:
            return "an impossible tensor shape";
        case Error::kBadAlignment:
            return "misaligned data";
        case Error::kBadOffset:
            return "tensor data outside the file or overlapping";
        case Error::kDuplicateName:
            return "two entries with the same name";
        case Error::kBadJson:
            return "a malformed JSON header";
        case Error::kBadKey:
            return "a malformed metadata key";
        case Error::kTrailingData:
            return "unexpected bytes after the data";
        case Error::kUnsupported:
            return "not supported";
        case Error::kBadSplit:
            return "the parts do not form one model";
        case Error::kInternal:
            return "a bug in weightstream (please report it)";
        case Error::kBadSource:
            return "this cannot be opened";
        case Error::kIo:
            return "the file could not be read";
        case Error::kNetwork:
            return "the URL could not be fetched";
        case Error::kHttp:
            return "the server answered with an error";
        case Error::kSourceChanged:
            return "the file changed while it was read";
        case Error::kNotSeekable:
            return "the source cannot be read out of order";
        case Error::kEnd:
            break;
    }
    return "a bug in weightstream (please report it)";
}

bool is_source_error(Error e) {
    switch (e) {
        case Error::kIo:
        case Error::kNetwork:
        case Error::kHttp:
        case Error::kSourceChanged:
        case Error::kNotSeekable:
            return true;
        default:
            return false;
    }
}

}  // namespace ws
