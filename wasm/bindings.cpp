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

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "block_stream.h"
#include "dtype.h"
#include "header_parser.h"
#include "info_transfer.h"
#include "model_info.h"
#include "model_json.h"
#include "model_plan.h"
#include "quantize.h"
#include "row_window.h"
#include "safetensors.h"
#include "stats.h"
#include "status.h"
#include "utf8.h"

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

// A row window (core/row_window.h): sizes as doubles, exact to 2^53.
struct JsWindow {
    JsStatus status;
    double offset = 0;  // absolute byte offset
    double nbytes = 0;
    double n_elements = 0;
    double total_rows = 0;
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

    // model_to_json (the CLI's `info --json` object) as compact text, except that the items of flat metadata
    // arrays come from metadata_arrays(), the tensors from tensor_table() and integers beyond 2^53 from
    // wide_integers() (see info_transfer.h).
    std::string info_json() const { return info_json_without_tables(info_); }

    // The metadata integers a double cannot hold: [[entry, path, decimal]], path the item indices inside
    // nested arrays ([] for a scalar). Flat arrays of 64-bit integers cross as their bytes instead.
    val wide_integers() const {
        val list = val::array();
        for (size_t i = 0; i < info_.metadata.size(); ++i) {
            const Value& v = info_.metadata[i].value;
            if (v.type == ValueType::kArray && v.item_type != ValueType::kArray) continue;
            std::vector<double> path;
            add_wide(v, double(i), &path, &list);
        }
        return list;
    }

    // The tensor table as columns: {names: {units, utf16Ends, invalid: [[i, text, hex]]}, dtypeNames,
    // dtype: Uint16Array (index into dtypeNames), shape + shapeEnds (outermost first; for a GGUF ne is the
    // same dims reversed), offset, nbytes, nElements, rows: Float64Array, file: Uint32Array (index into info.files,
    // only for a model in several files), wide: [[tensor, field, dim, decimal]] for values beyond 2^53}.
    val tensor_table() const {
        const size_t n = info_.tensors.size();
        std::vector<std::string> names(n), dtype_names;
        std::vector<uint16_t> dtype(n);
        std::vector<uint32_t> shape_ends(n), file(n);
        std::vector<double> shape, offset(n), nbytes(n), n_elements(n), rows(n);
        val wide = val::array();
        auto number = [&](uint64_t v, size_t tensor, const char* field, size_t dim) {
            if (exact_in_double(v)) return double(v);
            val w = val::array();
            w.call<void>("push", double(tensor));
            w.call<void>("push", std::string(field));
            w.call<void>("push", double(dim));
            w.call<void>("push", std::to_string(v));
            wide.call<void>("push", w);
            return 0.0;
        };
        for (size_t i = 0; i < n; ++i) {
            const TensorInfo& t = info_.tensors[i];
            names[i] = t.name;
            const std::string dn = t.dtype_name();
            size_t k = 0;
            while (k < dtype_names.size() && dtype_names[k] != dn) ++k;
            if (k == dtype_names.size()) dtype_names.push_back(dn);
            dtype[i] = static_cast<uint16_t>(k);
            const std::vector<int64_t> dims = t.shape();
            for (size_t d = 0; d < dims.size(); ++d) {
                shape.push_back(number(static_cast<uint64_t>(dims[d]), i, "shape", d));
            }
            shape_ends[i] = static_cast<uint32_t>(shape.size());
            offset[i] = number(t.offset, i, "offset", 0);
            nbytes[i] = number(t.nbytes, i, "nbytes", 0);
            n_elements[i] = number(t.n_elements, i, "n_elements", 0);
            rows[i] = number(row_count(t), i, "rows", 0);
            file[i] = t.file_index;
        }
        PackedStrings packed;
        if (!pack_strings(names, &packed)) return val::null();
        val packed_names = val::object();
        packed_names.set("units", copy_to_js("Uint16Array", packed.utf16.data(), packed.utf16.size()));
        packed_names.set("utf16Ends", copy_to_js("Uint32Array", packed.utf16_ends.data(), packed.utf16_ends.size()));
        val invalid = val::array();
        for (uint32_t k : packed.invalid) {
            val entry = val::array();
            entry.call<void>("push", k);
            entry.call<void>("push", utf8_replace_invalid(names[k]));
            entry.call<void>("push", hex_of(names[k]));
            invalid.call<void>("push", entry);
        }
        packed_names.set("invalid", invalid);
        val table = val::object();
        table.set("names", packed_names);
        val dnames = val::array();
        for (const std::string& d : dtype_names) dnames.call<void>("push", d);
        table.set("dtypeNames", dnames);
        table.set("dtype", copy_to_js("Uint16Array", dtype.data(), n));
        table.set("shape", copy_to_js("Float64Array", shape.data(), shape.size()));
        table.set("shapeEnds", copy_to_js("Uint32Array", shape_ends.data(), n));
        table.set("offset", copy_to_js("Float64Array", offset.data(), n));
        table.set("nbytes", copy_to_js("Float64Array", nbytes.data(), n));
        table.set("nElements", copy_to_js("Float64Array", n_elements.data(), n));
        table.set("rows", copy_to_js("Float64Array", rows.data(), n));
        if (info_.files.size() > 1) table.set("file", copy_to_js("Uint32Array", file.data(), n));
        table.set("wide", wide);
        return table;
    }

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
                    pair.call<void>("push", utf8_replace_invalid(v.strings[k]));
                    invalid.call<void>("push", pair);
                }
                a.set("invalid", invalid);
            }
            list.call<void>("push", a);
        }
        return list;
    }

    // Frees the metadata (the JavaScript keeps it as JSON); the tensor table stays for row_window.
    void release_metadata() { std::vector<MetadataEntry>().swap(info_.metadata); }

    // Moves the description out (for Plan::add); the Model is left empty.
    ModelInfo take_info() { return std::move(info_); }

    JsWindow row_window(double tensor_index, double start_row, double n_rows) const {
        JsWindow r;
        const uint64_t i = to_u64(tensor_index);
        if (i >= info_.tensors.size()) {
            r.status = to_js(make_error(Error::kInternal, 0, "row_window: tensor index"));
            return r;
        }
        Result<RowWindow> w = ws::row_window(info_.tensors[i], to_u64(start_row), to_u64(n_rows));
        r.status = to_js(w.status());
        if (!w.ok()) return r;
        r.offset = double(w.value().offset);
        r.nbytes = double(w.value().nbytes);
        r.n_elements = double(w.value().n_elements);
        r.total_rows = double(w.value().total_rows);
        return r;
    }

