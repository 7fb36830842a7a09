// SPDX-License-Identifier: MIT
// The decoding subcommands end to end (dump, stats, hash, convert, verify's decode), run as the real binary
// against the reference corpus: ggml's decodes (ref/NAME.f32), stored bytes and sha256s from the manifests,
// ggml's quantized bytes for convert --dtype q8_0/q4_0.
#include <sys/wait.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <random>
#include <set>

#include "support/gguf_builder.h"
#include "support/npy_reader.h"
#include "support/run_cli.h"
#include "support/scale_blocks.h"
#include "weightstream/dequant.h"
#include "weightstream/gguf_writer.h"
#include "weightstream/safetensors_writer.h"

using nlohmann::json;
using ws::DType;
using ws::MetadataEntry;
using ws::TensorInfo;
using ws_test::quote;
using ws_test::run_cli;
using ws_test::tensor;

namespace {

const std::string kTypes = ws_test::data_path("ggml/ggml-types.gguf");

struct CorpusFile {
    std::string path;
    json manifest;  // the manifest's "files" entry
};

// The two GGUF files of the committed corpus, plus the shared corpus's when it is next to the checkout.
std::vector<CorpusFile> ggml_files(bool with_shared) {
    std::vector<CorpusFile> files;
    const json m = ws_test::read_json(ws_test::data_path("ggml/manifest.json"));
    for (const json& f : m["files"]) files.push_back({ws_test::data_path("ggml/" + f["file"].get<std::string>()), f});
    const std::string shared = ws_test::shared_path("ggml/manifest.json");
    if (with_shared && ws_test::file_exists(shared)) {
        const json shared_manifest = ws_test::read_json(shared);
        for (const json& f : shared_manifest["files"]) {
            files.push_back({ws_test::shared_path("ggml/" + f["file"].get<std::string>()), f});
        }
    }
    return files;
}

bool f32_reference(const json& t) {
    return t["reference"]["format"] == "f32le";
}

std::vector<uint8_t> ref_bytes(const json& t) {
    return ws_test::read_file(ws_test::data_path("ggml/" + t["reference"]["file"].get<std::string>()));
}

std::vector<float> as_floats(const std::vector<uint8_t>& bytes) {
    std::vector<float> f(bytes.size() / 4);
    std::memcpy(f.data(), bytes.data(), f.size() * 4);
    return f;
}

std::vector<uint8_t> as_bytes(const std::string& s) {
    return std::vector<uint8_t>(s.begin(), s.end());
}

std::string sha256(const std::vector<uint8_t>& b) {
    return ws_test::sha256_hex(b.data(), b.size());
}

// The stored bytes of a manifest tensor.
std::vector<uint8_t> stored_bytes(const std::vector<uint8_t>& file, const json& t) {
    const size_t at = t["absolute_offset"].get<size_t>(), n = t["size_bytes"].get<size_t>();
    return std::vector<uint8_t>(file.begin() + static_cast<ptrdiff_t>(at),
                                file.begin() + static_cast<ptrdiff_t>(at + n));
}

std::vector<int64_t> shape_of(const json& t) {
    std::vector<int64_t> shape = t["ne"].get<std::vector<int64_t>>();
    std::reverse(shape.begin(), shape.end());
    return shape;
}

std::string upper(std::string s) {
    for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    return s;
}

ws_test::CliResult ok_cli(const std::string& args) {
    ws_test::CliResult r = run_cli(args);
    INFO("weightstream " << args << "\n" << r.err);
    REQUIRE(r.status == 0);
    return r;
}

json json_cli(const std::string& args) {
    return json::parse(ok_cli(args).out);
}

// name -> entry of a {"tensors": [...]} answer.
std::map<std::string, json> by_name(const json& answer) {
    std::map<std::string, json> m;
    for (const json& t : answer["tensors"]) m[t["name"].get<std::string>()] = t;
    return m;
}

std::vector<uint8_t> gguf_file(const std::vector<TensorInfo>& tensors, const std::vector<std::vector<uint8_t>>& data) {
    auto file = ws::gguf_write({}, tensors, data);
    REQUIRE(file.ok());
    return file.value();
}

// Statistics as stats --json defines them, computed directly.
struct Expected {
    uint64_t finite = 0, nan = 0, pos_inf = 0, neg_inf = 0, zeros = 0;
    float min = 0, max = 0;
    double mean = 0, std = 0, mean_abs = 0;
};

Expected expected_stats(const std::vector<float>& x) {
    Expected e;
    double sum = 0, sum_abs = 0;
    e.min = std::numeric_limits<float>::infinity();
    e.max = -e.min;
    for (float v : x) {
        if (std::isnan(v)) {
            e.nan++;
        } else if (std::isinf(v)) {
            (v > 0 ? e.pos_inf : e.neg_inf)++;
        } else {
            e.finite++;
            e.zeros += v == 0;
            sum += v;
            sum_abs += std::fabs(v);
            e.min = std::min(e.min, v);
            e.max = std::max(e.max, v);
        }
    }
    if (e.finite == 0) return e;
    e.mean = sum / static_cast<double>(e.finite);
    e.mean_abs = sum_abs / static_cast<double>(e.finite);
    double ss = 0;
    for (float v : x) {
        if (std::isfinite(v)) ss += (v - e.mean) * (v - e.mean);
    }
    e.std = std::sqrt(ss / static_cast<double>(e.finite));
    return e;
}

// The histogram as include/weightstream/stats.h defines it: its edges lie on the grid within 2 / 8192 of the range
// below the equal-width edges, edges[0] = min, edges[32] = max, and bin k counts the finite values in [edges[k],
// edges[k + 1]) (the last one also max), counted here directly.
void check_histogram(const json& h, const std::vector<float>& x, const Expected& e) {
    REQUIRE(h["edges"].size() == 33);
    const std::vector<double> edges = h["edges"].get<std::vector<double>>();
    const double width = static_cast<double>(e.max) - e.min;
    CHECK(edges[0] == e.min);
    CHECK(edges[32] == e.max);
    for (int k = 1; k < 32; ++k) {
        const double ideal = e.min + width * k / 32;
        CHECK(edges[k] <= ideal);
        CHECK(edges[k] >= ideal - 2 * width / 8192);
        CHECK(edges[k] >= edges[k - 1]);
    }
    std::vector<uint64_t> counts(32, 0);
    for (float v : x) {
        if (!std::isfinite(v)) continue;
        int k = 31;
        while (k > 0 && v < edges[k]) --k;
        counts[k]++;
    }
    CHECK(h["counts"] == counts);
}

}  // namespace

// ---- hash ---------------------------------------------------------------------------------------------------

