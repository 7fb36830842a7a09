// SPDX-License-Identifier: MIT
// `hash FILE [--json] [--threads N]`: per tensor the sha256 of its stored bytes and of its little-endian
// float32 decode: the parity fingerprint that the wasm build must reproduce (ARCHITECTURE.md).
#include <openssl/evp.h>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <thread>

#include "block_stream.h"
#include "dequant.h"
#include "model_json.h"
#include "progress.h"
#include "stream_input.h"
#include "tensor_io.h"

namespace ws::cli {
namespace {

constexpr size_t kHashPiece = size_t(16) << 20;
constexpr uint64_t kThreadedBytes = uint64_t(1) << 20;  // below this the stored bytes hash inline

struct Digests {
    std::string raw;  // hex sha256 of the stored bytes
    std::string f32;  // hex sha256 of the float32 decode (when decodable)
    bool decodable = false;
};

class Sha256 {
public:
    Sha256() : ctx_(EVP_MD_CTX_new(), EVP_MD_CTX_free) { EVP_DigestInit_ex(ctx_.get(), EVP_sha256(), nullptr); }
    void update(const void* data, size_t size) { EVP_DigestUpdate(ctx_.get(), data, size); }
    std::string hex() {
        unsigned char digest[EVP_MAX_MD_SIZE];
        unsigned int len = 0;
        EVP_DigestFinal_ex(ctx_.get(), digest, &len);
        static const char kHex[] = "0123456789abcdef";
        std::string s;
        for (unsigned int i = 0; i < len; ++i) {
            s += kHex[digest[i] >> 4];
            s += kHex[digest[i] & 15];
        }
        return s;
    }

private:
    std::unique_ptr<EVP_MD_CTX, void (*)(EVP_MD_CTX*)> ctx_;
};

std::string sha256_of(const uint8_t* data, uint64_t size) {
    Sha256 h;
    for (uint64_t done = 0; done < size;) {
        const size_t n = static_cast<size_t>(std::min<uint64_t>(kHashPiece, size - done));
        h.update(data + done, n);
        done += n;
    }
    return h.hex();
}

// hash of a stream (a pipe): the tensors in offset order, each read once in pieces, its stored bytes hashed
// as they come and decoded by a BlockStream; memory stays around one piece and its floats.
bool hash_stream(LoadedModel& model, std::vector<Digests>* rows, Progress* progress, int* status) {
    MappedFile& file = model.files[0];
    const std::vector<TensorInfo>& tensors = model.info.tensors;
    std::vector<size_t> order(tensors.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(),
                     [&](size_t a, size_t b) { return tensors[a].offset < tensors[b].offset; });
    std::vector<float> floats;
    for (size_t index : order) {
        const TensorInfo& t = tensors[index];
        Digests& row = (*rows)[index];
        row.decodable = decode_problem(model, t).empty();
        const bool decode = row.decodable && t.dtype != DType::F32;
        Sha256 raw, f32;
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
            *status = fail(kExitIo, model.paths[0] + ": " + io_error);
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

}  // namespace

int cmd_hash(const std::vector<std::string>& argv) {
    Args args;
    if (!parse_args(argv, {"--json"}, {"--threads"}, &args)) return kExitUsage;
    if (args.positional.size() != 1) return fail(kExitUsage, "usage: weightstream hash FILE [--json] [--threads N]");
    unsigned threads = 1;
    if (!parse_threads(args, &threads)) return kExitUsage;
    LoadedModel model;
    int status = kExitOk;
    if (!load(args.positional[0], false, &model, &status)) return status;

    uint64_t total = 0;
    for (const TensorInfo& t : model.info.tensors) total += t.nbytes;
    Progress progress("hash", total);
    std::vector<Digests> rows(model.info.tensors.size());
    const bool stream = model.files.size() == 1 && model.files[0].is_stream();
    if (stream && !hash_stream(model, &rows, &progress, &status)) return status;
    for (size_t i = 0; i < rows.size() && !stream; ++i) {
        const TensorInfo& t = model.info.tensors[i];
        Digests& row = rows[i];
        TensorBytes held;
        const uint8_t* data = tensor_bytes_or_fail(model, t, &held, &status);
        if (!data) {
            progress.finish();
            return status;
        }
        row.decodable = decode_problem(model, t).empty();
        // Little-endian F32 decodes to its own bytes: its float hash is the raw one.
        const bool f32_is_raw = t.dtype == DType::F32 && !model.info.big_endian;
        const bool decode = row.decodable && !f32_is_raw;
        // A large tensor's stored bytes hash on a second thread while this one decodes and hashes the floats.
        // Small ones do not pay for a thread: starting one costs tens of microseconds (a model of 1M empty
        // tensors spent 80 s on it).
        std::thread raw_worker;
        if (decode && t.nbytes >= kThreadedBytes) {
            raw_worker = std::thread([&] { row.raw = sha256_of(data, t.nbytes); });
        } else {
            row.raw = sha256_of(data, t.nbytes);
        }
        Status s = ok_status();
        if (decode) {
            Sha256 h;
            const DTypeTraits& traits = dtype_traits(t.dtype);
            const uint32_t per_element = dequant_floats_per_element(t.dtype);
            s = for_each_decoded(
                t.dtype, data, t.n_elements, threads,
                [&](const float* floats, uint64_t, uint64_t n) {
                    h.update(floats, n * per_element * sizeof(float));
                    progress.add(n / traits.block_elems * traits.block_bytes);
                    return true;
                },
                model.info.big_endian);
            row.f32 = h.hex();
        }
        if (raw_worker.joinable()) raw_worker.join();
        if (!s.ok()) {
            progress.finish();
            return fail(kExitInvalid, describe(model.paths[t.file_index], make_error(s.code, t.info_offset, s.what)) +
                                          ": tensor " + printable(t.name, 200));
        }
        if (row.decodable && f32_is_raw) row.f32 = row.raw;  // F32 decodes to its own bytes
        if (!decode) progress.add(t.nbytes);
    }
    progress.finish();
    if (args.has("--json")) {
        nlohmann::json tensors = nlohmann::json::array();
        for (size_t i = 0; i < rows.size(); ++i) {
            const TensorInfo& t = model.info.tensors[i];
            tensors.push_back(
                {{"name", t.name},
                 {"dtype", t.dtype_name()},
                 {"raw_sha256", rows[i].raw},
                 {"f32_sha256", rows[i].decodable ? nlohmann::json(rows[i].f32) : nlohmann::json(nullptr)}});
        }
        std::printf("%s\n", json_dump(nlohmann::json{{"tensors", std::move(tensors)}}).c_str());
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

}  // namespace ws::cli
