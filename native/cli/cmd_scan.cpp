// SPDX-License-Identifier: MIT
// `scan`: many models in one run, one JSON line per model (JSONL) with verify's verdict and what people
// scan a model hub for. The contract (also in `weightstream --help` and the README):
//
//   The model list: every SOURCE and every line of every --list FILE ("-" = stdin; empty lines and lines
//   starting with '#' skipped). A URL (anything with "://") is passed to load_model as it is; a directory
//   is walked recursively (symbolic links to files followed, to directories not, so a link cannot loop)
//   and lists its model files: names ending .gguf, .safetensors or .safetensors.index.json (any case),
//   where a split GGUF (NAME-NNNNN-of-NNNNN.gguf) is one model, listed once by its lowest part present, and
//   the shards P-NNNNN-of-NNNNN.safetensors of an index P.safetensors.index.json in the same directory are
//   that index's model (listed as the index, not one by one: folder_models(), include/weightstream/model_plan.h);
//   anything else given is listed as it is.
//   The list is then sorted by bytes and duplicates are dropped, so it does not depend on the order of
//   the arguments, of the list file or of the directory entries.
//   --shard I/N keeps the items k (0-based, in that sorted list) with k mod N == I: N runs with I = 0..N-1
//   see disjoint slices that cover the list, whatever machine each runs on.
//   --resume OUT.jsonl (applied after --shard, so the slices stay the same): sources that a complete line
//   of OUT already reports (its "source") are skipped, whatever that line's verdict; the new lines are
//   appended to OUT (created when missing; a last line cut short by an interrupted run is removed first),
//   not printed on stdout. OUT must be scan's output (every line a JSON object with "source" and "verdict"):
//   anything else, or a file that is not regular, is refused (exit 3) before a byte of it changes. A source
//   that is not UTF-8 has its bytes in hex in "source_hex" ("source" holds U+FFFD), which --resume matches.
//   Lines come out in list order (not completion order), so two runs over the same list print the same
//   bytes; a line holds no time or other run-dependent value.
//   Exit status: 0 every model ok, 1 some model's verdict is not ok (invalid, or unreadable: a source
//   error's code, "io", "http", "source_changed", ...), 2 usage, 3 the list itself cannot be read (a list
//   file, a directory, OUT) or written.
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include "cli/tensor_hash.h"
#include "cli/verify.h"
#include "io/crypto_library.h"
#include "io/parallel.h"
#include "io/tensor_io.h"
#include "weightstream/model_json.h"
#include "weightstream/model_plan.h"
#include "weightstream/utf8.h"

