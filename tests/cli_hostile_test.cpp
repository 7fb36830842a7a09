// SPDX-License-Identifier: MIT
// The CLI against what a hostile world does to files: names that steer the terminal, outputs
// raced or planted on, inputs that change or never end while they are read. Every test runs the real binary
// on fixtures written by tests/support/gguf_builder.h and safetensors_builder.h.
#include <dirent.h>
#include <fcntl.h>
#include <openssl/evp.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "support/gguf_builder.h"
#include "support/run_cli.h"
#include "support/safetensors_builder.h"

using ws_test::quote;
using ws_test::run_cli;

namespace {

// U+009B (CSI) as UTF-8, the raw byte 0x9b, U+202E (right-to-left override), U+2066 (left-to-right isolate).
const std::string kHostileName =
    "w\xc2\x9b"
    "31m\x9b"
    "0m\xe2\x80\xae"
    "cod.exe\xe2\x81\xa6x";

struct Measured {
    int status = -1;      // exit status, or -1 when killed by a signal
    long max_rss_kb = 0;  // the child's peak resident memory
    std::string out;
    std::string err;
};

// Runs the CLI with argv (no shell), stdin from `stdin_path` (or /dev/null), and measures its peak RSS.
Measured run_measured(const std::vector<std::string>& args, const std::string& stdin_path = "/dev/null") {
    char err_path[] = "/tmp/ws_measured_err_XXXXXX";
    char out_path[] = "/tmp/ws_measured_out_XXXXXX";
    const int err_fd = mkstemp(err_path);
    const int out_fd = mkstemp(out_path);
    const pid_t pid = fork();
    if (pid == 0) {
        const int in = ::open(stdin_path.c_str(), O_RDONLY);
        dup2(in, 0);
        dup2(out_fd, 1);
        dup2(err_fd, 2);
        std::vector<char*> argv{const_cast<char*>(WS_CLI)};
        for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
        argv.push_back(nullptr);
        execv(WS_CLI, argv.data());
        _exit(127);
    }
    Measured m;
    int raw = 0;
    struct rusage usage;
    if (wait4(pid, &raw, 0, &usage) == pid) {
        m.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
        m.max_rss_kb = usage.ru_maxrss;
    }
    ::close(err_fd);
    ::close(out_fd);
    const std::vector<uint8_t> err = ws_test::read_file(err_path), out = ws_test::read_file(out_path);
    m.err.assign(err.begin(), err.end());
    m.out.assign(out.begin(), out.end());
    unlink(err_path);
    unlink(out_path);
    return m;
}

// The peak RSS of the CLI doing almost nothing (an ASan build starts at about 256 MB): memory bounds are
// checked above it.
long baseline_rss_kb() {
    static const long kBaseline = run_measured({"info", ws_test::data_path("ggml/ggml-types.gguf")}).max_rss_kb;
    return kBaseline;
}

bool has_raw_controls(const std::string& s) {
    return s.find("\xc2\x9b") != std::string::npos || s.find('\x9b') != std::string::npos ||
           s.find("\xe2\x80\xae") != std::string::npos || s.find("\xe2\x81\xa6") != std::string::npos ||
           s.find('\x1b') != std::string::npos;
}

}  // namespace

TEST_CASE("C1 controls and bidi overrides in names are escaped in every human output") {
    ws_test::GgufSpec spec;
    spec.kvs = {{"general.name", ws_test::val_str(kHostileName)}, {kHostileName, ws_test::val_u32(1)}};
    spec.tensors = {{kHostileName, 0, {4}, {}, ws_test::kAutoOffset}};
    ws_test::TempDir dir;
    const std::string path = dir.file("hostile.gguf");
    ws_test::write_file(path, ws_test::build_gguf(spec).bytes);

    const std::string escaped = "w\\u009b31m\\x9b0m\\u202ecod.exe\\u2066x";
    for (const char* command : {"info", "tensors", "hash", "stats"}) {
        INFO(command);
        const ws_test::CliResult r = run_cli(std::string(command) + " " + quote(path));
        REQUIRE(r.status == 0);
        CHECK_FALSE(has_raw_controls(r.out));
        CHECK(r.out.find(escaped) != std::string::npos);
    }
    // An error message quoting a name: the name given on the command line comes back escaped.
    const ws_test::CliResult missing = run_cli("dump " + quote(path) + " " + quote(kHostileName + "y"));
    CHECK(missing.status == 2);
    CHECK_FALSE(has_raw_controls(missing.err));
    CHECK(missing.err.find(escaped + "y") != std::string::npos);
}

TEST_CASE("hash of many empty tensors: one line each, the empty digest twice") {
    // 1,048,576 of them took 81 s when every tensor started a thread (measured figures in the report);
    // this checks the output of the inline path on a smaller count.
    ws_test::GgufSpec spec;
    for (int i = 0; i < 4096; ++i) spec.tensors.push_back({"t" + std::to_string(i), 0, {0}, {}, 0});
    ws_test::TempDir dir;
    const std::string path = dir.file("empty.gguf");
    ws_test::write_file(path, ws_test::build_gguf(spec).bytes);
    const ws_test::CliResult r = run_cli("hash " + quote(path));
    REQUIRE(r.status == 0);
    const std::string empty = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";
    size_t lines = 0, pos = 0;
    for (size_t next; (next = r.out.find('\n', pos)) != std::string::npos; pos = next + 1, ++lines) {
        const std::string line = r.out.substr(pos, next - pos);
        CHECK(line == empty + "  " + empty + "  F32      t" + std::to_string(lines));
    }
    CHECK(lines == 4096);
}

namespace {

// A GGUF of one F32 tensor [ne0, ne1] whose bytes depend on `seed`.
std::string write_f32_model(const ws_test::TempDir& dir, const std::string& name, int64_t ne0, int64_t ne1,
                            uint8_t seed) {
    ws_test::GgufSpec spec;
    std::vector<uint8_t> data(static_cast<size_t>(ne0 * ne1 * 4));
    for (size_t i = 0; i < data.size(); i += 4) {
        const float v = static_cast<float>((i / 4 + seed) % 251) / 16.0f - 7.0f;
        std::memcpy(&data[i], &v, 4);
    }
    spec.tensors = {{"w", 0, {ne0, ne1}, std::move(data), ws_test::kAutoOffset}};
    const std::string path = dir.file(name);
    ws_test::write_file(path, ws_test::build_gguf(spec).bytes);
    return path;
}

mode_t mode_of(const std::string& path) {
    struct stat st;
    REQUIRE(::lstat(path.c_str(), &st) == 0);
    return st.st_mode;
}

}  // namespace

TEST_CASE("two converts to one OUT at once: OUT is exactly one of them, complete") {
    ws_test::TempDir dir;
    const std::string a = write_f32_model(dir, "a.gguf", 1024, 2048, 1);
    const std::string b = write_f32_model(dir, "b.gguf", 1024, 2048, 2);
    const std::string ref_a = dir.file("ref_a.safetensors"), ref_b = dir.file("ref_b.safetensors");
    REQUIRE(run_cli("convert " + quote(a) + " " + quote(ref_a) + " --dtype f16").status == 0);
    REQUIRE(run_cli("convert " + quote(b) + " " + quote(ref_b) + " --dtype f16").status == 0);
    const std::vector<uint8_t> want_a = ws_test::read_file(ref_a), want_b = ws_test::read_file(ref_b);
    REQUIRE(want_a != want_b);
    const std::string out = dir.file("out.safetensors");
    for (int round = 0; round < 4; ++round) {
        INFO("round " << round);
        const std::string one = std::string(WS_CLI) + " convert %s " + quote(out) + " --dtype f16 >/dev/null 2>&1";
        char cmd[4096];
        std::snprintf(cmd, sizeof cmd,
                      ("sh -c " + quote("(" + one + "; echo $? > " + quote(dir.file("rc_a")) + ") & (" + one +
                                        "; echo $? > " + quote(dir.file("rc_b")) + ") & wait"))
                          .c_str(),
                      quote(a).c_str(), quote(b).c_str());
        REQUIRE(std::system(cmd) == 0);
        const std::vector<uint8_t> rc_a = ws_test::read_file(dir.file("rc_a")),
                                   rc_b = ws_test::read_file(dir.file("rc_b"));
        CHECK(std::string(rc_a.begin(), rc_a.end()) == "0\n");
        CHECK(std::string(rc_b.begin(), rc_b.end()) == "0\n");
        const std::vector<uint8_t> got = ws_test::read_file(out);
        CHECK((got == want_a || got == want_b));
        CHECK(run_cli("verify " + quote(out)).status == 0);
        CHECK(ws_test::temporary_files(dir.path).empty());
    }
}

