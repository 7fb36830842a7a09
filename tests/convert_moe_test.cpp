// SPDX-License-Identifier: MIT
// Mixture-of-Experts checkpoints (mixtral through the llama rules, qwen2-moe, qwen3-moe) converted as
// convert_hf_to_gguf.py converts them: against its own files in tests/data/convert_moe/ref (the tensors -- names,
// order, types, shapes, bytes -- and the architecture keys; the tokenizer is not compared, see the README there),
// through the real binary (qwen2-moe's experts split across two shards) and as a job run in-process (each step reads
// a window of one expert, the same bytes for any number of parts); one-pass quantize equal to convert then quantize;
// `diff` pairing each expert with its slice of the stacked tensor; qwen3-moe against today's converter's rules; and the
// errors: a missing expert, an expert index beyond the count, experts of different shapes or types, no expert count.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cstring>
#include <functional>
#include <map>
#include <set>

#include "support/parse_model.h"
#include "support/run_cli.h"
#include "support/test_util.h"
#include "weightstream/convert_job.h"
#include "weightstream/hf_names.h"
#include "weightstream/safetensors_writer.h"

using nlohmann::json;
using namespace ws_test;

namespace {

std::string moe(const std::string& rel) {
    return data_path("convert_moe/" + rel);
}

CliResult ok_cli(const std::string& args) {
    const CliResult r = run_cli(args);
    INFO("weightstream " << args << "\n" << r.err);
    REQUIRE(r.status == 0);
    return r;
}

ws::HfConfig config_of(const std::string& text) {
    ws::Result<ws::HfConfig> c = ws::parse_hf_config(reinterpret_cast<const uint8_t*>(text.data()), text.size());
    REQUIRE(c.ok());
    return std::move(c).value();
}

ws::HfConfig config_file(const std::string& path) {
    const std::vector<uint8_t> bytes = read_file(path);
    return config_of(std::string(bytes.begin(), bytes.end()));
}

// The keys the architecture owns: general.architecture and ARCH.*, in file order.
std::vector<const ws::MetadataEntry*> arch_keys(const ws::ModelInfo& m) {
    const ws::MetadataEntry* a = m.find("general.architecture");
    REQUIRE(a != nullptr);
    std::vector<const ws::MetadataEntry*> out;
    for (const ws::MetadataEntry& e : m.metadata) {
        if (e.key == "general.architecture" || e.key.rfind(a->value.str + ".", 0) == 0) out.push_back(&e);
    }
    return out;
}

// `ours` holds `ref`'s tensors in its order with its types, shapes and bytes.
void same_tensors(const std::vector<uint8_t>& ours_file, const std::vector<uint8_t>& ref_file) {
    const ws::ModelInfo ours = parse_model_bytes(ours_file), ref = parse_model_bytes(ref_file);
    REQUIRE(ours.tensors.size() == ref.tensors.size());
    for (size_t k = 0; k < ref.tensors.size(); ++k) {
        const ws::TensorInfo &t = ours.tensors[k], &r = ref.tensors[k];
        INFO(k << ": " << r.name);
        REQUIRE(t.name == r.name);
        CHECK(t.dtype == r.dtype);
        CHECK(t.shape() == r.shape());
        REQUIRE(t.nbytes == r.nbytes);
        CHECK(std::memcmp(ours_file.data() + t.offset, ref_file.data() + r.offset, size_t(r.nbytes)) == 0);
    }
}

// The architecture keys of `ours` are `ref`'s (type and value), in its order but for `moved`.
void same_arch_keys(const ws::ModelInfo& ours, const ws::ModelInfo& ref, const std::string& moved = "") {
    std::vector<const ws::MetadataEntry*> a = arch_keys(ours), b = arch_keys(ref);
    REQUIRE(a.size() == b.size());
    std::map<std::string, const ws::MetadataEntry*> by_key;
    for (const ws::MetadataEntry* e : a) by_key[e->key] = e;
    for (const ws::MetadataEntry* e : b) {
        INFO(e->key);
        REQUIRE(by_key.count(e->key) == 1);
        CHECK(by_key[e->key]->value.type == e->value.type);
        CHECK(by_key[e->key]->value.bits == e->value.bits);
        CHECK(by_key[e->key]->value.str == e->value.str);
    }
    auto without = [&](std::vector<const ws::MetadataEntry*> v) {
        std::vector<std::string> keys;
        for (const ws::MetadataEntry* e : v) {
            if (e->key != moved) keys.push_back(e->key);
        }
        return keys;
    };
    CHECK(without(a) == without(b));
}

uint64_t u32_key(const ws::ModelInfo& m, const std::string& key) {
    const ws::MetadataEntry* e = m.find(key);
    REQUIRE(e != nullptr);
    CHECK(e->value.type == ws::ValueType::kUint32);
    return e->value.bits;
}

}  // namespace

