// SPDX-License-Identifier: MIT
// The recipe planner against llama-quantize itself: for all 47 reference runs (../shared/testdata/recipes),
// the planned tensor order, types, shapes, offsets and sizes, the metadata (each KV record's sha256), the
// data offset and the fallback count equal what llama-quantize wrote. Then the rules one at a time on
// small models built here.
#include "weightstream/quant_recipe.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <memory>

#include "support/recipe_runs.h"
#include "support/test_util.h"
#include "weightstream/gguf.h"
#include "weightstream/imatrix.h"
#include "weightstream/regex.h"

namespace {

using namespace ws;

ModelInfo parse_model(const std::vector<uint8_t>& bytes) {
    ParseOptions options;
    options.file_size = bytes.size();
    GgufParser parser(options);
    REQUIRE(parser.feed(bytes.data(), bytes.size()).ok());
    return parser.take_info();
}

OverrideMatcher regex_matcher(const std::vector<TensorTypeOverride>& overrides) {
    auto compiled = std::make_shared<std::vector<Regex>>();  // as the CLI matches them
    for (const TensorTypeOverride& o : overrides) {
        Result<Regex> r = Regex::compile(o.pattern);
        REQUIRE(r.ok());
        compiled->push_back(std::move(r).value());
    }
    return [compiled](size_t i, const std::string& name) { return (*compiled)[i].search(name); };
}

DType type_named(const std::string& s) {
    DType t = DType::kUnknown;
    REQUIRE(ggml_type_from_name(s, &t));
    return t;
}

RecipeOptions options_for(const ws_test::RecipeRun& run, const Imatrix* imatrix) {
    RecipeOptions o;
    REQUIRE(ftype_from_name(run.ftype, &o.ftype));
    o.pure = run.pure;
    o.leave_output_tensor = run.leave_output;
    if (!run.output_tensor_type.empty()) o.output_tensor_type = type_named(run.output_tensor_type);
    if (!run.token_embedding_type.empty()) o.token_embedding_type = type_named(run.token_embedding_type);
    for (const std::string& tt : run.tensor_types) {
        TensorTypeOverride ov;
        REQUIRE(parse_tensor_type_override(tt, &ov));
        o.overrides.push_back(ov);
    }
    o.matcher = regex_matcher(o.overrides);
    o.imatrix = imatrix;
    o.imatrix_path = run.imatrix;
    return o;
}

const char* manifest_type_name(ValueType t) {
    switch (t) {
        case ValueType::kUint32:
            return "UINT32";
        case ValueType::kInt32:
            return "INT32";
        case ValueType::kFloat32:
            return "FLOAT32";
        case ValueType::kString:
            return "STRING";
        case ValueType::kArray:
            return "ARRAY";
        default:
            return "OTHER";
    }
}

std::string lower(std::string s) {
    for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
}

ModelInfo small_model(const std::vector<std::pair<std::string, uint32_t>>& hparams,
                      const std::vector<TensorInfo>& tensors) {
    ModelInfo m;
    m.format = Format::kGguf;
    m.metadata.push_back(string_entry("general.architecture", "llama"));
    for (const auto& [key, v] : hparams) {
        MetadataEntry e;
        e.key = "llama." + key;
        e.value.type = ValueType::kUint32;
        e.value.bits = v;
        m.metadata.push_back(e);
    }
    for (TensorInfo t : tensors) {
        t.n_elements = uint64_t(t.ne[0]) * t.ne[1] * t.ne[2] * t.ne[3];
        REQUIRE(dtype_bytes_for(t.dtype, t.n_elements, &t.nbytes));
        m.tensors.push_back(t);
    }
    return m;
}

DType planned(const QuantPlan& p, const std::string& name) {
    for (const PlannedTensor& t : p.tensors) {
        if (t.out.name == name) return t.out.dtype;
    }
    FAIL("no planned tensor " << name);
    return DType::kUnknown;
}

}  // namespace

