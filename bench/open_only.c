/* SPDX-License-Identifier: MIT */
/* The floor for `weightstream --version`'s start-up: a C main that opens a file and exits (README, speed). */
#include <fcntl.h>
#include <unistd.h>

int main(int argc, char** argv) {
    if (argc != 2) return 2;
    const int fd = open(argv[1], O_RDONLY);
    if (fd < 0) return 3;
    close(fd);
    return 0;
}