TEST_CASE("hash --json equals the corpus manifests' sha256 for every tensor") {
    for (const CorpusFile& f : ggml_files(true)) {
        INFO(f.path);
        const json ours = json_cli("hash " + quote(f.path) + " --json");
        REQUIRE(ours["tensors"].size() == f.manifest["tensors"].size());
        const std::vector<uint8_t> file = ws_test::read_file(f.path);
        for (size_t i = 0; i < ours["tensors"].size(); ++i) {
            const json& o = ours["tensors"][i];
            const json& t = f.manifest["tensors"][i];
            INFO("tensor " << t["name"]);
            CHECK(o.size() == 4);
            CHECK(o["name"] == t["name"]);
            CHECK(o["dtype"] == upper(t["ggml_type"]));
            CHECK(o["raw_sha256"] == t["raw_sha256"]);
            if (f32_reference(t)) {
                CHECK(o["f32_sha256"] == t["reference"]["sha256"]);
                continue;
            }
            // I8..I64 and F64: ggml has no float decode; ours is each value rounded to float32.
            const std::vector<uint8_t> raw = stored_bytes(file, t);
            std::vector<float> expected;
            const std::string type = t["ggml_type"];
            for (size_t at = 0; at < raw.size();) {
                if (type == "i8") {
                    int8_t v;
                    std::memcpy(&v, &raw[at], 1);
                    expected.push_back(static_cast<float>(v));
                    at += 1;
                } else if (type == "i16") {
                    int16_t v;
                    std::memcpy(&v, &raw[at], 2);
                    expected.push_back(static_cast<float>(v));
                    at += 2;
                } else if (type == "i32") {
                    int32_t v;
                    std::memcpy(&v, &raw[at], 4);
                    expected.push_back(static_cast<float>(v));
                    at += 4;
                } else if (type == "i64") {
                    int64_t v;
                    std::memcpy(&v, &raw[at], 8);
                    expected.push_back(static_cast<float>(v));
                    at += 8;
                } else {
                    REQUIRE(type == "f64");
                    double v;
                    std::memcpy(&v, &raw[at], 8);
                    expected.push_back(static_cast<float>(v));
                    at += 8;
                }
            }
            CHECK(o["f32_sha256"] ==
                  ws_test::sha256_hex(reinterpret_cast<const uint8_t*>(expected.data()), expected.size() * 4));
        }
    }
}

TEST_CASE("hash --json of the safetensors corpus: raw_sha256 equals the manifest") {
    const json manifest = ws_test::read_json(ws_test::data_path("safetensors/manifest.json"));
    for (const json& f : manifest["files"]) {
        const std::string path = ws_test::data_path("safetensors/" + f["file"].get<std::string>());
        INFO(path);
        const std::map<std::string, json> ours = by_name(json_cli("hash " + quote(path) + " --json"));
        REQUIRE(ours.size() == f["tensors"].size());
        for (const json& t : f["tensors"]) {
            const std::string name = t["name"];
            INFO("tensor " << name);
            const json& o = ours.at(name);
            CHECK(o["dtype"] == t["dtype"]);
            CHECK(o["raw_sha256"] == t["sha256"]);
            if (t["dtype"] == "F32") CHECK(o["f32_sha256"] == t["sha256"]);  // float32 decodes to itself
            CHECK(o["f32_sha256"].is_string());
        }
    }
}

TEST_CASE("hash prints one line per tensor without --json") {
    const ws_test::CliResult r = ok_cli("hash " + quote(kTypes));
    const json m = ws_test::read_json(ws_test::data_path("ggml/manifest.json"))["files"][0];
    CHECK(std::count(r.out.begin(), r.out.end(), '\n') == static_cast<long>(m["tensors"].size()));
    json q4k;
    for (const json& t : m["tensors"]) {
        if (t["name"] == "q4_k.weight") q4k = t;
    }
    REQUIRE(q4k.is_object());
    CHECK(r.out.find(q4k["raw_sha256"].get<std::string>() + "  " + q4k["reference"]["sha256"].get<std::string>() +
                     "  Q4_K     q4_k.weight\n") != std::string::npos);
    CHECK(r.err.empty());
}

TEST_CASE("a big-endian GGUF of the corpus tensors decodes, hashes, verifies and converts like the little-endian one") {
    // The same tensors written by the test builder twice: little-endian, and big-endian with the tensor data
    // swapped as gguf-py swaps it (every corpus type gguf-py can swap; the others are left out).
    ws_test::TempDir dir;
    ws_test::GgufSpec le_spec, be_spec;
    be_spec.big_endian = true;
    std::vector<json> refs;
    for (const CorpusFile& f : ggml_files(false)) {
        const std::vector<uint8_t> file = ws_test::read_file(f.path);
        for (const json& t : f.manifest["tensors"]) {
            ws_test::TensorSpec spec{t["name"], t["ggml_type_id"], t["ne"].get<std::vector<int64_t>>(),
                                     stored_bytes(file, t)};
            le_spec.tensors.push_back(spec);
            if (!ws_test::to_big_endian_data(spec.type_id, &spec.data)) {
                le_spec.tensors.pop_back();
                continue;
            }
            be_spec.tensors.push_back(spec);
            refs.push_back(t);
        }
    }
    std::set<uint32_t> types;
    for (const json& t : refs) types.insert(t["ggml_type_id"].get<uint32_t>());
    REQUIRE(types.size() == 13);  // F32 F16 BF16 Q4_0 Q8_0 Q4_K Q6_K MXFP4 I8 I16 I32 I64 F64
    const std::string le = dir.file("le.gguf"), be = dir.file("be.gguf");
    ws_test::write_file(le, ws_test::build_gguf(le_spec).bytes);
    ws_test::write_file(be, ws_test::build_gguf(be_spec).bytes);

    const json le_hash = json_cli("hash " + quote(le) + " --json"), be_hash = json_cli("hash " + quote(be) + " --json");
    for (size_t i = 0; i < refs.size(); ++i) {
        INFO("tensor " << refs[i]["name"]);
        const json& l = le_hash["tensors"][i];
        const json& b = be_hash["tensors"][i];
        CHECK(b["name"] == refs[i]["name"]);
        CHECK(b["f32_sha256"] == l["f32_sha256"]);
        if (f32_reference(refs[i])) CHECK(b["f32_sha256"] == refs[i]["reference"]["sha256"]);
        CHECK(l["raw_sha256"] == refs[i]["raw_sha256"]);
        const uint32_t id = refs[i]["ggml_type_id"];
        CHECK((b["raw_sha256"] == l["raw_sha256"]) == (id == 24 || id == 39));  // bytes differ but for I8, MXFP4
        if (f32_reference(refs[i])) {
            CHECK(as_bytes(ok_cli("dump " + quote(be) + " " + quote(refs[i]["name"])).out) == ref_bytes(refs[i]));
        }
    }
    CHECK(json_cli("stats " + quote(be) + " --json") == json_cli("stats " + quote(le) + " --json"));

    ws_test::CliResult r = run_cli("verify " + quote(be));
    CHECK(r.status == 0);
    CHECK(r.err.empty());
    CHECK(r.out == be + ": ok: " + std::to_string(refs.size()) + " tensors decoded, 0 metadata keys\n");

    // convert writes little-endian: the same tensors as the little-endian file, byte for byte.
    ok_cli("convert " + quote(be) + " " + quote(dir.file("out.gguf")));
    CHECK(json_cli("info " + quote(dir.file("out.gguf")) + " --json")["endian"] == "little");
    CHECK(json_cli("hash " + quote(dir.file("out.gguf")) + " --json") == le_hash);
    ok_cli("convert " + quote(be) + " " + quote(dir.file("out.safetensors")));
    ok_cli("convert " + quote(le) + " " + quote(dir.file("le.safetensors")));
    CHECK(json_cli("hash " + quote(dir.file("out.safetensors")) + " --json") ==
          json_cli("hash " + quote(dir.file("le.safetensors")) + " --json"));
}

