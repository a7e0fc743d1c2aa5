"""Hosts of our own on the easy API (hosts/easy_host.c) under libcurlretry.so.

Each test runs one easy_host mode against a flaky-upstream script and pins one line of the
contract (DESIGN §3, issue 3 §6): the host's callbacks see exactly one response, the final
attempt's, byte for byte; its own return values (short count, CURL_WRITEFUNC_PAUSE, progress
abort) keep their meaning; duphandle/reset/CURLOPT_PRIVATE stay the host's; read-callback uploads
are replayed (seek callback, default fread, bounded tee of a pipe) or, when they cannot be,
not retried; many threads each with their own handles work. Runs without the preload show what
the same host sees without curlretry, so the difference is the shim's doing.

easy_host prints the body on stdout and `result=<CURLcode> status=<http>` on stderr; see its
header comment for the rest.
"""

from __future__ import annotations

import os
import re
import unittest

import harness
from harness import UpstreamTestCase, echo_body, error_body, head, ok_body, overloaded_body, pattern_bytes

CURLE_OK = 0
CURLE_HTTP_RETURNED_ERROR = 22
CURLE_WRITE_ERROR = 23
CURLE_ABORTED_BY_CALLBACK = 42


def _easy_host() -> str:
    folder = os.environ.get("CURLRETRY_HOSTS_DIR", "")
    if folder:
        return os.path.join(folder, "easy_host")
    # Run by hand from the source tree: the newest build that has one.
    found = sorted(harness.REPO.glob("build*/tests/integration/hosts/easy_host"), key=lambda p: p.stat().st_mtime)
    return str(found[-1]) if found else ""


EASY_HOST = _easy_host()


class HostRun:
    """One easy_host run, its stderr report parsed."""

    def __init__(self, result: harness.Result):
        self.raw = result
        self.code = result.code
        self.stdout = result.stdout
        self.stderr = result.stderr.decode("utf-8", "replace")
        m = None
        for m in re.finditer(r"^result=(-?\d+) status=(\d+)$", self.stderr, re.M):
            pass
        self.result = int(m.group(1)) if m else None
        self.status = int(m.group(2)) if m else None
        h = re.search(rb"^--- headers ---\n(.*?)^--- end headers ---$", result.stderr, re.M | re.S)
        self.headers = h.group(1) if h else None  # bytes as the header callback received them
        self.values = dict(re.findall(r"\b([a-z_]+)=(\S*)", self.stderr))

    def value(self, name: str) -> str:
        return self.values[name]

    def __str__(self) -> str:
        return str(self.raw)


class EasyHostTestCase(UpstreamTestCase):
    @classmethod
    def setUpClass(cls) -> None:
        if not EASY_HOST or not os.access(EASY_HOST, os.X_OK):
            raise RuntimeError(f"easy_host not found ({EASY_HOST!r}): build the easy_host target "
                               "(tests/integration/hosts) and set CURLRETRY_HOSTS_DIR")
        super().setUpClass()

    def host(self, *args: str, preload: bool, env: dict[str, str] | None = None,
             timeout: float = harness.DEFAULT_TIMEOUT) -> HostRun:
        # Small backoff for speed unless the test says otherwise.
        child_env = {"CURLRETRY_BASE_MS": "10"} if preload else {}
        child_env.update(env or {})
        return HostRun(harness.run([EASY_HOST, *args], preload=preload, env=child_env, timeout=timeout))

    def assertHost(self, run: HostRun, *, result: int, status: int | None = None, stdout: bytes | None = None,
                   exit_code: int = 0) -> None:
        self.assertEqual(run.code, exit_code, f"easy_host exit status\n{run}")
        self.assertEqual(run.result, result, f"CURLcode\n{run}")
        if status is not None:
            self.assertEqual(run.status, status, f"HTTP status\n{run}")
        if stdout is not None:
            self.assertEqual(run.stdout, stdout, f"body the host received\n{run}")

    def write_config(self, text: str) -> str:
        path = self.temp_dir() / "config.yaml"
        path.write_text(text)
        return str(path)


def text_head(status_line: str, body: bytes) -> bytes:
    return head(status_line, "text/plain", len(body))


def json_head(status_line: str, body: bytes) -> bytes:
    return head(status_line, "application/json", len(body))


# ---------------------------------------------------------------------------------------------