namespace ws::cli {
namespace {

// Lines finished ahead of the one printed next are held in memory: at most this many, so a slow model
// does not let the rest of a million-model list pile up behind it (memory stays bounded by the window).
constexpr size_t kReorderWindow = 4096;
constexpr size_t kMaxListed = 100;  // names of flagged tensors given per model (counts are exact)

bool is_url(const std::string& s) {
    return s.find("://") != std::string::npos;
}

std::string lower(std::string s) {
    for (char& c : s) c = static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
    return s;
}

// Lists the models under `dir` (see the contract above) into *out. False (with *error) when a directory
// cannot be read: a listing with holes would shift every --shard slice.
bool walk(const std::string& dir, std::vector<std::string>* out, std::string* error) {
    DIR* d = ::opendir(dir.c_str());
    if (!d) {
        *error = dir + ": " + std::strerror(errno);
        return false;
    }
    const std::string base = ends_with(dir, "/") ? dir : dir + "/";
    std::vector<std::string> files, dirs;
    while (const dirent* e = ::readdir(d)) {
        const std::string name = e->d_name;
        if (name == "." || name == "..") continue;
        struct stat st;
        if (::lstat((base + name).c_str(), &st) != 0) continue;  // gone since readdir
        if (S_ISDIR(st.st_mode)) {
            dirs.push_back(name);
        } else if (S_ISREG(st.st_mode) ||
                   (S_ISLNK(st.st_mode) && ::stat((base + name).c_str(), &st) == 0 && S_ISREG(st.st_mode))) {
            files.push_back(name);
        }
    }
    ::closedir(d);

    for (const std::string& f : folder_models(files)) out->push_back(base + f);
    for (const std::string& sub : dirs) {
        if (!walk(base + sub, out, error)) return false;
    }
    return true;
}

// The lines of a list file ("-": stdin). False (with *error) when it cannot be read.
bool read_list(const std::string& path, std::vector<std::string>* out, std::string* error) {
    FILE* f = path == "-" ? stdin : std::fopen(path.c_str(), "rb");
    if (!f) {
        *error = path + ": " + std::strerror(errno);
        return false;
    }
    std::string line;
    int c;
    auto flush = [&] {
        if (!line.empty() && line.back() == '\r') line.pop_back();
        if (!line.empty() && line[0] != '#') out->push_back(line);
        line.clear();
    };
    while ((c = std::fgetc(f)) != EOF) {
        if (c == '\n') {
            flush();
        } else {
            line += static_cast<char>(c);
        }
    }
    flush();
    const bool failed = std::ferror(f) != 0;
    if (failed) *error = (path == "-" ? std::string("stdin") : path) + ": " + std::strerror(errno);
    if (f != stdin) std::fclose(f);
    return !failed;
}

// The keys of scan's lines (scan_one), for telling a line cut short by an interrupted run from other text.
constexpr const char* kLineKeys[] = {"architecture",
                                     "bad_scales",
                                     "chat_template_sha256",
                                     "decoded",
                                     "dtypes",
                                     "error",
                                     "file_size",
                                     "files",
                                     "flags",
                                     "format",
                                     "name",
                                     "parameters",
                                     "source",
                                     "source_hex",
                                     "split",
                                     "tensors",
                                     "verdict",
                                     "warnings",
                                     "zero_tensor_count",
                                     "zero_tensors"};
constexpr size_t kMaxResumeLine = size_t(64) << 20;  // a line lists at most kMaxListed names per flag

// Whether `line` (no newline) is one of scan's lines; *source: the source it reports (source_hex's bytes when
// the path is not UTF-8, as "source" then holds U+FFFD).
bool scan_line(const std::string& line, std::string* source) {
    if (line.empty() || line[0] != '{') return false;
    const nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
    if (!j.is_object()) return false;
    const auto s = j.find("source"), v = j.find("verdict"), h = j.find("source_hex");
    if (s == j.end() || !s->is_string() || v == j.end() || !v->is_string()) return false;
    if (h == j.end()) {
        *source = s->get<std::string>();
        return true;
    }
    if (!h->is_string()) return false;
    const std::string hex = h->get<std::string>();
    if (hex.size() % 2 != 0) return false;
    source->clear();
    for (size_t i = 0; i < hex.size(); i += 2) {
        int byte = 0;
        for (size_t k = i; k < i + 2; ++k) {
            const char c = hex[k];
            const int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
            if (d < 0) return false;
            byte = byte * 16 + d;
        }
        *source += static_cast<char>(byte);
    }
    return true;
}

// Whether `text`, a last line without its newline, is the beginning of one of scan's lines (a write cut short):
// "{" and a key of scan's lines, or a beginning of that, in UTF-8 (what json_dump writes) and not a whole JSON
// value (a one-line JSON file without a newline is whole).
bool cut_scan_line(const std::string& text) {
    if (!utf8_valid(text) || !nlohmann::json::parse(text, nullptr, false).is_discarded()) return false;
    for (const char* key : kLineKeys) {
        const std::string head = std::string("{\"") + key + "\":";
        if (text.compare(0, head.size(), head) == 0 || head.compare(0, text.size(), text) == 0) return true;
    }
    return false;
}

// Opens OUT for --resume, one descriptor throughout: reads the sources its lines report into *done, removes a
// last line cut short by an interrupted run, and gives a stream that appends (*out). OUT is created when
// missing. Anything else than scan's own output is refused before a byte of it is changed (false, *error): not
// a regular file (a FIFO would block), a line that is not a scan line (a .gguf given by mistake: its first
// bytes), a last line without newline that is not the beginning of one. Reads a line at a time: a huge file
// that is not scan's costs its first line.
bool open_resume(const std::string& path, std::set<std::string>* done, FILE** out, std::string* error) {
    const int fd = ::open(path.c_str(), O_RDWR | O_APPEND | O_CREAT | O_NONBLOCK | O_CLOEXEC, 0644);
    if (fd < 0) {
        *error = path + ": " + std::strerror(errno);
        return false;
    }
    auto refuse = [&](const std::string& why) {
        ::close(fd);
        *error = path + ": " + why;
        return false;
    };
    struct stat st;
    if (::fstat(fd, &st) != 0) return refuse(std::strerror(errno));
    if (!S_ISREG(st.st_mode)) return refuse("--resume needs a regular file (scan's own output), not this one");
    const std::string not_ours =
        " is not a line of scan's output; --resume appends only to a file scan wrote "
        "(nothing was changed)";
    std::string line, source;
    uint64_t complete = 0, at = 0, number = 1;
    char buf[65536];
    for (;;) {
        const ssize_t n = ::read(fd, buf, sizeof buf);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) return refuse(std::strerror(errno));
        if (n == 0) break;
        for (ssize_t i = 0; i < n; ++i, ++at) {
            if (buf[i] != '\n') {
                if (line.empty() && buf[i] != '{') return refuse("line " + std::to_string(number) + not_ours);
                if (line.size() >= kMaxResumeLine) return refuse("line " + std::to_string(number) + not_ours);
                line += buf[i];
                continue;
            }
            if (!line.empty()) {  // empty lines are passed over
                if (!scan_line(line, &source)) return refuse("line " + std::to_string(number) + not_ours);
                done->insert(source);
            }
            line.clear();
            complete = at + 1;
            ++number;
        }
    }
    if (!line.empty()) {
        if (scan_line(line, &source)) {  // whole, only its newline missing: kept, and the newline added
            done->insert(source);
            if (::write(fd, "\n", 1) != 1) return refuse(std::strerror(errno));
        } else if (!cut_scan_line(line)) {
            return refuse("line " + std::to_string(number) + not_ours);
        } else if (::ftruncate(fd, static_cast<off_t>(complete)) != 0) {
            return refuse(std::strerror(errno));
        }
    }
    ::fcntl(fd, F_SETFL, O_APPEND);  // blocking again (a regular file never blocks, but writes expect it)
    *out = ::fdopen(fd, "ab");
    if (!*out) return refuse(std::strerror(errno));
    return true;
}

std::string sha256_hex(const std::string& bytes) {
    Hasher h(HashAlgo::kSha256);
    h.update(bytes.data(), bytes.size());
    return h.hex();
}

// What the first bytes of a file that is not a model are instead.
void flag_head(const std::string& head, nlohmann::json* line, std::vector<std::string>* flags) {
    static const std::string kLfs = "version https://git-lfs.github.com/spec/v1\n";
    if (head.compare(0, kLfs.size(), kLfs) == 0) {
        flags->push_back("lfs_pointer");
        // "oid sha256:HEX" and "size N" lines: the object the pointer stands for.
        nlohmann::json lfs = {{"oid", nullptr}, {"size", nullptr}};
        size_t at = kLfs.size();
        while (at < head.size()) {
            size_t end = head.find('\n', at);
            if (end == std::string::npos) end = head.size();
            const std::string l = head.substr(at, end - at);
            uint64_t size = 0;
            if (l.compare(0, 4, "oid ") == 0) lfs["oid"] = l.substr(4);
            if (l.compare(0, 5, "size ") == 0 && parse_u64(l.substr(5), &size)) lfs["size"] = size;
            at = end + 1;
        }
        (*line)["lfs"] = lfs;
        return;
    }
    // A web page or a storage service's XML error document (S3 <Error>, GCS) where the model should be.
    size_t i = head.compare(0, 3, "\xef\xbb\xbf") == 0 ? 3 : 0;
    while (i < head.size() && (head[i] == ' ' || head[i] == '\t' || head[i] == '\r' || head[i] == '\n')) ++i;
    const std::string start = lower(head.substr(i, 32));
    for (const char* marker : {"<!doctype html", "<html", "<head", "<body", "<?xml", "<error", "<!--"}) {
        if (start.compare(0, std::strlen(marker), marker) == 0) {
            flags->push_back("html");
            return;
        }
    }
}

// One model's JSON line.
struct ScanResult {
    std::string line;
    std::string verdict;  // "ok" or the error's code
    std::vector<std::string> flags;
};

ScanResult scan_one(const std::string& source, const VerifyOptions& options) {
    LoadedModel model;
    const Verdict v = verify_model(source, options, &model);
    ScanResult r;
    r.verdict = verdict_name(v);
    nlohmann::json line = {{"verdict", r.verdict}, {"warnings", v.warnings}};
    set_path(&line, "source", source);
    line["error"] = verdict_error_json(v);

    std::vector<std::string>& flags = r.flags;
    const ModelInfo& info = model.info;
    if (v.loaded) {
        auto string_key = [&](const char* key) {
            const MetadataEntry* e = info.find(key);
            return e && e->value.type == ValueType::kString ? nlohmann::json(e->value.str) : nlohmann::json(nullptr);
        };
        uint64_t params = 0;
        nlohmann::json dtypes = nlohmann::json::object();
        for (const TensorInfo& t : info.tensors) {
            params += t.n_elements;
            nlohmann::json& d = dtypes[t.dtype_name()];
            if (d.is_null()) d = {{"tensors", 0}, {"bytes", 0}};
            d["tensors"] = d["tensors"].get<uint64_t>() + 1;
            d["bytes"] = d["bytes"].get<uint64_t>() + t.nbytes;
        }
        line["format"] = format_name(info.format);
        line["architecture"] = string_key("general.architecture");
        line["name"] = string_key("general.name");
        line["parameters"] = params;
        line["file_size"] = info.file_size;
        line["files"] = model.paths.size();
        line["tensors"] = info.tensors.size();
        line["dtypes"] = dtypes;
        const MetadataEntry* chat = info.find("tokenizer.chat_template");
        line["chat_template_sha256"] = chat && chat->value.type == ValueType::kString
                                           ? nlohmann::json(sha256_hex(chat->value.str))
                                           : nlohmann::json(nullptr);
    } else {
        for (const char* key : {"format", "architecture", "name", "parameters", "file_size", "files", "tensors",
                                "dtypes", "chat_template_sha256"}) {
            line[key] = nullptr;
        }
        // A type this build does not know (a GGUF id ggml removed, a safetensors dtype string): strict parsing
        // (verify's) stops at it.
        if (v.code == Error::kBadType && (v.what == "tensor.type" || v.what == "tensor.dtype")) {
            flags.push_back("unknown_type");
        }
        if (!is_source_error(v.code)) {
            // Truncated at byte 0 with no first bytes: the file has none.
            if (v.code == Error::kTruncated && v.offset == 0 && v.load_error.head.empty()) {
                flags.push_back("empty");
            }
            flag_head(v.load_error.head, &line, &flags);
        }
    }

    // Split consistency: the name says whether the model is several files; it loaded (consistent), or a part
    // is missing or unreadable, or the parts disagree (bad_split), or the verdict came before that was known.
    const size_t slash = source.rfind('/');
    ModelPlan plan;
    const bool planned =
        plan.plan({PlanSource{slash == std::string::npos ? source : source.substr(slash + 1), true, true}}).ok();
    const bool index = planned && plan.index_source() != kSibling;
    if (planned && (plan.kind() == PlanKind::kSplit || index)) {
        nlohmann::json split = {{"kind", index ? "safetensors_shards" : "gguf_split"}};
        split["parts"] = v.loaded ? nlohmann::json(model.paths.size())
                         : index  ? nlohmann::json(nullptr)
                                  : nlohmann::json(plan.parts().size());
        if (v.loaded) {
            split["consistent"] = true;
        } else if (v.code == Error::kBadSplit || (is_source_error(v.code) && v.file != source)) {
            split["consistent"] = false;
        } else {
            split["consistent"] = nullptr;
        }
        line["split"] = split;
    } else {
        line["split"] = nullptr;
    }

    if (options.decode) {
        line["decoded"] = v.decoded;
        nlohmann::json scales = nlohmann::json::array();
        bool nan = false, inf = false;
        for (const ScaleFinding& f : v.scales) {
            nan |= f.nan_blocks > 0;
            inf |= f.inf_blocks > 0;
            if (scales.size() < kMaxListed) {
                scales.push_back({{"tensor", model.info.tensors[f.tensor].name},
                                  {"blocks", f.blocks},
                                  {"nan_blocks", f.nan_blocks},
                                  {"inf_blocks", f.inf_blocks},
                                  {"first_offset", f.first_offset}});
            }
        }
        if (nan) flags.push_back("nan_scale");
        if (inf) flags.push_back("inf_scale");
        line["bad_scales"] = scales;
        if (!v.zeros.empty()) flags.push_back("zero_tensor");
        line["zero_tensors"] = std::vector<std::string>(
            v.zeros.begin(), v.zeros.begin() + static_cast<std::ptrdiff_t>(std::min(v.zeros.size(), kMaxListed)));
        line["zero_tensor_count"] = v.zeros.size();
    }
    line["flags"] = flags;
    r.line = json_dump(line, -1);
    return r;
}

// "I/N" with N >= 1 and I < N.
bool parse_shard(const std::string& s, uint64_t* index, uint64_t* count) {
    const size_t slash = s.find('/');
    return slash != std::string::npos && parse_u64(s.substr(0, slash), index) &&
           parse_u64(s.substr(slash + 1), count) && *count >= 1 && *index < *count;
}

// The one-line progress on a terminal: models done of the list, ok and failed, rate.
class ScanProgress {
public:
    explicit ScanProgress(size_t total) : total_(total), enabled_(::isatty(STDERR_FILENO) == 1) {}
    void update(size_t done, size_t failed, double seconds) {
        if (!enabled_) return;
        const auto now = std::chrono::steady_clock::now();
        if (drawn_ && now - last_ < std::chrono::milliseconds(100) && done != total_) return;
        last_ = now;
        drawn_ = true;
        std::fprintf(stderr, "\rscan %zu/%zu  ok %zu  failed %zu  %.1f models/s\x1b[K", done, total_, done - failed,
                     failed, seconds > 0 ? static_cast<double>(done) / seconds : 0.0);
        std::fflush(stderr);
    }
    void finish() {
        if (drawn_) std::fputs("\r\x1b[K", stderr);
        drawn_ = false;
    }

private:
    size_t total_;
    bool enabled_;
    bool drawn_ = false;
    std::chrono::steady_clock::time_point last_;
};

}  // namespace

