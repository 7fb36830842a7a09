// SPDX-License-Identifier: MIT
// `edit IN OUT [--set KEY=VALUE[:TYPE]] ... [--delete KEY] ... [--set-chat-template FILE] [--force]` and
// `edit IN --in-place ...`: a GGUF's metadata changed, its tensors streamed through byte for byte.
//
// The edit is the core's EditJob (include/weightstream/edit_job.h; the package's edit() runs the same job, so it
// writes the same bytes). Out of place, the job is driven into OUT through cli/job_output.h (a temporary file
// renamed over OUT when complete); an existing OUT is replaced only with --force, and OUT may not be IN. --in-place
// changes only IN's header region, and only when the new header ends within the old header's padding (so no tensor
// moves); otherwise nothing is written and the command fails (exit 2). It is crash-safe: IN is opened once (the
// file a symbolic link names), a new file is made from it in its directory (a clone sharing its blocks where the
// file system can, FICLONE on btrfs, XFS, bcachefs: O(header) work; elsewhere a full copy, which needs IN's size
// in free space and its time), the header is written into that, fsync'd, and renamed over IN only while IN is
// still the file read. A reader or a kill -9 at any point sees the old file or the new one; a file renamed into
// place meanwhile is left alone (exit 3); a file with other hard links is refused (exit 3).
//
// Exit statuses: 0 done; 1 IN is invalid or not editable (safetensors, a split GGUF, big-endian); 2 a usage
// error (a bad TYPE or VALUE, a ':' suffix that looks like a type and is not one (":u128"), JSON that does not parse, a
// key to delete that does not exist, general.alignment, OUT exists, OUT is IN, the new header does not fit in place); 3
// an I/O error.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstring>

#include "cli/cli.h"
#include "cli/job_output.h"
#include "io/output_file.h"
#include "io/tensor_io.h"
#include "weightstream/edit_job.h"

namespace ws::cli {
namespace {

constexpr uint64_t kMaxTemplateBytes = uint64_t(64) << 20;  // a chat template larger than this is refused

bool read_text_file(const std::string& path, std::string* out, std::string* error) {
    FILE* f = std::fopen(path.c_str(), "rb");
    if (!f) {
        *error = path + ": cannot open";
        return false;
    }
    char buf[65536];
    size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, f)) > 0 && out->size() <= kMaxTemplateBytes) out->append(buf, n);
    const bool failed = std::ferror(f) != 0;
    std::fclose(f);
    if (failed) *error = path + ": read error";
    if (out->size() > kMaxTemplateBytes) *error = path + ": larger than 64 MiB";
    return error->empty();
}

