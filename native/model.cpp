// SPDX-License-Identifier: MIT
#include "model.h"

#include "header_parser.h"
#include "split.h"
#include "stream_input.h"

namespace ws {
namespace {

bool ends_with(const std::string& s, const std::string& suffix) {
    return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

std::string dir_of(const std::string& path) {
    const size_t slash = path.rfind('/');
    return slash == std::string::npos ? std::string() : path.substr(0, slash + 1);
}

bool map_file(const std::string& path, MappedFile* file, LoadError* error) {
    std::string why;
    if (file->open(path, &why)) return true;
    error->io = true;
    error->file = path;
    error->message = why;
    return false;
}

// Parses one whole file; a parser still wanting bytes at the end of the file means it is truncated.
bool parse_file(const std::string& path, MappedFile& file, ParseOptions options, ModelInfo* info, LoadError* error) {
    options.file_size = file.size();
    if (ends_with(path, ".gguf")) options.format_hint = Format::kGguf;
    if (ends_with(path, ".safetensors")) options.format_hint = Format::kSafetensors;
    if (file.is_stream()) return read_stream_header(path, &file, options, info, error);  // a pipe: never whole
    HeaderParser parser(options);
    Status s = parser.feed(file.data(), file.size());
    if (s.code == Error::kNeedMoreData) s = make_error(Error::kTruncated, file.size(), "header");
    if (!s.ok()) {
        error->file = path;
        error->status = s;
        return false;
    }
    *info = parser.take_info();
    info->file_size = file.size();
    return true;
}

bool load_parts(const std::vector<std::string>& paths, const ParseOptions& options, LoadedModel* model,
                std::vector<ModelInfo>* infos, LoadError* error) {
    model->paths = paths;
    model->files.resize(paths.size());
    infos->resize(paths.size());
    for (size_t i = 0; i < paths.size(); ++i) {
        if (!map_file(paths[i], &model->files[i], error)) return false;
        if (!parse_file(paths[i], model->files[i], options, &(*infos)[i], error)) return false;
    }
    return true;
}

std::vector<std::string> base_names(const std::vector<std::string>& paths) {
    std::vector<std::string> names;
    for (const std::string& p : paths) names.push_back(p.substr(dir_of(p).size()));
    return names;
}

// The merged description of a model in several files, or the merge's error reported against the part it
// is in (failed_part indexes model->paths), else against `path`.
bool take_merged(Result<ModelInfo> merged, uint32_t failed_part, const std::string& path, LoadedModel* model,
                 LoadError* error) {
    if (!merged.ok()) {
        error->file = failed_part < model->paths.size() ? model->paths[failed_part] : path;
        error->status = merged.status();
        return false;
    }
    model->info = std::move(merged).value();
    return true;
}

}  // namespace

const uint8_t* LoadedModel::tensor_data(const TensorInfo& t) const {
    if (t.file_index >= files.size()) return nullptr;
    const MappedFile& f = files[t.file_index];
    if (t.offset > f.size() || t.nbytes > f.size() - t.offset) return nullptr;
    return f.data() + t.offset;
}

bool load_model(const std::string& path, const ParseOptions& options, LoadedModel* model, LoadError* error) {
    *model = LoadedModel();
    std::vector<ModelInfo> infos;

    if (ends_with(path, ".index.json")) {
        MappedFile index_file;
        if (!map_file(path, &index_file, error)) return false;
        Result<SafetensorsIndex> index = parse_safetensors_index(index_file.data(), index_file.size());
        if (!index.ok()) {
            error->file = path;
            error->status = index.status();
            return false;
        }
        std::vector<std::string> paths;
        for (const std::string& shard : index.value().shard_files) paths.push_back(dir_of(path) + shard);
        if (!load_parts(paths, options, model, &infos, error)) return false;
        uint32_t failed = kNoPart;
        Result<ModelInfo> merged = combine_safetensors_shards(index.value(), std::move(infos), &failed);
        return take_merged(std::move(merged), failed, path, model, error);
    }

    SplitName split;
    if (parse_split_name(path, &split) && split.count > 1) {
        std::vector<std::string> paths;
        for (uint32_t i = 1; i <= split.count; ++i) paths.push_back(split_part_path(split.prefix, i, split.count));
        if (!load_parts(paths, options, model, &infos, error)) return false;
        uint32_t failed = kNoPart;
        Result<ModelInfo> merged = combine_gguf_split(std::move(infos), base_names(paths), &failed);
        return take_merged(std::move(merged), failed, path, model, error);
    }

    if (!load_parts({path}, options, model, &infos, error)) return false;
    model->info = std::move(infos[0]);
    return true;
}

}  // namespace ws
