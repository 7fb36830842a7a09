// SPDX-License-Identifier: MIT
// JSON written as it is produced, byte for byte as nlohmann's dump(indent, ' ', false, replace) prints the
// same values: the vocabulary of a model (100k+ strings) costs a node, a map and a copy per item as an
// nlohmann DOM, and the DOM only to be printed. What stays the caller's job: keys come in the order nlohmann's
// std::map keeps them (byte-wise ascending), and every begin_* has its end_*.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace ws {

class JsonWriter {
public:
    // Receives the text in order, in pieces of about kChunkBytes (a file or a pipe, without holding megabytes).
    using Sink = void (*)(void* context, const char* data, size_t size);
    static constexpr size_t kChunkBytes = 64 * 1024;

    // indent >= 0: pretty, each level `indent` spaces deeper (nlohmann's dump(indent)); indent < 0: compact
    // (dump(-1)). Without a sink the text is collected for finish().
    explicit JsonWriter(int indent, Sink sink = nullptr, void* context = nullptr);
    // The collected text (no sink), or hands the rest to the sink (and returns "").
    std::string finish();

    void begin_object();
    void end_object();
    void begin_array();
    void end_array();
    // The next member's key; the value follows by one of the calls below.
    void key(const std::string& k);
    void key(const char* k);

    // Untrusted bytes: escaped as nlohmann escapes them, ill-formed UTF-8 replaced by U+FFFD in nlohmann's way.
    // Returns false when s was not well-formed UTF-8.
    bool string(const std::string& s);
    void string(const char* s);
    // s is known to be well-formed UTF-8 (utf8_valid): escaped without checking it again.
    void valid_string(const std::string& s);
    void uint(uint64_t v);
    void int64(int64_t v);
    // A finite double as nlohmann prints it (the shortest text that reads back the same: 1e-05, 2.0); null if
    // it is NaN or infinite, as nlohmann does.
    void number(double v);
    void boolean(bool v);
    void null();

    // A point to come back to: from hold() to release() or rewind(), nothing is handed to the sink (the text
    // grows in memory instead), and rewind(m) forgets everything written since hold() returned m. One at a time.
    struct Mark {
        size_t size;
        size_t depth;
        uint64_t count;
        bool after_key;
    };
    Mark hold();
    void release();
    void rewind(const Mark& m);

private:
    void before_value();
    bool escaped(const char* p, size_t n, bool known_valid);
    void append_escape(uint8_t c);
    void newline_indent(size_t depth);
    // Room for n more bytes at text_[size_ ..): the sink takes what is there first when it has more than a chunk.
    char* room(size_t n) { return capacity_ - size_ >= n ? &text_[size_] : make_room(n); }
    char* make_room(size_t n);
    void put(const char* p, size_t n);
    void put(char c) {
        *room(1) = c;
        ++size_;
    }

    std::string text_;  // text_[0 .. size_) is written; text_.size() == capacity_
    size_t size_ = 0;
    size_t capacity_ = 0;
    int indent_;
    Sink sink_;
    void* context_;
    std::vector<uint64_t> counts_;  // members or items written so far, per open object or array
    bool after_key_ = false;
    bool held_ = false;
};

}  // namespace ws