TEST_CASE("verify accepts Q8_1 and Q8_K tensors and decodes them") {
    ws_test::TempDir dir;
    const std::string path = dir.file("q8.gguf");
    std::vector<uint8_t> q8k(292), q81(2 * 36);
    for (size_t i = 0; i < q8k.size(); ++i) q8k[i] = static_cast<uint8_t>(i * 7);
    for (size_t i = 0; i < q81.size(); ++i) q81[i] = static_cast<uint8_t>(i * 5 + 1);
    const float d = 0.25f;
    std::memcpy(q8k.data(), &d, 4);
    ws_test::write_file(path,
                        gguf_file({tensor("k", DType::Q8_K, {256}), tensor("one", DType::Q8_1, {64})}, {q8k, q81}));
    const ws_test::CliResult r = run_cli("verify " + quote(path));
    CHECK(r.status == 0);
    CHECK(r.err.empty());
    CHECK(r.out == path + ": ok: 2 tensors decoded, 0 metadata keys\n");
    std::vector<float> k(256), one(64);
    REQUIRE(ws::dequantize(DType::Q8_K, q8k.data(), 256, k.data()).ok());
    REQUIRE(ws::dequantize(DType::Q8_1, q81.data(), 64, one.data()).ok());
    CHECK(k[3] == 0.25f * static_cast<float>(static_cast<int8_t>(q8k[4 + 3])));
    const json h = json_cli("hash " + quote(path) + " --json");
    auto bytes_of_floats = [](const std::vector<float>& v) {
        std::vector<uint8_t> b(v.size() * 4);
        std::memcpy(b.data(), v.data(), b.size());
        return b;
    };
    CHECK(h["tensors"][0]["f32_sha256"] == sha256(bytes_of_floats(k)));
    CHECK(h["tensors"][1]["f32_sha256"] == sha256(bytes_of_floats(one)));
}

// ---- dump ---------------------------------------------------------------------------------------------------

TEST_CASE("dump --as f32 equals ggml's reference decode of every tensor") {
    for (const CorpusFile& f : ggml_files(false)) {
        for (const json& t : f.manifest["tensors"]) {
            if (!f32_reference(t)) continue;
            INFO(f.path << " tensor " << t["name"]);
            const ws_test::CliResult r = ok_cli("dump " + quote(f.path) + " " + quote(t["name"]));
            CHECK(as_bytes(r.out) == ref_bytes(t));  // bit for bit, NaN payloads included
            CHECK(r.err.empty());
        }
    }
}

TEST_CASE("dump --as raw gives the stored bytes; integer tensors equal ref/NAME.raw") {
    for (const CorpusFile& f : ggml_files(false)) {
        const std::vector<uint8_t> file = ws_test::read_file(f.path);
        for (const json& t : f.manifest["tensors"]) {
            INFO(f.path << " tensor " << t["name"]);
            const std::vector<uint8_t> out =
                as_bytes(ok_cli("dump " + quote(f.path) + " " + quote(t["name"]) + " --as raw").out);
            CHECK(out == stored_bytes(file, t));
            CHECK(sha256(out) == t["raw_sha256"]);
            if (!f32_reference(t)) CHECK(out == ref_bytes(t));
        }
    }
}

TEST_CASE("dump --as f16 / bf16 equal ggml's rounding of the reference floats") {
    for (const CorpusFile& f : ggml_files(false)) {
        for (const json& t : f.manifest["tensors"]) {
            if (!f32_reference(t)) continue;
            INFO(f.path << " tensor " << t["name"]);
            const std::vector<float> ref = as_floats(ref_bytes(t));
            std::vector<uint16_t> f16(ref.size()), bf16(ref.size());
            for (size_t i = 0; i < ref.size(); ++i) {
                f16[i] = ws::fp32_to_fp16(ref[i]);
                bf16[i] = ws::fp32_to_bf16(ref[i]);
            }
            const std::string out16 = ok_cli("dump " + quote(f.path) + " " + quote(t["name"]) + " --as f16").out;
            const std::string outbf = ok_cli("dump " + quote(f.path) + " " + quote(t["name"]) + " --as bf16").out;
            REQUIRE(out16.size() == ref.size() * 2);
            REQUIRE(outbf.size() == ref.size() * 2);
            CHECK(std::memcmp(out16.data(), f16.data(), out16.size()) == 0);
            CHECK(std::memcmp(outbf.data(), bf16.data(), outbf.size()) == 0);
        }
    }
}

TEST_CASE("dump --as f16 of an F16 tensor passes the stored bits through, NaN payloads included") {
    // Signalling and payload NaNs of both signs, which a round trip through float32 would rewrite.
    const std::vector<uint16_t> halves = {0x7c01, 0xfd55, 0x7e00, 0x3c00, 0x8001, 0x7fff, 0xfc00, 0x0000};
    std::vector<uint8_t> bytes(halves.size() * 2);
    std::memcpy(bytes.data(), halves.data(), bytes.size());
    ws_test::TempDir dir;
    const std::string path = dir.file("nan.gguf");
    ws_test::write_file(path, gguf_file({tensor("h", DType::F16, {8})}, {bytes}));
    CHECK(as_bytes(ok_cli("dump " + quote(path) + " h --as f16").out) == bytes);
    CHECK(as_bytes(ok_cli("dump " + quote(path) + " h --as f16 --rows 0:1").out) == bytes);
}

TEST_CASE("dump -o x.npy writes a NumPy file with the tensor's shape and dtype") {
    ws_test::TempDir dir;
    const json m = ws_test::read_json(ws_test::data_path("ggml/manifest.json"))["files"][0];
    const std::vector<uint8_t> file = ws_test::read_file(kTypes);
    for (const json& t : m["tensors"]) {
        INFO("tensor " << t["name"]);
        const std::string npy = dir.file("x.npy");
        if (f32_reference(t)) {
            ok_cli("dump " + quote(kTypes) + " " + quote(t["name"]) + " -o " + quote(npy));
            const ws_test::NpyArray a = ws_test::read_npy(ws_test::read_file(npy));
            CHECK(a.major == 1);
            CHECK(a.descr == "<f4");
            CHECK_FALSE(a.fortran_order);
            CHECK(a.shape == shape_of(t));
            CHECK(a.data_offset % 64 == 0);
            CHECK(a.data == ref_bytes(t));
        }
        ok_cli("dump " + quote(kTypes) + " " + quote(t["name"]) + " --as raw -o " + quote(npy));
        const ws_test::NpyArray raw = ws_test::read_npy(ws_test::read_file(npy));
        CHECK(raw.descr == "|u1");
        CHECK(raw.shape == std::vector<int64_t>{t["size_bytes"].get<int64_t>()});
        CHECK(raw.data == stored_bytes(file, t));
    }
    // f16 is <f2, bf16 its bits as <u2 (numpy has no bfloat16); a 1-D shape is written "(n,)".
    ok_cli("dump " + quote(kTypes) + " f16.special --as f16 -o " + quote(dir.file("h.npy")));
    const std::vector<uint8_t> h = ws_test::read_file(dir.file("h.npy"));
    const ws_test::NpyArray a = ws_test::read_npy(h);
    CHECK(a.descr == "<f2");
    CHECK(a.shape == std::vector<int64_t>{64});
    CHECK(std::string(h.begin(), h.begin() + static_cast<ptrdiff_t>(a.data_offset)).find("'shape': (64,)") !=
          std::string::npos);
    ok_cli("dump " + quote(kTypes) + " q6_k.3d --as bf16 -o " + quote(dir.file("b.npy")));
    const ws_test::NpyArray b = ws_test::read_npy(ws_test::read_file(dir.file("b.npy")));
    CHECK(b.descr == "<u2");
    CHECK(b.shape == std::vector<int64_t>{2, 3, 256});
    CHECK(b.data.size() == 2 * 3 * 256 * 2);
}

