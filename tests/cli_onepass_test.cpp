// SPDX-License-Identifier: MIT
// `weightstream quantize CHECKPOINT OUT` (the one pass) against the two steps it replaces, through the real binary:
// `convert CHECKPOINT tmp.gguf --dtype F` (F: --outtype auto's choice) then `quantize tmp.gguf OUT`, compared by
// sha256 of the files: the three reference checkpoints of ../shared/testdata/convert (llama with permuted Q/K, gemma
// with its + 1, phi3 with fused tensors; F16, 64 wide) and generated 256-wide checkpoints (so the k-quants run
// without fallbacks, on whole heads of the permuted Q/K) stored as BF16 and F32; recipes with an imatrix and with
// --tensor-type / --pure / --output-tensor-type; and the checkpoints it refuses before writing anything.
#include <catch2/catch.hpp>
#include <cstdio>
#include <cstring>
#include <map>
#include <nlohmann/json.hpp>

#include "support/compare_fixtures.h"
#include "support/run_cli.h"

using nlohmann::json;
using namespace ws_test;

namespace {

CliResult ok_cli(const std::string& args) {
    const CliResult r = run_cli(args);
    INFO("weightstream " << args << "\n" << r.err);
    REQUIRE(r.status == 0);
    return r;
}

std::string file_sha256(const std::string& path) {
    const std::vector<uint8_t> b = read_file(path);
    return sha256_hex(b.data(), b.size());
}

bool exists(const std::string& path) {
    return access(path.c_str(), F_OK) == 0;
}

// The one pass over `checkpoint` (a folder or a file in it) and the two steps over `model` (its model file) with
// the same quantize options `args`, through --dtype `dtype`: the same bytes. Returns the one pass's file.
std::string check_one_pass(const TempDir& tmp, const std::string& checkpoint, const std::string& model,
                           const std::string& dtype, const std::string& args, const std::string& tag) {
    INFO(checkpoint << " " << args);
    const std::string mid = tmp.file(tag + "-mid.gguf"), two = tmp.file(tag + "-two.gguf");
    const std::string one = tmp.file(tag + "-one.gguf");
    ok_cli("convert " + quote(model) + " " + quote(mid) + " --dtype " + dtype);
    ok_cli("quantize " + quote(mid) + " " + quote(two) + " " + args);
    ok_cli("quantize " + quote(checkpoint) + " " + quote(one) + " " + args);
    CHECK(file_sha256(one) == file_sha256(two));
    // Parts of a window are whole rows (whole heads): any number of threads writes the same bytes.
    const std::string threaded = tmp.file(tag + "-one-t3.gguf");
    ok_cli("quantize " + quote(checkpoint) + " " + quote(threaded) + " " + args + " --threads 3");
    CHECK(file_sha256(threaded) == file_sha256(two));
    return one;
}

// A legacy .dat imatrix with one entry per (name, n_per_row), values varying along the row.
std::vector<uint8_t> legacy_imatrix(const std::vector<std::pair<std::string, int>>& entries) {
    std::vector<uint8_t> b;
    auto i32 = [&](int32_t v) {
        for (int i = 0; i < 4; ++i) b.push_back(static_cast<uint8_t>(static_cast<uint32_t>(v) >> (8 * i)));
    };
    i32(static_cast<int32_t>(entries.size()));
    for (const auto& [name, n] : entries) {
        i32(static_cast<int32_t>(name.size()));
        b.insert(b.end(), name.begin(), name.end());
        i32(10);
        i32(n);
        for (int k = 0; k < n; ++k) {
            const float v = 0.5f + static_cast<float>((k * 7) % 11);
            uint32_t u;
            std::memcpy(&u, &v, 4);
            i32(static_cast<int32_t>(u));
        }
    }
    i32(10);
    i32(5);
    b.insert(b.end(), {'c', 'a', 'l', 'i', 'b'});
    return b;
}

// Every weight matrix of a llama checkpoint of `f`'s sizes, as llama-imatrix names them.
std::vector<std::pair<std::string, int>> imatrix_entries(const Family& f) {
    std::vector<std::pair<std::string, int>> e;
    for (int64_t l = 0; l < f.n_layer; ++l) {
        const std::string b = "blk." + std::to_string(l) + ".";
        for (const char* n : {"attn_q", "attn_k", "attn_v", "attn_output", "ffn_gate", "ffn_up"}) {
            e.push_back({b + n + ".weight", static_cast<int>(f.n_embd)});
        }
        e.push_back({b + "ffn_down.weight", static_cast<int>(f.n_ff)});
    }
    return e;
}

// A generated checkpoint folder: model.safetensors stored as `dtype` and config.json.
struct Checkpoint {
    TempDir dir;
    Family family;
    std::string folder;

