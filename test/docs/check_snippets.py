#!/usr/bin/env python3
# SPDX-License-Identifier: BSL-1.0
"""Compiles the C++ blocks of one Markdown file, so that the docs cannot show code that
does not build.

    check_snippets.py FILE.md --source-dir DIR --out-dir DIR [--stamp FILE] \
        [--depfile FILE] -- COMPILER ARGS...

The blocks (test/README.md, "Code in the docs"):
  ```cpp            a complete translation unit, compiled alone;
  ```cpp fragment   statements: the body of `snippet(conclave::client& client)` below.
Any other info string that starts with `cpp` is an error (a typo would skip a block).

Each block is written to a .cpp file in --out-dir, after a `#line` naming the Markdown file
and line, so that the compiler's messages point into the docs. The fragments of one file
share one translation unit (one function each, in a namespace of its own): they are cheap
together, and one fragment cannot see another's names. COMPILER ARGS are expected to check
only (-fsyntax-only); the script adds the source and -MD, and merges what the compiler
reports as dependencies into --depfile, for the build to check the file again when a header
it uses changes. --stamp is written only when every block compiled.
"""

import argparse
import pathlib
import re
import subprocess
import sys

FRAGMENT_HEAD = """#include <conclave/conclave.hpp>
#include <boost/asio.hpp>
namespace asio = boost::asio;
using namespace std::chrono_literals;
"""

OPENING = re.compile(r"^(?P<indent> {0,3})(?P<fence>`{3,}|~{3,})(?P<info>.*)$")


def fenced_blocks(lines):
    """(info string, line number of the first content line, content lines) of each fenced
    block, as CommonMark reads them: a block is closed by a fence of the same character at
    least as long, and its content loses up to the opening fence's indentation."""
    i = 0
    while i < len(lines):
        opening = OPENING.match(lines[i])
        if not opening:
            i += 1
            continue
        fence, indent = opening["fence"], len(opening["indent"])
        closing = re.compile(r"^ {0,3}" + re.escape(fence[0]) + "{%d,}\\s*$" % len(fence))
        body, j = [], i + 1
        while j < len(lines) and not closing.match(lines[j]):
            spaces = len(lines[j]) - len(lines[j].lstrip(" "))
            body.append(lines[j][min(indent, spaces):])
            j += 1
        if j == len(lines):
            # Legal Markdown (the block runs to the end), but almost surely a missing fence.
            raise ValueError(f"{i + 1}: this block is never closed")
        yield opening["info"].strip(), i + 2, body
        i = j + 1


def cpp_blocks(lines):
    """('tu' or 'fragment', first line, content) of each block whose info string starts
    with cpp."""
    for info, line, body in fenced_blocks(lines):
        if not info.startswith("cpp"):
            continue
        words = info.split()
        if words == ["cpp"]:
            yield "tu", line, body
        elif words == ["cpp", "fragment"]:
            yield "fragment", line, body
        else:
            raise ValueError(f"{line - 1}: info string '{info}': 'cpp' (a whole file) or "
                             "'cpp fragment' (statements)")


def write_if_changed(path, text):
    """Leaves an unchanged file alone (its time stamp too)."""
    if not path.exists() or path.read_text(encoding="utf-8") != text:
        path.write_text(text, encoding="utf-8")


def dependencies(depfile):
    """The prerequisites of a Makefile rule written by the compiler (-MD), still escaped."""
    text = depfile.read_text(encoding="utf-8").replace("\\\n", " ")
    rule = text.split(": ", 1)[1] if ": " in text else ""
    return re.findall(r"(?:\\.|[^\s\\])+", rule)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("markdown", type=pathlib.Path)
    parser.add_argument("--source-dir", type=pathlib.Path, required=True,
                        help="messages name the Markdown file relative to it")
    parser.add_argument("--out-dir", type=pathlib.Path, required=True)
    parser.add_argument("--stamp", type=pathlib.Path)
    parser.add_argument("--depfile", type=pathlib.Path)
    # The compiler's command follows "--" (its arguments are not ours to parse).
    argv = sys.argv[1:]
    split = argv.index("--") if "--" in argv else len(argv)
    args, compiler = parser.parse_args(argv[:split]), argv[split + 1:]
    if not compiler:
        parser.error("no compiler command after --")

    md, out_dir = args.markdown.resolve(), args.out_dir.resolve()
    name = md.relative_to(args.source_dir.resolve()).as_posix()
    try:
        blocks = list(cpp_blocks(md.read_text(encoding="utf-8").splitlines()))
    except ValueError as e:
        print(f"{name}:{e}", file=sys.stderr)
        return 1
    if blocks:
        out_dir.mkdir(parents=True, exist_ok=True)

    # The sources: one per complete translation unit, one for all the fragments.
    sources = []
    fragment_source = out_dir / f"{pathlib.Path(name).name}.fragments.cpp"
    fragments = FRAGMENT_HEAD.splitlines()
    for kind, line, body in blocks:
        if kind == "tu":
            source = out_dir / f"{pathlib.Path(name).name}.{line}.cpp"
            write_if_changed(source, "\n".join([f'#line {line} "{name}"', *body, ""]))
            sources.append(source)
            continue
        # [[maybe_unused]]: a fragment need not use the client (-Wunused-parameter).
        fragments += [f"namespace snippet_at_line_{line} {{",
                      "boost::asio::awaitable<void> snippet("
                      "[[maybe_unused]] conclave::client& client) {",
                      f'#line {line} "{name}"', *body]
        # Back to the generated file: an unbalanced brace is reported where it shows.
        fragments += [f'#line {len(fragments) + 2} "{fragment_source}"', "co_return;", "}", "}"]
    if len(fragments) > len(FRAGMENT_HEAD.splitlines()):
        write_if_changed(fragment_source, "\n".join(fragments) + "\n")
        sources.append(fragment_source)

    # Sources of blocks that are gone (moved or deleted) would only mislead.
    for old in out_dir.glob("*.cpp"):
        if old not in sources:
            old.unlink()
            old.with_suffix(".d").unlink(missing_ok=True)

    failed, deps = 0, {md.as_posix()}
    for source in sources:
        depfile = source.with_suffix(".d")
        status = subprocess.run([*compiler, "-MD", "-MF", str(depfile), str(source)],
                                check=False).returncode
        if status != 0:
            failed += 1
        elif args.depfile:
            deps.update(d for d in dependencies(depfile)
                        if pathlib.Path(d.replace("\\ ", " ")).parent != out_dir)
    if failed:
        print(f"check_snippets: {name}: {failed} of {len(sources)} sources do not compile "
              f"({len(blocks)} C++ blocks; generated sources in {out_dir})", file=sys.stderr)
        return 1
    if args.depfile:
        args.depfile.write_text(f"{args.stamp or 'snippets'}: " + " \\\n  ".join(sorted(deps))
                                + "\n", encoding="utf-8")
    if args.stamp:
        args.stamp.write_text(f"{len(blocks)} C++ blocks compile\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