TEST_CASE("a symlink planted at the old temporary name is not followed, and a replaced OUT keeps its mode") {
    ws_test::TempDir dir;
    const std::string in = write_f32_model(dir, "in.gguf", 64, 4, 3);
    const std::string victim = dir.file("victim.txt");
    ws_test::write_file(victim, {'k', 'e', 'e', 'p'});
    const std::string out = dir.file("out.gguf");
    REQUIRE(::symlink(victim.c_str(), (out + ".tmp").c_str()) == 0);
    ws_test::write_file(out, {'o', 'l', 'd'});
    REQUIRE(::chmod(out.c_str(), 0640) == 0);

    const ws_test::CliResult r = run_cli("convert " + quote(in) + " " + quote(out));
    REQUIRE(r.status == 0);
    CHECK(ws_test::read_file(victim) == std::vector<uint8_t>{'k', 'e', 'e', 'p'});
    CHECK(S_ISREG(mode_of(out)));
    CHECK((mode_of(out) & 07777) == 0640);
    CHECK(S_ISLNK(mode_of(out + ".tmp")));  // the planted link itself is left alone
    CHECK(run_cli("verify " + quote(out)).status == 0);
    ::unlink((out + ".tmp").c_str());
    CHECK(ws_test::temporary_files(dir.path).empty());

    // A new OUT gets the mode a plain create would: 0666 less the umask.
    const std::string fresh = dir.file("fresh.gguf");
    const mode_t old_mask = ::umask(027);
    const int status = run_cli("convert " + quote(in) + " " + quote(fresh)).status;
    ::umask(old_mask);
    REQUIRE(status == 0);
    CHECK((mode_of(fresh) & 07777) == 0640);
}

TEST_CASE("an OUT that is the input is refused, by its name, a symlink or a hard link") {
    ws_test::TempDir dir;
    const std::string in = write_f32_model(dir, "in.gguf", 64, 4, 4);
    const std::vector<uint8_t> before = ws_test::read_file(in);
    const std::string link = dir.file("link.gguf"), hard = dir.file("hard.gguf");
    REQUIRE(::symlink(in.c_str(), link.c_str()) == 0);
    REQUIRE(::link(in.c_str(), hard.c_str()) == 0);
    for (const std::string& out : {in, link, hard}) {
        INFO(out);
        const ws_test::CliResult r = run_cli("convert " + quote(in) + " " + quote(out) + " --dtype f16");
        CHECK(r.status == 3);
        CHECK(r.err == "weightstream: error: cannot write " + out + ": it is the input file (the same inode)\n");
        const ws_test::CliResult d = run_cli("dump " + quote(in) + " w -o " + quote(out));
        CHECK(d.status == 3);
        CHECK(ws_test::read_file(in) == before);
    }
    CHECK(S_ISLNK(mode_of(link)));
    CHECK(ws_test::temporary_files(dir.path).empty());
}

// Whether process pid has an unnamed (O_TMPFILE) file of directory dir open: /proc shows it as "DIR/#INODE
// (deleted)".
bool writes_unnamed_file(pid_t pid, const std::string& dir) {
    const std::string fds = "/proc/" + std::to_string(pid) + "/fd";
    DIR* d = opendir(fds.c_str());
    if (!d) return false;
    bool found = false;
    while (const dirent* e = readdir(d)) {
        char target[4096];
        const ssize_t n = readlink((fds + "/" + e->d_name).c_str(), target, sizeof target - 1);
        if (n <= 0) continue;
        target[n] = '\0';
        found |= std::string(target).rfind(dir + "/#", 0) == 0;
    }
    closedir(d);
    return found;
}

TEST_CASE("SIGINT, SIGTERM or SIGKILL during convert leaves no temporary file and no OUT") {
    ws_test::TempDir dir;
    // 128 MiB of F32 quantized on one thread: long enough to interrupt.
    const std::string in = write_f32_model(dir, "in.gguf", 4096, 8192, 5);
    // A SIGKILL cannot be handled: the output is an unnamed file (O_TMPFILE) until its commit, so nothing of it
    // outlives the process (item 15 of the second adversarial round: a file OUT.tmp-RANDOM per killed run).
    for (int sig : {SIGINT, SIGTERM, SIGKILL}) {
        INFO("signal " << sig);
        const std::string out = dir.file("out.gguf");
        const pid_t pid = fork();
        REQUIRE(pid >= 0);
        if (pid == 0) {
            const int devnull = ::open("/dev/null", O_WRONLY);
            dup2(devnull, 1);
            dup2(devnull, 2);
            execl(WS_CLI, WS_CLI, "convert", in.c_str(), out.c_str(), "--dtype", "q4_0", "--threads", "1",
                  static_cast<char*>(nullptr));
            _exit(127);
        }
        // Wait for the unnamed output file, stop the process there (however fast the machine, it is mid-write)
        // and interrupt it.
        for (int i = 0; i < 50000 && !writes_unnamed_file(pid, dir.path); ++i) usleep(100);
        REQUIRE(::kill(pid, SIGSTOP) == 0);
        int stopped = 0;
        REQUIRE(waitpid(pid, &stopped, WUNTRACED) == pid);
        REQUIRE(WIFSTOPPED(stopped));
        REQUIRE(writes_unnamed_file(pid, dir.path));
        CHECK(ws_test::temporary_files(dir.path).empty());  // no name in the directory while it is written
        REQUIRE(::kill(pid, sig) == 0);
        REQUIRE(::kill(pid, SIGCONT) == 0);
        int raw = 0;
        REQUIRE(waitpid(pid, &raw, 0) == pid);
        REQUIRE(WIFSIGNALED(raw));  // it was still running: the test interrupted a write
        CHECK(WTERMSIG(raw) == sig);
        CHECK(ws_test::temporary_files(dir.path).empty());
        CHECK_FALSE(ws_test::file_exists(out));
    }
}

TEST_CASE("a temporary file a killed run left (named OUT.tmp-RANDOM.HOST.PID) is removed by the next output") {
    // Named temporary files exist only between the link and the rename of a commit (or where there is no
    // O_TMPFILE): the next run writing OUT removes those of dead processes of this host and user, no other.
    ws_test::TempDir dir;
    const std::string in = write_f32_model(dir, "in.gguf", 64, 4, 1);
    char host[256] = {};
    REQUIRE(gethostname(host, sizeof host - 1) == 0);
    uint32_t h = 2166136261u;
    for (const char* c = host; *c; ++c) h = (h ^ static_cast<uint8_t>(*c)) * 16777619u;
    char mark[9];
    std::snprintf(mark, sizeof mark, "%08x", h);
    const pid_t dead = fork();
    if (dead == 0) _exit(0);
    REQUIRE(waitpid(dead, nullptr, 0) == dead);
    const std::string out = dir.file("out.gguf");
    const std::string stale = out + ".tmp-0123456789abcdef." + mark + "." + std::to_string(dead);
    const std::string live = out + ".tmp-0123456789abcdef." + mark + "." + std::to_string(getpid());
    const std::string other_host = out + ".tmp-0123456789abcdef.00000000." + std::to_string(dead);
    const std::string other_out = dir.file("other.gguf") + ".tmp-0123456789abcdef." + mark + "." + std::to_string(dead);
    for (const std::string& f : {stale, live, other_host, other_out}) ws_test::write_file(f, {1, 2, 3});
    REQUIRE(run_cli("convert " + quote(in) + " " + quote(out)).status == 0);
    CHECK_FALSE(ws_test::file_exists(stale));
    CHECK(ws_test::file_exists(live));
    CHECK(ws_test::file_exists(other_host));
    CHECK(ws_test::file_exists(other_out));
}

