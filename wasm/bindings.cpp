// SPDX-License-Identifier: MIT
// Embind adapters between the core and the npm package's JavaScript (wasm/js/). Only adapters live here:
// parsing, decoding and size arithmetic are the core's. The rules of the boundary (TOOLCHAIN.md):
// - no exception crosses it (the core has none); failures come back as a Status record
//   {code, name, offset, what} that the JavaScript turns into an Error;
// - sizes and offsets cross as doubles (exact to 2^53), so the API needs no BigInt;
// - bytes come in as a Uint8Array copied into wasm memory with one TypedArray.set, and results go out by
//   TypedArray.set into arrays the JavaScript owns: no view of wasm memory outlives a call (a later memory
//   growth would detach it).
#include <emscripten/bind.h>
#include <emscripten/val.h>

#include <cstdint>
#include <string>
#include <vector>

#include "block_stream.h"
#include "dtype.h"
#include "header_parser.h"
#include "info_transfer.h"
#include "model_info.h"
#include "model_json.h"
#include "quantize.h"
#include "safetensors.h"
#include "split.h"
#include "status.h"

namespace ws {
namespace {

using emscripten::typed_memory_view;
using emscripten::val;

struct JsStatus {
    int code = 0;
    std::string name;  // error_name(code): what JavaScript exposes as error.code
    double offset = 0;
    std::string what;
};

JsStatus to_js(const Status& s) {
    return JsStatus{static_cast<int>(s.code), error_name(s.code), double(s.offset), s.what};
}

struct JsRange {
    JsStatus status;
    double offset = 0;  // absolute byte offset
    double nbytes = 0;
};

// A JavaScript number that is a size or offset: negative, NaN or beyond 2^64 saturate so the core's own
// range checks reject it.
uint64_t to_u64(double d) {
    if (!(d > 0)) return 0;
    if (d >= 18446744073709551616.0) return UINT64_MAX;
    return static_cast<uint64_t>(d);
}

// Copies a Uint8Array into `out` (resized to its length).
void copy_from_js(const val& bytes, std::vector<uint8_t>* out) {
    const size_t n = bytes["length"].as<size_t>();
    out->resize(n);
    if (n) val(typed_memory_view(n, out->data())).call<void>("set", bytes);  // view made after the resize
}

// A new JavaScript typed array holding a copy of n elements at p.
template <typename T>
val copy_to_js(const char* array_type, const T* p, size_t n) {
    return val::global(array_type).new_(typed_memory_view(n, p));
}

// One parsed model: the core's ModelInfo and what the JavaScript asks of it.
class Model {
public:
    explicit Model(ModelInfo info) : info_(std::move(info)) {}

    // model_to_json (the CLI's `info --json` object) as compact text, 64-bit integers printed exactly, except
    // that the items of flat metadata arrays come from metadata_arrays() (see info_transfer.h).
    std::string info_json() { return info_json_without_flat_arrays(info_); }

    // The flat metadata arrays: [{entry, length, bytes: Uint8Array}] for scalars (stored little-endian
    // bytes), [{entry, length, units: Uint16Array, utf16Ends: Uint32Array, invalid: [[index, json], ...]}] for
    // strings (PackedStrings).
    val metadata_arrays() const {
        val list = val::array();
        for (size_t i = 0; i < info_.metadata.size(); ++i) {
            const Value& v = info_.metadata[i].value;
            if (!is_flat_array(v)) continue;
            val a = val::object();
            a.set("entry", double(i));
            a.set("length", double(v.length));
            if (v.item_type != ValueType::kString) {
                a.set("bytes", copy_to_js("Uint8Array", v.raw.data(), v.raw.size()));
            } else {
                PackedStrings packed;
                if (!pack_strings(v.strings, &packed)) return val::null();
                a.set("units", copy_to_js("Uint16Array", packed.utf16.data(), packed.utf16.size()));
                a.set("utf16Ends", copy_to_js("Uint32Array", packed.utf16_ends.data(), packed.utf16_ends.size()));
                val invalid = val::array();
                for (uint32_t k : packed.invalid) {
                    val pair = val::array();
                    pair.call<void>("push", k);
                    pair.call<void>("push", json_dump(nlohmann::json(v.strings[k]), -1));
                    invalid.call<void>("push", pair);
                }
                a.set("invalid", invalid);
            }
            list.call<void>("push", a);
        }
        return list;
    }

    // Frees the metadata (the JavaScript keeps it as JSON); the tensor table stays for row_range.
    void release_metadata() { std::vector<MetadataEntry>().swap(info_.metadata); }

    double tensor_count() const { return double(info_.tensors.size()); }

    // Moves the description out (for Parts::add); the Model is left empty.
    ModelInfo take_info() { return std::move(info_); }

