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
#include <iterator>
#include <memory>
#include <string>
#include <vector>

#include "info_transfer.h"
#include "weightstream/block_stream.h"
#include "weightstream/compare_job.h"
#include "weightstream/convert_job.h"
#include "weightstream/dequant.h"
#include "weightstream/dtype.h"
#include "weightstream/edit_job.h"
#include "weightstream/header_parser.h"
#include "weightstream/header_reads.h"
#include "weightstream/hf_checkpoint.h"
#include "weightstream/imatrix.h"
#include "weightstream/model_facts.h"
#include "weightstream/model_info.h"
#include "weightstream/model_json.h"
#include "weightstream/model_plan.h"
#include "weightstream/quant_recipe.h"
#include "weightstream/quantize.h"
#include "weightstream/quantize_job.h"
#include "weightstream/regex.h"
#include "weightstream/row_window.h"
#include "weightstream/safetensors.h"
#include "weightstream/stats_job.h"
#include "weightstream/status.h"
#include "weightstream/tokenizer.h"
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

    // Frees the metadata (the JavaScript keeps it as JSON) but the tokenizer's keys, which model.tokenizer() builds
    // from; the tensor table stays for row_window.
    void release_metadata() {
        std::vector<MetadataEntry> kept;
        for (MetadataEntry& e : info_.metadata) {
            if (e.key.rfind("tokenizer.ggml.", 0) == 0) kept.push_back(std::move(e));
        }
        info_.metadata.swap(kept);
    }

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
    static JsRange to_js(ByteRange r) { return JsRange{double(r.offset), double(r.size)}; }

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

// ---- Jobs (include/weightstream/job.h): every operation the package runs, through one runner ----------------
// The JavaScript pump (wasm/js/pump.js) drives any job the same way, a step at a time:
//   next()              -> {inputs: [{source, offset, size}], work, tensor} of the next step, or null at the end;
//   addInput(i, bytes)  the bytes of input i, chunk by chunk (exactly its size in all), or unreadable(i) when
//                       they lie outside the file (-> Status: the job takes it in, ok, and the step is over, or
//                       fails);
//   run()               -> Status: the step run in one part and completed;
//   output()            -> Uint8Array: the step's output (a copy; the job keeps none of it).
// The job-specific classes below add how a job is made and what it reports.
class JsJob {
public:
    virtual ~JsJob() = default;

    val next() {
        if (!job_ || !job_->next(&step_)) return val::null();
        inputs_.resize(step_.inputs.size());
        for (size_t k = 0; k < inputs_.size(); ++k) {
            inputs_[k].clear();
            inputs_[k].reserve(static_cast<size_t>(step_.inputs[k].size));
        }
        val inputs = val::array();
        for (const ByteRange& r : step_.inputs) {
            val range = val::object();
            range.set("source", r.source);
            range.set("offset", double(r.offset));
            range.set("size", double(r.size));
            inputs.call<void>("push", range);
        }
        val step = val::object();
        step.set("inputs", inputs);
        step.set("work", double(step_.work));
        step.set("tensor", double(step_.tensor));
        return step;
    }
    // Appends a chunk of input i's bytes; false (nothing appended) past the input's size.
    bool add_input(double i, const val& bytes) {
        const uint64_t k = to_u64(i);
        if (k >= inputs_.size()) return false;
        std::vector<uint8_t>& input = inputs_[k];
        const size_t n = bytes["length"].as<size_t>();
        if (n > step_.inputs[k].size - input.size()) return false;
        const size_t at = input.size();
        input.resize(at + n);
        if (n) val(typed_memory_view(n, input.data() + at)).call<void>("set", bytes);  // view made after the resize
        return true;
    }
    JsStatus unreadable(double i) {
        const uint64_t k = to_u64(i);
        if (!job_ || k >= step_.inputs.size()) return to_js(make_error(Error::kInternal, 0, "job.input"));
        return to_js(job_->unreadable(step_.inputs[k]));
    }
    JsStatus run() {
        if (!job_) return to_js(make_error(Error::kInternal, 0, "job"));
        std::vector<ByteSpan> spans;
        for (size_t k = 0; k < inputs_.size(); ++k) {
            if (inputs_[k].size() != step_.inputs[k].size) {
                return to_js(make_error(Error::kInternal, step_.inputs[k].offset, "job.input"));
            }
            spans.push_back({inputs_[k].data(), inputs_[k].size()});
        }
        job_->run(spans.data(), 0, 1);
        return to_js(job_->complete(&out_));
    }
    val output() {
        val bytes = copy_to_js("Uint8Array", out_.data, static_cast<size_t>(out_.size));
        out_ = ByteSpan();
        return bytes;
    }
    double total_work() const { return job_ ? double(job_->total_work()) : 0; }

protected:
    Job* job_ = nullptr;  // the subclass's job, once made

private:
    JobStep step_;
    std::vector<std::vector<uint8_t>> inputs_;
    ByteSpan out_;
};