TEST_CASE("hf_to_gguf_name maps experts to the stacked tensors, the router and the shared expert") {
    std::string g;
    ws::Transform t;
    ws::HfExpert e;
    REQUIRE(ws::hf_to_gguf_name("llama", "model.layers.3.block_sparse_moe.experts.7.w2.weight", &g, &t, &e));
    CHECK((g == "blk.3.ffn_down_exps.weight" && t == ws::Transform::kNone && e.index == 7 && e.order == 1 &&
           e.kinds == 3));
    REQUIRE(ws::hf_to_gguf_name("llama", "model.layers.0.block_sparse_moe.experts.0.w1.weight", &g, &t, &e));
    CHECK((g == "blk.0.ffn_gate_exps.weight" && e.order == 0));
    REQUIRE(ws::hf_to_gguf_name("llama", "model.layers.0.block_sparse_moe.experts.12.w3.weight", &g, &t, &e));
    CHECK((g == "blk.0.ffn_up_exps.weight" && e.index == 12 && e.order == 2));
    REQUIRE(ws::hf_to_gguf_name("llama", "model.layers.1.block_sparse_moe.gate.weight", &g, &t, &e));
    CHECK(g == "blk.1.ffn_gate_inp.weight");
    REQUIRE(ws::hf_to_gguf_name("qwen2moe", "model.layers.2.mlp.experts.59.down_proj.weight", &g, &t, &e));
    CHECK((g == "blk.2.ffn_down_exps.weight" && e.index == 59 && e.order == 0));
    REQUIRE(ws::hf_to_gguf_name("qwen2moe", "model.layers.2.mlp.experts.0.up_proj.weight", &g, &t, &e));
    CHECK((g == "blk.2.ffn_up_exps.weight" && e.order == 2));
    REQUIRE(ws::hf_to_gguf_name("qwen2moe", "model.layers.2.mlp.shared_expert.down_proj.weight", &g, &t, &e));
    CHECK(g == "blk.2.ffn_down_shexp.weight");
    REQUIRE(ws::hf_to_gguf_name("qwen2moe", "model.layers.2.mlp.shared_expert_gate.weight", &g, &t, &e));
    CHECK(g == "blk.2.ffn_gate_inp_shexp.weight");
    REQUIRE(ws::hf_to_gguf_name("qwen3moe", "model.layers.0.self_attn.q_norm.weight", &g, &t, &e));
    CHECK(g == "blk.0.attn_q_norm.weight");
    REQUIRE(ws::hf_to_gguf_name("qwen3moe", "model.layers.0.mlp.gate.weight", &g, &t, &e));
    CHECK(g == "blk.0.ffn_gate_inp.weight");
    // qwen3-moe has no shared expert; experts need the caller to take their place; indices as the converter
    // writes them; biases of experts are not stacked.
    CHECK_FALSE(ws::hf_to_gguf_name("qwen3moe", "model.layers.0.mlp.shared_expert.up_proj.weight", &g, &t, &e));
    CHECK_FALSE(ws::hf_to_gguf_name("qwen2moe", "model.layers.0.mlp.experts.1.up_proj.weight", &g, &t));
    CHECK_FALSE(ws::hf_to_gguf_name("qwen2moe", "model.layers.0.mlp.experts.01.up_proj.weight", &g, &t, &e));
    CHECK_FALSE(ws::hf_to_gguf_name("qwen2moe", "model.layers.0.mlp.experts.1.up_proj.bias", &g, &t, &e));
    CHECK_FALSE(ws::hf_to_gguf_name("qwen2moe", "model.layers.0.mlp.experts.1.w1.weight", &g, &t, &e));
    CHECK_FALSE(ws::hf_to_gguf_name("qwen2", "model.layers.0.mlp.experts.1.up_proj.weight", &g, &t, &e));
    CHECK(ws::hf_family("mixtral") == "llama");
    CHECK(ws::hf_family("qwen2_moe") == "qwen2moe");
    CHECK(ws::hf_family("qwen3_moe") == "qwen3moe");
    CHECK(ws::hf_family("qwen3moe") == "qwen3moe");
}

