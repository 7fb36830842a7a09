// SPDX-License-Identifier: MIT
// A consumer of weightstream::core: parses a GGUF file held in memory (written byte by byte below, not by the
// core's writer), decodes its one tensor and prints the model as `info --json` would. Exits 0 only when every
// value is the one written. It includes every public header, so building it against an install also shows that
// the installed headers include nothing that is not installed.
#include <weightstream/block_stream.h>
#include <weightstream/compare.h>
#include <weightstream/dequant.h>
#include <weightstream/dtype.h>
#include <weightstream/gguf.h>
#include <weightstream/gguf_edit.h>
#include <weightstream/gguf_writer.h>
#include <weightstream/header_parser.h>
#include <weightstream/hf_names.h>
#include <weightstream/imatrix.h>
#include <weightstream/json_writer.h>
#include <weightstream/model_facts.h>
#include <weightstream/model_info.h>
#include <weightstream/model_json.h>
#include <weightstream/model_plan.h>
#include <weightstream/parse_options.h>
#include <weightstream/quant_blocks.h>
#include <weightstream/quant_recipe.h>
#include <weightstream/quantize.h>
#include <weightstream/regex.h>
#include <weightstream/row_window.h>
#include <weightstream/safetensors.h>
#include <weightstream/safetensors_writer.h>
#include <weightstream/split.h>
#include <weightstream/stats.h>
#include <weightstream/status.h>
#include <weightstream/unicode.h>
#include <weightstream/utf8.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

namespace {

void put_u32(std::vector<uint8_t>& out, uint32_t v) {
    for (int i = 0; i < 4; ++i) out.push_back(static_cast<uint8_t>(v >> (8 * i)));
}
void put_u64(std::vector<uint8_t>& out, uint64_t v) {
    for (int i = 0; i < 8; ++i) out.push_back(static_cast<uint8_t>(v >> (8 * i)));
}
void put_string(std::vector<uint8_t>& out, const std::string& s) {
    put_u64(out, s.size());
    out.insert(out.end(), s.begin(), s.end());
}

int fail(const char* what) {
    std::fprintf(stderr, "consumer: %s\n", what);
    return 1;
}

}  // namespace

int main() {
    // GGUF v3: one string KV, one F32 tensor "t" of 2 elements at data offset 0, data aligned to 32.
    std::vector<uint8_t> file = {'G', 'G', 'U', 'F'};
    put_u32(file, 3);  // version
    put_u64(file, 1);  // tensors
    put_u64(file, 1);  // metadata entries
    put_string(file, "general.architecture");
    put_u32(file, 8);  // GGUF_TYPE_STRING
    put_string(file, "llama");
    put_string(file, "t");
    put_u32(file, 1);  // n_dims
    put_u64(file, 2);  // ne[0]
    put_u32(file, 0);  // GGML_TYPE_F32
    put_u64(file, 0);  // offset in the data section
    const uint64_t data_offset = (file.size() + 31) / 32 * 32;
    file.resize(data_offset, 0);
    const float values[2] = {1.5f, -2.0f};
    const uint8_t* value_bytes = reinterpret_cast<const uint8_t*>(values);  // the test hosts are little-endian
    file.insert(file.end(), value_bytes, value_bytes + sizeof(values));

    ws::ParseOptions options;
    options.file_size = file.size();
    ws::HeaderParser parser(options);
    const ws::Status status = parser.feed(file.data(), file.size());
    if (!status.ok()) {
        std::fprintf(stderr, "consumer: parse failed: %s at %llu (%s)\n", ws::error_name(status.code),
                     static_cast<unsigned long long>(status.offset), status.what);
        return 1;
    }
    const ws::ModelInfo& info = parser.info();
    if (info.format != ws::Format::kGguf || info.version != 3 || info.data_offset != data_offset) {
        return fail("wrong format, version or data offset");
    }
    const ws::MetadataEntry* arch = info.find("general.architecture");
    if (arch == nullptr || arch->value.type != ws::ValueType::kString || arch->value.str != "llama") {
        return fail("general.architecture is not \"llama\"");
    }
    const ws::TensorInfo* t = info.find_tensor("t");
    if (t == nullptr || t->dtype != ws::DType::F32 || t->n_elements != 2 || t->offset != data_offset ||
        t->nbytes != 8) {
        return fail("tensor t is not F32[2] at the data offset");
    }
    float decoded[2] = {0, 0};
    if (!ws::dequantize(t->dtype, file.data() + t->offset, t->n_elements, decoded).ok() || decoded[0] != 1.5f ||
        decoded[1] != -2.0f) {
        return fail("tensor t does not decode to {1.5, -2}");
    }
    // The regex engine and the Unicode tables generated at build time are in the library.
    auto re = ws::Regex::compile("\\p{Lu}\\p{Ll}+(?!\\S)");
    if (!re.ok() || !re.value().search(std::string("blk.0 Attn")) || ws::unicode_to_lower('Q') != 'q') {
        return fail("the regex engine or the Unicode tables");
    }
    // nlohmann_json comes with the target (model_json.h's value_to_json returns nlohmann::json).
    const nlohmann::json j = nlohmann::json::parse(ws::model_json(info, ws::JsonParts{}, 1));
    if (j.at("tensors").at(0).at("name") != "t") return fail("model_json lost the tensor");
    std::printf("%s\n", ws::json_dump(j).c_str());
    return 0;
}