// config.json's bytes (a Uint8Array, or null) parsed into *out; false for null or a file that is not a usable
// config (which compare and convert ignore, as the CLI does).
bool read_config(const val& bytes, HfConfig* out) {
    if (bytes.isNull() || bytes.isUndefined()) return false;
    std::vector<uint8_t> data;
    copy_from_js(bytes, &data);
    Result<HfConfig> config = parse_hf_config(data.data(), data.size());
    if (!config.ok()) return false;
    *out = std::move(config).value();
    return true;
}

// A Hugging Face checkpoint's side files as the conversion takes them (ConvertOptions::hf, config_problem,
// vocab_files): config: config.json's bytes (a Uint8Array) or null; tokenizer: {name: bytes} of the tokenizer files
// found (kHfVocabFileNames). A config.json that is not usable is said in config_problem, as the CLI says it. The
// options point into this object, which must outlive their use (ConvertJob::make() reads them only while planning).
class CheckpointFiles {
public:
    void apply(const val& config, const val& tokenizer, ConvertOptions* options) {
        if (config.isNull() || config.isUndefined()) return;
        copy_from_js(config, &config_bytes_);
        Result<HfConfig> parsed = parse_hf_config(config_bytes_.data(), config_bytes_.size());
        if (!parsed.ok()) {
            options->config_problem = hf_config_problem(parsed.status(), options->config_name);
            return;
        }
        hf_ = std::move(parsed).value();
        options->hf = &hf_;
        files_.config = std::string_view(reinterpret_cast<const char*>(config_bytes_.data()), config_bytes_.size());
        bool any_file = false;
        for (size_t k = 0; k < file_bytes_.size(); ++k) {
            const val bytes = tokenizer[std::string(kHfVocabFileNames[k])];
            if (bytes.isUndefined() || bytes.isNull()) continue;
            copy_from_js(bytes, &file_bytes_[k]);
            *hf_vocab_file_slot(&files_, kHfVocabFileNames[k]) =
                std::string_view(reinterpret_cast<const char*>(file_bytes_[k].data()), file_bytes_[k].size());
            any_file = any_file || !file_bytes_[k].empty();
        }
        options->vocab_files = any_file ? &files_ : nullptr;
    }

private:
    HfConfig hf_;
    std::vector<uint8_t> config_bytes_;
    std::vector<std::vector<uint8_t>> file_bytes_ = std::vector<std::vector<uint8_t>>(std::size(kHfVocabFileNames));
    HfVocabFiles files_;
};

// Why a conversion was refused (convert_plan.h's ConvertRefusal): {about ("tensor", "config", "tokenizer" or
// "output"), tensor (index into the input model's tensors, or -1), why (in words)}.
val refusal_to_js(const ConvertRefusal& refusal) {
    val r = val::object();
    const char* about = refusal.about == ConvertRefusal::About::kTensor      ? "tensor"
                        : refusal.about == ConvertRefusal::About::kConfig    ? "config"
                        : refusal.about == ConvertRefusal::About::kTokenizer ? "tokenizer"
                                                                             : "output";
    r.set("about", std::string(about));
    r.set("tensor", double(refusal.tensor));
    r.set("why", refusal.why);
    return r;
}

// The general.name a file's metadata holds (a string), or "" without one.
std::string general_name(const std::vector<MetadataEntry>& metadata) {
    for (const MetadataEntry& e : metadata) {
        if (e.key == "general.name" && e.value.type == ValueType::kString) return e.value.str;
    }
    return std::string();
}

