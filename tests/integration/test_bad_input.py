"""Bad input never harms the host (issue 5, item 5).

Malformed configs (tests/unit/config/malformed/, with expected.tsv): `curlretry check --config F`
exits 1 naming F:LINE:COL, and a real curl started with CURLRETRY_CONFIG=F completes every
transfer untouched (pass-through) after exactly one warning line.

Malformed upstream responses (broken status lines, a 100 KiB header, Retry-After garbage,
negative or in year 9999, NUL bytes in bodies, bodies far past the 64 KiB classification hold on a
503 and on a 400): curl under the preload never crashes or hangs; it ends exactly as it does
without the preload, or retries per policy, with the bytes it delivers compared exactly.

Under the ASan preset (CURLRETRY_PRELOAD_PREFIX set) the preloaded curl also runs with
LeakSanitizer on: curl itself frees everything, so a leak report here is ours.
"""

import os
import re
import unittest
import urllib.parse
from pathlib import Path

import harness
from harness import (CAPTCHA_BODY, CURLRETRY_BIN, curl, error_body, ok_body, overloaded_body,
                     pattern_bytes)

MALFORMED = Path(__file__).resolve().parents[1] / "unit" / "config" / "malformed"
HOLD = 64 * 1024  # settings.max_error_body, built-in: how much of a failure's body is held
BIG = 1024 * 1024


def manifest() -> list[tuple[Path, str, str]]:
    """(file, "LINE:COL", message start) for every malformed config, from expected.tsv."""
    rows = []
    for line in (MALFORMED / "expected.tsv").read_text(encoding="utf-8").splitlines():
        if line and not line.startswith("#"):
            name, position, message = line.split("\t")
            rows.append((MALFORMED / name, position, message))
    return rows


def leak_checked_env(env: dict | None = None) -> dict:
    """`env` plus LeakSanitizer on, when the preloaded library is an ASan build."""
    env = dict(env or {})
    options = os.environ.get("ASAN_OPTIONS")
    if options is not None and "libasan" in harness.PRELOAD_PREFIX:
        env["ASAN_OPTIONS"] = re.sub(r"detect_leaks=\d", "detect_leaks=1", options)
        if "detect_leaks=" not in env["ASAN_OPTIONS"]:
            env["ASAN_OPTIONS"] += ":detect_leaks=1"
    return env


def raw(data: bytes) -> str:
    """A `raw` step sending exactly `data` (upstream/README.md)."""
    return "raw+data=" + urllib.parse.quote(data, safe="")


def ra(value: str) -> str:
    """A Retry-After modifier value, escaped for the script grammar."""
    return urllib.parse.quote(value, safe="")


