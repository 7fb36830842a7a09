// SPDX-License-Identifier: MIT
#include "decode/dequant_iquants.h"

#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <iterator>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "decode/dequant_internal.h"
#include "decode/iquant_tables.h"
#include "support/test_util.h"
#include "weightstream/dequant.h"

namespace {

using RowFn = void (*)(const uint8_t*, float*, int64_t);

struct Kernel {
    uint32_t ggml_id;
    const char* name;
    int64_t block_elems;
    size_t block_bytes;
    RowFn fn;
};

// ggml's blck_size / type_size per type (checked against the manifest's ggml_type_traits below).
const Kernel kKernels[] = {
    {16, "iq2_xxs", 256, 66, ws::dequantize_row_iq2_xxs}, {17, "iq2_xs", 256, 74, ws::dequantize_row_iq2_xs},
    {18, "iq3_xxs", 256, 98, ws::dequantize_row_iq3_xxs}, {19, "iq1_s", 256, 50, ws::dequantize_row_iq1_s},
    {20, "iq4_nl", 32, 18, ws::dequantize_row_iq4_nl},    {21, "iq3_s", 256, 110, ws::dequantize_row_iq3_s},
    {22, "iq2_s", 256, 82, ws::dequantize_row_iq2_s},     {23, "iq4_xs", 256, 136, ws::dequantize_row_iq4_xs},
    {29, "iq1_m", 256, 56, ws::dequantize_row_iq1_m},
};

const Kernel* kernel_for(uint32_t ggml_id) {
    for (const Kernel& k : kKernels)
        if (k.ggml_id == ggml_id) return &k;
    return nullptr;
}

// Input bytes at the END of an exact-size heap allocation and one byte past an aligned start, so ASan
// flags any over-read and UBSan any misaligned multi-byte load.
struct ExactInput {
    ExactInput(const uint8_t* data, size_t size) : storage(new uint8_t[size + 1]) {
        if (size) std::memcpy(storage.get() + 1, data, size);
    }
    const uint8_t* data() const { return storage.get() + 1; }
    std::unique_ptr<uint8_t[]> storage;
};

std::vector<uint8_t> float_bytes(const float* f, size_t n) {
    std::vector<uint8_t> out(n * sizeof(float));
    std::memcpy(out.data(), f, out.size());
    return out;
}

// Writes the block's f16 scale: at offset 0 for every type except IQ1_M, whose scale is spread over the
// top nibbles of its four little-endian u16 scale words (bytes 48..55), lowest nibble in the first word.
void set_block_scale(uint32_t ggml_id, uint8_t* block, uint16_t h) {
    if (ggml_id != 29) {
        block[0] = static_cast<uint8_t>(h & 0xff);
        block[1] = static_cast<uint8_t>(h >> 8);
        return;
    }
    for (int w = 0; w < 4; ++w) {
        uint8_t& hi = block[48 + 2 * w + 1];
        hi = static_cast<uint8_t>((hi & 0x0f) | (((h >> (4 * w)) & 0xf) << 4));
    }
}

std::string sha256_of_le(const uint64_t* v, size_t n, size_t width) {
    std::vector<uint8_t> bytes;
    for (size_t i = 0; i < n; ++i)
        for (size_t b = 0; b < width; ++b) bytes.push_back(static_cast<uint8_t>(v[i] >> (8 * b)));
    return ws_test::sha256_hex(bytes.data(), bytes.size());
}

template <typename T, size_t N>
std::vector<uint64_t> widen(const T (&table)[N]) {
    return std::vector<uint64_t>(table, table + N);
}

}  // namespace