TEST_CASE("the plan equals llama-quantize's output layout for every reference run") {
    const std::vector<ws_test::RecipeRun> runs = ws_test::recipe_runs();
    REQUIRE(runs.size() == 47);
    int compared = 0;
    for (const ws_test::RecipeRun& run : runs) {
        INFO(run.record["output"].get<std::string>());
        const ModelInfo in = parse_model(ws_test::read_file(ws_test::recipes_dir() + "/" + run.model));
        Imatrix imatrix;
        if (!run.imatrix.empty()) {
            const std::vector<uint8_t> b = ws_test::read_file(ws_test::recipes_dir() + "/" + run.imatrix);
            Result<Imatrix> r = parse_imatrix(b.data(), b.size());
            REQUIRE(r.ok());
            imatrix = std::move(r).value();
        }
        Result<QuantPlan> r = plan_quantization(in, options_for(run, run.imatrix.empty() ? nullptr : &imatrix));
        REQUIRE(r.ok());
        const QuantPlan& plan = r.value();
        const nlohmann::json& rec = run.record;

        // Header: counts and where the data starts.
        CHECK(plan.layout.data_offset == rec["header"]["data_offset"].get<uint64_t>());
        CHECK(plan.layout.file_size == rec["size"].get<uint64_t>());
        CHECK(plan.n_fallback == rec.value("n_fallback", 0));

        // Tensors, in order.
        const auto& tensors = rec["tensors"];
        REQUIRE(plan.tensors.size() == tensors.size());
        for (size_t i = 0; i < tensors.size(); ++i) {
            const PlannedTensor& p = plan.tensors[i];
            INFO(tensors[i]["name"].get<std::string>());
            CHECK(p.out.name == tensors[i]["name"].get<std::string>());
            CHECK(p.out.type_id == tensors[i]["type_id"].get<uint32_t>());
            const auto& ne = tensors[i]["ne"];
            REQUIRE(p.out.n_dims == ne.size());
            for (size_t d = 0; d < ne.size(); ++d) CHECK(p.out.ne[d] == ne[d].get<int64_t>());
            CHECK(p.out.offset - plan.layout.data_offset == tensors[i]["offset"].get<uint64_t>());
            CHECK(p.out.nbytes == tensors[i]["nbytes"].get<uint64_t>());
        }
        // Fallbacks: which tensors, from which type to which.
        size_t n_fallbacks = 0;
        for (const PlannedTensor& p : plan.tensors) n_fallbacks += p.fallback;
        REQUIRE(n_fallbacks == rec.value("fallbacks", nlohmann::json::array()).size());
        for (const auto& f : rec.value("fallbacks", nlohmann::json::array())) {
            const auto it = std::find_if(plan.tensors.begin(), plan.tensors.end(),
                                         [&](const PlannedTensor& p) { return p.out.name == f["tensor"]; });
            REQUIRE(it != plan.tensors.end());
            CHECK(it->fallback);
            CHECK(lower(dtype_name(it->wanted)) == lower(f["wanted"].get<std::string>()));
            CHECK(lower(dtype_name(it->out.dtype)) == lower(f["got"].get<std::string>()));
        }

        // Metadata: keys, types and scalar values, and the sha256 of every serialized KV record.
        const auto& kvs = rec["metadata"];
        REQUIRE(plan.metadata.size() == kvs.size());
        const std::vector<uint8_t>& header = plan.layout.header;
        ParseOptions po;
        GgufParser reparse(po);
        REQUIRE(reparse.feed(header.data(), header.size()).code == Error::kOk);
        const ModelInfo& out = reparse.info();
        REQUIRE(out.metadata.size() == kvs.size());
        for (size_t i = 0; i < kvs.size(); ++i) {
            const MetadataEntry& e = plan.metadata[i];
            INFO(kvs[i]["key"].get<std::string>());
            CHECK(e.key == kvs[i]["key"].get<std::string>());
            CHECK(std::string(manifest_type_name(e.value.type)) == kvs[i]["type"].get<std::string>());
            if (e.value.type == ValueType::kUint32) CHECK(e.value.bits == kvs[i]["value"].get<uint64_t>());
            if (e.value.type == ValueType::kString) CHECK(e.value.str == kvs[i]["value"].get<std::string>());
            const uint64_t from = out.metadata[i].offset;
            const uint64_t to = i + 1 < kvs.size() ? out.metadata[i + 1].offset : out.tensors.front().info_offset;
            CHECK(ws_test::sha256_hex(header.data() + from, to - from) == kvs[i]["kv_sha256"].get<std::string>());
        }
        ++compared;
    }
    WARN("planned and compared " << compared << " of " << runs.size() << " llama-quantize runs");
    CHECK(compared == 47);
}