class MalformedConfigs(harness.UpstreamTestCase):
    def check(self, path: Path) -> harness.Result:
        if not CURLRETRY_BIN:
            self.fail("CURLRETRY_BIN is not set: run through ctest")
        return harness.run([CURLRETRY_BIN, "check", "--config", str(path)], preload=False)

    def test_at_least_40_malformed_configs_are_committed(self):
        rows = manifest()
        self.assertGreaterEqual(len(rows), 40)
        listed = {path.name for path, _, _ in rows}
        on_disk = {p.name for p in MALFORMED.glob("*.yaml")}
        self.assertEqual(listed, on_disk, "expected.tsv and the files disagree")

    def test_check_names_file_line_and_column(self):
        for path, position, message in manifest():
            with self.subTest(path.name):
                r = self.check(path)
                self.assertEqual(r.code, 1, str(r))
                lines = r.stderr.decode("utf-8", "replace").splitlines()
                self.assertEqual(len(lines), 1, str(r))
                self.assertTrue(lines[0].startswith(f"curlretry: {path}:{position}: {message}"),
                                f"expected {path}:{position}: {message}...\n{r}")
                self.assertEqual(r.stdout, b"", str(r))

    def test_a_file_over_1_mib_is_refused_without_reading_it(self):
        path = self.temp_dir() / "big.yaml"
        path.write_bytes(b"version: 1\n" + b"#" * BIG + b"\n")
        r = self.check(path)
        self.assertEqual(r.code, 1, str(r))
        self.assertIn(f"{path}: ".encode(), r.stderr)
        self.assertIn(b"larger than 1024 KiB", r.stderr)

    def test_a_host_with_a_malformed_config_passes_through_with_one_warning(self):
        for path, position, _ in manifest():
            with self.subTest(path.name):
                k1, k2 = self.key("a"), self.key("b")
                r = curl(["-sS", self.plain.script_url(k1, "503,200"), self.plain.script_url(k2, "200")],
                         preload=True, env=leak_checked_env({"CURLRETRY_CONFIG": str(path)}))
                # Untouched: the 503 reaches curl as is (one request), the next transfer too.
                self.assertRun(r, 0, overloaded_body(k1, 1) + ok_body(k2, 1))
                self.assertCount(self.plain, k1, 1, r)
                lines = r.stderr.splitlines()
                self.assertEqual(len(lines), 1, str(r))
                self.assertTrue(lines[0].startswith(f"curlretry: {path}:{position}: ".encode()), str(r))
                self.assertIn(b"pass-through", lines[0])

    def test_a_host_with_a_malformed_variable_passes_through_with_one_warning(self):
        for variable, value in (("CURLRETRY_MAX_ATTEMPTS", "abc"), ("CURLRETRY_MAX_ATTEMPTS", "0"),
                                ("CURLRETRY_BASE_MS", "-5"), ("CURLRETRY_MAX_DELAY_MS", "99999999999999999999"),
                                ("CURLRETRY_LOG", "loud"), ("CURLRETRY_DISABLE", "perhaps"),
                                ("BILI_REPLAY_RETRY_MAX", "x"), ("CURLRETRY_CONFIG", "/nonexistent/c.yaml")):
            with self.subTest(variable=variable, value=value):
                k = self.key()
                r = curl(["-sS", self.plain.script_url(k, "503,200")], preload=True,
                         env=leak_checked_env({variable: value}))
                self.assertRun(r, 0, overloaded_body(k, 1))
                self.assertCount(self.plain, k, 1, r)
                lines = r.stderr.splitlines()
                self.assertEqual(len(lines), 1, str(r))
                self.assertTrue(lines[0].startswith(f"curlretry: {variable}=".encode()), str(r))
                self.assertIn(b"pass-through", lines[0])