    // shards: model.safetensors.index.json and two shards instead of model.safetensors.
    Checkpoint(const std::string& name, ws::DType dtype, int64_t n_embd, int64_t n_ff, bool shards = false) {
        family.name = name;
        family.n_embd = n_embd;
        family.n_ff = n_ff;
        family.n_head = 4;
        family.n_head_kv = 2;
        family.n_vocab = 320;
        std::vector<HfTensor> hf = make_checkpoint(family);
        for (HfTensor& t : hf) t.dtype = dtype;  // BF16 values: exact in F32 too
        folder = dir.file("Wide-" + name);
        REQUIRE(system(("mkdir -p " + quote(folder)).c_str()) == 0);
        if (shards) {
            const std::vector<HfTensor> s1(hf.begin(), hf.begin() + static_cast<long>(hf.size() / 2));
            const std::vector<HfTensor> s2(hf.begin() + static_cast<long>(hf.size() / 2), hf.end());
            write_file(folder + "/model-00001-of-00002.safetensors", write_safetensors(s1));
            write_file(folder + "/model-00002-of-00002.safetensors", write_safetensors(s2));
            json weight_map = json::object();
            for (const HfTensor& t : s1) weight_map[t.name] = "model-00001-of-00002.safetensors";
            for (const HfTensor& t : s2) weight_map[t.name] = "model-00002-of-00002.safetensors";
            const std::string index = json({{"metadata", json::object()}, {"weight_map", weight_map}}).dump();
            write_file(folder + "/model.safetensors.index.json", std::vector<uint8_t>(index.begin(), index.end()));
        } else {
            write_file(folder + "/model.safetensors", write_safetensors(hf));
        }
        const json config = {{"architectures", {"X"}},
                             {"model_type", name},
                             {"hidden_size", family.n_embd},
                             {"intermediate_size", family.n_ff},
                             {"num_hidden_layers", family.n_layer},
                             {"num_attention_heads", family.n_head},
                             {"num_key_value_heads", family.n_head_kv},
                             {"max_position_embeddings", 2048},
                             {"rms_norm_eps", 1e-5},
                             {"rope_theta", 10000.0},
                             {"vocab_size", family.n_vocab}};
        const std::string text = config.dump();
        write_file(folder + "/config.json", std::vector<uint8_t>(text.begin(), text.end()));
    }
};

}  // namespace

TEST_CASE("one-pass quantize of the reference checkpoints equals convert --dtype f16 then quantize") {
    const std::string root = std::string(WS_SHARED_TESTDATA) + "/convert/";
    if (!exists(root + "tiny-llama-spm/model.safetensors")) {
        WARN("../shared/testdata/convert is not there: skipped");
        return;
    }
    TempDir tmp;
    for (const char* name : {"tiny-llama-spm", "tiny-gemma", "tiny-phi3"}) {
        const std::string folder = root + name;
        for (const char* type : {"Q4_K_M", "Q8_0", "Q6_K", "IQ4_XS"}) {
            // The checkpoints are F16: --outtype auto converts to F16. The folder, its model file, both work.
            check_one_pass(tmp, std::string(type) == std::string("Q8_0") ? folder + "/model.safetensors" : folder,
                           folder + "/model.safetensors", "f16", std::string("--type ") + type,
                           std::string(name) + "-" + type);
        }
        // Options of llama-quantize: per-tensor types (a permuted Q kept F16 as the conversion writes it), the
        // output's type, --pure.
        check_one_pass(tmp, folder, folder + "/model.safetensors", "f16",
                       "--type Q5_K_M --tensor-type attn_q=f16 --tensor-type ffn_down=q8_0 --output-tensor-type q4_0",
                       std::string(name) + "-overrides");
        check_one_pass(tmp, folder, folder + "/model.safetensors", "f16", "--type Q4_0 --pure --leave-output-tensor",
                       std::string(name) + "-pure");
    }
}