TEST_CASE("convert refuses to write a file that its own reading rules reject") {
    ws_test::TempDir dir;
    // safetensors -> GGUF: zero elements, but in GGUF's order (innermost first) the dims' partial product
    // 2^62 * 2^62 overflows, which ggml and `verify` reject.
    const std::string st = dir.file("zero.safetensors");
    ws_test::write_file(
        st, ws_test::safetensors_file(R"({"z":{"dtype":"F32","shape":[0,4611686018427387904,4611686018427387904],)"
                                      R"("data_offsets":[0,0]},"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})",
                                      8));
    REQUIRE(run_cli("info " + quote(st)).status == 0);
    const std::string gguf = dir.file("out.gguf");
    const ws_test::CliResult r = run_cli("convert " + quote(st) + " " + quote(gguf));
    CHECK(r.status == 1);
    CHECK(r.err == "weightstream: error: " + st +
                       ": cannot be written as gguf: the output would be rejected when read: overflow: tensor.ne "
                       "(byte 70 of OUT)\n");  // after the header and general.file_type (33 bytes)
    CHECK_FALSE(ws_test::file_exists(gguf));

    // GGUF -> safetensors: the same dims the other way round (ne [0, 2^62, 2^62] is valid for ggml) become
    // a safetensors shape whose partial product overflows for the crate.
    ws_test::GgufSpec spec;
    spec.tensors = {{"z", 0, {0, int64_t(1) << 62, int64_t(1) << 62}, {}, 0}};
    const std::string in = dir.file("zero.gguf");
    ws_test::write_file(in, ws_test::build_gguf(spec).bytes);
    REQUIRE(run_cli("verify " + quote(in)).status == 0);
    const std::string out = dir.file("out.safetensors");
    const ws_test::CliResult back = run_cli("convert " + quote(in) + " " + quote(out));
    CHECK(back.status == 1);
    CHECK(back.err.find(": cannot be written as safetensors: the output would be rejected when read: overflow: ") !=
          std::string::npos);
    CHECK_FALSE(ws_test::file_exists(out));
    CHECK(ws_test::temporary_files(dir.path).empty());
}

TEST_CASE("an array of 10M empty arrays is too_large early, in bounded memory") {
    // 120 MB on disk; before the header memory budget it took 2.28 GB of RSS.
    ws_test::GgufWriter w;
    const uint64_t n = 10000000;
    w.header(0, 1).str("a").u32(static_cast<uint32_t>(ws::ValueType::kArray));
    w.u32(static_cast<uint32_t>(ws::ValueType::kArray)).length(n);
    for (uint64_t i = 0; i < n; ++i) w.u32(0).length(0);
    ws_test::TempDir dir;
    const std::string path = dir.file("arrays.gguf");
    ws_test::write_file(path, w.bytes());
    const Measured m = run_measured({"info", path});
    CHECK(m.status == 1);
    CHECK(m.err == "weightstream: error: " + path +
                       ": too_large: a size in the file is beyond the limits: header.memory (byte 6291505)\n");
    INFO("peak RSS " << m.max_rss_kb << " KB");
    CHECK(m.max_rss_kb < baseline_rss_kb() + 160 * 1024);
}

namespace {

// A GGUF header (no data) for one tensor "w" of `type` with ne {ne0}, padded to the data section.
std::vector<uint8_t> header_only(uint32_t type, int64_t ne0) {
    ws_test::GgufWriter w;
    w.header(1, 0).str("w").u32(1).dim(ne0).u32(type).u64(0).pad_to(32);
    return w.bytes();
}

// Hex sha256 of `n` zero bytes.
std::string sha256_of_zeros(uint64_t n) {
    std::unique_ptr<EVP_MD_CTX, void (*)(EVP_MD_CTX*)> ctx(EVP_MD_CTX_new(), EVP_MD_CTX_free);
    EVP_DigestInit_ex(ctx.get(), EVP_sha256(), nullptr);
    const std::vector<uint8_t> zeros(1 << 20, 0);
    for (uint64_t done = 0; done < n; done += zeros.size())
        EVP_DigestUpdate(ctx.get(), zeros.data(), std::min<uint64_t>(zeros.size(), n - done));
    unsigned char digest[EVP_MAX_MD_SIZE];
    unsigned int len = 0;
    EVP_DigestFinal_ex(ctx.get(), digest, &len);
    char hex[3];
    std::string s;
    for (unsigned int i = 0; i < len; ++i) {
        std::snprintf(hex, sizeof hex, "%02x", digest[i]);
        s += hex;
    }
    return s;
}

// A new FIFO in dir, fed by the shell command `writer` in the background. Each feed has a FIFO of its own: a
// writer that outlives its reader (endless zeros until SIGPIPE) cannot write into the next reader's stream.
std::string fed_fifo(const ws_test::TempDir& dir, const std::string& writer) {
    static int count = 0;
    const std::string fifo = dir.file("fifo" + std::to_string(count++));
    REQUIRE(mkfifo(fifo.c_str(), 0600) == 0);
    REQUIRE(std::system(("(" + writer + ") > " + quote(fifo) + " 2>/dev/null &").c_str()) == 0);
    return fifo;
}

}  // namespace

TEST_CASE("info of a FIFO fed endless bytes stops with a clear error or after the header, in bounded memory") {
    ws_test::TempDir dir;
    // Endless zeros: not a model, known after 9 bytes.
    const std::string fifo = fed_fifo(dir, "cat /dev/zero");
    const Measured zeros = run_measured({"info", fifo});
    CHECK(zeros.status == 1);
    CHECK(zeros.err ==
          "weightstream: error: " + fifo + ": bad_magic: not a GGUF or safetensors file: magic (byte 0)\n");
    CHECK(zeros.max_rss_kb < baseline_rss_kb() + 24 * 1024);
    // /dev/zero itself, a character device.
    const Measured dev = run_measured({"info", "/dev/zero"});
    CHECK(dev.status == 1);
    CHECK(dev.max_rss_kb < baseline_rss_kb() + 24 * 1024);

    // A real header followed by endless data: the header is printed, the data never read.
    const std::string header = dir.file("header.gguf");
    ws_test::write_file(header, header_only(1, int64_t(1) << 40));  // a 2 TiB F16 tensor
    const ws_test::CliResult r =
        run_cli("tensors " + quote(fed_fifo(dir, "cat " + quote(header) + "; cat /dev/zero")) + " --json");
    REQUIRE(r.status == 0);
    const nlohmann::json j = nlohmann::json::parse(r.out);
    REQUIRE(j["tensors"].size() == 1);
    CHECK(j["tensors"][0]["nbytes"] == uint64_t(1) << 41);
    const Measured m = run_measured({"info", fed_fifo(dir, "cat " + quote(header) + "; cat /dev/zero")});
    CHECK(m.status == 0);
    CHECK(m.max_rss_kb < baseline_rss_kb() + 24 * 1024);
}

TEST_CASE("hash of a pipe streams the tensors: the same digests as the file, in bounded memory") {
    ws_test::TempDir dir;
    // Empty tensors sharing their offset with the tensors around them.
    const std::string empties = dir.file("empties.safetensors");
    ws_test::write_file(empties, ws_test::safetensors_file(R"({"b":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
                                                           R"("a":{"dtype":"F32","shape":[0],"data_offsets":[8,8]},)"
                                                           R"("c":{"dtype":"F32","shape":[0],"data_offsets":[0,0]},)"
                                                           R"("d":{"dtype":"F16","shape":[2],"data_offsets":[8,12]}})",
                                                           12));
    // A real model through a pipe gives exactly the digests of the file.
    for (const std::string& path : {ws_test::data_path("ggml/ggml-types.gguf"),
                                    ws_test::data_path("safetensors/sample_overall.safetensors"), empties}) {
        INFO(path);
        const ws_test::CliResult file = run_cli("hash " + quote(path) + " --json");
        REQUIRE(file.status == 0);
        char cmd[4096];
        std::snprintf(cmd, sizeof cmd, "cat %s | %s hash /dev/stdin --json > %s", quote(path).c_str(), WS_CLI,
                      quote(dir.file("out.json")).c_str());
        REQUIRE(std::system(cmd) == 0);
        const std::vector<uint8_t> out = ws_test::read_file(dir.file("out.json"));
        CHECK(std::string(out.begin(), out.end()) == file.out);
    }

    // 512 MiB of F16 zeros through a pipe (the mmap path is never taken): bounded memory.
    const std::string header = dir.file("header.gguf");
    ws_test::write_file(header, header_only(1, int64_t(1) << 28));
    const Measured m = run_measured({"hash", fed_fifo(dir, "cat " + quote(header) + "; head -c 536870912 /dev/zero")});
    CHECK(m.status == 0);
    CHECK(m.out == sha256_of_zeros(uint64_t(1) << 29) + "  " + sha256_of_zeros(uint64_t(1) << 30) + "  F16      w\n");
    INFO("peak RSS " << m.max_rss_kb << " KB");
    CHECK(m.max_rss_kb < baseline_rss_kb() + 40 * 1024);
    // A stream that ends inside the tensor is truncated there.
    const std::string fifo = fed_fifo(dir, "cat " + quote(header) + "; head -c 1000000 /dev/zero");
    const Measured cut = run_measured({"hash", fifo});
    CHECK(cut.status == 1);
    CHECK(cut.err == "weightstream: error: " + fifo + ": truncated: the file ends too early: tensor.data (byte " +
                         std::to_string(header_only(1, 1).size() + 1000000) + "): tensor w\n");
    // Commands that seek in the data say so.
    const Measured verify = run_measured({"stats", fed_fifo(dir, "cat " + quote(header))});
    CHECK(verify.status == 3);
    CHECK(verify.err.find(": not_seekable: the source cannot be read out of order: not a regular file: this command "
                          "needs to seek in the tensor data") != std::string::npos);
}

