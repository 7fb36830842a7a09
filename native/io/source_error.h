// SPDX-License-Identifier: MIT
// The one line a source's failure is told with (a file that cannot be read, a URL that fails or changes): "FILE:
// CODE: DESCRIPTION: DETAIL", as an invalid file's "FILE: CODE: DESCRIPTION: WHAT (byte N)", where CODE is the
// core's name (is_source_error(), the package's `error.code` for the same failure) and DESCRIPTION its
// error_description(). Every path that reports one goes through here: load errors, a stream's reader and
// writer, a mapped file that shrinks.
#pragma once

#include <string>

#include "weightstream/status.h"

namespace ws {

inline std::string source_error_text(const std::string& file, Error code, const std::string& detail) {
    return file + ": " + error_name(code) + ": " + error_description(code) + ": " + detail;
}

}  // namespace ws