class GetTest(EasyHostTestCase):
    """A write callback and a header callback: only the final attempt reaches them."""

    def test_without_preload_the_host_sees_the_first_503(self):
        key = self.key()
        run = self.host("get", self.plain.script_url(key, "503,503,200"), preload=False)
        self.assertHost(run, result=CURLE_OK, status=503, stdout=overloaded_body(key, 1))
        self.assertCount(self.plain, key, 1, run.raw)

    def test_retried_get_delivers_only_the_final_body_and_headers(self):
        key = self.key()
        run = self.host("get", self.plain.script_url(key, "503,503,200"), preload=True)
        body = ok_body(key, 3)
        self.assertHost(run, result=CURLE_OK, status=200, stdout=body)
        # The header callback saw the 200's head and nothing of the two 503s.
        self.assertEqual(run.headers, text_head("HTTP/1.1 200 OK", body), f"headers\n{run}")
        self.assertCount(self.plain, key, 3, run.raw)

    def test_giving_up_delivers_the_last_503_verbatim(self):
        key = self.key()
        run = self.host("get", self.plain.script_url(key, "503"), preload=True)
        body = overloaded_body(key, 3)  # default max_attempts = 3
        self.assertHost(run, result=CURLE_OK, status=503, stdout=body)
        self.assertEqual(run.headers, json_head("HTTP/1.1 503 Service Unavailable", body), f"headers\n{run}")
        self.assertCount(self.plain, key, 3, run.raw)

    def test_plain_400_is_one_request_and_its_body_verbatim(self):
        key = self.key()
        run = self.host("get", self.plain.script_url(key, "400"), preload=True)
        body = error_body("bad request", key, 1)
        self.assertHost(run, result=CURLE_OK, status=400, stdout=body)
        self.assertEqual(run.headers, json_head("HTTP/1.1 400 Bad Request", body), f"headers\n{run}")
        self.assertCount(self.plain, key, 1, run.raw)

    def test_reset_before_response_is_retried(self):
        key = self.key()
        run = self.host("get", self.plain.script_url(key, "reset,200"), preload=True)
        body = ok_body(key, 2)
        self.assertHost(run, result=CURLE_OK, status=200, stdout=body)
        self.assertEqual(run.headers, text_head("HTTP/1.1 200 OK", body), f"headers\n{run}")
        self.assertCount(self.plain, key, 2, run.raw)

    def test_max_attempts_1_is_byte_identical_to_no_preload(self):
        key_a, key_b = self.key("a"), self.key("b")
        shim = self.host("get", self.plain.script_url(key_a, "503,200"), preload=True,
                         env={"BILI_REPLAY_RETRY_MAX": "1"})
        bare = self.host("get", self.plain.script_url(key_b, "503,200"), preload=False)
        # Same bytes but for the key (whose length may differ by a digit, hence Content-Length).
        self.assertEqual(shim.stdout, bare.stdout.replace(key_b.encode(), key_a.encode()), f"{shim}\n---\n{bare}")
        self.assertEqual(shim.headers, json_head("HTTP/1.1 503 Service Unavailable", shim.stdout), str(shim))
        self.assertEqual(bare.headers, json_head("HTTP/1.1 503 Service Unavailable", bare.stdout), str(bare))
        self.assertEqual((shim.result, shim.status), (bare.result, bare.status))
        self.assertCount(self.plain, key_a, 1, shim.raw)


class ShortWriteTest(EasyHostTestCase):
    """A write callback that returns a short count: libcurl's CURLE_WRITE_ERROR (23), one call,
    and the shim never retries the host's own refusal."""

    def test_without_preload_the_refused_chunk_is_the_503(self):
        key = self.key()
        run = self.host("short-write", self.plain.script_url(key, "503,200"), preload=False)
        self.assertHost(run, result=CURLE_WRITE_ERROR, stdout=overloaded_body(key, 1))
        self.assertCount(self.plain, key, 1, run.raw)

    def test_short_write_on_the_final_response_is_23_and_not_retried(self):
        key = self.key()
        run = self.host("short-write", self.plain.script_url(key, "503,200"), preload=True)
        # The one chunk the host was offered is the 200's body: the 503 never reached it.
        self.assertHost(run, result=CURLE_WRITE_ERROR, status=200, stdout=ok_body(key, 2))
        self.assertEqual(run.value("write_calls"), "1", str(run))
        self.assertCount(self.plain, key, 2, run.raw)

    def test_short_write_on_a_delivered_failure_is_23(self):
        # The shim gives up after 3 attempts and replays the held 503 to the host, which refuses
        # it: the host's short count must still end the transfer with 23.
        key = self.key()
        run = self.host("short-write", self.plain.script_url(key, "503"), preload=True)
        self.assertHost(run, result=CURLE_WRITE_ERROR, status=503, stdout=overloaded_body(key, 3))
        self.assertEqual(run.value("write_calls"), "1", str(run))
        self.assertCount(self.plain, key, 3, run.raw)


