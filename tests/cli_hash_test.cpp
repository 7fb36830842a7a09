// SPDX-License-Identifier: MIT
// `hash` through the CLI: the sha256 fingerprints against ggml's reference data on 1 and 2 threads, and
// llama.cpp's llama-gguf-hash manifests (`--manifest`, `--check`). The expected manifest lines are computed
// here from the file bytes by another path than the CLI's: the tensors' offsets and sizes from ggml's own
// reader (tests/data/ggml/manifest.json) or from the writer's layout, one-shot OpenSSL and xxHash calls
// over them, and the UUIDv5 from its definition (RFC 9562, with llama.cpp's namespace derived from its URL
// name), following llama-gguf-hash's rules (examples/gguf-hash/gguf-hash.cpp).
#include <openssl/evp.h>
#include <xxhash.h>

#include <catch2/catch.hpp>
#include <cctype>
#include <cstring>
#include <sstream>
#include <tuple>

#include "support/run_cli.h"
#include "weightstream/gguf_writer.h"
#include "weightstream/split.h"

using nlohmann::json;
using ws_test::quote;
using ws_test::run_cli;

namespace {

struct Span {
    std::string name;
    uint64_t offset;
    uint64_t size;
};

std::string hex(const uint8_t* bytes, size_t n) {
    std::string s;
    char b[3];
    for (size_t i = 0; i < n; ++i) {
        std::snprintf(b, sizeof b, "%02x", bytes[i]);
        s += b;
    }
    return s;
}

std::vector<uint8_t> evp(const EVP_MD* md, const uint8_t* data, size_t n) {
    unsigned char out[EVP_MAX_MD_SIZE];
    unsigned int len = 0;
    REQUIRE(EVP_Digest(data, n, out, &len, md, nullptr) == 1);
    return std::vector<uint8_t>(out, out + len);
}

std::string canonical_hex(XXH64_hash_t h) {
    XXH64_canonical_t c;
    XXH64_canonicalFromHash(&c, h);
    return hex(c.digest, sizeof c.digest);
}

// UUIDv5 (RFC 9562 5.5): SHA-1 of the namespace's bytes and the name, first 16 bytes, version 5, variant 10.
std::vector<uint8_t> uuid5(const std::vector<uint8_t>& ns, const std::vector<uint8_t>& name) {
    std::vector<uint8_t> in = ns;
    in.insert(in.end(), name.begin(), name.end());
    std::vector<uint8_t> id = evp(EVP_sha1(), in.data(), in.size());
    id.resize(16);
    id[6] = static_cast<uint8_t>((id[6] & 0x0f) | 0x50);
    id[8] = static_cast<uint8_t>((id[8] & 0x3f) | 0x80);
    return id;
}

std::string uuid_text(const std::vector<uint8_t>& id) {
    const std::string h = hex(id.data(), id.size());
    return h.substr(0, 8) + "-" + h.substr(8, 4) + "-" + h.substr(12, 4) + "-" + h.substr(16, 4) + "-" + h.substr(20);
}

// llama.cpp's namespace: uuid5(NAMESPACE_URL, "en.wikipedia.org/wiki/Llama.cpp").
std::vector<uint8_t> llama_namespace() {
    const std::vector<uint8_t> url = {0x6b, 0xa7, 0xb8, 0x11, 0x9d, 0xad, 0x11, 0xd1,
                                      0x80, 0xb4, 0x00, 0xc0, 0x4f, 0xd4, 0x30, 0xc8};
    const std::string name = "en.wikipedia.org/wiki/Llama.cpp";
    return uuid5(url, std::vector<uint8_t>(name.begin(), name.end()));
}

struct Selection {
    bool xxh64 = false, xxh3 = false, sha1 = false, sha256 = false, uuid = false, no_layer = false;
};

std::string digest_hex(const std::string& type, const uint8_t* data, size_t n) {
    if (type == "xxh64") return canonical_hex(XXH64(data, n, 0));
    if (type == "xxh3") return canonical_hex(XXH3_64bits(data, n));
    const std::vector<uint8_t> d = evp(type == "sha1" ? EVP_sha1() : EVP_sha256(), data, n);
    return hex(d.data(), d.size());
}

// The manifest llama-gguf-hash prints for `file` (named `path` on its command line) whose tensors, in
// directory order, are `tensors`.
std::string expected_manifest(const std::vector<uint8_t>& file, const std::vector<Span>& tensors,
                              const std::string& path, const Selection& s) {
    std::vector<std::string> types;
    if (s.xxh64) types.push_back("xxh64");
    if (s.xxh3) types.push_back("xxh3");
    if (s.sha1) types.push_back("sha1");
    if (s.sha256) types.push_back("sha256");
    std::vector<uint8_t> all;
    char line[512];
    std::string out;
    for (const Span& t : tensors) {
        REQUIRE(t.offset + t.size <= file.size());
        all.insert(all.end(), file.begin() + t.offset, file.begin() + t.offset + t.size);
        for (const std::string& type : types) {
            if (s.no_layer) continue;
            std::snprintf(line, sizeof line, "%-8s  %s  %s:%s\n", type.c_str(),
                          digest_hex(type, file.data() + t.offset, t.size).c_str(), path.c_str(), t.name.c_str());
            out += line;
        }
    }
    for (const std::string& type : types) {
        std::snprintf(line, sizeof line, "%-8s  %s  %s\n", type.c_str(),
                      digest_hex(type, all.data(), all.size()).c_str(), path.c_str());
        out += line;
    }
    if (s.uuid) out += "uuid      " + uuid_text(uuid5(llama_namespace(), all)) + "  " + path + "\n";
    return out;
}

// The tensors of a reference-corpus GGUF as ggml's reader reported them.
std::vector<Span> corpus_tensors(const std::string& file) {
    const json m = ws_test::read_json(ws_test::data_path("ggml/manifest.json"));
    for (const json& f : m["files"]) {
        if (f["file"] != file) continue;
        std::vector<Span> spans;
        for (const json& t : f["tensors"]) spans.push_back({t["name"], t["absolute_offset"], t["size_bytes"]});
        return spans;
    }
    FAIL("no file " << file << " in the manifest");
    return {};
}

ws::TensorInfo f32_tensor(const std::string& name, int64_t ne0, int64_t ne1) {
    ws::TensorInfo t;
    t.name = name;
    t.dtype = ws::DType::F32;
    t.n_dims = 2;
    t.ne[0] = ne0;
    t.ne[1] = ne1;
    return t;
}

std::vector<uint8_t> ramp(size_t n_floats, float start) {
    std::vector<uint8_t> bytes(n_floats * 4);
    for (size_t i = 0; i < n_floats; ++i) {
        const float f = start + static_cast<float>(i);
        std::memcpy(&bytes[i * 4], &f, 4);
    }
    return bytes;
}

// Writes a GGUF of F32 tensors t0..t{n-1} ([16, k+1], ramps) with the core's writer; returns their spans
// from the writer's layout.
std::vector<Span> write_model(const std::string& path, const std::vector<std::string>& names,
                              const std::vector<ws::MetadataEntry>& meta = {}) {
    std::vector<ws::TensorInfo> tensors;
    std::vector<std::vector<uint8_t>> data;
    for (size_t k = 0; k < names.size(); ++k) {
        tensors.push_back(f32_tensor(names[k], 16, static_cast<int64_t>(k) + 1));
        data.push_back(ramp(16 * (k + 1), 1000.0f * static_cast<float>(k)));
    }
    auto layout = ws::gguf_layout(meta, tensors);
    REQUIRE(layout.ok());
    auto bytes = ws::gguf_write(meta, tensors, data);
    REQUIRE(bytes.ok());
    ws_test::write_file(path, bytes.value());
    std::vector<Span> spans;
    for (size_t k = 0; k < names.size(); ++k) {
        spans.push_back({names[k], layout.value().tensor_offsets[k], layout.value().tensor_nbytes[k]});
    }
    return spans;
}

size_t count(const std::string& text, const std::string& needle) {
    size_t n = 0;
    for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
    return n;
}

}  // namespace

