// SPDX-License-Identifier: MIT
// `weightstream diff` through the real binary: the --json shape, exit statuses, --tensors, --max-nmse,
// --threads, sharded checkpoints with config.json, big-endian GGUFs, and hostile pairs.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>

#include "support/compare_fixtures.h"
#include "support/gguf_builder.h"
#include "support/run_cli.h"
#include "weightstream/gguf_writer.h"

using nlohmann::json;
using namespace ws_test;

namespace {

struct Fixture {
    TempDir dir;
    Family family;
    std::vector<HfTensor> hf;
    std::string st, gguf, broken;  // HF checkpoint, its conversion, a conversion without the Q/K permutation

    Fixture() {
        family.name = "llama";
        hf = make_checkpoint(family);
        st = dir.file("hf/model.safetensors");
        REQUIRE(system(("mkdir -p " + quote(dir.file("hf"))).c_str()) == 0);
        write_file(st, write_safetensors(hf));
        const std::string config = config_json(family);
        write_file(dir.file("hf/config.json"), std::vector<uint8_t>(config.begin(), config.end()));
        gguf = dir.file("model-q8_0.gguf");
        write_file(gguf, write_gguf(family, convert(family, hf, Mistake::kNone)));
        broken = dir.file("broken.gguf");
        write_file(broken, write_gguf(family, convert(family, hf, Mistake::kNoPermute)));
    }
};

const json* row_for(const json& report, const std::string& b) {
    for (const json& t : report["tensors"]) {
        if (t["b"] == b) return &t;
    }
    return nullptr;
}

}  // namespace

TEST_CASE("diff --json of a checkpoint and its conversion") {
    Fixture fx;
    const CliResult r = run_cli("diff " + quote(fx.st) + " " + quote(fx.gguf) + " --json");
    REQUIRE(r.status == 0);
    CHECK(r.err.empty());
    const json j = json::parse(r.out);
    std::vector<std::string> keys;
    for (auto it = j.begin(); it != j.end(); ++it) keys.push_back(it.key());
    CHECK(keys == std::vector<std::string>{"a", "b", "mapping", "metadata", "summary", "tensors"});
    CHECK(j["a"] == json({{"path", fx.st}, {"format", "safetensors"}}));
    CHECK(j["b"] == json({{"path", fx.gguf}, {"format", "gguf"}}));
    CHECK(j["mapping"] == "hf-to-gguf:llama");
    CHECK(j["summary"] == json({{"identical", 5},
                                {"different", 16},
                                {"non_finite", 0},
                                {"only_a", 0},
                                {"only_b", 0},
                                {"incomparable", 0}}));
    REQUIRE(j["tensors"].size() == fx.hf.size());
    const json* k = row_for(j, "blk.1.attn_k.weight");
    REQUIRE(k);
    CHECK((*k)["a"] == "model.layers.1.self_attn.k_proj.weight");
    CHECK((*k)["transform"] == "permute_k");
    CHECK((*k)["dtype_a"] == "BF16");
    CHECK((*k)["dtype_b"] == "Q8_0");
    CHECK((*k)["shape_a"] == json({32, 64}));
    CHECK((*k)["verdict"] == "different");
    CHECK((*k)["hint"] == "B is A quantized to Q8_0 by ggml's reference quantizer: quantization alone");
    CHECK((*k)["metrics"]["nmse"].get<double>() < 1e-4);
    CHECK((*k)["metrics"]["cosine"].get<double>() > 0.9999);
    const json* norm = row_for(j, "output_norm.weight");
    REQUIRE(norm);
    CHECK((*norm)["verdict"] == "identical");
    CHECK((*norm)["metrics"]["nmse"] == 0.0);
    CHECK((*norm)["metrics"]["n_diff"] == 0);
    CHECK((*norm)["hint"].is_null());

    // The numbers do not depend on --threads; the GGUF first gives the same pairs seen from the other side.
    const CliResult one = run_cli("diff " + quote(fx.st) + " " + quote(fx.gguf) + " --json --threads 1");
    const CliResult three = run_cli("diff " + quote(fx.st) + " " + quote(fx.gguf) + " --json --threads=3");
    CHECK(one.out == r.out);
    CHECK(three.out == r.out);
    const json rev = json::parse(run_cli("diff " + quote(fx.gguf) + " " + quote(fx.st) + " --json").out);
    CHECK(rev["tensors"][2]["a"] == "blk.0.attn_q.weight");
    CHECK(rev["tensors"][2]["b"] == "model.layers.0.self_attn.q_proj.weight");
    CHECK(rev["tensors"][2]["hint"] == "A is B quantized to Q8_0 by ggml's reference quantizer: quantization alone");
}