private:
    // Lists the 64-bit integers of v (at `path` inside entry `entry`) that a double cannot hold.
    static void add_wide(const Value& v, double entry, std::vector<double>* path, val* list) {
        if (v.type == ValueType::kArray) {
            for (size_t k = 0; k < v.arrays.size(); ++k) {
                path->push_back(double(k));
                add_wide(v.arrays[k], entry, path, list);
                path->pop_back();
            }
            if (v.item_type == ValueType::kUint64 || v.item_type == ValueType::kInt64) {
                for (uint64_t k = 0; k < v.length; ++k) {
                    path->push_back(double(k));
                    add_wide(v.scalar_item(k), entry, path, list);
                    path->pop_back();
                }
            }
            return;
        }
        if (v.type != ValueType::kUint64 && v.type != ValueType::kInt64) return;
        const bool negative = v.type == ValueType::kInt64 && static_cast<int64_t>(v.bits) < 0;
        const uint64_t magnitude = negative ? 0 - v.bits : v.bits;
        if (exact_in_double(magnitude)) return;
        val w = val::array();
        w.call<void>("push", entry);
        val p = val::array();
        for (double k : *path) p.call<void>("push", k);
        w.call<void>("push", p);
        w.call<void>("push", negative ? std::to_string(static_cast<int64_t>(v.bits)) : std::to_string(v.bits));
        list->call<void>("push", w);
    }

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

// Which files make up a model and their merge (core/model_plan.h): the JavaScript reads the files the plan
// lists, parses each header with a Parser and adds the parsed parts back in plan order.
class Plan {
public:
    Plan(double max_split_parts, bool split, bool model_files_only) {
        options_.max_split_parts = static_cast<uint32_t>(std::min(to_u64(max_split_parts), uint64_t(UINT32_MAX)));
        options_.split = split;
        options_.model_files_only = model_files_only;
    }