TEST_CASE("dump -o x.npy of a complex64 tensor and a scalar") {
    // C64 as float32 is numpy's complex64 (<c8) with the tensor's shape; as f16 it gets a trailing dim of 2.
    const std::vector<float> c = {1.5f, -2.0f, 0.25f, 3.0f, -0.0f, 1e-3f};
    const std::vector<float> scalar = {42.5f};
    auto bytes_of = [](const std::vector<float>& v) {
        return std::vector<uint8_t>(reinterpret_cast<const uint8_t*>(v.data()),
                                    reinterpret_cast<const uint8_t*>(v.data()) + v.size() * 4);
    };
    TensorInfo scalar_info = tensor("s", DType::F32, {});
    auto file = ws::safetensors_write({}, {tensor("c", DType::C64, {3}), scalar_info}, {bytes_of(c), bytes_of(scalar)});
    REQUIRE(file.ok());
    ws_test::TempDir dir;
    const std::string st = dir.file("c.safetensors");
    ws_test::write_file(st, file.value());

    ok_cli("dump " + quote(st) + " c -o " + quote(dir.file("c.npy")));
    ws_test::NpyArray a = ws_test::read_npy(ws_test::read_file(dir.file("c.npy")));
    CHECK(a.descr == "<c8");
    CHECK(a.shape == std::vector<int64_t>{3});
    CHECK(a.data == bytes_of(c));
    ok_cli("dump " + quote(st) + " c --as f16 -o " + quote(dir.file("h.npy")));
    a = ws_test::read_npy(ws_test::read_file(dir.file("h.npy")));
    CHECK(a.descr == "<f2");
    CHECK(a.shape == std::vector<int64_t>{3, 2});
    REQUIRE(a.data.size() == 12);
    for (size_t i = 0; i < c.size(); ++i) {
        CHECK((a.data[2 * i] | a.data[2 * i + 1] << 8) == ws::fp32_to_fp16(c[i]));
    }
    ok_cli("dump " + quote(st) + " s -o " + quote(dir.file("s.npy")));
    const std::vector<uint8_t> s_file = ws_test::read_file(dir.file("s.npy"));
    a = ws_test::read_npy(s_file);
    CHECK(a.shape.empty());
    CHECK(std::string(s_file.begin(), s_file.begin() + static_cast<ptrdiff_t>(a.data_offset)).find("'shape': ()") !=
          std::string::npos);
    CHECK(a.data == bytes_of(scalar));
}

TEST_CASE("dump --rows windows are slices of the whole dump") {
    ws_test::TempDir dir;
    const json m = ws_test::read_json(ws_test::data_path("ggml/manifest.json"))["files"][0];
    for (const json& t : m["tensors"]) {
        const std::string name = t["name"];
        const int64_t row = t["ne"][0], rows = t["n_elements"].get<int64_t>() / row;
        INFO("tensor " << name << ", " << rows << " rows of " << row);
        const std::string whole = ok_cli("dump " + quote(kTypes) + " " + quote(name)).out;
        const std::string raw_whole = ok_cli("dump " + quote(kTypes) + " " + quote(name) + " --as raw").out;
        const size_t row_bytes = t["row_size_bytes"];
        for (const auto& [start, count] :
             std::vector<std::pair<int64_t, int64_t>>{{0, 1}, {rows - 1, 1}, {1, rows - 1}, {0, rows}, {rows, 0}}) {
            if (count < 0 || start + count > rows) continue;
            const std::string window = std::to_string(start) + ":" + std::to_string(start + count);  // a slice
            INFO("--rows " << window);
            const std::string part = ok_cli("dump " + quote(kTypes) + " " + quote(name) + " --rows " + window).out;
            CHECK(part == whole.substr(static_cast<size_t>(start * row * 4), static_cast<size_t>(count * row * 4)));
            const std::string raw =
                ok_cli("dump " + quote(kTypes) + " " + quote(name) + " --as raw --rows " + window).out;
            CHECK(raw == raw_whole.substr(start * row_bytes, count * row_bytes));
        }
    }
    // A window as .npy is [rows, row length].
    ok_cli("dump " + quote(kTypes) + " q4_k.3d --rows 2:5 -o " + quote(dir.file("w.npy")));
    const ws_test::NpyArray a = ws_test::read_npy(ws_test::read_file(dir.file("w.npy")));
    CHECK(a.shape == std::vector<int64_t>{3, 256});
    const std::vector<uint8_t> ref = ws_test::read_file(ws_test::data_path("ggml/ref/q4_k.3d.f32"));
    CHECK(a.data == std::vector<uint8_t>(ref.begin() + 2 * 256 * 4, ref.begin() + 5 * 256 * 4));
}

TEST_CASE("a large tensor decodes identically on 1 and 4 threads") {
    // Q8_0 [4096 x 2051]: 8.4M elements, more than one decode piece (8M) and many threads' worth.
    const int64_t ne0 = 4096, ne1 = 2051, n = ne0 * ne1;
    std::vector<uint8_t> q8(static_cast<size_t>(n / 32 * 34));
    std::mt19937 rng(7);
    for (size_t b = 0; b < q8.size() / 34; ++b) {
        ws_test::put_u16(&q8, b * 34, static_cast<uint16_t>(0x1000 + rng() % 0x2c00));  // finite scales, some subnormal
        for (size_t j = 0; j < 32; ++j) q8[b * 34 + 2 + j] = static_cast<uint8_t>(rng());
    }
    ws_test::TempDir dir;
    const std::string path = dir.file("big.gguf");
    ws_test::write_file(path, gguf_file({tensor("big", DType::Q8_0, {ne0, ne1})}, {q8}));

    std::vector<float> expected(static_cast<size_t>(n));
    REQUIRE(ws::dequantize(DType::Q8_0, q8.data(), static_cast<uint64_t>(n), expected.data()).ok());
    const std::vector<uint8_t> expected_bytes(reinterpret_cast<const uint8_t*>(expected.data()),
                                              reinterpret_cast<const uint8_t*>(expected.data()) + n * 4);
    for (const char* threads : {"1", "4"}) {
        INFO("--threads " << threads);
        const std::string out = dir.file(std::string("t") + threads + ".f32");
        const ws_test::CliResult r = ok_cli("dump " + quote(path) + " big -o " + quote(out) + " --threads " + threads);
        CHECK(r.err.empty());  // stderr is not a terminal: no progress bar
        CHECK(ws_test::read_file(out) == expected_bytes);
        CHECK(ws_test::temporary_files(dir.path).empty());
    }
    CHECK(ok_cli("hash " + quote(path) + " --json --threads 1").out ==
          ok_cli("hash " + quote(path) + " --json --threads 4").out);
    CHECK(json_cli("hash " + quote(path) + " --json")["tensors"][0]["f32_sha256"] == sha256(expected_bytes));
    const std::string stats1 = ok_cli("stats " + quote(path) + " --json --threads 1").out;
    CHECK(stats1 == ok_cli("stats " + quote(path) + " --json --threads 4").out);
    const json s = json::parse(stats1)["tensors"][0];
    const Expected e = expected_stats(expected);
    CHECK(s["min"].get<double>() == e.min);
    CHECK(s["max"].get<double>() == e.max);
    CHECK(std::fabs(s["mean"].get<double>() - e.mean) <= 1e-9 * e.mean_abs);
    CHECK(std::fabs(s["std"].get<double>() - e.std) <= 1e-9 * e.std);
    check_histogram(s["histogram"], expected, e);
}

