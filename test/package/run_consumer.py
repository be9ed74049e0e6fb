#!/usr/bin/env python3
# SPDX-License-Identifier: BSL-1.0
"""Builds test/package/consumer against conclave one way and runs it against a dev agent.

usage: run_consumer.py --link package|pkgconfig|subdirectory|fetchcontent
                       --asio header-only|separate --conclave-build DIR --source DIR
                       --cli PATH --work DIR [--shared] [--cxx-flags FLAGS] [--cxx COMPILER]

package and pkgconfig install --conclave-build into a scratch prefix first (cmake --install);
subdirectory and fetchcontent build conclave from --source inside the consumer's build.
With --then-installed (fetchcontent), the conclave built there is then installed into a
scratch prefix and the consumer is built again against that package (find_package), in the
same Asio mode: a library built from source the way docs/install.md describes, installed,
and used, with no second compilation of the library.
"""
import argparse
import os
import re
import shutil
import subprocess
import sys


def run(cmd, **kw):
    print("+", " ".join(cmd), flush=True)
    subprocess.run(cmd, check=True, **kw)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--link", required=True)
    ap.add_argument("--asio", required=True)
    ap.add_argument("--conclave-build", required=True)
    ap.add_argument("--source", required=True)
    ap.add_argument("--cli", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--shared", action="store_true")
    ap.add_argument("--cxx-flags", default="")
    ap.add_argument("--cxx", default="")
    ap.add_argument("--then-installed", action="store_true")
    ap.add_argument("--launcher", default="",
                    help="a compiler launcher for the consumer's builds (ccache): its words "
                         "separated by |")
    ap.add_argument("--expect-link-error", default="",
                    help="the build must fail, naming this (a program whose Asio mode differs)")
    a = ap.parse_args()

    shutil.rmtree(a.work, ignore_errors=True)
    os.makedirs(a.work)
    consume(a, a.link, os.path.join(a.work, "prefix"), os.path.join(a.work, "build"))
    if a.then_installed:
        if a.link != "fetchcontent":
            sys.exit("--then-installed needs --link fetchcontent")
        installed = os.path.join(a.work, "installed")
        run(["cmake", "--install", os.path.join(a.work, "build"), "--prefix", installed])
        a.shared = False  # (the consumer's own checks of a shared build were made above)
        consume(a, "package", installed, os.path.join(a.work, "build-installed"),
                install_first=False)


def consume(a, link, prefix, build, install_first=True):
    """Configures, builds and runs the consumer linked `link`; `prefix` holds the package
    (package, pkgconfig), which install_first installs there from --conclave-build."""
    env = dict(os.environ)

    configure = ["cmake", "-S", os.path.join(a.source, "test/package/consumer"), "-B", build,
                 "-G", "Ninja", "-DCMAKE_BUILD_TYPE=RelWithDebInfo",
                 "-DCONSUMER_LINK=" + link, "-DCONSUMER_ASIO=" + a.asio,
                 "-DCMAKE_CXX_FLAGS=" + a.cxx_flags]
    if a.launcher:
        configure.append("-DCMAKE_CXX_COMPILER_LAUNCHER=" + a.launcher.replace("|", ";"))
    if a.cxx:
        configure.append("-DCMAKE_CXX_COMPILER=" + a.cxx)
    if link in ("package", "pkgconfig"):
        if install_first:
            run(["cmake", "--install", a.conclave_build, "--prefix", prefix])
        configure.append("-DCMAKE_PREFIX_PATH=" + prefix)
        pc = [os.path.join(root, f) for root, _, files in os.walk(prefix) for f in files
              if f == "conclave.pc"]
        if link == "pkgconfig":
            env["PKG_CONFIG_PATH"] = os.path.dirname(pc[0])
    else:
        configure += ["-DCONCLAVE_SOURCE_DIR=" + a.source,
                      "-DBUILD_SHARED_LIBS=" + ("ON" if a.shared else "OFF"),
                      "-DCONCLAVE_ASIO_SEPARATE_COMPILATION=" +
                      ("ON" if a.asio == "separate" else "OFF")]
        if "-fsanitize" in a.cxx_flags:
            configure.append("-DCONCLAVE_SANITIZE=ON")
    run(configure, env=env)
    if link in ("fetchcontent", "subdirectory"):
        # Built from source inside a user's project, conclave compiles without -Werror
        # (CONCLAVE_WERROR stays off there): a newer compiler's warning must not break it.
        with open(os.path.join(build, "build.ninja")) as f:
            if "-Werror" in f.read():
                sys.exit("conclave built from source inside a project compiles with -Werror")
    if a.expect_link_error:
        out = subprocess.run(["cmake", "--build", build], env=env, text=True,
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        sys.stdout.write(out.stdout)
        if out.returncode == 0 or a.expect_link_error not in out.stdout:
            sys.exit("expected the link to fail naming " + a.expect_link_error)
        print("consumer (%s, Asio %s): refused at link time, as expected" % (link, a.asio))
        return
    run(["cmake", "--build", build], env=env)

    agent = subprocess.Popen([a.cli, "agent", "-dev", "-http-addr", "127.0.0.1:0"],
                             stdout=subprocess.PIPE, text=True)
    try:
        line = agent.stdout.readline()
        m = re.search(r"listening on (\S+)", line)
        if not m:
            sys.exit("no address from the dev agent: " + line)
        env["CONSUL_HTTP_ADDR"] = m.group(1)
        out = subprocess.run([os.path.join(build, "consumer")], env=env, text=True,
                             capture_output=True, timeout=60)
        sys.stdout.write(out.stdout)
        sys.stderr.write(out.stderr)
        if out.returncode != 0 or "lock held and released" not in out.stdout:
            sys.exit("consumer failed (exit %d)" % out.returncode)
        # A user's test on the dev agent component: it starts the agent itself.
        out = subprocess.run([os.path.join(build, "with_devagent")], env=env, text=True,
                             capture_output=True, timeout=60)
        sys.stdout.write(out.stdout)
        sys.stderr.write(out.stderr)
        if out.returncode != 0 or "lock held and released" not in out.stdout:
            sys.exit("with_devagent failed (exit %d)" % out.returncode)
        if a.shared:
            # A shared build exports conclave's API (its internals are hidden).
            libs = [os.path.join(root, f) for root, _, files in os.walk(build) for f in files
                    if f.startswith("libconclave.so")]
            exported = subprocess.run(["nm", "-D", "-C", "--defined-only", libs[0]],
                                      capture_output=True, text=True, check=True).stdout
            internal = [l for l in exported.splitlines() if "conclave::detail::" in l
                        and " T " in l]
            print("exported symbols:", len(exported.splitlines()),
                  "conclave::detail functions among them:", len(internal))
            if not any("conclave::client::client" in l for l in exported.splitlines()):
                sys.exit("libconclave.so does not export conclave::client")
            # The dev agent is a library of its own, never part of the client's.
            agent_libs = [os.path.join(root, f) for root, _, files in os.walk(build)
                          for f in files if f.startswith("libconclave_devagent.so")]
            needed = subprocess.run(["readelf", "-d", agent_libs[0]], capture_output=True,
                                    text=True, check=True).stdout
            if "libconclave.so" in needed:
                sys.exit("libconclave_devagent.so depends on libconclave.so")
            if "conclave::dev::" in exported:
                sys.exit("libconclave.so holds dev agent symbols")
    finally:
        agent.terminate()
        agent.wait(timeout=10)
    print("consumer (%s, Asio %s%s): ok" % (link, a.asio, ", shared" if a.shared else ""))


if __name__ == "__main__":
    main()
