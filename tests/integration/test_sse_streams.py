"""Errors inside a 200 event stream (issue 13): real hosts under libcurlretry.so against the flaky
upstream's provider-shaped `sse-<name>` scripts.

What is pinned, with exact bytes and exact upstream request counts: an error event before any
content is retried and the host sees only the final attempt's stream; an error after content is
delivered as is and never retried; a host that gives up sees the held events and the error byte
for byte; a stall between setup and content holds nothing back for longer than the stream does;
past 64 KiB of setup the stream is committed; and the hold is correct however the bytes are cut
into reads (every byte boundary). Hosts: the curl CLI (-N), pycurl's write callback, a multi
host (curl_multi_poll) and two socket-action hosts (epoll + timerfd, libuv).
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import unittest

import harness
import sse_streams
from harness import curl

HAVE_PYCURL = harness.have_pycurl()
PYCURL_MISSING = "python3-pycurl is not installed (scripts/install-deps.sh installs it)"
FAST = {"CURLRETRY_BASE_MS": "10"}
RETRY_LINE = b"-> HTTP 200 + stream error overloaded_error: retrying in "

# A pycurl host: every write callback call is recorded (bytes, seconds since perform began).
PYCURL_SSE = r"""
import base64, json, sys, time, pycurl
def fetch(url):
    writes = []
    start = time.monotonic()
    c = pycurl.Curl()
    c.setopt(pycurl.URL, url)
    c.setopt(pycurl.WRITEFUNCTION, lambda b: writes.append((b, time.monotonic() - start)) and None)
    error = 0
    try:
        c.perform()
    except pycurl.error as e:
        error = e.args[0]
    status = c.getinfo(pycurl.RESPONSE_CODE)
    c.close()
    return {"result": error, "status": status,
            "writes": [[base64.b64encode(b).decode(), t] for b, t in writes]}
