// SPDX-License-Identifier: MIT
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>
#include <cstdlib>

namespace {

// The CLI runs of every test go without the header cache (native/io/header_cache.h): a test's request counts
// must not depend on an earlier run, nor may a test write to ~/.cache. The cache's own tests turn it on
// with a temporary XDG_CACHE_HOME.
[[maybe_unused]] const bool kNoHeaderCache = [] {
    setenv("WEIGHTSTREAM_CACHE", "0", 1);
    return true;
}();

}  // namespace