TEST_CASE("convert writes convert_hf_to_gguf.py's tensors and architecture keys for mixtral and sharded qwen2-moe") {
    TempDir dir;
    const std::pair<const char*, const char*> checkpoints[] = {
        {"tiny-mixtral", "tiny-mixtral/model.safetensors"},
        {"tiny-qwen2moe", "tiny-qwen2moe/model.safetensors.index.json"},
    };
    for (const auto& [name, source] : checkpoints) {
        for (const char* outtype : {"f16", "q8_0"}) {
            INFO(name << " " << outtype);
            const std::string out = dir.file(std::string(name) + "-" + outtype + ".gguf");
            ok_cli("convert " + quote(moe(source)) + " " + quote(out) + " --dtype " + outtype);
            const std::vector<uint8_t> ours_file = read_file(out);
            const std::vector<uint8_t> ref_file = read_file(moe(std::string("ref/") + name + "-" + outtype + ".gguf"));
            same_tensors(ours_file, ref_file);
            // The 2025-02 Qwen2MoeModel wrote expert_count after general.file_type; today's TextModel writes it
            // before expert_used_count for every family, as weightstream does.
            const ws::ModelInfo ours = parse_model_bytes(ours_file), ref = parse_model_bytes(ref_file);
            same_arch_keys(ours, ref, std::string(name) == "tiny-qwen2moe" ? "qwen2moe.expert_count" : "");
            if (std::string(name) == "tiny-qwen2moe") {
                CHECK(u32_key(ours, "qwen2moe.expert_count") == 4);
                CHECK(u32_key(ours, "qwen2moe.expert_feed_forward_length") == 32);
                CHECK(u32_key(ours, "qwen2moe.expert_shared_feed_forward_length") == 96);
                std::vector<std::string> keys;
                for (const ws::MetadataEntry* e : arch_keys(ours)) keys.push_back(e->key);
                const auto at = std::find(keys.begin(), keys.end(), "qwen2moe.expert_count");
                REQUIRE(at + 1 < keys.end());
                CHECK(at[1] == "qwen2moe.expert_used_count");
            } else {
                CHECK(u32_key(ours, "llama.expert_count") == 4);
                CHECK(u32_key(ours, "llama.expert_used_count") == 2);
            }
            // diff pairs every expert with its slice of the stacked tensor.
            const CliResult d = ok_cli("diff " + quote(moe(source)) + " " + quote(out) + " --json");
            const json report = json::parse(d.out);
            CHECK(report["summary"]["incomparable"] == 0);
            CHECK(report["summary"]["only_a"] == 0);
            CHECK(report["summary"]["only_b"] == 0);
            size_t experts = 0;
            for (const json& row : report["tensors"]) {
                if (row["transform"] == "expert") ++experts;
                // F16 stays F16 (BF16 is rounded to F16: not identical, within rounding).
                if (std::string(name) == "tiny-mixtral" && std::string(outtype) == "f16") {
                    CHECK(row["verdict"] == "identical");
                }
            }
            CHECK(experts == 2 * 4 * 3);
        }
    }
}

