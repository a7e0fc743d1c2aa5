"""Log lines that say why (issue 17 items 3 and 4), from the real curl CLI under the preload: a
wait the server asked for says so, a give-up on a too-long server wait gives the server's value,
the cap and the key, a give-up after retries logs at warn (CURLRETRY_LOG=warn is "quiet unless it
failed"), debug also logs a first-try success, and lines in a log file carry an ISO-8601 UTC time
and the pid of the process that wrote them.
"""

from __future__ import annotations

import calendar
import re
import subprocess
import time
import unittest

import harness


class LogLines(harness.UpstreamTestCase):
    def curl(self, url: str, level: str, **env: str) -> harness.Result:
        result = harness.curl(["-sS", "-o", "/dev/null", url], preload=True,
                              env={"CURLRETRY_LOG": level, "CURLRETRY_BASE_MS": "10", **env})
        self.assertRun(result, 0)
        return result

    def where(self, url: str) -> str:
        return url.split("://", 1)[1]

    def test_a_wait_the_server_asked_for_says_so(self) -> None:
        key = self.key()
        url = self.plain.script_url(key, "503+ra=1,200")
        result = self.curl(url, "info")
        self.assertEqual(result.stderr.decode().splitlines(), [
            f"curlretry: GET {self.where(url)} -> HTTP 503: retrying in 1000 ms (Retry-After) (attempt 1/3)",
            f"curlretry: GET {self.where(url)} -> HTTP 200 after 2 attempts",
        ])
        self.assertGreaterEqual(result.elapsed, 1.0)

    def test_a_too_long_server_wait_gives_value_cap_and_key(self) -> None:
        key = self.key()
        url = self.plain.script_url(key, "503+ra=200")
        result = self.curl(url, "warn")
        self.assertEqual(result.stderr.decode(),
                         f"curlretry: GET {self.where(url)} -> HTTP 503 (server asked for 200 s > retry_after.max_ms "
                         f"120 s): giving up after 1 attempt (retry-after-too-long)\n")
        self.assertCount(self.plain, key, 1, result)

    def test_warn_is_quiet_unless_it_failed(self) -> None:
        saved, failed = self.key("saved"), self.key("failed")
        quiet = self.curl(self.plain.script_url(saved, "503,200"), "warn")
        self.assertEqual(quiet.stderr, b"", str(quiet))
        url = self.plain.script_url(failed, "503")
        loud = self.curl(url, "warn")
        self.assertEqual(loud.stderr.decode(),
                         f"curlretry: GET {self.where(url)} -> HTTP 503: giving up after 3 attempts (exhausted)\n")

    def test_debug_logs_a_first_try_success(self) -> None:
        key = self.key()
        url = self.plain.script_url(key, "200")
        self.assertEqual(self.curl(url, "info").stderr, b"")
        result = self.curl(url, "debug")
        self.assertIn(f"curlretry: GET {self.where(url)} -> HTTP 200 after 1 attempt",
                      result.stderr.decode().splitlines(), str(result))

    def test_log_file_lines_start_with_utc_time_and_pid(self) -> None:
        key = self.key()
        url = self.plain.script_url(key, "503,200")
        log = self.temp_dir() / "curlretry.log"
        env = harness.environment(True, {"CURLRETRY_LOG_FILE": str(log), "CURLRETRY_BASE_MS": "10"})
        before = time.time()
        # `exec` keeps the shell's pid for curl, so the pid printed first is the one that logs.
        proc = subprocess.run(["sh", "-c", 'echo $$; exec "$0" -q -sS -o /dev/null "$1"', harness.CURL, url],
                              env=env, capture_output=True, timeout=harness.DEFAULT_TIMEOUT, stdin=subprocess.DEVNULL)
        after = time.time()
        self.assertEqual(proc.returncode, 0, proc.stderr)
        pid = int(proc.stdout.decode())
        lines = log.read_text().splitlines()
        self.assertEqual(len(lines), 2, lines)
        pattern = re.compile(r"^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3})Z curlretry\[(\d+)\]: GET (\S+) -> (.*)$")
        for line, rest in zip(lines, ["HTTP 503: retrying in 10 ms (attempt 1/3)", "HTTP 200 after 2 attempts"]):
            m = pattern.match(line)
            self.assertIsNotNone(m, line)
            stamp = calendar.timegm(time.strptime(m.group(1)[:19], "%Y-%m-%dT%H:%M:%S"))
            self.assertTrue(before - 1 <= stamp <= after + 1, f"{line}: not now in UTC")
            self.assertEqual((int(m.group(2)), m.group(3), m.group(4)), (pid, self.where(url), rest))


if __name__ == "__main__":
    unittest.main()
