/* SPDX-License-Identifier: MIT */
/* The floor for `weightstream --version`'s start-up: a C main that opens a file and exits (docs/SPEED.md,
   "Start-up"). Built twice: open_only, and open_only_libm (WS_LINK_LIBM), which also calls into libm, as
   weightstream must link it (the quantizers' roundf and sqrtf, the statistics' ldexp...): the same libraries to
   map and relocate. */
#include <fcntl.h>
#include <unistd.h>
#ifdef WS_LINK_LIBM
#include <math.h>
#endif

int main(int argc, char** argv) {
    if (argc != 2) return 2;
    const int fd = open(argv[1], O_RDONLY);
    if (fd < 0) return 3;
    close(fd);
#ifdef WS_LINK_LIBM
    volatile double x = argc; /* not folded: a real call into libm.so */
    if (pow(x, 0.5) < 0) return 4;
#endif
    return 0;
}
