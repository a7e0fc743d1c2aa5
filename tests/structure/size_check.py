#!/usr/bin/env python3
"""Fails on a product file over 600 lines or a product function over 80 lines (issue 28 item 6).

Small named pieces: a newcomer reads a file or a function whole. The line count of a file is
`wc -l`'s; the size of a function is clang-tidy's readability-function-size (LineThreshold 80:
lines of the body, comments and blank lines included) run over the build's
compile_commands.json, so what counts as a function (lambdas, templates, inline functions in
headers) is the compiler's, not a pattern's.

Product files are those under the product folders below; tests/, bench/ and the build tree
(where the generated files live) are not counted.

tests/structure/known_offenders.txt lists the offenders that main had when the check landed, to
split by the owners of those files: each is printed as "known, to split" and may not grow. The
check fails on any other offender, on a known one that grew, and on a listed one that no longer
offends (remove its line: the list only shrinks).

Usage: size_check.py SOURCE_DIR BUILD_DIR [--jobs N]
Exit status 0: no new offender; 1: offenders or stale entries; 2: the check could not run;
77: clang-tidy is missing (a visible skip; a failure under CURLRETRY_STRICT_DEPS=1).
"""

import argparse
import concurrent.futures
import json
import os
import re
import shutil
import subprocess
import sys
import time

PRODUCT_DIRS = ("cli", "config", "core", "elf", "fleet", "preload", "proxy", "shim", "state", "upstream", "x509")
SOURCE_SUFFIXES = (".c", ".cpp", ".h")
MAX_FILE_LINES = 600
MAX_FUNCTION_LINES = 80

WARNING = re.compile(r"^(?P<path>/[^:]+):(?P<line>\d+):\d+: warning: function '(?P<name>[^']+)' exceeds "
                     r"recommended size/complexity thresholds \[readability-function-size\]$")
NOTE = re.compile(r"^(?P<path>/[^:]+):(?P<line>\d+):\d+: note: (?P<lines>\d+) lines including whitespace")
ERROR = re.compile(r"^(?P<path>/[^:]+):\d+:\d+: error: ")


def product_files(source):
    for folder in PRODUCT_DIRS:
        for root, _, names in os.walk(os.path.join(source, folder)):
            for name in names:
                if name.endswith(SOURCE_SUFFIXES):
                    yield os.path.relpath(os.path.join(root, name), source)


def long_files(source):
    out = []
    for path in sorted(product_files(source)):
        with open(os.path.join(source, path), "rb") as f:
            lines = f.read().count(b"\n")
        if lines > MAX_FILE_LINES:
            out.append(("file", path, "", lines))
    return out


def translation_units(source, build):
    """Each product source the build compiles, once (the shim's are compiled twice)."""
    with open(os.path.join(build, "compile_commands.json")) as f:
        entries = json.load(f)
    units = set()
    for entry in entries:
        file = os.path.join(entry.get("directory", ""), entry["file"])
        path = os.path.relpath(os.path.realpath(file), os.path.realpath(source))
        if path.split(os.sep)[0] in PRODUCT_DIRS:
            units.add(path)
    return sorted(units)


def extended_regex_literal(text):
    """`text` matched literally by a POSIX extended regex (clang-tidy's --header-filter)."""
    return re.sub(r"([.^$|()\[\]*+?{}\\])", r"\\\1", text)


def tidy(clang_tidy, source, build, unit):
    """clang-tidy's function sizes for one translation unit: (offenders, errors)."""
    product = "|".join(PRODUCT_DIRS)
    command = [
        clang_tidy, "-p", build, "--quiet",
        "-checks=-*,readability-function-size",
        "-config={CheckOptions: [{key: readability-function-size.LineThreshold, value: %d}]}" % MAX_FUNCTION_LINES,
        "--header-filter=^%s/(%s)/" % (extended_regex_literal(os.path.realpath(source)), product),
        # The build is GCC's: its warning flags mean nothing to clang, and its -Werror must not
        # turn clang's own warnings into errors here.
        "--extra-arg=-Wno-unknown-warning-option", "--extra-arg=-Wno-error",
        os.path.join(source, unit),
    ]
    started = time.monotonic()
    run = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, check=False)
    seconds = time.monotonic() - started
    offenders, errors, pending = [], [], None
    for line in run.stdout.splitlines():
        if m := WARNING.match(line):
            pending = (m["path"], m["line"], m["name"])
        elif (m := NOTE.match(line)) and pending and (m["path"], m["line"]) == pending[:2]:
            path = os.path.relpath(pending[0], os.path.realpath(source))
            offenders.append(("function", path, pending[2], int(m["lines"]), int(pending[1])))
            pending = None
        elif ERROR.match(line):
            errors.append(line)
    if run.returncode != 0 and not errors and not offenders:
        errors.append("clang-tidy exited with %d on %s:\n%s" % (run.returncode, unit, run.stdout[-2000:]))
    return offenders, errors, (seconds, unit)