// compare(): CompareJob over two open models. config_a, config_b: the bytes of config.json beside a
// safetensors side (Uint8Array), or null; a file that is not a usable config is ignored, as the CLI ignores it.
// Both models must stay open while the job lives.
class JsCompareJob final : public JsJob {
public:
    JsCompareJob(const Model& a, const Model& b, const val& config_a, const val& config_b, const std::string& path_a,
                 const std::string& path_b)
        : a_(a.info()), b_(b.info()) {
        PairingOptions options;
        if (read_config(config_a, &config_a_)) options.config_a = &config_a_;
        if (read_config(config_b, &config_b_)) options.config_b = &config_b_;
        compare_.reset(new CompareJob(a_, b_, options, {path_a, a_.format}, {path_b, b_.format}));
        job_ = compare_.get();
    }
    // Every pair of the plan: [[nameA | null, nameB | null]] (for the JavaScript's tensors filter).
    val pairs() const {
        val list = val::array();
        for (const PairPlan& p : compare_->plan().pairs) {
            val names = val::array();
            names.call<void>("push", p.a < 0 ? val::null() : val(a_.tensors[static_cast<size_t>(p.a)].name));
            names.call<void>("push", p.b < 0 ? val::null() : val(b_.tensors[static_cast<size_t>(p.b)].name));
            list.call<void>("push", names);
        }
        return list;
    }
    // The report's rows: these plan pairs (indices into pairs()), in this order; false for one out of range.
    bool select(const val& indices) {
        std::vector<size_t> rows;
        const size_t n = indices["length"].as<size_t>();
        for (size_t k = 0; k < n; ++k) {
            const double i = indices[k].as<double>();
            if (!(i >= 0 && i < double(compare_->plan().pairs.size()))) return false;
            rows.push_back(static_cast<size_t>(i));
        }
        return compare_->select(rows);
    }
    // The rows finished since the last call, in order: [row index].
    val finished() {
        val list = val::array();
        for (size_t r : compare_->take_finished()) list.call<void>("push", double(r));
        return list;
    }
    std::string row_json(double row) const {
        const CompareReport& report = compare_->report();
        if (!(row >= 0 && row < double(report.tensors.size()))) return "null";
        CompareReport one;
        one.tensors.push_back(report.tensors[static_cast<size_t>(row)]);
        return json_dump(compare_report_to_json(one)["tensors"][0], -1);
    }
    std::string report() const { return json_dump(compare_report_to_json(compare_->report()), -1); }

private:
    const ModelInfo& a_;
    const ModelInfo& b_;
    HfConfig config_a_, config_b_;
    std::unique_ptr<CompareJob> compare_;
};

// quantize(): QuantizeJob, llama-quantize's recipes (include/weightstream/quant_recipe.h), over an open model,
// which must stay open while the job lives. setImatrix() (optional), then plan(), then the steps.
class JsQuantizeJob final : public JsJob {
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
    // -1: not given), overrides: [{pattern, type}]}; matcher(index, name): whether override `index` matches
    // (called during planning only). Plans quantizing the model as it is.
    JsStatus plan(const Model& model, const val& recipe, const val& matcher) {
        refused_ = false;
        return plan_quantization(model.info(), recipe, matcher, nullptr);
    }
    // plan() for a safetensors model with what was found beside it (config: config.json's bytes or null;
    // tokenizer: {name: bytes}; model_name: the checkpoint folder's name; strict: --strict-tokenizer), as `quantize
    // CHECKPOINT` plans: a Hugging Face checkpoint in one pass (QuantizeJob::one_pass_source(), then
    // make_converted() over the conversion to hf_auto_dtype()), else the model as it is. After an error, refused()
    // says whether the checkpoint or its conversion was refused (refusal() says why), else failedTensor() applies.
    JsStatus plan_checkpoint(const Model& model, const val& recipe, const val& matcher, const val& config,
                             const val& tokenizer, const std::string& model_name, bool strict) {
        refused_ = false;
        refusal_ = ConvertRefusal();
        const ModelInfo& info = model.info();
        CheckpointFiles files;  // read by make() only
        ConvertOptions convert;
        files.apply(config, tokenizer, &convert);
        bool one_pass = false;
        const Status source = QuantizeJob::one_pass_source(info, convert, &one_pass, &refusal_.why);
        if (!source.ok()) {
            refused_ = true;
            refusal_.about = ConvertRefusal::About::kConfig;
            return to_js(source);
        }
        if (!one_pass) return plan_quantization(info, recipe, matcher, nullptr);
        convert.target = Format::kGguf;
        convert.dtype = hf_auto_dtype(info);
        convert.model_name = model_name;
        convert.strict_tokenizer = strict;
        Result<std::unique_ptr<ConvertJob>> made = ConvertJob::make(info, convert, &refusal_);
        if (!made.ok()) {
            refused_ = true;
            return to_js(made.status());
        }
        std::unique_ptr<ConvertJob> conversion = std::move(made).value();
        Result<ModelInfo> view = converted_model(conversion->plan());
        if (!view.ok()) return to_js(view.status());
        converted_ = std::move(view).value();
        conversion_warnings_ = conversion->plan().warnings;
        source_bytes_.clear();
        for (const ConvertTensor& t : conversion->plan().tensors) {
            uint64_t n = 0;
            if (t.experts.empty()) n = info.tensors[t.input].nbytes;
            for (size_t e : t.experts) n += info.tensors[e].nbytes;
            source_bytes_.push_back(double(n));
        }
        return plan_quantization(converted_, recipe, matcher, std::move(conversion));
    }
    // After plan_checkpoint() failed: whether the checkpoint or its conversion was refused, and why
    // (refusal_to_js(); about "config" for the checkpoint).
    bool refused() const { return refused_; }
    val refusal() const { return refusal_to_js(refusal_); }
    // After plan() failed: the tensor its error is about, or "".
    std::string failed_tensor() const { return failed_tensor_; }

