// SPDX-License-Identifier: MIT
// include/weightstream/hf_checkpoint.h against what llama.cpp's convert_hf_to_gguf.py wrote for the tiny
// checkpoints of ../shared/testdata/convert/ (ref/NAME-TYPE.gguf): the permuted q/k and Gemma's norms + 1 bit for
// bit (whole tensors and head by head), the hyperparameters key for key, and config.json's limits.
#include "weightstream/hf_checkpoint.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstring>
#include <string>
#include <vector>

#include "support/parse_model.h"
#include "support/test_util.h"
#include "weightstream/dequant.h"
#include "weightstream/header_parser.h"

using namespace ws_test;

namespace {

const ws::TensorInfo* find_tensor(const ws::ModelInfo& m, const std::string& name) {
    for (const ws::TensorInfo& t : m.tensors) {
        if (t.name == name) return &t;
    }
    return nullptr;
}

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
    return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

ws::HfConfig config_of(const std::string& dir) {
    const std::vector<uint8_t> bytes = read_file(dir + "/config.json");
    ws::Result<ws::HfConfig> c = ws::parse_hf_config(bytes.data(), bytes.size());
    REQUIRE(c.ok());
    return std::move(c).value();
}

ws::Result<ws::HfConfig> parse_text(const std::string& text) {
    return ws::parse_hf_config(reinterpret_cast<const uint8_t*>(text.data()), text.size());
}

}  // namespace

TEST_CASE("hf_convert_rows writes convert_hf_to_gguf.py's permuted q/k and Gemma's norms + 1, bit for bit") {
    const std::string root = shared_path("convert");
    if (!file_exists(root + "/manifest.json")) {
        WARN("the convert_hf_to_gguf.py reference set is not present");
        return;
    }
    for (const std::string name : {"tiny-llama-spm", "tiny-gemma"}) {
        const ws::HfConfig config = config_of(root + "/" + name);
        const uint64_t n_head_kv = config.n_head_kv > 0 ? config.n_head_kv : config.n_head;
        const std::vector<uint8_t> hf_file = read_file(root + "/" + name + "/model.safetensors");
        const ws::ModelInfo hf = ws_test::parse_model_bytes(hf_file);
        // The F16 checkpoint's converted values: exact in an F32 output and in an F16 one (F16 -> F32 -> F16 keeps
        // every value), so both references hold exactly the transform's result.
        for (const std::string type : {"f32", "f16"}) {
            const std::vector<uint8_t> ref_file = read_file(root + "/ref/" + name + "-" + type + ".gguf");
            const ws::ModelInfo ref = ws_test::parse_model_bytes(ref_file);
            size_t permuted = 0, plus_one = 0;
            for (const ws::TensorInfo& t : hf.tensors) {
                std::string gguf_name;
                ws::Transform transform;
                if (!ws::hf_to_gguf_name(config.family, t.name, &gguf_name, &transform)) continue;
                if (transform == ws::Transform::kNone) continue;
                INFO(name << " " << type << ": " << t.name << " -> " << gguf_name);
                const ws::TensorInfo* g = find_tensor(ref, gguf_name);
                REQUIRE(g);
                const std::vector<float> expected = ws_test::decode_tensor(ref_file, *g);
                const std::vector<float> source = ws_test::decode_tensor(hf_file, t);
                const std::vector<int64_t> shape = t.shape();
                const uint64_t rows = shape.size() > 1 ? static_cast<uint64_t>(shape[0]) : 1;
                const uint64_t cols = static_cast<uint64_t>(t.n_elements) / rows;
                const uint64_t heads = transform == ws::Transform::kPermuteQ   ? static_cast<uint64_t>(config.n_head)
                                       : transform == ws::Transform::kPermuteK ? n_head_kv
                                                                               : 0;
                std::vector<float> whole(source.size());
                REQUIRE(ws::hf_convert_rows(transform, t.dtype, heads, ws::HfRows{rows, 0, rows, cols}, source.data(),
                                            whole.data())
                            .ok());
                CHECK(same_bits(whole, expected));
                if (heads) {
                    // Head by head, as compare and the page read a window of whole heads.
                    const uint64_t hd = ws::hf_head_rows(rows, heads).value();
                    std::vector<float> by_head(source.size());
                    for (uint64_t r = 0; r < rows; r += hd) {
                        REQUIRE(ws::hf_convert_rows(transform, t.dtype, heads, ws::HfRows{rows, r, hd, cols},
                                                    source.data() + r * cols, by_head.data() + r * cols)
                                    .ok());
                    }
                    CHECK(same_bits(by_head, expected));
                    // A window that is not whole heads is refused.
                    CHECK(ws::hf_convert_rows(transform, t.dtype, heads, ws::HfRows{rows, 1, hd, cols}, source.data(),
                                              by_head.data())
                              .code == ws::Error::kBadShape);
                    ++permuted;
                } else {
                    ++plus_one;
                }
            }
            if (name == "tiny-llama-spm") CHECK((permuted == 4 && plus_one == 0));
            if (name == "tiny-gemma") CHECK((permuted == 0 && plus_one == 5));
        }
    }
}