def long_functions(clang_tidy, source, build, jobs):
    found, errors, times = {}, [], []
    units = translation_units(source, build)
    if not units:
        raise RuntimeError("compile_commands.json names no product source: was the build configured?")
    with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
        for offenders, unit_errors, took in pool.map(lambda u: tidy(clang_tidy, source, build, u), units):
            errors += unit_errors
            times.append(took)
            for kind, path, name, lines, line in offenders:
                found[(path, line, name)] = (kind, path, name, lines)  # a header's, once
    times.sort(reverse=True)
    print("size_check: clang-tidy took %.0f s over %d units; slowest: %s" %
          (sum(t for t, _ in times), len(units), ", ".join("%s %.1f s" % (u, t) for t, u in times[:5])))
    return sorted(found.values(), key=lambda o: (o[1], o[2])), errors, len(units)


def read_known(path):
    known = []
    with open(path) as f:
        for number, line in enumerate(f, 1):
            line = line.split("#", 1)[0].split()
            if not line:
                continue
            if line[0] == "file" and len(line) == 3:
                known.append(("file", line[1], "", int(line[2])))
            elif line[0] == "function" and len(line) == 4:
                known.append(("function", line[1], line[2], int(line[3])))
            else:
                raise RuntimeError("%s:%d: expected 'file PATH LINES' or 'function PATH NAME LINES'" % (path, number))
    return known


def describe(offender):
    kind, path, name, lines = offender
    limit = MAX_FILE_LINES if kind == "file" else MAX_FUNCTION_LINES
    return "%s %s%s: %d lines (limit %d)" % (kind, path, " " + name if name else "", lines, limit)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("source")
    parser.add_argument("build")
    parser.add_argument("--jobs", type=int, default=min(2, os.cpu_count() or 1))
    parser.add_argument("--known", default=None, help="the known offenders (default: beside this script)")
    args = parser.parse_args()
    known_path = args.known or os.path.join(os.path.dirname(os.path.abspath(__file__)), "known_offenders.txt")

    clang_tidy = shutil.which("clang-tidy")
    if clang_tidy is None:
        why = "clang-tidy is not installed (scripts/install-deps.sh installs it)"
        if os.environ.get("CURLRETRY_STRICT_DEPS") == "1":
            print("size_check: FAILED: " + why + " and CURLRETRY_STRICT_DEPS=1")
            return 2
        print("size_check: SKIPPED: " + why)
        return 77
    try:
        known = read_known(known_path)
        functions, errors, units = long_functions(clang_tidy, args.source, args.build, args.jobs)
    except (OSError, RuntimeError, ValueError) as e:
        print("size_check: cannot run: %s" % e)
        return 2
    if errors:
        # A unit clang-tidy cannot parse would hide its functions: that is no pass.
        print("size_check: clang-tidy could not read every unit:")
        for line in errors:
            print("  " + line)
        return 2

    new, grown, stale = [], [], []
    remaining = list(known)
    for offender in long_files(args.source) + functions:
        kind, path, name, lines = offender
        match = next((k for k in remaining if k[:3] == (kind, path, name)), None)
        if match is None:
            new.append(offender)
            continue
        remaining.remove(match)
        if lines > match[3]:
            grown.append((offender, match[3]))
        else:
            print("known, to split: " + describe(offender))
    stale = remaining
    for offender in new:
        print("NEW: " + describe(offender))
    for offender, was in grown:
        print("GREW: %s (listed at %d)" % (describe(offender), was))
    for offender in stale:
        print("no longer offends, remove it from %s: %s" % (os.path.basename(known_path), describe(offender)))
    print("size_check: %d translation units, %d known, %d new, %d grown, %d stale" %
          (units, len(known) - len(stale), len(new), len(grown), len(stale)))
    return 1 if new or grown or stale else 0


if __name__ == "__main__":
    sys.exit(main())