bool same_file(const std::string& a, const std::string& b) {
    struct stat sa, sb;
    return stat(a.c_str(), &sa) == 0 && stat(b.c_str(), &sb) == 0 && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

std::string edit_error(const Status& s, const std::string& key) {
    const std::string k = "'" + printable(key, 200) + "'";
    const std::string what = s.what ? s.what : "";
    if (what == "general.alignment") {
        return "general.alignment cannot be edited (it moves every tensor; convert rewrites the data)";
    }
    if (what == "delete") return "--delete " + k + ": no such key";
    if (what == "value.length") {
        return "--set " + k +
               ": the value is larger than a GGUF reader takes (an array of more than 67,108,864 items or a string "
               "of more than 64 MiB)";
    }
    if (what == "key") return "--set: the key is empty";
    if (s.code == Error::kBadJson) return "--set " + k + ": the value is not valid JSON";
    if (what == "value.range") {
        return "--set " + k +
               ": the number is out of range for its type (u8..u64 and i8..i64 by their bits, f32 up to "
               "3.4028235e38 and not so small it becomes 0, f64 up to 1.8e308; an integer at most 64 bits)";
    }
    return "--set " + k +
           ": the value is not of its type (TYPE is u8 i8 u16 i16 u32 i32 u64 i64 f32 f64 bool str; an existing key "
           "keeps its type unless one is given; arrays are JSON, [1,2]:i32 or [\"a\",\"b\"], of one kind of item)";
}

// A ':' suffix that is meant as a TYPE but is not one ("u128", "f16", "string"): refused rather than kept as
// part of a string value. Other suffixes ("http://x:8080", "a:b") are text.
bool looks_like_type(const std::string& text) {
    const size_t colon = text.rfind(':');
    if (colon == std::string::npos) return false;
    const std::string t = text.substr(colon + 1);
    for (const char* word : {"string", "int", "uint", "float", "double", "boolean", "array"}) {
        if (t == word) return true;
    }
    if (t.size() < 2 || (t[0] != 'u' && t[0] != 'i' && t[0] != 'f')) return false;
    return std::all_of(t.begin() + 1, t.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// A descriptor closed when it goes out of scope.
struct Descriptor {
    int fd = -1;
    ~Descriptor() {
        if (fd >= 0) ::close(fd);
    }
};

// Opens the file --in-place edits: *target is the path with its symbolic links resolved (the rename replaces
// the file, not a link to it), *source its descriptor. Refused: anything but a regular file (opened without
// blocking, so a FIFO cannot hang the command), and a file with other hard links (the rename would give only this
// name the new header; the other names would keep the old file).
bool open_in_place_source(const std::string& path, std::string* target, Descriptor* source, FileIdentity* id,
                          std::string* error) {
    char resolved[PATH_MAX];
    if (!::realpath(path.c_str(), resolved)) {
        *error = path + ": " + std::strerror(errno);
        return false;
    }
    *target = resolved;
    source->fd = ::open(resolved, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOFOLLOW);
    struct stat st;
    if (source->fd < 0 || ::fstat(source->fd, &st) != 0) {
        *error = path + ": " + std::strerror(errno);
        return false;
    }
    if (!S_ISREG(st.st_mode)) {
        *error = path + ": --in-place edits a regular file";
        return false;
    }
    if (st.st_nlink > 1) {
        *error = path + ": has " + std::to_string(st.st_nlink) +
                 " hard links; --in-place replaces the file under this name only (the others would keep the old "
                 "one): write to OUT instead";
        return false;
    }
    id->dev = st.st_dev;
    id->ino = st.st_ino;
    return true;
}

// The crash-safe in-place edit: a new file made from the old one (a clone sharing its blocks where the file system
// can, else a copy), the new header written over its start, fsync'd, and renamed over the path only while the path
// still names the file read. A reader, a kill or a power loss at any point sees the old file or the new one.
int write_in_place(const std::string& target, int source_fd, const FileIdentity& id, uint64_t size,
                   const std::vector<uint8_t>& header, bool* cloned) {
    OutputFile out;
    if (!out.open_replacing(target, id) || !out.copy_of(source_fd, size, cloned) ||
        !out.write_at(0, header.data(), header.size()) || !out.commit()) {
        return fail(kExitIo, out.error() + "; nothing was changed");
    }
    return kExitOk;
}

}  // namespace

int cmd_edit(const std::vector<std::string>& argv) {
    Args args;
    if (!parse_args(argv, {"--in-place", "--force"}, {"--set", "--delete", "--set-chat-template"}, &args)) {
        return kExitUsage;
    }
    const bool in_place = args.has("--in-place");
    if (args.positional.size() != (in_place ? 1u : 2u)) return usage_error();
    if (in_place && args.has("--force")) return fail(kExitUsage, "--force has no meaning with --in-place");
    const std::string& in_path = args.positional[0];

    MetadataEdits edits;
    for (const auto& [name, value] : args.options) {
        if (name == "--set") {
            std::string key;
            EditValue v;
            if (!parse_set_argument(value, &key, &v)) {
                return fail(kExitUsage, "--set takes KEY=VALUE[:TYPE], not '" + printable(value, 80) + "'");
            }
            if (v.type.empty() && looks_like_type(v.text)) {
                return fail(kExitUsage, "--set '" + printable(key, 200) + "': unknown TYPE '" +
                                            printable(v.text.substr(v.text.rfind(':') + 1), 40) +
                                            "' (u8 i8 u16 i16 u32 i32 u64 i64 f32 f64 bool str; a string ending in "
                                            "it takes :str)");
            }
            edits.set.emplace_back(key, v);
        } else if (name == "--delete") {
            edits.remove.push_back(value);
        } else if (name == "--set-chat-template") {
            EditValue v;
            v.type = "str";
            std::string error;
            if (!read_text_file(value, &v.text, &error)) return fail(kExitIo, error);
            edits.set.emplace_back("tokenizer.chat_template", v);
        }
    }
    if (edits.set.empty() && edits.remove.empty()) {
        return fail(kExitUsage, "edit: nothing to change (--set, --delete or --set-chat-template)");
    }
    if (!in_place) {
        const std::string& out_path = args.positional[1];
        if (same_file(in_path, out_path)) return fail(kExitUsage, "OUT is IN: use --in-place to edit IN itself");
        struct stat st;
        if (!args.has("--force") && out_path != "-" && lstat(out_path.c_str(), &st) == 0) {
            return fail(kExitUsage, out_path + " exists (--force replaces it)");
        }
    }

    // --in-place: the file the path names (a symbolic link's target, which is what gets replaced), held open from
    // here to the rename: the header parsed, the bytes cloned and the file replaced are this one file's.
    std::string target = in_path;
    Descriptor source;
    FileIdentity source_id;
    if (in_place && in_path.find("://") == std::string::npos) {
        std::string error;
        if (!open_in_place_source(in_path, &target, &source, &source_id, &error)) return fail(kExitIo, error);
    }

    LoadedModel model;
    int status = kExitOk;
    if (!load(in_path, false, &model, &status)) return status;  // messages name IN as typed
    // (A split GGUF is refused below, as out of place.)
    if (source.fd >= 0 && model.files.size() == 1 &&
        (model.files[0].identity().dev != source_id.dev || model.files[0].identity().ino != source_id.ino)) {
        return fail(kExitIo, in_path + ": replaced by another file while it was opened; nothing was changed");
    }
    if (model.info.format != Format::kGguf) {
        return fail(kExitInvalid,
                    in_path + ": edit changes GGUF metadata only; this is " + format_name(model.info.format));
    }
    if (model.files.size() > 1) {
        return fail(kExitInvalid, in_path + ": a split GGUF: edit one part at a time is not supported");
    }
    if (model.info.big_endian) return fail(kExitInvalid, in_path + ": a big-endian GGUF cannot be edited");
    std::string failed_key;
    Result<std::unique_ptr<EditJob>> made = EditJob::make(model.info, edits, &failed_key);
    if (!made.ok()) {
        const Status& s = made.status();
        if (s.code == Error::kBadType || s.code == Error::kBadJson || s.code == Error::kBadKey ||
            std::string(s.what) == "value.length") {
            return fail(kExitUsage, edit_error(s, failed_key));
        }
        return fail(kExitInvalid, in_path + ": cannot be written back: " + error_name(s.code) + ": " + s.what);
    }
    EditJob& job = *made.value();
    const EditPlan& plan = job.plan();

    if (in_place) {
        // Every tensor's range must lie inside its file before the header is rewritten.
        for (const TensorInfo& t : model.info.tensors) {
            if (model.remote(t)) continue;
            TensorBytes held;
            if (!tensor_bytes_or_fail(model, t, &held, &status)) return status;
        }
        if (std::any_of(model.remotes.begin(), model.remotes.end(), [](const auto& r) { return r != nullptr; })) {
            return fail(kExitUsage, in_path + ": --in-place edits a local file, not a URL");
        }
        if (!edit_fits_in_place(model.info, plan)) {
            return fail(kExitUsage, in_path +
                                        ": the new header does not end within the old header's padding (the data "
                                        "starts at byte " +
                                        std::to_string(model.info.data_offset) +
                                        "; the new header would put it at byte " +
                                        std::to_string(plan.layout.data_offset) +
                                        "): --in-place cannot move the tensors; write to OUT instead");
        }
        const std::vector<uint8_t>& h = plan.layout.header;
        bool cloned = false;
        const int written = write_in_place(target, source.fd, source_id, model.files[0].size(), h, &cloned);
        if (written != kExitOk) return written;
        std::printf("%s: header rewritten in place (%s), %zu metadata keys, %s bytes\n", in_path.c_str(),
                    cloned ? "a clone renamed over it" : "a copy renamed over it", plan.metadata.size(),
                    with_commas(h.size()).c_str());
        return kExitOk;
    }

    const std::string& out_path = args.positional[1];
    // Every step is a copy in one part: no worker threads.
    const int written = write_job_output(job, model, out_path, 1, "edit", model.info.tensors.size(), nullptr);
    if (written != kExitOk) return written;
    if (out_path != "-") {
        std::printf("%s: %zu metadata keys, %zu tensors, %s bytes\n", out_path.c_str(), plan.metadata.size(),
                    model.info.tensors.size(), with_commas(plan.layout.file_size).c_str());
    }
    return kExitOk;
}

}  // namespace ws::cli