TEST_CASE("hf_hparams leaves out, with a warning, a value its GGUF type cannot hold") {
    auto c = parse_text(
        "{\"model_type\": \"llama\", \"num_hidden_layers\": -1, \"hidden_size\": 4096, \"intermediate_size\": 11008,"
        " \"max_position_embeddings\": 4096, \"num_attention_heads\": 32, \"head_dim\": 4294967296,"
        " \"rope_theta\": 1e39, \"rms_norm_eps\": 1e-60, \"vocab_size\": 18446744073709551615}");
    REQUIRE(c.ok());
    std::vector<std::string> warnings;
    const std::vector<ws::MetadataEntry> kv = ws::hf_hparams(c.value(), &warnings);
    std::vector<std::string> keys;
    for (const ws::MetadataEntry& e : kv) keys.push_back(e.key);
    // Before: block_count said missing, rope.dimension_count 0 (2^32 wrapped), freq_base +Inf, the epsilon 0.
    CHECK(keys == std::vector<std::string>{"general.architecture", "llama.context_length", "llama.embedding_length",
                                           "llama.feed_forward_length", "llama.attention.head_count",
                                           "general.file_type"});
    CHECK(warnings == std::vector<std::string>{
                          "config.json's num_hidden_layers (-1) is not a uint32: llama.block_count not written",
                          "config.json's rope_theta (1e+39) is not a float32: llama.rope.freq_base not written",
                          "config.json's rms_norm_eps (1e-60) is not a float32: "
                          "llama.attention.layer_norm_rms_epsilon not written",
                          "config.json's head_dim (4294967296) is not a uint32: llama.attention.key_length not written",
                          "config.json's head_dim (4294967296) is not a uint32: llama.attention.value_length not "
                          "written",
                          "config.json's vocab_size (18446744073709551615) is not a uint32: llama.vocab_size not "
                          "written",
                          "config.json's head_dim (4294967296) is not a uint32: llama.rope.dimension_count not "
                          "written"});
}

TEST_CASE("hf_hparams writes the hyperparameters convert_hf_to_gguf.py wrote, with their types") {
    const std::string root = shared_path("convert");
    if (!file_exists(root + "/manifest.json")) {
        WARN("the convert_hf_to_gguf.py reference set is not present");
        return;
    }
    for (const std::string name : {"tiny-llama-spm", "tiny-gemma", "tiny-phi3"}) {
        const ws::HfConfig config = config_of(root + "/" + name);
        const ws::ModelInfo ref = ws_test::parse_model_bytes(read_file(root + "/ref/" + name + "-f32.gguf"));
        std::vector<std::string> warnings;
        const std::vector<ws::MetadataEntry> kv = ws::hf_hparams(config, &warnings);
        CHECK(warnings.empty());
        REQUIRE(kv.size() > 5);
        CHECK(kv[0].key == "general.architecture");
        // In the converter's order (general.file_type among them).
        std::vector<std::string> ours, theirs;
        for (const ws::MetadataEntry& e : kv) ours.push_back(e.key);
        for (const ws::MetadataEntry& e : ref.metadata) {
            if (std::find(ours.begin(), ours.end(), e.key) != ours.end()) theirs.push_back(e.key);
        }
        CHECK(ours == theirs);
        for (const ws::MetadataEntry& e : kv) {
            if (e.key == "general.file_type") continue;  // the plan's to set
            INFO(name << ": " << e.key);
            const ws::MetadataEntry* r = ref.find(e.key);
            CHECK(r);
            if (!r) continue;
            CHECK(r->value.type == e.value.type);
            CHECK(r->value.bits == e.value.bits);
            CHECK(r->value.str == e.value.str);
        }
    }
}