TEST_CASE("convert --dtype q4_0 [--imatrix] stacks experts as quantize --pure quantizes the converter's f16 file") {
    // One pass (checkpoint -> Q4_0) against two (the converter's f16 file, then weightstream quantize, which writes
    // llama-quantize's bytes: tests/cli_quantize_test.cpp): the stacked tensors agree byte for byte.
    TempDir dir;
    const std::pair<const char*, const char*> checkpoints[] = {
        {"tiny-mixtral", "tiny-mixtral/model.safetensors"},
        {"tiny-qwen2moe", "tiny-qwen2moe/model.safetensors.index.json"},
    };
    // An importance matrix (legacy .dat) for tiny-mixtral's stacked tensors: one row per expert, each different,
    // so that an expert quantized with another's row comes out different.
    std::vector<uint8_t> dat;
    auto i32 = [&](int32_t v) {
        dat.insert(dat.end(), reinterpret_cast<uint8_t*>(&v), reinterpret_cast<uint8_t*>(&v) + 4);
    };
    i32(6);
    for (int b = 0; b < 2; ++b) {
        for (const char* kind : {"gate", "down", "up"}) {
            const std::string name = "blk." + std::to_string(b) + ".ffn_" + kind + "_exps.weight";
            const int32_t per_row = std::string(kind) == "down" ? 128 : 64;
            i32(int32_t(name.size()));
            dat.insert(dat.end(), name.begin(), name.end());
            i32(1);
            i32(per_row * 4);
            for (int32_t k = 0; k < per_row * 4; ++k) {
                const float v = 0.01f + float((k * 7919 + b * 31) % 997) * (1.0f + float(k / per_row));
                dat.insert(dat.end(), reinterpret_cast<const uint8_t*>(&v), reinterpret_cast<const uint8_t*>(&v) + 4);
            }
        }
    }
    write_file(dir.file("experts.dat"), dat);
    for (const auto& [name, source] : checkpoints) {
        for (const std::string& imatrix : {std::string(), " --imatrix " + quote(dir.file("experts.dat"))}) {
            if (!imatrix.empty() && std::string(name) != "tiny-mixtral") continue;
            INFO(name << imatrix);
            const std::string one = dir.file("one.gguf"), two = dir.file("two.gguf");
            ok_cli("convert " + quote(moe(source)) + " " + quote(one) + " --dtype q4_0" + imatrix);
            ok_cli("quantize " + quote(moe(std::string("ref/") + name + "-f16.gguf")) + " " + quote(two) +
                   " --type Q4_0 --pure" + imatrix);
            const std::vector<uint8_t> a_file = read_file(one), b_file = read_file(two);
            const ws::ModelInfo a = parse_model_bytes(a_file), b = parse_model_bytes(b_file);
            std::map<std::string, const ws::TensorInfo*> by_name;
            for (const ws::TensorInfo& t : b.tensors) by_name[t.name] = &t;
            size_t stacked = 0;
            for (const ws::TensorInfo& t : a.tensors) {
                if (t.name.find("_exps.") == std::string::npos) continue;
                INFO(t.name);
                ++stacked;
                REQUIRE(by_name.count(t.name) == 1);
                const ws::TensorInfo& u = *by_name[t.name];
                CHECK(t.dtype == ws::DType::Q4_0);
                CHECK(u.dtype == ws::DType::Q4_0);
                REQUIRE(t.nbytes == u.nbytes);
                CHECK(std::memcmp(a_file.data() + t.offset, b_file.data() + u.offset, size_t(t.nbytes)) == 0);
            }
            CHECK(stacked == 6);
        }
    }
}

TEST_CASE("quantize CHECKPOINT in one pass equals convert then quantize for the MoE checkpoints") {
    // The one-pass quantize reads each stacked tensor's rows through the conversion (ConvertJob::input_rows): from
    // expert E's tensor for matrix E, in whichever shard holds it.
    TempDir dir;
    for (const char* source : {"tiny-mixtral/model.safetensors", "tiny-qwen2moe/model.safetensors.index.json"}) {
        for (const char* type : {"Q8_0", "Q4_0 --pure", "Q4_K_M"}) {
            INFO(source << " " << type);
            const std::string one = dir.file("one.gguf"), mid = dir.file("mid.gguf"), two = dir.file("two.gguf");
            ok_cli("quantize " + quote(moe(source)) + " " + quote(one) + " --type " + type);
            ok_cli("convert " + quote(moe(source)) + " " + quote(mid));
            ok_cli("quantize " + quote(mid) + " " + quote(two) + " --type " + type);
            CHECK(read_file(one) == read_file(two));
        }
    }
}