TEST_CASE("a file truncated while it is read is an I/O error naming it (exit 3), outputs cleaned up") {
    ws_test::TempDir dir;
    // 128M elements of Q4_0 (72 MiB): decoding and hashing them on one thread takes a good while.
    ws_test::GgufSpec spec;
    std::vector<uint8_t> data(size_t(18) * 4096 * 1024 * 4);
    for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<uint8_t>(i * 13 + 5);
    for (size_t i = 0; i < data.size(); i += 18) data[i + 1] = 0x3c;  // finite f16 scales
    spec.tensors = {{"q", 2, {4096, 32768}, std::move(data), ws_test::kAutoOffset}};
    const std::vector<uint8_t> bytes = ws_test::build_gguf(spec).bytes;
    const std::string out = dir.file("out.safetensors");
    const std::vector<std::vector<std::string>> commands = {{"hash", "--threads", "1"},
                                                            {"verify", "--threads", "1"},
                                                            {"stats", "--threads", "1"},
                                                            {"convert", out, "--threads", "1"}};
    for (const auto& command : commands) {
        INFO(command[0]);
        const std::string path = dir.file("model.gguf");
        ws_test::write_file(path, bytes);
        char err_path[] = "/tmp/ws_truncated_err_XXXXXX";
        const int err_fd = mkstemp(err_path);
        const pid_t pid = fork();
        REQUIRE(pid >= 0);
        if (pid == 0) {
            const int devnull = ::open("/dev/null", O_WRONLY);
            dup2(devnull, 1);
            dup2(err_fd, 2);
            std::vector<const char*> argv{WS_CLI, command[0].c_str(), path.c_str()};
            for (size_t i = 1; i < command.size(); ++i) argv.push_back(command[i].c_str());
            argv.push_back(nullptr);
            execv(WS_CLI, const_cast<char* const*>(argv.data()));
            _exit(127);
        }
        // Once the file is mapped (the header is parsed then), the data is being read: stop the process there,
        // cut the file short and let it go on. Stopping first makes the cut land mid-read on a fast machine too
        // (verify reads all 72 MiB in well under 50 ms on some).
        const std::string maps = "/proc/" + std::to_string(pid) + "/maps";
        bool mapped = false;
        for (int i = 0; i < 50000 && !mapped; ++i) {
            std::ifstream in(maps);
            const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
            mapped = text.find(path) != std::string::npos;
            if (!mapped) usleep(100);
        }
        REQUIRE(::kill(pid, SIGSTOP) == 0);
        int stopped = 0;
        REQUIRE(waitpid(pid, &stopped, WUNTRACED) == pid);
        REQUIRE(mapped);
        REQUIRE(WIFSTOPPED(stopped));  // still running: the cut lands inside the read
        REQUIRE(::truncate(path.c_str(), 4096) == 0);
        REQUIRE(::kill(pid, SIGCONT) == 0);
        int raw = 0;
        REQUIRE(waitpid(pid, &raw, 0) == pid);
        ::close(err_fd);
        const std::vector<uint8_t> err_bytes = ws_test::read_file(err_path);
        unlink(err_path);
        const std::string err(err_bytes.begin(), err_bytes.end());
        INFO(err);
        REQUIRE(WIFEXITED(raw));  // not killed by SIGBUS (exit 135 in a shell)
        CHECK(WEXITSTATUS(raw) == 3);
        // The code of a URL whose file changes while it is read.
        CHECK(err.find("weightstream: error: " + path +
                       ": source_changed: the file changed while it was read: it shrank\n") != std::string::npos);
        CHECK(ws_test::temporary_files(dir.path).empty());
        CHECK_FALSE(ws_test::file_exists(out));
    }
}

namespace {

// A safetensors file of one F32 tensor (4 zeros) named `name`, with `extra` spliced into its entry and
// `metadata` as its __metadata__ (both JSON text, "" for none).
std::vector<uint8_t> safetensors_bytes(const std::string& name, const std::string& extra, const std::string& metadata) {
    std::string header = "{\"" + name + "\":{\"dtype\":\"F32\",\"shape\":[2,2],\"data_offsets\":[0,16]";
    if (!extra.empty()) header += ",\"extra\":" + extra;
    header += "}";
    if (!metadata.empty()) header += ",\"__metadata__\":" + metadata;
    header += "}";
    std::vector<uint8_t> bytes(8);
    for (int i = 0; i < 8; ++i) bytes[static_cast<size_t>(i)] = static_cast<uint8_t>(header.size() >> (8 * i));
    bytes.insert(bytes.end(), header.begin(), header.end());
    bytes.resize(bytes.size() + 16, 0);
    return bytes;
}

std::vector<uint8_t> text_bytes(const std::string& s) {
    return std::vector<uint8_t>(s.begin(), s.end());
}

}  // namespace

TEST_CASE("JSON nested 100,000 deep from a model, or a FIFO config.json or tokenizer.json, is no crash or hang") {
    ws_test::TempDir dir;
    const std::string deep = std::string(100000, '[') + std::string(100000, ']');
    const std::string st = dir.file("model.safetensors");
    ws_test::write_file(st, safetensors_bytes("model.embed_tokens.weight", "", ""));
    const std::string out = dir.file("out.gguf");

    // config.json: refused by its depth before it is parsed or copied (convert used to overflow the stack).
    ws_test::write_file(dir.file("config.json"), text_bytes("{\"model_type\": \"llama\", \"x\": " + deep + "}"));
    const std::string deep_warning =
        "weightstream: warning: " + dir.file("config.json") + " nests arrays or objects over 32 deep; ignored\n";
    const ws_test::CliResult c = run_cli("convert " + quote(st) + " " + quote(out), "", 120);
    CHECK(c.status == 0);
    CHECK(c.err.find(deep_warning) != std::string::npos);
    const ws_test::CliResult d = run_cli("diff " + quote(st) + " " + quote(out), "", 120);
    CHECK(d.status == 0);
    CHECK(d.err.find(deep_warning) != std::string::npos);

    // A safetensors entry's extra field is skipped however deep; __metadata__ must be strings: bad_json.
    const std::string extra = dir.file("extra.safetensors");
    ws_test::write_file(extra, safetensors_bytes("t", deep, ""));
    CHECK(run_cli("info " + quote(extra), "", 120).status == 0);
    const std::string meta = dir.file("meta.safetensors");
    ws_test::write_file(meta, safetensors_bytes("t", "", "{\"x\": " + deep + "}"));
    const ws_test::CliResult m = run_cli("info " + quote(meta), "", 120);
    CHECK(m.status == 1);
    CHECK(m.err.find("bad_json") != std::string::npos);

    // An index whose metadata and other members nest deep: they are skipped.
    ws_test::write_file(dir.file("model-00001-of-00001.safetensors"), safetensors_bytes("t", "", ""));
    const std::string index = dir.file("model.safetensors.index.json");
    ws_test::write_file(
        index, text_bytes("{\"metadata\": {\"x\": " + deep +
                          "}, \"weight_map\": {\"t\": \"model-00001-of-00001.safetensors\"}, \"y\": " + deep + "}"));
    CHECK(run_cli("info " + quote(index), "", 120).status == 0);

    // A FIFO at config.json or tokenizer.json beside the model: not opened for reading (it would block).
    for (const char* name : {"config.json", "tokenizer.json"}) {
        const std::string fifo = dir.file(name);
        unlink(fifo.c_str());
        REQUIRE(mkfifo(fifo.c_str(), 0600) == 0);
    }
    const ws_test::CliResult f = run_cli("convert " + quote(st) + " " + quote(dir.file("fifo.gguf")), "", 60);
    CHECK(f.status == 0);
    CHECK(f.err.find(dir.file("config.json") + " is not a regular file; ignored") != std::string::npos);
    CHECK(run_cli("diff " + quote(st) + " " + quote(out), "", 60).status == 0);

    // With a usable config.json, the tokenizer files are read: FIFOs among them are skipped, said, never opened
    // for reading; the file is written without a tokenizer.
    unlink(dir.file("config.json").c_str());
    ws_test::write_file(dir.file("config.json"), text_bytes("{\"model_type\": \"llama\", \"num_hidden_layers\": 1}"));
    REQUIRE(mkfifo(dir.file("tokenizer.model").c_str(), 0600) == 0);
    const ws_test::CliResult t = run_cli("convert " + quote(st) + " " + quote(dir.file("fifo2.gguf")), "", 60);
    CHECK(t.status == 0);
    CHECK(t.err.find(dir.file("tokenizer.json") + " is not a regular file; ignored") != std::string::npos);
    CHECK(t.err.find(dir.file("tokenizer.model") + " is not a regular file; ignored") != std::string::npos);
    CHECK(t.err.find("no tokenizer written") != std::string::npos);
}