print(json.dumps([fetch(url) for url in sys.argv[1:]]))
"""


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


class SseStreams(harness.UpstreamTestCase):
    def get(self, key: str, script: str, *args: str, preload: bool = True, env: dict | None = None,
            input: bytes | None = None):
        child_env = dict(FAST) if preload else {}
        child_env.update(env or {})
        return curl(["-sSN", *args, self.plain.script_url(key, script)], preload=preload, env=child_env, input=input)

    # --- controls: the upstream's streams, and curl alone ----------------------------------

    def test_control_mirror_matches_every_script(self):
        for step in ("sse-overload", "sse-good", "sse-late-error", "sse-invalid", "sse-stall-10", "sse-pings-1000",
                     "sse-oai-chat-good", "sse-oai-chat-overload", "sse-oai-responses-overload",
                     "sse-anthropic-good", "sse-oai-responses-good", "sse-gemini-good", "sse-gemini-overload",
                     "sse-overload+eol=crlf", "sse-overload+eol=cr", "sse-overload+split=7",
                     "sse-overload+cut=100"):
            with self.subTest(step):
                k = self.key()
                r = self.get(k, step, preload=False)
                self.assertRun(r, 0, sse_streams.body(step, k, 1))

    def test_control_plain_curl_gets_the_overloaded_stream(self):
        k = self.key()
        r = self.get(k, "sse-overload,sse-good", preload=False)
        self.assertRun(r, 0, sse_streams.body("sse-overload", k, 1))
        self.assertCount(self.plain, k, 1, r)

    # --- curl -N ---------------------------------------------------------------------------

    def test_overload_before_content_is_retried_to_the_good_stream(self):
        k = self.key()
        r = self.get(k, "sse-overload,sse-good")
        self.assertRun(r, 0, sse_streams.body("sse-good", k, 2))
        self.assertCount(self.plain, k, 2, r)
        self.assertEqual(r.stderr.count(RETRY_LINE), 1, str(r))
        self.assertIn(b"retrying in 10 ms (attempt 1/3)", r.stderr)

    def test_over_https(self):
        tls = self.tls()
        k = self.key()
        r = curl(["-sSN", "--cacert", tls.cert, tls.script_url(k, "sse-overload+split=3,sse-good")], preload=True,
                 env=FAST)
        self.assertRun(r, 0, sse_streams.body("sse-good", k, 2))
        self.assertCount(tls, k, 2, r)

    def test_openai_chat_and_responses_overloads_are_retried(self):
        for bad, good in (("sse-oai-chat-overload", "sse-oai-chat-good"),
                          ("sse-oai-responses-overload", "sse-oai-chat-good")):
            with self.subTest(bad):
                k = self.key()
                r = self.get(k, f"{bad},{good}")
                self.assertRun(r, 0, sse_streams.body(good, k, 2))
                self.assertCount(self.plain, k, 2, r)
                self.assertIn(b"-> HTTP 200 + stream error server_is_overloaded: retrying in 10 ms", r.stderr)

    def test_give_up_delivers_held_events_and_error_byte_for_byte(self):
        k = self.key()
        r = self.get(k, "sse-overload")
        self.assertRun(r, 0, sse_streams.body("sse-overload", k, 3))
        self.assertCount(self.plain, k, 3, r)
        self.assertEqual(r.stderr.count(RETRY_LINE), 2, str(r))
        self.assertIn(b"-> HTTP 200 + stream error overloaded_error: giving up after 3 attempts (exhausted)", r.stderr)

    def test_error_after_first_content_is_delivered_and_never_retried(self):
        k = self.key()
        r = self.get(k, "sse-late-error,sse-good")
        self.assertRun(r, 0, sse_streams.body("sse-late-error", k, 1))
        self.assertCount(self.plain, k, 1, r)
        self.assertEqual(r.stderr, b"")

    def test_permanent_error_event_is_not_retried(self):
        k = self.key()
        r = self.get(k, "sse-invalid,sse-good")
        self.assertRun(r, 0, sse_streams.body("sse-invalid", k, 1))
        self.assertCount(self.plain, k, 1, r)

    def test_crlf_and_cr_line_ends_are_parsed(self):
        for eol in ("crlf", "cr"):
            with self.subTest(eol):
                k = self.key()
                r = self.get(k, f"sse-overload+eol={eol},sse-good+eol={eol}")
                self.assertRun(r, 0, sse_streams.body(f"sse-good+eol={eol}", k, 2))
                self.assertCount(self.plain, k, 2, r)

    def test_every_byte_its_own_read_is_still_retried(self):
        k = self.key()
        r = self.get(k, "sse-overload+split=1,sse-good+split=1")
        self.assertRun(r, 0, sse_streams.body("sse-good", k, 2))
        self.assertCount(self.plain, k, 2, r)

    def test_pings_within_the_hold_are_retried(self):
        k = self.key()
        r = self.get(k, "sse-pings-1000,sse-good")
        self.assertRun(r, 0, sse_streams.body("sse-good", k, 2))
        self.assertCount(self.plain, k, 2, r)

    def test_100_kib_of_pings_commit_the_stream_past_the_hold_limit(self):
        k = self.key()
        r = self.get(k, "sse-pings-102400,sse-good")
        self.assertRun(r, 0, sse_streams.body("sse-pings-102400", k, 1))
        self.assertCount(self.plain, k, 1, r)
        self.assertEqual(r.stderr, b"")

    def test_a_smaller_configured_hold_commits_earlier(self):
        k = self.key()
        config = self.temp_dir() / "config.yaml"
        config.write_text("version: 1\ndefaults:\n  stream: {hold_max_bytes: 100}\n")
        r = self.get(k, "sse-overload,sse-good", env={"CURLRETRY_CONFIG": str(config)})
        self.assertRun(r, 0, sse_streams.body("sse-overload", k, 1))
        self.assertCount(self.plain, k, 1, r)

    def test_hold_false_and_one_attempt_stream_at_once(self):
        k = self.key()
        config = self.temp_dir() / "config.yaml"
        config.write_text("version: 1\ndefaults:\n  stream: {hold: false}\n")
        r = self.get(k, "sse-overload,sse-good", env={"CURLRETRY_CONFIG": str(config)})
        self.assertRun(r, 0, sse_streams.body("sse-overload", k, 1))
        self.assertCount(self.plain, k, 1, r)
        k = self.key()
        r = self.get(k, "sse-overload,sse-good", env={"CURLRETRY_MAX_ATTEMPTS": "1"})
        self.assertRun(r, 0, sse_streams.body("sse-overload", k, 1))
        self.assertCount(self.plain, k, 1, r)

    def test_stall_between_setup_and_content_then_content(self):
        k = self.key()
        r = self.get(k, "sse-stall-300")
        self.assertRun(r, 0, sse_streams.body("sse-stall-300", k, 1))
        self.assertCount(self.plain, k, 1, r)

    def test_stall_past_the_hosts_timeout_delivers_the_held_setup_events(self):
        setup = None
        for preload in (False, True):
            with self.subTest(preload=preload):
                k = self.key()
                r = self.get(k, "sse-stall-5000", "-m", "1", preload=preload)
                # What curl alone prints before its timeout: the two setup events.
                setup = b"".join(e.encode() for e in sse_streams.events("sse-good", k, 1)[:2])
                self.assertRun(r, 28, setup)
                self.assertCount(self.plain, k, 1, r)
                self.assertLess(r.elapsed, 4.0, str(r))

    def test_piped_upload_is_replayed_or_the_stream_delivered_whole(self):
        payload = os.urandom(5000)
        k = self.key("replayed")
        r = self.get(k, "sse-overload,echo", "-T", "-", input=payload)
        self.assertRun(r, 0, harness.echo_body(payload))
        self.assertCount(self.plain, k, 2, r)
        # Past max_upload_replay a pipe cannot be sent again: the host gets the stream as it came.
        k = self.key("too-big")
        config = self.temp_dir() / "config.yaml"
        config.write_text("version: 1\nsettings: {max_upload_replay: 1000}\n")
        r = self.get(k, "sse-overload,echo", "-T", "-", input=payload, env={"CURLRETRY_CONFIG": str(config)})
        self.assertRun(r, 0, sse_streams.body("sse-overload", k, 1))
        self.assertCount(self.plain, k, 1, r)
        self.assertIn(b"-> HTTP 200 + stream error overloaded_error: giving up after 1 attempt (not-replayable)",
                      r.stderr)

    def test_attempt_log_records_the_stream_error(self):
        k = self.key()
        log = self.temp_dir() / "events.jsonl"
        r = self.get(k, "sse-overload,sse-good", env={"CURLRETRY_EVENTS": str(log)})
        self.assertRun(r, 0, sse_streams.body("sse-good", k, 2))
        rows = [json.loads(line) for line in log.read_text().splitlines()]
        self.assertEqual(len(rows), 2, rows)
        self.assertEqual(rows[0]["reason"], "stream-error:overloaded_error")
        self.assertEqual(rows[0]["outcome"], "HTTP 200 + stream error overloaded_error")
        self.assertEqual(rows[0]["verdict"], "retry")
        self.assertEqual((rows[1]["verdict"], rows[1]["reason"]), ("success", "success"))


@unittest.skipUnless(HAVE_PYCURL, PYCURL_MISSING)
class SseStreamsPycurl(harness.UpstreamTestCase):
    def fetch(self, urls: list[str], preload: bool = True) -> list[dict]:
        path = self.temp_dir() / "sse_host.py"
        path.write_text(PYCURL_SSE)
        r = harness.run([harness.PYTHON, str(path), *urls], preload=preload, env=dict(FAST) if preload else {},
                        timeout=120)
        self.assertEqual(r.code, 0, str(r))
        reports = json.loads(r.stdout)
        for report in reports:
            report["writes"] = [(base64.b64decode(b), t) for b, t in report["writes"]]
            report["body"] = b"".join(b for b, _ in report["writes"])
        return reports

    def test_write_callback_gets_the_good_stream_only(self):
        k = self.key()
        [report] = self.fetch([self.plain.script_url(k, "sse-overload,sse-good")])
        self.assertEqual((report["result"], report["status"]), (0, 200))
        self.assertEqual(report["body"], sse_streams.body("sse-good", k, 2))
        self.assertCount(self.plain, k, 2)

    def test_error_event_cut_at_every_byte_boundary(self):
        # One read ends at byte K of the overloaded stream, the next starts there: for every K
        # the error is still found before content and retried, and the host sees attempt 2.
        probe = self.key("probe")
        size = len(sse_streams.body("sse-overload", probe, 1))
        keys = [self.key(str(cut)) for cut in range(size + 1)]
        # Keys differ in length, so each stream is cut at the same offset of its own bytes.
        urls = [self.plain.script_url(k, f"sse-overload+cut={cut},sse-good") for cut, k in enumerate(keys)]
        reports = self.fetch(urls)
        counts = {k: self.plain.count(k) for k in keys}
        wrong = [(cut, report["result"], report["status"], counts[k])
                 for cut, (k, report) in enumerate(zip(keys, reports))
                 if (report["result"], report["status"], report["body"], counts[k])
                 != (0, 200, sse_streams.body("sse-good", k, 2), 2)]
        self.assertEqual(wrong, [], "cuts whose (result, status, upstream count) or body were wrong")

    def test_held_setup_events_reach_the_host_with_the_first_content(self):
        # sse-stall-600: message_start and ping, 600 ms of nothing, then content. Alone, pycurl
        # gets the setup events at once; preloaded, not before the content, and in the write just
        # before it (or the same one).
        for preload in (False, True):
            with self.subTest(preload=preload):
                k = self.key()
                [report] = self.fetch([self.plain.script_url(k, "sse-stall-600")], preload=preload)
                self.assertEqual(report["body"], sse_streams.body("sse-stall-600", k, 1))
                setup = b"".join(e.encode() for e in sse_streams.events("sse-good", k, 1)[:2])
                writes = report["writes"]
                first_time = writes[0][1]
                content_index = next(i for i, (b, _) in enumerate(writes)
                                     if b"content_block_start" in b)
                content_time = writes[content_index][1]
                self.assertGreaterEqual(content_time, 0.55, writes)
                if not preload:
                    self.assertLess(first_time, 0.5, writes)
                    continue
                before = b"".join(b for b, _ in writes[:content_index + 1])
                self.assertTrue(before.startswith(setup), writes)
                self.assertGreaterEqual(first_time, 0.55, writes)
                self.assertLess(content_time - first_time, 0.05, writes)
                self.assertLessEqual(content_index, 1, writes)


SSE_HEAD = (b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\n"
            b"Transfer-Encoding: chunked\r\n\r\n")


class SseStreamsEasyHost(harness.UpstreamTestCase):
    """hosts/easy_host: header callback, no header callback, a host that pauses the first write
    (which is the release of the held events), and CURLOPT_HEADER."""

    def run_host(self, mode: str, key: str, script: str, preload: bool = True):
        import test_easy_hosts as easy
        if not os.access(easy.EASY_HOST, os.X_OK):
            self.fail(f"easy_host not built ({easy.EASY_HOST!r})")
        return easy.HostRun(harness.run([easy.EASY_HOST, mode, self.plain.script_url(key, script)],
                                        preload=preload, env=FAST if preload else {}))

    def assertHostRun(self, run, body: bytes) -> None:
        self.assertEqual((run.code, run.result, run.status), (0, 0, 200), str(run))
        self.assertEqual(run.stdout, body, str(run))

    def test_header_callback_sees_only_the_final_head(self):
        k = self.key()
        run = self.run_host("get", k, "sse-overload,sse-good")
        self.assertHostRun(run, sse_streams.body("sse-good", k, 2))
        self.assertEqual(run.headers, SSE_HEAD, str(run))
        self.assertCount(self.plain, k, 2, run.raw)

    def test_without_a_header_callback(self):
        k = self.key()
        run = self.run_host("body", k, "sse-oai-responses-overload,sse-oai-chat-good")
        self.assertHostRun(run, sse_streams.body("sse-oai-chat-good", k, 2))
        self.assertCount(self.plain, k, 2, run.raw)

    def test_host_pausing_the_release_gets_the_whole_stream(self):
        for script, final, attempts in (("sse-overload,sse-good", "sse-good", 2),
                                        ("sse-overload", "sse-overload", 3)):
            with self.subTest(script):
                k = self.key()
                run = self.run_host("pause", k, script)
                self.assertHostRun(run, sse_streams.body(final, k, attempts))
                self.assertIn("pauses=1 unpauses=1", run.stderr)
                self.assertCount(self.plain, k, attempts, run.raw)

    def test_curlopt_header_puts_only_the_final_head_in_the_body(self):
        k = self.key()
        run = self.run_host("header-only", k, "sse-overload,sse-good")
        self.assertHostRun(run, SSE_HEAD + sse_streams.body("sse-good", k, 2))
        self.assertCount(self.plain, k, 2, run.raw)


class SseStreamsMulti(harness.UpstreamTestCase):
    HOSTS = (("multi_poll_host", ("inside",)), ("epoll_host", ()), ("uv_host", ()))

    def test_multi_and_socket_action_hosts(self):
        import test_multi_hosts as multi
        for name, args in self.HOSTS:
            host = os.path.join(multi.MULTI_HOSTS_DIR, name)
            if not os.access(host, os.X_OK):
                self.fail(f"{host} not built (tests/integration/multi_hosts)")
            with self.subTest(name):
                cases = (("sse-overload,sse-good", "sse-good", 2), ("sse-late-error,sse-good", "sse-late-error", 1),
                         ("sse-overload", "sse-overload", 3), ("sse-oai-chat-overload,sse-oai-chat-good",
                                                              "sse-oai-chat-good", 2))
                keys = [self.key(f"{name}-{i}") for i in range(len(cases))]
                urls = [self.plain.script_url(k, script) for k, (script, _, _) in zip(keys, cases)]
                r = harness.run([host, *args, *urls], preload=True, env=FAST, timeout=60)
                report = multi.HostReport(r)
                self.assertEqual(r.code, 0, str(r))
                self.assertEqual(report.checks, [], str(r))
                for k, url, (script, final, attempts) in zip(keys, urls, cases):
                    line = report.lines[url]
                    body = sse_streams.body(final, k, attempts)
                    self.assertEqual((line.result, line.status, line.done), (0, 200, 1), str(r))
                    self.assertEqual((line.sha, line.length), (sha256(body), len(body)), f"{script}\n{r}")
                    self.assertEqual(self.plain.count(k), attempts, script)


if __name__ == "__main__":
    unittest.main()
