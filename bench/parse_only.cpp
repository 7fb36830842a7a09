// SPDX-License-Identifier: MIT
// The floor for `weightstream info --json`: the project's own header parser over the mmapped file and
// nothing else (no JSON, no printing), as a whole process. docs/SPEED.md ("Parsing") times the two side by side.
// Usage: parse_only FILE; exit status 0 when the header parses, 1 when it does not, 3 when FILE cannot be
// mapped.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "weightstream/header_parser.h"

int main(int argc, char** argv) {
    if (argc != 2) return 2;
    const int fd = open(argv[1], O_RDONLY);
    if (fd < 0) return 3;
    struct stat st;
    if (fstat(fd, &st) != 0 || st.st_size <= 0) return 3;
    const size_t size = static_cast<size_t>(st.st_size);
    void* map = mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (map == MAP_FAILED) return 3;
    ws::ParseOptions options;
    options.file_size = size;
    ws::HeaderParser parser(options);
    const ws::Status s = parser.feed(static_cast<const uint8_t*>(map), size);
    const ws::ModelInfo info = parser.take_info();
    munmap(map, size);
    return s.ok() && info.format != ws::Format::kUnknown ? 0 : 1;
}