TEST_CASE("regex name matches are linear: 50 KB names and (.*)*x patterns finish, bad patterns are usage errors") {
    // std::regex recursed per character (SIGSEGV on a 20-50 KB name, valid in safetensors) and backtracked
    // for minutes on (.*)*x; every name match now runs the linear engine (weightstream/regex.h).
    ws_test::TempDir dir;
    const std::string long_name = "model." + std::string(50000, 'a') + ".weight";
    const std::string st = dir.file("long.safetensors");
    ws_test::write_file(st, ws_test::SafetensorsBuilder()
                                .tensor(long_name, "F32", {4}, 16)
                                .tensor("blk.0.attn_q.weight", "F32", {4}, 16)
                                .build());
    const std::vector<std::string> hostile = {"/(.*)*x/", "/(a|aa)*c$/", "/(a*)*z/", "/((a+)+)+y/"};
    for (const char* command : {"tensors", "stats", "hash"}) {
        INFO(command);
        const ws_test::CliResult q = run_cli(std::string(command) + " " + quote(st) + " --filter '/attn_q/'", "", 60);
        CHECK(q.status == 0);
        CHECK(q.out.find("blk.0.attn_q.weight") != std::string::npos);
        CHECK(q.out.find("aaaaaaaaaa") == std::string::npos);
        const ws_test::CliResult l =
            run_cli(std::string(command) + " " + quote(st) + " --filter '/a\\.weight$/'", "", 60);
        CHECK(l.status == 0);
        CHECK(l.out.find("aaaaaaaaaa") != std::string::npos);
        CHECK(l.out.find("attn_q") == std::string::npos);
        for (const std::string& p : hostile) {
            INFO(p);
            const ws_test::CliResult h =
                run_cli(std::string(command) + " " + quote(st) + " --filter " + quote(p), "", 60);
            CHECK(h.status == 0);
            CHECK(h.err.find("matches no tensor") != std::string::npos);
        }
    }
    const std::string raw = dir.file("q.f32");
    CHECK(run_cli("dump " + quote(st) + " --filter '/attn_q/' -o " + quote(raw), "", 60).status == 0);
    CHECK(ws_test::read_file(raw).size() == 16);
    CHECK(run_cli("dump " + quote(st) + " --filter '/(.*)*x/' -o " + quote(raw), "", 60).status == 2);

    // diff --tensors: the same engine, over both sides' names.
    const ws_test::CliResult d =
        run_cli("diff " + quote(st) + " " + quote(st) + " --tensors 'a\\.weight$' --json", "", 60);
    CHECK(d.status == 0);
    CHECK(d.out.find("aaaaaaaaaa") != std::string::npos);
    CHECK(d.out.find("attn_q") == std::string::npos);
    for (const std::string& p : hostile) {
        INFO(p);
        CHECK(run_cli("diff " + quote(st) + " " + quote(st) + " --tensors " + quote(p.substr(1, p.size() - 2)), "", 60)
                  .status == 0);
    }

    // quantize --tensor-type: GGUF names stop at 63 bytes, where (.*)*x already backtracked for minutes.
    ws_test::GgufSpec spec;
    spec.kvs.push_back({"general.architecture", ws_test::val_str("llama")});
    spec.kvs.push_back({"llama.block_count", ws_test::val_u32(1)});
    const std::vector<uint8_t> rows(64 * 4 * 4, 0);
    spec.tensors.push_back({"blk.0.attn_q.weight", 0, {64, 4}, rows});
    spec.tensors.push_back({"blk.0." + std::string(50, 'a') + ".weight", 0, {64, 4}, rows});
    const std::string gguf = dir.file("llama.gguf");
    ws_test::write_file(gguf, ws_test::build_gguf(spec).bytes);
    for (const std::string& p : hostile) {
        INFO(p);
        const ws_test::CliResult q =
            run_cli("quantize " + quote(gguf) + " " + quote(dir.file("q.gguf")) + " --type Q8_0 --json --tensor-type " +
                        quote(p.substr(1, p.size() - 2) + "=f16"),
                    "", 60);
        CHECK(q.status == 0);
        INFO(q.out);
        CHECK(q.out.find("\"f16\"") == std::string::npos);
        CHECK(q.out.find("\"F16\"") == std::string::npos);
        std::remove(dir.file("q.gguf").c_str());
    }
    const ws_test::CliResult hit = run_cli("quantize " + quote(gguf) + " " + quote(dir.file("q.gguf")) +
                                               " --type Q8_0 --json --tensor-type 'a+\\.weight=f16'",
                                           "", 60);
    CHECK(hit.status == 0);
    CHECK(hit.out.find("F16") != std::string::npos);
    std::remove(dir.file("q.gguf").c_str());

    // Outside the engine's syntax (backreferences, look-behind, possessive): the usage error naming why and where.
    const ws_test::CliResult f = run_cli("tensors " + quote(st) + " --filter '/(a)\\1/'");
    CHECK(f.status == 2);
    CHECK(f.err.find("--filter: bad regular expression '/(a)\\1/': backreferences are not supported at byte 4") !=
          std::string::npos);
    const ws_test::CliResult t = run_cli("diff " + quote(st) + " " + quote(st) + " --tensors '(?<=a)b'");
    CHECK(t.status == 2);
    CHECK(t.err.find("--tensors: bad regular expression '(?<=a)b': ") != std::string::npos);
    const ws_test::CliResult o =
        run_cli("quantize " + quote(gguf) + " " + quote(dir.file("q.gguf")) + " --type Q8_0 --tensor-type 'a++=f16'");
    CHECK(o.status == 2);
    CHECK(o.err.find("--tensor-type: bad regular expression 'a++': possessive quantifiers are not supported") !=
          std::string::npos);
    CHECK_FALSE(ws_test::file_exists(dir.file("q.gguf")));
}

size_t count_of(const std::string& s, const std::string& needle) {
    size_t n = 0;
    for (size_t at = s.find(needle); at != std::string::npos; at = s.find(needle, at + 1)) ++n;
    return n;
}

TEST_CASE("a write to stdout that fails (/dev/full) is exit 3 with a message, for every command that prints") {
    // Ignored before: exit 0 with the output cut short (hash --manifest > model.manifest on a full disk).
    ws_test::GgufSpec spec;
    spec.kvs.push_back({"general.name", ws_test::val_str("full")});
    for (int i = 0; i < 300; ++i) {  // a tensor table of ~20 KB: writes fail mid-run, not only at the last flush
        spec.tensors.push_back({"blk." + std::to_string(i) + ".ffn_down.weight", 0, {4}, {}, ws_test::kAutoOffset});
    }
    ws_test::TempDir dir;
    const std::string model = dir.file("m.gguf");
    ws_test::write_file(model, ws_test::build_gguf(spec).bytes);
    const std::string m = quote(model);
    const ws_test::CliResult made = run_cli("hash --manifest " + m);
    REQUIRE(made.status == 0);
    ws_test::write_file(dir.file("m.manifest"), std::vector<uint8_t>(made.out.begin(), made.out.end()));
    const std::vector<std::string> commands = {"info " + m,
                                               "info --json " + m,
                                               "tensors " + m,
                                               "tensors --json " + m,
                                               "hash " + m,
                                               "hash --json " + m,
                                               "hash --manifest " + m,
                                               "hash --check " + quote(dir.file("m.manifest")) + " " + m,
                                               "stats " + m,
                                               "stats --json " + m,
                                               "verify " + m,
                                               "verify --json " + m,
                                               "diff " + m + " " + m,
                                               "diff --json " + m + " " + m,
                                               "scan " + m,
                                               "dump " + m + " blk.0.ffn_down.weight",
                                               "--version",
                                               "help info"};
    for (const std::string& c : commands) {
        INFO(c);
        const ws_test::CliResult ok = run_cli(c + " >/dev/null");
        const ws_test::CliResult r = run_cli(c + " >/dev/full");
        REQUIRE(ok.status == 0);
        CHECK(r.status == 3);
        if (c.rfind("dump", 0) == 0) {  // dump writes its bytes through OutputFile ("-" is stdout)
            CHECK(r.err == "weightstream: error: cannot write -: No space left on device\n");
            continue;
        }
        CHECK(r.err.find("weightstream: error: cannot write standard output: ") != std::string::npos);
        CHECK(r.err.find(" (the output is incomplete)\n") != std::string::npos);
        CHECK(count_of(r.err, "weightstream: error:") == 1);
    }
    // The last bytes fail only at the final flush (a short output in stdio's buffer): still exit 3.
    const ws_test::CliResult v = run_cli("--version >/dev/full");
    CHECK(v.err ==
          "weightstream: error: cannot write standard output: No space left on device (the output is "
          "incomplete)\n");
}

