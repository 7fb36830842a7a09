// SPDX-License-Identifier: MIT
// Importance matrices: the three imatrix GGUFs llama-imatrix wrote for the recipe models, legacy .dat
// files built here, and broken files of both kinds.
#include "weightstream/imatrix.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>

#include "support/recipe_runs.h"
#include "support/test_util.h"
#include "weightstream/gguf.h"
#include "weightstream/gguf_writer.h"

namespace {

using namespace ws;

Imatrix parse_ok(const std::vector<uint8_t>& b) {
    Result<Imatrix> r = parse_imatrix(b.data(), b.size());
    INFO(error_name(r.status().code) << " " << r.status().what << " at " << r.status().offset);
    REQUIRE(r.ok());
    return std::move(r).value();
}

Status parse_status(const std::vector<uint8_t>& b) {
    return parse_imatrix(b.data(), b.size()).status();
}

// Raw F32 tensor values of a GGUF file, read independently of the imatrix parser.
std::vector<float> raw_floats(const std::vector<uint8_t>& file, const std::string& name) {
    ParseOptions o;
    o.file_size = file.size();
    GgufParser p(o);
    REQUIRE(p.feed(file.data(), file.size()).ok());
    const TensorInfo* t = p.info().find_tensor(name);
    REQUIRE(t);
    std::vector<float> v(t->n_elements);
    std::memcpy(v.data(), file.data() + t->offset, t->nbytes);
    return v;
}

// Legacy .dat writer.
struct Dat {
    std::vector<uint8_t> b;
    Dat& i32(int32_t v) {
        for (int i = 0; i < 4; ++i) b.push_back(static_cast<uint8_t>(static_cast<uint32_t>(v) >> (8 * i)));
        return *this;
    }
    Dat& f32(float v) {
        uint32_t u;
        std::memcpy(&u, &v, 4);
        return i32(static_cast<int32_t>(u));
    }
    Dat& bytes(const std::string& s) {
        b.insert(b.end(), s.begin(), s.end());
        return *this;
    }
    Dat& entry(const std::string& name, int32_t ncall, const std::vector<float>& v) {
        i32(static_cast<int32_t>(name.size())).bytes(name).i32(ncall).i32(static_cast<int32_t>(v.size()));
        for (float x : v) f32(x);
        return *this;
    }
};

MetadataEntry u32_entry(const std::string& key, uint32_t v) {
    MetadataEntry e;
    e.key = key;
    e.value.type = ValueType::kUint32;
    e.value.bits = v;
    return e;
}

std::vector<MetadataEntry> imatrix_kvs() {
    MetadataEntry ds;
    ds.key = "imatrix.datasets";
    ds.value.type = ValueType::kArray;
    ds.value.item_type = ValueType::kString;
    ds.value.length = 1;
    ds.value.strings = {"calib.txt"};
    return {string_entry("general.type", "imatrix"), ds, u32_entry("imatrix.chunk_count", 3),
            u32_entry("imatrix.chunk_size", 512)};
}

std::vector<uint8_t> f32_bytes(const std::vector<float>& v) {
    std::vector<uint8_t> b(v.size() * 4);
    std::memcpy(b.data(), v.data(), b.size());
    return b;
}

// An imatrix GGUF with one weight "w": sums ne [n, counts.size()], counts ne [1, counts.size()].
std::vector<uint8_t> gguf_imatrix(const std::vector<float>& sums, const std::vector<float>& counts, int64_t n,
                                  std::vector<MetadataEntry> kvs = imatrix_kvs(), DType sums_type = DType::F32) {
    std::vector<TensorInfo> t = {ws_test::tensor("w.counts", DType::F32, {1, static_cast<int64_t>(counts.size())}),
                                 ws_test::tensor("w.in_sum2", sums_type, {n, static_cast<int64_t>(counts.size())})};
    std::vector<uint8_t> sums_data = f32_bytes(sums);
    if (sums_type == DType::F16) sums_data.resize(sums.size() * 2);
    Result<std::vector<uint8_t>> r = gguf_write(kvs, t, {f32_bytes(counts), sums_data});
    REQUIRE(r.ok());
    return r.value();
}

}  // namespace