    double file_size() const { return double(quantize_->plan().layout.file_size); }
    double header_size() const { return double(quantize_->plan().layout.header.size()); }
    // The output's bits per weight as llama.cpp will report it (model_facts.h's TensorTotals over the planned
    // tensors).
    double bits_per_weight() const {
        TensorTotals totals;
        for (const PlannedTensor& p : quantize_->plan().tensors) totals.add(p.out);
        return totals.bits_per_weight();
    }
    double fallbacks() const { return quantize_->plan().n_fallback; }
    // One pass: the conversion's warnings, then the quantization's (the CLI's order).
    val warnings() const {
        val list = val::array();
        for (const std::string& w : conversion_warnings_) list.call<void>("push", w);
        for (const std::string& w : quantize_->plan().warnings) list.call<void>("push", w);
        return list;
    }
    // The general.name the output will hold (one pass: the conversion's, from modelName), or "".
    std::string model_name() const { return general_name(quantize_->plan().metadata); }
    // [{input (index into the model's tensors: the one the tensor's bytes are read from, one pass: the checkpoint's
    // it is converted from, a stacked tensor's expert 0), name and shape (outermost first) as written, inputBytes
    // (the model's bytes it is made from), quantize, type, inType (the type quantized from: one pass, the
    // conversion's), wanted, fallback, requantize, imatrix, offset (absolute, in the output), nbytes, padding}] in
    // output order.
    val tensors() const {
        const QuantPlan& plan = quantize_->plan();
        val list = val::array();
        for (size_t i = 0; i < plan.tensors.size(); ++i) {
            const PlannedTensor& p = plan.tensors[i];
            val t = val::object();
            t.set("input", double(quantize_->source_tensor(p)));
            t.set("name", p.out.name);
            val shape = val::array();
            for (int64_t d : p.out.shape()) shape.call<void>("push", double(d));
            t.set("shape", shape);
            t.set("inputBytes",
                  source_bytes_.empty() ? double(input_->tensors[p.input_index].nbytes) : source_bytes_[p.input_index]);
            t.set("quantize", p.quantize);
            t.set("type", std::string(dtype_name(p.out.dtype)));
            t.set("inType", std::string(dtype_name(p.in_type)));
            t.set("wanted", std::string(dtype_name(p.wanted)));
            t.set("fallback", p.fallback);
            t.set("requantize", p.requantize);
            t.set("imatrix", p.imatrix != nullptr);
            t.set("offset", double(p.out.offset));
            t.set("nbytes", double(p.out.nbytes));
            t.set("padding", double(plan.layout.tensor_padding[i]));
            list.call<void>("push", t);
        }
        return list;
    }

private:
    // Plans quantizing `in` (the model, or the file `conversion` would write), as plan() describes.
    JsStatus plan_quantization(const ModelInfo& in, const val& recipe, const val& matcher,
                               std::unique_ptr<ConvertJob> conversion) {
        failed_tensor_.clear();
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
        const bool one_pass = conversion != nullptr;
        Result<std::unique_ptr<QuantizeJob>> made =
            one_pass ? QuantizeJob::make_converted(in, std::move(conversion), options) : QuantizeJob::make(in, options);
        if (!made.ok()) {
            const Status& s = made.status();
            for (const TensorInfo& t : in.tensors) {
                if (t.info_offset == s.offset && s.offset != 0) failed_tensor_ = t.name;
            }
            return to_js(s);
        }
        quantize_ = std::move(made).value();
        job_ = quantize_.get();
        input_ = &in;
        if (!one_pass) {
            conversion_warnings_.clear();
            source_bytes_.clear();
        }
        return to_js(ok_status());
    }

