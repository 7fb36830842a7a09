// SPDX-License-Identifier: MIT
// Models at http:// and https:// URLs, read with libcurl as the package's HttpSource reads them
// (wasm/js/sources.js):
//   - every read is one Range request for exactly its bytes; a dropped connection, a stall (see
//     HttpOptions::connect_timeout_ms), 408, 429 and 5xx are retried with exponential backoff (at least a
//     429's or 503's Retry-After, capped at kMaxRetryAfterMs), resuming at the last byte received; progress
//     (after a stall, 16 KiB) gives a transfer its retries back; a shorter 206 than asked for (a server that
//     caps its answers) is continued from where it ended;
//   - the first response pins the file (strong ETag, else Last-Modified, and its size): later requests carry
//     If-Range, and a response of another file (a 200 to a conditional range, 412, another ETag,
//     Last-Modified or size) is the error "source_changed" rather than bytes of two files mixed;
//   - a server that answers the first range with 200 ignores Range: the file is then read in one streamed
//     pass (open_stream(): a thread writes the body into a pipe that MappedFile reads as a stream);
//   - what no retry can mend fails at once, said as such: a redirect loop, a redirect to another scheme (http
//     and https only), a body sent with a Content-Encoding (never asked for), a malformed URL, a certificate
//     that does not verify;
//   - redirects are followed (at most HttpOptions::max_redirects). Headers from --header go with every
//     request; the bearer token (HF_TOKEN) is sent to the URL's own host only (libcurl drops it, and any
//     Authorization or Cookie header, on a redirect to another host). Neither is ever printed: messages name
//     the URL (its user:password part removed) and the HTTP status or curl's words.
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "weightstream/status.h"

namespace ws {

// The longest Retry-After honoured (the package's MAX_RETRY_AFTER_MS).
constexpr long kMaxRetryAfterMs = 60000;

struct HttpOptions {
    std::vector<std::string> headers;  // "Name: value", from --header
    std::string bearer_token;          // from HF_TOKEN
    // --timeout: connecting, and a stall: no response, or fewer than 16 KiB of its body, in this long
    long connect_timeout_ms = 30000;
    int retries = 4;            // further attempts after a failure without progress
    long retry_delay_ms = 250;  // the first backoff; doubled for every further failure
    long max_redirects = 10;
};

// The options of every URL this process opens (main sets them from the command line and the environment).
HttpOptions& http_options();

// True for an http:// or https:// URL (scheme in any case).
bool is_url(const std::string& s);
// The URL of file `name` next to `url`: its directory, then `name` percent-encoded, then its query (a download
// flag, say), without its fragment: the package's siblingUrl. For split parts and shards.
std::string url_sibling(const std::string& url, const std::string& name);
// The URL as messages show it: without a user:password part.
std::string url_without_userinfo(const std::string& url);
// The URL's file name (after the last '/', without query or fragment), percent-decoded where it decodes to
// UTF-8 (else as it is): the package's urlFileName. For the model plan, which names the siblings.
std::string url_name(const std::string& url);

// What a failed read says.
struct HttpError {
    Error code = Error::kOk;  // kSourceChanged (another version of the file), kHttp or kNetwork
    std::string message;      // "HTTP 404 Not Found", curl's words, or for kSourceChanged what differs
};

class HttpFile {
public:
    explicit HttpFile(std::string url);
    ~HttpFile();  // stops and joins the stream thread, if any
    HttpFile(const HttpFile&) = delete;
    HttpFile& operator=(const HttpFile&) = delete;

    enum class Outcome {
        kOk,           // *out holds the bytes (fewer than asked at the end of the file)
        kNoRange,      // the first request was answered with the whole file: use open_stream()
        kFailed,       // *error says why
        kNotModified,  // revalidate(): the server confirmed the cached version (304); the file is pinned to it
    };
    // Reads [offset, offset + length) into *out (replacing its contents). Thread-safe (reads are serialised).
    Outcome read(uint64_t offset, uint64_t length, std::vector<uint8_t>* out, HttpError* error);

    // The first request, for a header cached under `etag` (else `last_modified`) and `size`: one byte at 0
    // with If-None-Match (else If-Modified-Since). kNotModified pins the file to that version (later reads
    // carry If-Range as after any first response); kOk means another version (its byte 0 is in *out, the
    // file pinned to it); kNoRange and kFailed as for read().
    Outcome revalidate(const std::string& etag, const std::string& last_modified, uint64_t size,
                       std::vector<uint8_t>* out, HttpError* error);
    // The version the file is pinned to (empty before the first response, or when the server sent none).
    const std::string& etag() const { return pin_.etag; }
    const std::string& last_modified() const { return pin_.last_modified; }

    // The file's size, once a response has told it.
    bool size_known() const { return size_known_; }
    uint64_t size() const { return size_; }
    const std::string& url() const { return url_; }
    // The URL as messages show it: without a user:password part.
    const std::string& shown_url() const { return shown_; }

    // Starts one GET of the whole file in a thread that writes its body into a pipe; returns the pipe's read
    // end (the caller owns it), or -1 with *error set. A dropped connection is retried from the start,
    // skipping the bytes already written. A failure the retries cannot mend ends the process as an
    // unreadable input does (exit 3, temporary outputs removed, "URL: ..." on stderr), as a mapped file
    // that shrinks does (mapped_file.h): the reader may be deep inside a command.
    int open_stream(std::string* error);

    // One request's state, shared with libcurl's callbacks (http_source.cpp).
    struct Response;
    // Checks the first body bytes' response (Content-Range, the pin); false with r->error set.
    bool check_response(Response* r);
    // True once the destructor has begun: a request under way ends.
    bool stopping() const { return stop_.load(); }

private:
    struct Pin {
        bool set = false;
        std::string etag, last_modified;
        bool total_known = false;
        uint64_t total = 0;
    };

    bool perform(uint64_t from, uint64_t to, bool ranged, Response* r);
    bool check_pin(const Response& r, bool has_total, uint64_t total, HttpError* error);
    void stream_body(int fd);

    std::string url_, shown_;
    bool size_known_ = false;
    uint64_t size_ = 0;
    Pin pin_;
    Pin condition_;  // revalidate()'s version, for perform() to ask about
    std::mutex mutex_;
    std::thread stream_thread_;
    std::atomic<bool> stop_{false};
};

}  // namespace ws