TEST_CASE("the recipe imatrix GGUFs: entry counts, metadata and in_sum2 / counts per expert") {
    struct Case {
        const char* file;
        size_t entries;
    };
    for (const Case& c : {Case{"ref-llama-gqa8-f16.imatrix.gguf", 21}, Case{"ref-llama-moe-f16.imatrix.gguf", 17},
                          Case{"ref-llama-bf16-odd.imatrix.gguf", 15}}) {
        INFO(c.file);
        const std::vector<uint8_t> file = ws_test::read_file(ws_test::recipes_dir() + "/" + c.file);
        const Imatrix m = parse_ok(file);
        CHECK_FALSE(m.legacy);
        CHECK(m.entries.size() == c.entries);
        CHECK(m.chunk_count == 12);
        CHECK(m.chunk_size == 256);
        CHECK(m.datasets == std::vector<std::string>{"ref-calibration.txt"});
        for (size_t i = 1; i < m.entries.size(); ++i) CHECK(m.entries[i - 1].name < m.entries[i].name);
        // A dense entry: in_sum2 / 3072 per column.
        const ImatrixEntry* q = m.find("blk.0.attn_q.weight");
        REQUIRE(q);
        CHECK(q->n_mat == 1);
        const std::vector<float> sums = raw_floats(file, "blk.0.attn_q.weight.in_sum2");
        REQUIRE(q->values.size() == sums.size());
        for (size_t i = 0; i < sums.size(); ++i) CHECK(q->values[i] == sums[i] / 3072.0f);
        CHECK(m.find("token_embd.weight") == nullptr);
    }

    // MoE: one count per expert, and the dead expert (blk.1 expert 3, count 0) reads as 1.0.
    const std::vector<uint8_t> file = ws_test::read_file(ws_test::recipes_dir() + "/ref-llama-moe-f16.imatrix.gguf");
    const Imatrix m = parse_ok(file);
    const float counts0[4] = {2688, 2552, 825, 79};
    const ImatrixEntry* e0 = m.find("blk.0.ffn_down_exps.weight");
    REQUIRE(e0);
    CHECK(e0->n_per_row == 512);
    CHECK(e0->n_mat == 4);
    const std::vector<float> sums0 = raw_floats(file, "blk.0.ffn_down_exps.weight.in_sum2");
    for (int e = 0; e < 4; ++e) {
        for (int i = 0; i < 512; ++i) CHECK(e0->values[e * 512 + i] == sums0[e * 512 + i] / counts0[e]);
    }
    const ImatrixEntry* e1 = m.find("blk.1.ffn_gate_exps.weight");
    REQUIRE(e1);
    CHECK(e1->n_per_row == 256);
    const std::vector<float> sums1 = raw_floats(file, "blk.1.ffn_gate_exps.weight.in_sum2");
    for (int i = 0; i < 256; ++i) {
        CHECK(sums1[3 * 256 + i] == 0.0f);
        CHECK(e1->values[3 * 256 + i] == 1.0f);
        CHECK(e1->values[0 * 256 + i] == sums1[i] / 2805.0f);
    }
    CHECK(m.find("blk.1.ffn_gate_inp.weight") != nullptr);  // loaded (and counted) though never quantized
}

TEST_CASE("legacy .dat imatrix: values / ncall, C-string names, repeated names, the dataset trailer") {
    Dat d;
    d.i32(3)
        .entry("blk.0.attn_q.weight", 4, {2.0f, 6.0f})
        .entry(std::string("blk.0.ffn_up.weight\0junk", 24), 0, {5.0f})
        .entry("blk.0.attn_q.weight", 2, {1.0f, 3.0f, 5.0f});
    Imatrix m = parse_ok(d.b);
    CHECK(m.legacy);
    REQUIRE(m.entries.size() == 2);
    CHECK(m.chunk_count == 0);
    CHECK(m.datasets.empty());
    const ImatrixEntry* q = m.find("blk.0.attn_q.weight");
    REQUIRE(q);
    CHECK(q->values == std::vector<float>{0.5f, 1.5f, 2.5f});  // the later entry wins
    const ImatrixEntry* up = m.find("blk.0.ffn_up.weight");
    REQUIRE(up);
    CHECK(up->values == std::vector<float>{5.0f});  // ncall 0: kept as stored

    const size_t trailer_at = d.b.size();
    d.i32(42).i32(9).bytes("wiki.text");
    m = parse_ok(d.b);
    CHECK(m.chunk_count == 42);
    CHECK(m.datasets == std::vector<std::string>{"wiki.text"});

    // Every truncated prefix is an error, never a crash, except the one that ends where the optional
    // trailer starts (a complete file of the older layout).
    for (size_t n = 0; n < d.b.size(); ++n) {
        const std::vector<uint8_t> prefix(d.b.begin(), d.b.begin() + n);
        INFO(n);
        CHECK(parse_status(prefix).ok() == (n == trailer_at));
    }
}