std::string hex(const std::string& bytes) {
    static const char* kDigits = "0123456789abcdef";
    std::string h;
    for (unsigned char c : bytes) h += std::string{kDigits[c >> 4], kDigits[c & 15]};
    return h;
}

TEST_CASE("scan --resume refuses a file that is not its own output, unchanged, and matches non-UTF-8 paths") {
    // A .gguf given as --resume was cut at its last newline and appended to, exit 0.
    ws_test::TempDir dir;
    ws_test::GgufSpec spec;
    spec.kvs.push_back({"general.name", ws_test::val_str("line one\nline two\n{\"source\": \"x\"}")});
    spec.tensors.push_back({"t", 0, {4}, {}, ws_test::kAutoOffset});
    const std::string model = dir.file("m.gguf");
    ws_test::write_file(model, ws_test::build_gguf(spec).bytes);
    const std::string st = dir.file("m.safetensors");
    ws_test::write_file(st, ws_test::SafetensorsBuilder().tensor("t", "F32", {4}, 16).build());
    const auto text = [](const std::string& s) { return std::vector<uint8_t>(s.begin(), s.end()); };
    const std::string scan_line = "{\"source\":\"" + model + "\",\"verdict\":\"ok\"}\n";
    struct Case {
        std::string name;
        std::vector<uint8_t> bytes;
    };
    const std::vector<Case> cases = {
        {"a copy of the .gguf", ws_test::read_file(model)},
        {"a copy of the .safetensors", ws_test::read_file(st)},
        {"a one-line JSON file without a newline", text("{\"architectures\":[\"LlamaForCausalLM\"]}")},
        {"a one-line JSON with a scan key, without a newline", text("{\"name\":\"x\",\"format\":\"y\"}")},
        {"pretty JSON", text("{\n  \"source\": \"a\",\n  \"verdict\": \"ok\"\n}\n")},
        {"scan lines, then other text", text(scan_line + "not json\n")},
        {"scan lines, then a cut line that is not scan's", text(scan_line + "GGUF\x03")},
        {"a JSON object without verdict", text("{\"source\":\"a\"}\n")},
        {"binary after a brace", text(std::string("{\xff\xfe\x00", 4))},
    };
    for (const Case& c : cases) {
        INFO(c.name);
        const std::string out = dir.file("resume.out");
        ws_test::write_file(out, c.bytes);
        const ws_test::CliResult r = run_cli("scan --resume " + quote(out) + " " + quote(model), "", 60);
        CHECK(r.status == 3);
        CHECK(r.err.find(out + ": line ") != std::string::npos);
        CHECK(r.err.find(" is not a line of scan's output; --resume appends only to a file scan wrote (nothing "
                         "was changed)") != std::string::npos);
        CHECK(ws_test::read_file(out) == c.bytes);
    }
    // The model itself, a FIFO (no hang) and a directory.
    const std::vector<uint8_t> before = ws_test::read_file(model);
    CHECK(run_cli("scan --resume " + quote(model) + " " + quote(st), "", 60).status == 3);
    CHECK(ws_test::read_file(model) == before);
    const std::string fifo = dir.file("fifo");
    REQUIRE(mkfifo(fifo.c_str(), 0600) == 0);
    const ws_test::CliResult f = run_cli("scan --resume " + quote(fifo) + " " + quote(st), "", 60);
    CHECK(f.status == 3);
    CHECK(f.err.find(fifo + ": --resume needs a regular file") != std::string::npos);
    CHECK(run_cli("scan --resume " + quote(dir.path) + " " + quote(st), "", 60).status == 3);
    // Scan's own line whose newline was not written: kept, and the newline added.
    const std::string own = dir.file("own.jsonl");
    ws_test::write_file(own, text(scan_line.substr(0, scan_line.size() - 1)));
    const ws_test::CliResult o = run_cli("scan --resume " + quote(own) + " " + quote(model) + " " + quote(st), "", 60);
    CHECK(o.status == 0);
    const std::vector<uint8_t> own_bytes = ws_test::read_file(own);
    const std::string own_text(own_bytes.begin(), own_bytes.end());
    CHECK(own_text.rfind(scan_line, 0) == 0);
    CHECK(own_text.find("\"source\":\"" + st + "\"") != std::string::npos);

    // Two paths that differ only in bytes that are not UTF-8: told apart by source_hex, and matched on resume.
    const std::string odd = dir.file("odd");
    REQUIRE(::mkdir(odd.c_str(), 0700) == 0);
    const std::string a = odd + "/m\xff.gguf", b = odd + "/m\xfe.gguf";
    ws_test::write_file(a, before);
    ws_test::write_file(b, before);
    const ws_test::CliResult s = run_cli("scan " + quote(odd), "", 60);
    CHECK(s.status == 0);
    CHECK(s.out.find("\"source_hex\":\"" + hex(a) + "\"") != std::string::npos);
    CHECK(s.out.find("\"source_hex\":\"" + hex(b) + "\"") != std::string::npos);
    const ws_test::CliResult v = run_cli("verify --json " + quote(a), "", 60);
    CHECK(v.out.find("\"source_hex\": \"" + hex(a) + "\"") != std::string::npos);
    const std::string jsonl = dir.file("odd.jsonl");
    CHECK(run_cli("scan --resume " + quote(jsonl) + " " + quote(odd), "", 60).status == 0);
    const ws_test::CliResult again = run_cli("scan --resume " + quote(jsonl) + " " + quote(odd), "", 60);
    CHECK(again.status == 0);
    CHECK(again.err.find("scan: 0 models") == 0);
    const std::vector<uint8_t> lines = ws_test::read_file(jsonl);
    CHECK(std::count(lines.begin(), lines.end(), '\n') == 2);
}

namespace {

// Starts `weightstream args...` with stdout and stderr to /dev/null; returns its pid.
pid_t spawn_cli(const std::vector<std::string>& args) {
    const pid_t pid = fork();
    if (pid == 0) {
        const int devnull = ::open("/dev/null", O_WRONLY);
        dup2(devnull, 1);
        dup2(devnull, 2);
        std::vector<char*> argv{const_cast<char*>(WS_CLI)};
        for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
        argv.push_back(nullptr);
        execv(WS_CLI, argv.data());
        _exit(127);
    }
    return pid;
}

// Runs the CLI with kill_at_write.cpp preloaded and `env` added to the environment; its exit status, or minus the
// signal that ended it.
int spawn_and_wait(const std::vector<std::string>& args, const std::vector<std::string>& env) {
    const pid_t pid = fork();
    if (pid == 0) {
        const int devnull = ::open("/dev/null", O_WRONLY);
        dup2(devnull, 1);
        dup2(devnull, 2);
        std::vector<std::string> vars{std::string("LD_PRELOAD=") + WS_KILL_AT_WRITE,
                                      // ASan's runtime must otherwise come first among the loaded libraries.
                                      "ASAN_OPTIONS=verify_asan_link_order=0"};
        for (char** e = environ; *e; ++e) {
            if (std::strncmp(*e, "LD_PRELOAD=", 11) != 0 && std::strncmp(*e, "ASAN_OPTIONS=", 13) != 0)
                vars.push_back(*e);
        }
        vars.insert(vars.end(), env.begin(), env.end());
        std::vector<char*> envp;
        for (std::string& v : vars) envp.push_back(const_cast<char*>(v.c_str()));
        envp.push_back(nullptr);
        std::vector<char*> argv{const_cast<char*>(WS_CLI)};
        for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
        argv.push_back(nullptr);
        execve(WS_CLI, argv.data(), envp.data());
        _exit(127);
    }
    int raw = 0;
    if (pid < 0 || waitpid(pid, &raw, 0) != pid) return -1000;
    return WIFSIGNALED(raw) ? -WTERMSIG(raw) : WEXITSTATUS(raw);
}

// A GGUF whose header is a 3 MiB chat template (an edit rewrites all of it) and the two files that editing it
// to all-A or all-B gives (the same layout: the header's length does not change).
struct InPlaceFixture {
    ws_test::TempDir dir;
    std::string model, template_a, template_b;
    std::vector<uint8_t> a, b;
    InPlaceFixture() {
        model = dir.file("model.gguf");
        template_a = dir.file("a.jinja");
        template_b = dir.file("b.jinja");
        ws_test::write_file(template_a, std::vector<uint8_t>(size_t(3) << 20, 'A'));
        ws_test::write_file(template_b, std::vector<uint8_t>(size_t(3) << 20, 'B'));
        ws_test::GgufSpec spec;
        spec.kvs.push_back({"general.architecture", ws_test::val_str("llama")});
        spec.kvs.push_back({"tokenizer.chat_template", ws_test::val_str(std::string(size_t(3) << 20, 'C'))});
        spec.tensors.push_back({"t", 0, {256, 64}, std::vector<uint8_t>(256 * 64 * 4, 7)});
        ws_test::write_file(model, ws_test::build_gguf(spec).bytes);
        REQUIRE(run_cli("edit " + quote(model) + " " + quote(dir.file("a.gguf")) + " --set-chat-template " +
                        quote(template_a))
                    .status == 0);
        REQUIRE(run_cli("edit " + quote(model) + " " + quote(dir.file("b.gguf")) + " --set-chat-template " +
                        quote(template_b))
                    .status == 0);
        a = ws_test::read_file(dir.file("a.gguf"));
        b = ws_test::read_file(dir.file("b.gguf"));
        REQUIRE(a.size() == b.size());
        ws_test::write_file(model, a);
    }
    // The template that turns the model's current bytes into the other file.
    std::string other_template() { return ws_test::read_file(model) == a ? template_b : template_a; }
};

double seconds_since(const std::chrono::steady_clock::time_point& t) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

}  // namespace