TEST_CASE("ConvertJob reads a stacked tensor a window of one expert at a time, the same bytes for any parts") {
    const std::vector<uint8_t> file = read_file(moe("tiny-mixtral/model.safetensors"));
    const ws::ModelInfo in = parse_model_bytes(file);
    const ws::HfConfig config = config_file(moe("tiny-mixtral/config.json"));
    for (ws::DType dtype : {ws::DType::kUnknown, ws::DType::Q8_0}) {
        std::vector<uint8_t> first;
        for (uint32_t parts : {1u, 4u}) {
            INFO(ws::dtype_name(dtype) << " in " << parts << " parts");
            ws::ConvertOptions options;
            options.hf = &config;
            options.dtype = dtype;
            ws::Result<std::unique_ptr<ws::ConvertJob>> made = ws::ConvertJob::make(in, options);
            REQUIRE(made.ok());
            ws::ConvertJob& job = *made.value();
            std::vector<uint8_t> bytes;
            ws::JobStep step;
            std::set<int64_t> expert_steps;
            while (job.next(&step)) {
                std::vector<ws::ByteSpan> spans;
                for (const ws::ByteRange& r : step.inputs) spans.push_back({file.data() + r.offset, r.size});
                if (step.tensor >= 0 && in.tensors[size_t(step.tensor)].name.find(".experts.") != std::string::npos) {
                    // The step reads inside the expert it names.
                    const ws::TensorInfo& t = in.tensors[size_t(step.tensor)];
                    REQUIRE(step.inputs.size() == 1);
                    CHECK(step.inputs[0].offset >= t.offset);
                    CHECK(step.inputs[0].offset + step.inputs[0].size <= t.offset + t.nbytes);
                    expert_steps.insert(step.tensor);
                }
                const uint32_t k = std::min(parts, std::max<uint32_t>(1, step.max_parts));
                for (uint32_t i = k; i-- > 0;) job.run(spans.data(), i, k);
                ws::ByteSpan out;
                REQUIRE(job.complete(&out).ok());
                bytes.insert(bytes.end(), out.data, out.data + out.size);
            }
            CHECK(expert_steps.size() == 2 * 4 * 3);
            CHECK(job.total_work() == [&] {
                uint64_t n = 0;
                for (const ws::TensorInfo& t : in.tensors) n += t.nbytes;
                return n;
            }());
            if (first.empty()) first = bytes;
            CHECK(bytes == first);
            if (dtype == ws::DType::Q8_0) same_tensors(bytes, read_file(moe("ref/tiny-mixtral-q8_0.gguf")));
        }
    }
}

