// SPDX-License-Identifier: MIT
// `hash FILE [--json] [--threads N]`: per tensor the sha256 of its stored bytes and of its little-endian
// float32 decode: the parity fingerprint that the wasm build must reproduce (ARCHITECTURE.md).
// `hash --manifest [--xxh64] [--xxh3] [--sha1] [--sha256] [--all] [--uuid] [--no-layer] FILE` and
// `hash --check MANIFEST [those options] FILE`: llama.cpp's llama-gguf-hash manifests (examples/gguf-hash),
// the same lines, digests and exit statuses:
//   - per tensor in directory order, one line per selected digest (xxh64, xxh3, sha1, sha256 in that order)
//     of its ggml_nbytes() data bytes: "%-8s  HEX  FILE:NAME"; then the whole-model digests of every
//     tensor's data bytes one after another in directory order (no header, no padding): "%-8s  HEX  FILE";
//     then with --uuid "uuid      UUID  FILE", the UUIDv5 (RFC 9562: SHA-1 of the namespace's 16 bytes and
//     that same data, version 5, variant 10) in llama.cpp's namespace. FILE is the path as typed.
//   - no digest option: xxh64 (--uuid alone prints only the uuid); --all: xxh64, xxh3, sha1 and sha256;
//     --no-layer: the whole-model lines only.
//   - --check reads MANIFEST's lines as whitespace-separated TYPE HASH NAME (other lines and fields are
//     ignored; the first line of a TYPE and NAME counts), prints "manifest  MANIFEST" and the types found,
//     hashes (without a digest option: the strongest type present: sha256, sha1, xxh64, xxh3, uuid), prints
//     each line with "  -  Ok", "  -  Mismatch" or "  -  Not Found", then "Verification results for MANIFEST
//     - RESULT". Exit statuses as llama-gguf-hash: 0 Success; 1 Failure (a mismatch); 3 Manifest Missing
//     Entry (none of the model's lines found); 4 Manifest Unknown Hash (no line of a known type); 5 Manifest
//     File Error (cannot be read). An unreadable model fails as every command does (1 invalid, 3 I/O).
// Two deliberate differences: llama-gguf-hash checks the uuid against the manifest's "sha256" line of FILE
// (so it never matches); here it is checked against the "uuid" line. And a manifest that has per-tensor lines
// but not one of a tensor of FILE is status 3 (Manifest Missing Entry) here, where llama-gguf-hash trusts the
// lines it finds (a manifest cut short by a full disk passed its --check); a manifest whose last line has no
// newline (cut short) is status 5 (Manifest File Error).
// llama-gguf-hash reads GGUF only: a safetensors model is refused (exit 2). A part of a split GGUF gives the
// lines llama-gguf-hash gives for that file alone: its own tensors (the other parts must be present, as for
// every command). Names are printed through printable() (control bytes escaped), as every name is here.
// A URL's manifest is the downloaded file's, named by the URL. The digests are the core's HashJob's
// (weightstream/hash_job.h), run by the one driver: a stream (a pipe) is hashed as it comes, in offset order.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <set>
#include <string_view>

#include "cli/progress.h"
#include "cli/tensor_hash.h"
#include "io/crypto_library.h"
#include "io/io_metrics.h"
#include "io/job_driver.h"
#include "io/tensor_io.h"
#include "weightstream/dequant.h"
#include "weightstream/model_json.h"