TEST_CASE("llama.cpp's UUIDv5 namespace is uuid5(NAMESPACE_URL, 'en.wikipedia.org/wiki/Llama.cpp')") {
    CHECK(uuid_text(llama_namespace()) == "ef001206-dadc-5f6d-a15f-3359e577d4e5");
}

TEST_CASE("hash --manifest prints llama-gguf-hash's lines for ggml's GGUF files") {
    for (const std::string name : {"ggml-types.gguf", "ggml-types-ext.gguf"}) {
        const std::string path = ws_test::data_path("ggml/" + name);
        const std::vector<uint8_t> file = ws_test::read_file(path);
        const std::vector<Span> tensors = corpus_tensors(name);
        REQUIRE(tensors.size() >= 6);
        INFO(name);
        Selection all;
        all.xxh64 = all.xxh3 = all.sha1 = all.sha256 = true;
        Selection all_uuid = all;
        all_uuid.uuid = true;
        for (const char* threads : {"1", "2"}) {
            INFO("threads " << threads);
            const std::string t = std::string(" --threads ") + threads;
            ws_test::CliResult r = run_cli("hash --manifest --all --uuid" + t + " " + quote(path));
            INFO(r.err);
            CHECK(r.status == 0);
            CHECK(r.out == expected_manifest(file, tensors, path, all_uuid));
            // No digest option: xxh64, per tensor and whole model.
            Selection xxh64;
            xxh64.xxh64 = true;
            r = run_cli("hash --manifest" + t + " " + quote(path));
            CHECK(r.status == 0);
            CHECK(r.out == expected_manifest(file, tensors, path, xxh64));
            CHECK(count(r.out, "\n") == tensors.size() + 1);
            // --uuid alone: the uuid line only.
            Selection uuid;
            uuid.uuid = true;
            r = run_cli("hash --manifest --uuid" + t + " " + quote(path));
            CHECK(r.out == expected_manifest(file, tensors, path, uuid));
            CHECK(count(r.out, "\n") == 1);
            // --no-layer: the whole-model lines.
            Selection model_only = all;
            model_only.no_layer = true;
            r = run_cli("hash --manifest --all --no-layer" + t + " " + quote(path));
            CHECK(r.out == expected_manifest(file, tensors, path, model_only));
            CHECK(count(r.out, "\n") == 4);
            Selection sha1_sha256;
            sha1_sha256.sha1 = sha1_sha256.sha256 = true;
            r = run_cli("hash --manifest --sha256 --sha1" + t + " " + quote(path));
            CHECK(r.out == expected_manifest(file, tensors, path, sha1_sha256));
        }
    }
}