TEST_CASE("qwen3-moe converts by today's converter's rules: stacked experts, q/k norms, expert keys") {
    TempDir dir;
    const std::string out = dir.file("qwen3moe.gguf");
    const std::string source = moe("tiny-qwen3moe/model.safetensors");
    ok_cli("convert " + quote(source) + " " + quote(out));
    const std::vector<uint8_t> hf_file = read_file(source), out_file = read_file(out);
    const ws::ModelInfo hf = parse_model_bytes(hf_file), ours = parse_model_bytes(out_file);
    // Qwen3MoeModel (a Qwen2MoeModel): TextModel's keys, then the expert feed-forward length.
    std::vector<std::string> keys;
    for (const ws::MetadataEntry* e : arch_keys(ours)) keys.push_back(e->key);
    const std::vector<std::string> expected_keys = {
        "general.architecture",
        "qwen3moe.block_count",
        "qwen3moe.context_length",
        "qwen3moe.embedding_length",
        "qwen3moe.feed_forward_length",
        "qwen3moe.attention.head_count",
        "qwen3moe.attention.head_count_kv",
        "qwen3moe.rope.freq_base",
        "qwen3moe.attention.layer_norm_rms_epsilon",
        "qwen3moe.expert_count",
        "qwen3moe.expert_used_count",
        "qwen3moe.attention.key_length",
        "qwen3moe.attention.value_length",
        "qwen3moe.expert_feed_forward_length",
    };
    CHECK(keys == expected_keys);
    CHECK(ours.find("general.architecture")->value.str == "qwen3moe");
    CHECK(u32_key(ours, "qwen3moe.expert_count") == 4);
    CHECK(u32_key(ours, "qwen3moe.expert_used_count") == 2);
    CHECK(u32_key(ours, "qwen3moe.expert_feed_forward_length") == 32);
    CHECK(u32_key(ours, "qwen3moe.attention.key_length") == 16);

    std::vector<std::string> names;
    std::map<std::string, const ws::TensorInfo*> by_name;
    for (const ws::TensorInfo& t : ours.tensors) {
        names.push_back(t.name);
        by_name[t.name] = &t;
    }
    std::vector<std::string> expected = {"token_embd.weight"};
    for (const char* b : {"blk.0.", "blk.1."}) {
        for (const char* m : {"attn_norm", "attn_q", "attn_k", "attn_v", "attn_q_norm", "attn_k_norm", "attn_output",
                              "ffn_norm", "ffn_gate_inp", "ffn_down_exps", "ffn_gate_exps", "ffn_up_exps"}) {
            expected.push_back(std::string(b) + m + ".weight");
        }
    }
    expected.push_back("output_norm.weight");
    expected.push_back("output.weight");
    CHECK(names == expected);
    // ggml order: gate/up {n_embd, n_ff_exp, n_expert}, down {n_ff_exp, n_embd, n_expert}; BF16 kept, the router
    // and the norms F32.
    CHECK(by_name["blk.1.ffn_gate_exps.weight"]->shape() == std::vector<int64_t>{4, 32, 64});
    CHECK(by_name["blk.1.ffn_down_exps.weight"]->shape() == std::vector<int64_t>{4, 64, 32});
    CHECK(by_name["blk.1.ffn_up_exps.weight"]->dtype == ws::DType::BF16);
    CHECK(by_name["blk.1.ffn_gate_inp.weight"]->dtype == ws::DType::F32);
    CHECK(by_name["blk.1.attn_k_norm.weight"]->dtype == ws::DType::F32);
    // Slice E of a stacked tensor is expert E's stored bytes.
    for (const ws::TensorInfo& t : hf.tensors) {
        std::string g;
        ws::Transform tr;
        ws::HfExpert e;
        if (!ws::hf_to_gguf_name("qwen3moe", t.name, &g, &tr, &e) || e.kinds == 0) continue;
        INFO(t.name);
        const ws::TensorInfo& s = *by_name.at(g);
        CHECK(std::memcmp(out_file.data() + s.offset + e.index * t.nbytes, hf_file.data() + t.offset,
                          size_t(t.nbytes)) == 0);
    }
    const json report = json::parse(ok_cli("diff " + quote(source) + " " + quote(out) + " --json").out);
    CHECK(report["mapping"] == "hf-to-gguf:qwen3moe");
    CHECK(report["summary"]["identical"] == hf.tensors.size());
    // The GGUF as A: its rows in its order, a stacked tensor's experts after it.
    const json reverse = json::parse(ok_cli("diff " + quote(out) + " " + quote(source) + " --json").out);
    CHECK(reverse["summary"]["identical"] == hf.tensors.size());
    CHECK(reverse["summary"]["only_a"] == 0);
    CHECK(reverse["summary"]["only_b"] == 0);
}

namespace {

// tiny-mixtral's model.safetensors with `edit` applied to its tensors (infos and data).
struct Edited {
    std::vector<uint8_t> file;
    ws::ModelInfo in;
};

Edited edited_mixtral(
    const std::function<void(std::vector<ws::TensorInfo>*, std::vector<std::vector<uint8_t>>*)>& edit) {
    const std::vector<uint8_t> file = read_file(moe("tiny-mixtral/model.safetensors"));
    const ws::ModelInfo in = parse_model_bytes(file);
    std::vector<ws::TensorInfo> infos = in.tensors;
    std::vector<std::vector<uint8_t>> data;
    for (const ws::TensorInfo& t : in.tensors) {
        data.emplace_back(file.begin() + long(t.offset), file.begin() + long(t.offset + t.nbytes));
    }
    edit(&infos, &data);
    ws::Result<std::vector<uint8_t>> written = ws::safetensors_write({}, infos, data);
    REQUIRE(written.ok());
    Edited out;
    out.file = written.value();
    out.in = parse_model_bytes(out.file);
    return out;
}

size_t index_of(const std::vector<ws::TensorInfo>& infos, const std::string& name) {
    for (size_t k = 0; k < infos.size(); ++k) {
        if (infos[k].name == name) return k;
    }
    FAIL("no tensor " << name);
    return 0;
}

}  // namespace