namespace ws::cli {
namespace {

// llama.cpp's UUIDv5 namespace, itself uuid5(NAMESPACE_URL, "en.wikipedia.org/wiki/Llama.cpp"):
// ef001206-dadc-5f6d-a15f-3359e577d4e5.
constexpr uint8_t kLlamaCppUuidNamespace[16] = {0xef, 0x00, 0x12, 0x06, 0xda, 0xdc, 0x5f, 0x6d,
                                                0xa1, 0x5f, 0x33, 0x59, 0xe5, 0x77, 0xd4, 0xe5};
// A manifest lists a few lines per tensor; this is far beyond any real one and keeps a hostile file small.
constexpr uint64_t kMaxManifestBytes = uint64_t(1) << 30;

constexpr HashAlgo kAlgos[] = {HashAlgo::kXxh64, HashAlgo::kXxh3, HashAlgo::kSha1, HashAlgo::kSha256};
constexpr size_t kNumAlgos = 4;

// The first tensor, in directory order, whose bytes lie outside its file or (decode) that does not decode: told
// before any is hashed, so that the error does not depend on the order the job hashes them in. A stream's are
// found as it is read.
bool tensors_usable(const LoadedModel& model, const std::vector<size_t>& tensors, bool decode, int* status) {
    if (model.files.size() == 1 && model.files[0].is_stream()) return true;
    for (size_t i : tensors) {
        const TensorInfo& t = model.info.tensors[i];
        const std::string& file = model.paths[t.file_index];
        if (!model.tensor_in_file(t)) {
            *status = fail(kExitInvalid, describe(file, make_error(Error::kTruncated, t.offset, "tensor.data")) +
                                             ": tensor " + printable(t.name, 200));
            return false;
        }
        const Status s = check_decodable(t.dtype, t.n_elements);
        if (decode && decode_problem(model.info, t).empty() && !s.ok()) {
            *status = fail(kExitInvalid, describe(file, make_error(s.code, t.info_offset, s.what)) + ": tensor " +
                                             printable(t.name, 200));
            return false;
        }
    }
    return true;
}

// Runs a HashJob over the model, with progress and a decode span per step; false after printing why it failed.
// read_stream: the job reads in offset order, so a stream (a pipe) is read as it comes (else: not_seekable).
bool run_hash_job(LoadedModel& model, HashJob& job, unsigned threads, bool read_stream, int* status) {
    std::vector<JobSource> sources = sources_of(model);
    if (read_stream && model.files.size() == 1 && model.files[0].is_stream()) sources[0].stream = &model.files[0];
    Progress progress("hash", job.total_work());
    DriveOptions options;
    options.threads = threads;
    // Steps run one after another, so a step began when the one before it ended.
    uint64_t step_started = io_now_us();
    options.progress = [&](const JobStep& step) {
        progress.add(step.work);
        const uint64_t now = io_now_us();
        const TensorInfo& t = model.info.tensors[static_cast<size_t>(step.tensor)];
        record_decode(t.name, t.dtype_name(), step.work, step_started, now - step_started);
        step_started = now;
    };
    const DriveResult result = drive(job, sources, options);
    progress.finish();
    const HashReport& report = job.report();
    if (result.kind == DriveResult::Kind::kSource) {
        *status = fail_load(result.load);
    } else if (report.failed >= 0) {
        const TensorInfo& t = model.info.tensors[static_cast<size_t>(report.failed)];
        // A stream is truncated where it ended; a file, as every command says it, at the tensor.
        const Status at = !report.unreadable             ? report.failure
                          : sources[t.file_index].stream ? result.load.status
                                                         : make_error(Error::kTruncated, t.offset, "tensor.data");
        *status = fail(kExitInvalid, describe(model.paths[t.file_index], at) + ": tensor " + printable(t.name, 200));
    } else if (!result.ok()) {
        *status = fail(kExitInvalid, std::string("internal error: ") + result.status.what);
    }
    return result.ok();
}

int hash_fingerprints(const Args& args, const std::string& path, unsigned threads) {
    std::string error;
    if (!crypto_library(&error)) return fail(kExitIo, "hash: " + error);  // the fingerprints are SHA-256
    TensorFilter filter;
    if (args.has("--filter") && !filter.parse(args.get("--filter"), &error)) return usage_error(error);
    LoadedModel model;
    int status = kExitOk;
    if (!load(path, false, &model, &status)) return status;
    if (args.has("--filter")) {
        // Only the matching tensors are read and hashed (a stream still reads past the others).
        std::vector<TensorInfo>& tensors = model.info.tensors;
        tensors.erase(std::remove_if(tensors.begin(), tensors.end(),
                                     [&](const TensorInfo& t) { return !filter.matches(t.name); }),
                      tensors.end());
        if (tensors.empty()) warn("--filter " + args.get("--filter") + " matches no tensor");
    }
    HashJobOptions options = fingerprint_options(model);
    if (!tensors_usable(model, options.tensors, true, &status)) return status;
    HashJob job(model.info, std::move(options), hasher_factory());
    if (!run_hash_job(model, job, threads, true, &status)) return status;
    const std::vector<TensorInfo>& tensors = model.info.tensors;
    const std::vector<TensorDigests>& rows = job.report().tensors;
    auto raw = [&](size_t i) { return to_hex(rows[i].stored[0].data(), rows[i].stored[0].size()); };
    auto f32 = [&](size_t i) { return to_hex(rows[i].decoded.data(), rows[i].decoded.size()); };
    if (args.has("--json")) {
        nlohmann::json listed = nlohmann::json::array();
        for (size_t i = 0; i < rows.size(); ++i) {
            const TensorInfo& t = tensors[i];
            listed.push_back({{"name", t.name},
                              {"dtype", t.dtype_name()},
                              {"raw_sha256", raw(i)},
                              {"f32_sha256", rows[i].decodable ? nlohmann::json(f32(i)) : nlohmann::json(nullptr)}});
        }
        nlohmann::json out{{"tensors", std::move(listed)}};
        if (io_in_json()) out["io"] = io_json();
        std::printf("%s\n", json_dump(out).c_str());
        return kExitOk;
    }
    // sha256sum-like lines: raw digest, float32 digest ("-" when the type has no decoder), dtype, name.
    for (size_t i = 0; i < rows.size(); ++i) {
        const TensorInfo& t = tensors[i];
        std::printf("%s  %-64s  %-8s %s\n", raw(i).c_str(), rows[i].decodable ? f32(i).c_str() : "-",
                    t.dtype_name().c_str(), printable(t.name, 200).c_str());
    }
    return kExitOk;
}

// ---- llama-gguf-hash manifests -------------------------------------------------------------------------------

struct ManifestOptions {
    bool algo[kNumAlgos] = {};  // indexed like kAlgos
    bool uuid = false;
    bool no_layer = false;

