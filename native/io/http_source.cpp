// SPDX-License-Identifier: MIT
#include "io/http_source.h"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <ctime>

#include "cli/cli.h"
#include "io/curl_library.h"
#include "io/io_metrics.h"
#include "io/source_error.h"
#include "weightstream/utf8.h"

namespace ws {
namespace {

constexpr long kMaxBackoffMs = 8000;  // the package's cap on one backoff
// Bytes whose arrival counts as progress for --timeout (the package's STALL_BYTES): a trickle is no progress.
constexpr uint64_t kStallBytes = 16 * 1024;

std::string lower(std::string s) {
    for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
}

std::string trim(const std::string& s) {
    size_t b = 0, e = s.size();
    while (b < e && (s[b] == ' ' || s[b] == '\t')) ++b;
    while (e > b && (s[e - 1] == ' ' || s[e - 1] == '\t' || s[e - 1] == '\r' || s[e - 1] == '\n')) --e;
    return s.substr(b, e - b);
}

bool parse_number(const std::string& s, uint64_t* out) {
    return !s.empty() && cli::parse_u64(s, out);
}

// "bytes START-END/TOTAL" (TOTAL may be "*") or "bytes */TOTAL".
struct ContentRange {
    bool valid = false;
    bool unsatisfied = false;     // "bytes */TOTAL"
    uint64_t start = 0, end = 0;  // [start, end)
    bool total_known = false;
    uint64_t total = 0;
};

ContentRange parse_content_range(const std::string& value) {
    ContentRange r;
    const std::string v = trim(value);
    if (lower(v.substr(0, 6)) != "bytes ") return r;
    const std::string rest = trim(v.substr(6));
    const size_t slash = rest.find('/');
    if (slash == std::string::npos) return r;
    const std::string span = rest.substr(0, slash), total = rest.substr(slash + 1);
    if (total != "*") {
        if (!parse_number(total, &r.total)) return r;
        r.total_known = true;
    }
    if (span == "*") {
        r.unsatisfied = r.total_known;
        r.valid = r.total_known;
        return r;
    }
    const size_t dash = span.find('-');
    uint64_t last = 0;
    if (dash == std::string::npos || !parse_number(span.substr(0, dash), &r.start) ||
        !parse_number(span.substr(dash + 1), &last) || last < r.start || last == UINT64_MAX) {
        return r;
    }
    r.end = last + 1;
    r.valid = true;
    return r;
}

bool retryable_status(long status) {
    return status == 408 || status == 429 || status >= 500;
}

long backoff_ms(long base, int failures) {
    long ms = base;
    for (int i = 1; i < failures && ms < kMaxBackoffMs; ++i) ms *= 2;
    return std::min(ms, kMaxBackoffMs);
}

void sleep_ms(long ms) {
    struct timespec ts;
    ts.tv_sec = ms / 1000;
    ts.tv_nsec = (ms % 1000) * 1000000L;
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
}

// An ETag's opaque tag: W/"x" and "x" are one version (the package's weak comparison).
std::string opaque_tag(const std::string& etag) {
    return etag.compare(0, 2, "W/") == 0 ? etag.substr(2) : etag;
}

std::string strip_userinfo(const std::string& url) {
    const size_t scheme = url.find("://");
    if (scheme == std::string::npos) return url;
    const size_t host = scheme + 3;
    const size_t end = url.find_first_of("/?#", host);
    const size_t at = url.rfind('@', end == std::string::npos ? url.size() : end);
    if (at == std::string::npos || at < host) return url;
    return url.substr(0, host) + url.substr(at + 1);
}

}  // namespace

// One request's response: the header callback fills the fields of the last response (after redirects),
// the write callback takes the body.
struct HttpFile::Response {
    HttpFile* file = nullptr;
    bool ranged = true;
    uint64_t from = 0, to = 0;  // the bytes asked for, [from, to)

    long status = 0;
    std::string reason;  // the status line's text ("Not Found")
    std::string etag, last_modified, content_range, retry_after, content_encoding;
    std::string location;  // the last response's Location (a redirect curl could not follow names its scheme)
    bool length_known = false;
    uint64_t length = 0;