    JsRange row_range(double tensor_index, double start_row, double n_rows) const {
        JsRange r;
        const uint64_t i = to_u64(tensor_index);
        if (i >= info_.tensors.size()) {
            r.status = to_js(make_error(Error::kInternal, 0, "row_range: tensor index"));
            return r;
        }
        uint64_t offset = 0, nbytes = 0;
        r.status = to_js(ws::row_range(info_.tensors[i], to_u64(start_row), to_u64(n_rows), &offset, &nbytes));
        r.offset = double(offset);
        r.nbytes = double(nbytes);
        return r;
    }

private:
    ModelInfo info_;
};

// HeaderParser over chunks handed in by the JavaScript.
class Parser {
public:
    // file_size < 0: unknown (a stream); the data phase then reports truncation. format_hint: "gguf" or
    // "safetensors" when the file's name says so (the CLI's rule), else "": it only picks which parser
    // explains bytes that announce neither format.
    Parser(double file_size, const std::string& format_hint) : parser_(options_for(file_size, format_hint)) {}

    JsStatus feed(const val& chunk) {
        copy_from_js(chunk, &staging_);
        const Status s = parser_.feed(staging_.data(), staging_.size());
        return to_js(s);
    }
    double bytes_needed() const { return double(parser_.bytes_needed()); }
    double bytes_fed() const { return double(parser_.bytes_fed()); }

    // After feed() returned ok: the parsed model (the parser keeps nothing).
    Model* take_model() {
        std::vector<uint8_t>().swap(staging_);
        return new Model(parser_.take_info());
    }

private:
    static ParseOptions options_for(double file_size, const std::string& format_hint) {
        ParseOptions o;
        if (file_size >= 0) o.file_size = to_u64(file_size);
        if (format_hint == "gguf") o.format_hint = Format::kGguf;
        if (format_hint == "safetensors") o.format_hint = Format::kSafetensors;
        return o;
    }

    HeaderParser parser_;
    std::vector<uint8_t> staging_;
};

// The files of one model stored in several (core/split.h): the parsed parts, merged by the core into one
// Model whose tensors know their file.
class Parts {
public:
    // A sharded safetensors model's index (its JSON bytes); shard_files() then lists the shards to add, in
    // this order.
    JsStatus set_index(const val& json) {
        std::vector<uint8_t> bytes;
        copy_from_js(json, &bytes);
        Result<SafetensorsIndex> index = parse_safetensors_index(bytes.data(), bytes.size());
        if (!index.ok()) return to_js(index.status());
        index_ = std::move(index).value();
        return to_js(ok_status());
    }
    val shard_files() const {
        val list = val::array();
        for (const std::string& f : index_.shard_files) list.call<void>("push", f);
        return list;
    }

    // Takes the description of one file (a Model fresh from Parser::take_model, left empty) as the file
    // `name` of size `file_size` (< 0: unknown).
    void add(Model& part, const std::string& name, double file_size) {
        ModelInfo info = part.take_info();
        info.file_size = to_u64(file_size);
        infos_.push_back(std::move(info));
        names_.push_back(name);
    }

    // Merges the parts (added in part order) of a split GGUF.
    JsStatus combine_gguf() { return finish(combine_gguf_split(std::move(infos_), names_, &failed_)); }
    // Merges the shards (added in shard_files() order) of a sharded safetensors model.
    JsStatus combine_safetensors() { return finish(combine_safetensors_shards(index_, std::move(infos_), &failed_)); }
    // After a combine failed: the part (in add() order) its error is in, or -1 (the index).
    double failed_part() const { return failed_ == kNoPart ? -1.0 : static_cast<double>(failed_); }

    // After a combine returned ok: the merged model.
    Model* take_model() { return new Model(std::move(merged_)); }

private:
    JsStatus finish(Result<ModelInfo> merged) {
        infos_.clear();
        if (!merged.ok()) return to_js(merged.status());
        merged_ = std::move(merged).value();
        return to_js(ok_status());
    }

    SafetensorsIndex index_;
    std::vector<ModelInfo> infos_;
    std::vector<std::string> names_;
    ModelInfo merged_;
    uint32_t failed_ = kNoPart;
};

// {prefix, part, count} when `name` is a part of a split GGUF (llama.cpp's naming), else null.
val parse_split(const std::string& name) {
    SplitName split;
    if (!parse_split_name(name, &split)) return val::null();
    val r = val::object();
    r.set("prefix", split.prefix);
    r.set("part", split.part);
    r.set("count", split.count);
    return r;
}

std::string split_part(const std::string& prefix, double part, double count) {
    return split_part_path(prefix, static_cast<uint32_t>(to_u64(part)), static_cast<uint32_t>(to_u64(count)));
}

// BlockStream writing into JavaScript arrays: a Float32Array (f32) or a Uint16Array (f16, rounded from
// the float32 decode as ggml_fp32_to_fp16_row does). big_endian: the tensor is in a big-endian GGUF.
class Decoder {
public:
    Decoder(int dtype, double n_elements, bool as_f16, bool big_endian)
        : stream_(static_cast<DType>(static_cast<uint32_t>(dtype)), to_u64(n_elements), big_endian), as_f16_(as_f16) {}

    JsStatus status() const { return to_js(stream_.status()); }