TEST_CASE("i-quant kernels decode ggml's reference tensors bit-exactly, whole and row by row") {
    const nlohmann::json manifest = ws_test::read_json(ws_test::data_path("ggml/manifest.json"));

    for (const auto& t : manifest.at("ggml_type_traits")) {
        const Kernel* k = kernel_for(t.at("id").get<uint32_t>());
        if (!k) continue;
        INFO(k->name);
        CHECK(t.at("name").get<std::string>() == k->name);
        CHECK(t.at("blck_size").get<int64_t>() == k->block_elems);
        CHECK(t.at("type_size").get<size_t>() == k->block_bytes);
    }

    const nlohmann::json* file = nullptr;
    for (const auto& f : manifest.at("files"))
        if (f.at("file").get<std::string>() == "ggml-types.gguf") file = &f;
    REQUIRE(file != nullptr);
    const std::vector<uint8_t> gguf = ws_test::read_file(ws_test::data_path("ggml/ggml-types.gguf"));

    std::set<std::string> decoded;
    std::set<uint32_t> types_seen;
    for (const auto& t : file->at("tensors")) {
        const Kernel* k = kernel_for(t.at("ggml_type_id").get<uint32_t>());
        if (!k) continue;
        const std::string name = t.at("name").get<std::string>();
        INFO(name);
        const uint64_t offset = t.at("absolute_offset").get<uint64_t>();
        const size_t size = t.at("size_bytes").get<size_t>();
        const int64_t n = t.at("n_elements").get<int64_t>();
        REQUIRE(offset + size <= gguf.size());
        REQUIRE(n % k->block_elems == 0);
        REQUIRE(static_cast<size_t>(n / k->block_elems) * k->block_bytes == size);

        const std::vector<uint8_t> ref =
            ws_test::read_file(ws_test::data_path("ggml/" + t.at("reference").at("file").get<std::string>()));
        REQUIRE(ref.size() == static_cast<size_t>(n) * sizeof(float));
        REQUIRE(ws_test::sha256_hex(ref.data(), ref.size()) == t.at("reference").at("sha256").get<std::string>());

        const ExactInput src(gguf.data() + offset, size);
        std::unique_ptr<float[]> out(new float[n]);
        k->fn(src.data(), out.get(), n);
        CHECK(float_bytes(out.get(), n) == ref);

        // Row by row, each row in its own exact-size, misaligned allocation.
        const int64_t row_elems = t.at("ne")[0].get<int64_t>();
        const size_t row_bytes = t.at("row_size_bytes").get<size_t>();
        REQUIRE(n % row_elems == 0);
        REQUIRE(static_cast<size_t>(row_elems / k->block_elems) * k->block_bytes == row_bytes);
        const int64_t rows = n / row_elems;
        for (int64_t r = 0; r < rows; ++r) {
            const ExactInput row_src(gguf.data() + offset + r * row_bytes, row_bytes);
            std::unique_ptr<float[]> row_out(new float[row_elems]);
            k->fn(row_src.data(), row_out.get(), row_elems);
            INFO("row " << r);
            CHECK(std::memcmp(row_out.get(), ref.data() + r * row_elems * sizeof(float), row_elems * sizeof(float)) ==
                  0);
        }
        decoded.insert(name);
        types_seen.insert(k->ggml_id);
    }
    CHECK(decoded == std::set<std::string>{"iq2_xxs.weight", "iq2_xs.weight", "iq3_xxs.weight", "iq1_s.weight",
                                           "iq4_nl.weight", "iq4_nl.odd", "iq3_s.weight", "iq2_s.weight",
                                           "iq4_xs.weight", "iq4_xs.3d", "iq1_m.weight"});
    CHECK(types_seen.size() == std::size(kKernels));
}

