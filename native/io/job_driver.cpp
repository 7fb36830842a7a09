// SPDX-License-Identifier: MIT
#include "io/job_driver.h"

#include <unistd.h>

#include <algorithm>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>

#include "io/stream_input.h"
#include "weightstream/window_buffer.h"

namespace ws {
namespace {

// Parts per thread a step is cut into (at most: the job caps them), taken by the threads as they come free:
// parts of unequal cost (compare's lanes, a window's rows of different content, a thread that shares its core
// with the writer or the read ahead) then even out, and at the step's end a thread waits for at most one small
// part. 16 measured 2-3.5 % faster than 4 for two-thread k-quants here.
constexpr uint32_t kPartsPerThread = 16;

// Runs the parts of one step at a time: the calling thread and up to threads - 1 workers, kept for the whole
// job (a step can be a few milliseconds of work, so threads are not started per step).
class PartRunner {
public:
    explicit PartRunner(unsigned threads) {
        for (unsigned i = 1; i < threads; ++i) workers_.emplace_back([this] { work(); });
    }
    ~PartRunner() {
        {
            std::lock_guard<std::mutex> lock(mutex_);
            stopping_ = true;
        }
        wake_.notify_all();
        for (std::thread& t : workers_) t.join();
    }
    unsigned threads() const { return static_cast<unsigned>(workers_.size()) + 1; }

    // Runs job.run(inputs, i, parts) for every i < parts, returning when all have.
    void run(Job& job, const ByteSpan* inputs, uint32_t parts) {
        if (parts <= 1 || workers_.empty()) {
            for (uint32_t i = 0; i < parts; ++i) job.run(inputs, i, parts);
            return;
        }
        {
            std::lock_guard<std::mutex> lock(mutex_);
            job_ = &job;
            inputs_ = inputs;
            parts_ = parts;
            next_ = 0;
            done_ = 0;
            ++generation_;
        }
        wake_.notify_all();
        take_parts();
        std::unique_lock<std::mutex> lock(mutex_);
        finished_.wait(lock, [this] { return done_ == parts_; });
        job_ = nullptr;
    }

private:
    void work() {
        uint64_t seen = 0;
        for (;;) {
            {
                std::unique_lock<std::mutex> lock(mutex_);
                wake_.wait(lock, [&] { return stopping_ || generation_ != seen; });
                if (stopping_) return;
                seen = generation_;
            }
            take_parts();
        }
    }
    void take_parts() {
        for (;;) {
            uint32_t part;
            {
                std::lock_guard<std::mutex> lock(mutex_);
                if (!job_ || next_ >= parts_) return;
                part = next_++;
            }
            job_->run(inputs_, part, parts_);
            std::lock_guard<std::mutex> lock(mutex_);
            if (++done_ == parts_) finished_.notify_one();
        }
    }

    std::vector<std::thread> workers_;
    std::mutex mutex_;
    std::condition_variable wake_, finished_;
    bool stopping_ = false;
    uint64_t generation_ = 0;
    Job* job_ = nullptr;
    const ByteSpan* inputs_ = nullptr;
    uint32_t parts_ = 0, next_ = 0, done_ = 0;
};

// With several threads, the output written on a thread of its own while the next step runs: writing (the copy
// into the page cache) is a large serial part of a fast quantizer's time (Q8_0: about a quarter of one thread's),
// which would otherwise stop every thread between steps. Each output is copied first (the job reuses its buffers
// and may hand out its inputs), so the writes are the same bytes in the same order, one at a time; memory: one
// step's output more.
class OutputWriter {
public:
    explicit OutputWriter(const std::function<bool(uint32_t, const uint8_t*, size_t)>& write) : write_(write) {
        thread_ = std::thread([this] { work(); });
    }
    ~OutputWriter() {
        {
            std::lock_guard<std::mutex> lock(mutex_);
            stopping_ = true;
        }
        wake_.notify_all();
        thread_.join();
    }
    // Waits for the previous output to be written, then starts writing this one. False once a write has failed
    // (the writer then takes nothing more).
    bool put(uint32_t output, const uint8_t* data, size_t size) {
        if (!finish()) return false;
        buffer_.assign(data, data + size);
        std::lock_guard<std::mutex> lock(mutex_);
        output_ = output;
        pending_ = true;
        wake_.notify_all();
        return true;
    }
    // Waits for what was put to be written; false when a write failed.
    bool finish() {
        std::unique_lock<std::mutex> lock(mutex_);
        wake_.wait(lock, [this] { return !pending_; });
        return ok_;
    }

private:
    void work() {
        std::unique_lock<std::mutex> lock(mutex_);
        for (;;) {
            wake_.wait(lock, [this] { return stopping_ || pending_; });
            if (!pending_) return;  // stopping, nothing left to write
            lock.unlock();
            const bool written = write_(output_, buffer_.data(), buffer_.size());
            lock.lock();
            ok_ = written;
            pending_ = false;
            wake_.notify_all();
        }
    }

