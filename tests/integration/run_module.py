"""Runs one integration test module for ctest, so that a skip is visible (issue 11 §8).

  run_module.py MODULE

Exit 0: every test ran and passed. Exit 1: a failure or error. Exit 77 (the tests' CMake
SKIP_RETURN_CODE): some tests were skipped, listed with their reasons at the end, so that ctest
shows the module as "Skipped" instead of "Passed".

A skip whose reason starts "needs PACKAGE:" (harness.needs) names a Debian package. With
CURLRETRY_STRICT_DEPS=1 (scripts/test.sh sets it), such a skip is a failure when
scripts/install-deps.sh installs PACKAGE: the install script promised it, so its absence is a
broken setup, not an optional extra.
"""

from __future__ import annotations

import os
import re
import sys
import unittest
from pathlib import Path

SKIP_CODE = 77
INSTALL_DEPS = Path(__file__).resolve().parents[2] / "scripts" / "install-deps.sh"


def installed_by_us() -> set[str]:
    """The packages in install-deps.sh's `packages=( ... )` array."""
    text = INSTALL_DEPS.read_text()
    block = re.search(r"^packages=\((.*?)^\)", text, re.S | re.M)
    if not block:
        raise SystemExit(f"run_module: no packages=( ... ) array in {INSTALL_DEPS}")
    words = []
    for line in block.group(1).splitlines():
        words += line.split("#", 1)[0].split()
    return set(words)


def main() -> int:
    if len(sys.argv) != 2:
        print("usage: run_module.py MODULE", file=sys.stderr)
        return 2
    suite = unittest.defaultTestLoader.loadTestsFromName(sys.argv[1])
    result = unittest.TextTestRunner(verbosity=2, stream=sys.stderr).run(suite)
    if not result.wasSuccessful():
        return 1
    if not result.skipped:
        return 0
    strict = os.environ.get("CURLRETRY_STRICT_DEPS") == "1"
    ours = installed_by_us() if strict else set()
    broken = []
    print(f"\nSKIPPED {len(result.skipped)} of {result.testsRun} tests:", file=sys.stderr)
    for test, reason in result.skipped:
        print(f"  {test}: {reason}", file=sys.stderr)
        needed = re.match(r"needs ([a-z0-9.+-]+):", reason)
        if needed and needed.group(1) in ours:
            broken.append(needed.group(1))
    if broken:
        print(f"FAILED: skipped for {', '.join(sorted(set(broken)))}, which scripts/install-deps.sh installs "
              "(run it, or unset CURLRETRY_STRICT_DEPS)", file=sys.stderr)
        return 1
    return SKIP_CODE


if __name__ == "__main__":
    sys.exit(main())