TEST_CASE("diff human output, --tensors and --max-nmse") {
    Fixture fx;
    const CliResult human = run_cli("diff " + quote(fx.st) + " " + quote(fx.broken));
    REQUIRE(human.status == 0);
    CHECK(
        human.out.find("paired by hf-to-gguf:llama: 5 identical, 16 different, 0 non-finite, 0 only in A, 0 only in B, "
                       "0 incomparable") != std::string::npos);
    CHECK(human.out.find("hint: matches the source without the Q/K permutation") != std::string::npos);
    // Worst first: the unpermuted q/k (nmse near 2) come before everything else.
    const size_t first_row = human.out.find("\ndifferent");
    REQUIRE(first_row != std::string::npos);
    const std::string line = human.out.substr(first_row + 1, human.out.find('\n', first_row + 1) - first_row - 1);
    CHECK((line.find("attn_q") != std::string::npos || line.find("attn_k") != std::string::npos));
    CHECK(human.out.find("\x1b[") == std::string::npos);  // no colour into a pipe

    const CliResult filtered =
        run_cli("diff " + quote(fx.st) + " " + quote(fx.gguf) + " --json --tensors 'attn_[qk]\\.'");
    REQUIRE(filtered.status == 0);
    const json f = json::parse(filtered.out);
    REQUIRE(f["tensors"].size() == 4);
    for (const json& t : f["tensors"]) CHECK(t["b"].get<std::string>().find("attn_") != std::string::npos);

    CHECK(run_cli("diff " + quote(fx.st) + " " + quote(fx.gguf) + " --max-nmse 1e-3").status == 0);
    CHECK(run_cli("diff " + quote(fx.st) + " " + quote(fx.broken) + " --max-nmse 1e-3 --json").status == 4);
    // The gate looks only at the selected pairs.
    CHECK(run_cli("diff " + quote(fx.st) + " " + quote(fx.broken) + " --max-nmse 1e-3 --tensors ffn").status == 0);
}