TEST_CASE("i-quant kernels survive garbage blocks, NaN/Inf scales included") {
    constexpr int kBlocks = 97;
    // Per block b, scale kScales[b % 8]; the last slot takes a random finite value.
    const uint16_t kScales[8] = {0x7c00, 0xfc00, 0x7e00, 0x7c01, 0x0001, 0x7bff, 0x8000, 0};
    for (const Kernel& k : kKernels) {
        INFO(k.name);
        std::mt19937 rng(0x1badb10c + k.ggml_id);
        for (int round = 0; round < 4; ++round) {
            const size_t size = kBlocks * k.block_bytes;
            std::vector<uint8_t> bytes(size);
            for (uint8_t& b : bytes) b = static_cast<uint8_t>(rng());
            std::vector<bool> finite_scale(kBlocks);
            for (int b = 0; b < kBlocks; ++b) {
                uint16_t h = kScales[b % 8];
                if (b % 8 == 7) {
                    h = static_cast<uint16_t>(rng());
                    if ((h & 0x7c00) == 0x7c00) h &= 0xbfff;  // clear an exponent bit: finite
                }
                set_block_scale(k.ggml_id, bytes.data() + b * k.block_bytes, h);
                finite_scale[b] = (h & 0x7c00) != 0x7c00;
            }

            const int64_t n = kBlocks * k.block_elems;
            const ExactInput src(bytes.data(), size);
            std::unique_ptr<float[]> out(new float[n]);
            k.fn(src.data(), out.get(), n);

            for (int b = 0; b < kBlocks; ++b) {
                INFO("round " << round << " block " << b);
                // Every multiplier in these formats is non-zero except IQ4_XS's (ls - 32): a finite scale gives
                // finite values, an Inf/NaN one gives only Inf/NaN.
                int64_t finite = 0;
                for (int64_t j = 0; j < k.block_elems; ++j) finite += std::isfinite(out[b * k.block_elems + j]);
                CHECK(finite == (finite_scale[b] ? k.block_elems : 0));

                // A block decodes the same alone as within the row.
                const ExactInput one(bytes.data() + b * k.block_bytes, k.block_bytes);
                std::unique_ptr<float[]> one_out(new float[k.block_elems]);
                k.fn(one.data(), one_out.get(), k.block_elems);
                CHECK(std::memcmp(one_out.get(), out.get() + b * k.block_elems, k.block_elems * sizeof(float)) == 0);
            }
        }
    }
}

TEST_CASE("IQ1_M reassembles its f16 scale from the top nibbles of the four scale words") {
    // d = f16 0x4a5b = 12.7109375, nibbles (lowest first) b, 5, a, 4 in scale words 0..3.
    uint8_t block[56] = {};
    const uint16_t kScale = 0x4a5b;
    const float d = 12.7109375f;
    // Low 12 bits of word w: four 3-bit sub-scales s = (4w + m) % 8, m = 0..3.
    for (int w = 0; w < 4; ++w) {
        uint16_t word = static_cast<uint16_t>(((kScale >> (4 * w)) & 0xf) << 12);
        for (int m = 0; m < 4; ++m) word |= static_cast<uint16_t>(((4 * w + m) % 8) << (3 * m));
        block[48 + 2 * w] = static_cast<uint8_t>(word & 0xff);
        block[48 + 2 * w + 1] = static_cast<uint8_t>(word >> 8);
    }
    // Group 1 of sub-block 0: index 0x7ff (grid entry 2047 = all +1) and a negative delta.
    block[1] = 0xff;
    block[32] = 0xf0;

    float out[256];
    ws::dequantize_row_iq1_m(block, out, 256);
    for (int ib = 0; ib < 8; ++ib) {
        const int w = ib / 2;
        const float dl1 = d * static_cast<float>(2 * ((4 * w + 2 * (ib % 2) + 0) % 8) + 1);
        const float dl2 = d * static_cast<float>(2 * ((4 * w + 2 * (ib % 2) + 1) % 8) + 1);
        for (int j = 0; j < 32; ++j) {
            INFO("sub-block " << ib << " element " << j);
            const bool group1_of_first = ib == 0 && j >= 8 && j < 16;
            // Grid entry 0 is all -1 with delta +1/8; entry 2047 all +1 with delta -1/8. Products are exact.
            const float expected = (j < 16 ? dl1 : dl2) * (group1_of_first ? 0.875f : -0.875f);
            CHECK(out[32 * ib + j] == expected);
        }
    }
}

TEST_CASE("IQ4_NL keeps a subnormal f16 scale and maps every nibble through kvalues_iq4nl") {
    uint8_t block[18];
    block[0] = 0x01;  // f16 0x0001 = 2^-24
    block[1] = 0x00;
    for (int j = 0; j < 16; ++j) block[2 + j] = static_cast<uint8_t>(j | ((15 - j) << 4));
    float out[32];
    ws::dequantize_row_iq4_nl(block, out, 32);
    const float tiny = std::ldexp(1.0f, -24);
    for (int j = 0; j < 16; ++j) {
        CHECK(out[j] == tiny * ws::kvalues_iq4nl[j]);
        CHECK(out[16 + j] == tiny * ws::kvalues_iq4nl[15 - j]);
    }
    CHECK(out[0] == -127.0f * tiny);
    CHECK(out[16] == 113.0f * tiny);
}