    Imatrix imatrix_;  // referred to by the plan
    std::string imatrix_path_;
    bool has_imatrix_ = false;
    std::string failed_tensor_;
    bool refused_ = false;
    ConvertRefusal refusal_;
    // One pass: the file the conversion would write (what the job plans from), the conversion's warnings, and per
    // converted tensor the bytes of the checkpoint's tensors it is made from.
    ModelInfo converted_;
    std::vector<std::string> conversion_warnings_;
    std::vector<double> source_bytes_;
    const ModelInfo* input_ = nullptr;  // what the job plans from (the model, or converted_)
    std::unique_ptr<QuantizeJob> quantize_;
};

// stats(): StatsJob (include/weightstream/stats_job.h) over one tensor of a model, or a window of its rows (window
// false: the rows are ignored). The job keeps a copy of the tensor's entry, so a model closed meanwhile (the
// JavaScript's model.close() during stats()) leaves it nothing to read freed memory from.
class JsStatsJob final : public JsJob {
public:
    // Input per step: the runner holds a step's input in wasm memory, and up to eight stats() run at once
    // (model.js), so smaller than the CLI's steps; large enough that a remote tensor is still a few requests.
    static constexpr uint64_t kStepBytes = uint64_t(4) << 20;

    JsStatsJob(const Model& model, double tensor, bool window, double first_row, double rows, double bins) {
        const ModelInfo& info = model.info();
        one_.big_endian = info.big_endian;
        const uint64_t index = to_u64(tensor);
        if (index < info.tensors.size()) one_.tensors.push_back(info.tensors[static_cast<size_t>(index)]);
        StatsRequest q;  // tensor 0: one_'s only one, or none when `tensor` is out of range (the job reports it)
        q.window = window;
        q.first_row = to_u64(first_row);
        q.rows = to_u64(rows);
        q.bins = static_cast<uint32_t>(std::min<uint64_t>(to_u64(bins), kStatsMaxBins));
        stats_.reset(new StatsJob(one_, {q}, kStepBytes));
        job_ = stats_.get();
    }
    // Why the tensor or window has no statistics, settled before any step (StatsResult::status), and
    // problem(): why the tensor cannot be decoded, in words, or "".
    JsStatus status() const { return to_js(stats_->result(0).status); }
    std::string problem() const { return stats_->result(0).problem; }
    // After the last step: {count, finite, min, max, mean, std, nan, posInf, negInf, zeros, histogram:
    // Float64Array, edges: Float64Array}; NaN statistics when no value is finite.
    val stats() const {
        const Stats& st = stats_->result(0).stats;
        val r = val::object();
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
    ModelInfo one_;  // the tensor's entry and the model's byte order
    std::unique_ptr<StatsJob> stats_;
};

// convert(): ConvertJob (include/weightstream/convert_job.h) over an open model, which must stay open while the job
// lives. plan(), then the steps.
class JsConvertJob final : public JsJob {
public:
    // target: "gguf" or "safetensors"; dtype: a dtype id, or -1 to keep the types; config: config.json's bytes for a
    // safetensors checkpoint, or null (read_config()); tokenizer: {name: bytes} of the tokenizer files beside it
    // (kHfVocabFileNames); model_name: the checkpoint folder's name; strict: --strict-tokenizer. After an error,
    // refusal() says more.
    JsStatus plan(const Model& model, const std::string& target, int dtype, bool allow_requantize, const val& config,
                  const val& tokenizer, const std::string& model_name, bool strict) {
        refusal_ = ConvertRefusal();
        ConvertOptions options;
        if (target == format_name(Format::kGguf)) {
            options.target = Format::kGguf;
        } else if (target == format_name(Format::kSafetensors)) {
            options.target = Format::kSafetensors;
        } else {
            return to_js(make_error(Error::kInternal, 0, "convert: target"));
        }
        if (dtype >= 0) options.dtype = static_cast<DType>(static_cast<uint32_t>(dtype));
        options.allow_requantize = allow_requantize;
        CheckpointFiles files;  // read by make() only
        files.apply(config, tokenizer, &options);
        options.model_name = model_name;
        options.strict_tokenizer = strict;
        Result<std::unique_ptr<ConvertJob>> made = ConvertJob::make(model.info(), options, &refusal_);
        if (!made.ok()) return to_js(made.status());
        convert_ = std::move(made).value();
        job_ = convert_.get();
        return to_js(ok_status());
    }
    // After plan() failed: why (refusal_to_js()).
    val refusal() const { return refusal_to_js(refusal_); }

