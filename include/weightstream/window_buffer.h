// SPDX-License-Identifier: MIT
// WindowBuffer: a job's scratch for one step's window (decoded floats, encoded bytes), whose every element the
// step's parts write before anything reads it. Unlike a std::vector it neither zeroes what it grows by nor
// shrinks: a vector's resize is a serial memset, and its first growth page-faults the whole window in on the
// thread that resizes, before the parts start (measured: 79 ms of a 1.05 s two-thread Q6_K run on this VM, where
// page faults are expensive). Here the parts fault their own rows in, in parallel, and later windows reuse the
// memory as it is.
#pragma once

#include <cstddef>
#include <memory>

namespace ws {

template <typename T>
class WindowBuffer {
public:
    // Makes the buffer n elements long, their values unspecified (what an earlier window left, or never written).
    void set_size(size_t n) {
        if (n > capacity_) {
            data_.reset(new T[n]);  // default-initialized: no element is touched
            capacity_ = n;
        }
        size_ = n;
    }
    T* data() { return data_.get(); }
    const T* data() const { return data_.get(); }
    size_t size() const { return size_; }

private:
    std::unique_ptr<T[]> data_;
    size_t capacity_ = 0, size_ = 0;
};

}  // namespace ws