// ---- stats --------------------------------------------------------------------------------------------------

TEST_CASE("stats --json equals statistics computed from the reference decode") {
    for (const CorpusFile& f : ggml_files(false)) {
        INFO(f.path);
        const std::map<std::string, json> ours = by_name(json_cli("stats " + quote(f.path) + " --json"));
        REQUIRE(ours.size() == f.manifest["tensors"].size());
        for (const json& t : f.manifest["tensors"]) {
            if (!f32_reference(t)) continue;
            INFO("tensor " << t["name"]);
            const json& s = ours.at(t["name"].get<std::string>());
            const Expected e = expected_stats(as_floats(ref_bytes(t)));
            CHECK(s["dtype"] == upper(t["ggml_type"]));
            CHECK(s["n_elements"] == t["n_elements"]);
            CHECK(s["nan"] == e.nan);
            CHECK(s["pos_inf"] == e.pos_inf);
            CHECK(s["neg_inf"] == e.neg_inf);
            CHECK(s["zeros"] == e.zeros);
            // The manifest's own numbers (ggml's reader): min/max of the finite values, NaN and Inf counts.
            const json& ref = t["reference"];
            CHECK(s["nan"] == ref["n_nan"]);
            CHECK(s["pos_inf"].get<uint64_t>() + s["neg_inf"].get<uint64_t>() == ref["n_inf"].get<uint64_t>());
            if (e.finite == 0) {
                CHECK(s["min"].is_null());
                CHECK(s["mean"].is_null());
                continue;
            }
            CHECK(static_cast<float>(s["min"].get<double>()) == static_cast<float>(ref["min"].get<double>()));
            CHECK(static_cast<float>(s["max"].get<double>()) == static_cast<float>(ref["max"].get<double>()));
            CHECK(s["min"].get<double>() == e.min);
            CHECK(s["max"].get<double>() == e.max);
            CHECK(std::fabs(s["mean"].get<double>() - e.mean) <= 1e-9 * e.mean_abs);
            CHECK(std::fabs(s["std"].get<double>() - e.std) <= 1e-9 * e.std);
            CHECK(s["histogram"]["min"].get<double>() == e.min);
            CHECK(s["histogram"]["max"].get<double>() == e.max);
            check_histogram(s["histogram"], as_floats(ref_bytes(t)), e);
            uint64_t binned = 0;
            for (const json& c : s["histogram"]["counts"]) binned += c.get<uint64_t>();
            CHECK(binned == e.finite);
        }
    }
}

TEST_CASE("stats of named tensors, and the table without --json") {
    const json named = json_cli("stats " + quote(kTypes) + " q4_k.weight f32.special --json");
    REQUIRE(named["tensors"].size() == 2);
    CHECK(named["tensors"][0]["name"] == "q4_k.weight");
    CHECK(named["tensors"][1]["name"] == "f32.special");
    CHECK(named["tensors"][1]["nan"].get<int>() > 0);
    const ws_test::CliResult r = ok_cli("stats " + quote(kTypes) + " f32.special");
    CHECK(r.out.rfind("name", 0) == 0);
    CHECK(r.out.find("f32.special") != std::string::npos);
    CHECK(std::count(r.out.begin(), r.out.end(), '\n') == 2);
}

// ---- convert ------------------------------------------------------------------------------------------------

TEST_CASE("convert GGUF -> safetensors -> GGUF keeps every float tensor bit-exact") {
    ws_test::TempDir dir;
    for (const CorpusFile& f : ggml_files(false)) {
        INFO(f.path);
        const std::string st = dir.file("a.safetensors"), gguf = dir.file("b.gguf");
        ok_cli("convert " + quote(f.path) + " " + quote(st));
        ok_cli("convert " + quote(st) + " " + quote(gguf));
        CHECK(ws_test::temporary_files(dir.path).empty());
        for (const std::string& out : {st, gguf}) {
            INFO(out);
            const ws_test::CliResult v = ok_cli("verify " + quote(out));
            CHECK(v.err.empty());
            const json info = json_cli("info " + quote(out) + " --json");
            const std::map<std::string, json> hashes = by_name(json_cli("hash " + quote(out) + " --json"));
            REQUIRE(info["tensors"].size() == f.manifest["tensors"].size());
            for (size_t i = 0; i < info["tensors"].size(); ++i) {
                const json& t = f.manifest["tensors"][i];
                const json& o = info["tensors"][i];
                INFO("tensor " << t["name"]);
                CHECK(o["name"] == t["name"]);
                CHECK(o["shape"] == shape_of(t));
                const std::string type = upper(t["ggml_type"]);
                const bool quantized = t["block_size"].get<int>() > 1;
                CHECK(o["dtype"] == (quantized ? "F32" : type));
                // Kept types keep their bytes; quantized ones are ggml's decode.
                CHECK(hashes.at(t["name"])["raw_sha256"] == (quantized ? t["reference"]["sha256"] : t["raw_sha256"]));
            }
        }
        // GGUF metadata arrives in __metadata__ as strings, arrays as JSON text.
        std::map<std::string, std::string> meta;
        const json st_info = json_cli("info " + quote(st) + " --json");
        for (const json& e : st_info["metadata"]) {
            CHECK(e["type"] == "string");
            meta[e["key"]] = e["value"];
        }
        REQUIRE(meta.size() == f.manifest["kv"].size());
        for (const json& kv : f.manifest["kv"]) {
            const std::string key = kv["key"], type = kv["type"];
            INFO("key " << key);
            const std::string& ours = meta.at(key);
            if (type == "str") {
                CHECK(ours == kv["value"]);
            } else if (type == "bool") {
                CHECK(ours == (kv["value"].get<bool>() ? "true" : "false"));
            } else if (type == "f32" || type == "f64") {
                if (kv["value"].is_null()) continue;  // NaN/Inf
                const double v = std::strtod(ours.c_str(), nullptr);
                if (type == "f32") {
                    CHECK(static_cast<float>(v) == static_cast<float>(kv["value"].get<double>()));
                } else {
                    CHECK(v == kv["value"].get<double>());
                }
            } else if (type == "arr") {
                const json items = json::parse(ours);
                REQUIRE(items.size() == kv["length"].get<size_t>());
                for (size_t i = 0; i < kv["values"].size(); ++i) {
                    const json& want = kv["values"][i];
                    if (want.is_number_float()) {
                        CHECK(static_cast<float>(items[i].get<double>()) == static_cast<float>(want.get<double>()));
                    } else if (!want.is_null()) {
                        CHECK(items[i] == want);
                    }
                }
            } else {
                CHECK(ours == kv["value"].dump());  // integers, exact
            }
        }
    }
}