class MalformedResponses(harness.UpstreamTestCase):
    def get(self, key, script, *args, preload=True, env=None):
        return curl(["-sS", *args, self.plain.script_url(key, script)], preload=preload,
                    env=leak_checked_env(env) if preload else env)

    def alone_then_preloaded(self, script, *args, env=None):
        """curl without, then with, the preload, on the same key and attempt numbers."""
        k = self.key()
        alone = self.get(k, script, *args, preload=False)
        self.plain.reset(k)
        r = self.get(k, script, *args, env=env)
        return k, alone, r

    def assertSameAsAlone(self, alone, r):
        ours = [line for line in r.stderr.splitlines() if line.startswith(b"curlretry: ")]
        theirs = b"".join(line + b"\n" for line in r.stderr.splitlines() if not line.startswith(b"curlretry: "))
        self.assertEqual((r.code, r.stdout, theirs), (alone.code, alone.stdout, alone.stderr),
                         f"without preload: {alone}\nwith: {r}")
        return ours

    # --- status lines and headers that are not HTTP ------------------------------------------

    # (label, bytes of the first answer, curl's exit alone, what the preload does)
    # SAME: exactly what curl does alone (one request). RETRIED: the policy retries (the 503
    # status line arrived before the garbage, or curl saw an empty reply); the 200 that follows.
    SAME, RETRIED = "same", "retried"
    BROKEN = (
        ("letter-in-status", b"HTTP/1.1 5O3 Oops\r\nContent-Length: 2\r\n\r\nno", 1, SAME),
        ("four-digit-status", b"HTTP/1.1 5030 Oops\r\nContent-Length: 2\r\n\r\nno", 1, SAME),
        ("bad-version", b"HTTTP/1.1 503 Oops\r\nContent-Length: 2\r\n\r\nno", 1, SAME),
        ("no-status", b"HTTP/1.1\r\nContent-Length: 2\r\n\r\nno", 1, SAME),
        ("not-http", b"garbage garbage\r\n\r\n", 1, SAME),
        ("200-header-without-colon", b"HTTP/1.1 200 OK\r\nRetry-After 1\r\nContent-Length: 2\r\n\r\nno", 8, SAME),
        ("400-header-without-colon", b"HTTP/1.1 400 X\r\nbroken\r\nContent-Length: 2\r\n\r\nno", 8, SAME),
        ("200-nul-in-header", b"HTTP/1.1 200 OK\r\nX-A: a\x00b\r\nContent-Length: 2\r\n\r\nno", 8, SAME),
        ("503-header-without-colon", b"HTTP/1.1 503 X\r\nRetry-After 1\r\nContent-Length: 2\r\n\r\nno", 8, RETRIED),
        ("503-nul-in-status-line", b"HTTP/1.1 503 X\x00Y\r\nContent-Length: 2\r\n\r\nno", 8, RETRIED),
        ("cut-in-status-line", b"HTTP/1.1 50", 52, RETRIED),
        ("503-cut-in-headers", b"HTTP/1.1 503 X\r\nContent-Le", 0, RETRIED),
        ("503-10k-reason", b"HTTP/1.1 503 " + b"R" * 10000 + b"\r\nContent-Length: 2\r\n\r\nno", 0, RETRIED),
    )

    def test_broken_status_lines_and_headers(self):
        for label, data, alone_code, expect in self.BROKEN:
            with self.subTest(label):
                k, alone, r = self.alone_then_preloaded(raw(data) + ",200")
                self.assertEqual(alone.code, alone_code, str(alone))
                if expect == self.SAME:
                    self.assertSameAsAlone(alone, r)
                    self.assertCount(self.plain, k, 1, r)
                else:
                    self.assertRun(r, 0, ok_body(k, 2))
                    self.assertCount(self.plain, k, 2, r)

    def test_a_100_kib_header_ends_as_without_the_preload(self):
        # libcurl refuses a header line over 100 KiB (CURL_MAX_HTTP_HEADER): "(27) Out of memory".
        k, alone, r = self.alone_then_preloaded("200+hdr=102400")
        self.assertEqual(alone.code, 27, str(alone))
        self.assertSameAsAlone(alone, r)
        self.assertCount(self.plain, k, 1, r)

    def test_a_100_kib_header_on_a_503_is_retried_per_its_status(self):
        # The 503 status line reached the shim before libcurl gave up on the header: the policy
        # retries a 503, whatever ended the attempt.
        k, alone, r = self.alone_then_preloaded("503+hdr=102400,200")
        self.assertEqual(alone.code, 27, str(alone))
        self.assertRun(r, 0, ok_body(k, 2))
        self.assertCount(self.plain, k, 2, r)

    def test_a_large_header_on_a_503_is_held_and_retried(self):
        k = self.key()
        r = self.get(k, "503+hdr=90000,200+hdr=90000", "-i")
        body = ok_body(k, 2)
        head = harness.head("HTTP/1.1 200 OK", "text/plain", len(body), "X-Padding: " + padding(90000))
        self.assertRun(r, 0, head + body)
        self.assertCount(self.plain, k, 2, r)

    # --- Retry-After that means nothing, or a very long time --------------------------------

    def test_garbage_retry_after_falls_back_to_the_backoff(self):
        for value in ("garbage", "-5", "1.5", "99999999999999999999999", "0x10", "Fri, 31 Dec 9999 23:59:59",
                      "Sun, 06 Nov 1994 08:49:37 GMT GMT", "\u00e9t\u00e9"):
            with self.subTest(value):
                k = self.key()
                r = self.get(k, f"503+ra={ra(value)},200")
                self.assertRun(r, 0, ok_body(k, 2))
                self.assertCount(self.plain, k, 2, r)
                self.assertLess(r.elapsed, 10.0, str(r))

    def test_garbage_retry_after_ms_falls_back_to_the_backoff(self):
        for value in ("-1", "1e3", "NaN", "99999999999999999999999", ""):
            with self.subTest(value):
                k = self.key()
                r = self.get(k, f"429+ram={ra(value) or '%20'},200")
                self.assertRun(r, 0, ok_body(k, 2))
                self.assertCount(self.plain, k, 2, r)
                self.assertLess(r.elapsed, 10.0, str(r))

    def test_retry_after_in_year_9999_gives_up_at_once_with_the_503(self):
        for value in ("Fri, 31 Dec 9999 23:59:59 GMT", "Fri Dec 31 23:59:59 9999", "253402300799"):
            with self.subTest(value):
                k = self.key()
                r = self.get(k, f"503+ra={ra(value)},200")
                self.assertRun(r, 0, overloaded_body(k, 1))
                self.assertCount(self.plain, k, 1, r)
                self.assertLess(r.elapsed, 10.0, str(r))

    # --- NUL bytes -------------------------------------------------------------------------

    def test_nul_bytes_in_bodies(self):
        def response(status: bytes, body: bytes) -> bytes:
            return b"HTTP/1.1 " + status + b"\r\nContent-Length: %d\r\n\r\n" % len(body) + body

        final = b"\x00ok\x00\x00 final body\x00"
        cases = (
            # (label, first step, expected stdout, requests)
            ("503-then-200", raw(response(b"503 X", b"a\x00b\x00c\x00d")), final, 2),
            ("captcha-after-nul-is-retried", raw(response(b"400 X", b"\x00\x00{\"msg\":\"captcha verify failed\"}")),
             final, 2),
            ("plain-400-delivered-exactly", raw(response(b"400 X", b"bad\x00request\x00")), b"bad\x00request\x00", 1),
        )
        for label, first, expected, requests in cases:
            with self.subTest(label):
                k = self.key()
                r = self.get(k, first + "," + raw(response(b"200 OK", final)))
                self.assertRun(r, 0, expected)
                self.assertCount(self.plain, k, requests, r)

    # --- bodies far past the classification hold (64 KiB) -----------------------------------

    def test_a_1_mib_503_is_retried_and_the_last_one_delivered_whole(self):
        k = self.key()
        r = self.get(k, f"503+len={BIG}")
        self.assertRun(r, 0, pattern_bytes(BIG))
        self.assertCount(self.plain, k, 3, r)

    def test_a_1_mib_503_then_200(self):
        k = self.key()
        r = self.get(k, f"503+len={BIG},503+pad={BIG},200")
        self.assertRun(r, 0, ok_body(k, 3))
        self.assertCount(self.plain, k, 3, r)

    def test_a_1_mib_plain_400_is_delivered_at_once_byte_for_byte(self):
        for script, expected in ((f"400+len={BIG}", lambda k: pattern_bytes(BIG)),
                                 (f"400+pad={BIG}", lambda k: error_body("bad request", k, 1) + pattern_bytes(BIG))):
            with self.subTest(script):
                k, alone, r = self.alone_then_preloaded(script + ",200")
                self.assertRun(r, 0, expected(k))
                self.assertSameAsAlone(alone, r)
                self.assertCount(self.plain, k, 1, r)

    def test_a_captcha_400_with_a_1_mib_tail_is_retried(self):
        # The marker is in the first bytes; the body then outgrows the hold: decided early.
        k = self.key()
        r = self.get(k, f"captcha+pad={BIG},200")
        self.assertRun(r, 0, ok_body(k, 2))
        self.assertCount(self.plain, k, 2, r)

    def test_a_captcha_400_that_is_never_cleared_is_delivered_whole(self):
        k = self.key()
        r = self.get(k, f"captcha+pad={BIG}")
        self.assertRun(r, 0, CAPTCHA_BODY + pattern_bytes(BIG))
        self.assertCount(self.plain, k, 3, r)

    def test_a_marker_past_the_body_window_is_not_seen(self):
        # 5000 pattern bytes first (past body_window 4096), then the captcha marker: a plain 400.
        data = b"HTTP/1.1 400 X\r\nContent-Length: %d\r\n\r\n" % (5000 + len(CAPTCHA_BODY))
        body = pattern_bytes(5000) + CAPTCHA_BODY
        k, alone, r = self.alone_then_preloaded(raw(data + body) + ",200")
        self.assertRun(r, 0, body)
        self.assertSameAsAlone(alone, r)
        self.assertCount(self.plain, k, 1, r)

    def test_hold_boundary_exact_sizes(self):
        # Bodies of exactly the hold, one byte under and one over, on a retried 503.
        for n in (HOLD - 1, HOLD, HOLD + 1):
            with self.subTest(n):
                k = self.key()
                r = self.get(k, f"503+len={n}")
                self.assertRun(r, 0, pattern_bytes(n))
                self.assertCount(self.plain, k, 3, r)


def padding(n: int) -> str:
    line = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
    return (line * (n // len(line) + 1))[:n]


if __name__ == "__main__":
    unittest.main()