    double file_size() const { return double(convert_->plan().file_size); }
    // The general.name the output will hold (a checkpoint's: from modelName, as the converter derives it), or "".
    std::string model_name() const { return general_name(convert_->plan().metadata); }
    val warnings() const {
        val list = val::array();
        for (const std::string& w : convert_->plan().warnings) list.call<void>("push", w);
        return list;
    }
    // [{input (index into the model's tensors), name, type (written), shape (outermost first), action ("copy",
    // "encode", "widen"), offset (absolute, in the output), nbytes}] in output order (convert()'s progress,
    // convertPlan()).
    val tensors() const {
        val list = val::array();
        for (const ConvertTensor& p : convert_->plan().tensors) {
            val t = val::object();
            t.set("input", double(p.input));
            t.set("name", p.out.name);
            t.set("type", p.out.dtype_name());
            val shape = val::array();
            for (int64_t d : p.out.shape()) shape.call<void>("push", double(d));
            t.set("shape", shape);
            t.set("action", std::string(convert_action_name(p.action)));
            t.set("offset", double(p.out.offset));
            t.set("nbytes", double(p.out.nbytes));
            list.call<void>("push", t);
        }
        return list;
    }

private:
    ConvertRefusal refusal_;
    std::unique_ptr<ConvertJob> convert_;
};

// edit(): EditJob (include/weightstream/edit_job.h) over an open GGUF, which must stay open (with its metadata kept)
// while the job lives. plan(), then the steps.
class JsEditJob final : public JsJob {
public:
    // set = [[key, JSON text of the value, type name or ""]], remove = [keys]. After an error, failedKey() names
    // the key it is about, or "".
    JsStatus plan(const Model& model, const val& set, const val& remove) {
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
        failed_key_.clear();
        Result<std::unique_ptr<EditJob>> made = EditJob::make(model.info(), edits, &failed_key_);
        if (!made.ok()) return to_js(made.status());
        edit_ = std::move(made).value();
        job_ = edit_.get();
        return to_js(ok_status());
    }
    std::string failed_key() const { return failed_key_; }

private:
    std::string failed_key_;
    std::unique_ptr<EditJob> edit_;
};

// A tokenizer (include/weightstream/tokenizer.h) for the package's Tokenizer: from a model's GGUF keys or from Hugging
// Face files. status() says whether it was made. Text crosses as UTF-8 bytes (TextEncoder's, so a lone surrogate is
// U+FFFD before the core sees it), ids as Int32Array, detokenized text as bytes (TextDecoder's replacement applies).
class JsTokenizer {
public:
    explicit JsTokenizer(const Model& model) { take(gguf_tokenizer(model.info())); }
    JsTokenizer(const val& tokenizer_json, const val& tokenizer_config, const val& tokenizer_model) {
        std::vector<uint8_t> json, config, sp;
        if (!tokenizer_json.isNull()) copy_from_js(tokenizer_json, &json);
        if (!tokenizer_config.isNull()) copy_from_js(tokenizer_config, &config);
        if (!tokenizer_model.isNull()) copy_from_js(tokenizer_model, &sp);
        auto view = [](const std::vector<uint8_t>& v) {
            return std::string_view(reinterpret_cast<const char*>(v.data()), v.size());
        };
        HfTokenizerFiles files;
        files.tokenizer_json = view(json);
        files.tokenizer_config = view(config);
        files.tokenizer_model = view(sp);
        take(hf_files_tokenizer(files));
    }

    JsStatus status() const { return to_js(status_); }
    double size() const { return tokenizer_ ? double(tokenizer_->size()) : 0; }
    std::string description() const { return tokenizer_ ? tokenizer_->description() : std::string(); }

    // {status, ids: Int32Array}.
    val tokenize(const val& text, bool add_special, bool parse_special, bool add_bos) const {
        std::vector<uint8_t> bytes;
        copy_from_js(text, &bytes);
        TokenizeOptions options;
        options.add_special = add_special;
        options.parse_special = parse_special;
        options.add_bos = add_bos;
        std::vector<int32_t> ids;
        const Status s = tokenizer_->tokenize(
            std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()), options, &ids);
        val out = val::object();
        out.set("status", to_js(s));
        out.set("ids", copy_to_js("Int32Array", ids.data(), ids.size()));
        return out;
    }

    // {status, bytes: Uint8Array}.
    val detokenize(const val& ids, bool remove_special, bool unparse_special) const {
        const size_t n = ids["length"].as<size_t>();
        std::vector<int32_t> v(n);
        val(typed_memory_view(n, v.data())).call<void>("set", ids);
        DetokenizeOptions options;
        options.remove_special = remove_special;
        options.unparse_special = unparse_special;
        std::string text;
        const Status s = tokenizer_->detokenize(v.data(), v.size(), options, &text);
        val out = val::object();
        out.set("status", to_js(s));
        out.set("bytes", copy_to_js("Uint8Array", reinterpret_cast<const uint8_t*>(text.data()), text.size()));
        return out;
    }

