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
#include <memory>
#include <string>
#include <vector>

#include "info_transfer.h"
#include "weightstream/block_stream.h"
#include "weightstream/compare.h"
#include "weightstream/dequant.h"
#include "weightstream/dtype.h"
#include "weightstream/gguf_edit.h"
#include "weightstream/header_parser.h"
#include "weightstream/header_reads.h"
#include "weightstream/imatrix.h"
#include "weightstream/model_facts.h"
#include "weightstream/model_info.h"
#include "weightstream/model_json.h"
#include "weightstream/model_plan.h"
#include "weightstream/quant_recipe.h"
#include "weightstream/quantize.h"
#include "weightstream/row_window.h"
#include "weightstream/safetensors.h"
#include "weightstream/stats.h"
#include "weightstream/status.h"
#include "weightstream/utf8.h"

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

// A row window (include/weightstream/row_window.h): sizes as doubles, exact to 2^53.
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

    // model_json (the CLI's `info --json` object) as compact text, except that the items of flat metadata
    // arrays come from metadata_arrays(), the tensors from tensor_table() and integers beyond 2^53 from
    // wide_integers() (see info_transfer.h).
    std::string info_json() const { return info_json_without_tables(info_); }

    // The tensors by layer (include/weightstream/model_facts.h layer_groups): {layers: [{name ("blk.3"), index (3)}],
    // of: Int32Array (tensor i -> the position of its layer in layers; -1 for a tensor in no layer)}.
    val layer_groups_js() const {
        const LayerGroups groups = layer_groups(info_);
        std::vector<int32_t> of(info_.tensors.size(), -1);
        val layers = val::array();
        for (size_t k = 0; k < groups.layers.size(); ++k) {
            val layer = val::object();
            layer.set("name", groups.layers[k].name);
            layer.set("index", groups.layers[k].index);
            layers.call<void>("push", layer);
            for (size_t t : groups.layers[k].tensors) of[t] = static_cast<int32_t>(k);
        }
        val out = val::object();
        out.set("layers", layers);
        out.set("of", copy_to_js("Int32Array", of.data(), of.size()));
        return out;
    }

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
    // bytes), [{entry, length, units: Uint16Array, utf16Ends: Uint32Array, invalid: [[index, text, hex], ...]}]
    // for strings (PackedStrings; the JSON's invalid_items come from `invalid`).
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
                    val entry = val::array();
                    entry.call<void>("push", k);
                    entry.call<void>("push", utf8_replace_invalid(v.strings[k]));
                    entry.call<void>("push", hex_of(v.strings[k]));
                    invalid.call<void>("push", entry);
                }
                a.set("invalid", invalid);
            }
            list.call<void>("push", a);
        }
        return list;
    }

    // Frees the metadata (the JavaScript keeps it as JSON); the tensor table stays for row_window.
    void release_metadata() { std::vector<MetadataEntry>().swap(info_.metadata); }

    // The description, for a Comparison (which reads it while both live) and for Quantizer::plan.
    const ModelInfo& info() const { return info_; }

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

    // An N-D slice (include/weightstream/row_window.h slice_plan): begin and end are arrays of numbers, outermost
    // first. {status, shape, nElements, take, skip, stride, runs: Float64Array of [offset, nbytes, firstRow, rows] per
    // run}, sizes as doubles (exact to 2^53).
    val slice_plan(double tensor_index, const val& begin, const val& end, double max_gap) const {
        val r = val::object();
        const uint64_t i = to_u64(tensor_index);
        const size_t n = begin["length"].as<size_t>();
        if (i >= info_.tensors.size() || end["length"].as<size_t>() != n || n > 4) {
            r.set("status", to_js(make_error(Error::kInternal, 0, "slice_plan: arguments")));
            return r;
        }
        uint64_t b[4];
        uint64_t e[4];
        for (size_t k = 0; k < n; ++k) {
            b[k] = to_u64(begin[k].as<double>());
            e[k] = to_u64(end[k].as<double>());
        }
        Result<SlicePlan> plan = ws::slice_plan(info_.tensors[i], b, e, n, to_u64(max_gap));
        r.set("status", to_js(plan.status()));
        if (!plan.ok()) return r;
        const SlicePlan& p = plan.value();
        val shape = val::array();
        for (int64_t d : p.shape) shape.call<void>("push", double(d));
        r.set("shape", shape);
        r.set("nElements", double(p.n_elements));
        r.set("take", double(p.take));
        r.set("skip", double(p.skip));
        r.set("stride", double(p.run_row_stride));
        std::vector<double> runs;
        runs.reserve(p.runs.size() * 4);
        for (const SliceRun& run : p.runs) {
            runs.insert(runs.end(), {double(run.offset), double(run.nbytes), double(run.first_row), double(run.rows)});
        }
        r.set("runs", copy_to_js("Float64Array", runs.data(), runs.size()));
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
    double bytes_expected() const { return double(parser_.bytes_expected()); }
    const HeaderParser& header_parser() const { return parser_; }

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

// A byte range as JavaScript numbers (exact: a header read stays below kMaxHeaderRead past what was fed).
struct JsRange {
    double offset = 0;
    double length = 0;
};

// The core's header read policy (header_reads.h) over a Parser's state: model.js's parseHeader reads what it says.
class Reads {
public:
    explicit Reads(double source_read_size) : reads_(to_u64(source_read_size)) {}
    JsRange first() const { return to_js(reads_.first()); }
    // file_size < 0: unknown.
    JsRange next(const Parser& parser, double file_size) {
        return to_js(reads_.next(parser.header_parser(), file_size < 0 ? kUnknownSize : to_u64(file_size)));
    }

private:
    static JsRange to_js(ByteRange r) { return JsRange{double(r.offset), double(r.length)}; }

    HeaderReads reads_;
};

// Which files make up a model and their merge (include/weightstream/model_plan.h): the JavaScript reads the files the
// plan lists, parses each header with a Parser and adds the parsed parts back in plan order.
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
    // Values decoded per copy out to JavaScript: a tile that stays in the L2 cache. Decoding a whole chunk
    // (up to millions of values) into the heap before copying it out wrote every value to memory and read it
    // back; a tile is written, copied out while still in cache, and reused.
    static constexpr size_t kTileValues = 1 << 15;

    Decoder(int dtype, double n_elements, bool as_f16, bool big_endian)
        : stream_(static_cast<DType>(static_cast<uint32_t>(dtype)), to_u64(n_elements), big_endian), as_f16_(as_f16) {
        const DType t = static_cast<DType>(static_cast<uint32_t>(dtype));
        const DTypeTraits& traits = dtype_traits(t);
        const size_t block_values = size_t{traits.block_elems} * dequant_floats_per_element(t);
        if (stream_.status().ok() && block_values != 0)
            tile_bytes_ = std::max<size_t>(1, kTileValues / block_values) * traits.block_bytes;
    }

    JsStatus status() const { return to_js(stream_.status()); }

    // Decodes the next bytes of the tensor; the values of the blocks they complete go to out[out_offset ..],
    // a tile at a time. Returns the status; written() tells how many values went out (on an error, those of the
    // tiles before it).
    JsStatus feed(const val& chunk, const val& out, double out_offset) {
        written_ = 0;
        copy_from_js(chunk, &staging_);
        const size_t size = staging_.size();
        if (tile_bytes_ == 0) return to_js(stream_.status());
        for (size_t pos = 0; pos < size;) {
            const size_t n_bytes = std::min(tile_bytes_, size - pos);
            floats_.resize(std::max(floats_.size(), stream_.floats_for(n_bytes)));
            size_t n = 0;
            const Status s = stream_.feed(staging_.data() + pos, n_bytes, floats_.data(), floats_.size(), &n);
            if (!s.ok()) return to_js(s);
            pos += n_bytes;
            if (n == 0) continue;
            if (as_f16_) {
                halves_.resize(std::max(halves_.size(), n));
                const Status q = quantize(DType::F16, floats_.data(), n, reinterpret_cast<uint8_t*>(halves_.data()));
                if (!q.ok()) return to_js(q);
                out.call<void>("set", val(typed_memory_view(n, halves_.data())), out_offset + written_);
            } else {
                out.call<void>("set", val(typed_memory_view(n, floats_.data())), out_offset + written_);
            }
            written_ += double(n);
        }
        return to_js(ok_status());
    }
    double written() const { return written_; }
    JsStatus finish() const { return to_js(stream_.finish()); }

    // Drops the buffers (they hold one chunk's bytes and a tile of values) without ending the stream.
    void trim() {
        std::vector<uint8_t>().swap(staging_);
        std::vector<float>().swap(floats_);
        std::vector<uint16_t>().swap(halves_);
    }

private:
    BlockStream stream_;
    bool as_f16_;
    size_t tile_bytes_ = 0;  // whole blocks of at most kTileValues values; 0 when the stream failed
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

// ---- compare() (issue 11): begin ------------------------------------------------------------------------------
// Comparing two open models (wasm/js/compare.js) with the core's pairing, comparator and JSON writer
// (include/weightstream/compare.h), as `weightstream diff --json` does natively (native/cli/cmd_diff.cpp). The
// JavaScript reads, this adapter decodes and compares; per row it selected:
//   begin(row)            -> {run, a, b, bytes}: run false when the row is decided without values;
//   window()              -> {a: {offset, nbytes}, b: {offset, nbytes}} of the next run of whole outer rows,
//                            or null after the last;
//   feed(bytesA, bytesB)  decodes and compares that window (false: the row became incomparable, done);
//   fail(side, what)      the JavaScript could not read a side's bytes: the row becomes incomparable;
//   rowJson(row)          the row as the report has it; report() the whole report, both as JSON text.
// Memory: one window of each side (about kCompareWindowElements floats, at least one row and one head of
// rows), its bytes, and the comparator's copies (compare.h).

constexpr uint64_t kCompareWindowElements = uint64_t(1) << 20;  // floats per side per window, as the CLI's

class Comparison {
public:
    // config_a, config_b: the bytes of config.json beside a safetensors side (Uint8Array), or null; a file
    // that is not a JSON object is ignored, as the CLI ignores it.
    Comparison(const Model& a, const Model& b, const val& config_a, const val& config_b, const std::string& path_a,
               const std::string& path_b)
        : a_(a.info()), b_(b.info()) {
        PairingOptions options;
        if (read_config(config_a, &config_a_)) options.config_a = &config_a_;
        if (read_config(config_b, &config_b_)) options.config_b = &config_b_;
        plan_ = pair_models(a_, b_, options);
        report_.a = {path_a, a_.format};
        report_.b = {path_b, b_.format};
        report_.mapping = plan_.mapping;
        report_.metadata = diff_metadata(a_, b_);
    }

    // Every pair of the plan: [[nameA | null, nameB | null]] (for the JavaScript's tensors filter).
    val pairs() const {
        val list = val::array();
        for (const PairPlan& p : plan_.pairs) {
            val names = val::array();
            names.call<void>("push", p.a < 0 ? val::null() : val(a_.tensors[static_cast<size_t>(p.a)].name));
            names.call<void>("push", p.b < 0 ? val::null() : val(b_.tensors[static_cast<size_t>(p.b)].name));
            list.call<void>("push", names);
        }
        return list;
    }

    // The report's rows: these plan pairs (indices into pairs()), in this order. Returns false for an index
    // out of range.
    bool select(const val& indices) {
        const size_t n = indices["length"].as<size_t>();
        report_.tensors.clear();
        selected_.clear();
        for (size_t k = 0; k < n; ++k) {
            const double i = indices[k].as<double>();
            if (!(i >= 0 && i < double(plan_.pairs.size()))) return false;
            selected_.push_back(&plan_.pairs[static_cast<size_t>(i)]);
            report_.tensors.push_back(plan_row(a_, b_, *selected_.back()));
        }
        return true;
    }

    // Starts row `row` (an index into the selected rows); the checks are the CLI's (run_pair()).
    val begin(double row) {
        val r = val::object();
        r.set("run", false);
        cmp_.reset();
        if (!(row >= 0 && row < double(selected_.size()))) return r;
        row_ = static_cast<size_t>(row);
        const PairPlan& p = *selected_[row_];
        if (p.a < 0 || p.b < 0 || !p.problem.empty()) return r;
        const TensorInfo& ta = a_.tensors[static_cast<size_t>(p.a)];
        const TensorInfo& tb = b_.tensors[static_cast<size_t>(p.b)];
        std::string problem = decode_problem(a_, ta);
        if (!problem.empty()) {
            incomparable("A: " + problem);
            return r;
        }
        problem = decode_problem(b_, tb);
        if (!problem.empty()) {
            incomparable("B: " + problem);
            return r;
        }
        if (dequant_floats_per_element(ta.dtype) != 1 || dequant_floats_per_element(tb.dtype) != 1) {
            incomparable("complex values are not compared");
            return r;
        }
        cmp_.reset(new PairComparator(p, ta.dtype, tb.dtype));
        step_ = window_step(p, cmp_->window_rows(), ta.dtype, tb.dtype);
        next_ = 0;
        r.set("run", true);
        r.set("a", double(p.a));
        r.set("b", double(p.b));
        r.set("bytes", double(ta.nbytes) + double(tb.nbytes));
        return r;
    }

    // The byte ranges of the next window of the started row (offsets absolute in each tensor's file), or null
    // when every window was fed (or the row ended).
    val window() {
        if (!cmp_ || next_ >= selected_[row_]->rows) return val::null();
        const PairPlan& p = *selected_[row_];
        const uint64_t n = std::min(step_, p.rows - next_);
        val w = val::object();
        w.set("rows", double(n));
        w.set("total", double(p.rows));
        w.set("a", range(a_.tensors[static_cast<size_t>(p.a)], p.a_row0 + next_, n, p.row_elements));
        w.set("b", range(b_.tensors[static_cast<size_t>(p.b)], p.b_row0 + next_, n, p.row_elements));
        return w;
    }

    // Decodes and compares the window window() gave last: bytes_a and bytes_b are exactly its bytes.
    bool feed(const val& bytes_a, const val& bytes_b) {
        if (!cmp_ || next_ >= selected_[row_]->rows) return false;
        const PairPlan& p = *selected_[row_];
        const uint64_t n = std::min(step_, p.rows - next_);
        const TensorInfo& ta = a_.tensors[static_cast<size_t>(p.a)];
        const TensorInfo& tb = b_.tensors[static_cast<size_t>(p.b)];
        Status s = decode(a_, ta, bytes_a, p.a_row0 + next_, n, p.row_elements, &floats_a_);
        if (!s.ok()) return incomparable(std::string("A: cannot decode the tensor (") + error_name(s.code) + ")");
        s = decode(b_, tb, bytes_b, p.b_row0 + next_, n, p.row_elements, &floats_b_);
        if (!s.ok()) return incomparable(std::string("B: cannot decode the tensor (") + error_name(s.code) + ")");
        s = cmp_->add_window(next_, n, floats_a_.data(), floats_b_.data());
        if (!s.ok()) return incomparable(std::string("internal error: ") + s.what);
        next_ += n;
        if (next_ >= p.rows) {
            report_.tensors[row_] = cmp_->finish(std::move(report_.tensors[row_]));
            release();
        }
        return true;
    }

    // side "A" or "B": its bytes could not be read (a truncated file): the row is incomparable, as the CLI
    // calls a tensor whose data lies outside its file.
    void fail(const std::string& side) {
        if (cmp_) incomparable(side + ": the tensor's data lies outside its file (truncated?)");
    }

    std::string row_json(double row) const {
        if (!(row >= 0 && row < double(report_.tensors.size()))) return "null";
        CompareReport one;
        one.tensors.push_back(report_.tensors[static_cast<size_t>(row)]);
        return json_dump(compare_report_to_json(one)["tensors"][0], -1);
    }

    std::string report() const { return json_dump(compare_report_to_json(report_), -1); }

private:
    static bool read_config(const val& bytes, HfConfig* out) {
        if (bytes.isNull() || bytes.isUndefined()) return false;
        std::vector<uint8_t> data;
        copy_from_js(bytes, &data);
        Result<HfConfig> config = parse_hf_config(data.data(), data.size());
        if (!config.ok()) return false;
        *out = std::move(config).value();
        return true;
    }

    // native/io/tensor_io.cpp's decode_problem().
    static std::string decode_problem(const ModelInfo& m, const TensorInfo& t) {
        if (!dtype_decodable(t.dtype)) return "type " + t.dtype_name() + " has no float decoder";
        if (m.big_endian && !big_endian_order_defined(t.dtype)) {
            return "type " + t.dtype_name() + " has no defined big-endian layout (gguf-py cannot swap it either)";
        }
        return "";
    }

    // Rows per window: about kCompareWindowElements elements, a multiple of the comparator's unit and of what
    // keeps both sides' windows on block boundaries (the CLI's window_rows()).
    static uint64_t window_step(const PairPlan& p, uint64_t unit, DType a, DType b) {
        uint64_t m = std::max<uint64_t>(unit, 1);
        for (DType t : {a, b}) {
            const uint64_t blk = dtype_traits(t).block_elems;
            const uint64_t q = blk / gcd(blk, std::max<uint64_t>(p.row_elements, 1));
            m = m / gcd(m, q) * q;
        }
        const uint64_t target = std::max<uint64_t>(1, kCompareWindowElements / std::max<uint64_t>(p.row_elements, 1));
        return std::max<uint64_t>(m, target / m * m);
    }
    static uint64_t gcd(uint64_t x, uint64_t y) {
        while (y) {
            const uint64_t r = x % y;
            x = y;
            y = r;
        }
        return x;
    }

    // {offset, nbytes} of rows [row0, row0 + n) of t (rows of row_elements elements); nbytes 0 when the rows
    // are not on block boundaries (decode() then says bad_shape, as the CLI).
    static val range(const TensorInfo& t, uint64_t row0, uint64_t n, uint64_t row_elements) {
        const DTypeTraits& traits = dtype_traits(t.dtype);
        const uint64_t first = row0 * row_elements, count = n * row_elements;
        val r = val::object();
        const bool aligned = first % traits.block_elems == 0 && count % traits.block_elems == 0;
        r.set("offset", double(t.offset + (aligned ? first / traits.block_elems * traits.block_bytes : 0)));
        r.set("nbytes", aligned ? double(count / traits.block_elems * traits.block_bytes) : 0.0);
        return r;
    }

    // The CLI's decode_rows(), over the bytes the JavaScript read; big-endian data is swapped first.
    Status decode(const ModelInfo& m, const TensorInfo& t, const val& bytes, uint64_t row0, uint64_t n_rows,
                  uint64_t row_elements, std::vector<float>* out) {
        const DTypeTraits& traits = dtype_traits(t.dtype);
        const uint64_t first = row0 * row_elements, n = n_rows * row_elements;
        if (first % traits.block_elems != 0 || n % traits.block_elems != 0) {
            return make_error(Error::kBadShape, t.info_offset, "diff.window");
        }
        const uint64_t nbytes = n / traits.block_elems * traits.block_bytes;
        if (bytes["length"].as<double>() != double(nbytes)) {
            return make_error(Error::kTruncated, t.offset, "compare: window bytes");
        }
        copy_from_js(bytes, &staging_);
        if (m.big_endian) WS_TRY(swap_to_little_endian(t.dtype, staging_.data(), staging_.size()));
        out->resize(static_cast<size_t>(n));
        return dequantize(t.dtype, staging_.data(), n, out->data());
    }

    bool incomparable(const std::string& why) {
        report_.tensors[row_].verdict = Verdict::kIncomparable;
        report_.tensors[row_].hint = why;
        release();
        return false;
    }

    void release() {
        cmp_.reset();
        std::vector<uint8_t>().swap(staging_);
        std::vector<float>().swap(floats_a_);
        std::vector<float>().swap(floats_b_);
    }

    const ModelInfo& a_;
    const ModelInfo& b_;
    HfConfig config_a_, config_b_;
    ComparePlan plan_;
    std::vector<const PairPlan*> selected_;
    CompareReport report_;
    size_t row_ = 0;
    std::unique_ptr<PairComparator> cmp_;
    uint64_t step_ = 1, next_ = 0;
    std::vector<uint8_t> staging_;
    std::vector<float> floats_a_, floats_b_;
};
// ---- compare() (issue 11): end --------------------------------------------------------------------------------
// ---- quantize(): llama-quantize's recipes (include/weightstream/quant_recipe.h) over an open model
// ---------------------------- The JavaScript (wasm/js/quantize.js) plans once, writes header(), then for each planned
// tensor calls begin(k), feeds the tensor's stored bytes in order (output() after each feed gives what they completed)
// and calls finish(). A quantized tensor goes a row window at a time, as the CLI's quantize_rows_streaming does:
// validate the window's input, decode it, quantize_rows(), validate the output. Rows are independent, so the
// bytes are the CLI's whatever the window size. Memory: one window (whole rows of one matrix, at most
// kQuantizeWindowElements floats unless one row is longer) as input bytes, float32 and output, plus the
// bytes of the piece being fed; a copied tensor holds less than one block.

constexpr int64_t kQuantizeWindowElements = int64_t(1) << 22;

// Appends a Uint8Array to `out`.
void append_from_js(const val& bytes, std::vector<uint8_t>* out) {
    const size_t n = bytes["length"].as<size_t>();
    const size_t at = out->size();
    out->resize(at + n);
    if (n) val(typed_memory_view(n, out->data() + at)).call<void>("set", bytes);
}

class Quantizer {
public:
    // Parses an importance matrix file (GGUF or legacy .dat) for plan(); `name` is what
    // quantize.imatrix.file records (the CLI stores the path as typed).
    JsStatus set_imatrix(const val& bytes, const std::string& name) {
        std::vector<uint8_t> data;
        copy_from_js(bytes, &data);
        Result<Imatrix> r = parse_imatrix(data.data(), data.size());
        if (!r.ok()) return to_js(r.status());
        imatrix_ = std::move(r).value();
        imatrix_path_ = name;
        has_imatrix_ = true;
        return to_js(ok_status());
    }

    // recipe: {ftype, pure, leaveOutputTensor, allowRequantize, outputTensorType, tokenEmbeddingType (dtype ids,
    // -1: not given), overrides: [{pattern, type}]}; matcher(index, name): whether override `index` matches.
    // The model must stay open until the last finish().
    JsStatus plan(const Model& model, const val& recipe, const val& matcher) {
        const ModelInfo& info = model.info();
        failed_tensor_.clear();
        planned_ = false;
        if (info.big_endian) return to_js(make_error(Error::kUnsupported, 0, "endianness"));
        RecipeOptions options;
        options.ftype = static_cast<Ftype>(recipe["ftype"].as<uint32_t>());
        options.pure = recipe["pure"].as<bool>();
        options.leave_output_tensor = recipe["leaveOutputTensor"].as<bool>();
        options.allow_requantize = recipe["allowRequantize"].as<bool>();
        const int output_type = recipe["outputTensorType"].as<int>();
        const int embedding_type = recipe["tokenEmbeddingType"].as<int>();
        if (output_type >= 0) options.output_tensor_type = static_cast<DType>(output_type);
        if (embedding_type >= 0) options.token_embedding_type = static_cast<DType>(embedding_type);
        const val overrides = recipe["overrides"];
        const size_t n_overrides = overrides["length"].as<size_t>();
        for (size_t i = 0; i < n_overrides; ++i) {
            TensorTypeOverride o;
            o.pattern = overrides[i]["pattern"].as<std::string>();
            o.type = static_cast<DType>(overrides[i]["type"].as<uint32_t>());
            options.overrides.push_back(o);
        }
        options.matcher = [&matcher](size_t index, const std::string& name) {
            return matcher(double(index), name).as<bool>();
        };
        if (has_imatrix_) {
            options.imatrix = &imatrix_;
            options.imatrix_path = imatrix_path_;
        }
        Result<QuantPlan> planned = plan_quantization(info, options);
        if (!planned.ok()) {
            const Status& s = planned.status();
            for (const TensorInfo& t : info.tensors) {
                if (t.info_offset == s.offset && s.offset != 0) failed_tensor_ = t.name;
            }
            return to_js(s);
        }
        plan_ = std::move(planned).value();
        inputs_.clear();
        for (const PlannedTensor& p : plan_.tensors) {
            const TensorInfo& t = info.tensors[p.input_index];
            if (p.quantize && !quantize_supported(p.out.dtype)) {
                failed_tensor_ = t.name;
                return to_js(make_error(Error::kUnsupported, t.info_offset, "dtype"));
            }
            inputs_.push_back(t);
            inputs_.back().name.clear();  // the JavaScript has the names
        }
        planned_ = true;
        return to_js(ok_status());
    }
    // After plan() failed: the tensor its error is about, or "".
    std::string failed_tensor() const { return failed_tensor_; }

    val header() const { return copy_to_js("Uint8Array", plan_.layout.header.data(), plan_.layout.header.size()); }
    double file_size() const { return double(plan_.layout.file_size); }
    double fallbacks() const { return plan_.n_fallback; }
    val warnings() const {
        val list = val::array();
        for (const std::string& w : plan_.warnings) list.call<void>("push", w);
        return list;
    }
    // [{input (index into the model's tensors), quantize, type, inType, wanted, fallback, requantize, imatrix,
    // offset (absolute, in the output), nbytes, padding}] in output order.
    val tensors() const {
        val list = val::array();
        for (size_t i = 0; i < plan_.tensors.size(); ++i) {
            const PlannedTensor& p = plan_.tensors[i];
            val t = val::object();
            t.set("input", double(p.input_index));
            t.set("quantize", p.quantize);
            t.set("type", std::string(dtype_name(p.out.dtype)));
            t.set("inType", std::string(dtype_name(p.in_type)));
            t.set("wanted", std::string(dtype_name(p.wanted)));
            t.set("fallback", p.fallback);
            t.set("requantize", p.requantize);
            t.set("imatrix", p.imatrix != nullptr);
            t.set("offset", double(p.out.offset));
            t.set("nbytes", double(p.out.nbytes));
            t.set("padding", double(plan_.layout.tensor_padding[i]));
            list.call<void>("push", t);
        }
        return list;
    }

    // Starts planned tensor `index` (in output order).
    JsStatus begin(double index) {
        const uint64_t k = to_u64(index);
        if (!planned_ || k >= plan_.tensors.size()) return to_js(make_error(Error::kInternal, 0, "quantize: tensor"));
        current_ = &plan_.tensors[k];
        const TensorInfo& t = inputs_[k];
        fed_ = 0;
        written_ = 0;
        matrix_ = 0;
        row_ = 0;
        staging_.clear();
        out_.clear();
        if (!current_->quantize) {
            // Validated a block at a time (validate_row_data takes whole blocks).
            const uint32_t block = dtype_traits(t.dtype).block_bytes;
            unit_ = block ? block : 1;
            return to_js(ok_status());
        }
        const int64_t n_per_row = t.ne[0];
        if (n_per_row <= 0 || !dtype_bytes_for(t.dtype, static_cast<uint64_t>(n_per_row), &in_row_) ||
            !dtype_bytes_for(current_->out.dtype, static_cast<uint64_t>(n_per_row), &out_row_)) {
            return to_js(make_error(Error::kBadShape, t.offset, "tensor.ne"));
        }
        window_ = std::max<int64_t>(1, std::min<int64_t>(t.ne[1], kQuantizeWindowElements / n_per_row));
        floats_.resize(static_cast<size_t>(window_ * n_per_row));
        return to_js(ok_status());
    }

    // The next bytes of the current tensor's stored data.
    JsStatus feed(const val& chunk) {
        if (!current_) return to_js(make_error(Error::kInternal, 0, "quantize: feed"));
        const TensorInfo& t = inputs_[static_cast<size_t>(current_ - plan_.tensors.data())];
        const size_t n = chunk["length"].as<size_t>();
        if (n > t.nbytes - fed_) return to_js(make_error(Error::kInternal, t.offset, "quantize: too many bytes"));
        append_from_js(chunk, &staging_);
        fed_ += n;
        size_t used = 0;
        if (!current_->quantize) {
            used = staging_.size() / unit_ * unit_;
            if (!validate_row_data(t.dtype, staging_.data(), used)) {
                return to_js(make_error(Error::kBadShape, t.offset, "tensor.data"));
            }
        } else {
            const int64_t rows_per_matrix = t.ne[1];
            for (;;) {
                const int64_t rows = std::min(window_, rows_per_matrix - row_);
                const uint64_t bytes = static_cast<uint64_t>(rows) * in_row_;
                if (rows <= 0 || staging_.size() - used < bytes) break;
                const Status s = quantize_window(t, staging_.data() + used, rows);
                if (!s.ok()) return to_js(s);
                used += static_cast<size_t>(bytes);
                row_ += rows;
                if (row_ == rows_per_matrix) {
                    row_ = 0;
                    ++matrix_;
                }
            }
        }
        staging_.erase(staging_.begin(), staging_.begin() + static_cast<std::ptrdiff_t>(used));
        return to_js(ok_status());
    }

    // The output the bytes fed so far completed (a new array; the Quantizer keeps none of it).
    val output() {
        val bytes = copy_to_js("Uint8Array", out_.data(), out_.size());
        written_ += out_.size();
        out_.clear();
        return bytes;
    }

    // After the tensor's last byte: checks that all of it came and all of its output went out.
    JsStatus finish() {
        if (!current_) return to_js(make_error(Error::kInternal, 0, "quantize: finish"));
        const TensorInfo& t = inputs_[static_cast<size_t>(current_ - plan_.tensors.data())];
        const PlannedTensor& p = *current_;
        current_ = nullptr;
        if (fed_ < t.nbytes) return to_js(make_error(Error::kTruncated, t.offset + fed_, "tensor.data"));
        if (!staging_.empty()) return to_js(make_error(Error::kBadShape, t.offset, "tensor.data"));
        const uint64_t out = p.quantize ? written_ + out_.size() : fed_;
        if (out != p.out.nbytes) return to_js(make_error(Error::kInternal, t.offset, "quantize: output size"));
        std::vector<uint8_t>().swap(staging_);
        return to_js(ok_status());
    }

private:
    Status quantize_window(const TensorInfo& t, const uint8_t* src, int64_t rows) {
        const int64_t n_per_row = t.ne[0];
        const uint64_t src_bytes = static_cast<uint64_t>(rows) * in_row_;
        if (!validate_row_data(t.dtype, src, src_bytes)) return make_error(Error::kBadShape, t.offset, "tensor.data");
        Status s = dequantize(t.dtype, src, static_cast<uint64_t>(rows * n_per_row), floats_.data());
        if (!s.ok()) return make_error(s.code, t.offset, s.what);
        const float* imatrix =
            current_->imatrix ? current_->imatrix->values.data() + (matrix_ % t.ne[2]) * n_per_row : nullptr;
        const size_t at = out_.size();
        const size_t out_bytes = static_cast<size_t>(static_cast<uint64_t>(rows) * out_row_);
        out_.resize(at + out_bytes);
        s = quantize_rows(current_->out.dtype, floats_.data(), rows, n_per_row, imatrix, out_.data() + at);
        if (!s.ok()) return make_error(s.code, t.offset, s.what);
        if (!validate_row_data(current_->out.dtype, out_.data() + at, out_bytes)) {
            return make_error(Error::kBadShape, t.offset, "quantized.data");
        }
        return ok_status();
    }

    Imatrix imatrix_;
    std::string imatrix_path_;
    bool has_imatrix_ = false;
    QuantPlan plan_;
    bool planned_ = false;
    std::vector<TensorInfo> inputs_;  // the input tensor of each planned one (names dropped)
    std::string failed_tensor_;

    const PlannedTensor* current_ = nullptr;
    uint64_t fed_ = 0, written_ = 0;
    uint32_t unit_ = 1;                  // copied tensor: validation granularity
    uint64_t in_row_ = 0, out_row_ = 0;  // quantized tensor: bytes per row in and out
    int64_t window_ = 1, matrix_ = 0, row_ = 0;
    std::vector<uint8_t> staging_;  // input bytes not yet processed (less than a window, plus a piece)
    std::vector<float> floats_;     // one window
    std::vector<uint8_t> out_;      // output not yet taken
};

// llama-quantize's file type names (ftype_from_name): the llama_ftype number, or -1.
int ftype_from_js(const std::string& name) {
    Ftype f;
    return ftype_from_name(name, &f) ? static_cast<int>(f) : -1;
}

// llama-quantize's file types to choose from (ftype_list): [{name ("Q4_K_M"), id (the llama_ftype number),
// defaultType (the dtype name of an ordinary tensor: "Q4_K")}].
val ftype_list_js() {
    val list = val::array();
    for (Ftype f : ftype_list()) {
        val t = val::object();
        t.set("name", std::string(ftype_name(f)));
        t.set("id", static_cast<uint32_t>(f));
        t.set("defaultType", std::string(dtype_name(ftype_default_type(f))));
        list.call<void>("push", t);
    }
    return list;
}

// A ggml type name as --output-tensor-type takes it: the dtype id, or -1.
int ggml_type_from_js(const std::string& name) {
    DType t;
    return ggml_type_from_name(name, &t) ? static_cast<int>(t) : -1;
}

// --tensor-type's "NAME=TYPE": {pattern (lowercased as llama-quantize does), type (dtype id)}, or null.
val parse_tensor_type_js(const std::string& text) {
    TensorTypeOverride o;
    if (!parse_tensor_type_override(text, &o)) return val::null();
    val r = val::object();
    r.set("pattern", o.pattern);
    r.set("type", static_cast<uint32_t>(o.type));
    return r;
}

// quantize_rows() on JavaScript arrays: {status, bytes: Uint8Array}. imatrix: a Float32Array of n_per_row
// values, or null.
val quantize_rows_js(int dtype, const val& src, double nrows, double n_per_row, const val& imatrix) {
    const DType t = static_cast<DType>(static_cast<uint32_t>(dtype));
    val r = val::object();
    const int64_t rows = static_cast<int64_t>(std::min(to_u64(nrows), uint64_t(INT64_MAX)));
    const int64_t cols = static_cast<int64_t>(std::min(to_u64(n_per_row), uint64_t(INT64_MAX)));
    uint64_t nbytes = 0;
    const size_t n = src["length"].as<size_t>();
    if (!dtype_bytes_for(t, static_cast<uint64_t>(n), &nbytes) || rows * cols != static_cast<int64_t>(n)) {
        r.set("status", to_js(make_error(Error::kBadShape, 0, "quantize: shape")));
        return r;
    }
    std::vector<float> floats(n), weights;
    if (n) val(typed_memory_view(n, floats.data())).call<void>("set", src);
    if (!imatrix.isNull()) {
        weights.resize(imatrix["length"].as<size_t>());
        if (static_cast<int64_t>(weights.size()) != cols) {
            r.set("status", to_js(make_error(Error::kBadShape, 0, "imatrix.size")));
            return r;
        }
        if (!weights.empty()) val(typed_memory_view(weights.size(), weights.data())).call<void>("set", imatrix);
    }
    std::vector<uint8_t> out(static_cast<size_t>(nbytes));
    const Status s =
        quantize_rows(t, floats.data(), rows, cols, imatrix.isNull() ? nullptr : weights.data(), out.data());
    r.set("status", to_js(s));
    if (s.ok()) r.set("bytes", copy_to_js("Uint8Array", out.data(), out.size()));
    return r;
}
// ---- end of quantize() ------------------------------------------------------------------------------------------

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

// ---- edit() (wasm/js/edit.js) ----
// Plans a metadata edit (include/weightstream/gguf_edit.h) of an open GGUF: set = [[key, JSON text of the value, type
// name or
// ""]], remove = [keys]. Returns {status, key (the key an error is about, or ""), header (Uint8Array), padding
// (zero bytes after each tensor, in the model's tensor order), fileSize}; the JavaScript streams each tensor's
// stored bytes between them. The model must have been opened with its metadata kept.
val edit_plan_js(const Model& model, const val& set, const val& remove) {
    MetadataEdits edits;
    const size_t n_set = set["length"].as<size_t>();
    for (size_t i = 0; i < n_set; ++i) {
        EditValue v;
        v.json = true;
        v.text = set[i][1].as<std::string>();
        v.type = set[i][2].as<std::string>();
        edits.set.emplace_back(set[i][0].as<std::string>(), std::move(v));
    }
    const size_t n_remove = remove["length"].as<size_t>();
    for (size_t i = 0; i < n_remove; ++i) edits.remove.push_back(remove[i].as<std::string>());
    std::string failed_key;
    Result<EditPlan> plan = plan_gguf_edit(model.info(), edits, &failed_key);
    val out = val::object();
    out.set("status", to_js(plan.ok() ? ok_status() : plan.status()));
    out.set("key", failed_key);
    if (!plan.ok()) return out;
    const GgufLayout& layout = plan.value().layout;
    out.set("header", copy_to_js("Uint8Array", layout.header.data(), layout.header.size()));
    val padding = val::array();
    for (uint64_t p : layout.tensor_padding) padding.call<void>("push", double(p));
    out.set("padding", padding);
    out.set("fileSize", double(layout.file_size));
    return out;
}
// ---- end of edit() ----

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

// What each code means (error_description()), in the same order: the words the CLI prints after a code, which
// the package attaches to its errors as `description` and the page shows.
val error_descriptions() {
    val list = val::array();
    for (int code = 0; code < static_cast<int>(Error::kEnd); ++code)
        list.call<void>("push", std::string(error_description(static_cast<Error>(code))));
    return list;
}

}  // namespace
}  // namespace ws

