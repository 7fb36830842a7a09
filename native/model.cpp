// SPDX-License-Identifier: MIT
#include "model.h"

#include <algorithm>

#include "header_parser.h"
#include "model_plan.h"
#include "stream_input.h"

namespace ws {
namespace {

std::string dir_of(const std::string& path) {
    const size_t slash = path.rfind('/');
    return slash == std::string::npos ? std::string() : path.substr(0, slash + 1);
}

void keep_head(const MappedFile& file, LoadError* error) {
    const size_t n = static_cast<size_t>(std::min<uint64_t>(file.size(), kLoadErrorHead));
    if (file.data()) error->head.assign(reinterpret_cast<const char*>(file.data()), n);
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
    options.format_hint = format_from_name(path);
    if (file.is_stream()) return read_stream_header(path, &file, options, info, error);  // a pipe: never whole
    HeaderParser parser(options);
    Status s = parser.feed(file.data(), file.size());
    if (s.code == Error::kNeedMoreData) s = make_error(Error::kTruncated, file.size(), "header");
    if (!s.ok()) {
        error->file = path;
        error->status = s;
        keep_head(file, error);
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

}  // namespace

const uint8_t* LoadedModel::tensor_data(const TensorInfo& t) const {
    if (t.file_index >= files.size()) return nullptr;
    const MappedFile& f = files[t.file_index];
    if (t.offset > f.size() || t.nbytes > f.size() - t.offset) return nullptr;
    return f.data() + t.offset;
}

bool load_model(const std::string& path, const ParseOptions& options, LoadedModel* model, LoadError* error) {
    *model = LoadedModel();
    const std::string dir = dir_of(path);
    PlanOptions plan_options;
    plan_options.max_split_parts = options.max_split_parts;
    ModelPlan plan;
    Status planned = plan.plan({PlanSource{path.substr(dir.size()), true, true}}, plan_options);
    if (planned.ok() && plan.index_source() != kSibling) {
        MappedFile index_file;
        if (!map_file(path, &index_file, error)) return false;
        planned = plan.set_index(index_file.data(), index_file.size());
        if (!planned.ok()) keep_head(index_file, error);
    }
    if (!planned.ok()) {
        error->file = path;
        error->status = planned;
        error->message = plan.message();
        return false;
    }

    // The source given is `path` itself; its siblings are next to it.
    std::vector<std::string> paths;
    for (const PlanPart& part : plan.parts()) paths.push_back(part.source == kSibling ? dir + part.name : path);
    std::vector<ModelInfo> infos;
    if (!load_parts(paths, options, model, &infos, error)) return false;
    if (plan.kind() == PlanKind::kSingle) {
        model->info = std::move(infos[0]);
        return true;
    }
    uint32_t failed = kNoPart;
    Result<ModelInfo> merged = plan.merge(std::move(infos), &failed);
    if (!merged.ok()) {
        error->file = failed < model->paths.size() ? model->paths[failed] : path;
        error->status = merged.status();
        return false;
    }
    model->info = std::move(merged).value();
    return true;
}

}  // namespace ws
