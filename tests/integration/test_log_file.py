"""CURLRETRY_LOG_FILE that cannot be opened (issue 11 §5): the library's lines go to stderr, and
the first of them says so, once, naming the file and the reason."""

from __future__ import annotations

import os

import harness
from harness import UpstreamTestCase


class UnwritableLogFile(UpstreamTestCase):
    def test_the_fallback_to_stderr_is_said_once(self):
        missing = self.temp_dir() / "no-such-dir" / "curlretry.log"
        key = self.key()
        r = harness.curl(["-sS", self.plain.script_url(key, "503,503,200")], preload=True,
                         env={"CURLRETRY_LOG_FILE": str(missing)})
        self.assertRun(r, 0, harness.ok_body(key, 3))
        lines = r.stderr.decode().splitlines()
        self.assertEqual(lines[0], f"curlretry: cannot open the log file {missing} (No such file or directory); "
                                   "logging to stderr instead", str(r))
        self.assertEqual(sum("cannot open the log file" in l for l in lines), 1, str(r))
        self.assertEqual(len(lines), 4, str(r))  # the notice, two retries, the success
        self.assertFalse(missing.parent.exists())

    def test_a_fifo_without_reader_is_refused_not_waited_for(self):
        # The log file opens as the attempt log does (shim/owned_fd.h): a blocking open of a FIFO
        # nobody reads hung the host in its first curl call, killed here after the timeout.
        fifo = self.temp_dir() / "curlretry.fifo"
        os.mkfifo(fifo)
        key = self.key()
        r = harness.curl(["-sS", self.plain.script_url(key, "503,200")], preload=True,
                         env={"CURLRETRY_LOG_FILE": str(fifo)}, timeout=10)
        self.assertRun(r, 0, harness.ok_body(key, 2))
        lines = r.stderr.decode().splitlines()
        self.assertEqual(lines[0], f"curlretry: cannot open the log file {fifo} (No such device or address); "
                                   "logging to stderr instead", str(r))
        self.assertEqual(len(lines), 3, str(r))  # the notice, one retry, the success

    def test_a_writable_log_file_gets_the_lines_and_stderr_stays_empty(self):
        log = self.temp_dir() / "curlretry.log"
        key = self.key()
        r = harness.curl(["-sS", self.plain.script_url(key, "503,200")], preload=True,
                         env={"CURLRETRY_LOG_FILE": str(log)})
        self.assertRun(r, 0, harness.ok_body(key, 2))
        self.assertEqual(r.stderr, b"")
        self.assertEqual(len(log.read_text().splitlines()), 2)


if __name__ == "__main__":
    import unittest
    unittest.main()
