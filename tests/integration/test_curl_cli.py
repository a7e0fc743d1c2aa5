"""The real curl CLI under libcurlretry.so against the flaky upstream.

Each preloaded test pins one line of the contract (DESIGN.md §3) with exact bytes and exact
upstream request counts. The `test_control_*` tests run curl without the preload: they pin what
the upstream does and what curl does on its own, and they pass even when the library is missing
(the preloaded tests then fail with "CURLRETRY_LIB=... does not exist").
"""

import os
import tempfile
import unittest

import harness
from harness import (CAPTCHA_BODY, QUOTA_BODY, curl, echo_body, error_body, head, ok_body,
                     overloaded_body, pattern_bytes)

PAYLOAD_SIZE = 2 * 1024 * 1024
SECRET_HEADER = "Authorization: Bearer sk-secret-123"
SECRET_QUERY = "token=abc123"
SECRETS = (b"sk-secret-123", b"Bearer", b"abc123", b"token=")


def final_200_head(body: bytes) -> bytes:
    return head("HTTP/1.1 200 OK", "text/plain", len(body))


class CurlCli(harness.UpstreamTestCase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.payload = os.urandom(PAYLOAD_SIZE)  # random: no accidental marker, no compression luck
        files = tempfile.TemporaryDirectory(prefix="curlretry-curl-cli-")
        cls.addClassCleanup(files.cleanup)
        cls.payload_file = os.path.join(files.name, "payload.bin")
        with open(cls.payload_file, "wb") as f:
            f.write(cls.payload)

    def get(self, key, script, *args, preload=True, upstream=None, **kwargs):
        upstream = upstream or self.plain
        return curl(["-sS", *args, upstream.script_url(key, script)], preload=preload, **kwargs)

    # --- controls: curl alone --------------------------------------------------------------

    def test_control_plain_curl_gets_the_first_503(self):
        k = self.key()
        r = self.get(k, "503,503,200", preload=False)
        self.assertRun(r, 0, overloaded_body(k, 1))
        self.assertCount(self.plain, k, 1, r)

    def test_control_fail_flag_exits_22_on_the_503(self):
        k = self.key()
        r = self.get(k, "503,200", "-f", preload=False)
        self.assertRun(r, 22, b"")
        self.assertIn(b"error: 503", r.stderr)
        self.assertCount(self.plain, k, 1, r)

    def test_control_upstream_echoes_each_upload_form(self):
        for label, args, stdin in (("data", ["--data-binary", "@" + self.payload_file], None),
                                   ("file", ["-T", self.payload_file], None),
                                   ("pipe", ["-T", "-"], self.payload)):
            with self.subTest(label):
                k = self.key(label)
                r = self.get(k, "echo", *args, preload=False, input=stdin)
                self.assertRun(r, 0, echo_body(self.payload))
                self.assertCount(self.plain, k, 1, r)

    def test_control_early_503_arrives_before_the_body_is_read(self):
        k = self.key()
        r = self.get(k, "early503", "--data-binary", "@" + self.payload_file, preload=False)
        self.assertRun(r, 0, overloaded_body(k, 1))
        self.assertCount(self.plain, k, 1, r)

    def test_control_transport_failures_as_curl_reports_them(self):
        for script, code, body in (("reset", 56, b""), ("close", 52, b""),
                                   ("break100", 18, pattern_bytes(100))):
            with self.subTest(script):
                k = self.key(script)
                r = self.get(k, script, preload=False)
                self.assertRun(r, code, body)
                self.assertCount(self.plain, k, 1, r)

    def test_control_timeout_against_a_hang(self):
        k = self.key()
        r = self.get(k, "hang5000", "-m", "1", preload=False)
        self.assertRun(r, 28, b"")
        self.assertLess(r.elapsed, 2.0, str(r))

    def test_control_https_with_cacert(self):
        tls = self.tls()
        k = self.key()
        r = self.get(k, "503,200", "--cacert", tls.cert, preload=False, upstream=tls)
        self.assertRun(r, 0, overloaded_body(k, 1))
        self.assertCount(tls, k, 1, r)

    def test_control_headers_are_exact(self):
        k = self.key()
        body = error_body("too many requests", k, 1)
        r = self.get(k, "429+ra=1,200", "-i", preload=False)
        expected = head("HTTP/1.1 429 Too Many Requests", "application/json", len(body), "Retry-After: 1")
        self.assertRun(r, 0, expected + body)

    # --- retried: the host sees only the final response ------------------------------------

    def test_get_503_503_200_delivers_only_the_200(self):
        k = self.key()
        r = self.get(k, "503,503,200")
        self.assertRun(r, 0, ok_body(k, 3))
        self.assertCount(self.plain, k, 3, r)

    def test_post_data_binary_2mib_is_replayed(self):
        k = self.key()
        r = self.get(k, "503,echo", "--data-binary", "@" + self.payload_file)
        self.assertRun(r, 0, echo_body(self.payload))
        self.assertCount(self.plain, k, 2, r)

    def test_put_file_upload_is_rewound(self):
        k = self.key()
        r = self.get(k, "503,echo", "-T", self.payload_file)
        self.assertRun(r, 0, echo_body(self.payload))
        self.assertCount(self.plain, k, 2, r)

    def test_put_from_a_stdin_pipe_is_replayed(self):
        # A pipe cannot seek: only the shim's tee of what curl read can replay it (chunked upload).
        k = self.key()
        r = self.get(k, "503,echo", "-T", "-", input=self.payload)
        self.assertRun(r, 0, echo_body(self.payload))
        self.assertCount(self.plain, k, 2, r)

    def test_early_503_before_the_body_is_read_is_retried(self):
        k = self.key()
        r = self.get(k, "early503,echo", "--data-binary", "@" + self.payload_file)
        self.assertRun(r, 0, echo_body(self.payload))
        self.assertCount(self.plain, k, 2, r)

    def test_include_shows_only_the_final_headers(self):
        k = self.key()
        r = self.get(k, "503,503,200", "-i")
        body = ok_body(k, 3)
        self.assertRun(r, 0, final_200_head(body) + body)
        self.assertNotIn(b"503", r.stdout)
        self.assertCount(self.plain, k, 3, r)

    def test_dump_header_shows_only_the_final_headers(self):
        k = self.key()
        body_file = self.temp_dir() / "body"
        r = self.get(k, "503,503,200", "-D", "-", "-o", str(body_file))
        body = ok_body(k, 3)
        self.assertRun(r, 0, final_200_head(body))
        self.assertEqual(body_file.read_bytes(), body)
        self.assertCount(self.plain, k, 3, r)

    def test_fail_flag_retries_then_delivers_the_200(self):
        k = self.key()
        r = self.get(k, "503,503,200", "-f")
        self.assertRun(r, 0, ok_body(k, 3))
        self.assertCount(self.plain, k, 3, r)

    def test_fail_flag_exits_22_after_the_builtin_max_attempts(self):
        k = self.key()
        r = self.get(k, "503", "-f")  # 503 forever; the built-in policy makes 3 attempts
        self.assertRun(r, 22, b"")
        self.assertIn(b"curl: (22) The requested URL returned error: 503", r.stderr)
        self.assertCount(self.plain, k, 3, r)

    def test_https_with_cacert_is_retried(self):
        tls = self.tls()
        k = self.key()
        r = self.get(k, "503,503,200", "--cacert", tls.cert, upstream=tls)
        self.assertRun(r, 0, ok_body(k, 3))
        self.assertCount(tls, k, 3, r)

    def test_sse_after_a_503_streams_every_event(self):
        k = self.key()
        r = self.get(k, "503,sse3", "-N")
        events = b"".join(b'data: {"n":%d}\n\n' % i for i in (1, 2, 3)) + b"data: [DONE]\n\n"
        self.assertRun(r, 0, events)
        self.assertCount(self.plain, k, 2, r)

    # --- what the server says about waiting -------------------------------------------------

    def test_retry_after_seconds_is_honoured(self):
        k = self.key()
        r = self.get(k, "429+ra=1,200")  # the 50 ms base alone would retry far sooner
        self.assertRun(r, 0, ok_body(k, 2))
        self.assertGreaterEqual(r.elapsed, 1.0, str(r))
        self.assertLess(r.elapsed, 5.0, str(r))
        self.assertCount(self.plain, k, 2, r)

    def test_retry_after_ms_is_honoured(self):
        k = self.key()
        r = self.get(k, "503+ram=600,200")
        self.assertRun(r, 0, ok_body(k, 2))
        self.assertGreaterEqual(r.elapsed, 0.6, str(r))
        self.assertCount(self.plain, k, 2, r)

    def test_a_repeated_retry_after_counts_once_the_first(self):
        # Retry-After: 0 then an HTTP-date an hour ahead: the first one decides (as `explain`
        # reads it), so the wait is 0 and not "too long, give up".
        k = self.key()
        r = self.get(k, "503+ra=0+radate=3600,200")
        self.assertRun(r, 0, ok_body(k, 2))
        self.assertLess(r.elapsed, 5.0, str(r))
        self.assertCount(self.plain, k, 2, r)

    # --- what is retried and what is not ----------------------------------------------------

    def test_captcha_400_is_retried(self):
        k = self.key()
        r = self.get(k, "captcha,200")
        self.assertRun(r, 0, ok_body(k, 2))
        self.assertCount(self.plain, k, 2, r)

    def test_plain_400_is_delivered_at_once(self):
        k = self.key()
        r = self.get(k, "400,200")
        self.assertRun(r, 0, error_body("bad request", k, 1))
        self.assertCount(self.plain, k, 1, r)

    def test_quota_429_is_delivered_at_once(self):
        k = self.key()
        r = self.get(k, "quota,200")
        self.assertRun(r, 0, QUOTA_BODY)
        self.assertCount(self.plain, k, 1, r)

    def test_503_forever_stops_at_max_attempts_with_the_last_body(self):
        k = self.key()
        r = self.get(k, "503", env={"CURLRETRY_MAX_ATTEMPTS": "4"})
        self.assertRun(r, 0, overloaded_body(k, 4))
        self.assertCount(self.plain, k, 4, r)

    def test_reset_before_the_response_is_retried(self):
        k = self.key()
        r = self.get(k, "reset,200")
        self.assertRun(r, 0, ok_body(k, 2))
        self.assertCount(self.plain, k, 2, r)

    def test_empty_reply_is_retried(self):
        k = self.key()
        r = self.get(k, "close,200")
        self.assertRun(r, 0, ok_body(k, 2))
        self.assertCount(self.plain, k, 2, r)

    def test_mid_body_break_is_not_retried(self):
        k = self.key()
        alone = self.get(k, "break100,200", preload=False)
        self.plain.reset(k)
        r = self.get(k, "break100,200")
        self.assertRun(r, 18, pattern_bytes(100))
        self.assertEqual((r.code, r.stdout, r.stderr), (alone.code, alone.stdout, alone.stderr), f"{alone}\n{r}")
        self.assertCount(self.plain, k, 1, r)

    def test_timeout_against_a_hang_ends_on_time(self):
        k = self.key()
        r = self.get(k, "hang5000", "-m", "1")
        self.assertRun(r, 28, b"")
        self.assertLess(r.elapsed, 2.0, str(r))
        self.assertCount(self.plain, k, 1, r)

    # --- doing no harm ----------------------------------------------------------------------

    def test_legacy_max_1_is_byte_identical_to_no_preload(self):
        cases = (("include", "503,200", ["-i"]),
                 ("fail", "503,200", ["-f"]),
                 ("captcha", "captcha,200", ["-i"]),
                 ("reset", "reset,200", []),
                 ("break", "break100,200", []))
        for label, script, args in cases:
            with self.subTest(label):
                k = self.key(label)
                alone = self.get(k, script, *args, preload=False)
                self.plain.reset(k)  # same key, same attempt number: the same bytes expected
                r = self.get(k, script, *args, env={"BILI_REPLAY_RETRY_MAX": "1"})
                self.assertEqual((r.code, r.stdout, r.stderr), (alone.code, alone.stdout, alone.stderr),
                                 f"without preload: {alone}\nwith BILI_REPLAY_RETRY_MAX=1: {r}")
                self.assertCount(self.plain, k, 1, r)

    def test_retry_lines_never_show_secrets(self):
        k = self.key()
        url = self.plain.script_url(k, "503,200", query=SECRET_QUERY)
        r = curl(["-sS", "-H", SECRET_HEADER, url], preload=True, env={"CURLRETRY_LOG": "debug"})
        self.assertRun(r, 0, ok_body(k, 2))
        self.assertIn(b"retrying", r.stderr)
        for secret in SECRETS:
            self.assertNotIn(secret, r.stderr, str(r))

    def test_retry_lines_among_verbose_output_never_show_secrets(self):
        # With -v, curl itself prints the request (secrets included): judge only our lines.
        k = self.key()
        url = self.plain.script_url(k, "503,200", query=SECRET_QUERY)
        r = curl(["-sS", "-v", "-H", SECRET_HEADER, url], preload=True)
        self.assertRun(r, 0, ok_body(k, 2))
        ours = [line for line in r.stderr.splitlines()
                if b"curlretry" in line and not line.startswith((b"> ", b"< ", b"* "))]
        self.assertTrue(any(b"retrying" in line for line in ours), str(r))
        for line in ours:
            for secret in SECRETS:
                self.assertNotIn(secret, line)


if __name__ == "__main__":
    unittest.main()