TEST_CASE("IQ4_XS assembles 6-bit scales from scales_l nibbles and scales_h bit pairs") {
    uint8_t block[136] = {};
    block[0] = 0x00;  // d = f16 0x3c00 = 1.0
    block[1] = 0x3c;
    int ls[8];
    uint16_t scales_h = 0;
    for (int ib = 0; ib < 8; ++ib) {
        ls[ib] = (ib * 23 + 5) % 64;
        block[4 + ib / 2] |= static_cast<uint8_t>((ls[ib] & 0xf) << (4 * (ib % 2)));
        scales_h |= static_cast<uint16_t>((ls[ib] >> 4) << (2 * ib));
    }
    block[2] = static_cast<uint8_t>(scales_h & 0xff);
    block[3] = static_cast<uint8_t>(scales_h >> 8);
    for (int ib = 0; ib < 8; ++ib)
        for (int j = 0; j < 16; ++j) block[8 + 16 * ib + j] = static_cast<uint8_t>(((j + ib) & 0xf) | ((15 - j) << 4));
    float out[256];
    ws::dequantize_row_iq4_xs(block, out, 256);
    for (int ib = 0; ib < 8; ++ib) {
        INFO("sub-block " << ib << " ls " << ls[ib]);
        for (int j = 0; j < 16; ++j) {
            CHECK(out[32 * ib + j] == static_cast<float>((ls[ib] - 32) * ws::kvalues_iq4nl[(j + ib) & 0xf]));
            CHECK(out[32 * ib + 16 + j] == static_cast<float>((ls[ib] - 32) * ws::kvalues_iq4nl[15 - j]));
        }
    }
}

TEST_CASE("IQ2_XXS applies the implied eighth sign bit and the 4-bit sub-block scale") {
    uint8_t block[66] = {};
    block[0] = 0x00;  // d = 1.0
    block[1] = 0x3c;
    // Sub-block 0: grid indices 0 (all 8s); sign codes 1, 3, 0x7f, 0; scale 15 -> db = 15.5 / 4.
    const uint32_t aux = 1u | (3u << 7) | (0x7fu << 14) | (0u << 21) | (15u << 28);
    for (int b = 0; b < 4; ++b) block[2 + 4 + b] = static_cast<uint8_t>(aux >> (8 * b));
    float out[256];
    ws::dequantize_row_iq2_xxs(block, out, 256);
    const float v = 3.875f * 8.0f;
    // code 1: elements 0 and 7 (parity); code 3: elements 0, 1; 0x7f: elements 0..6 and 7; 0: none.
    const float expected[4][8] = {{-v, v, v, v, v, v, v, -v},
                                  {-v, -v, v, v, v, v, v, v},
                                  {-v, -v, -v, -v, -v, -v, -v, -v},
                                  {v, v, v, v, v, v, v, v}};
    for (int l = 0; l < 4; ++l)
        for (int j = 0; j < 8; ++j) CHECK(out[8 * l + j] == expected[l][j]);
    // Other sub-blocks: scale nibble 0 -> db = 0.125, all positive.
    for (int j = 32; j < 256; ++j) CHECK(out[j] == 1.0f);
}

TEST_CASE("derived sign tables equal their definition and ggml's literal tables") {
    for (unsigned i = 0; i < 128; ++i) {
        INFO(i);
        const unsigned s = ws::ksigns_iq2xs[i];
        CHECK((s & 127u) == i);
        unsigned popcount = 0;
        for (unsigned b = 0; b < 8; ++b) popcount += (s >> b) & 1u;
        CHECK(popcount % 2 == 0);  // an even number of negative values per group of 8
    }
    for (unsigned j = 0; j < 8; ++j) CHECK(ws::kmask_iq2xs[j] == (1u << j));
    // sha256 of ggml-common.h's ksigns_iq2xs / kmask_iq2xs (ggml d99724f2), as bytes.
    CHECK(ws_test::sha256_hex(ws::ksigns_iq2xs.data(), ws::ksigns_iq2xs.size()) ==
          "a76742a603f8beca5212ecce0f1f02f11a4887fd2f7c8b15aca0ea3eb3380c31");
    CHECK(ws_test::sha256_hex(ws::kmask_iq2xs.data(), ws::kmask_iq2xs.size()) ==
          "5ac9831b2e30eb285ef34f8501620f878432d5c04331ad1ae47f977a83ba41a5");
    CHECK(ws::ksigns_iq2xs[1] == 129);
    CHECK(ws::ksigns_iq2xs[127] == 255);
}

