// SPDX-License-Identifier: MIT
#include "io/model.h"

#include <algorithm>

#include "io/header_cache.h"
#include "io/io_metrics.h"
#include "io/stream_input.h"
#include "weightstream/header_parser.h"
#include "weightstream/header_reads.h"
#include "weightstream/model_plan.h"

namespace ws {
namespace {

bool source_failed(const std::string& file, Error code, std::string message, LoadError* error) {
    error->file = file;
    error->status = make_error(code, 0, "");
    error->message = std::move(message);
    return false;
}

bool remote_failed(const HttpFile& http, const HttpError& why, LoadError* error) {
    return source_failed(http.shown_url(), why.code,
                         why.code == Error::kSourceChanged ? why.message + "; run again" : why.message, error);
}

// Parses the header of the file at a URL with the core's growing reads (header_reads.h: the package's too).
// A server that ignores Range: the file becomes a stream (file) read front to back.
// With the header cache on, an entry of the URL is used once the server confirms its version (a 304 to a
// 1-byte conditional request, or a 206 of the same strong ETag and size), and the parse of the network
// path is stored for the next run.
bool parse_remote(HttpFile* http, MappedFile* file, ParseOptions options, ModelInfo* info, LoadError* error) {
    std::vector<uint8_t> chunk;
    HttpError why;
    HeaderReads reads;
    const ByteRange first_read = reads.first();
    const bool use_cache = header_cache_enabled();
    CachedHeader cached;
    HttpFile::Outcome first = HttpFile::Outcome::kFailed;
    if (use_cache && header_cache_load(http->url(), &cached)) {
        first = http->revalidate(cached.etag, cached.last_modified, cached.size, &chunk, &why);
        const bool same_version =
            first == HttpFile::Outcome::kNotModified ||
            (first == HttpFile::Outcome::kOk && !cached.etag.empty() && cached.etag.compare(0, 2, "W/") != 0 &&
             http->etag() == cached.etag && http->size_known() && http->size() == cached.size);
        if (same_version) {
            ParseOptions cached_options = options;
            cached_options.file_size = cached.size;
            HeaderParser parser(cached_options);
            if (parser.feed(cached.bytes.data(), cached.bytes.size()).ok()) {
                record_bytes_from_cache(cached.bytes.size());
                *info = parser.take_info();
                info->file_size = cached.size;
                return true;
            }
            // Not a header these options accept whole: the network decides (the file stays pinned).
        }
        if (first == HttpFile::Outcome::kFailed) return remote_failed(*http, why, error);
        if (first != HttpFile::Outcome::kNoRange) {  // (a server without Range: streamed below)
            chunk.clear();
            first = HttpFile::Outcome::kOk;
            if (!http->size_known() || http->size() > 0) {
                first = http->read(first_read.offset, first_read.size, &chunk, &why);
            }
        }
    } else {
        first = http->read(first_read.offset, first_read.size, &chunk, &why);
    }
    if (first == HttpFile::Outcome::kFailed) return remote_failed(*http, why, error);
    if (first == HttpFile::Outcome::kNoRange) {
        std::string message;
        const int fd = http->open_stream(&message);
        if (fd < 0) return source_failed(http->shown_url(), Error::kIo, message, error);
        file->open_stream(fd);
        return read_stream_header(http->shown_url(), file, options, info, error,
                                  http->size_known() ? http->size() : kUnknownSize);
    }
    options.file_size = http->size_known() ? http->size() : kUnknownSize;
    HeaderParser parser(options);
    uint64_t fed = 0;
    Status s = make_error(Error::kNeedMoreData, 0, "header");
    std::vector<uint8_t> consumed;  // what the parser was fed, for the header cache
    bool keep = use_cache;
    for (;;) {
        if (chunk.empty()) {
            s = make_error(Error::kTruncated, fed, "header");
            break;
        }
        s = parser.feed(chunk.data(), chunk.size());
        fed += chunk.size();
        keep = keep && fed <= kHeaderCacheBytes / 4;
        if (keep) consumed.insert(consumed.end(), chunk.begin(), chunk.end());
        if (s.code != Error::kNeedMoreData) break;
        const ByteRange next = reads.next(parser, http->size_known() ? http->size() : kUnknownSize);
        if (http->read(next.offset, next.size, &chunk, &why) == HttpFile::Outcome::kFailed)
            return remote_failed(*http, why, error);
    }
    if (!s.ok()) {
        error->file = http->shown_url();
        error->status = s;
        return false;
    }
    *info = parser.take_info();
    info->file_size = http->size_known() ? http->size() : 0;
    if (keep && http->size_known() && (!http->etag().empty() || !http->last_modified().empty())) {
        CachedHeader entry;
        entry.etag = http->etag();
        entry.last_modified = http->last_modified();
        entry.size = http->size();
        entry.bytes = std::move(consumed);
        header_cache_store(http->url(), entry);
    }
    return true;
}

// The whole (small) file at a URL, at most `cap` bytes: a safetensors index.
bool read_remote_whole(HttpFile* http, uint64_t cap, std::vector<uint8_t>* bytes, LoadError* error) {
    HttpError why;
    HttpFile::Outcome got = http->read(0, kHeaderReadAhead, bytes, &why);
    if (got == HttpFile::Outcome::kNoRange) {
        why.code = Error::kNotSeekable;
        why.message = "the server ignores Range requests; an index is read with them";
        got = HttpFile::Outcome::kFailed;
    }
    if (got == HttpFile::Outcome::kFailed) return remote_failed(*http, why, error);
    if (http->size_known() && http->size() > bytes->size() && http->size() <= cap) {
        std::vector<uint8_t> rest;
        if (http->read(bytes->size(), http->size() - bytes->size(), &rest, &why) == HttpFile::Outcome::kFailed) {
            return remote_failed(*http, why, error);
        }
        bytes->insert(bytes->end(), rest.begin(), rest.end());
    }
    return true;
}

std::string dir_of(const std::string& path) {
    const size_t slash = path.rfind('/');
    return slash == std::string::npos ? std::string() : path.substr(0, slash + 1);
}

void keep_head(const MappedFile& file, LoadError* error) {
    const size_t n = static_cast<size_t>(std::min<uint64_t>(file.size(), kLoadErrorHead));
    if (file.data()) error->head.assign(reinterpret_cast<const char*>(file.data()), n);
}

bool map_file(const std::string& path, MappedFile* file, LoadError* error) {
    std::string why;
    if (file->open(path, &why)) return true;
    return source_failed(path, Error::kIo, why, error);
}

// Parses one whole file; a parser still wanting bytes at the end of the file means it is truncated.
bool parse_file(const std::string& path, MappedFile& file, ParseOptions options, ModelInfo* info, LoadError* error) {
    options.file_size = file.size();
    options.format_hint = format_from_name(path);
    if (file.is_stream()) return read_stream_header(path, &file, options, info, error);  // a pipe: never whole
    HeaderParser parser(options);
    Status s = parser.feed(file.data(), file.size());
    if (s.code == Error::kNeedMoreData) s = make_error(Error::kTruncated, file.size(), "header");
    if (!s.ok()) {
        error->file = path;
        error->status = s;
        keep_head(file, error);
        return false;
    }
    *info = parser.take_info();
    info->file_size = file.size();
    return true;
}

bool load_parts(const std::vector<std::string>& paths, const ParseOptions& options, LoadedModel* model,
                std::vector<ModelInfo>* infos, LoadError* error) {
    model->paths = paths;
    model->files.resize(paths.size());
    model->remotes.resize(paths.size());
    infos->resize(paths.size());
    for (size_t i = 0; i < paths.size(); ++i) {
        if (is_url(paths[i])) {
            model->remotes[i].reset(new HttpFile(paths[i]));
            model->paths[i] = model->remotes[i]->shown_url();
            ParseOptions remote_options = options;
            remote_options.format_hint = format_from_name(url_name(paths[i]));
            if (!parse_remote(model->remotes[i].get(), &model->files[i], remote_options, &(*infos)[i], error)) {
                return false;
            }
            continue;
        }
        if (!map_file(paths[i], &model->files[i], error)) return false;
        if (!parse_file(paths[i], model->files[i], options, &(*infos)[i], error)) return false;
    }
    return true;
}

}  // namespace

const uint8_t* LoadedModel::tensor_data(const TensorInfo& t) const {
    if (t.file_index >= files.size() || remote(t)) return nullptr;
    const MappedFile& f = files[t.file_index];
    if (t.offset > f.size() || t.nbytes > f.size() - t.offset) return nullptr;
    return f.data() + t.offset;
}

bool LoadedModel::tensor_in_file(const TensorInfo& t) const {
    if (t.file_index >= files.size()) return false;
    if (files[t.file_index].is_stream()) return true;
    if (remote(t)) {
        const HttpFile& http = *remotes[t.file_index];
        return !http.size_known() || (t.offset <= http.size() && t.nbytes <= http.size() - t.offset);
    }
    return tensor_data(t) != nullptr;
}

bool LoadedModel::read_tensor(const TensorInfo& t, uint64_t offset, uint64_t nbytes, TensorBytes* out,
                              LoadError* error) const {
    out->buffer.clear();
    out->data = nullptr;
    if (offset < t.offset || nbytes > t.nbytes || offset - t.offset > t.nbytes - nbytes ||
        (!remote(t) && !tensor_data(t))) {
        error->file = t.file_index < paths.size() ? paths[t.file_index] : std::string();
        error->status = make_error(Error::kTruncated, t.offset, "tensor.data");
        return false;
    }
    return read_range(t.file_index, offset, nbytes, out, error);
}

bool LoadedModel::read_range(size_t file, uint64_t offset, uint64_t nbytes, TensorBytes* out, LoadError* error) const {
    out->buffer.clear();
    out->data = nullptr;
    auto outside = [&](uint64_t at) {
        error->file = file < paths.size() ? paths[file] : std::string();
        error->status = make_error(Error::kTruncated, at, "tensor.data");
        return false;
    };
    if (file >= files.size()) return outside(offset);
    const bool is_remote = file < remotes.size() && remotes[file];
    if (files[file].is_stream()) {
        return source_failed(paths[file], Error::kNotSeekable,
                             is_remote ? "the server ignores Range requests, and this command needs to seek in the "
                                         "tensor data (download it first; info, tensors and hash read it as it comes)"
                                       : "not a regular file: this command needs to seek in the tensor data (save it "
                                         "to a file first; info, tensors and hash read a pipe as it comes)",
                             error);
    }
    if (!is_remote) {
        const MappedFile& f = files[file];
        if (offset > f.size() || nbytes > f.size() - offset) return outside(offset);
        out->data = f.data() + offset;
        return true;
    }
    HttpFile& http = *remotes[file];
    if (http.size_known() && (offset > http.size() || nbytes > http.size() - offset)) return outside(offset);
    HttpError why;
    if (http.read(offset, nbytes, &out->buffer, &why) == HttpFile::Outcome::kFailed) {
        return remote_failed(http, why, error);
    }
    if (out->buffer.size() != nbytes) return outside(offset + out->buffer.size());  // no size told; ends inside
    static const uint8_t kNoBytes = 0;  // an empty range's bytes: somewhere, not nullptr (the failure)
    out->data = nbytes > 0 ? out->buffer.data() : &kNoBytes;
    return true;
}

bool LoadedModel::copy_range(size_t file, uint64_t offset, uint64_t nbytes, uint8_t* buf, LoadError* error) const {
    const MappedFile& f = files[file];
    if (offset > f.size() || nbytes > f.size() - offset) {
        error->file = paths[file];
        error->status = make_error(Error::kTruncated, offset, "tensor.data");
        return false;
    }
    std::string why;
    const int64_t got = f.read_at(offset, buf, nbytes, &why);
    if (got < 0) return source_failed(paths[file], Error::kIo, why, error);
    if (static_cast<uint64_t>(got) != nbytes)
        return source_failed(paths[file], Error::kSourceChanged, "it shrank", error);
    return true;
}

bool load_model(const std::string& path, const ParseOptions& options, LoadedModel* model, LoadError* error) {
    *model = LoadedModel();
    const bool url = is_url(path);
    const std::string dir = url ? std::string() : dir_of(path);  // a local file's folder (a URL's: url_sibling)
    PlanOptions plan_options;
    plan_options.max_split_parts = options.max_split_parts;
    ModelPlan plan;
    Status planned = plan.plan({PlanSource{url ? url_name(path) : path.substr(dir.size()), true, true}}, plan_options);
    if (planned.ok() && plan.index_source() != kSibling) {
        if (url) {
            HttpFile index_file(path);
            std::vector<uint8_t> bytes;
            if (!read_remote_whole(&index_file, kMaxIndexBytes, &bytes, error)) return false;
            planned = index_file.size_known() ? plan.check_index_size(index_file.size()) : ok_status();
            if (planned.ok()) planned = plan.set_index(bytes.data(), bytes.size());
        } else {
            MappedFile index_file;
            if (!map_file(path, &index_file, error)) return false;
            planned = plan.set_index(index_file.data(), index_file.size());
            if (!planned.ok()) keep_head(index_file, error);
        }
    }
    if (!planned.ok()) {
        error->file = url ? url_without_userinfo(path) : path;
        error->status = planned;
        error->message = plan.message();
        return false;
    }

    // The source given is `path` itself; its siblings are next to it.
    std::vector<std::string> paths;
    const auto sibling = [&](const std::string& name) { return url ? url_sibling(path, name) : dir + name; };
    for (const PlanPart& part : plan.parts()) paths.push_back(part.source == kSibling ? sibling(part.name) : path);
    std::vector<ModelInfo> infos;
    if (!load_parts(paths, options, model, &infos, error)) return false;
    if (plan.kind() == PlanKind::kSingle) {
        model->info = std::move(infos[0]);
        return true;
    }
    uint32_t failed = kNoPart;
    Result<ModelInfo> merged = plan.merge(std::move(infos), &failed);
    if (!merged.ok()) {
        error->file = failed < model->paths.size() ? model->paths[failed] : path;
        error->status = merged.status();
        error->message = plan.message();
        return false;
    }
    model->info = std::move(merged).value();
    return true;
}

}  // namespace ws