TEST_CASE("convert --dtype f16 / bf16 to safetensors rounds every float tensor as ggml does") {
    ws_test::TempDir dir;
    const json m = ws_test::read_json(ws_test::data_path("ggml/manifest.json"))["files"][0];
    for (const char* dtype : {"f16", "bf16"}) {
        INFO(dtype);
        const std::string st = dir.file(std::string(dtype) + ".safetensors");
        ok_cli("convert " + quote(kTypes) + " " + quote(st) + " --dtype " + dtype);
        ok_cli("verify " + quote(st));
        const std::map<std::string, json> tensors = by_name(json_cli("tensors " + quote(st) + " --json"));
        for (const json& t : m["tensors"]) {
            INFO("tensor " << t["name"]);
            const json& o = tensors.at(t["name"]);
            if (!f32_reference(t)) {  // integers are never re-encoded; F64 is a float type and is
                CHECK(o["dtype"] == (t["ggml_type"] == "f64" ? upper(dtype) : upper(t["ggml_type"])));
                continue;
            }
            CHECK(o["dtype"] == upper(dtype));
            const std::vector<float> ref = as_floats(ref_bytes(t));
            std::vector<uint16_t> expected(ref.size());
            for (size_t i = 0; i < ref.size(); ++i) {
                expected[i] = std::string(dtype) == "f16" ? ws::fp32_to_fp16(ref[i]) : ws::fp32_to_bf16(ref[i]);
            }
            const std::string out = ok_cli("dump " + quote(st) + " " + quote(t["name"]) + " --as raw").out;
            REQUIRE(out.size() == expected.size() * 2);
            CHECK(std::memcmp(out.data(), expected.data(), out.size()) == 0);
        }
    }
}

TEST_CASE("convert safetensors -> GGUF --dtype q8_0 / q4_0 gives ggml's quantized bytes") {
    // A safetensors file of the float32 sources ggml quantized (ref/NAME.src.f32), plus a tensor whose rows
    // are not a multiple of 32 elements (kept as F32).
    const json m = ws_test::read_json(ws_test::data_path("ggml/manifest.json"))["files"][0];
    std::vector<TensorInfo> tensors;
    std::vector<std::vector<uint8_t>> data;
    std::vector<json> sources;
    // Named NAME.weight: convert quantizes only what llama-quantize would (a name ending in "weight").
    for (const json& t : m["tensors"]) {
        const std::string type = t["ggml_type"];
        if (type != "q8_0" && type != "q4_0") continue;
        tensors.push_back(
            tensor(t["name"].get<std::string>() + ".weight", DType::F32, t["ne"].get<std::vector<int64_t>>()));
        data.push_back(ws_test::read_file(ws_test::data_path("ggml/" + t["source"]["file"].get<std::string>())));
        sources.push_back(t);
    }
    REQUIRE(sources.size() == 5);  // q8_0/q4_0 .weight, .odd, and q8_0.3d
    tensors.push_back(tensor("narrow", DType::F32, {20, 3}));
    std::vector<uint8_t> narrow(20 * 3 * 4);
    for (size_t i = 0; i < narrow.size(); ++i) narrow[i] = static_cast<uint8_t>(i * 7);
    data.push_back(narrow);
    MetadataEntry note;
    note.key = "note";
    note.value.type = ws::ValueType::kString;
    note.value.str = "quantizer sources";
    auto st_file = ws::safetensors_write({note}, tensors, data);
    REQUIRE(st_file.ok());

    ws_test::TempDir dir;
    const std::string st = dir.file("src.safetensors");
    ws_test::write_file(st, st_file.value());
    for (const char* dtype : {"q8_0", "q4_0"}) {
        INFO("--dtype " << dtype);
        const std::string gguf = dir.file(std::string(dtype) + ".gguf");
        ok_cli("convert " + quote(st) + " " + quote(gguf) + " --dtype " + dtype);
        ok_cli("verify " + quote(gguf));
        const json info = json_cli("info " + quote(gguf) + " --json");
        const std::map<std::string, json> listed = by_name(info);
        const std::map<std::string, json> hashes = by_name(json_cli("hash " + quote(gguf) + " --json"));
        for (const json& t : sources) {
            const std::string name = t["name"].get<std::string>() + ".weight";
            INFO("tensor " << name);
            CHECK(listed.at(name)["dtype"] == upper(dtype));
            CHECK(listed.at(name)["ne"] == t["ne"]);
            // ggml quantized this very source into the corpus tensor of that type: same bytes.
            if (t["ggml_type"] == dtype) CHECK(hashes.at(name)["raw_sha256"] == t["raw_sha256"]);
        }
        CHECK(listed.at("narrow")["dtype"] == "F32");
        CHECK(hashes.at("narrow")["raw_sha256"] == sha256(narrow));
        // The input's metadata, then the file type of --dtype and the quantization version.
        REQUIRE(info["metadata"].size() == 3);
        CHECK(info["metadata"][0]["key"] == "note");
        CHECK(info["metadata"][0]["value"] == "quantizer sources");
        CHECK(info["metadata"][1]["key"] == "general.file_type");
        CHECK(info["metadata"][1]["value"] == (std::string(dtype) == "q8_0" ? 7 : 2));
        CHECK(info["metadata"][2]["key"] == "general.quantization_version");
        CHECK(info["metadata"][2]["value"] == 2);
    }
}

TEST_CASE("convert the safetensors corpus to GGUF and back") {
    ws_test::TempDir dir;
    const json manifest = ws_test::read_json(ws_test::data_path("safetensors/manifest.json"));
    for (const json& f : manifest["files"]) {
        const std::string path = ws_test::data_path("safetensors/" + f["file"].get<std::string>());
        INFO(path);
        const std::string gguf = dir.file("x.gguf"), back = dir.file("y.safetensors");
        ok_cli("convert " + quote(path) + " " + quote(gguf));
        ok_cli("verify " + quote(gguf));
        ok_cli("convert " + quote(gguf) + " " + quote(back));
        const std::map<std::string, json> in_gguf = by_name(json_cli("info " + quote(gguf) + " --json"));
        const std::map<std::string, json> hashes = by_name(json_cli("hash " + quote(back) + " --json"));
        for (const json& t : f["tensors"]) {
            const std::string name = t["name"];
            INFO("tensor " << name);
            const std::string dtype = t["dtype"];
            const json& g = in_gguf.at(name);
            CHECK(g["shape"] == t["shape"]);
            if (dtype == "U8" || dtype == "U16" || dtype == "U32") {
                // Widened to the next signed type: same values.
                CHECK(g["dtype"] == (dtype == "U8" ? "I16" : dtype == "U16" ? "I32" : "I64"));
                const std::string src = ok_cli("dump " + quote(path) + " " + quote(name) + " --as raw").out;
                const std::string wide = ok_cli("dump " + quote(gguf) + " " + quote(name) + " --as raw").out;
                const size_t w = src.size() / t["n_elements"].get<size_t>();
                REQUIRE(wide.size() == 2 * src.size());
                for (size_t i = 0; i < src.size() / w; ++i) {
                    CHECK(wide.substr(i * 2 * w, w) == src.substr(i * w, w));
                    CHECK(wide.substr(i * 2 * w + w, w) == std::string(w, '\0'));
                }
            } else {
                CHECK(g["dtype"] == dtype);
                CHECK(hashes.at(name)["raw_sha256"] == t["sha256"]);  // kept bit for bit both ways
            }
        }
    }
    // __metadata__ becomes string KVs.
    const std::string gguf = dir.file("m.gguf");
    ok_cli("convert " + quote(ws_test::data_path("safetensors/sample_overall.safetensors")) + " " + quote(gguf));
    const json meta = json_cli("info " + quote(gguf) + " --json")["metadata"];
    REQUIRE(meta.size() == 1);
    CHECK(meta[0] == json({{"key", "test"}, {"type", "string"}, {"value", "a"}}));
}