    const std::function<bool(uint32_t, const uint8_t*, size_t)>& write_;
    std::vector<uint8_t> buffer_;
    uint32_t output_ = 0;
    std::mutex mutex_;
    std::condition_variable wake_;
    bool pending_ = false, ok_ = true, stopping_ = false;
    std::thread thread_;
};

// One input of a step, as read_input() left it: a local file's range copied into `copied`, or a remote range or a
// stream's bytes in `fetched`; `data` the first byte. Both buffers are kept from step to step (their memory
// reused: windows are of one size).
struct InputBytes {
    TensorBytes fetched;
    WindowBuffer<uint8_t> copied;
    const uint8_t* data = nullptr;
};

// Reads range r of source s into *in: a local file's bytes copied (MappedFile::read_at says why not a span of
// the mapping), the range fetched, or a stream's next bytes.
bool read_input(const JobSource& s, const ByteRange& r, InputBytes* in, LoadError* error) {
    static const uint8_t kNoBytes = 0;  // an empty range's bytes: somewhere, not nullptr
    in->data = nullptr;
    if (s.stream) {
        if (!read_stream_range(s.model->paths[s.file], s.stream, r.offset, r.size, &in->fetched.buffer, error)) {
            return false;
        }
        in->data = r.size > 0 ? in->fetched.buffer.data() : &kNoBytes;
        return true;
    }
    if (s.model->local(s.file)) {
        in->copied.set_size(static_cast<size_t>(r.size));
        if (!s.model->copy_range(s.file, r.offset, r.size, in->copied.data(), error)) return false;
        in->data = r.size > 0 ? in->copied.data() : &kNoBytes;
        return true;
    }
    if (!s.model->read_range(s.file, r.offset, r.size, &in->fetched, error)) return false;
    in->data = in->fetched.data;
    return true;
}

// The inputs of the step after the running one, read on a thread of their own while the step runs: those in
// files at URLs (the network and the work overlap), and with several threads those in local files too (the copy
// is then off the steps' serial path). A guess: the next step takes what equals its own inputs; a failed read, or
// one not asked for, is dropped, and the read in order says why.
class FetchAhead {
public:
    FetchAhead(const std::vector<JobSource>& sources, bool local) : sources_(sources), local_(local) {}
    ~FetchAhead() { join(); }

    // Starts reading `ranges` (those of remote sources, and of local ones if asked), dropping what was read before;
    // the ranges already being read (a step that reads nothing, such as padding, names its successor's again) go on.
    void start(const std::vector<ByteRange>& ranges) {
        std::vector<ByteRange> wanted;
        for (const ByteRange& r : ranges) {
            if (r.source >= sources_.size()) continue;
            const JobSource& s = sources_[r.source];
            const LoadedModel& m = *s.model;
            if (s.stream || s.file >= m.files.size() || m.files[s.file].is_stream()) continue;
            if (m.local(s.file) ? local_ : true) wanted.push_back(r);
        }
        auto same = [](const ByteRange& a, const ByteRange& b) {
            return a.source == b.source && a.offset == b.offset && a.size == b.size;
        };
        if (!wanted.empty() && std::equal(wanted.begin(), wanted.end(), ranges_.begin(), ranges_.end(), same)) return;
        join();
        ranges_ = std::move(wanted);
        fetched_ = 0;  // before any return: take() reads ranges_[0, fetched_)
        if (ranges_.empty()) return;
        if (bytes_.size() < ranges_.size()) bytes_.resize(ranges_.size());
        thread_ = std::thread([this] {
            LoadError ignored;  // the read in order says why
            while (fetched_ < ranges_.size() &&
                   read_input(sources_[ranges_[fetched_].source], ranges_[fetched_], &bytes_[fetched_], &ignored)) {
                ++fetched_;
            }
        });
    }
    // r's bytes into *in when they were read ahead (what *in held goes to the next read ahead).
    bool take(const ByteRange& r, InputBytes* in) {
        join();
        for (size_t i = 0; i < fetched_; ++i) {
            const ByteRange& a = ranges_[i];
            if (a.source != r.source || a.offset != r.offset || a.size != r.size || !bytes_[i].data) continue;
            std::swap(*in, bytes_[i]);  // the buffers move, and data with them
            bytes_[i].data = nullptr;
            return true;
        }
        return false;
    }

private:
    void join() {
        if (thread_.joinable()) thread_.join();
    }