class PauseTest(EasyHostTestCase):
    """CURL_WRITEFUNC_PAUSE from the write callback, unpaused by the xferinfo callback with
    curl_easy_pause(CURLPAUSE_CONT): the whole body arrives and the transfer succeeds."""

    def test_without_preload_pause_and_unpause_deliver_the_whole_body(self):
        key = self.key()
        run = self.host("pause", self.plain.script_url(key, "400"), preload=False)
        self.assertHost(run, result=CURLE_OK, status=400, stdout=error_body("bad request", key, 1))

    def test_pause_on_the_final_response(self):
        key = self.key()
        run = self.host("pause", self.plain.script_url(key, "503,200"), preload=True)
        self.assertHost(run, result=CURLE_OK, status=200, stdout=ok_body(key, 2))
        self.assertIn("pauses=1 unpauses=1", run.stderr)
        self.assertCount(self.plain, key, 2, run.raw)

    def test_pause_on_a_large_final_response(self):
        key = self.key()
        run = self.host("pause", self.plain.script_url(key, "503,200+len=300000"), preload=True)
        self.assertHost(run, result=CURLE_OK, status=200, stdout=pattern_bytes(300000))
        self.assertCount(self.plain, key, 2, run.raw)

    def test_pause_on_a_held_response_that_is_delivered(self):
        # A plain 400 is held (its body may carry a risk-control marker), then handed to the
        # host after the transfer ended inside libcurl. Without the shim the host's pause is
        # honoured (see the first test): with it, the host must see the same.
        key = self.key()
        run = self.host("pause", self.plain.script_url(key, "400"), preload=True)
        self.assertHost(run, result=CURLE_OK, status=400, stdout=error_body("bad request", key, 1))
        self.assertCount(self.plain, key, 1, run.raw)

    def test_pause_on_the_last_503_after_giving_up(self):
        key = self.key()
        run = self.host("pause", self.plain.script_url(key, "503"), preload=True)
        self.assertHost(run, result=CURLE_OK, status=503, stdout=overloaded_body(key, 3))
        self.assertCount(self.plain, key, 3, run.raw)


class DupResetTest(EasyHostTestCase):
    """curl_easy_duphandle copies the host's callbacks (never the shim's state); curl_easy_reset
    drops them; each of the three performs is retried on its own."""

    def test_duphandle_and_reset_between_retried_performs(self):
        k1, k2 = self.key("one"), self.key("two")
        run = self.host("dup-reset", self.plain.script_url(k1, "503,200"),
                        self.plain.script_url(k2, "503,200,503,200"), preload=True)
        self.assertHost(run, result=CURLE_OK, status=200)
        expected = (b"@@body1 len=%d@@\n%s@@end1@@\n" % (len(ok_body(k1, 2)), ok_body(k1, 2)) +
                    b"@@body2 len=%d@@\n%s@@end2@@\n" % (len(ok_body(k2, 2)), ok_body(k2, 2)) +
                    b"@@body3 len=%d@@\n%s@@end3@@\n" % (len(ok_body(k2, 4)), ok_body(k2, 4)))
        self.assertEqual(run.stdout, expected, str(run))
        for i in (1, 2, 3):
            self.assertIn(f"perform{i} result=0 status=200", run.stderr)
        self.assertCount(self.plain, k1, 2, run.raw)
        self.assertCount(self.plain, k2, 4, run.raw)

    def test_without_preload_the_same_host_sees_the_503s(self):
        k1, k2 = self.key("one"), self.key("two")
        run = self.host("dup-reset", self.plain.script_url(k1, "503,200"),
                        self.plain.script_url(k2, "503,200,503,200"), preload=False)
        self.assertEqual(run.code, 0, str(run))
        self.assertIn(b"@@body1 len=%d@@\n%s@@end1@@\n" % (len(overloaded_body(k1, 1)), overloaded_body(k1, 1)),
                      run.stdout)
        self.assertIn(b"@@body2 len=%d@@\n%s@@end2@@\n" % (len(overloaded_body(k2, 1)), overloaded_body(k2, 1)),
                      run.stdout)
        self.assertIn(b"@@body3 len=%d@@\n%s@@end3@@\n" % (len(ok_body(k2, 2)), ok_body(k2, 2)), run.stdout)


