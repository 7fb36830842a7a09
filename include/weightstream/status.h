// SPDX-License-Identifier: MIT
// Status and Result: how every core function reports failure. No exceptions, no allocation on the error
// path: `what` is always a string literal naming the field ("tensor.n_dims").
#pragma once

#include <cstdint>
#include <new>
#include <type_traits>
#include <utility>

namespace ws {

// Stable error codes. error_name() gives the string JavaScript sees as `error.code` and the CLI prints;
// never renumber or rename an entry, only append (above kEnd).
enum class Error : uint8_t {
    kOk = 0,
    kNeedMoreData,  // not a failure: a push parser wants more bytes (see bytes_needed())
    kBadMagic,      // neither GGUF nor safetensors
    kUnsupportedVersion,
    kTruncated,      // the file ends before a structure it declares
    kTooLarge,       // a count or length exceeds a configured cap
    kOverflow,       // a size computation overflows 64 bits
    kBadType,        // unknown or removed value/tensor type, or a type where another is required
    kBadShape,       // dims count, negative or non-block-multiple dims, element count mismatch
    kBadAlignment,   // general.alignment not a power of two, or a misaligned tensor offset
    kBadOffset,      // a tensor range outside the data, overlapping, out of order or with holes
    kDuplicateName,  // a duplicate metadata key or tensor name
    kBadJson,        // safetensors header is not valid JSON of the expected shape
    kBadKey,         // an empty metadata key, or a well-known key with the wrong type or value
    kTrailingData,   // bytes after the last tensor (safetensors)
    kUnsupported,    // valid but not supported by this build (a type with no decoder)
    kBadSplit,       // parts of a split/sharded model that do not fit together
    kInternal,       // a bug: an invariant that input cannot reach
    kBadSource,      // the sources given cannot be told apart or are not the files of one model (model_plan.h)
    // The source's failures: the bytes could not be had (is_source_error()). The core itself never returns
    // them; the native I/O and the package's sources do, so that both name a failure with the same word.
    kIo,             // a local file cannot be read: missing, no permission, a read error
    kNetwork,        // a URL cannot be fetched: no connection, a stall, retries used up (a CORS refusal in a browser)
    kHttp,           // the server answered with an error status or a wrong Content-Range
    kSourceChanged,  // the file changed while it was read: another ETag, Last-Modified or size; a mapped file shrank
    kNotSeekable,    // a forward-only source (a pipe, a server without Range) asked for bytes out of order
    kEnd,            // not a code: one past the last, so that the list can be walked (errorNames() in wasm)
};

const char* error_name(Error e);  // "ok", "need_more_data", "bad_magic", ...
// What the code means to someone who just opened a file ("not a GGUF or safetensors file"): the one text the
// CLI prints after the code and the package gives the page (errorDescriptions() in wasm). Lower case, no
// final period; the Status's `what` and offset say where.
const char* error_description(Error e);
// True for the codes of a source that failed (kIo .. kNotSeekable): the bytes could not be had, which says
// nothing of the file (the CLI's exit status 3); false for a file that is invalid.
bool is_source_error(Error e);

struct [[nodiscard]] Status {
    Error code = Error::kOk;
    uint64_t offset = 0;    // absolute byte offset in the file where the problem is
    const char* what = "";  // the field or rule, a string literal ("tensor.n_dims")

    constexpr bool ok() const { return code == Error::kOk; }
};

constexpr Status ok_status() {
    return Status{};
}
constexpr Status make_error(Error code, uint64_t offset, const char* what) {
    return Status{code, offset, what};
}

// A value or an error. Deliberately tiny: T must be default-constructible and movable.
template <typename T>
class [[nodiscard]] Result {
public:
    Result(T value) : value_(std::move(value)) {}  // NOLINT: implicit by design, like StatusOr
    Result(Status status) : status_(status) {}     // NOLINT

    bool ok() const { return status_.ok(); }
    const Status& status() const { return status_; }
    T& value() & { return value_; }
    const T& value() const& { return value_; }
    T&& value() && { return std::move(value_); }

private:
    Status status_;
    T value_{};
};

}  // namespace ws

#define WS_CONCAT_INNER_(a, b) a##b
#define WS_CONCAT_(a, b) WS_CONCAT_INNER_(a, b)

// Returns the status from the enclosing function when it is not ok.
#define WS_TRY(expr)                           \
    do {                                       \
        const ::ws::Status ws_try_s_ = (expr); \
        if (!ws_try_s_.ok()) return ws_try_s_; \
    } while (0)

// `WS_ASSIGN_OR_RETURN(auto x, f());` declares x from a Result or returns its status.
#define WS_ASSIGN_OR_RETURN(decl, expr) WS_ASSIGN_OR_RETURN_IMPL_(WS_CONCAT_(ws_result_, __LINE__), decl, expr)
#define WS_ASSIGN_OR_RETURN_IMPL_(tmp, decl, expr) \
    auto tmp = (expr);                             \
    if (!tmp.ok()) return tmp.status();            \
    decl = std::move(tmp).value()