    // What each token stands for inside a text (Tokenizer::token_text), for showing a tokenization: {status, bytes:
    // Uint8Array (every token's bytes one after another), ends: Uint32Array}.
    val token_bytes(const val& ids) const {
        const size_t n = ids["length"].as<size_t>();
        std::vector<int32_t> v(n);
        val(typed_memory_view(n, v.data())).call<void>("set", ids);
        std::string bytes;
        std::vector<uint32_t> ends;
        ends.reserve(n);
        Status s;
        for (size_t i = 0; i < n && s.ok(); ++i) {
            s = tokenizer_->token_text(v[i], &bytes);
            ends.push_back(uint32_t(bytes.size()));
        }
        val out = val::object();
        out.set("status", to_js(s));
        out.set("bytes", copy_to_js("Uint8Array", reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()));
        out.set("ends", copy_to_js("Uint32Array", ends.data(), ends.size()));
        return out;
    }

    // The token table at once: {pieces: Uint8Array (every piece's bytes, one after another), ends: Uint32Array
    // (the end of piece i in pieces), kinds: Uint8Array (TokenKind)}.
    val table() const {
        std::vector<uint8_t> pieces;
        std::vector<uint32_t> ends;
        std::vector<uint8_t> kinds;
        const size_t n = tokenizer_->size();
        ends.reserve(n);
        kinds.reserve(n);
        for (size_t i = 0; i < n; ++i) {
            const std::string_view p = tokenizer_->piece(int32_t(i));
            pieces.insert(pieces.end(), p.begin(), p.end());
            ends.push_back(uint32_t(pieces.size()));
            kinds.push_back(uint8_t(tokenizer_->kind(int32_t(i))));
        }
        val out = val::object();
        out.set("pieces", copy_to_js("Uint8Array", pieces.data(), pieces.size()));
        out.set("ends", copy_to_js("Uint32Array", ends.data(), ends.size()));
        out.set("kinds", copy_to_js("Uint8Array", kinds.data(), kinds.size()));
        return out;
    }

private:
    void take(Result<std::unique_ptr<Tokenizer>> made) {
        status_ = made.status();
        if (made.ok()) tokenizer_ = std::move(made).value();
    }

    Status status_;
    std::unique_ptr<Tokenizer> tokenizer_;
};

// A name pattern for the package's string filters (compare()'s tensors, quantize()'s overrides): compiled and
// searched by the core's linear-time engine (include/weightstream/regex.h), as the CLI's --filter, --tensor-type
// and diff --tensors are, so that the same pattern matches the same names and no pattern or name makes matching
// slow (a RegExp of V8 backtracks: "(.*)*x" over a long name runs for minutes). status() says whether it compiled.
class JsRegex {
public:
    explicit JsRegex(const std::string& pattern) {
        Result<Regex> made = Regex::compile(pattern);
        status_ = made.status();
        if (made.ok()) regex_ = std::move(made).value();
    }
    JsStatus status() const { return to_js(status_); }
    bool search(const std::string& text) const { return regex_.valid() && regex_.search(text); }

private:
    Status status_;
    Regex regex_;
};

// quantize()'s names, checked by the core's tables.
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