TEST_CASE("convert safetensors -> GGUF: general.alignment becomes the u32 ggml needs, split keys are dropped") {
    auto meta = [](const std::string& key, const std::string& value) {
        MetadataEntry e;
        e.key = key;
        e.value.type = ws::ValueType::kString;
        e.value.str = value;
        return e;
    };
    std::vector<uint8_t> data(5 * 4, 0x3f);
    ws_test::TempDir dir;
    for (const char* alignment : {"64", "48"}) {
        INFO("general.alignment " << alignment);
        auto file =
            ws::safetensors_write({meta("general.alignment", alignment), meta("split.count", "3"), meta("x", "y")},
                                  {tensor("t", DType::F32, {5})}, {data});
        REQUIRE(file.ok());
        const std::string st = dir.file("a.safetensors"), gguf = dir.file("a.gguf");
        ws_test::write_file(st, file.value());
        const ws_test::CliResult r = ok_cli("convert " + quote(st) + " " + quote(gguf));
        ok_cli("verify " + quote(gguf));
        const json info = json_cli("info " + quote(gguf) + " --json");
        std::map<std::string, json> kv;
        for (const json& e : info["metadata"]) kv[e["key"]] = e;
        CHECK(kv.count("split.count") == 0);
        CHECK(kv.at("x")["value"] == "y");
        if (std::string(alignment) == "64") {
            CHECK(info["alignment"] == 64);
            CHECK(kv.at("general.alignment")["type"] == "uint32");
            CHECK(r.err.empty());
        } else {
            CHECK(info["alignment"] == 32);
            CHECK(kv.count("general.alignment") == 0);
            CHECK(r.err ==
                  "weightstream: warning: metadata general.alignment '48' dropped (GGUF needs a power of two)\n");
        }
    }
}

// ---- verify -------------------------------------------------------------------------------------------------

TEST_CASE("verify decodes every tensor and warns about NaN/Inf block scales") {
    ws_test::TempDir dir;
    // Q8_0: 4 blocks, block 1 has a NaN scale, block 2 an Inf one. Q4_K: 2 blocks, block 1's dmin is -NaN.
    ws_test::ScaleBlocks blocks = ws_test::nan_inf_scale_blocks();
    std::vector<uint8_t>& q8 = blocks.q8_0;
    std::vector<uint8_t>& q4k = blocks.q4_k;
    const std::string bad = dir.file("scales.gguf");
    ws_test::write_file(bad,
                        gguf_file({tensor("q8", DType::Q8_0, {128}), tensor("q4k", DType::Q4_K, {256, 2})}, {q8, q4k}));
    const json info = json_cli("info " + quote(bad) + " --json");

    const ws_test::CliResult r = run_cli("verify " + quote(bad));
    CHECK(r.status == 0);
    CHECK(r.out.find(": ok: 2 tensors decoded") != std::string::npos);
    const uint64_t q8_at = info["tensors"][0]["offset"], q4k_at = info["tensors"][1]["offset"];
    CHECK(r.err == "weightstream: warning: " + bad +
                       ": tensor q8: 1 of 4 blocks has a NaN scale, 1 of 4 blocks has an Inf scale (first at byte " +
                       std::to_string(q8_at + 34) + ")\n" + "weightstream: warning: " + bad +
                       ": tensor q4k: 1 of 2 blocks has a NaN scale (first at byte " + std::to_string(q4k_at + 144) +
                       ")\n");

    // The same file with finite scales: no warning.
    ws_test::put_u16(&q8, 34, 0x3c00);
    ws_test::put_u16(&q8, 68, 0x3c00);
    ws_test::put_u16(&q4k, 144 + 2, 0x3800);
    const std::string good = dir.file("good.gguf");
    ws_test::write_file(good,
                        gguf_file({tensor("q8", DType::Q8_0, {128}), tensor("q4k", DType::Q4_K, {256, 2})}, {q8, q4k}));
    const ws_test::CliResult g = run_cli("verify " + quote(good));
    CHECK(g.status == 0);
    CHECK(g.err.empty());
}

// ---- types without a decoder, exit statuses ------------------------------------------------------------------

TEST_CASE("a tensor that cannot be decoded: dump refuses, --as raw works, hash gives null, stats skips it") {
    // Every GGUF type with a layout decodes; what cannot be decoded is big-endian data of a type gguf-py
    // defines no big-endian layout for (Q5_K here). Verify accepts the file with a warning.
    ws_test::TempDir dir;
    const std::string path = dir.file("be.gguf");
    std::vector<uint8_t> q5k(176, 3), f32(16, 0);
    ws_test::GgufSpec spec;
    spec.big_endian = true;
    spec.tensors.push_back({"k", static_cast<uint32_t>(DType::Q5_K), {256}, q5k});
    spec.tensors.push_back({"f", static_cast<uint32_t>(DType::F32), {4}, f32});
    ws_test::write_file(path, ws_test::build_gguf(spec).bytes);
    const std::string problem = "type Q5_K has no defined big-endian layout (gguf-py cannot swap it either)";

    ws_test::CliResult r = run_cli("dump " + quote(path) + " k");
    CHECK(r.status == 1);
    CHECK(r.err.find("tensor k: " + problem) != std::string::npos);
    CHECK(as_bytes(ok_cli("dump " + quote(path) + " k --as raw").out) == q5k);

    const json h = json_cli("hash " + quote(path) + " --json");
    CHECK(h["tensors"][0]["f32_sha256"].is_null());
    CHECK(h["tensors"][0]["raw_sha256"] == sha256(q5k));
    CHECK(h["tensors"][1]["f32_sha256"] == sha256(f32));

    r = run_cli("stats " + quote(path) + " --json");
    CHECK(r.status == 0);
    CHECK(r.err == "weightstream: warning: tensor k: " + problem + "; no statistics\n");
    const json s = json::parse(r.out);
    CHECK(s["tensors"][0]["error"] == problem);
    CHECK(s["tensors"][1]["zeros"] == 4);
    CHECK(run_cli("stats " + quote(path) + " k").status == 1);

    r = run_cli("verify " + quote(path));
    CHECK(r.status == 0);
    CHECK(r.err == "weightstream: warning: " + path + ": tensor k: not decoded: " + problem + "\n");
    CHECK(r.out == path + ": ok: 2 tensors, 1 decoded, 0 metadata keys, 1 warning\n");

    // convert cannot write it little-endian (not even GGUF -> GGUF, which would copy the bytes).
    for (const char* out : {"x.safetensors", "x.gguf"}) {
        r = run_cli("convert " + quote(path) + " " + quote(dir.file(out)));
        CHECK(r.status == 1);
        CHECK(r.err.find("cannot convert tensor k: " + problem) != std::string::npos);
        CHECK_FALSE(ws_test::file_exists(dir.file(out)));
    }
}