TEST_CASE("diff of a big-endian GGUF and its little-endian twin: every pair identical") {
    // A llama conversion whose matrices take, in turn, every type with a defined big-endian layout but the
    // integer ones and MXFP4 (no float32 quantizer), written by the test builder little-endian and big-endian
    // (tensor data swapped as gguf-py swaps it, independently of the core's swap table). n_embd 256: whole
    // K-quant blocks per row.
    TempDir dir;
    Family family;
    family.name = "llama";
    family.n_embd = 256;
    family.n_ff = 512;
    const std::vector<HfTensor> hf = make_checkpoint(family);
    const std::string st = dir.file("hf/model.safetensors");
    REQUIRE(system(("mkdir -p " + quote(dir.file("hf"))).c_str()) == 0);
    write_file(st, write_safetensors(hf));
    const std::vector<ws::DType> types = {ws::DType::F32,  ws::DType::F16,  ws::DType::BF16, ws::DType::Q4_0,
                                          ws::DType::Q8_0, ws::DType::Q4_K, ws::DType::Q6_K};
    std::vector<GgufTensor> ts = convert(family, hf, Mistake::kNone);
    GgufSpec le_spec, be_spec;
    be_spec.big_endian = true;
    for (GgufSpec* spec : {&le_spec, &be_spec}) {
        spec->kvs = {{"general.architecture", val_str("llama")},
                     {"llama.attention.head_count", val_u32(static_cast<uint32_t>(family.n_head))},
                     {"llama.attention.head_count_kv", val_u32(static_cast<uint32_t>(family.n_head_kv))}};
    }
    size_t next_type = 0;
    for (GgufTensor& t : ts) {
        if (t.shape.size() == 2) t.dtype = types[next_type++ % types.size()];
        const uint32_t id = static_cast<uint32_t>(t.dtype);
        TensorSpec spec{t.name, id, std::vector<int64_t>(t.shape.rbegin(), t.shape.rend()), encode(t.dtype, t.values)};
        le_spec.tensors.push_back(spec);
        REQUIRE(to_big_endian_data(id, &spec.data));
        be_spec.tensors.push_back(spec);
    }
    REQUIRE(next_type >= types.size());  // every type is in the file
    const std::string le = dir.file("le.gguf"), be = dir.file("be.gguf");
    write_file(le, build_gguf(le_spec).bytes);
    write_file(be, build_gguf(be_spec).bytes);
    REQUIRE(build_gguf(le_spec).bytes != build_gguf(be_spec).bytes);

    for (const auto& ab : {std::make_pair(le, be), std::make_pair(be, le)}) {
        const CliResult r = run_cli("diff " + quote(ab.first) + " " + quote(ab.second) + " --json");
        REQUIRE(r.status == 0);
        const json j = json::parse(r.out);
        CHECK(j["mapping"] == "names");
        CHECK(j["metadata"] ==
              json({{"only_a", json::array()}, {"only_b", json::array()}, {"changed", json::array()}}));
        CHECK(j["summary"] == json({{"identical", ts.size()},
                                    {"different", 0},
                                    {"non_finite", 0},
                                    {"only_a", 0},
                                    {"only_b", 0},
                                    {"incomparable", 0}}));
        REQUIRE(j["tensors"].size() == ts.size());
        for (const json& t : j["tensors"]) {
            INFO(t.dump());
            CHECK(t["verdict"] == "identical");
            CHECK(t["dtype_a"] == t["dtype_b"]);
            CHECK(t["metrics"]["n_diff"] == 0);
            CHECK(t["metrics"]["max_abs"] == 0.0);
            CHECK(t["hint"].is_null());
        }
    }
    // Against the HF source (with the Q/K permutation undone), the big-endian file reads as its twin does.
    json from_le = json::parse(run_cli("diff " + quote(st) + " " + quote(le) + " --json").out);
    json from_be = json::parse(run_cli("diff " + quote(st) + " " + quote(be) + " --json").out);
    CHECK(from_be["b"]["path"] == be);
    from_be["b"]["path"] = le;
    CHECK(from_be == from_le);
    CHECK(from_le["mapping"] == "hf-to-gguf:llama");
    CHECK(from_le["summary"]["different"].get<int>() > 0);  // the quantized matrices
}

TEST_CASE("diff usage and I/O errors") {
    Fixture fx;
    CHECK(run_cli("diff " + quote(fx.st)).status == 2);
    CHECK(run_cli("diff " + quote(fx.st) + " " + quote(fx.gguf) + " --tensors '('").status == 2);
    CHECK(run_cli("diff " + quote(fx.st) + " " + quote(fx.gguf) + " --max-nmse -1").status == 2);
    CHECK(run_cli("diff " + quote(fx.st) + " " + quote(fx.gguf) + " --max-nmse x").status == 2);
    CHECK(run_cli("diff " + quote(fx.st) + " " + quote(fx.gguf) + " --bogus").status == 2);
    const CliResult missing = run_cli("diff " + quote(fx.st) + " " + quote(fx.dir.file("nope.gguf")));
    CHECK(missing.status == 3);
    CHECK(missing.err.find("weightstream: error: ") == 0);
}