    std::vector<uint8_t>* out = nullptr;  // a read's bytes
    int fd = -1;                          // or a stream's pipe
    uint64_t skip = 0;                    // stream: bytes of the body already written by an earlier attempt
    uint64_t received = 0;                // body bytes taken
    bool started = false;                 // the body's first bytes were checked
    bool complete = false;                // every byte asked for arrived (a longer body was cut off)
    bool whole = false;                   // a ranged request answered with the whole file (200)
    bool fatal = false;                   // the callback refused the response: error says why, no retry
    bool pipe_closed = false;             // stream: the reader went away
    // The stall clock: the attempt stalls when fewer than kStallBytes of body arrive within the timeout of
    // window_start_us (its start, then each kStallBytes'th byte); time blocked writing to the stream's pipe
    // (a reader that is busy) does not count.
    uint64_t window_start_us = 0;
    uint64_t window_bytes = 0;  // curl's download count at window_start_us
    bool stalled = false;
    HttpError error;
    CURLcode code = CURLE_OK;
    char curl_error[CURL_ERROR_SIZE] = {};
};

namespace {

size_t on_header(char* data, size_t size, size_t n, void* user) {
    auto* r = static_cast<HttpFile::Response*>(user);
    const std::string line(data, size * n);
    if (line.compare(0, 5, "HTTP/") == 0) {
        // A new response (the first, or the one a redirect or a 100 Continue leads to): forget the last.
        r->status = 0;
        r->reason.clear();
        r->etag.clear();
        r->last_modified.clear();
        r->content_range.clear();
        r->retry_after.clear();
        r->content_encoding.clear();
        r->location.clear();
        r->length_known = false;
        const size_t sp = line.find(' ');
        if (sp != std::string::npos) {
            const std::string rest = trim(line.substr(sp + 1));
            r->status = std::strtol(rest.c_str(), nullptr, 10);
            const size_t sp2 = rest.find(' ');
            if (sp2 != std::string::npos) r->reason = trim(rest.substr(sp2 + 1));
        }
        return size * n;
    }
    const size_t colon = line.find(':');
    if (colon == std::string::npos) return size * n;
    const std::string name = lower(trim(line.substr(0, colon))), value = trim(line.substr(colon + 1));
    if (name == "etag") r->etag = value;
    if (name == "last-modified") r->last_modified = value;
    if (name == "content-range") r->content_range = value;
    if (name == "retry-after") r->retry_after = value;
    if (name == "content-encoding") r->content_encoding = value;
    if (name == "location") r->location = value;
    if (name == "content-length") r->length_known = parse_number(value, &r->length);
    return size * n;
}

}  // namespace

HttpOptions& http_options() {
    static HttpOptions options;
    return options;
}

bool is_url(const std::string& s) {
    const std::string head = lower(s.substr(0, 8));
    return head.compare(0, 7, "http://") == 0 || head == "https://";
}

namespace {

// Where the URL's path ends: at its query or fragment, or at its end.
size_t path_end(const std::string& url) {
    const size_t scheme = url.find("://");
    const size_t end = url.find_first_of("?#", scheme == std::string::npos ? 0 : scheme + 3);
    return end == std::string::npos ? url.size() : end;
}

int hex_digit(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

// decodeURIComponent(s), or s as it is where that throws (a '%' without two hex digits after it, escapes that
// are not well-formed UTF-8), as the package's urlFileName decodes a URL's file name.
std::string percent_decoded(const std::string& s) {
    std::string out;
    for (size_t i = 0; i < s.size(); ++i) {
        if (s[i] != '%') {
            out += s[i];
            continue;
        }
        const int hi = i + 2 < s.size() ? hex_digit(s[i + 1]) : -1, lo = hi >= 0 ? hex_digit(s[i + 2]) : -1;
        if (lo < 0) return s;
        out += static_cast<char>(hi * 16 + lo);
        i += 2;
    }
    return utf8_valid(out) ? out : s;
}

// encodeURIComponent(s): every byte but A-Z a-z 0-9 - _ . ! ~ * ' ( ) as %XX, as the package's siblingUrl
// writes a sibling's name.
std::string percent_encoded(const std::string& s) {
    static const char kHex[] = "0123456789ABCDEF";
    std::string out;
    for (const char c : s) {
        const auto u = static_cast<unsigned char>(c);
        if (std::isalnum(u) || std::strchr("-_.!~*'()", c) != nullptr) {
            out += c;
        } else {
            out += '%';
            out += kHex[u >> 4];
            out += kHex[u & 15];
        }
    }
    return out;
}

// The URL's directory: up to and including its path's last '/'.
std::string url_dir(const std::string& url) {
    const std::string path = url.substr(0, path_end(url));
    return path.substr(0, path.rfind('/') + 1);
}

}  // namespace

std::string url_sibling(const std::string& url, const std::string& name) {
    const size_t end = path_end(url);
    const size_t fragment = std::min(url.find('#', end), url.size());
    return url_dir(url) + percent_encoded(name) + url.substr(end, fragment - end);
}

std::string url_name(const std::string& url) {
    const std::string path = url.substr(0, path_end(url));
    return percent_decoded(path.substr(path.rfind('/') + 1));
}

std::string url_without_userinfo(const std::string& url) {
    return strip_userinfo(url);
}

HttpFile::HttpFile(std::string url) : url_(std::move(url)), shown_(strip_userinfo(url_)) {}

HttpFile::~HttpFile() {
    stop_ = true;
    if (stream_thread_.joinable()) stream_thread_.join();
}

bool HttpFile::check_pin(const Response& r, bool has_total, uint64_t total, HttpError* error) {
    if (!pin_.set) {
        pin_.set = true;
        pin_.etag = r.etag;
        pin_.last_modified = r.last_modified;
        pin_.total_known = has_total;
        pin_.total = total;
        return true;
    }
    const bool tagged = !pin_.etag.empty() && !r.etag.empty();
    if (tagged && opaque_tag(pin_.etag) != opaque_tag(r.etag)) {
        *error = HttpError{Error::kSourceChanged, "ETag " + pin_.etag + ", now " + r.etag};
        return false;
    }
    if (!tagged && !pin_.last_modified.empty() && !r.last_modified.empty() && pin_.last_modified != r.last_modified) {
        *error = HttpError{Error::kSourceChanged, "Last-Modified " + pin_.last_modified + ", now " + r.last_modified};
        return false;
    }
    if (pin_.total_known && has_total && total != pin_.total) {
        *error = HttpError{Error::kSourceChanged, std::to_string(pin_.total) + " bytes, now " + std::to_string(total)};
        return false;
    }
    return true;
}

namespace {

size_t on_body(char* data, size_t size, size_t n, void* user) {
    auto* r = static_cast<HttpFile::Response*>(user);
    size_t bytes = size * n;
    if (!r->started) {
        r->started = true;
        if (r->ranged && r->status == 200) {
            r->whole = true;
            return 0;  // the whole file: not read here (the caller streams it or reports the change)
        }
        if (r->status != (r->ranged ? 206 : 200)) return 0;  // an error page: its status says it all
        if (!r->content_encoding.empty() && lower(r->content_encoding) != "identity") {
            // Not asked for (no Accept-Encoding is sent): the bytes are not the file's, and a range of a
            // compressed body cannot be decoded.
            r->error = HttpError{Error::kHttp, "the server sent the body encoded (Content-Encoding: " +
                                                   cli::printable(r->content_encoding, 40) + "), not the file's bytes"};
            r->fatal = true;
            return 0;
        }
        if (!r->file->check_response(r)) {
            r->fatal = true;
            return 0;
        }
    }
    if (r->fd >= 0) {
        const uint8_t* p = reinterpret_cast<const uint8_t*>(data);
        size_t left = bytes;
        if (r->skip > 0) {
            const size_t skipped = static_cast<size_t>(std::min<uint64_t>(r->skip, left));
            r->skip -= skipped;
            p += skipped;
            left -= skipped;
        }
        const uint64_t blocked_from = io_now_us();
        while (left > 0) {
            const ssize_t w = ::write(r->fd, p, left);
            if (w < 0 && errno == EINTR) continue;
            if (w <= 0) {
                r->pipe_closed = true;
                return 0;
            }
            p += w;
            left -= static_cast<size_t>(w);
            r->received += static_cast<uint64_t>(w);
        }
        r->window_start_us += io_now_us() - blocked_from;
        return bytes;
    }
    const uint64_t want = r->to - r->from - r->received;
    const size_t take = static_cast<size_t>(std::min<uint64_t>(want, bytes));
    r->out->insert(r->out->end(), reinterpret_cast<uint8_t*>(data), reinterpret_cast<uint8_t*>(data) + take);
    r->received += take;
    if (r->received == r->to - r->from) {
        r->complete = true;
        if (take < bytes) return 0;  // more than asked for: cut off
    }
    return bytes;
}

// Called by curl at least once a second: ends the attempt when the file is closed or the response stalls.
int on_progress(void* user, curl_off_t, curl_off_t downloaded, curl_off_t, curl_off_t) {
    auto* r = static_cast<HttpFile::Response*>(user);
    if (r->file->stopping()) return 1;
    const uint64_t now = io_now_us(), got = static_cast<uint64_t>(std::max<curl_off_t>(downloaded, 0));
    if (got - r->window_bytes >= kStallBytes) {
        r->window_start_us = now;
        r->window_bytes = got;
    }
    if (now - r->window_start_us > static_cast<uint64_t>(http_options().connect_timeout_ms) * 1000) {
        r->stalled = true;
        return 1;
    }
    return 0;
}

}  // namespace

bool HttpFile::check_response(Response* r) {
    if (!r->ranged) {
        // A whole-file stream: the same file as the first response.
        return check_pin(*r, r->length_known, r->length, &r->error);
    }
    const ContentRange range = parse_content_range(r->content_range);
    if (!range.valid || range.unsatisfied || range.start != r->from) {
        r->error.code = Error::kHttp;
        r->error.message = "asked for bytes " + std::to_string(r->from) + "-" + std::to_string(r->to - 1) +
                           ", the server sent \"" + cli::printable(r->content_range, 100) + "\"";
        return false;
    }
    if (!check_pin(*r, range.total_known, range.total, &r->error)) return false;
    if (range.total_known) {
        size_known_ = true;
        size_ = range.total;
        r->to = std::min(r->to, std::max(range.total, r->from));
    }
    r->to = std::min(r->to, range.end);
    return true;
}

bool HttpFile::perform(uint64_t from, uint64_t to, bool ranged, Response* r) {
    const HttpOptions& options = http_options();
    std::string unloaded;
    const CurlLibrary* lib = curl_library(&unloaded);
    CURL* curl = lib ? lib->easy_init() : nullptr;
    if (!curl) {
        r->error.code = Error::kNetwork;
        r->error.message = lib ? "curl_easy_init failed" : unloaded;
        r->fatal = true;
        return false;
    }
    r->file = this;
    r->ranged = ranged;
    r->from = from;
    r->to = to;
    struct curl_slist* headers = nullptr;
    for (const std::string& h : options.headers) headers = lib->slist_append(headers, h.c_str());
    if (ranged) {
        headers =
            lib->slist_append(headers, ("Range: bytes=" + std::to_string(from) + "-" + std::to_string(to - 1)).c_str());
        if (condition_.set) {
            // A header cache's question: has the file changed since? (304 if not)
            if (!condition_.etag.empty()) {
                headers = lib->slist_append(headers, ("If-None-Match: " + condition_.etag).c_str());
            } else {
                headers = lib->slist_append(headers, ("If-Modified-Since: " + condition_.last_modified).c_str());
            }
        }
        // The server itself refuses another version: If-Range answers a changed file with 200 (the whole new
        // file), which read() reports as the change.
        if (pin_.set) {
            const bool strong = !pin_.etag.empty() && pin_.etag.compare(0, 2, "W/") != 0;
            const std::string& validator = strong ? pin_.etag : pin_.last_modified;
            if (!validator.empty()) headers = lib->slist_append(headers, ("If-Range: " + validator).c_str());
        }
    }
    lib->easy_setopt(curl, CURLOPT_URL, url_.c_str());
    lib->easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
    lib->easy_setopt(curl, CURLOPT_FOLLOWLOCATION, 1L);
    lib->easy_setopt(curl, CURLOPT_MAXREDIRS, options.max_redirects);
    lib->easy_setopt(curl, CURLOPT_PROTOCOLS_STR, "http,https");
    lib->easy_setopt(curl, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
    lib->easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
    lib->easy_setopt(curl, CURLOPT_USERAGENT, "weightstream");
    lib->easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS, options.connect_timeout_ms);
    // A stall (on_progress): no response, or fewer than kStallBytes of its body, within the timeout.
    r->window_start_us = io_now_us();
    if (!options.bearer_token.empty()) {
        // Sent to the URL's host only: libcurl does not send it on to the host of a redirect.
        lib->easy_setopt(curl, CURLOPT_HTTPAUTH, CURLAUTH_BEARER);
        lib->easy_setopt(curl, CURLOPT_XOAUTH2_BEARER, options.bearer_token.c_str());
    }
    lib->easy_setopt(curl, CURLOPT_HEADERFUNCTION, on_header);
    lib->easy_setopt(curl, CURLOPT_HEADERDATA, r);
    lib->easy_setopt(curl, CURLOPT_WRITEFUNCTION, on_body);
    lib->easy_setopt(curl, CURLOPT_WRITEDATA, r);
    lib->easy_setopt(curl, CURLOPT_ERRORBUFFER, r->curl_error);
    lib->easy_setopt(curl, CURLOPT_NOPROGRESS, 0L);
    lib->easy_setopt(curl, CURLOPT_XFERINFOFUNCTION, on_progress);
    lib->easy_setopt(curl, CURLOPT_XFERINFODATA, r);
    RequestRecord record;
    record.start_us = io_now_us();
    r->code = lib->easy_perform(curl);
    record.dur_us = io_now_us() - record.start_us;
    record.file = url_name(shown_);
    record.ranged = ranged;
    record.from = from;
    record.to = to;
    record.status = r->status;
    record.conditional = condition_.set;
    curl_off_t downloaded = 0, first_byte = 0;
    if (lib->easy_getinfo(curl, CURLINFO_SIZE_DOWNLOAD_T, &downloaded) == CURLE_OK && downloaded > 0) {
        record.bytes = static_cast<uint64_t>(downloaded);
    }
    if (lib->easy_getinfo(curl, CURLINFO_STARTTRANSFER_TIME_T, &first_byte) == CURLE_OK && first_byte > 0) {
        record.first_byte_us = static_cast<uint64_t>(first_byte);
    }
    record_request(record);
    lib->easy_cleanup(curl);
    lib->slist_free_all(headers);
    return r->code == CURLE_OK;
}

namespace {

// The wait a 429 or 503 asks for (delay-seconds or an HTTP-date), capped; else 0.
long retry_after_ms(long status, const std::string& value) {
    if ((status != 429 && status != 503) || value.empty()) return 0;
    uint64_t seconds = 0;
    if (parse_number(value, &seconds)) return static_cast<long>(std::min<uint64_t>(seconds * 1000, kMaxRetryAfterMs));
    const time_t when = curl_library(nullptr)->getdate(value.c_str(), nullptr);
    if (when < 0) return 0;
    const double ms = std::difftime(when, std::time(nullptr)) * 1000;
    return static_cast<long>(std::min<double>(std::max(ms, 0.0), kMaxRetryAfterMs));
}

std::string curl_words(const HttpFile::Response& r) {
    if (r.stalled) {
        return "no progress for " + std::to_string(http_options().connect_timeout_ms / 1000) + " s (fewer than " +
               std::to_string(kStallBytes) + " bytes arrived; --timeout)";
    }
    return r.curl_error[0] ? std::string(r.curl_error) : std::string(curl_library(nullptr)->easy_strerror(r.code));
}

// A failure no retry can mend, by curl's code: true with *error set. The words name no redirect target beyond
// its scheme (a signed link's query must not be printed).
bool hopeless(const HttpFile::Response& r, HttpError* error) {
    switch (r.code) {
        case CURLE_TOO_MANY_REDIRECTS:
            *error = HttpError{Error::kHttp, "more than " + std::to_string(http_options().max_redirects) +
                                                 " redirects (a redirect loop?)"};
            return true;
        case CURLE_UNSUPPORTED_PROTOCOL: {
            const size_t colon = r.location.find(':');
            *error =
                r.status >= 300 && r.status < 400 && colon != std::string::npos
                    ? HttpError{Error::kHttp, "a redirect to a " + cli::printable(r.location.substr(0, colon), 20) +
                                                  ": URL, which is not followed (http and https only)"}
                    : HttpError{Error::kNetwork, curl_words(r)};
            return true;
        }
        case CURLE_URL_MALFORMAT:
            *error = HttpError{Error::kNetwork, "the URL is malformed: " + curl_words(r)};
            return true;
        case CURLE_PEER_FAILED_VERIFICATION:
        case CURLE_SSL_CACERT_BADFILE:
            *error = HttpError{Error::kNetwork, curl_words(r)};
            return true;
        default:
            return false;
    }
}

std::string http_words(const HttpFile::Response& r) {
    std::string s = "HTTP " + std::to_string(r.status);
    if (!r.reason.empty()) s += " " + cli::printable(r.reason, 100);
    return s;
}

}  // namespace

HttpFile::Outcome HttpFile::read(uint64_t offset, uint64_t length, std::vector<uint8_t>* out, HttpError* error) {
    std::lock_guard<std::mutex> lock(mutex_);
    const HttpOptions& options = http_options();
    out->clear();
    uint64_t end = length > UINT64_MAX - offset ? UINT64_MAX : offset + length;
    if (size_known_) end = std::min(end, size_);
    if (end > offset) out->reserve(static_cast<size_t>(std::min<uint64_t>(end - offset, uint64_t(1) << 30)));
    uint64_t pos = offset;
    int failures = 0;
    while (pos < end) {
        Response r;
        r.out = out;
        const bool finished = perform(pos, end, true, &r);
        if (r.fatal) {
            *error = r.error;
            return Outcome::kFailed;
        }
        if (hopeless(r, error)) return Outcome::kFailed;
        if (r.whole || (r.status == 200 && !r.started)) {  // the whole file (an empty body too)
            if (!pin_.set) {
                HttpError ignored;
                check_pin(r, r.length_known, r.length, &ignored);
                size_known_ = r.length_known;
                size_ = r.length;
                return Outcome::kNoRange;
            }
            *error = HttpError{Error::kSourceChanged, "the server answered a range of it with the whole file (200)"};
            return Outcome::kFailed;
        }
        if (r.status == 304 && condition_.set) {
            pin_ = condition_;
            size_known_ = true;
            size_ = condition_.total;
            return Outcome::kNotModified;
        }
        if (r.status == 412) {
            *error = HttpError{Error::kSourceChanged, "the server's precondition failed (412)"};
            return Outcome::kFailed;
        }
        if (r.status == 416) {
            const ContentRange range = parse_content_range(r.content_range);
            if (range.unsatisfied && !check_pin(r, true, range.total, error)) return Outcome::kFailed;
            const bool total_known = range.unsatisfied || size_known_;
            const uint64_t total = range.unsatisfied ? range.total : size_;
            if (!total_known || pos >= total) {
                // A range at or past the end of the file: the read ends there.
                if (range.unsatisfied) {
                    size_known_ = true;
                    size_ = range.total;
                }
                break;
            }
            *error = HttpError{Error::kHttp, http_words(r) + ": bytes " + std::to_string(pos) + "-" +
                                                 std::to_string(end - 1) + " are inside the file"};
            return Outcome::kFailed;
        }
        if (r.started && r.status == 206) {
            pos += r.received;
            if (size_known_) end = std::min(end, size_);
            if (pos >= end) break;
            if (r.complete) {
                // A valid answer shorter than asked for (a server that caps its ranges): ask for the rest.
                failures = 0;
                continue;
            }
        }
        // Here the attempt failed: a network error, a short body, or an error status.
        HttpError why{Error::kNetwork, ""};
        long wait = 0;
        if (r.status != 206 && r.status != 0) {
            why = HttpError{Error::kHttp, http_words(r)};
            if (!retryable_status(r.status)) {
                *error = why;
                return Outcome::kFailed;
            }
            wait = retry_after_ms(r.status, r.retry_after);
        } else if (!finished) {
            why.message = curl_words(r);
        } else {
            why.message = "the response ended at byte " + std::to_string(pos) + " of " + std::to_string(end);
        }
        // Progress (after a stall, more than a trickle): a resumed transfer gets its retries back.
        if (r.received >= (r.stalled ? kStallBytes : 1)) failures = 0;
        if (++failures > options.retries) {
            *error = HttpError{why.code, why.message + " (at byte " + std::to_string(pos) + ", after " +
                                             std::to_string(options.retries) + " retries)"};
            return Outcome::kFailed;
        }
        record_retry();
        sleep_ms(std::max(backoff_ms(options.retry_delay_ms, failures), wait));
    }
    return Outcome::kOk;
}

HttpFile::Outcome HttpFile::revalidate(const std::string& etag, const std::string& last_modified, uint64_t size,
                                       std::vector<uint8_t>* out, HttpError* error) {
    condition_.set = true;
    condition_.etag = etag;
    condition_.last_modified = last_modified;
    condition_.total_known = true;
    condition_.total = size;
    const Outcome got = read(0, 1, out, error);
    condition_ = Pin();
    return got;
}

int HttpFile::open_stream(std::string* error) {
    int fds[2];
    if (::pipe(fds) != 0) {
        *error = std::strerror(errno);
        return -1;
    }
    // The writer learns of a reader that went away from EPIPE, not from the signal.
    std::signal(SIGPIPE, SIG_IGN);
    stream_thread_ = std::thread([this, fd = fds[1]] {
        stream_body(fd);
        ::close(fd);
    });
    return fds[0];
}

void HttpFile::stream_body(int fd) {
    const HttpOptions& options = http_options();
    uint64_t written = 0;
    int failures = 0;
    for (;;) {
        Response r;
        r.fd = fd;
        r.skip = written;
        bool finished;
        {
            std::lock_guard<std::mutex> lock(mutex_);
            finished = perform(0, 0, false, &r);
        }
        if (r.pipe_closed || stop_) return;  // the reader has what it wanted
        written += r.received;
        if (finished && r.status == 200) return;  // the whole body: the reader sees its end
        HttpError why{Error::kNetwork, ""};
        long wait = 0;
        bool fatal = r.fatal;
        if (r.fatal) {
            why = r.error;
            if (why.code == Error::kSourceChanged) why.message += "; run again";
        } else if (hopeless(r, &why)) {
            fatal = true;
        } else if (r.status != 200 && r.status != 0) {
            why = HttpError{Error::kHttp, http_words(r)};
            fatal = !retryable_status(r.status);
            wait = retry_after_ms(r.status, r.retry_after);
        } else {
            why.message = finished ? "the response ended early" : curl_words(r);
        }
        if (r.received >= (r.stalled ? kStallBytes : 1)) failures = 0;
        if (fatal || ++failures > options.retries) {
            remove_temporary_outputs();
            std::fflush(stdout);
            const std::string line =
                source_error_text(shown_, why.code, why.message + " (at byte " + std::to_string(written) + ")");
            std::fprintf(stderr, "weightstream: error: %s\n", cli::printable(line, SIZE_MAX).c_str());
            std::fflush(stderr);
            _exit(cli::kExitIo);
        }
        record_retry();
        sleep_ms(std::max(backoff_ms(options.retry_delay_ms, failures), wait));
    }
}

}  // namespace ws