    bool any() const {
        return uuid || std::any_of(algo, algo + kNumAlgos, [](bool b) { return b; });
    }
    // SHA-1 or SHA-256 (libcrypto) is among the digests: the uuid is a SHA-1.
    bool needs_sha() const {
        for (size_t a = 0; a < kNumAlgos; ++a) {
            if (algo[a] && (kAlgos[a] == HashAlgo::kSha1 || kAlgos[a] == HashAlgo::kSha256)) return true;
        }
        return uuid;
    }
};

// One printed line: type, digest, and the name it is of ("FILE:TENSOR" or "FILE").
struct ManifestLine {
    const char* type;
    std::string hash;
    std::string name;
    bool tensor;  // a per-tensor line (else a whole-model one)
};

// The lines of `hash --manifest` for the tensors `selected` (directory order), false after printing why they cannot
// be had: per tensor and digest (when layers are listed), then the whole model's, one HashJob.
bool manifest_lines(LoadedModel& model, const std::vector<size_t>& selected, const std::string& file,
                    const ManifestOptions& opt, unsigned threads, std::vector<ManifestLine>* lines, int* status) {
    const std::vector<TensorInfo>& tensors = model.info.tensors;
    if (!tensors_usable(model, selected, false, status)) return false;
    const DigestFactory factory = hasher_factory();
    HashJobOptions options;
    options.tensors = selected;
    std::vector<HashAlgo> whole;  // options.whole's, then the uuid's SHA-1
    for (size_t a = 0; a < kNumAlgos; ++a) {
        if (!opt.algo[a]) continue;
        if (!opt.no_layer) options.stored.push_back(static_cast<uint32_t>(kAlgos[a]));
        options.whole.push_back(factory(static_cast<uint32_t>(kAlgos[a])));
        whole.push_back(kAlgos[a]);
    }
    if (opt.uuid) {
        options.whole.push_back(factory(static_cast<uint32_t>(HashAlgo::kSha1)));
        options.whole.back()->update(kLlamaCppUuidNamespace, sizeof kLlamaCppUuidNamespace);
    }
    const size_t stored = options.stored.size();
    HashJob job(model.info, std::move(options), factory);
    if (!run_hash_job(model, job, threads, false, status)) return false;
    const HashReport& report = job.report();

    const std::string shown_file = printable(file, SIZE_MAX);
    for (size_t i : selected) {
        for (size_t k = 0; k < stored; ++k) {
            const std::vector<uint8_t>& d = report.tensors[i].stored[k];
            lines->push_back({hash_algo_name(whole[k]), to_hex(d.data(), d.size()),
                              shown_file + ":" + printable(tensors[i].name, SIZE_MAX), true});
        }
    }
    for (size_t k = 0; k < whole.size(); ++k) {
        lines->push_back(
            {hash_algo_name(whole[k]), to_hex(report.whole[k].data(), report.whole[k].size()), shown_file, false});
    }
    if (opt.uuid) {
        std::vector<uint8_t> id = report.whole.back();        // 20 bytes: the first 16 are the UUID
        id[6] = static_cast<uint8_t>((id[6] & 0x0f) | 0x50);  // version 5
        id[8] = static_cast<uint8_t>((id[8] & 0x3f) | 0x80);  // variant 0b10
        const std::string h32 = to_hex(id.data(), 16);
        lines->push_back({"uuid",
                          h32.substr(0, 8) + "-" + h32.substr(8, 4) + "-" + h32.substr(12, 4) + "-" +
                              h32.substr(16, 4) + "-" + h32.substr(20, 12),
                          shown_file, false});
    }
    return true;
}

// A manifest as llama-gguf-hash reads it: the types named by the first field of any line, and for each
// (type, name) the hash of the first line with at least three fields.
struct Manifest {
    bool has_type[kNumAlgos + 1] = {};  // kAlgos order, then uuid
    std::map<std::pair<std::string, std::string>, std::string> entries;
    bool cut_short = false;  // the last line has no newline
};

bool is_space(char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r';
}

constexpr size_t kMaxManifestLine = size_t(64) << 10;  // no name looked up is longer (a path and a tensor name)

// One line of a manifest (no newline): its first field names a type; with three fields, the entry is kept when
// its name is one `wanted` (the model's lines), the first such line of a (type, name) winning. Allocates only for
// a line kept (millions of other lines cost no allocation each).
void read_manifest_line(std::string_view line, bool overlong, const std::set<std::string, std::less<>>& wanted,
                        Manifest* m) {
    std::string_view fields[3];
    size_t n = 0;
    for (size_t i = 0; i < line.size() && n < 3;) {
        while (i < line.size() && is_space(line[i])) ++i;
        size_t j = i;
        while (j < line.size() && !is_space(line[j])) ++j;
        if (j > i) fields[n++] = line.substr(i, j - i);
        i = j;
    }
    if (n == 0) return;
    for (size_t a = 0; a < kNumAlgos; ++a) m->has_type[a] |= fields[0] == hash_algo_name(kAlgos[a]);
    m->has_type[kNumAlgos] |= fields[0] == "uuid";
    if (n == 3 && !overlong && wanted.find(fields[2]) != wanted.end()) {
        m->entries.emplace(std::make_pair(std::string(fields[0]), std::string(fields[2])), std::string(fields[1]));
    }
}

// Reads the manifest f (named path) a piece at a time: memory in proportion to the model's lines (`wanted`), not to
// the manifest. False when it is larger than kMaxManifestBytes.
bool read_manifest(FILE* f, const std::string& path, const std::set<std::string, std::less<>>& wanted, Manifest* m,
                   std::string* why) {
    std::string line;
    bool overlong = false;  // the line is longer than kMaxManifestLine: only its first field is read
    uint64_t total = 0;
    char buf[65536];
    for (size_t n; (n = std::fread(buf, 1, sizeof buf, f)) > 0;) {
        total += n;
        if (total > kMaxManifestBytes) {
            *why = "manifest " + path + " is larger than " + human_bytes(kMaxManifestBytes);
            return false;
        }
        for (size_t i = 0; i < n;) {
            const char* nl = static_cast<const char*>(std::memchr(buf + i, '\n', n - i));
            const size_t end = nl ? static_cast<size_t>(nl - buf) : n;
            const size_t take = std::min(end - i, kMaxManifestLine - std::min(line.size(), kMaxManifestLine));
            line.append(buf + i, take);
            overlong |= take < end - i;
            if (!nl) break;
            read_manifest_line(line, overlong, wanted, m);
            line.clear();
            overlong = false;
            i = end + 1;
        }
    }
    // A read error (a directory) reads as an empty manifest, as std::ifstream gives llama-gguf-hash.
    // Every manifest line ends in a newline: a last line without one was cut short (a full disk), and its
    // digest or name may be cut too (unlike llama-gguf-hash, which reads what is there).
    m->cut_short = !line.empty();
    read_manifest_line(line, overlong, wanted, m);
    return true;
}

// llama-gguf-hash's exit statuses and result names in --check mode.
constexpr int kCheckSuccess = 0, kCheckFailure = 1, kCheckMissingEntry = 3, kCheckUnknownHash = 4, kCheckFileError = 5;

const char* check_result_name(int status) {
    switch (status) {
        case kCheckSuccess:
            return "Success";
        case kCheckFailure:
            return "Failure";
        case kCheckMissingEntry:
            return "Manifest Missing Entry";
        case kCheckUnknownHash:
            return "Manifest Unknown Hash";
        default:
            return "Manifest File Error";
    }
}

int hash_manifest(const Args& args, const std::string& path, unsigned threads) {
    ManifestOptions opt;
    const bool all = args.has("--all");
    for (size_t a = 0; a < kNumAlgos; ++a) opt.algo[a] = all || args.has(std::string("--") + hash_algo_name(kAlgos[a]));
    opt.uuid = args.has("--uuid");
    opt.no_layer = args.has("--no-layer");
    const bool check = args.has("--check") || args.has("-c");
    const std::string manifest_path = args.has("--check") ? args.get("--check") : args.get("-c");

    Manifest manifest;
    std::unique_ptr<FILE, int (*)(FILE*)> manifest_file(nullptr, std::fclose);
    if (check) {
        manifest_file.reset(std::fopen(manifest_path.c_str(), "rb"));
        if (!manifest_file) return fail(kCheckFileError, "cannot open manifest " + manifest_path);
    }
    LoadedModel model;
    int status = kExitOk;
    if (!load(path, false, &model, &status)) return status;
    if (model.info.format != Format::kGguf) {
        return fail(kExitUsage, path +
                                    ": --manifest and --check are llama-gguf-hash's manifests, for GGUF files "
                                    "only (this is " +
                                    format_name(model.info.format) + ")");
    }
    // The tensors of the file named (for a part of a split GGUF, that part's), in its directory order.
    const size_t part =
        static_cast<size_t>(std::find(model.paths.begin(), model.paths.end(), path) - model.paths.begin());
    std::vector<size_t> selected;
    for (size_t i = 0; i < model.info.tensors.size(); ++i) {
        if (model.files.size() == 1 || model.info.tensors[i].file_index == part) selected.push_back(i);
    }

    std::string heading;  // --check's first line, printed once the model is hashed (nothing on an error)
    if (check) {
        // The names the model's lines have (as manifest_lines() prints them): only those lines are kept.
        std::set<std::string, std::less<>> wanted;
        const std::string shown_file = printable(path, SIZE_MAX);
        wanted.insert(shown_file);
        for (size_t i : selected) wanted.insert(shown_file + ":" + printable(model.info.tensors[i].name, SIZE_MAX));
        std::string why;
        if (!read_manifest(manifest_file.get(), manifest_path, wanted, &manifest, &why)) {
            return fail(kCheckFileError, why);
        }
        manifest_file.reset();
        if (std::none_of(manifest.has_type, manifest.has_type + kNumAlgos + 1, [](bool b) { return b; })) {
            return fail(kCheckUnknownHash, "manifest does not have any known hash format in " + manifest_path);
        }
        if (manifest.cut_short) {
            return fail(kCheckFileError, "manifest " + manifest_path + " ends in the middle of a line (cut short?)");
        }
        heading = "manifest  " + printable(manifest_path, SIZE_MAX);
        // The heading lists sha256, sha1, xxh64, xxh3, uuid: strongest first, the order the default is picked.
        static const size_t kStrongestFirst[] = {3, 2, 0, 1, 4};
        for (size_t k : kStrongestFirst) {
            if (manifest.has_type[k])
                heading += std::string("  ") + (k < kNumAlgos ? hash_algo_name(kAlgos[k]) : "uuid");
        }
        if (!opt.any()) {
            for (size_t k : kStrongestFirst) {
                if (!manifest.has_type[k]) continue;
                if (k < kNumAlgos) opt.algo[k] = true;
                opt.uuid = k == kNumAlgos;
                break;
            }
        }
    }
    if (!opt.any()) opt.algo[0] = true;  // llama-gguf-hash's default: xxh64
    std::string unloaded;                // XXH-only manifests load nothing
    if (opt.needs_sha() && !crypto_library(&unloaded)) return fail(kExitIo, "hash: " + unloaded);

    std::vector<ManifestLine> lines;
    if (!manifest_lines(model, selected, path, opt, threads, &lines, &status)) return status;
    if (!check) {
        for (const ManifestLine& l : lines) std::printf("%-8s  %s  %s\n", l.type, l.hash.c_str(), l.name.c_str());
        return kExitOk;
    }
    std::printf("%s\n", heading.c_str());
    bool layer_found = false, layer_mismatch = false, layer_missing = false, model_found = false,
         model_mismatch = false;
    for (const ManifestLine& l : lines) {
        const auto it = manifest.entries.find({l.type, l.name});
        const char* result = "Not Found";
        if (it != manifest.entries.end()) {
            const bool same = it->second == l.hash;
            result = same ? "Ok" : "Mismatch";
            (l.tensor ? layer_found : model_found) = true;
            if (!same) (l.tensor ? layer_mismatch : model_mismatch) = true;
        } else if (l.tensor) {
            layer_missing = true;
        }
        std::printf("%-8s  %s  %s  -  %s\n", l.type, l.hash.c_str(), l.name.c_str(), result);
    }
    // llama-gguf-hash's verdict: the whole-model lines decide when the manifest has them, the per-tensor
    // ones otherwise; a per-tensor mismatch fails either way; nothing found is a missing entry. One more rule
    // than llama-gguf-hash: a manifest with per-tensor lines must have every tensor's (else a missing entry,
    // not Success): a manifest cut short (a full disk) or edited would pass on the lines it still has.
    if (!model_found) {
        status = !layer_found ? kCheckMissingEntry : layer_mismatch ? kCheckFailure : kCheckSuccess;
    } else {
        status = layer_mismatch || model_mismatch ? kCheckFailure : kCheckSuccess;
    }
    if (status == kCheckSuccess && layer_found && layer_missing) status = kCheckMissingEntry;
    std::printf("\nVerification results for %s - %s\n", printable(manifest_path, SIZE_MAX).c_str(),
                check_result_name(status));
    return status;
}

}  // namespace

int cmd_hash(const std::vector<std::string>& argv) {
    Args args;
    if (!parse_args(
            argv, {"--json", "--manifest", "--xxh64", "--xxh3", "--sha1", "--sha256", "--all", "--uuid", "--no-layer"},
            {"--threads", "--check", "-c", "--filter"}, &args)) {
        return kExitUsage;
    }
    if (args.positional.size() != 1) return usage_error();
    unsigned threads = 1;
    if (!parse_threads(args, &threads)) return kExitUsage;
    const bool manifest = args.has("--manifest") || args.has("--check") || args.has("-c");
    bool manifest_option = false;
    for (const char* o : {"--xxh64", "--xxh3", "--sha1", "--sha256", "--all", "--uuid", "--no-layer"}) {
        manifest_option |= args.has(o);
    }
    if (!manifest && manifest_option) return fail(kExitUsage, "hash: digest options need --manifest or --check");
    if (manifest && args.has("--json")) return fail(kExitUsage, "hash: --json is not a manifest option");
    // A manifest's whole-model digests are of every tensor: a filtered one would not be llama-gguf-hash's.
    if (manifest && args.has("--filter")) return fail(kExitUsage, "hash: --filter is not a manifest option");
    return manifest ? hash_manifest(args, args.positional[0], threads)
                    : hash_fingerprints(args, args.positional[0], threads);
}

}  // namespace ws::cli