TEST_CASE("diff of hostile pairs: corrupt side, missing shard, disagreeing shapes") {
    Fixture fx;
    // A GGUF cut in the middle of its data: the loader rejects it with the usual one-line error.
    std::vector<uint8_t> bytes = read_file(fx.gguf);
    bytes.resize(bytes.size() / 2);
    const std::string cut = fx.dir.file("cut.gguf");
    write_file(cut, bytes);
    const CliResult corrupt = run_cli("diff " + quote(fx.st) + " " + quote(cut));
    CHECK(corrupt.status == 1);
    CHECK(corrupt.err.find("weightstream: error: " + cut + ": ") == 0);
    CHECK(corrupt.out.empty());
    // Garbage bytes.
    const std::string junk = fx.dir.file("junk.gguf");
    write_file(junk, std::vector<uint8_t>(100, 0x41));
    CHECK(run_cli("diff " + quote(junk) + " " + quote(fx.gguf)).status == 1);

    // A sharded checkpoint (index + two shards + config.json) compares like the single file; a missing
    // shard is an I/O error.
    REQUIRE(system(("mkdir -p " + quote(fx.dir.file("sharded"))).c_str()) == 0);
    const size_t half = fx.hf.size() / 2;
    const std::vector<HfTensor> s1(fx.hf.begin(), fx.hf.begin() + static_cast<long>(half));
    const std::vector<HfTensor> s2(fx.hf.begin() + static_cast<long>(half), fx.hf.end());
    write_file(fx.dir.file("sharded/model-00001-of-00002.safetensors"), write_safetensors(s1));
    write_file(fx.dir.file("sharded/model-00002-of-00002.safetensors"), write_safetensors(s2));
    json weight_map = json::object();
    for (const HfTensor& t : s1) weight_map[t.name] = "model-00001-of-00002.safetensors";
    for (const HfTensor& t : s2) weight_map[t.name] = "model-00002-of-00002.safetensors";
    const std::string index_text = json({{"metadata", json::object()}, {"weight_map", weight_map}}).dump();
    const std::string index = fx.dir.file("sharded/model.safetensors.index.json");
    write_file(index, std::vector<uint8_t>(index_text.begin(), index_text.end()));
    const std::string config = config_json(fx.family);
    write_file(fx.dir.file("sharded/config.json"), std::vector<uint8_t>(config.begin(), config.end()));
    const CliResult sharded = run_cli("diff " + quote(index) + " " + quote(fx.gguf) + " --json");
    REQUIRE(sharded.status == 0);
    json js = json::parse(sharded.out);
    json single = json::parse(run_cli("diff " + quote(fx.st) + " " + quote(fx.gguf) + " --json").out);
    // The same rows; the combined model lists its tensors in its own order.
    auto by_name = [](json rows) {
        std::sort(rows.begin(), rows.end(), [](const json& x, const json& y) { return x["a"] < y["a"]; });
        return rows;
    };
    CHECK(by_name(js["tensors"]) == by_name(single["tensors"]));
    CHECK(js["a"]["path"] == index);
    std::remove(fx.dir.file("sharded/model-00002-of-00002.safetensors").c_str());
    const CliResult lost = run_cli("diff " + quote(index) + " " + quote(fx.gguf));
    CHECK(lost.status == 3);
    CHECK(lost.err.find("model-00002-of-00002.safetensors") != std::string::npos);

    // Shapes that disagree: incomparable rows, the rest compared, exit 0 (and not gated by --max-nmse).
    auto conv = convert(fx.family, fx.hf, Mistake::kNone);
    for (GgufTensor& g : conv) {
        if (g.name == "blk.0.ffn_gate.weight") {
            g.shape[0] /= 2;
            g.values.resize(g.values.size() / 2);
        }
    }
    const std::string odd = fx.dir.file("odd.gguf");
    write_file(odd, write_gguf(fx.family, conv));
    const CliResult r = run_cli("diff " + quote(fx.st) + " " + quote(odd) + " --json --max-nmse 1e-3");
    REQUIRE(r.status == 0);
    const json j = json::parse(r.out);
    const json* gate = row_for(j, "blk.0.ffn_gate.weight");
    REQUIRE(gate);
    CHECK((*gate)["verdict"] == "incomparable");
    CHECK((*gate)["metrics"].is_null());
    CHECK((*gate)["hint"] == "shapes differ: [128, 64] and [64, 64]");
    CHECK(j["summary"]["incomparable"] == 1);

    // A config.json that is not JSON is ignored with a warning; the GGUF still names the architecture.
    write_file(fx.dir.file("hf/config.json"), std::vector<uint8_t>{'{', 'x'});
    const CliResult warned = run_cli("diff " + quote(fx.st) + " " + quote(fx.gguf) + " --json");
    CHECK(warned.status == 0);
    CHECK(warned.err.find("config.json is not a JSON object; ignored") != std::string::npos);
    CHECK(json::parse(warned.out)["mapping"] == "hf-to-gguf:llama");
}