TEST_CASE("i-quant grids match ggml-common.h and hold only their lattice values") {
    struct Grid {
        const char* name;
        std::vector<uint64_t> entries;
        size_t width;  // bytes per entry
        std::set<int> values;
        const char* sha256;  // of ggml-common.h's table (ggml d99724f2), entries little-endian
    };
    const Grid grids[] = {
        {"iq2xxs_grid",
         widen(ws::iq2xxs_grid),
         8,
         {8, 25, 43},
         "05826b5d3e472a3a78f196be62ac78acf81df0f909626e12ab9fa2a5d490dd54"},
        {"iq2xs_grid",
         widen(ws::iq2xs_grid),
         8,
         {8, 25, 43},
         "06e47aaca60b4dc1d9b5a3f34540437058a6b142b4d7a59d5ded769b4d1bf1de"},
        {"iq2s_grid",
         widen(ws::iq2s_grid),
         8,
         {8, 25, 43},
         "e1aa1473412b0552c2174c30ef22ab4073f6a181b85a17056e8249bd2932fd88"},
        {"iq3xxs_grid",
         widen(ws::iq3xxs_grid),
         4,
         {4, 12, 20, 28, 36, 44, 52, 62},
         "46e35f5a997efdee6c99ce57854c8a0d4f0ff8ca57e5e8a60c0793ea580acf5d"},
        {"iq3s_grid",
         widen(ws::iq3s_grid),
         4,
         {1, 3, 5, 7, 9, 11, 13, 15},
         "bd1af4945a1717c65610b0284e4628b9a1ba3b306fae3a06f6e5f597356e349f"},
        {"iq1s_grid",
         widen(ws::iq1s_grid),
         8,
         {-1, 0, 1},
         "07540ffc1aeaf6ad4d97e96b0fcc765aae39671d4ae4a27bbd0e796fde167c6a"},
    };
    for (const Grid& g : grids) {
        INFO(g.name);
        CHECK(sha256_of_le(g.entries.data(), g.entries.size(), g.width) == g.sha256);
        const bool is_signed = g.values.count(-1) != 0;
        for (uint64_t e : g.entries) {
            for (size_t j = 0; j < g.width; ++j) {
                const uint8_t byte = static_cast<uint8_t>(e >> (8 * j));
                const int v = is_signed ? static_cast<int8_t>(byte) : byte;
                CHECK(g.values.count(v) == 1);
            }
        }
        CHECK(std::set<uint64_t>(g.entries.begin(), g.entries.end()).size() == g.entries.size());
    }
    CHECK(ws::iq1s_grid[0] == 0xffffffffffffffffull);
    CHECK(ws::iq1s_grid[ws::NGRID_IQ1S - 1] == 0x0101010101010101ull);
    CHECK(ws::IQ1S_DELTA == 0.125f);
    CHECK(ws::IQ1M_DELTA == 0.125f);
    CHECK(ws_test::sha256_hex(reinterpret_cast<const uint8_t*>(ws::kvalues_iq4nl), sizeof ws::kvalues_iq4nl) ==
          "61aa47540aa024b5d6ddaa839b84ffe59f3d5a349af5c6c7ffcb5e0474b46163");
}