TEST_CASE("ftype and ggml type names are read as llama-quantize reads them") {
    Ftype f;
    REQUIRE(ftype_from_name("q4_k_m", &f));
    CHECK(f == Ftype::kQ4_K_M);
    REQUIRE(ftype_from_name("Q4_K", &f));
    CHECK(f == Ftype::kQ4_K_M);
    REQUIRE(ftype_from_name("Q3_K", &f));
    CHECK(f == Ftype::kQ3_K_M);
    REQUIRE(ftype_from_name("15", &f));
    CHECK(f == Ftype::kQ4_K_M);
    CHECK(std::string(ftype_name(Ftype::kQ4_K_M)) == "Q4_K_M");
    CHECK(ftype_default_type(Ftype::kIQ2_M) == DType::IQ2_S);
    CHECK(ftype_default_type(Ftype::kIQ2_S) == DType::IQ2_XS);
    CHECK(ftype_default_type(Ftype::kMXFP4_MOE) == DType::MXFP4);
    CHECK_FALSE(ftype_from_name("Q4_K_X", &f));
    CHECK_FALSE(ftype_from_name("4", &f));  // Q4_1_SOME_F16: no longer offered

    // The list to choose from: every name once, aliases out, in QUANT_OPTIONS order.
    const std::vector<Ftype> list = ftype_list();
    std::string names;
    for (Ftype t : list) names += std::string(ftype_name(t)) + " ";
    CHECK(names ==
          "Q4_0 Q4_1 MXFP4_MOE Q5_0 Q5_1 IQ2_XXS IQ2_XS IQ2_S IQ2_M IQ1_S IQ1_M TQ1_0 TQ2_0 Q2_K Q2_K_S IQ3_XXS "
          "IQ3_S IQ3_M IQ3_XS Q3_K_S Q3_K_M Q3_K_L IQ4_NL IQ4_XS Q4_K_S Q4_K_M Q5_K_S Q5_K_M Q6_K Q8_0 F16 BF16 F32 ");
    for (Ftype t : list) {
        REQUIRE(ftype_from_name(ftype_name(t), &f));
        CHECK(f == t);
    }

    TensorTypeOverride o;
    REQUIRE(parse_tensor_type_override("ATTN_V=Q8_0", &o));
    CHECK(o.pattern == "attn_v");
    CHECK(o.type == DType::Q8_0);
    REQUIRE(parse_tensor_type_override("blk\\.[0-2]\\.ffn_down=q6_k", &o));
    CHECK(o.pattern == "blk\\.[0-2]\\.ffn_down");
    CHECK(o.type == DType::Q6_K);
    CHECK_FALSE(parse_tensor_type_override("attn_v", &o));
    CHECK_FALSE(parse_tensor_type_override("=q8_0", &o));
    CHECK_FALSE(parse_tensor_type_override("attn_v=", &o));
    CHECK_FALSE(parse_tensor_type_override("attn_v=q9_0", &o));
    CHECK_FALSE(parse_tensor_type_override("attn_v=q4_0_4_4", &o));  // removed from ggml
}