    const std::vector<JobSource>& sources_;
    const bool local_;
    std::vector<ByteRange> ranges_;
    std::vector<InputBytes> bytes_;
    size_t fetched_ = 0;  // ranges_[0, fetched_) are in bytes_
    std::thread thread_;
};

}  // namespace

std::vector<JobSource> sources_of(const LoadedModel& model) {
    std::vector<JobSource> sources;
    for (size_t i = 0; i < model.files.size(); ++i) sources.push_back({&model, i});
    return sources;
}

DriveResult drive(Job& job, const std::vector<JobSource>& sources, const DriveOptions& options) {
    DriveResult result;
    PartRunner runner(std::max(1u, options.threads));
    FetchAhead ahead(sources, runner.threads() > 1);
    // One thread keeps the write in order between the steps (a command told to use one thread uses one).
    std::unique_ptr<OutputWriter> writer;
    if (options.write && runner.threads() > 1) writer = std::make_unique<OutputWriter>(options.write);
    // The result of a step that failed, once the output of the steps before it is written (a write that failed
    // comes first, as it would have without the writer).
    auto after_writes = [&](DriveResult r) {
        if (writer && !writer->finish()) {
            DriveResult failed;
            failed.kind = DriveResult::Kind::kOutput;
            return failed;
        }
        return r;
    };
    JobStep step;
    std::vector<InputBytes> held;
    std::vector<ByteSpan> inputs;
    while (job.next(&step)) {
        held.resize(step.inputs.size());
        inputs.assign(step.inputs.size(), ByteSpan());
        bool skipped = false;
        for (size_t i = 0; i < step.inputs.size() && !skipped; ++i) {
            const ByteRange& r = step.inputs[i];
            if (r.source >= sources.size()) {
                result.kind = DriveResult::Kind::kJob;
                result.status = make_error(Error::kInternal, r.offset, "job.source");
                return after_writes(std::move(result));
            }
            LoadError error;
            if (!ahead.take(r, &held[i]) && !read_input(sources[r.source], r, &held[i], &error)) {
                if (error.source_failed()) {
                    result.kind = DriveResult::Kind::kSource;
                    result.source = r.source;
                    result.load = std::move(error);
                    return after_writes(std::move(result));
                }
                const Status taken = job.unreadable(r);
                if (!taken.ok()) {
                    result.kind = DriveResult::Kind::kJob;
                    result.status = taken;
                    result.tensor = step.tensor;
                    result.source = r.source;
                    result.load = std::move(error);
                    return after_writes(std::move(result));
                }
                skipped = true;
                break;
            }
            inputs[i] = {held[i].data, r.size};
        }
        if (!skipped) {
            ahead.start(step.next_inputs);
            const uint32_t threads = runner.threads();
            runner.run(job, inputs.data(),
                       threads == 1
                           ? 1
                           : std::min<uint32_t>(std::max<uint32_t>(1, step.max_parts), threads * kPartsPerThread));
            ByteSpan out;
            const Status s = job.complete(&out);
            if (!s.ok()) {
                result.kind = DriveResult::Kind::kJob;
                result.status = s;
                result.tensor = step.tensor;
                result.source = step.inputs.empty() ? 0 : step.inputs[0].source;
                return after_writes(std::move(result));
            }
            if (out.size > 0 && options.write &&
                !(writer ? writer->put(step.output, out.data, static_cast<size_t>(out.size))
                         : options.write(step.output, out.data, static_cast<size_t>(out.size)))) {
                result.kind = DriveResult::Kind::kOutput;
                return result;
            }
        }
        if (options.progress) options.progress(step);
    }
    return after_writes(std::move(result));
}

}  // namespace ws