int cmd_scan(const std::vector<std::string>& argv) {
    const auto start = std::chrono::steady_clock::now();  // the summary's time includes listing the models
    Args args;
    if (!parse_args(argv, {"--decode"}, {"--list", "--jobs", "--threads", "--shard", "--resume"}, &args)) {
        return kExitUsage;
    }
    uint64_t jobs = default_threads();
    if (args.has("--jobs") && (!parse_u64(args.get("--jobs"), &jobs) || jobs < 1 || jobs > 256)) {
        return fail(kExitUsage, "--jobs needs a number from 1 to 256, not '" + args.get("--jobs") + "'");
    }
    VerifyOptions options;
    options.decode = args.has("--decode");
    options.find_zeros = options.decode;
    options.progress = false;
    // Decode threads per model: the cores shared among the models verified at once, unless given.
    if (!parse_threads(args, &options.threads)) return kExitUsage;
    if (!args.has("--threads")) {
        options.threads = std::max(1u, default_threads() / static_cast<unsigned>(jobs));
    }
    uint64_t shard = 0, shards = 1;
    if (args.has("--shard") && !parse_shard(args.get("--shard"), &shard, &shards)) {
        return fail(kExitUsage, "--shard needs I/N with 0 <= I < N, not '" + args.get("--shard") + "'");
    }

    std::string error;
    if (!crypto_library(&error)) return fail(kExitIo, "scan: " + error);  // for chat_template_sha256
    std::vector<std::string> given = args.positional;
    for (const auto& o : args.options) {
        if (o.first == "--list" && !read_list(o.second, &given, &error)) return fail(kExitIo, error);
    }
    // An empty list file is an empty list (a shard may hold nothing); no source at all is a usage error.
    if (args.positional.empty() && !args.has("--list")) return usage_error();
    std::vector<std::string> list;
    for (const std::string& s : given) {
        struct stat st;
        if (!is_url(s) && ::stat(s.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) {
            if (!walk(s, &list, &error)) return fail(kExitIo, error);
        } else {
            list.push_back(s);
        }
    }
    std::sort(list.begin(), list.end());
    list.erase(std::unique(list.begin(), list.end()), list.end());
    const size_t listed = list.size();
    std::vector<std::string> items;
    for (size_t k = 0; k < list.size(); ++k) {
        if (k % shards == shard) items.push_back(std::move(list[k]));
    }

    FILE* out = stdout;
    size_t skipped = 0;
    if (args.has("--resume")) {
        const std::string path = args.get("--resume");
        std::set<std::string> done;
        if (!open_resume(path, &done, &out, &error)) return fail(kExitIo, error);
        const size_t before = items.size();
        items.erase(std::remove_if(items.begin(), items.end(), [&](const std::string& s) { return done.count(s); }),
                    items.end());
        skipped = before - items.size();
    }

    // Workers take the items in list order; this thread prints them in that order as they finish.
    // Item i's result waits in slot i % kReorderWindow: a worker starts item i only once i - kReorderWindow
    // is printed, so the slot is free.
    std::vector<ScanResult> results(std::min(items.size(), kReorderWindow));
    std::vector<char> finished(results.size(), 0);
    std::mutex mutex;
    std::condition_variable changed;
    size_t printed = 0;
    std::atomic<size_t> next{0};
    auto work = [&] {
        for (;;) {
            const size_t i = next++;
            if (i >= items.size()) return;
            {
                std::unique_lock<std::mutex> lock(mutex);
                changed.wait(lock, [&] { return i < printed + kReorderWindow; });
            }
            ScanResult r = scan_one(items[i], options);
            std::lock_guard<std::mutex> lock(mutex);
            results[i % kReorderWindow] = std::move(r);
            finished[i % kReorderWindow] = 1;
            changed.notify_all();
        }
    };
    std::vector<std::thread> workers;
    for (uint64_t j = 0; j < std::min<uint64_t>(jobs, std::max<size_t>(items.size(), 1)); ++j)
        workers.emplace_back(work);

    ScanProgress progress(items.size());
    std::map<std::string, size_t> failed_by_code, flagged;
    size_t failed = 0;
    bool write_error = false;
    while (printed < items.size()) {
        ScanResult r;
        {
            std::unique_lock<std::mutex> lock(mutex);
            const size_t slot = printed % kReorderWindow;
            changed.wait(lock, [&] { return finished[slot] != 0; });
            r = std::move(results[slot]);
            results[slot] = ScanResult();
            finished[slot] = 0;
        }
        if (r.verdict != "ok") {
            ++failed;
            ++failed_by_code[r.verdict];
        }
        for (const std::string& f : r.flags) ++flagged[f];
        r.line += '\n';
        if (std::fwrite(r.line.data(), 1, r.line.size(), out) != r.line.size() || std::fflush(out) != 0) {
            write_error = true;
        }
        {
            std::lock_guard<std::mutex> lock(mutex);
            ++printed;
        }
        changed.notify_all();
        progress.update(printed, failed,
                        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    }
    for (std::thread& w : workers) w.join();
    progress.finish();
    if (out != stdout && std::fclose(out) != 0) write_error = true;
    if (write_error) {
        const std::string why = std::strerror(errno);
        if (out != stdout) return fail(kExitIo, args.get("--resume") + ": " + why);
        stdout_failure_reported();  // not again by finish_stdout
        return fail(kExitIo, "cannot write standard output: " + why + " (the output is incomplete)");
    }

    // The summary: models, ok, failed by code, flags, time.
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::string summary = "scan: " + with_commas(items.size()) + (items.size() == 1 ? " model, " : " models, ") +
                          with_commas(items.size() - failed) + " ok, " + with_commas(failed) + " failed";
    if (!failed_by_code.empty()) {
        std::string codes;
        for (const auto& c : failed_by_code)
            codes += (codes.empty() ? "" : ", ") + c.first + " " + with_commas(c.second);
        summary += " (" + codes + ")";
    }
    if (!flagged.empty()) {
        std::string flags;
        for (const auto& f : flagged) flags += (flags.empty() ? "" : ", ") + f.first + " " + with_commas(f.second);
        summary += "; flags: " + flags;
    }
    if (shards > 1)
        summary += "; shard " + std::to_string(shard) + "/" + std::to_string(shards) + " of " + with_commas(listed) +
                   " listed";
    if (skipped) summary += "; " + with_commas(skipped) + " skipped (already in " + args.get("--resume") + ")";
    char timing[96];
    std::snprintf(timing, sizeof timing, "; %.2f s, %.1f models/s", seconds,
                  seconds > 0 ? static_cast<double>(items.size()) / seconds : 0.0);
    std::fprintf(stderr, "%s\n", printable(summary + timing, SIZE_MAX).c_str());
    return failed ? kExitInvalid : kExitOk;
}

}  // namespace ws::cli
