// SPDX-License-Identifier: BSL-1.0
// The child-process helper the CLI, the benchmark and the tests share (support/process):
// each spawn option, the errors a start can fail with, and the waits.
#include "process/child_process.hpp"
#include "process/exit_wait.hpp"
#include "process/wait_status.hpp"
#include "support/catch.hpp"
#include "support/run.hpp"

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <fcntl.h>
#include <fstream>
#include <memory>
#include <poll.h>
#include <pthread.h>
#include <sstream>
#include <string>
#include <sys/stat.h>
#include <system_error>
#include <thread>
#include <unistd.h>
#include <vector>

namespace conclave::test {

namespace {

using programs::child_process;
using programs::spawn_options;

spawn_options shell(const std::string& script) {
    spawn_options o;
    o.argv = {"sh", "-c", script}; // found in PATH
    o.stdout_pipe = true;
    return o;
}

std::vector<std::string> lines_of(child_process& child) {
    std::vector<std::string> lines;
    for (std::string line; child.read_line(line);)
        lines.push_back(line);
    return lines;
}

std::string contents(const std::string& path) {
    std::ifstream in(path);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

// A scratch file path, removed with the test.
struct scratch_file {
    std::string path;
    scratch_file() {
        std::string pattern = "/tmp/conclave-child-test-XXXXXX";
        const int fd = ::mkstemp(pattern.data());
        REQUIRE(fd >= 0);
        ::close(fd);
        path = pattern;
    }
    ~scratch_file() { ::unlink(path.c_str()); }
};

// Running: neither gone nor a zombie.
bool running(pid_t pid) {
    std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
    std::string text;
    return std::getline(stat, text) && text.find(") Z") == std::string::npos;
}

int start_error(const spawn_options& o) {
    try {
        child_process child(o);
    } catch (const std::system_error& e) {
        return e.code().value();
    }
    return 0;
}

} // namespace

TEST_CASE("child: stdout piped and read line by line, then the exit status", "[child]") {
    child_process child(shell("echo one; printf 'two\\nthree'; exit 3"));
    CHECK(lines_of(child) == std::vector<std::string>{"one", "two", "three"});
    const int status = child.reap();
    CHECK(programs::shell_status(status) == 3);
    CHECK(programs::describe_wait_status(status) == "exit status 3");
    CHECK(child.reap() == status); // again: the same status
}

TEST_CASE("child: extra environment added, replacing inherited values", "[child]") {
    ::setenv("CONCLAVE_CHILD_TEST_KEPT", "kept", 1);
    ::setenv("CONCLAVE_CHILD_TEST_REPLACED", "old", 1);
    auto o = shell("echo $CONCLAVE_CHILD_TEST_KEPT $CONCLAVE_CHILD_TEST_REPLACED "
                   "$CONCLAVE_CHILD_TEST_ADDED");
    o.extra_env = {"CONCLAVE_CHILD_TEST_REPLACED=new", "CONCLAVE_CHILD_TEST_ADDED=added"};
    child_process child(o);
    CHECK(lines_of(child) == std::vector<std::string>{"kept new added"});
    ::unsetenv("CONCLAVE_CHILD_TEST_KEPT");
    ::unsetenv("CONCLAVE_CHILD_TEST_REPLACED");
}

TEST_CASE("child: stdin on /dev/null", "[child]") {
    child_process child(shell("cat; echo end"));
    CHECK(lines_of(child) == std::vector<std::string>{"end"});
}

TEST_CASE("child: stdout and stderr to one file, truncated first", "[child]") {
    scratch_file f;
    std::ofstream(f.path) << "left over from before\n";
    spawn_options o;
    o.argv = {"sh", "-c", "echo out; echo err >&2; echo out again"};
    o.stdout_file = f.path;
    o.stderr_file = f.path;
    child_process child(o);
    CHECK(child.reap() == 0);
    CHECK(contents(f.path) == "out\nerr\nout again\n");
}

TEST_CASE("child: no descriptor above stderr is inherited", "[child]") {
    const int fd = ::open("/dev/null", O_RDONLY); // not close-on-exec, like Asio's sockets
    REQUIRE(fd > STDERR_FILENO);
    const auto n = std::to_string(fd);
    child_process child(
        shell("if [ -e /proc/self/fd/" + n + " ]; then echo open; else echo closed; fi"));
    CHECK(lines_of(child) == std::vector<std::string>{"closed"});
    ::close(fd);
}

TEST_CASE("child: a start that fails is an error, with exec's reason", "[child]") {
    spawn_options o;
    o.argv = {"conclave-no-such-program"};
    CHECK(start_error(o) == ENOENT);
    o.argv = {"/nonexistent/program"};
    CHECK(start_error(o) == ENOENT);

    scratch_file f; // not executable
    std::ofstream(f.path) << "echo hello\n";
    o.argv = {f.path};
    CHECK(start_error(o) == EACCES);
    // Executable but neither a binary nor a #! script: as posix_spawnp, no fallback to sh.
    REQUIRE(::chmod(f.path.c_str(), 0755) == 0);
    CHECK(start_error(o) == ENOEXEC);

    o.argv = {"true"};
    o.stdout_file = "/nonexistent/dir/out";
    CHECK(start_error(o) == ENOENT);
}

TEST_CASE("child: a process group of its own, signalled as a group", "[child]") {
    auto o = shell("sleep 30 & echo $!; wait");
    o.own_process_group = true;
    child_process child(o);
    CHECK(::getpgid(child.pid()) == child.pid());
    std::string line;
    REQUIRE(child.read_line(line));
    const pid_t background = std::stoi(line);
    CHECK(::getpgid(background) == child.pid());
    child.signal(SIGTERM);
    CHECK(programs::shell_status(child.reap()) == 128 + SIGTERM);
    // The background sleep got it too (reparented, it is gone once its new parent reaps it).
    for (int i = 0; i < 250 && running(background); ++i)
        std::this_thread::sleep_for(20ms);
    CHECK_FALSE(running(background));
}

TEST_CASE("child: starts with no signal blocked", "[child]") {
    sigset_t term, old;
    sigemptyset(&term);
    sigaddset(&term, SIGTERM);
    ::pthread_sigmask(SIG_BLOCK, &term, &old);
    spawn_options o;
    o.argv = {"sleep", "30"};
    child_process child(o);
    ::pthread_sigmask(SIG_SETMASK, &old, nullptr);
    child.signal(SIGTERM);
    const int status = child.reap();
    CHECK(programs::shell_status(status) == 128 + SIGTERM);
    CHECK(programs::describe_wait_status(status).rfind("killed by signal 15 (", 0) == 0);
}

TEST_CASE("child: dies with the thread that started it", "[child]") {
    std::unique_ptr<child_process> child;
    std::thread([&] {
        spawn_options o;
        o.argv = {"sleep", "30"};
        o.die_with_parent = true;
        child = std::make_unique<child_process>(o);
    }).join();
    REQUIRE(programs::wait_exit_for(*child, 10s));
    CHECK(programs::shell_status(child->reap()) == 128 + SIGKILL);
}

TEST_CASE("child: a group that dies with us is left alone once the child is reaped", "[child]") {
    // The command exits by itself and leaves a background job: reaping dismisses the guard,
    // which then kills nothing (its group id could name another group by then).
    auto o = shell("sleep 30 & echo $!");
    o.own_process_group = true;
    o.die_with_parent = true;
    child_process child(o);
    std::string line;
    REQUIRE(child.read_line(line));
    const pid_t background = std::stoi(line);
    CHECK(programs::shell_status(child.reap()) == 0); // the watcher is reaped with it
    CHECK(running(background));
    ::kill(background, SIGKILL);
}

TEST_CASE("child: the group's watcher holds none of our descriptors", "[child]") {
    int fds[2];
    REQUIRE(::pipe(fds) == 0); // inherited by a fork, not close-on-exec
    spawn_options o;
    o.argv = {"sleep", "30"};
    o.own_process_group = true;
    o.die_with_parent = true;
    child_process child(o);
    ::close(fds[1]);
    // Our write end was the only one: the read end sees the end of the stream (a watcher
    // holding a copy would keep it open for as long as the child runs).
    pollfd ready{fds[0], POLLIN, 0};
    REQUIRE(::poll(&ready, 1, 10000) == 1);
    char byte = 0;
    CHECK(::read(fds[0], &byte, 1) == 0);
    ::close(fds[0]);
}

TEST_CASE("child: the destructor kills and reaps a child still running", "[child]") {
    pid_t pid = -1;
    {
        spawn_options o;
        o.argv = {"sleep", "30"};
        child_process child(o);
        pid = child.pid();
    }
    CHECK(::kill(pid, 0) != 0); // reaped: no such process (pids are not reused this fast)
}

TEST_CASE("child: waiting for the exit, blocking with a limit or on the io_context", "[child]") {
    spawn_options o;
    o.argv = {"sleep", "0.2"};
    child_process child(o);
    CHECK_FALSE(programs::wait_exit_for(child, 10ms));
    CHECK_FALSE(child.exited());
    asio::io_context ioc;
    const auto ec = run(ioc, programs::async_wait_exit(child), 10s);
    CHECK_FALSE(ec);
    CHECK(child.exited()); // not reaped yet: the pid stays ours
    CHECK(::kill(child.pid(), 0) == 0);
    CHECK(child.reap() == 0);
    CHECK(programs::wait_exit_for(child, 0ms));
}

} // namespace conclave::test
