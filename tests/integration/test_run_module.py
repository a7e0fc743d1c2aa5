"""run_module.py, the runner ctest uses for every integration module (issue 11 §8): skipped tests
make ctest say "Skipped" (exit 77), and under CURLRETRY_STRICT_DEPS=1 a skip for a package that
scripts/install-deps.sh installs is a failure."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

RUNNER = Path(__file__).resolve().parent / "run_module.py"

MODULE = '''
import unittest
class T(unittest.TestCase):
    def test_runs(self):
        pass
    @unittest.skip({reason!r})
    def test_skipped(self):
        pass
'''


def run(reason: str | None, strict: bool) -> subprocess.CompletedProcess:
    d = tempfile.TemporaryDirectory(prefix="curlretry-runner-")
    try:
        body = MODULE.format(reason=reason) if reason else "import unittest\nclass T(unittest.TestCase):\n" \
                                                            "    def test_runs(self):\n        pass\n"
        (Path(d.name) / "sample_module.py").write_text(body)
        env = {k: v for k, v in os.environ.items() if k != "CURLRETRY_STRICT_DEPS"}
        env["PYTHONPATH"] = d.name
        if strict:
            env["CURLRETRY_STRICT_DEPS"] = "1"
        return subprocess.run([sys.executable, str(RUNNER), "sample_module"], env=env, cwd=d.name,
                              capture_output=True, timeout=60)
    finally:
        d.cleanup()


class RunModule(unittest.TestCase):
    def test_all_ran_is_0(self):
        self.assertEqual(run(None, strict=True).returncode, 0)

    def test_a_skip_is_77_and_listed(self):
        r = run("needs python3-pycurl: pycurl is not installed", strict=False)
        self.assertEqual(r.returncode, 77, r.stderr)
        self.assertIn(b"SKIPPED 1 of 2 tests", r.stderr)
        self.assertIn(b"needs python3-pycurl", r.stderr)

    def test_strict_a_skip_for_a_package_we_install_fails(self):
        r = run("needs python3-pycurl: pycurl is not installed", strict=True)
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertIn(b"skipped for python3-pycurl, which scripts/install-deps.sh installs", r.stderr)

    def test_strict_nghttpx_is_one_of_ours(self):
        self.assertEqual(run("needs nghttp2-proxy: nghttpx is not installed", strict=True).returncode, 1)

    def test_strict_a_skip_for_something_we_do_not_install_stays_a_skip(self):
        self.assertEqual(run("needs some-other-package: it is not installed", strict=True).returncode, 77)
        self.assertEqual(run("/tmp is mounted nosuid", strict=True).returncode, 77)


if __name__ == "__main__":
    unittest.main()