namespace {

// One block of an i-quant type whose sign fields make every element of 32-element group g negative for even
// g and positive for odd g (layouts from ggml-common.h), with the f16 scale `d` and mid-range grid indices
// and sub-block scales.
std::vector<uint8_t> alternating_sign_block(uint32_t ggml_id, uint16_t d) {
    std::vector<uint8_t> b;
    auto u16 = [&](uint16_t v) {
        b.push_back(static_cast<uint8_t>(v));
        b.push_back(static_cast<uint8_t>(v >> 8));
    };
    u16(d);
    switch (ggml_id) {
        case 16:  // IQ2_XXS: per group 4 grid bytes, then u32: four 7-bit sign codes (127: all 8 negative), scale
        case 18:  // IQ3_XXS: 64 grid bytes, then per group the same u32
            if (ggml_id == 18) b.insert(b.end(), 64, 0x21);
            for (int g = 0; g < 8; ++g) {
                if (ggml_id == 16) b.insert(b.end(), 4, 0x21);
                const uint32_t aux = (g % 2 == 0 ? 0x0fffffffu : 0u) | (5u << 28);
                for (int i = 0; i < 4; ++i) b.push_back(static_cast<uint8_t>(aux >> (8 * i)));
            }
            break;
        case 17:  // IQ2_XS: u16 per 8 elements: 9-bit grid index, 7-bit sign code; then 8 scale bytes
            for (int g = 0; g < 8; ++g) {
                for (int l = 0; l < 4; ++l) u16(static_cast<uint16_t>((g % 2 == 0 ? 0xfe00u : 0u) | 0x0a5u));
            }
            b.insert(b.end(), 8, 0x35);
            break;
        case 22:  // IQ2_S: 32 grid bytes, 32 sign bytes (one per 8 elements), 8 qh, 8 scales
            b.insert(b.end(), 32, 0x21);
            for (int g = 0; g < 8; ++g) b.insert(b.end(), 4, g % 2 == 0 ? 0xff : 0x00);
            b.insert(b.end(), 8, 0x00);
            b.insert(b.end(), 8, 0x35);
            break;
        case 21:  // IQ3_S: 64 grid bytes, 8 qh, 32 sign bytes (one per 8 elements), 4 scales
            b.insert(b.end(), 64, 0x21);
            b.insert(b.end(), 8, 0x00);
            for (int g = 0; g < 8; ++g) b.insert(b.end(), 4, g % 2 == 0 ? 0xff : 0x00);
            b.insert(b.end(), 4, 0x35);
            break;
        default:
            FAIL("not a signed i-quant");
    }
    return b;
}

}  // namespace

TEST_CASE("i-quant signs flip the sign bit of the product, so NaN scales give ggml's NaN signs") {
    // ggml's `(s ? -1.f : 1.f) * x` is a sign-bit flip in its -O2/-O3 builds (gcc, clang): the NaN that a NaN
    // scale gives takes the element's sign too, where a multiplication by -1 would pass the NaN through.
    for (uint32_t id : {16u, 17u, 18u, 21u, 22u}) {
        const ws::DType t = ws::dtype_from_ggml_id(id);
        // +NaN, -NaN (payload kept), a NaN with payload, +Inf, -Inf, 1.0.
        for (uint16_t d : {uint16_t(0x7e00), uint16_t(0xfe00), uint16_t(0x7c01), uint16_t(0x7c00), uint16_t(0xfc00),
                           uint16_t(0x3c00)}) {
            const std::vector<uint8_t> block = alternating_sign_block(id, d);
            REQUIRE(block.size() == ws::dtype_traits(t).block_bytes);
            const bool d_negative = (d & 0x8000) != 0;
            const bool d_nan = (d & 0x7c00) == 0x7c00 && (d & 0x03ff) != 0;
            std::vector<std::pair<const char*, ws::DequantRowFn>> kernels = {{"scalar", ws::dequant_row_fn_scalar(t)},
                                                                             {"fastest", ws::dequant_row_fn(t)}};
            if (const ws::DequantRowFn avx2 = ws::detail::dequant_row_fn_x86(t, false))
                kernels.push_back({"avx2", avx2});
            for (const auto& kernel : kernels) {
                INFO(ws::dtype_name(t) << " d=0x" << std::hex << d << std::dec << " kernel " << kernel.first);
                float y[256];
                kernel.second(block.data(), y, 256);
                for (int e = 0; e < 256; ++e) {
                    INFO("element " << e);
                    const bool element_negative = (e / 32) % 2 == 0;
                    const uint32_t bits = ws::f32_to_bits(y[e]);
                    CHECK(std::isnan(y[e]) == d_nan);
                    CHECK(((bits >> 31) != 0) == (d_negative != element_negative));
                    if (d_nan) CHECK((bits & 0x7fffffffu) == (ws::f32_to_bits(ws::fp16_to_fp32(d)) & 0x7fffffffu));
                }
            }
        }
    }
}