    // sources: [{name: string | undefined, siblings: boolean}], what is known of each source given.
    JsStatus plan(const val& sources) {
        std::vector<PlanSource> list(sources["length"].as<size_t>());
        for (size_t i = 0; i < list.size(); ++i) {
            const val name = sources[i]["name"];
            list[i].named = name.isString();
            if (list[i].named) list[i].name = name.as<std::string>();
            list[i].siblings = sources[i]["siblings"].as<bool>();
        }
        return to_js(plan_.plan(list, options_));
    }
    // After an error of plan(), checkIndexSize() or setIndex(): the text to show, or "" (then the Status
    // says it all).
    std::string message() const { return plan_.message(); }
    // After plan() failed: the source (index in the list) the message is about without naming it, or -1.
    double failed_source() const { return plan_.failed_source() == kSibling ? -1.0 : double(plan_.failed_source()); }

    std::string kind() const {
        return plan_.kind() == PlanKind::kSplit ? "split" : plan_.kind() == PlanKind::kShards ? "shards" : "single";
    }
    // [{name, source, format}] in the model's file order; source: the index of the source given, or -1 (a
    // sibling); format: the Parser's format hint from the name ("gguf", "safetensors" or "").
    val parts() const {
        val list = val::array();
        for (const PlanPart& p : plan_.parts()) {
            val part = val::object();
            part.set("name", p.name);
            part.set("source", p.source == kSibling ? -1.0 : double(p.source));
            const Format hint = format_from_name(p.name);
            part.set("format", std::string(hint == Format::kUnknown ? "" : format_name(hint)));
            list.call<void>("push", part);
        }
        return list;
    }
    // The source that is an index still to read (then setIndex), or -1.
    double index_source() const { return plan_.index_source() == kSibling ? -1.0 : double(plan_.index_source()); }
    JsStatus check_index_size(double size) { return to_js(plan_.check_index_size(to_u64(size))); }
    JsStatus set_index(const val& json) {
        // Checked before the copy into wasm memory.
        const Status size = plan_.check_index_size(to_u64(json["length"].as<double>()));
        if (!size.ok()) return to_js(size);
        std::vector<uint8_t> bytes;
        copy_from_js(json, &bytes);
        return to_js(plan_.set_index(bytes.data(), bytes.size()));
    }

    // Takes the description of the next file in parts() order (a Model fresh from Parser::take_model, left
    // empty), whose size is file_size (< 0: unknown).
    void add(Model& part, double file_size) {
        ModelInfo info = part.take_info();
        info.file_size = to_u64(file_size);
        infos_.push_back(std::move(info));
    }
    // Merges the parts added. failedPart() then names the part an error is in, kept() the parts that are the
    // model's files.
    JsStatus merge() {
        Result<ModelInfo> merged = plan_.merge(std::move(infos_), &failed_);
        infos_.clear();
        if (!merged.ok()) return to_js(merged.status());
        merged_ = std::move(merged).value();
        return to_js(ok_status());
    }
    // After merge failed: the part (in parts() order) its error is in, or -1 (the index, or all of them).
    double failed_part() const { return failed_ == kNoPart ? -1.0 : static_cast<double>(failed_); }
    val kept() const {
        val list = val::array();
        for (uint32_t i : plan_.kept()) list.call<void>("push", i);
        return list;
    }
    // After merge returned ok: the merged model.
    Model* take_model() { return new Model(std::move(merged_)); }

private:
    PlanOptions options_;
    ModelPlan plan_;
    std::vector<ModelInfo> infos_;
    ModelInfo merged_;
    uint32_t failed_ = kNoPart;
};

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

// The statistics of a tensor (or a window of it) whose bytes arrive in chunks: decoded by a BlockStream into
// a buffer of its own, summarised by the core's StatsAccumulator; only the result goes to JavaScript.
class StatsDecoder {
public:
    StatsDecoder(int dtype, double n_elements, bool big_endian)
        : stream_(static_cast<DType>(static_cast<uint32_t>(dtype)), to_u64(n_elements), big_endian) {}

    JsStatus status() const { return to_js(stream_.status()); }

    JsStatus feed(const val& chunk) {
        copy_from_js(chunk, &staging_);
        floats_.resize(stream_.floats_for(staging_.size()));
        size_t n = 0;
        const Status s = stream_.feed(staging_.data(), staging_.size(), floats_.data(), floats_.size(), &n);
        if (s.ok()) stats_.add(floats_.data(), n);
        return to_js(s);
    }

    // Drops the buffers (one chunk's bytes and values) without ending the stream, as Decoder::trim.
    void trim() {
        std::vector<uint8_t>().swap(staging_);
        std::vector<float>().swap(floats_);
    }