TEST_CASE("one-pass quantize of 256-wide checkpoints (BF16 and F32): k-quants on whole heads, with an imatrix") {
    TempDir tmp;
    const std::string imatrix = tmp.file("wide.imatrix.dat");
    for (ws::DType dtype : {ws::DType::BF16, ws::DType::F32}) {
        Checkpoint c("llama", dtype, 256, 512);
        write_file(imatrix, legacy_imatrix(imatrix_entries(c.family)));
        const std::string model = c.folder + "/model.safetensors";
        const std::string tag = std::string("wide-") + ws::dtype_name(dtype);
        // --outtype auto: BF16 for both (F16 only from an F16 first tensor).
        const std::string one = check_one_pass(tmp, c.folder, model, "bf16", "--type Q4_K_M", tag + "-q4km");
        // Real k-quants: the matrices are Q4_K / Q6_K, no fallback.
        const json q = json::parse(
            ok_cli("quantize " + quote(c.folder) + " " + quote(tmp.file("j.gguf")) + " --type Q4_K_M --json").out);
        CHECK(q["totals"]["fallbacks"] == 0);
        std::map<std::string, std::string> types;
        for (const json& t : q["tensors"]) types[t["name"].get<std::string>()] = t["dtype"].get<std::string>();
        CHECK(types.at("blk.0.attn_q.weight") == "Q4_K");
        CHECK(types.at("blk.0.attn_k.weight") == "Q4_K");
        CHECK(types.at("blk.0.ffn_down.weight") == "Q4_K");  // use_more_bits(): the last of two layers only
        CHECK(types.at("blk.1.ffn_down.weight") == "Q6_K");
        CHECK(types.at("output.weight") == "Q6_K");
        CHECK(types.at("blk.0.attn_norm.weight") == "F32");
        CHECK(q["tensors"][0]["source_dtype"] == "BF16");  // what the quantization reads: the converted file's type
        check_one_pass(tmp, c.folder, model, "bf16", "--type IQ4_XS --imatrix " + quote(imatrix), tag + "-iq4xs-im");
        check_one_pass(tmp, c.folder, model, "bf16", "--type Q6_K", tag + "-q6k");
        // A permuted Q copied (BF16, as the conversion writes it) and a permuted K quantized by an override.
        check_one_pass(tmp, c.folder, model, "bf16",
                       "--type Q8_0 --tensor-type attn_q=bf16 --tensor-type attn_k=q5_k --output-tensor-type q6_k",
                       tag + "-overrides");
        (void)one;
    }
    // Gemma: the norms' + 1 on the way (F32 in the output, copied through the conversion's rows).
    Checkpoint g("gemma", ws::DType::BF16, 256, 512);
    check_one_pass(tmp, g.folder, g.folder + "/model.safetensors", "bf16", "--type Q4_K_S", "wide-gemma");
}

TEST_CASE("one-pass quantize of a sharded checkpoint (its folder or its index) equals convert then quantize") {
    TempDir tmp;
    Checkpoint c("llama", ws::DType::BF16, 256, 512, true);
    const std::string index = c.folder + "/model.safetensors.index.json";
    check_one_pass(tmp, c.folder, index, "bf16", "--type Q4_K_M", "sharded-folder");
    check_one_pass(tmp, index, index, "bf16", "--type Q5_K_S", "sharded-index");
}

TEST_CASE("one-pass quantize refuses a checkpoint without config.json or of an unknown architecture, writing nothing") {
    TempDir tmp;
    Checkpoint c("llama", ws::DType::BF16, 64, 128);
    const std::string out = tmp.file("out.gguf");

    REQUIRE(std::remove((c.folder + "/config.json").c_str()) == 0);
    CliResult r = run_cli("quantize " + quote(c.folder) + " " + quote(out) + " --type Q8_0");
    CHECK(r.status == 1);
    CHECK(r.err.find("config.json: missing: a Hugging Face checkpoint is quantized through its conversion") !=
          std::string::npos);
    CHECK(!exists(out));

    const std::string config = R"({"architectures": ["FancyForCausalLM"], "model_type": "fancy"})";
    write_file(c.folder + "/config.json", std::vector<uint8_t>(config.begin(), config.end()));
    r = run_cli("quantize " + quote(c.folder + "/model.safetensors") + " " + quote(out) + " --type Q8_0");
    CHECK(r.status == 1);
    CHECK(r.err.find("config.json: model_type 'fancy': not an architecture this converter knows") != std::string::npos);
    CHECK(!exists(out));

    // A folder without a model file.
    r = run_cli("quantize " + quote(tmp.file("")) + " " + quote(out) + " --type Q8_0");
    CHECK(r.status == 3);
    CHECK(r.err.find("a folder without model.safetensors.index.json or model.safetensors") != std::string::npos);
    CHECK(!exists(out));
}