TEST_CASE("hash --manifest of a GGUF without tensors hashes nothing (the namespace alone for the uuid)") {
    const std::string path = ws_test::data_path("ggml/vocab/ggml-vocab-bert-bge.gguf");
    const ws_test::CliResult r = run_cli("hash --manifest --all --uuid " + quote(path));
    CHECK(r.status == 0);
    CHECK(r.out == "xxh64     ef46db3751d8e999  " + path + "\n" +  //
                       "xxh3      2d06800538d394c2  " + path + "\n" +
                       "sha1      da39a3ee5e6b4b0d3255bfef95601890afd80709  " + path + "\n" +
                       "sha256    e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855  " + path + "\n" +
                       "uuid      " + uuid_text(uuid5(llama_namespace(), {})) + "  " + path + "\n");
}

TEST_CASE("hash --manifest of a split GGUF part lists that part's tensors, as llama-gguf-hash reads one file") {
    ws_test::TempDir dir;
    const std::string prefix = dir.file("m");
    std::vector<std::vector<Span>> parts;
    for (uint16_t k = 0; k < 2; ++k) {
        std::vector<ws::MetadataEntry> meta;
        for (const auto& [key, type, bits] :
             {std::make_tuple("split.no", ws::ValueType::kUint16, uint64_t(k)),
              std::make_tuple("split.count", ws::ValueType::kUint16, uint64_t(2)),
              std::make_tuple("split.tensors.count", ws::ValueType::kInt32, uint64_t(3))}) {
            ws::MetadataEntry e;
            e.key = key;
            e.value.type = type;
            e.value.bits = bits;
            meta.push_back(e);
        }
        parts.push_back(write_model(ws::split_part_path(prefix, k + 1, 2),
                                    k == 0 ? std::vector<std::string>{"a", "b"} : std::vector<std::string>{"c"}, meta));
    }
    Selection s;
    s.sha256 = s.uuid = true;
    for (uint16_t k = 0; k < 2; ++k) {
        const std::string path = ws::split_part_path(prefix, k + 1, 2);
        const ws_test::CliResult r = run_cli("hash --manifest --sha256 --uuid " + quote(path));
        INFO(r.err);
        CHECK(r.status == 0);
        CHECK(r.out == expected_manifest(ws_test::read_file(path), parts[k], path, s));
    }
}