    // After every byte was fed: {status, count, finite, min, max, mean, std, nan, posInf, negInf, zeros,
    // histogram: Float64Array, edges: Float64Array}; NaN statistics when no value is finite.
    val finish(double bins) const {
        val r = val::object();
        r.set("status", to_js(stream_.finish()));
        const Stats st = stats_.finish(static_cast<uint32_t>(std::min<uint64_t>(to_u64(bins), kStatsMaxBins)));
        r.set("count", double(st.count));
        r.set("finite", double(st.finite));
        r.set("min", st.min);
        r.set("max", st.max);
        r.set("mean", st.mean);
        r.set("std", st.std);
        r.set("nan", double(st.nan));
        r.set("posInf", double(st.pos_inf));
        r.set("negInf", double(st.neg_inf));
        r.set("zeros", double(st.zeros));
        std::vector<double> counts(st.histogram.begin(), st.histogram.end());
        r.set("histogram", copy_to_js("Float64Array", counts.data(), counts.size()));
        r.set("edges", copy_to_js("Float64Array", st.edges.data(), st.edges.size()));
        return r;
    }

private:
    BlockStream stream_;
    StatsAccumulator stats_;
    std::vector<uint8_t> staging_;
    std::vector<float> floats_;
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

// The name of every error code, in the order of their numbers: the one list the package's and the page's
// codes are checked against (tests/js/errors.test.mjs).
val error_names() {
    val list = val::array();
    for (int code = 0; code < static_cast<int>(Error::kEnd); ++code)
        list.call<void>("push", std::string(error_name(static_cast<Error>(code))));
    return list;
}

}  // namespace
}  // namespace ws

EMSCRIPTEN_BINDINGS(weightstream) {
    using namespace emscripten;
    using ws::Decoder;
    using ws::JsStatus;
    using ws::JsWindow;
    using ws::Model;
    using ws::Parser;
    using ws::Plan;
    using ws::StatsDecoder;

    value_object<JsStatus>("Status")
        .field("code", &JsStatus::code)
        .field("name", &JsStatus::name)
        .field("offset", &JsStatus::offset)
        .field("what", &JsStatus::what);
    value_object<JsWindow>("RowWindow")
        .field("status", &JsWindow::status)
        .field("offset", &JsWindow::offset)
        .field("nbytes", &JsWindow::nbytes)
        .field("nElements", &JsWindow::n_elements)
        .field("totalRows", &JsWindow::total_rows);

    class_<Model>("Model")
        .function("infoJson", &Model::info_json)
        .function("metadataArrays", &Model::metadata_arrays)
        .function("wideIntegers", &Model::wide_integers)
        .function("tensorTable", &Model::tensor_table)
        .function("releaseMetadata", &Model::release_metadata)
        .function("rowWindow", &Model::row_window);
    class_<Parser>("Parser")
        .constructor<double, std::string>()
        .function("feed", &Parser::feed)
        .function("bytesNeeded", &Parser::bytes_needed)
        .function("takeModel", &Parser::take_model, allow_raw_pointers());
    class_<Plan>("Plan")
        .constructor<double, bool, bool>()
        .function("plan", &Plan::plan)
        .function("message", &Plan::message)
        .function("failedSource", &Plan::failed_source)
        .function("kind", &Plan::kind)
        .function("parts", &Plan::parts)
        .function("indexSource", &Plan::index_source)
        .function("checkIndexSize", &Plan::check_index_size)
        .function("setIndex", &Plan::set_index)
        .function("add", &Plan::add)
        .function("merge", &Plan::merge)
        .function("failedPart", &Plan::failed_part)
        .function("kept", &Plan::kept)
        .function("takeModel", &Plan::take_model, allow_raw_pointers());
    class_<Decoder>("Decoder")
        .constructor<int, double, bool, bool>()
        .function("status", &Decoder::status)
        .function("feed", &Decoder::feed)
        .function("written", &Decoder::written)
        .function("finish", &Decoder::finish)
        .function("trim", &Decoder::trim);

    class_<StatsDecoder>("StatsDecoder")
        .constructor<int, double, bool>()
        .function("status", &StatsDecoder::status)
        .function("feed", &StatsDecoder::feed)
        .function("finish", &StatsDecoder::finish)
        .function("trim", &StatsDecoder::trim);

    function("dtypes", &ws::dtypes);
    function("errorNames", &ws::error_names);
    constant("maxIndexBytes", double(ws::kMaxIndexBytes));
    constant("defaultMaxSplitParts", ws::kDefaultMaxSplitParts);
}
