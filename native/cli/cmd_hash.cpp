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
// One deliberate difference: llama-gguf-hash checks the uuid against the manifest's "sha256" line of FILE
// (so it never matches); here it is checked against the "uuid" line.
// llama-gguf-hash reads GGUF only: a safetensors model is refused (exit 2). A part of a split GGUF gives the
// lines llama-gguf-hash gives for that file alone: its own tensors (the other parts must be present, as for
// every command). Names are printed through printable() (control bytes escaped), as every name is here.
// A URL's manifest is the downloaded file's, named by the URL: its tensors are fetched one at a time.
#include <algorithm>
#include <atomic>
#include <cstdio>
#include <map>
#include <memory>

#include "cli/progress.h"
#include "cli/tensor_hash.h"
#include "io/crypto_library.h"
#include "io/io_metrics.h"
#include "io/source_error.h"
#include "io/stream_input.h"
#include "io/tensor_io.h"
#include "weightstream/block_stream.h"
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

// hash of a stream (a pipe): the tensors in offset order, each read once in pieces, its stored bytes hashed
// as they come and decoded by a BlockStream; memory stays around one piece and its floats.
bool hash_stream(LoadedModel& model, std::vector<TensorDigests>* rows, Progress* progress, int* status) {
    MappedFile& file = model.files[0];
    const std::vector<TensorInfo>& tensors = model.info.tensors;
    std::vector<size_t> order(tensors.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(),
                     [&](size_t a, size_t b) { return tensors[a].offset < tensors[b].offset; });
    std::vector<float> floats;
    for (size_t index : order) {
        const TensorInfo& t = tensors[index];
        TensorDigests& row = (*rows)[index];
        row.decodable = decode_problem(model.info, t).empty();
        const bool decode = row.decodable && t.dtype != DType::F32;
        Hasher raw(HashAlgo::kSha256), f32(HashAlgo::kSha256);
        BlockStream blocks(decode ? t.dtype : DType::F32, decode ? t.n_elements : 0);
        Status decoded = blocks.status();
        std::string io_error;
        const Status read = read_stream_tensor(
            &file, t,
            [&](const uint8_t* data, size_t size) {
                raw.update(data, size);
                progress->add(size);
                if (!decode || !decoded.ok()) return;
                floats.resize(blocks.floats_for(size));
                size_t written = 0;
                decoded = blocks.feed(data, size, floats.data(), floats.size(), &written);
                f32.update(floats.data(), written * sizeof(float));
            },
            &io_error);
        if (!io_error.empty()) {
            progress->finish();
            *status = fail(kExitIo, source_error_text(model.paths[0], Error::kIo, io_error));
            return false;
        }
        if (read.ok() && decoded.ok() && decode) decoded = blocks.finish();
        const Status bad = !read.ok() ? read : decoded;
        if (!bad.ok()) {
            progress->finish();
            const uint64_t at = bad.code == Error::kTruncated && !read.ok() ? bad.offset : t.info_offset;
            *status = fail(kExitInvalid, describe(model.paths[0], make_error(bad.code, at, bad.what)) + ": tensor " +
                                             printable(t.name, 200));
            return false;
        }
        row.raw = raw.hex();
        row.f32 = decode ? f32.hex() : row.raw;
    }
    progress->finish();
    return true;
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
        if (filter.failed()) return fail(kExitUsage, "--filter: the regular expression is too complex to match");
        if (tensors.empty()) warn("--filter " + args.get("--filter") + " matches no tensor");
    }

    uint64_t total = 0;
    for (const TensorInfo& t : model.info.tensors) total += t.nbytes;
    Progress progress("hash", total);
    std::vector<TensorDigests> rows(model.info.tensors.size());
    const std::vector<TensorInfo>& tensors = model.info.tensors;
    const bool remote =
        std::any_of(tensors.begin(), tensors.end(), [&](const TensorInfo& t) { return model.remote(t); });
    if (model.files.size() == 1 && model.files[0].is_stream()) {
        if (!hash_stream(model, &rows, &progress, &status)) return status;
    } else {
        if (!remote) {
            const uint64_t started = io_now_us();
            rows = hash_tensors(model, threads, HashWork::kDigests, &progress);
            // The tensors are hashed at once on the threads: one span for all of them.
            record_decode("all tensors", "", total, started, io_now_us() - started);
        }
        // The first problem in directory order, as a serial run meets it. A remote model's tensors are
        // fetched one at a time, the next while this one is hashed on the threads (memory: two tensors).
        TensorFetcher fetcher(model);
        for (size_t i = 0; i < rows.size(); ++i) {
            const TensorInfo& t = tensors[i];
            if (remote) {
                const uint8_t* data = fetcher.next(t, i + 1 < rows.size() ? &tensors[i + 1] : nullptr, &status);
                if (!data) {
                    progress.finish();
                    return status;
                }
                const uint64_t started = io_now_us();
                rows[i] = hash_tensors(model, {&t}, {data}, threads, HashWork::kDigests, &progress)[0];
                record_decode(t.name, t.dtype_name(), t.nbytes, started, io_now_us() - started);
            }
            if (!rows[i].present) {
                TensorBytes held;
                progress.finish();
                (void)tensor_bytes_or_fail(model, t, &held, &status);
                return status;
            }
            const Status& s = rows[i].status;
            if (!s.ok()) {
                progress.finish();
                return fail(kExitInvalid,
                            describe(model.paths[t.file_index], make_error(s.code, t.info_offset, s.what)) +
                                ": tensor " + printable(t.name, 200));
            }
        }
        progress.finish();
    }
    if (args.has("--json")) {
        nlohmann::json listed = nlohmann::json::array();
        for (size_t i = 0; i < rows.size(); ++i) {
            const TensorInfo& t = tensors[i];
            listed.push_back(
                {{"name", t.name},
                 {"dtype", t.dtype_name()},
                 {"raw_sha256", rows[i].raw},
                 {"f32_sha256", rows[i].decodable ? nlohmann::json(rows[i].f32) : nlohmann::json(nullptr)}});
        }
        nlohmann::json out{{"tensors", std::move(listed)}};
        if (io_in_json()) out["io"] = io_json();
        std::printf("%s\n", json_dump(out).c_str());
        return kExitOk;
    }
    // sha256sum-like lines: raw digest, float32 digest ("-" when the type has no decoder), dtype, name.
    for (size_t i = 0; i < rows.size(); ++i) {
        const TensorInfo& t = model.info.tensors[i];
        std::printf("%s  %-64s  %-8s %s\n", rows[i].raw.c_str(), rows[i].decodable ? rows[i].f32.c_str() : "-",
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

// The lines of `hash --manifest` for the tensors `selected` (directory order), false after printing why a
// tensor's bytes cannot be had. A mapped model's tensors are hashed in one batch; a remote one's are fetched
// one at a time, the next while this one is hashed (TensorFetcher; memory: two tensors), each a batch of its
// own. In a batch every digest is a task: per tensor and digest (when layers are listed), and per digest (and
// the uuid) the whole model's next bytes, its running state carried from batch to batch.
bool manifest_lines(const LoadedModel& model, const std::vector<size_t>& selected, const std::string& file,
                    const ManifestOptions& opt, unsigned threads, Progress* progress, std::vector<ManifestLine>* lines,
                    int* status) {
    const std::vector<TensorInfo>& tensors = model.info.tensors;
    std::unique_ptr<Hasher> whole[kNumAlgos + 1];  // kAlgos order, then the uuid's SHA-1
    for (size_t a = 0; a < kNumAlgos; ++a) {
        if (opt.algo[a]) whole[a] = std::make_unique<Hasher>(kAlgos[a]);
    }
    if (opt.uuid) {
        whole[kNumAlgos] = std::make_unique<Hasher>(HashAlgo::kSha1);
        whole[kNumAlgos]->update(kLlamaCppUuidNamespace, sizeof kLlamaCppUuidNamespace);
    }
    // Progress counts the input once: through the first whole-model digest (or the uuid's).
    const size_t paced = static_cast<size_t>(
        std::find_if(whole, whole + kNumAlgos + 1, [](const auto& h) { return h != nullptr; }) - whole);
    std::atomic<uint64_t> done{0};
    const bool layers = !opt.no_layer;
    std::vector<std::string> layer_hex(layers ? selected.size() * kNumAlgos : 0);

    std::vector<size_t> batch;  // indices into selected, with their bytes
    std::vector<const uint8_t*> data;
    auto hash_batch = [&] {
        uint64_t batch_bytes = 0;
        for (size_t k : batch) batch_bytes += tensors[selected[k]].nbytes;
        // Tasks: per tensor of the batch and digest, then per whole-model digest; cost 0: a digest not asked for.
        std::vector<uint64_t> costs;
        for (size_t j = 0; layers && j < batch.size() * kNumAlgos; ++j) {
            costs.push_back(opt.algo[j % kNumAlgos] ? tensors[selected[batch[j / kNumAlgos]]].nbytes + 1 : 0);
        }
        const size_t layer_tasks = costs.size();
        for (const auto& h : whole) costs.push_back(h ? batch_bytes + 1 : 0);
        run_tasks(
            costs, threads,
            [&](size_t task) {
                if (costs[task] == 0) return;
                if (task < layer_tasks) {
                    const size_t j = task / kNumAlgos;
                    Hasher h(kAlgos[task % kNumAlgos]);
                    h.update(data[j], tensors[selected[batch[j]]].nbytes);
                    layer_hex[batch[j] * kNumAlgos + task % kNumAlgos] = h.hex();
                    return;
                }
                const size_t w = task - layer_tasks;
                for (size_t j = 0; j < batch.size(); ++j) {
                    const uint64_t n = tensors[selected[batch[j]]].nbytes;
                    whole[w]->update(data[j], n);
                    if (w == paced) done.fetch_add(n, std::memory_order_relaxed);
                }
            },
            progress, [&] { return done.load(std::memory_order_relaxed); });
        batch.clear();
        data.clear();
    };
    TensorFetcher fetcher(model);  // a remote tensor's bytes, until its batch is hashed; the next one meanwhile
    for (size_t k = 0; k < selected.size(); ++k) {
        const TensorInfo& t = tensors[selected[k]];
        const uint8_t* bytes = fetcher.next(t, k + 1 < selected.size() ? &tensors[selected[k + 1]] : nullptr, status);
        if (!bytes) return false;
        batch.push_back(k);
        data.push_back(bytes);
        if (model.remote(t)) hash_batch();
    }
    hash_batch();

    const std::string shown_file = printable(file, SIZE_MAX);
    for (size_t j = 0; j < layer_hex.size(); ++j) {
        if (!opt.algo[j % kNumAlgos]) continue;
        lines->push_back({hash_algo_name(kAlgos[j % kNumAlgos]), layer_hex[j],
                          shown_file + ":" + printable(tensors[selected[j / kNumAlgos]].name, SIZE_MAX), true});
    }
    for (size_t a = 0; a < kNumAlgos; ++a) {
        if (opt.algo[a]) lines->push_back({hash_algo_name(kAlgos[a]), whole[a]->hex(), shown_file, false});
    }
    if (opt.uuid) {
        std::vector<uint8_t> id = whole[kNumAlgos]->digest();  // 20 bytes: the first 16 are the UUID
        id[6] = static_cast<uint8_t>((id[6] & 0x0f) | 0x50);   // version 5
        id[8] = static_cast<uint8_t>((id[8] & 0x3f) | 0x80);   // variant 0b10
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
};

bool is_space(char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r';
}

// Reads MANIFEST; false when it cannot be opened or is larger than kMaxManifestBytes.
bool read_manifest(const std::string& path, Manifest* m, std::string* why) {
    std::unique_ptr<FILE, int (*)(FILE*)> f(std::fopen(path.c_str(), "rb"), std::fclose);
    if (!f) {
        *why = "cannot open manifest " + path;
        return false;
    }
    std::string text;
    char buf[65536];
    for (size_t n; (n = std::fread(buf, 1, sizeof buf, f.get())) > 0;) {
        if (text.size() + n > kMaxManifestBytes) {
            *why = "manifest " + path + " is larger than " + human_bytes(kMaxManifestBytes);
            return false;
        }
        text.append(buf, n);
    }
    // A read error (a directory) reads as an empty manifest, as std::ifstream gives llama-gguf-hash.
    for (size_t at = 0; at < text.size();) {
        size_t end = text.find('\n', at);
        if (end == std::string::npos) end = text.size();
        std::vector<std::string> fields;
        for (size_t i = at; i < end && fields.size() < 3;) {
            while (i < end && is_space(text[i])) ++i;
            size_t j = i;
            while (j < end && !is_space(text[j])) ++j;
            if (j > i) fields.push_back(text.substr(i, j - i));
            i = j;
        }
        at = end + 1;
        if (fields.empty()) continue;
        for (size_t a = 0; a < kNumAlgos; ++a) m->has_type[a] |= fields[0] == hash_algo_name(kAlgos[a]);
        m->has_type[kNumAlgos] |= fields[0] == "uuid";
        if (fields.size() == 3) m->entries.emplace(std::make_pair(fields[0], fields[2]), fields[1]);
    }
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
    if (check) {
        std::string why;
        if (!read_manifest(manifest_path, &manifest, &why)) return fail(kCheckFileError, why);
        if (std::none_of(manifest.has_type, manifest.has_type + kNumAlgos + 1, [](bool b) { return b; })) {
            return fail(kCheckUnknownHash, "manifest does not have any known hash format in " + manifest_path);
        }
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

    uint64_t total = 0;
    for (size_t i : selected) total += model.info.tensors[i].nbytes;
    Progress progress("hash", total);
    std::vector<ManifestLine> lines;
    const bool hashed = manifest_lines(model, selected, path, opt, threads, &progress, &lines, &status);
    progress.finish();
    if (!hashed) return status;
    if (!check) {
        for (const ManifestLine& l : lines) std::printf("%-8s  %s  %s\n", l.type, l.hash.c_str(), l.name.c_str());
        return kExitOk;
    }
    std::printf("%s\n", heading.c_str());
    bool layer_found = false, layer_mismatch = false, model_found = false, model_mismatch = false;
    for (const ManifestLine& l : lines) {
        const auto it = manifest.entries.find({l.type, l.name});
        const char* result = "Not Found";
        if (it != manifest.entries.end()) {
            const bool same = it->second == l.hash;
            result = same ? "Ok" : "Mismatch";
            (l.tensor ? layer_found : model_found) = true;
            if (!same) (l.tensor ? layer_mismatch : model_mismatch) = true;
        }
        std::printf("%-8s  %s  %s  -  %s\n", l.type, l.hash.c_str(), l.name.c_str(), result);
    }
    // llama-gguf-hash's verdict: the whole-model lines decide when the manifest has them, the per-tensor
    // ones otherwise; a per-tensor mismatch fails either way; nothing found is a missing entry.
    if (!model_found) {
        status = !layer_found ? kCheckMissingEntry : layer_mismatch ? kCheckFailure : kCheckSuccess;
    } else {
        status = layer_mismatch || model_mismatch ? kCheckFailure : kCheckSuccess;
    }
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