TEST_CASE("hash --check verifies a manifest as llama-gguf-hash does, with its exit statuses") {
    ws_test::TempDir dir;
    const std::string model = dir.file("model.gguf");
    const std::string manifest = dir.file("model.manifest");
    ws_test::write_file(model, ws_test::read_file(ws_test::data_path("ggml/ggml-types.gguf")));
    const std::vector<Span> tensors = corpus_tensors("ggml-types.gguf");
    ws_test::CliResult made = run_cli("hash --manifest --all --uuid " + quote(model));
    REQUIRE(made.status == 0);
    ws_test::write_file(manifest, std::vector<uint8_t>(made.out.begin(), made.out.end()));
    const std::string header = "manifest  " + manifest + "  sha256  sha1  xxh64  xxh3  uuid\n";
    const std::string verdict = "\nVerification results for " + manifest + " - ";

    SECTION("a good manifest: every line Ok, the strongest digest (sha256) by default, status 0") {
        for (const char* threads : {"1", "2"}) {
            const ws_test::CliResult r =
                run_cli("hash --check " + quote(manifest) + " --threads " + threads + " " + quote(model));
            INFO(r.err);
            CHECK(r.status == 0);
            CHECK(r.out.rfind(header, 0) == 0);
            CHECK(count(r.out, "  -  Ok\n") == tensors.size() + 1);
            CHECK(count(r.out, "\nsha256    ") == tensors.size() + 1);
            CHECK(r.out.size() >= verdict.size() + 8);
            CHECK(r.out.substr(r.out.size() - verdict.size() - 8) == verdict + "Success\n");
        }
        // Chosen digests and the uuid (checked against the manifest's uuid line).
        const ws_test::CliResult r = run_cli("hash -c " + quote(manifest) + " --xxh64 --uuid " + quote(model));
        CHECK(r.status == 0);
        CHECK(count(r.out, "  -  Ok\n") == tensors.size() + 2);
        CHECK(r.out.find("\nuuid      ") != std::string::npos);
        CHECK(r.out.find("sha256    ") == std::string::npos);
        // CRLF line ends are whitespace to llama-gguf-hash's >> parsing.
        std::string crlf;
        for (char c : made.out) crlf += c == '\n' ? std::string("\r\n") : std::string(1, c);
        ws_test::write_file(dir.file("crlf"), std::vector<uint8_t>(crlf.begin(), crlf.end()));
        CHECK(run_cli("hash --check " + quote(dir.file("crlf")) + " --all " + quote(model)).status == 0);
    }
    SECTION("one changed tensor byte: that tensor and the model Mismatch, status 1 (Failure)") {
        const Span& victim = tensors[5];
        std::vector<uint8_t> bytes = ws_test::read_file(model);
        bytes[victim.offset + victim.size / 2] ^= 0x01;
        ws_test::write_file(model, bytes);
        for (const char* digests : {"", " --xxh64", " --all", " --sha1 --no-layer"}) {
            INFO(digests);
            const ws_test::CliResult r = run_cli("hash --check " + quote(manifest) + digests + " " + quote(model));
            CHECK(r.status == 1);
            CHECK(r.out.substr(r.out.size() - verdict.size() - 8) == verdict + "Failure\n");
            CHECK(r.out.find(model + "  -  Mismatch\n") != std::string::npos);
            const bool layers = std::string(digests).find("no-layer") == std::string::npos;
            CHECK((r.out.find(model + ":" + victim.name + "  -  Mismatch\n") != std::string::npos) == layers);
            CHECK(count(r.out, "  -  Mismatch\n") == (layers ? 2u : 1u) * (std::string(digests) == " --all" ? 4 : 1));
        }
    }
    SECTION("per-tensor lines only (no whole-model line): a changed byte still fails, status 1") {
        std::string layers;
        std::istringstream in(made.out);
        for (std::string line; std::getline(in, line);) {
            if (line.find(model + ":") != std::string::npos) layers += line + "\n";
        }
        ws_test::write_file(manifest, std::vector<uint8_t>(layers.begin(), layers.end()));
        CHECK(run_cli("hash --check " + quote(manifest) + " " + quote(model)).status == 0);
        std::vector<uint8_t> bytes = ws_test::read_file(model);
        bytes[tensors[0].offset] ^= 0x80;
        ws_test::write_file(model, bytes);
        const ws_test::CliResult r = run_cli("hash --check " + quote(manifest) + " " + quote(model));
        CHECK(r.status == 1);
        CHECK(count(r.out, "  -  Mismatch\n") == 1);
        CHECK(count(r.out, "  -  Not Found\n") == 1);  // the whole-model line
    }
    SECTION("a tensor missing from the model: the model's lines Mismatch, status 1") {
        const std::string small = dir.file("small.gguf");
        write_model(small, {"t0", "t1", "t2"});
        made = run_cli("hash --manifest --sha256 " + quote(small));
        ws_test::write_file(manifest, std::vector<uint8_t>(made.out.begin(), made.out.end()));
        write_model(small, {"t0", "t1"});
        const ws_test::CliResult r = run_cli("hash --check " + quote(manifest) + " " + quote(small));
        CHECK(r.status == 1);
        CHECK(count(r.out, "  -  Ok\n") == 2);
        CHECK(r.out.find(small + "  -  Mismatch\n") != std::string::npos);
    }
    SECTION("a tensor missing from the manifest is Not Found and status 3 (llama-gguf-hash trusts the others)") {
        std::string kept;
        std::istringstream in(made.out);
        for (std::string line; std::getline(in, line);) {
            if (line.find(":" + tensors[2].name) == std::string::npos) kept += line + "\n";
        }
        ws_test::write_file(manifest, std::vector<uint8_t>(kept.begin(), kept.end()));
        const ws_test::CliResult r = run_cli("hash --check " + quote(manifest) + " " + quote(model));
        CHECK(r.status == 3);
        CHECK(r.out.find(model + ":" + tensors[2].name + "  -  Not Found\n") != std::string::npos);
        CHECK(count(r.out, "  -  Not Found\n") == 1);
        CHECK(r.out.substr(r.out.size() - verdict.size() - 23) == verdict + "Manifest Missing Entry\n");
        // Cut short (a full disk): the last tensors' lines and the whole-model line gone, one line cut in two.
        for (size_t cut : {made.out.size() / 3, made.out.size() / 2, made.out.size() - 90}) {
            INFO(cut);
            ws_test::write_file(manifest, std::vector<uint8_t>(made.out.begin(), made.out.begin() + cut));
            const ws_test::CliResult c = run_cli("hash --check " + quote(manifest) + " " + quote(model));
            CHECK(c.status == 5);
            CHECK(c.err.find("manifest " + manifest + " ends in the middle of a line (cut short?)") !=
                  std::string::npos);
            // Cut at a line's end: the tensors not listed are missing entries.
            const size_t line_end = made.out.rfind('\n', cut) + 1;
            ws_test::write_file(manifest, std::vector<uint8_t>(made.out.begin(), made.out.begin() + line_end));
            const ws_test::CliResult l = run_cli("hash --check " + quote(manifest) + " " + quote(model));
            if (line_end < made.out.size() / 2 + 10) {
                CHECK(l.status == 3);
                CHECK(l.out.substr(l.out.size() - verdict.size() - 23) == verdict + "Manifest Missing Entry\n");
            } else {  // only the whole-model lines gone: every tensor's line is there and Ok
                CHECK(l.status == 0);
            }
        }
    }
    SECTION("a manifest of another file: nothing found, status 3 (Manifest Missing Entry)") {
        const ws_test::CliResult r = run_cli("hash --check " + quote(manifest) + " " +
                                             quote(dir.path + "/./model.gguf"));  // the same file, another name
        CHECK(r.status == 3);
        CHECK(count(r.out, "  -  Not Found\n") == tensors.size() + 1);
        CHECK(r.out.substr(r.out.size() - verdict.size() - 23) == verdict + "Manifest Missing Entry\n");
    }
    SECTION("malformed manifests") {
        const auto check_with = [&](const std::string& text) {
            ws_test::write_file(manifest, std::vector<uint8_t>(text.begin(), text.end()));
            return run_cli("hash --check " + quote(manifest) + " " + quote(model));
        };
        // Lines of a known type without a name: nothing to match, status 3.
        ws_test::CliResult r = check_with("sha256    0123\nxxh64\n");
        CHECK(r.status == 3);
        CHECK(r.out.rfind("manifest  " + manifest + "  sha256  xxh64\n", 0) == 0);
        // No line of a known type (an empty file too): status 4 (Manifest Unknown Hash).
        r = check_with("md5  d41d8cd98f00b204e9800998ecf8427e  " + model + "\nnot a manifest at all\n");
        CHECK(r.status == 4);
        CHECK(r.err.find("manifest does not have any known hash format in " + manifest) != std::string::npos);
        CHECK(r.out.empty());
        CHECK(check_with("").status == 4);
        CHECK(check_with(std::string("\0\0\x01\xff", 4)).status == 4);
        // A hash in upper case is not the same string.
        std::string upper;
        std::istringstream lines(made.out);
        for (std::string type, digest, name; lines >> type >> digest >> name;) {
            for (char& c : digest) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
            upper += type + "  " + digest + "  " + name + "\n";
        }
        r = check_with(upper);
        CHECK(r.status == 1);
        // A manifest that cannot be read: status 5 (Manifest File Error).
        r = run_cli("hash --check " + quote(dir.file("absent")) + " " + quote(model));
        CHECK(r.status == 5);
        CHECK(r.err.find("cannot open manifest " + dir.file("absent")) != std::string::npos);
    }
}