TEST_CASE("diff: NaN or Inf where the other side has a finite value is non_finite and fails --max-nmse") {
    TempDir dir;
    // The sums leave NaN and Inf out: B all NaN or all +Inf against a finite A has an nmse of 0.
    auto model = [&](const std::string& name, const std::vector<std::vector<float>>& values) {
        std::vector<ws::TensorInfo> infos;
        std::vector<std::vector<uint8_t>> data;
        for (size_t i = 0; i < values.size(); ++i) {
            ws::TensorInfo t;
            t.name = std::string(1, static_cast<char>('x' + i));
            t.dtype = ws::DType::F32;
            t.n_dims = 1;
            t.ne[0] = static_cast<int64_t>(values[i].size());
            infos.push_back(t);
            std::vector<uint8_t> bytes(values[i].size() * 4);
            std::memcpy(bytes.data(), values[i].data(), bytes.size());
            data.push_back(bytes);
        }
        auto bytes = ws::gguf_write({ws::string_entry("general.architecture", "llama")}, infos, data);
        REQUIRE(bytes.ok());
        write_file(dir.file(name), bytes.value());
        return dir.file(name);
    };
    const std::vector<float> finite = {1, 2, 3, 4, 5, 6, 7, 8};
    const std::vector<float> nan(8, NAN), inf(8, INFINITY);
    const std::string a = model("a.gguf", {finite, finite, nan});
    const std::string b = model("b.gguf", {nan, inf, nan});  // x: NaN, y: +Inf, z: NaN on both sides
    const CliResult r = run_cli("diff " + quote(a) + " " + quote(b) + " --json");
    REQUIRE(r.status == 0);
    const json j = json::parse(r.out);
    CHECK(j["summary"] == json({{"identical", 1},
                                {"different", 0},
                                {"non_finite", 2},
                                {"only_a", 0},
                                {"only_b", 0},
                                {"incomparable", 0}}));
    const json& x = j["tensors"][0];
    CHECK(x["verdict"] == "non_finite");
    CHECK(x["metrics"]["nmse"] == 0);
    CHECK(x["metrics"]["n_nonfinite_diff"] == 8);
    CHECK(x["hint"] ==
          "8 of 8 values are NaN or Inf on one side and not the same on the other (A has 0 NaN and 0 "
          "Inf, B 8 NaN and 0 Inf)");
    CHECK(j["tensors"][1]["verdict"] == "non_finite");
    CHECK(j["tensors"][2]["verdict"] == "identical");
    CHECK(j["tensors"][2]["metrics"]["n_nonfinite_diff"] == 0);

    CHECK(run_cli("diff " + quote(a) + " " + quote(b) + " --max-nmse 0.001").status == 4);
    CHECK(run_cli("diff " + quote(a) + " " + quote(b) + " --max-nmse 0.001 --tensors y").status == 4);
    CHECK(run_cli("diff " + quote(a) + " " + quote(b) + " --max-nmse 0.001 --tensors z").status == 0);
    const CliResult human = run_cli("diff " + quote(a) + " " + quote(b));
    CHECK(human.out.find("1 identical, 0 different, 2 non-finite, 0 only in A") != std::string::npos);
    CHECK(human.out.find("\nnon_finite ") != std::string::npos);
}