TEST_CASE("tensor order is by layer number, then by name") {
    const ModelInfo m = small_model({{"block_count", 11}, {"attention.head_count", 4}},
                                    {ws_test::tensor("blk.10.attn_q.weight", DType::F16, {256, 256}),
                                     ws_test::tensor("token_embd.weight", DType::F16, {256, 64}),
                                     ws_test::tensor("blk.9.attn_q.weight", DType::F16, {256, 256}),
                                     ws_test::tensor("blk.9.attn_k.weight", DType::F16, {256, 256}),
                                     ws_test::tensor("output_norm.weight", DType::F32, {256}),
                                     ws_test::tensor("blk.x.weight", DType::F16, {256, 256})});
    RecipeOptions o;
    o.ftype = Ftype::kQ8_0;
    Result<QuantPlan> r = plan_quantization(m, o);
    REQUIRE(r.ok());
    std::vector<std::string> names;
    for (const PlannedTensor& p : r.value().tensors) names.push_back(p.out.name);
    CHECK(names == std::vector<std::string>{"blk.x.weight", "output_norm.weight", "token_embd.weight",
                                            "blk.9.attn_k.weight", "blk.9.attn_q.weight", "blk.10.attn_q.weight"});
    CHECK(planned(r.value(), "output_norm.weight") == DType::F32);  // 1-D: copied
}

TEST_CASE("rows not a multiple of any block fall back to F16; types without a fallback are refused") {
    const ModelInfo m = small_model({{"block_count", 1}, {"attention.head_count", 4}},
                                    {ws_test::tensor("blk.0.attn_q.weight", DType::F16, {48, 16}),
                                     ws_test::tensor("blk.0.ffn_up.weight", DType::F16, {96, 16}),
                                     ws_test::tensor("output.weight", DType::F16, {256, 8})});
    RecipeOptions o;
    o.ftype = Ftype::kQ4_K_M;
    Result<QuantPlan> r = plan_quantization(m, o);
    REQUIRE(r.ok());
    CHECK(planned(r.value(), "blk.0.attn_q.weight") == DType::F16);  // Q4_K -> Q5_0 -> 48 % 32 != 0 -> F16
    CHECK(planned(r.value(), "blk.0.ffn_up.weight") == DType::Q5_0);
    CHECK(planned(r.value(), "output.weight") == DType::Q6_K);
    CHECK(r.value().n_fallback == 2);

    o.ftype = Ftype::kQ8_0;  // Q8_0 has no fallback in llama-quantize
    r = plan_quantization(m, o);
    REQUIRE_FALSE(r.ok());
    CHECK(r.status().code == Error::kBadShape);
    CHECK(std::string(r.status().what) == "tensor.ne");

    o.ftype = Ftype::kQ4_K_M;  // --pure has no fallback: a 48-wide Q4_K cannot be written
    o.pure = true;
    r = plan_quantization(m, o);
    REQUIRE_FALSE(r.ok());
    CHECK(r.status().code == Error::kBadShape);
}