TEST_CASE("decoding commands: exit statuses and messages") {
    ws_test::TempDir dir;
    const std::string types = quote(kTypes);
    SECTION("an unknown tensor name is a usage error naming it") {
        for (const std::string& cmd :
             {"dump " + types + " nope.weight", "stats " + types + " q4_0.weight nope.weight"}) {
            const ws_test::CliResult r = run_cli(cmd);
            CHECK(r.status == 2);
            CHECK(r.err == "weightstream: error: " + kTypes + ": no tensor named 'nope.weight'\n");
        }
    }
    SECTION("usage errors") {
        CHECK(run_cli("dump " + types).status == 2);
        CHECK(run_cli("dump " + types + " q4_0.weight --as f8").status == 2);
        CHECK(run_cli("dump " + types + " q4_0.weight --rows 1:2:3").status == 2);
        CHECK(run_cli("dump " + types + " q4_0.weight --rows a:1").status == 2);
        const ws_test::CliResult rows = run_cli("dump " + types + " q4_0.weight --rows 8");  // 8 rows
        CHECK(rows.status == 2);
        CHECK(rows.err == "weightstream: error: --rows 8 is outside tensor q4_0.weight (8 rows of 512 elements)\n");
        CHECK(run_cli("dump " + types + " q4_0.weight --threads 0").status == 2);
        CHECK(run_cli("stats " + types + " --threads x").status == 2);
        CHECK(run_cli("hash").status == 2);
        CHECK(run_cli("convert " + types).status == 2);
        CHECK(run_cli("convert " + types + " " + quote(dir.file("x.bin"))).status == 2);
        CHECK(run_cli("convert " + types + " " + quote(dir.file("x.safetensors")) + " --dtype q8_0").status == 2);
        CHECK(run_cli("convert " + types + " " + quote(dir.file("x.gguf")) + " --dtype q9_z").status == 2);
        CHECK_FALSE(ws_test::file_exists(dir.file("x.safetensors")));
    }
    SECTION("a missing input is an I/O error") {
        CHECK(run_cli("hash " + quote(dir.file("none.gguf"))).status == 3);
        CHECK(run_cli("convert " + quote(dir.file("none.gguf")) + " " + quote(dir.file("y.gguf"))).status == 3);
    }
    SECTION("an unwritable output is an I/O error, and nothing is left behind") {
        const std::string nowhere = dir.file("no/such/dir");
        ws_test::CliResult r = run_cli("dump " + types + " q4_0.weight -o " + quote(nowhere + "/x.npy"));
        CHECK(r.status == 3);
        CHECK(r.err == "weightstream: error: cannot write " + nowhere + "/x.npy: No such file or directory\n");
        CHECK(run_cli("convert " + types + " " + quote(nowhere + "/x.gguf")).status == 3);
        if (ws_test::file_exists("/dev/full")) {
            r = run_cli("dump " + types + " q4_0.weight -o /dev/full");
            CHECK(r.status == 3);
            CHECK(r.err == "weightstream: error: cannot write /dev/full: No space left on device\n");
        }
        // A full disk mid-file (a file size limit, with SIGXFSZ ignored so the write fails with EFBIG).
        const std::string out = dir.file("big.safetensors");
        const std::string cmd = "sh -c " + quote("trap '' XFSZ; ulimit -f 64; exec " + std::string(WS_CLI) +
                                                 " convert " + types + " " + quote(out) + " 2>/dev/null");
        const int raw = std::system(cmd.c_str());
        CHECK(WIFEXITED(raw));
        CHECK(WEXITSTATUS(raw) == 3);
        CHECK_FALSE(ws_test::file_exists(out));
        CHECK(ws_test::temporary_files(dir.path).empty());
    }
}

TEST_CASE("bench --type times one type, its fast kernel checked against the scalar one first") {
    const json report = json_cli("bench --json --threads 2 --type Q4_K");
    REQUIRE(report["results"].size() == 2);  // single-threaded, then on --threads threads
    CHECK(report["results"][0]["threads"] == 1);
    CHECK(report["results"][1]["threads"] == 2);
    for (const json& r : report["results"]) {
        CHECK(r["dtype"] == "Q4_K");
        CHECK(r["gbps_out"].get<double>() > 0);
        CHECK(r["ratio_to_store"].get<double>() == Approx(r["gbps_out"].get<double>() / r["store_gbps"].get<double>()));
    }
    CHECK(report["store_gbps"].get<double>() > 0);
    CHECK_FALSE(report.contains("file"));

    ws_test::CliResult r = run_cli("bench --type Q4_k");  // names are exact, as `info` prints them
    CHECK(r.status == 2);
    CHECK(r.err == "weightstream: error: --type: 'Q4_k' is not a decodable type (e.g. Q4_K)\n");
    CHECK(run_cli("bench --type Q4_2").status == 2);  // a type without a decoder
    r = run_cli("bench --threads abc");
    CHECK(r.status == 2);
    CHECK(r.err == "weightstream: error: --threads needs a number from 1 to 1024, not 'abc'\n");
}

TEST_CASE("bench --quantize --type times one type's quantizer, the threaded bytes checked first") {
    json report = json_cli("bench --quantize --json --threads 2 --type Q8_0");
    CHECK_FALSE(report.contains("results"));  // no decode section
    const json& q = report["quantize"];
    CHECK(q["path"] == "fastest");
    CHECK(q["threads"] == 2);
    CHECK(q["row_elements"] == 4096);
    REQUIRE(q["results"].size() == 2);  // Q8_0 ignores an importance matrix: without one, on 1 then 2 threads
    for (size_t i = 0; i < 2; ++i) {
        const json& r = q["results"][i];
        CHECK(r["dtype"] == "Q8_0");
        CHECK(r["imatrix"] == false);
        CHECK(r["threads"] == i + 1);
        CHECK(r["values"] == 1024 * 4096);
        CHECK(r["mbps_in"].get<double>() > 0);
        // fnv1a64 of the Q8_0 bytes of bench/quantize_bench.h's weights for Q8_0 (the wasm run must match it):
        // pins the deterministic input and the quantizer's output together.
        CHECK(r["output_fnv1a64"] == "9f6c3273e1392d20");
    }
    CHECK(report["machine"]["hardware_threads"].get<int>() > 0);

    // IQ2_XXS requires an importance matrix: only the case with one. Q4_0 reads one when given: both cases.
    report = json_cli("bench --quantize --json --threads 1 --type IQ2_XXS");
    REQUIRE(report["quantize"]["results"].size() == 1);
    CHECK(report["quantize"]["results"][0]["imatrix"] == true);
    CHECK(report["quantize"]["results"][0]["threads"] == 1);
    report = json_cli("bench --quantize --json --threads 1 --type Q4_0");
    REQUIRE(report["quantize"]["results"].size() == 2);
    CHECK(report["quantize"]["results"][0]["imatrix"] == false);
    CHECK(report["quantize"]["results"][1]["imatrix"] == true);
    CHECK(report["quantize"]["results"][0]["output_fnv1a64"] != report["quantize"]["results"][1]["output_fnv1a64"]);

    ws_test::CliResult r = run_cli("bench --quantize --type Q8_1");  // decodable, but ggml cannot quantize to it
    CHECK(r.status == 2);
    CHECK(r.err == "weightstream: error: --type: 'Q8_1' is not a quantizable type (e.g. Q4_K)\n");
    r = run_cli("bench --quantize model.gguf");
    CHECK(r.status == 2);
    CHECK(r.err ==
          "weightstream: error: bench: missing or extra arguments\n"
          "usage: weightstream bench [FILE] [--json] [--threads N] [--type NAME]\n"
          "       weightstream bench --hash [FILE] [--json] [--threads N] [--rounds R]\n"
          "       weightstream bench --quantize [--json] [--threads N] [--type NAME]\n"
          "Try 'weightstream bench --help' for its options.\n");
}