    // Decodes the next bytes of the tensor; the values of the blocks they complete go to out[out_offset ..].
    // Returns the status; written() tells how many values went out.
    JsStatus feed(const val& chunk, const val& out, double out_offset) {
        written_ = 0;
        copy_from_js(chunk, &staging_);
        floats_.resize(stream_.floats_for(staging_.size()));
        size_t n = 0;
        const Status s = stream_.feed(staging_.data(), staging_.size(), floats_.data(), floats_.size(), &n);
        if (!s.ok() || n == 0) return to_js(s);
        if (as_f16_) {
            halves_.resize(n);
            const Status q = quantize(DType::F16, floats_.data(), n, reinterpret_cast<uint8_t*>(halves_.data()));
            if (!q.ok()) return to_js(q);
            out.call<void>("set", val(typed_memory_view(n, halves_.data())), out_offset);
        } else {
            out.call<void>("set", val(typed_memory_view(n, floats_.data())), out_offset);
        }
        written_ = double(n);
        return to_js(s);
    }
    double written() const { return written_; }
    JsStatus finish() const { return to_js(stream_.finish()); }

    // Drops the buffers (they hold one chunk's bytes and values) without ending the stream.
    void trim() {
        std::vector<uint8_t>().swap(staging_);
        std::vector<float>().swap(floats_);
        std::vector<uint16_t>().swap(halves_);
    }

private:
    BlockStream stream_;
    bool as_f16_;
    double written_ = 0;
    std::vector<uint8_t> staging_;
    std::vector<float> floats_;
    std::vector<uint16_t> halves_;
};

const char* kind_name(DTypeKind k) {
    switch (k) {
        case DTypeKind::kRemoved:
            return "removed";
        case DTypeKind::kFloat:
            return "float";
        case DTypeKind::kInteger:
            return "integer";
        case DTypeKind::kQuantized:
            return "quantized";
        case DTypeKind::kUnknown:
            break;
    }
    return "unknown";
}

val dtype_record(DType t) {
    const DTypeTraits& traits = dtype_traits(t);
    val r = val::object();
    r.set("id", static_cast<uint32_t>(t));
    r.set("name", std::string(traits.name ? traits.name : ""));
    r.set("kind", std::string(kind_name(traits.kind)));
    r.set("blockElements", traits.block_elems);
    r.set("blockBytes", traits.block_bytes);
    r.set("floatsPerElement", dequant_floats_per_element(t));
    r.set("decodable", dtype_decodable(t));
    return r;
}

// Every dtype this build knows: the ggml ids, then the safetensors-only ones.
val dtypes() {
    val list = val::array();
    for (uint32_t id = 0; id < static_cast<uint32_t>(DType::kGgmlCount); ++id) {
        list.call<void>("push", dtype_record(static_cast<DType>(id)));
    }
    for (uint32_t id = static_cast<uint32_t>(DType::BOOL); id < static_cast<uint32_t>(DType::kEnd); ++id) {
        list.call<void>("push", dtype_record(static_cast<DType>(id)));
    }
    return list;
}

std::string error_name_of(int code) {
    return error_name(static_cast<Error>(code));
}

}  // namespace
}  // namespace ws

EMSCRIPTEN_BINDINGS(weightstream) {
    using namespace emscripten;
    using ws::Decoder;
    using ws::JsRange;
    using ws::JsStatus;
    using ws::Model;
    using ws::Parser;
    using ws::Parts;

    value_object<JsStatus>("Status")
        .field("code", &JsStatus::code)
        .field("name", &JsStatus::name)
        .field("offset", &JsStatus::offset)
        .field("what", &JsStatus::what);
    value_object<JsRange>("Range")
        .field("status", &JsRange::status)
        .field("offset", &JsRange::offset)
        .field("nbytes", &JsRange::nbytes);

    class_<Model>("Model")
        .function("infoJson", &Model::info_json)
        .function("metadataArrays", &Model::metadata_arrays)
        .function("releaseMetadata", &Model::release_metadata)
        .function("tensorCount", &Model::tensor_count)
        .function("rowRange", &Model::row_range);
    class_<Parser>("Parser")
        .constructor<double, std::string>()
        .function("feed", &Parser::feed)
        .function("bytesNeeded", &Parser::bytes_needed)
        .function("bytesFed", &Parser::bytes_fed)
        .function("takeModel", &Parser::take_model, allow_raw_pointers());
    class_<Parts>("Parts")
        .constructor<>()
        .function("setIndex", &Parts::set_index)
        .function("shardFiles", &Parts::shard_files)
        .function("add", &Parts::add)
        .function("combineGguf", &Parts::combine_gguf)
        .function("combineSafetensors", &Parts::combine_safetensors)
        .function("failedPart", &Parts::failed_part)
        .function("takeModel", &Parts::take_model, allow_raw_pointers());
    class_<Decoder>("Decoder")
        .constructor<int, double, bool, bool>()
        .function("status", &Decoder::status)
        .function("feed", &Decoder::feed)
        .function("written", &Decoder::written)
        .function("finish", &Decoder::finish)
        .function("trim", &Decoder::trim);

    function("dtypes", &ws::dtypes);
    function("errorName", &ws::error_name_of);
    function("parseSplitName", &ws::parse_split);
    function("splitPartName", &ws::split_part);
}