TEST_CASE("convert refuses a missing expert, an index beyond the count, experts that differ, no expert count") {
    const ws::HfConfig config = config_file(moe("tiny-mixtral/config.json"));
    const std::string l1 = "model.layers.1.block_sparse_moe.experts.";
    struct Case {
        const char* what;
        std::function<void(std::vector<ws::TensorInfo>*, std::vector<std::vector<uint8_t>>*)> edit;
        ws::Error code;
        const char* where;
        std::string tensor;  // the tensor the refusal names
        std::string why;
    };
    const Case cases[] = {
        {"a missing expert",
         [&](auto* infos, auto* data) {
             const size_t k = index_of(*infos, l1 + "3.w2.weight");
             infos->erase(infos->begin() + long(k));
             data->erase(data->begin() + long(k));
         },
         ws::Error::kBadShape, "tensor.expert", l1 + "2.w2.weight",
         "blk.1.ffn_down_exps.weight: expert 3 of 4 is missing from the checkpoint"},
        {"a block without one kind of experts",
         [&](auto* infos, auto* data) {
             for (size_t k = infos->size(); k-- > 0;) {
                 const std::string& n = (*infos)[k].name;
                 if (n.rfind("model.layers.0.block_sparse_moe.experts.", 0) == 0 &&
                     n.find(".w3.") != std::string::npos) {
                     infos->erase(infos->begin() + long(k));
                     data->erase(data->begin() + long(k));
                 }
             }
         },
         ws::Error::kBadShape, "tensor.expert", "model.layers.0.block_sparse_moe.experts.0.w1.weight",
         "blk.0 has experts of 2 kinds (blk.0.ffn_gate_exps.weight, ...) where the converter stacks 3"},
        {"an expert index beyond the count",
         [&](auto* infos, auto*) { (*infos)[index_of(*infos, l1 + "3.w1.weight")].name = l1 + "4.w1.weight"; },
         ws::Error::kBadShape, "tensor.expert", l1 + "4.w1.weight",
         "tensor " + l1 + "4.w1.weight: expert 4 is beyond config.json's expert count (4)"},
        {"experts of different shapes",
         [&](auto* infos, auto* data) {
             const size_t k = index_of(*infos, l1 + "1.w3.weight");
             (*infos)[k].ne[1] = 64;  // [64, 64] where the others are [128, 64]
             (*infos)[k].n_elements = 64 * 64;
             (*infos)[k].nbytes = 64 * 64 * 2;
             (*data)[k].resize(64 * 64 * 2);
         },
         ws::Error::kBadShape, "tensor.ne", l1 + "1.w3.weight",
         "tensor " + l1 + "1.w3.weight has shape [64, 64] but " + l1 +
             "0.w3.weight has [128, 64]: the experts of blk.1.ffn_up_exps.weight must be of one shape"},
        {"experts of different types",
         [&](auto* infos, auto* data) {
             const size_t k = index_of(*infos, l1 + "2.w1.weight");
             (*infos)[k].dtype = ws::DType::F32;
             (*infos)[k].nbytes *= 2;
             (*data)[k].resize((*data)[k].size() * 2);
         },
         ws::Error::kBadType, "tensor.type", l1 + "2.w1.weight",
         "tensor " + l1 + "2.w1.weight is F32 but " + l1 +
             "0.w1.weight is F16: the experts of blk.1.ffn_gate_exps.weight must be of one type"},
    };
    for (const Case& c : cases) {
        INFO(c.what);
        const Edited e = edited_mixtral(c.edit);
        ws::ConvertOptions options;
        options.hf = &config;
        options.dtype = ws::DType::F16;
        ws::ConvertRefusal refusal;
        ws::Result<ws::ConvertPlan> plan = ws::plan_conversion(e.in, options, &refusal);
        REQUIRE_FALSE(plan.ok());
        CHECK(plan.status().code == c.code);
        CHECK(std::string(plan.status().what) == c.where);
        CHECK(refusal.about == ws::ConvertRefusal::About::kTensor);
        REQUIRE(refusal.tensor >= 0);
        CHECK(e.in.tensors[size_t(refusal.tensor)].name == c.tensor);
        CHECK(plan.status().offset == e.in.tensors[size_t(refusal.tensor)].info_offset);
        CHECK(refusal.why == c.why);
    }
    SECTION("no expert count in config.json") {
        const ws::HfConfig no_count = config_of(R"({"model_type": "mixtral", "num_attention_heads": 4,
                                                    "num_key_value_heads": 2})");
        const Edited e = edited_mixtral([](auto*, auto*) {});
        ws::ConvertOptions options;
        options.hf = &no_count;
        ws::ConvertRefusal refusal;
        ws::Result<ws::ConvertPlan> plan = ws::plan_conversion(e.in, options, &refusal);
        REQUIRE_FALSE(plan.ok());
        CHECK(plan.status().code == ws::Error::kBadKey);
        CHECK(std::string(plan.status().what) == "config.num_experts");
        CHECK(refusal.about == ws::ConvertRefusal::About::kConfig);
        CHECK(refusal.why ==
              "config.json has no num_local_experts / num_experts: tensor "
              "model.layers.0.block_sparse_moe.experts.0.w1.weight is an expert of blk.0.ffn_gate_exps.weight");
    }
    SECTION("the CLI says so and writes nothing") {
        TempDir dir;
        const Edited e = edited_mixtral([&](auto* infos, auto* data) {
            const size_t k = index_of(*infos, l1 + "0.w3.weight");
            infos->erase(infos->begin() + long(k));
            data->erase(data->begin() + long(k));
        });
        write_file(dir.file("model.safetensors"), e.file);
        write_file(dir.file("config.json"), read_file(moe("tiny-mixtral/config.json")));
        const CliResult r = run_cli("convert " + quote(dir.file("model.safetensors")) + " " +
                                    quote(dir.file("out.gguf")) + " --dtype q8_0");
        CHECK(r.status == 1);
        CHECK(r.err.find("blk.1.ffn_up_exps.weight: expert 0 of 4 is missing from the checkpoint") !=
              std::string::npos);
        CHECK_FALSE(file_exists(dir.file("out.gguf")));
        CHECK(temporary_files(dir.path).empty());
    }
}