TEST_CASE("broken imatrix files are refused with the field that is wrong") {
    Dat zero;
    zero.i32(0);
    CHECK(parse_status(zero.b).code == Error::kBadShape);
    CHECK(std::string(parse_status(zero.b).what) == "imatrix.n_entries");
    Dat neg;
    neg.i32(1).i32(-5);
    CHECK(std::string(parse_status(neg.b).what) == "imatrix.name");
    Dat nval;
    nval.i32(1).i32(1).bytes("w").i32(1).i32(0);
    CHECK(std::string(parse_status(nval.b).what) == "imatrix.nval");
    Dat huge;
    huge.i32(1).i32(1).bytes("w").i32(1).i32(0x7fffffff);
    CHECK(parse_status(huge.b).code == Error::kTruncated);
    Dat nan_dat;
    nan_dat.i32(1).entry("w", 1, {std::nanf("")});
    CHECK(std::string(parse_status(nan_dat.b).what) == "imatrix.value");

    // GGUF: a good one first.
    const std::vector<uint8_t> good = gguf_imatrix({2, 4, 6, 8, 0, 0}, {2, 0}, 3);
    Imatrix m = parse_ok(good);
    REQUIRE(m.entries.size() == 1);
    CHECK(m.entries[0].values == std::vector<float>{1, 2, 3, 1, 1, 1});
    CHECK(m.datasets == std::vector<std::string>{"calib.txt"});
    CHECK(m.chunk_count == 3);

    // Counts that do not match the sums' rows.
    Status s = parse_status(gguf_imatrix({1, 2, 3, 4}, {1}, 4));
    REQUIRE(s.ok());
    std::vector<TensorInfo> t = {ws_test::tensor("w.counts", DType::F32, {3}),
                                 ws_test::tensor("w.in_sum2", DType::F32, {2, 2})};
    Result<std::vector<uint8_t>> bad = gguf_write(imatrix_kvs(), t, {f32_bytes({1, 1, 1}), f32_bytes({1, 2, 3, 4})});
    REQUIRE(bad.ok());
    CHECK(std::string(parse_status(bad.value()).what) == "imatrix.counts");
    // Sums without counts.
    bad = gguf_write(imatrix_kvs(), {ws_test::tensor("w.in_sum2", DType::F32, {4})}, {f32_bytes({1, 2, 3, 4})});
    REQUIRE(bad.ok());
    CHECK(std::string(parse_status(bad.value()).what) == "imatrix.counts");
    // F16 sums.
    s = parse_status(gguf_imatrix({1, 2, 3, 4}, {1}, 4, imatrix_kvs(), DType::F16));
    CHECK(s.code == Error::kBadType);
    // Missing or mistyped metadata.
    std::vector<MetadataEntry> kvs = imatrix_kvs();
    kvs.pop_back();
    CHECK(parse_status(gguf_imatrix({1}, {1}, 1, kvs)).code == Error::kBadKey);
    kvs = imatrix_kvs();
    kvs[2].value.type = ValueType::kInt32;
    CHECK(std::string(parse_status(gguf_imatrix({1}, {1}, 1, kvs)).what) == "imatrix.chunk_count");
    // An infinite importance value.
    CHECK(std::string(parse_status(gguf_imatrix({INFINITY}, {1}, 1)).what) == "imatrix.value");
    // No tensors at all.
    Result<std::vector<uint8_t>> empty = gguf_write(imatrix_kvs(), {}, {});
    REQUIRE(empty.ok());
    CHECK(std::string(parse_status(empty.value()).what) == "imatrix.n_tensors");
    // Every prefix of a GGUF imatrix that cuts into its header or data fails cleanly (the zero padding
    // after the last tensor is not needed).
    uint64_t data_end = 0;
    {
        ParseOptions o;
        GgufParser p(o);
        REQUIRE(p.feed(good.data(), good.size()).ok());
        for (const TensorInfo& ti : p.info().tensors) data_end = std::max(data_end, ti.offset + ti.nbytes);
    }
    for (size_t n = 0; n < data_end; ++n) {
        const std::vector<uint8_t> prefix(good.begin(), good.begin() + n);
        INFO(n);
        CHECK_FALSE(parse_status(prefix).ok());
    }
}