class ProgressAbortTest(EasyHostTestCase):
    """The host stays in control while the shim waits: its progress callback keeps being called
    during the backoff and its abort ends the transfer at once with CURLE_ABORTED_BY_CALLBACK."""

    def test_abort_during_backoff_ends_well_before_the_delay(self):
        key = self.key()
        run = self.host("progress-abort", self.plain.script_url(key, "503"), "300", preload=True,
                        env={"CURLRETRY_BASE_MS": "5000"})
        self.assertHost(run, result=CURLE_ABORTED_BY_CALLBACK)
        elapsed = float(run.value("elapsed_ms"))
        self.assertGreaterEqual(elapsed, 300, str(run))
        self.assertLess(elapsed, 2000, f"the 5 s backoff was not interrupted\n{run}")
        self.assertLess(run.raw.elapsed, 4.0, str(run))
        self.assertNotEqual(run.value("errbuf"), "", f"CURLOPT_ERRORBUFFER left empty\n{run}")
        self.assertEqual(run.stdout, b"", "the held 503 must not reach an aborted host")
        self.assertCount(self.plain, key, 1, run.raw)

    def test_abort_during_a_transfer_is_not_retried(self):
        key = self.key()
        run = self.host("progress-abort", self.plain.script_url(key, "hang3000"), "300", preload=True)
        self.assertHost(run, result=CURLE_ABORTED_BY_CALLBACK)
        self.assertLess(float(run.value("elapsed_ms")), 2000, str(run))
        self.assertCount(self.plain, key, 1, run.raw)

    def test_without_preload_the_503_returns_at_once(self):
        key = self.key()
        run = self.host("progress-abort", self.plain.script_url(key, "503"), "300", preload=False)
        self.assertHost(run, result=CURLE_OK, status=503, stdout=overloaded_body(key, 1))


class UploadTest(EasyHostTestCase):
    """POST of a 2 MiB file through a read callback against `503,echo`: the second attempt must
    send the same bytes (the echo is the SHA-256 and length of what the server received)."""

    SIZE = 2 * 1024 * 1024

    def data_file(self, size: int | None = None) -> tuple[str, bytes]:
        data = os.urandom(size or self.SIZE)
        path = self.temp_dir() / "upload.bin"
        path.write_bytes(data)
        return str(path), data

    def check_replayed(self, how: str, script: str) -> None:
        path, data = self.data_file()
        key = self.key(how)
        run = self.host("upload", self.plain.script_url(key, script), path, how, preload=True)
        self.assertHost(run, result=CURLE_OK, status=200, stdout=echo_body(data))
        if how == "seek":
            # The whole body fits the kept copy (max_upload_replay): the retry re-sends it from
            # there and asks the host nothing, as a lucky first try would not have (issue 11).
            self.assertEqual(int(run.value("seeks")), 0, f"the host's seek callback was asked\n{run}")
        self.assertCount(self.plain, key, 2, run.raw)

    def test_with_seek_callback(self):
        self.check_replayed("seek", "503,echo")

    def test_without_seek_callback(self):
        # Known size, no seek callback: only the shim's bounded tee can replay it.
        self.check_replayed("noseek", "503,echo")

    def test_default_fread_on_readdata(self):
        # No read callback: libcurl's fread on the FILE*, which the shim rewinds with fseek.
        self.check_replayed("fileonly", "503,echo")

    def test_with_seek_callback_503_before_the_body_is_read(self):
        self.check_replayed("seek", "early503,echo")

    def test_without_seek_callback_503_before_the_body_is_read(self):
        self.check_replayed("noseek", "early503,echo")

    def test_default_fread_503_before_the_body_is_read(self):
        self.check_replayed("fileonly", "early503,echo")

    def test_without_preload_the_upload_gets_the_503(self):
        path, data = self.data_file(4096)
        key = self.key()
        run = self.host("upload", self.plain.script_url(key, "503,echo"), path, "seek", preload=False)
        self.assertHost(run, result=CURLE_OK, status=503, stdout=overloaded_body(key, 1))
        self.assertCount(self.plain, key, 1, run.raw)

    def upload_beyond_the_bound(self, script: str, how: str) -> tuple[HostRun, bytes, str]:
        """2 MiB through the host's read callback (`how`: seek or noseek) with the replay
        buffer bounded at 64 KiB, against `script`: the run, the data and the key."""
        config = self.write_config("version: 1\nsettings:\n  max_upload_replay: 65536\n")
        path, data = self.data_file()
        key = self.key()
        run = self.host("upload", self.plain.script_url(key, script), path, how, preload=True,
                        env={"CURLRETRY_CONFIG": config})
        self.assertNotIn(b"pass-through", run.raw.stderr, f"the config was refused\n{run}")
        return run, data, key

    def test_upload_beyond_the_tee_bound_without_seek_is_not_retried(self):
        # The upload cannot be replayed, so the 503 is delivered after one request.
        run, _, key = self.upload_beyond_the_bound("503,echo", "noseek")
        self.assertHost(run, result=CURLE_OK, status=503, stdout=overloaded_body(key, 1))
        self.assertCount(self.plain, key, 1, run.raw)

    def test_upload_beyond_the_tee_bound_with_seek_is_retried(self):
        run, data, key = self.upload_beyond_the_bound("503,echo", "seek")
        self.assertHost(run, result=CURLE_OK, status=200, stdout=echo_body(data))
        self.assertCount(self.plain, key, 2, run.raw)
        # The copy overflowed: the host's own seek rewinds it, once.
        self.assertEqual(int(run.value("seeks")), 1, f"seeks\n{run}")

    def test_upload_beyond_the_tee_bound_retried_for_an_sse_error_is_rewound_once(self):
        # A streamed answer whose error event is decided while the stream is held (before the
        # transfer ends) rewinds the upload then, while the stream can still reach the host
        # whole; the end of the attempt's settle asks for the rewind again, which must be a no-op
        # (the first one restarted the copy): the host's seek callback is asked once per retry,
        # as for a 503.
        run, data, key = self.upload_beyond_the_bound("sse-overload,echo", "seek")
        self.assertHost(run, result=CURLE_OK, status=200, stdout=echo_body(data))
        self.assertCount(self.plain, key, 2, run.raw)
        self.assertEqual(int(run.value("seeks")), 1, f"seeks\n{run}")