TEST_CASE("diff flags experts the stacked tensor does not hold, and refuses to convert them") {
    TempDir dir;
    // tiny-mixtral cut to 3 experts (config.json too), converted: its stacked tensors hold experts 0-2.
    const Edited three = edited_mixtral([](auto* infos, auto* data) {
        for (size_t k = infos->size(); k-- > 0;) {
            if ((*infos)[k].name.find(".experts.3.") != std::string::npos) {
                infos->erase(infos->begin() + long(k));
                data->erase(data->begin() + long(k));
            }
        }
    });
    const std::vector<uint8_t> config = read_file(moe("tiny-mixtral/config.json"));
    std::string text(config.begin(), config.end());
    const size_t at = text.find("\"num_local_experts\": 4");
    REQUIRE(at != std::string::npos);
    text[at + std::strlen("\"num_local_experts\": ")] = '3';
    write_file(dir.file("model.safetensors"), three.file);
    write_file(dir.file("config.json"), std::vector<uint8_t>(text.begin(), text.end()));
    const std::string out = dir.file("three.gguf");
    ok_cli("convert " + quote(dir.file("model.safetensors")) + " " + quote(out));
    // The 4-expert checkpoint against it: expert 3's six matrices cannot be compared, and say why.
    const json report =
        json::parse(ok_cli("diff " + quote(moe("tiny-mixtral/model.safetensors")) + " " + quote(out) + " --json").out);
    CHECK(report["summary"]["incomparable"] == 6);
    CHECK(report["summary"]["identical"] == 41 - 6);
    for (const json& row : report["tensors"]) {
        if (row["verdict"] != "incomparable") continue;
        CHECK(row["a"].get<std::string>().find(".experts.3.") != std::string::npos);
        CHECK(row["hint"] == "expert 3 is beyond the 3 experts of the stacked tensor");
    }
    // And convert refuses the 4-expert checkpoint with config.json's count of 3.
    write_file(dir.file("model.safetensors"), read_file(moe("tiny-mixtral/model.safetensors")));
    const CliResult r = run_cli("convert " + quote(dir.file("model.safetensors")) + " " + quote(dir.file("x.gguf")));
    CHECK(r.status == 1);
    CHECK(r.err.find("expert 3 is beyond config.json's expert count (3)") != std::string::npos);
    CHECK_FALSE(file_exists(dir.file("x.gguf")));
}
