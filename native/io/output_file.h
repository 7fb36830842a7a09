// SPDX-License-Identifier: MIT
// An output file that appears complete or not at all, safely in a shared directory. Every command that
// writes a file (dump -o, convert, and the coming quantize and edit) writes through this class:
//   - a regular file (or a new path) is written to a temporary file beside it with a random name, created
//     with O_CREAT | O_EXCL | O_NOFOLLOW (so a file or symlink planted at any name is never followed or
//     reused, and two writers to one OUT never share a temporary file), fsync'd and renamed over OUT by
//     commit(); the result is exactly one writer's complete file;
//   - a replaced file's permission bits (and, where allowed, its owner) are kept; a new one gets
//     0666 & ~umask, as a plain open() would give it;
//   - an OUT that is one of the inputs (the same inode: the same path, a symlink or a hard link to it)
//     is refused before anything is written;
//   - the temporary file is removed on every error, when the object is destroyed uncommitted, and on
//     SIGINT, SIGTERM, SIGHUP (and by remove_temporary_outputs(), for other fatal signal handlers);
//   - on Linux the temporary file is unnamed (O_TMPFILE) until commit() links it beside OUT for the rename,
//     so a process killed by SIGKILL (or a power loss) before the commit leaves nothing behind; where
//     O_TMPFILE or /proc is missing, the named temporary file of the first point is used. Named temporary
//     files are OUT.tmp-RANDOM.HOST.PID; opening OUT removes those that a dead process of this host and user
//     left (a kill -9 between the link and the rename, or without O_TMPFILE);
//   - "-" is stdout; another existing non-regular file (/dev/null, a FIFO, a terminal) is written directly.
// Every write is checked, so a full disk is reported, not silently truncated.
// edit --in-place uses it too (open_replacing, copy_of, write_at): a new file made from the old one, renamed
// over it, so a reader or a crash sees the old file or the new one, never a mix.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace ws {

// A file's identity (st_dev, st_ino), for recognising one file under several names.
struct FileIdentity {
    dev_t dev = 0;
    ino_t ino = 0;
};

class OutputFile {
public:
    OutputFile();
    ~OutputFile();  // removes the temporary file unless commit() succeeded
    OutputFile(const OutputFile&) = delete;
    OutputFile& operator=(const OutputFile&) = delete;

    // Starts writing `path`. `inputs` are the files the output is made from; an OUT that is one of them is
    // refused. On failure returns false; error() says why.
    bool open(const std::string& path, const std::vector<FileIdentity>& inputs);
    // Starts writing the file that replaces `path`, the existing regular file `expected` (edit --in-place): as
    // open(), and commit() renames over `path` only while it is still `expected` (a file renamed into place
    // meanwhile is left as it is, and commit() fails).
    bool open_replacing(const std::string& path, const FileIdentity& expected);
    // Fills the output, just opened and still empty, with the first `size` bytes of descriptor fd (the whole
    // file): a clone sharing fd's blocks where the file system can (FICLONE: btrfs, XFS with reflink,
    // bcachefs; no data is written), else a copy (copy_file_range). *cloned says which.
    bool copy_of(int fd, uint64_t size, bool* cloned);
    // Writes `size` bytes over the output at `offset` (after copy_of).
    bool write_at(uint64_t offset, const void* data, size_t size);
    bool write(const void* data, size_t size);
    bool write_zeros(size_t size);
    // Ends the writing without the rename: flushes, sets the mode, fsyncs and frees the buffer; the file stays a
    // temporary one (unnamed where O_TMPFILE is, holding its descriptor) until commit(). For several files that
    // are renamed into place only when all are complete (the parts of a split GGUF).
    bool prepare();
    // prepare() if not done, then renames the file into place.
    bool commit();

    bool is_stdout() const { return fd_ == 1; }
    // "cannot write PATH: <the system's words>" for the first failure.
    const std::string& error() const { return error_; }

private:
    bool set_error(const std::string& what);
    bool create_temporary();
    bool name_temporary();
    bool flush();
    void discard();

    std::string path_;
    std::string tmp_path_;  // the temporary file's name (none yet while it is unnamed)
    bool direct_ = false;   // stdout or a device: written directly, nothing to rename
    bool unnamed_ = false;  // an O_TMPFILE file, named by commit()
    bool replacing_ = false;
    FileIdentity expected_;  // open_replacing(): what path_ must still be at the rename
    int fd_ = -1;
    int slot_ = -1;       // this file's entry in the signal handlers' list of temporary files
    mode_t mode_ = 0600;  // the mode the finished file gets
    bool keep_owner_ = false;
    uid_t uid_ = 0;
    gid_t gid_ = 0;
    bool prepared_ = false;
    bool committed_ = false;
    std::vector<uint8_t> buffer_;  // bytes not yet written
    size_t buffered_ = 0;
    uint64_t written_ = 0;  // bytes flush() has written, in order
    uint64_t handed_ = 0;   // of those, the first handed_ are handed to the disk (sync_file_range)
    std::string error_;
};

// Removes every temporary output file of this process that is not committed. Async-signal-safe: for
// the handlers of fatal signals (a SIGBUS from a mapped input that shrank).
void remove_temporary_outputs();

}  // namespace ws