class UploadPipeTest(EasyHostTestCase):
    """A read callback on a pipe fed by a thread: no size (chunked), no seek. The shim's bounded
    tee must replay what the callback gave; beyond the bound it must not retry."""

    def data_file(self, size: int) -> tuple[str, bytes]:
        data = os.urandom(size)
        path = self.temp_dir() / "pipe.bin"
        path.write_bytes(data)
        return str(path), data

    def test_pipe_upload_replayed_from_the_tee(self):
        path, data = self.data_file(1024 * 1024)
        key = self.key()
        run = self.host("upload-pipe", self.plain.script_url(key, "503,echo"), path, preload=True)
        self.assertHost(run, result=CURLE_OK, status=200, stdout=echo_body(data))
        self.assertCount(self.plain, key, 2, run.raw)

    def test_pipe_upload_503_before_the_body_is_read(self):
        path, data = self.data_file(1024 * 1024)
        key = self.key()
        run = self.host("upload-pipe", self.plain.script_url(key, "early503,echo"), path, preload=True)
        self.assertHost(run, result=CURLE_OK, status=200, stdout=echo_body(data))
        self.assertCount(self.plain, key, 2, run.raw)

    def test_pipe_upload_beyond_the_tee_bound_is_not_retried(self):
        config = self.write_config("version: 1\nsettings:\n  max_upload_replay: 65536\n")
        path, _ = self.data_file(1024 * 1024)
        key = self.key()
        run = self.host("upload-pipe", self.plain.script_url(key, "503,echo"), path, preload=True,
                        env={"CURLRETRY_CONFIG": config})
        self.assertNotIn(b"pass-through", run.raw.stderr, f"the config was refused\n{run}")
        self.assertHost(run, result=CURLE_OK, status=503, stdout=overloaded_body(key, 1))
        self.assertCount(self.plain, key, 1, run.raw)

    def test_without_preload(self):
        path, data = self.data_file(100000)
        key = self.key()
        run = self.host("upload-pipe", self.plain.script_url(key, "echo"), path, preload=False)
        self.assertHost(run, result=CURLE_OK, status=200, stdout=echo_body(data))