EMSCRIPTEN_BINDINGS(weightstream) {
    using namespace emscripten;
    using ws::Decoder;
    using ws::JsRange;
    using ws::JsStatus;
    using ws::JsWindow;
    using ws::Model;
    using ws::Parser;
    using ws::Plan;
    using ws::Quantizer;
    using ws::Reads;
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
        .function("layerGroups", &Model::layer_groups_js)
        .function("metadataArrays", &Model::metadata_arrays)
        .function("wideIntegers", &Model::wide_integers)
        .function("tensorTable", &Model::tensor_table)
        .function("releaseMetadata", &Model::release_metadata)
        .function("rowWindow", &Model::row_window)
        .function("slicePlan", &Model::slice_plan);
    class_<Parser>("Parser")
        .constructor<double, std::string>()
        .function("feed", &Parser::feed)
        .function("bytesNeeded", &Parser::bytes_needed)
        .function("bytesExpected", &Parser::bytes_expected)
        .function("takeModel", &Parser::take_model, allow_raw_pointers());
    value_object<JsRange>("ByteRange").field("offset", &JsRange::offset).field("length", &JsRange::length);
    class_<Reads>("HeaderReads").constructor<double>().function("first", &Reads::first).function("next", &Reads::next);
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

    // ---- compare() (issue 11): begin ----
    class_<ws::Comparison>("Comparison")
        .constructor<const Model&, const Model&, const emscripten::val&, const emscripten::val&, const std::string&,
                     const std::string&>()
        .function("pairs", &ws::Comparison::pairs)
        .function("select", &ws::Comparison::select)
        .function("begin", &ws::Comparison::begin)
        .function("window", &ws::Comparison::window)
        .function("feed", &ws::Comparison::feed)
        .function("fail", &ws::Comparison::fail)
        .function("rowJson", &ws::Comparison::row_json)
        .function("report", &ws::Comparison::report);
    // ---- compare() (issue 11): end ----
    // ---- quantize() ----
    class_<Quantizer>("Quantizer")
        .constructor<>()
        .function("setImatrix", &Quantizer::set_imatrix)
        .function("plan", &Quantizer::plan)
        .function("failedTensor", &Quantizer::failed_tensor)
        .function("header", &Quantizer::header)
        .function("fileSize", &Quantizer::file_size)
        .function("fallbacks", &Quantizer::fallbacks)
        .function("warnings", &Quantizer::warnings)
        .function("tensors", &Quantizer::tensors)
        .function("begin", &Quantizer::begin)
        .function("feed", &Quantizer::feed)
        .function("output", &Quantizer::output)
        .function("finish", &Quantizer::finish);
    function("ftypeFromName", &ws::ftype_from_js);
    function("ftypeList", &ws::ftype_list_js);
    function("ggmlTypeFromName", &ws::ggml_type_from_js);
    function("parseTensorType", &ws::parse_tensor_type_js);
    function("quantizeRows", &ws::quantize_rows_js);
    // ---- end of quantize() ----

    function("editPlan", &ws::edit_plan_js);
    function("dtypes", &ws::dtypes);
    function("errorNames", &ws::error_names);
    function("errorDescriptions", &ws::error_descriptions);
    constant("maxIndexBytes", double(ws::kMaxIndexBytes));
    constant("defaultMaxSplitParts", ws::kDefaultMaxSplitParts);
}