// ---- read({transform}): a Hugging Face tensor's values as convert_hf_to_gguf.py writes them ----
// hf_convert_rows() (include/weightstream/hf_checkpoint.h) in place on `values`, a Float32Array of whole rows of
// row_elements floats: rows [first_row, first_row + values.length / row_elements) of a tensor of `rows` rows stored
// as dtype `dtype`. transform: a name transform_name() gives ("permute_q", "plus_one", ...).
JsStatus hf_convert_rows_js(const std::string& transform, int dtype, double heads, double rows, double first_row,
                            double row_elements, const val& values) {
    Transform t;
    const size_t n = values["length"].as<size_t>();
    const uint64_t cols = to_u64(row_elements);
    if (!transform_from_name(transform, &t)) return to_js(make_error(Error::kInternal, 0, "transform"));
    if (cols == 0 || n % cols != 0) return to_js(make_error(Error::kBadShape, 0, "rows"));
    std::vector<float> src(n), dst(n);
    if (n) val(typed_memory_view(n, src.data())).call<void>("set", values);
    const HfRows window{to_u64(rows), to_u64(first_row), n / cols, cols};
    const Status s = hf_convert_rows(t, static_cast<DType>(static_cast<uint32_t>(dtype)), to_u64(heads), window,
                                     src.data(), dst.data());
    if (s.ok() && n) values.call<void>("set", val(typed_memory_view(n, dst.data())));
    return to_js(s);
}
// ---- end of read({transform}) ----

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
    using ws::JsCompareJob;
    using ws::JsConvertJob;
    using ws::JsEditJob;
    using ws::JsJob;
    using ws::JsQuantizeJob;
    using ws::JsRange;
    using ws::JsRegex;
    using ws::JsStatsJob;
    using ws::JsStatus;
    using ws::JsTokenizer;
    using ws::JsWindow;
    using ws::Model;
    using ws::Parser;
    using ws::Plan;
    using ws::Reads;

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

    class_<JsJob>("Job")
        .function("next", &JsJob::next)
        .function("addInput", &JsJob::add_input)
        .function("unreadable", &JsJob::unreadable)
        .function("run", &JsJob::run)
        .function("output", &JsJob::output)
        .function("totalWork", &JsJob::total_work);
    class_<JsCompareJob, base<JsJob>>("CompareJob")
        .constructor<const Model&, const Model&, const emscripten::val&, const emscripten::val&, const std::string&,
                     const std::string&>()
        .function("pairs", &JsCompareJob::pairs)
        .function("select", &JsCompareJob::select)
        .function("finished", &JsCompareJob::finished)
        .function("rowJson", &JsCompareJob::row_json)
        .function("report", &JsCompareJob::report);
    class_<JsQuantizeJob, base<JsJob>>("QuantizeJob")
        .constructor<>()
        .function("setImatrix", &JsQuantizeJob::set_imatrix)
        .function("plan", &JsQuantizeJob::plan)
        .function("planCheckpoint", &JsQuantizeJob::plan_checkpoint)
        .function("refused", &JsQuantizeJob::refused)
        .function("refusal", &JsQuantizeJob::refusal)
        .function("modelName", &JsQuantizeJob::model_name)
        .function("failedTensor", &JsQuantizeJob::failed_tensor)
        .function("fileSize", &JsQuantizeJob::file_size)
        .function("headerSize", &JsQuantizeJob::header_size)
        .function("bitsPerWeight", &JsQuantizeJob::bits_per_weight)
        .function("fallbacks", &JsQuantizeJob::fallbacks)
        .function("warnings", &JsQuantizeJob::warnings)
        .function("tensors", &JsQuantizeJob::tensors);
    class_<JsStatsJob, base<JsJob>>("StatsJob")
        .constructor<const Model&, double, bool, double, double, double>()
        .function("status", &JsStatsJob::status)
        .function("problem", &JsStatsJob::problem)
        .function("stats", &JsStatsJob::stats);
    class_<JsConvertJob, base<JsJob>>("ConvertJob")
        .constructor<>()
        .function("plan", &JsConvertJob::plan)
        .function("refusal", &JsConvertJob::refusal)
        .function("fileSize", &JsConvertJob::file_size)
        .function("modelName", &JsConvertJob::model_name)
        .function("warnings", &JsConvertJob::warnings)
        .function("tensors", &JsConvertJob::tensors);
    class_<JsEditJob, base<JsJob>>("EditJob")
        .constructor<>()
        .function("plan", &JsEditJob::plan)
        .function("failedKey", &JsEditJob::failed_key);
    class_<JsRegex>("Regex")
        .constructor<const std::string&>()
        .function("status", &JsRegex::status)
        .function("search", &JsRegex::search);
    class_<JsTokenizer>("Tokenizer")
        .constructor<const Model&>()
        .constructor<const val&, const val&, const val&>()
        .function("status", &JsTokenizer::status)
        .function("size", &JsTokenizer::size)
        .function("description", &JsTokenizer::description)
        .function("tokenize", &JsTokenizer::tokenize)
        .function("detokenize", &JsTokenizer::detokenize)
        .function("tokenBytes", &JsTokenizer::token_bytes)
        .function("table", &JsTokenizer::table);
    function("ftypeFromName", &ws::ftype_from_js);
    function("ftypeList", &ws::ftype_list_js);
    function("ggmlTypeFromName", &ws::ggml_type_from_js);
    function("parseTensorType", &ws::parse_tensor_type_js);
    function("quantizeRows", &ws::quantize_rows_js);

    function("hfConvertRows", &ws::hf_convert_rows_js);
    function("dtypes", &ws::dtypes);
    function("errorNames", &ws::error_names);
    function("errorDescriptions", &ws::error_descriptions);
    constant("maxIndexBytes", double(ws::kMaxIndexBytes));
    constant("defaultMaxSplitParts", ws::kDefaultMaxSplitParts);
}