TEST_CASE("the imatrix requirement, the requantize switch and the hyperparameters are checked") {
    const ModelInfo m = small_model({{"block_count", 1}, {"attention.head_count", 4}},
                                    {ws_test::tensor("blk.0.attn_q.weight", DType::F16, {256, 16}),
                                     ws_test::tensor("token_embd.weight", DType::F16, {256, 16})});
    RecipeOptions o;
    o.ftype = Ftype::kIQ2_XXS;
    Result<QuantPlan> r = plan_quantization(m, o);
    REQUIRE_FALSE(r.ok());
    CHECK(r.status().code == Error::kUnsupported);
    CHECK(std::string(r.status().what) == "imatrix.required");

    // An imatrix that covers the weight works; one that lacks it, or has the wrong size, does not.
    Imatrix im;
    ImatrixEntry e;
    e.name = "blk.0.attn_q.weight";
    e.n_per_row = 256;
    e.values.assign(256, 1.0f);
    im.entries.push_back(e);
    o.imatrix = &im;
    r = plan_quantization(m, o);
    REQUIRE(r.ok());
    CHECK(r.value().tensors[1].imatrix == &im.entries[0]);
    CHECK(r.value().tensors[0].imatrix == nullptr);  // token_embd: Q2_K, no entry needed
    im.entries[0].values.assign(128, 1.0f);
    r = plan_quantization(m, o);
    REQUIRE_FALSE(r.ok());
    CHECK(std::string(r.status().what) == "imatrix.size");
    im.entries[0].name = "blk.0.attn_k.weight";
    r = plan_quantization(m, o);
    REQUIRE_FALSE(r.ok());
    CHECK(std::string(r.status().what) == "imatrix.required");

    // Requantizing needs the switch and warns.
    ModelInfo q = small_model({{"block_count", 1}}, {ws_test::tensor("blk.0.attn_q.weight", DType::Q8_0, {256, 16})});
    RecipeOptions qo;
    qo.ftype = Ftype::kQ4_0;
    r = plan_quantization(q, qo);
    REQUIRE_FALSE(r.ok());
    CHECK(r.status().code == Error::kUnsupported);
    CHECK(std::string(r.status().what) == "tensor.type");
    qo.allow_requantize = true;
    r = plan_quantization(q, qo);
    REQUIRE(r.ok());
    CHECK(r.value().tensors[0].requantize);
    REQUIRE(r.value().warnings.size() == 1);
    CHECK(r.value().warnings[0].find("requantizing from Q8_0") != std::string::npos);
    qo.ftype = Ftype::kQ8_0;  // already the target type: copied, no requantizing
    r = plan_quantization(q, qo);
    REQUIRE(r.ok());
    CHECK_FALSE(r.value().tensors[0].quantize);

    // Experts need expert_used_count (llama's loader asserts it).
    ModelInfo moe = small_model({{"block_count", 1}, {"expert_count", 4}}, {});
    r = plan_quantization(moe, qo);
    REQUIRE_FALSE(r.ok());
    CHECK(r.status().code == Error::kBadKey);
    ModelInfo no_arch;
    r = plan_quantization(no_arch, qo);
    REQUIRE_FALSE(r.ok());
    CHECK(std::string(r.status().what) == "general.architecture");
}

TEST_CASE("validate_row_data flags non-finite floats and block scales as ggml_validate_row_data does") {
    float f[4] = {1.0f, 2.0f, 3.0f, 4.0f};
    CHECK(validate_row_data(DType::F32, reinterpret_cast<uint8_t*>(f), sizeof f));
    f[2] = std::nanf("");
    CHECK_FALSE(validate_row_data(DType::F32, reinterpret_cast<uint8_t*>(f), sizeof f));
    f[2] = INFINITY;
    CHECK_FALSE(validate_row_data(DType::F32, reinterpret_cast<uint8_t*>(f), sizeof f));
    const uint8_t f16_inf[4] = {0x00, 0x3c, 0x00, 0x7c};
    CHECK_FALSE(validate_row_data(DType::F16, f16_inf, 4));
    CHECK(validate_row_data(DType::F16, f16_inf, 2));
    const uint8_t bf16_nan[2] = {0xc1, 0x7f};
    CHECK_FALSE(validate_row_data(DType::BF16, bf16_nan, 2));

    std::vector<uint8_t> q8(34 * 2, 0);
    CHECK(validate_row_data(DType::Q8_0, q8.data(), q8.size()));
    q8[34] = 0x00;
    q8[35] = 0x7e;  // second block's d: NaN
    CHECK_FALSE(validate_row_data(DType::Q8_0, q8.data(), q8.size()));
    CHECK_FALSE(validate_row_data(DType::Q8_0, q8.data(), 33));  // not whole blocks

    std::vector<uint8_t> q2k(84, 0);
    CHECK(validate_row_data(DType::Q2_K, q2k.data(), q2k.size()));
    q2k[83] = 0x7c;  // dmin: +Inf
    CHECK_FALSE(validate_row_data(DType::Q2_K, q2k.data(), q2k.size()));
    std::vector<uint8_t> q6k(210, 0);
    q6k[209] = 0xfc;  // d: -Inf
    CHECK_FALSE(validate_row_data(DType::Q6_K, q6k.data(), q6k.size()));
    std::vector<uint8_t> mx(17, 0);
    CHECK(validate_row_data(DType::MXFP4, mx.data(), mx.size()));
    mx[0] = 0xff;
    CHECK_FALSE(validate_row_data(DType::MXFP4, mx.data(), mx.size()));
}