class ThreadsTest(EasyHostTestCase):
    """8 threads x 200 performs, each on its own handle and key `503,200`: every transfer gets
    exactly its own 200 body of attempt 2, and the upstream saw exactly 2 requests per key."""

    THREADS = 8
    PER_THREAD = 200

    def test_threads_each_with_their_own_handles(self):
        base = self.key()
        prefix = self.plain.url(f"/s/{base}-")
        run = self.host("threads", prefix, str(self.THREADS), str(self.PER_THREAD), preload=True, timeout=180)
        total = self.THREADS * self.PER_THREAD
        self.assertHost(run, result=CURLE_OK, stdout=f"ok={total}\n".encode())
        wrong = {}
        for i in range(self.THREADS):
            for j in range(self.PER_THREAD):
                key = f"{base}-t{i}-{j}"
                n = self.plain.count(key)
                if n != 2:
                    wrong[key] = n
        self.assertEqual(wrong, {}, f"keys whose request count is not 2\n{run}")


class PrivateTest(EasyHostTestCase):
    """CURLOPT_PRIVATE is the host's: the shim keeps its state elsewhere."""

    def test_private_pointer_survives_a_retried_perform(self):
        key = self.key()
        run = self.host("private", self.plain.script_url(key, "503,200"), preload=True)
        self.assertHost(run, result=CURLE_OK, status=200, stdout=ok_body(key, 2))
        self.assertIn("private_same=1", run.stderr)
        self.assertCount(self.plain, key, 2, run.raw)


class HeaderInBodyTest(EasyHostTestCase):
    """CURLOPT_HEADER=1 without a header callback: the head arrives in the write stream, and
    only the final response's."""

    def test_only_the_final_head_in_the_write_stream(self):
        key = self.key()
        run = self.host("header-only", self.plain.script_url(key, "503,503,200"), preload=True)
        body = ok_body(key, 3)
        self.assertHost(run, result=CURLE_OK, status=200, stdout=text_head("HTTP/1.1 200 OK", body) + body)
        self.assertCount(self.plain, key, 3, run.raw)

    def test_given_up_response_head_and_body_verbatim(self):
        key = self.key()
        run = self.host("header-only", self.plain.script_url(key, "400"), preload=True)
        body = error_body("bad request", key, 1)
        self.assertHost(run, result=CURLE_OK, status=400, stdout=json_head("HTTP/1.1 400 Bad Request", body) + body)
        self.assertCount(self.plain, key, 1, run.raw)

    def test_without_preload(self):
        key = self.key()
        run = self.host("header-only", self.plain.script_url(key, "503,200"), preload=False)
        body = overloaded_body(key, 1)
        self.assertHost(run, result=CURLE_OK, status=503,
                        stdout=json_head("HTTP/1.1 503 Service Unavailable", body) + body)


class FailOnErrorTest(EasyHostTestCase):
    """CURLOPT_FAILONERROR=1: libcurl swallows an error response and returns 22. The shim must
    still classify it (from the response code) and retry, and when it gives up the host sees
    exactly what it would without the shim."""

    def test_retried_to_the_200(self):
        key = self.key()
        run = self.host("failonerror", self.plain.script_url(key, "503,503,200"), preload=True)
        body = ok_body(key, 3)
        self.assertHost(run, result=CURLE_OK, status=200, stdout=body)
        self.assertEqual(run.headers, text_head("HTTP/1.1 200 OK", body), f"headers\n{run}")
        self.assertCount(self.plain, key, 3, run.raw)

    def test_giving_up_is_22_as_without_the_shim(self):
        key, bare_key = self.key("shim"), self.key("bare")
        run = self.host("failonerror", self.plain.script_url(key, "503"), preload=True)
        bare = self.host("failonerror", self.plain.script_url(bare_key, "503"), preload=False)
        self.assertEqual((bare.result, bare.status, bare.stdout), (CURLE_HTTP_RETURNED_ERROR, 503, b""), str(bare))
        self.assertHost(run, result=CURLE_HTTP_RETURNED_ERROR, status=503, stdout=b"")
        self.assertEqual(run.headers, bare.headers, f"headers with the shim vs without\n{run}\n---\n{bare}")
        self.assertCount(self.plain, key, 3, run.raw)

    def test_plain_404_is_one_request(self):
        key = self.key()
        run = self.host("failonerror", self.plain.script_url(key, "404"), preload=True)
        self.assertHost(run, result=CURLE_HTTP_RETURNED_ERROR, status=404, stdout=b"")
        self.assertCount(self.plain, key, 1, run.raw)


if __name__ == "__main__":
    unittest.main()