TEST_CASE("edit --in-place killed at every write, sync, link and rename leaves the old file or the new one") {
    // It was one pwrite of the header: 14 of 300 kill -9s at random times left a half-old, half-new header. Here
    // the command dies at each of its file-changing calls in turn, a write torn in half (kill_at_write.cpp).
    InPlaceFixture fx;
    const std::string counted = fx.dir.file("calls");
    REQUIRE(spawn_and_wait({"edit", fx.model, "--in-place", "--set-chat-template", fx.template_b},
                           {"WS_KILL_COUNT=" + counted}) == 0);
    REQUIRE(ws_test::read_file(fx.model) == fx.b);
    const std::vector<uint8_t> count_text = ws_test::read_file(counted);
    const long calls = std::atol(std::string(count_text.begin(), count_text.end()).c_str());
    REQUIRE(calls >= 4);  // at least the header's write, the fsync, the link and the rename
    int kept = 0, replaced = 0;
    for (long at = 1; at <= calls; ++at) {
        INFO("killed at call " << at << " of " << calls);
        const bool was_a = ws_test::read_file(fx.model) == fx.a;
        const int status = spawn_and_wait({"edit", fx.model, "--in-place", "--set-chat-template", fx.other_template()},
                                          {"WS_KILL_AT=" + std::to_string(at)});
        CHECK(status == -SIGKILL);
        const std::vector<uint8_t> now = ws_test::read_file(fx.model);
        const bool is_a = now == fx.a, is_b = now == fx.b;
        REQUIRE((is_a || is_b));
        ++((is_a == was_a) ? kept : replaced);
    }
    // Killed before the rename: the old file; after it, only the directory's sync was left.
    CHECK(kept == calls - 1);
    CHECK(replaced == 1);
    // A kill between the link and the rename leaves OUT.tmp-RANDOM.HOST.PID: the next run removes it.
    REQUIRE(
        run_cli("edit " + quote(fx.model) + " --in-place --set-chat-template " + quote(fx.other_template())).status ==
        0);
    CHECK(ws_test::temporary_files(fx.dir.path).empty());
}

TEST_CASE("edit --in-place: a concurrent reader sees the old file or the new one; a file renamed in is kept") {
    InPlaceFixture fx;
    // A reader opening and reading the model while 20 edits run (8 of 44 reads were a mix of two headers).
    std::atomic<bool> stop{false};
    std::atomic<int> reads{0}, mixed{0};
    std::thread reader([&] {
        while (!stop) {
            const std::vector<uint8_t> seen = ws_test::read_file(fx.model);
            if (seen != fx.a && seen != fx.b) ++mixed;
            ++reads;
        }
    });
    for (int i = 0; i < 20; ++i) {
        CHECK(run_cli("edit " + quote(fx.model) + " --in-place --set-chat-template " + quote(fx.other_template()))
                  .status == 0);
    }
    stop = true;
    reader.join();
    CHECK(mixed == 0);
    CHECK(reads > 20);

    // A file renamed over the model while it is edited (a download, a sync tool) is never overwritten with the
    // edit of the file it replaced: the edit ends first (exit 0, then the rename) or notices and changes nothing
    // (exit 3). Before, the old file's header was written into the new file, exit 0.
    ws_test::GgufSpec spec;
    spec.kvs.push_back({"general.architecture", ws_test::val_str("llama")});
    spec.kvs.push_back({"general.name", ws_test::val_str("the downloaded file")});
    spec.tensors.push_back({"t", 0, {4}, {}, ws_test::kAutoOffset});
    const std::vector<uint8_t> downloaded = ws_test::build_gguf(spec).bytes;
    const auto start = std::chrono::steady_clock::now();
    REQUIRE(
        run_cli("edit " + quote(fx.model) + " --in-place --set-chat-template " + quote(fx.other_template())).status ==
        0);
    const double whole = seconds_since(start);
    std::srand(2);
    int refused = 0;
    for (int run = 0; run < 30; ++run) {
        INFO("run " << run);
        ws_test::write_file(fx.model, fx.a);
        const std::string incoming = fx.dir.file("incoming.part");
        ws_test::write_file(incoming, downloaded);
        const pid_t pid = spawn_cli({"edit", fx.model, "--in-place", "--set-chat-template", fx.template_b});
        usleep(static_cast<useconds_t>(whole * 1e6 * (std::rand() % 1000) / 1000.0));
        REQUIRE(std::rename(incoming.c_str(), fx.model.c_str()) == 0);
        int raw = 0;
        REQUIRE(waitpid(pid, &raw, 0) == pid);
        REQUIRE(WIFEXITED(raw));
        // 2: the edit began after the rename, and the template does not fit in the downloaded file's header.
        CHECK((WEXITSTATUS(raw) == 0 || WEXITSTATUS(raw) == 2 || WEXITSTATUS(raw) == 3));
        refused += WEXITSTATUS(raw) == 3;
        CHECK(ws_test::read_file(fx.model) == downloaded);
    }
    WARN(refused << " of 30 edits saw the file replaced and changed nothing");
    CHECK(ws_test::temporary_files(fx.dir.path).empty());
}

TEST_CASE("edit --in-place through a symbolic link edits its target; hard links and FIFOs are refused") {
    InPlaceFixture fx;
    REQUIRE(::chmod(fx.model.c_str(), 0640) == 0);
    const std::string link = fx.dir.file("link.gguf");
    REQUIRE(::symlink(fx.model.c_str(), link.c_str()) == 0);
    const ws_test::CliResult r =
        run_cli("edit " + quote(link) + " --in-place --set-chat-template " + quote(fx.template_b));
    CHECK(r.status == 0);
    CHECK(r.out.find("header rewritten in place") != std::string::npos);
    CHECK(S_ISLNK(mode_of(link)));
    CHECK(ws_test::read_file(fx.model) == fx.b);
    CHECK((mode_of(fx.model) & 07777) == 0640);

    const std::string hard = fx.dir.file("hard.gguf");
    REQUIRE(::link(fx.model.c_str(), hard.c_str()) == 0);
    const ws_test::CliResult h =
        run_cli("edit " + quote(fx.model) + " --in-place --set-chat-template " + quote(fx.template_a));
    CHECK(h.status == 3);
    CHECK(h.err.find(": has 2 hard links; --in-place replaces the file under this name only") != std::string::npos);
    CHECK(ws_test::read_file(fx.model) == fx.b);
    REQUIRE(::unlink(hard.c_str()) == 0);

    const std::string fifo = fx.dir.file("fifo.gguf");
    REQUIRE(mkfifo(fifo.c_str(), 0600) == 0);
    const ws_test::CliResult f = run_cli("edit " + quote(fifo) + " --in-place --set general.name=x", "", 60);
    CHECK(f.status == 3);
    CHECK(f.err.find("--in-place edits a regular file") != std::string::npos);
    CHECK(ws_test::temporary_files(fx.dir.path).empty());
}