TEST_CASE("hash fingerprints equal ggml's reference data on 1 and 2 threads") {
    const json m = ws_test::read_json(ws_test::data_path("ggml/manifest.json"));
    for (const json& f : m["files"]) {
        const std::string path = ws_test::data_path("ggml/" + f["file"].get<std::string>());
        std::string first;
        for (const char* threads : {"1", "2"}) {
            const ws_test::CliResult r = run_cli("hash --json --threads " + std::string(threads) + " " + quote(path));
            REQUIRE(r.status == 0);
            const json ours = json::parse(r.out)["tensors"];
            REQUIRE(ours.size() == f["tensors"].size());
            size_t checked = 0;
            for (size_t i = 0; i < ours.size(); ++i) {
                const json& want = f["tensors"][i];
                INFO(want["name"]);
                CHECK(ours[i]["name"] == want["name"]);
                CHECK(ours[i]["raw_sha256"] == want["raw_sha256"]);
                if (want["reference"]["format"] == "f32le") {
                    CHECK(ours[i]["f32_sha256"] == want["reference"]["sha256"]);
                    ++checked;
                }
            }
            CHECK(checked >= 5);
            if (first.empty()) first = r.out;
            CHECK(r.out == first);
        }
    }
}

TEST_CASE("hash: manifests are for GGUF; digest options need --manifest or --check") {
    const std::string st = ws_test::data_path("safetensors/mel_filters.safetensors");
    ws_test::CliResult r = run_cli("hash --manifest " + quote(st));
    CHECK(r.status == 2);
    CHECK(r.err.find("for GGUF files only (this is safetensors)") != std::string::npos);
    CHECK(r.out.empty());
    const std::string gguf = ws_test::data_path("ggml/ggml-types.gguf");
    r = run_cli("hash --sha256 " + quote(gguf));
    CHECK(r.status == 2);
    CHECK(r.err.find("digest options need --manifest or --check") != std::string::npos);
    CHECK(run_cli("hash --manifest --json " + quote(gguf)).status == 2);
    CHECK(run_cli("hash --check " + quote(gguf)).status == 2);  // MANIFEST given, no FILE
}
