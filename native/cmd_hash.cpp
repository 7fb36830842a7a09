// SPDX-License-Identifier: MIT
// `hash FILE [--json] [--threads N]`: per tensor the sha256 of its stored bytes and of its little-endian
// float32 decode: the parity fingerprint that the wasm build must reproduce (ARCHITECTURE.md).
#include <openssl/evp.h>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <thread>

#include "dequant.h"
#include "model_json.h"
#include "progress.h"
#include "tensor_io.h"

namespace ws::cli {
namespace {

constexpr size_t kHashPiece = size_t(16) << 20;

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
    nlohmann::json tensors = nlohmann::json::array();
    for (const TensorInfo& t : model.info.tensors) {
        const uint8_t* data = tensor_bytes_or_fail(model, t, &status);
        if (!data) {
            progress.finish();
            return status;
        }
        // The stored bytes hash on a second thread while this one decodes and hashes the floats.
        std::string raw, f32;
        std::thread raw_worker([&] { raw = sha256_of(data, t.nbytes); });
        const bool decodable = decode_problem(model, t).empty();
        // Little-endian F32 decodes to its own bytes: its float hash is the raw one.
        const bool f32_is_raw = t.dtype == DType::F32 && !model.info.big_endian;
        Status s = ok_status();
        if (decodable && !f32_is_raw) {
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
            f32 = h.hex();
        }
        raw_worker.join();
        if (!s.ok()) {
            progress.finish();
            return fail(kExitInvalid, describe(model.paths[t.file_index], make_error(s.code, t.info_offset, s.what)) +
                                          ": tensor " + printable(t.name, 200));
        }
        if (decodable && f32_is_raw) f32 = raw;
        if (!decodable || f32_is_raw) progress.add(t.nbytes);
        tensors.push_back({{"name", t.name},
                           {"dtype", t.dtype_name()},
                           {"raw_sha256", raw},
                           {"f32_sha256", decodable ? nlohmann::json(f32) : nlohmann::json(nullptr)}});
    }
    progress.finish();
    if (args.has("--json")) {
        std::printf("%s\n", json_dump(nlohmann::json{{"tensors", std::move(tensors)}}).c_str());
        return kExitOk;
    }
    // sha256sum-like lines: raw digest, float32 digest ("-" when the type has no decoder), dtype, name.
    for (const nlohmann::json& t : tensors) {
        const std::string f32 = t["f32_sha256"].is_null() ? "-" : t["f32_sha256"].get<std::string>();
        std::printf("%s  %-64s  %-8s %s\n", t["raw_sha256"].get<std::string>().c_str(), f32.c_str(),
                    t["dtype"].get<std::string>().c_str(), printable(t["name"].get<std::string>(), 200).c_str());
    }
    return kExitOk;
}

}  // namespace ws::cli