TEST_CASE("hash --check of a large manifest runs in memory bounded by the model, not the manifest") {
    // A 250 MB manifest peaked at 3.07 GB (the whole text, then a map entry per line): lines are now read a
    // piece at a time and only the model's own kept.
    ws_test::TempDir dir;
    ws_test::GgufSpec spec;
    for (int i = 0; i < 8; ++i) spec.tensors.push_back({"t" + std::to_string(i), 0, {16}, {}, ws_test::kAutoOffset});
    const std::string model = dir.file("m.gguf");
    ws_test::write_file(model, ws_test::build_gguf(spec).bytes);
    const ws_test::CliResult made = run_cli("hash --manifest --sha256 " + quote(model));
    REQUIRE(made.status == 0);
    const std::string manifest = dir.file("big.manifest");
    {
        std::ofstream out(manifest, std::ios::binary);
        const std::string digest(64, 'a');
        for (int i = 0; i < 600000; ++i) {  // ~96 MB of other files' lines
            out << "sha256    " << digest << "  /models/another-" << i << ".gguf:blk." << i % 80
                << ".ffn_down.weight\n";
        }
        out << made.out;
        out << "xxh64     " << std::string(100000, 'b') << "  " << model << ":t0\n";  // a long line too
    }
    const Measured m = run_measured({"hash", "--check", manifest, model});
    INFO(m.err);
    CHECK(m.status == 0);
    CHECK(m.out.find("Verification results for " + manifest + " - Success") != std::string::npos);
    INFO("peak RSS " << m.max_rss_kb << " KB");
    CHECK(m.max_rss_kb < baseline_rss_kb() + 24 * 1024);
}

TEST_CASE("imatrix files: entries capped (memory bounded), and their errors said of the imatrix in its own words") {
    // A 72 MB legacy imatrix of tiny entries took 884 MB (a map node, two names and a vector per entry).
    ws_test::TempDir dir;
    const std::string model = write_f32_model(dir, "m.gguf", 64, 4, 3);
    const auto i32 = [](std::string* b, int32_t v) {
        for (int i = 0; i < 4; ++i) *b += static_cast<char>((static_cast<uint32_t>(v) >> (8 * i)) & 0xff);
    };
    std::string many;
    i32(&many, 3000000);
    for (int i = 0; i < 3000000; ++i) {  // 17 bytes each: "w", ncall 1, nval 1, one float
        i32(&many, 1);
        many += 'w';
        i32(&many, 1);
        i32(&many, 1);
        i32(&many, 0x3f800000);
    }
    ws_test::write_file(dir.file("many.dat"), std::vector<uint8_t>(many.begin(), many.end()));
    const Measured m =
        run_measured({"quantize", model, dir.file("q.gguf"), "--type", "Q8_0", "--imatrix", dir.file("many.dat")});
    CHECK(m.status == 1);
    CHECK(m.err == "weightstream: error: " + dir.file("many.dat") +
                       ": too_large: it claims more than 65,536 entries (llama-imatrix writes one per weight matrix) "
                       "(byte 0)\n");
    INFO("peak RSS " << m.max_rss_kb << " KB");
    CHECK(m.max_rss_kb < baseline_rss_kb() + 24 * 1024);

    // Each broken field named as what it is, with the byte where it is.
    struct Case {
        std::string bytes, words;
    };
    std::string zero, nan_value, no_values, cut;
    i32(&zero, 0);
    i32(&nan_value, 1);
    i32(&nan_value, 1);
    nan_value += 'w';
    i32(&nan_value, 1);
    i32(&nan_value, 2);
    i32(&nan_value, 0x3f800000);
    i32(&nan_value, 0x7fc00000);
    i32(&no_values, 1);
    i32(&no_values, 1);
    no_values += 'w';
    i32(&no_values, 1);
    i32(&no_values, 0);
    cut = nan_value.substr(0, nan_value.size() - 2);
    for (const Case& c : {Case{zero, "bad_shape: its entry count is not at least 1 (byte 0)"},
                          Case{nan_value,
                               "bad_shape: an importance value is NaN or infinite (llama-quantize refuses "
                               "the file too) (byte 21)"},
                          Case{no_values,
                               "bad_shape: an entry has no values (its value count is not at least 1) "
                               "(byte 13)"},
                          Case{cut, "truncated: an entry's values run past the end of the file (byte 13)"}}) {
        INFO(c.words);
        ws_test::write_file(dir.file("bad.dat"), std::vector<uint8_t>(c.bytes.begin(), c.bytes.end()));
        const ws_test::CliResult r = run_cli("quantize " + quote(model) + " " + quote(dir.file("q.gguf")) +
                                             " --type Q8_0 --imatrix " + quote(dir.file("bad.dat")));
        CHECK(r.status == 1);
        CHECK(r.err == "weightstream: error: " + dir.file("bad.dat") + ": " + c.words + "\n");
    }
    CHECK_FALSE(ws_test::file_exists(dir.file("q.gguf")));
}

TEST_CASE("a --trace FILE that is not a trace is never replaced (a model given there by mistake)") {
    // A sibling of scan --resume truncating a .gguf: --trace model.gguf replaced the model with a JSON trace.
    ws_test::TempDir dir;
    const std::string model = write_f32_model(dir, "m.gguf", 64, 4, 9);
    const std::vector<uint8_t> before = ws_test::read_file(model);
    const std::string other = dir.file("other.gguf");
    ws_test::write_file(other, before);
    const ws_test::CliResult r = run_cli("stats " + quote(model) + " --trace " + quote(other));
    CHECK(r.status == 2);
    CHECK(r.err.find("--trace " + other + ": the file exists and is not a trace; not replaced") != std::string::npos);
    CHECK(ws_test::read_file(other) == before);
    // A trace is replaced by the next one; a new file is written.
    const std::string trace = dir.file("t.json");
    REQUIRE(run_cli("stats " + quote(model) + " --trace " + quote(trace)).status == 0);
    CHECK(run_cli("stats " + quote(model) + " --trace " + quote(trace)).status == 0);
    const std::vector<uint8_t> t = ws_test::read_file(trace);
    CHECK(std::string(t.begin(), t.end()).find("\"traceEvents\"") != std::string::npos);
}

TEST_CASE("quantize on several threads reports a full disk and bad input as on one thread") {
    // With several threads the output is written on a thread of its own while the next step runs: a write that
    // fails there, or a tensor's bad data while a write is pending, must give the error one thread gives. Each
    // tensor gives 1 MiB of Q8_0 and more, so writes fail mid-run, not only at the last flush.
    ws_test::TempDir dir;
    ws_test::GgufSpec spec;
    spec.kvs.push_back({"general.architecture", ws_test::val_str("llama")});
    spec.kvs.push_back({"llama.block_count", ws_test::val_u32(1)});
    std::vector<float> values(1024 * 1024);
    for (size_t i = 0; i < values.size(); ++i) values[i] = static_cast<float>(i % 7) * 0.25f - 0.5f;
    std::vector<uint8_t> rows(values.size() * 4);
    std::memcpy(rows.data(), values.data(), rows.size());
    std::vector<uint8_t> nan_rows = rows;
    const uint32_t nan = 0x7fc00000u;
    std::memcpy(&nan_rows[4 * 5000], &nan, 4);
    for (const char* name : {"attn_q", "attn_k", "attn_v"}) {
        spec.tensors.push_back({"blk.0." + std::string(name) + ".weight", 0, {1024, 1024}, rows});
    }
    const std::string good = dir.file("good.gguf");
    ws_test::write_file(good, ws_test::build_gguf(spec).bytes);
    spec.tensors[1].data = nan_rows;
    const std::string bad = dir.file("bad.gguf");
    ws_test::write_file(bad, ws_test::build_gguf(spec).bytes);

    for (const std::string& in : {good, bad}) {
        const std::string to_file = "quantize " + quote(in) + " " + quote(dir.file("q.gguf")) + " --type Q8_0";
        const std::string to_full = "quantize " + quote(in) + " - --type Q8_0";
        const ws_test::CliResult file1 = run_cli(to_file + " --threads 1", "", 60);
        const ws_test::CliResult full1 = run_cli(to_full + " --threads 1 >/dev/full", "", 60);
        if (in == good) {
            CHECK(full1.status == 3);
            CHECK(full1.err == "weightstream: error: cannot write -: No space left on device\n");
        }
        CHECK(file1.status == (in == good ? 0 : 1));
        for (const char* threads : {"2", "3"}) {
            INFO(in << " threads " << threads);
            const ws_test::CliResult file = run_cli(to_file + " --threads " + threads, "", 60);
            CHECK(file.status == file1.status);
            CHECK(file.err == file1.err);
            const ws_test::CliResult full = run_cli(to_full + " --threads " + threads + " >/dev/full", "", 60);
            CHECK(full.status == full1.status);
            CHECK(full.err == full1.err);
        }
    }
}
