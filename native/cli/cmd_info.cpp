// SPDX-License-Identifier: MIT
// `info` and `tensors`: the header, for people (a summary, the metadata, the tensor table) or as JSON.
#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>

#include "cli/cli.h"
#include "io/io_metrics.h"
#include "weightstream/model_facts.h"
#include "weightstream/model_json.h"

namespace ws::cli {
namespace {

constexpr size_t kShownItems = 8;         // array items shown before "..."
constexpr size_t kShownStringBytes = 96;  // string bytes shown before the cut

std::string shape_text(const TensorInfo& t) {
    std::string s = "[";
    const std::vector<int64_t> shape = t.shape();
    for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
    return s + "]";
}

// The shortest decimal that reads back as the same float32 (1e-05, not 9.999999747378752e-06).
std::string float32_text(const Value& v) {
    const float f = static_cast<float>(v.as_double());
    char buf[32];
    if (f == static_cast<float>(static_cast<int64_t>(f)) && std::fabs(f) < 1e9f && f != 0) {
        std::snprintf(buf, sizeof buf, "%.0f", static_cast<double>(f));  // 10000, not 1e+04
        return buf;
    }
    for (int precision = 1; precision <= 9; ++precision) {
        std::snprintf(buf, sizeof buf, "%.*g", precision, static_cast<double>(f));
        if (std::strtof(buf, nullptr) == f || f != f) break;
    }
    return buf;
}

std::string scalar_text(const Value& v) {
    return v.type == ValueType::kFloat32 ? float32_text(v) : json_dump(value_to_json(v), -1);
}

std::string value_text(const Value& v) {
    if (v.type == ValueType::kString) return "\"" + printable(v.str, kShownStringBytes) + "\"";
    if (v.type != ValueType::kArray) return scalar_text(v);
    std::string s = "[";
    const size_t shown = static_cast<size_t>(std::min<uint64_t>(v.length, kShownItems));
    for (size_t i = 0; i < shown; ++i) {
        if (i) s += ", ";
        if (v.item_type == ValueType::kString) {
            s += "\"" + printable(v.strings[i], 32) + "\"";
        } else if (v.item_type == ValueType::kArray) {
            s += "[" + counted(v.arrays[i].length, "item") + "]";
        } else {
            s += scalar_text(v.scalar_item(i));
        }
    }
    if (v.length > shown) s += ", ... " + with_commas(v.length - shown) + " more";
    return s + "]";
}

std::string type_text(const Value& v) {
    if (v.type != ValueType::kArray) return value_type_name(v.type);
    return std::string("array[") + value_type_name(v.item_type) + "] x" + with_commas(v.length);
}

std::string string_key(const ModelInfo& info, const std::string& key) {
    const MetadataEntry* e = info.find(key);
    return e && e->value.type == ValueType::kString ? printable(e->value.str, kShownStringBytes) : "";
}

void print_summary(const std::string& path, const ModelInfo& info, bool stream) {
    const ModelFacts facts = model_facts(info);
    const uint64_t data_bytes = facts.data_bytes;
    struct DTypeUse {
        uint64_t tensors = 0, bytes = 0;
    };
    std::map<std::string, DTypeUse> by_dtype;
    for (const TensorInfo& t : info.tensors) {
        DTypeUse& use = by_dtype[t.dtype_name()];
        use.tensors++;
        use.bytes += t.nbytes;
    }
    if (stream) {
        std::printf("file:         %s (a stream: size unknown)\n", printable(path, 200).c_str());
    } else {
        std::printf("file:         %s (%s bytes, %s)\n", printable(path, 200).c_str(),
                    with_commas(info.file_size).c_str(), human_bytes(info.file_size).c_str());
    }
    if (info.format == Format::kGguf) {
        std::printf("format:       GGUF v%u, %s-endian, alignment %u\n", info.version,
                    info.big_endian ? "big" : "little", info.alignment);
    } else {
        std::printf("format:       safetensors\n");
    }
    if (info.files.size() > 1) std::printf("parts:        %s\n", counted(info.files.size(), "file").c_str());
    const std::string arch = string_key(info, "general.architecture");
    const std::string name = string_key(info, "general.name");
    if (!arch.empty()) std::printf("architecture: %s\n", arch.c_str());
    if (!name.empty()) std::printf("name:         %s\n", name.c_str());
    std::printf("tensors:      %s\n", with_commas(info.tensors.size()).c_str());
    std::printf("parameters:   %s\n", with_commas(facts.parameter_count).c_str());
    // As llama.cpp prints it at load: tensor bytes * 8 / parameters ("BPW").
    if (!std::isnan(facts.bits_per_weight)) std::printf("bits/weight:  %.2f\n", facts.bits_per_weight);
    if (facts.has_file_type) {
        std::printf("file type:    %s (general.file_type %" PRId64 ")\n",
                    facts.file_type_name ? facts.file_type_name : "unknown", facts.file_type_id);
    }
    if (facts.layer_count) std::printf("layers:       %s\n", with_commas(facts.layer_count).c_str());
    std::printf("data:         %s at byte %s\n", human_bytes(data_bytes).c_str(),
                with_commas(info.data_offset).c_str());
    if (!by_dtype.empty()) {
        std::printf("by dtype:\n");
        for (const auto& [dtype, use] : by_dtype) {
            const double share =
                data_bytes ? 100.0 * static_cast<double>(use.bytes) / static_cast<double>(data_bytes) : 0;
            std::printf("  %-12s %6s %-7s %12s %5.1f%%\n", dtype.c_str(), with_commas(use.tensors).c_str(),
                        use.tensors == 1 ? "tensor" : "tensors", human_bytes(use.bytes).c_str(), share);
        }
    }
    for (const Warning& w : info.warnings) {
        std::printf("warning:      %s (byte %" PRIu64 ")\n", printable(w.message, 200).c_str(), w.offset);
    }
}

void print_metadata(const ModelInfo& info) {
    std::printf("\nmetadata (%s):\n", counted(info.metadata.size(), "key").c_str());
    size_t width = 0;
    for (const MetadataEntry& e : info.metadata) width = std::max(width, std::min<size_t>(e.key.size(), 48));
    for (const MetadataEntry& e : info.metadata) {
        std::printf("  %-*s  %-22s %s\n", static_cast<int>(width), printable(e.key, 64).c_str(),
                    type_text(e.value).c_str(), value_text(e.value).c_str());
    }
}

void print_tensors(const ModelInfo& info) {
    size_t width = 4;
    for (const TensorInfo& t : info.tensors) width = std::max(width, std::min<size_t>(t.name.size(), 64));
    std::printf("%-*s  %-10s %-22s %14s %12s\n", static_cast<int>(width), "name", "dtype", "shape", "offset", "bytes");
    for (const TensorInfo& t : info.tensors) {
        std::printf("%-*s  %-10s %-22s %14s %12s", static_cast<int>(width), printable(t.name, 64).c_str(),
                    t.dtype_name().c_str(), shape_text(t).c_str(), with_commas(t.offset).c_str(),
                    with_commas(t.nbytes).c_str());
        if (info.files.size() > 1) std::printf("  %s", printable(info.files[t.file_index], 64).c_str());
        std::printf("\n");
    }
}

int run(const std::vector<std::string>& argv, bool with_metadata) {
    Args args;
    if (!parse_args(argv, {"--json"}, with_metadata ? std::vector<std::string>{} : std::vector<std::string>{"--filter"},
                    &args)) {
        return kExitUsage;
    }
    if (args.positional.size() != 1) return usage_error();
    TensorFilter filter;
    std::string error;
    if (args.has("--filter") && !filter.parse(args.get("--filter"), &error)) return usage_error(error);
    LoadedModel model;
    int status = kExitOk;
    if (!load(args.positional[0], false, &model, &status)) return status;
    if (args.has("--filter")) {
        // The table (and JSON) of the matching tensors only; nothing after this reads the others.
        std::vector<TensorInfo>& tensors = model.info.tensors;
        tensors.erase(std::remove_if(tensors.begin(), tensors.end(),
                                     [&](const TensorInfo& t) { return !filter.matches(t.name); }),
                      tensors.end());
        if (tensors.empty()) warn("--filter " + args.get("--filter") + " matches no tensor");
    }
    if (args.has("--json")) {
        // Written as it is produced: a vocabulary's JSON is megabytes. With "io" (io_metrics.h), the object's
        // end ("\n}") is held back and "io" written as its last member.
        const bool io = io_in_json();
        struct Held {
            bool hold;
            std::string tail;  // the last bytes written, not yet printed
        } held{io, {}};
        JsonWriter w(
            1,
            [](void* context, const char* data, size_t size) {
                auto* h = static_cast<Held*>(context);
                if (!h->hold) {
                    std::fwrite(data, 1, size, stdout);
                    return;
                }
                h->tail.append(data, size);
                const size_t keep = std::min<size_t>(h->tail.size(), 2);
                std::fwrite(h->tail.data(), 1, h->tail.size() - keep, stdout);
                h->tail.erase(0, h->tail.size() - keep);
            },
            &held);
        write_model_json(model.info, JsonParts{with_metadata, true, true}, &w);
        w.finish();
        if (io) {
            std::string text = json_dump(io_json());
            for (size_t at = 0; (at = text.find('\n', at)) != std::string::npos; at += 2) text.insert(at + 1, " ");
            std::printf(",\n \"io\": %s\n}", text.c_str());
        }
        std::fputc('\n', stdout);
        return kExitOk;
    }
    if (with_metadata) {
        print_summary(args.positional[0], model.info,
                      model.files.size() == 1 && model.files[0].is_stream() && model.info.file_size == 0);
        print_metadata(model.info);
        std::printf("\ntensors (%s):\n", with_commas(model.info.tensors.size()).c_str());
    }
    print_tensors(model.info);
    return kExitOk;
}

}  // namespace

int cmd_info(const std::vector<std::string>& argv) {
    return run(argv, true);
}
int cmd_tensors(const std::vector<std::string>& argv) {
    return run(argv, false);
}

}  // namespace ws::cli