TEST_CASE("parse_hf_config: text_config merged in, families, and hostile files refused") {
    // A multimodal checkpoint: the text model's hyperparameters sit in text_config and win.
    auto c = parse_text(
        "{\"model_type\": \"gemma3\", \"num_hidden_layers\": 1, \"text_config\": {\"model_type\": \"gemma3_text\","
        " \"num_hidden_layers\": 26, \"n_heads\": 8}}");
    REQUIRE(c.ok());
    CHECK(c.value().family == "gemma3");
    CHECK(c.value().n_head == 8);
    CHECK(c.value().n_head_kv == 0);
    CHECK(c.value().hparams["num_hidden_layers"] == 26);
    auto t = parse_text("{\"model_type\": \"unknown\", \"text_config\": {\"model_type\": \"mistral\"}}");
    REQUIRE(t.ok());
    CHECK(t.value().family == "llama");

    // Deep nesting is refused before it is parsed; brackets inside strings do not count.
    const std::string deep = "{\"a\": " + std::string(ws::kHfConfigMaxDepth, '[') + std::string(32, ']') + "}";
    CHECK(parse_text(deep).status().code == ws::Error::kTooLarge);
    const std::string quoted = "{\"a\": \"" + std::string(100, '[') + "\\\"\"}";
    CHECK(parse_text(quoted).ok());
    const std::string big(static_cast<size_t>(ws::kHfConfigMaxBytes) + 1, ' ');
    CHECK(parse_text(big).status().code == ws::Error::kTooLarge);
    CHECK(parse_text("{\"a\": 1").status().code == ws::Error::kBadJson);
}

TEST_CASE("hf_convert_rows and hf_head_rows refuse what does not fit") {
    CHECK(ws::hf_head_rows(12, 4).status().code == ws::Error::kBadShape);  // 3 rows a head: odd
    CHECK(ws::hf_head_rows(16, 0).status().code == ws::Error::kBadShape);
    CHECK(ws::hf_head_rows(16, 4).value() == 4);
    std::vector<float> v(8, 0.5f), out(8);
    // A window past the tensor's rows.
    CHECK(ws::hf_convert_rows(ws::Transform::kPlusOne, ws::DType::F32, 0, ws::HfRows{4, 2, 4, 2}, v.data(), out.data())
              .code == ws::Error::kBadShape);
    // No value change for a transform that only selects rows; + 1 may work in place.
    REQUIRE(ws::hf_convert_rows(ws::Transform::kSplitQ, ws::DType::F32, 0, ws::HfRows{4, 0, 4, 2}, v.data(), out.data())
                .ok());
    CHECK(out == v);
    REQUIRE(ws::hf_convert_rows(ws::Transform::kPlusOne, ws::DType::BF16, 0, ws::HfRows{4, 0, 4, 2}, v.data(), v.data())
                .ok());
    CHECK(v == std::vector<float>(8, 1.5f));
    // Gemma's + 1 is added in the tensor's precision: rounded to F16 for an F16 tensor (1 + 2^-12 is 1 in F16),
    // exact in float32 for the others (a BF16 tensor is widened first).
    const float small = ws::fp16_to_fp32(ws::fp32_to_fp16(0x1p-12f));
    float sum = 0;
    REQUIRE(ws::hf_convert_rows(ws::Transform::kPlusOne, ws::DType::F16, 0, ws::HfRows{1, 0, 1, 1}, &small, &sum).ok());
    CHECK(sum == 1.0f);
    REQUIRE(
        ws::hf_convert_rows(ws::Transform::kPlusOne, ws::DType::BF16, 0, ws::HfRows{1, 0, 1, 1}, &small, &sum).ok());
    CHECK(sum == 1.0f + 0x1p-12f);
}
