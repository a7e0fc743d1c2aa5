"""Multi-interface hosts under libcurlretry.so (issue 4 §4, DESIGN §3.1, §3.8, §5).

Every host here drives libcurl through curl_multi_* in a different loop shape, and none of them
knows about curlretry:

- multi_hosts/multi_poll_host: perform + curl_multi_poll, reading messages inside the loop,
  only once still_running reached 0 (late-read), never (never-read), or keeping N transfers in
  flight and adding new ones as others finish (rolling:N);
- multi_hosts/multi_wait_host: perform + curl_multi_wait (what PHP's curl_multi_exec does);
- multi_hosts/multi_moves_host: handles moving between multi handles, outliving them, and
  added again while they wait between attempts;
- multi_hosts/fdset_host: curl_multi_fdset + select + curl_multi_timeout (git's loop);
- multi_hosts/uv_host and epoll_host: socket-action hosts (libuv; epoll + timerfd);
- the real `curl --parallel`, pycurl's CurlMulti (libcurl-gnutls, dlopen'ed RTLD_LOCAL), and
  php-cli's curl_multi_exec (curl.so dlopen'ed RTLD_DEEPBIND).

What each test pins: the host sees exactly one response per transfer, the final attempt's, byte
for byte (body digests, status, CURLcode, a single HTTP status line in its header callback);
exactly one CURLMSG_DONE per handle with an msgs_in_queue that counts down exactly; the upstream
saw exactly the requests the policy allows; a Retry-After wait on one transfer never stalls the
others; and the host loop idles while a transfer is parked (its CPU time during the wait). The
host programs check their own invariants and exit 1 with `CHECK FAILED: ...` lines; their report
format is described in multi_hosts/host_common.h.

Figures (CPU during a 2 s backoff per host, the 1,000-transfer run against its twin) are printed
on stderr as `FIGURE ...` lines.
"""

from __future__ import annotations

import base64
import dataclasses
import hashlib
import http.client
import json
import os
import re
import sys
import unittest
from typing import Callable

import harness
from harness import CAPTCHA_BODY, UpstreamTestCase, error_body, ok_body, overloaded_body

CURLE_OK = 0
CURLE_SEND_ERROR = 55
CURLE_RECV_ERROR = 56
# A `reset` reads the whole request and then resets the connection: libcurl usually reports the
# RST on the receive side (56), sometimes, depending on event order, on a send (55).
RESET_RESULTS = (CURLE_SEND_ERROR, CURLE_RECV_ERROR)

MAX_ATTEMPTS = 4
FAST = {"CURLRETRY_BASE_MS": "20", "CURLRETRY_MAX_ATTEMPTS": str(MAX_ATTEMPTS)}

PYTHON = harness.PYTHON
PHP = harness.PHP


def _multi_hosts_dir() -> str:
    folder = os.environ.get("CURLRETRY_MULTI_HOSTS_DIR", "")
    if folder:
        return folder
    # Run by hand from the source tree: the newest build that has them.
    found = sorted(harness.REPO.glob("build*/tests/integration/multi_hosts/multi_poll_host"),
                   key=lambda p: p.stat().st_mtime)
    return str(found[-1].parent) if found else ""


MULTI_HOSTS_DIR = _multi_hosts_dir()
C_HOSTS = ("multi_poll_host", "multi_wait_host", "fdset_host", "uv_host", "epoll_host")


HAVE_PYCURL = harness.have_pycurl()
HAVE_PHP_CURL = harness.have_php_function("curl_multi_exec")


def figure(text: str) -> None:
    print(f"FIGURE {text}", file=sys.stderr, flush=True)


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


# --- what each script must end as ------------------------------------------------------------

@dataclasses.dataclass(frozen=True)
class Expect:
    result: int | tuple[int, ...]  # a tuple: any of these
    status: int
    body: bytes
    counts: tuple[int, ...]  # the upstream request counts allowed (one, except as noted)


@dataclasses.dataclass(frozen=True)
class Case:
    label: str
    script: str
    expect: Callable[[str], Expect]      # with the preload (MAX_ATTEMPTS, fast backoff)
    control: Callable[[str], Expect]     # without it: the first attempt, once


def _ok(attempt: int) -> Callable[[str], Expect]:
    return lambda k: Expect(CURLE_OK, 200, ok_body(k, attempt), (attempt,))


# libcurl itself re-sends a request whose *reused* keep-alive connection died before any response
# byte ("Connection died, retrying a fresh connect"), and in 7.88 that re-send may go out on
# another idle kept-alive connection, up to 5 times (CONN_MAX_RETRIES). So when a `reset` first
# attempt can go out on a kept-alive connection (hosts that add handles while others have left
# idle connections behind), that attempt costs 1 to 6 requests. The shim's later attempts use a
# fresh connection (DESIGN §3.7) and cost one each. For `reset,200` the host sees the same 200
# either way; only the count of `reset` forever changes. Hosts that add every handle up front
# open a connection per handle and are exact.
REUSE_EXTRA = 5
MIX = (
    Case("503-200", "503,200", _ok(2), lambda k: Expect(0, 503, overloaded_body(k, 1), (1,))),
    Case("503x2-200", "503,503,200", _ok(3), lambda k: Expect(0, 503, overloaded_body(k, 1), (1,))),
    Case("429ra1-200", "429+ra=1,200", _ok(2),
         lambda k: Expect(0, 429, error_body("too many requests", k, 1), (1,))),
    Case("captcha-200", "captcha,200", _ok(2), lambda k: Expect(0, 400, CAPTCHA_BODY, (1,))),
    # Control: libcurl's own re-send may reach the 200 (see the control test).
    Case("reset-200", "reset,200", _ok(2), lambda k: Expect(RESET_RESULTS, 0, b"", (1,))),
    Case("200", "200", _ok(1), _ok(1)),
    Case("400", "400", lambda k: Expect(0, 400, error_body("bad request", k, 1), (1,)),
         lambda k: Expect(0, 400, error_body("bad request", k, 1), (1,))),
    Case("503-forever", "503", lambda k: Expect(0, 503, overloaded_body(k, MAX_ATTEMPTS), (MAX_ATTEMPTS,)),
         lambda k: Expect(0, 503, overloaded_body(k, 1), (1,))),
    Case("reset-forever", "reset", lambda k: Expect(RESET_RESULTS, 0, b"", (MAX_ATTEMPTS,)),
         lambda k: Expect(RESET_RESULTS, 0, b"", (1,))),
)


@dataclasses.dataclass
class Line:
    url: str
    result: int
    status: int
    sha: str
    length: int
    done: int
    status_lines: int
    t_ms: float
    cpu_ms: float


_LINE = re.compile(r"^(\S+) result=(-?\d+) status=(\d+) body_sha256=([0-9a-f]{64}) len=(\d+) done=(\d+) "
                   r"status_lines=(\d+) t_ms=([\d.]+) cpu_ms=([\d.]+)$")


class HostReport:
    """One multi host run: its per-transfer lines and summary (multi_hosts/host_common.h)."""

    def __init__(self, result: harness.Result):
        self.raw = result
        self.lines: dict[str, Line] = {}
        self.summary: dict[str, str] = {}
        for text in result.stdout.decode("utf-8", "replace").splitlines():
            m = _LINE.match(text)
            if m:
                g = m.groups()
                self.lines[g[0]] = Line(g[0], int(g[1]), int(g[2]), g[3], int(g[4]), int(g[5]), int(g[6]),
                                        float(g[7]), float(g[8]))
            elif text.startswith("summary "):
                self.summary = dict(part.split("=", 1) for part in text.split()[1:])
        self.checks = [l for l in result.stderr.decode("utf-8", "replace").splitlines() if "CHECK FAILED" in l]

    @property
    def cpu_s(self) -> float:
        return float(self.summary["cpu_s"])

    @property
    def wall_s(self) -> float:
        return float(self.summary["wall_s"])

    def __str__(self) -> str:
        return str(self.raw)


class MultiTestCase(UpstreamTestCase):
    @classmethod
    def setUpClass(cls) -> None:
        missing = [h for h in C_HOSTS if not os.access(os.path.join(MULTI_HOSTS_DIR, h), os.X_OK)]
        if missing:
            raise RuntimeError(f"multi hosts {missing} not found in {MULTI_HOSTS_DIR!r}: build the multi_hosts "
                               "target (tests/integration/multi_hosts) and set CURLRETRY_MULTI_HOSTS_DIR")
        super().setUpClass()
        # A second host (another port, so another fleet key) for the Retry-After transfer of the
        # tests about the loop: with the default fleet, a 429 + Retry-After cools its host:port
        # for every transfer to it (the server's word for the host, honoured by design and pinned
        # in test_fleet.py); these tests pin that the loop never stalls while one transfer waits.
        cls.elsewhere = harness.Upstream().start()
        cls.addClassCleanup(cls.elsewhere.stop)

    def counts(self, keys: list[str]) -> dict[str, int]:
        """/count/<key> for many keys over one kept-alive connection."""
        conn = http.client.HTTPConnection("127.0.0.1", self.plain.port, timeout=10)
        try:
            out = {}
            for k in keys:
                conn.request("GET", f"/count/{k}")
                r = conn.getresponse()
                body = r.read()
                self.assertEqual(r.status, 200, body)
                out[k] = int(body)
            return out
        finally:
            conn.close()

    def host(self, name: str, *args: str, urls: list[str], preload: bool = True,
             env: dict[str, str] | None = None, timeout: float = 60) -> HostReport:
        child_env = dict(FAST) if preload else {}
        child_env.update(env or {})
        if len(urls) > 50:
            path = self.temp_dir() / "urls.txt"
            path.write_text("\n".join(urls) + "\n")
            url_args = ["@" + str(path)]
        else:
            url_args = urls
        result = harness.run([os.path.join(MULTI_HOSTS_DIR, name), *args, *url_args], preload=preload,
                             env=child_env, timeout=timeout)
        return HostReport(result)

    def assertHostOk(self, report: HostReport, n: int) -> None:
        self.assertEqual(report.checks, [], f"the host's own checks\n{report}")
        self.assertEqual(report.raw.code, 0, f"exit status\n{report}")
        self.assertEqual(len(report.lines), n, f"report lines\n{report}")

    def assertTransfer(self, report: HostReport, url: str, want: Expect, *, done: int = 1,
                       result_known: bool = True) -> None:
        line = report.lines.get(url)
        self.assertIsNotNone(line, f"no report line for {url}\n{report}")
        what = f"{url}\n{report}"
        if result_known:
            self.assertIn(line.result, want.result if isinstance(want.result, tuple) else (want.result,),
                          f"CURLcode of {what}")
        self.assertEqual(line.status, want.status, f"status of {what}")
        self.assertEqual((line.sha, line.length), (sha256(want.body), len(want.body)),
                         f"body of {url}: expected {want.body!r}\n{report}")
        self.assertEqual(line.done, done, f"DONE messages for {what}")
        # The header callback saw the status line of one attempt, the final one (none when no
        # response ever came).
        self.assertEqual(line.status_lines, 1 if want.status else 0, f"HTTP status lines seen by {what}")

    # --- the mix: every host, every script -----------------------------------------------------

    def mix_urls(self, copies: int = 1, preload: bool = True, reuse: bool = False) -> list[tuple[str, str, Expect]]:
        """The mix, `copies` times over, with unique keys. `reuse`: the host may send a first
        attempt on a kept-alive connection (see REUSE_EXTRA)."""
        out = []
        for copy in range(copies):
            for case in MIX:
                k = self.key(f"{case.label}-{copy}")
                want = (case.expect if preload else case.control)(k)
                if reuse and case.script == "reset":
                    first = want.counts[0]
                    want = dataclasses.replace(want, counts=tuple(range(first, first + REUSE_EXTRA + 1)))
                out.append((self.plain.script_url(k, case.script), k, want))
        return out

    def run_mix(self, name: str, *args: str, copies: int = 1, never_read: bool = False,
                reuse: bool = False) -> HostReport:
        cases = self.mix_urls(copies, reuse=reuse)
        report = self.host(name, *args, urls=[u for u, _, _ in cases])
        self.assertHostOk(report, len(cases))
        counts = self.counts([k for _, k, _ in cases])
        for url, k, want in cases:
            with self.subTest(url=url):
                self.assertTransfer(report, url, want, done=0 if never_read else 1, result_known=not never_read)
                self.assertIn(counts[k], want.counts, f"requests upstream for {k}\n{report}")
        return report

    def test_poll_loop_reading_messages_inside(self):
        self.run_mix("multi_poll_host", "inside")

    def test_poll_loop_reading_messages_only_after_running_reached_zero(self):
        self.run_mix("multi_poll_host", "late-read")

    def test_poll_loop_that_never_reads_messages(self):
        # No info_read at all: running_handles alone must stay above 0 while a transfer is
        # parked, or the loop would end with a 503 body in hand.
        self.run_mix("multi_poll_host", "never-read", never_read=True)

    def test_poll_loop_adding_handles_as_others_finish_10_at_a_time(self):
        self.run_mix("multi_poll_host", "rolling:10", copies=3, reuse=True)

    def test_wait_loop(self):
        self.run_mix("multi_wait_host")

    def test_fdset_select_loop(self):
        self.run_mix("fdset_host")

    def test_libuv_socket_action_loop(self):
        self.run_mix("uv_host")

    def test_epoll_timerfd_socket_action_loop(self):
        self.run_mix("epoll_host")

    def test_control_hosts_without_the_preload_see_the_first_attempt(self):
        # The same hosts on their own: first-attempt bodies, one request each. What the preloaded
        # runs see differently is the shim's doing.
        for name, args in (("multi_poll_host", ["inside"]), ("multi_poll_host", ["late-read"]),
                           ("multi_poll_host", ["rolling:3"]), ("multi_wait_host", []), ("fdset_host", []),
                           ("uv_host", []), ("epoll_host", [])):
            with self.subTest(host=name, mode=args):
                cases = self.mix_urls(preload=False, reuse=True)
                report = self.host(name, *args, urls=[u for u, _, _ in cases], preload=False)
                self.assertHostOk(report, len(cases))
                counts = self.counts([k for _, k, _ in cases])
                for url, k, want in cases:
                    if url.endswith("/reset,200"):
                        # Without the shim, libcurl's own re-send on a dead reused connection
                        # may reach the 200.
                        line = report.lines[url]
                        self.assertIn((line.result, line.status, counts[k]),
                                      ((CURLE_SEND_ERROR, 0, 1), (CURLE_RECV_ERROR, 0, 1), (CURLE_OK, 200, 2)),
                                      f"{url}\n{report}")
                        continue
                    self.assertTransfer(report, url, want)
                    self.assertIn(counts[k], want.counts, f"requests upstream for {k}\n{report}")

    # --- a host that gives up on a parked transfer ---------------------------------------------

    def abandon_urls(self) -> tuple[tuple[str, str], tuple[str, str]]:
        quick, slow = self.key("quick"), self.key("ra2")
        return ((self.plain.script_url(quick, "503,200"), quick),
                (self.elsewhere.script_url(slow, "429+ra=2,200"), slow))

    def test_removing_a_parked_transfer_drops_it(self):
        # After 300 ms the host removes the transfer parked for its Retry-After: the removal
        # succeeds, running_handles drops to 0 at once, no DONE ever comes for it, and it is
        # never re-sent.
        (quick_url, quick), (slow_url, slow) = self.abandon_urls()
        report = self.host("multi_poll_host", "abandon:300", urls=[quick_url, slow_url])
        self.assertHostOk(report, 2)
        self.assertTransfer(report, quick_url, Expect(0, 200, ok_body(quick, 2), (2,)))
        self.assertTransfer(report, slow_url, Expect(-1, 0, b"", (1,)), done=0)
        self.assertLess(report.wall_s, 1.0, f"the host waited for the removed transfer\n{report}")
        self.assertEqual((self.plain.count(quick), self.elsewhere.count(slow)), (2, 1), f"{report}")

    def test_multi_cleanup_with_a_parked_transfer_gives_the_handle_back(self):
        # After 300 ms the host calls curl_multi_cleanup with the parked transfer still added,
        # then runs that easy handle on its own with curl_easy_perform: the host's callbacks
        # are its own again and see the one response of that perform (the script's 200).
        (quick_url, quick), (slow_url, slow) = self.abandon_urls()
        report = self.host("multi_poll_host", "abandon-cleanup:300", urls=[quick_url, slow_url])
        self.assertHostOk(report, 2)
        self.assertTransfer(report, quick_url, Expect(0, 200, ok_body(quick, 2), (2,)))
        self.assertTransfer(report, slow_url, Expect(0, 200, ok_body(slow, 2), (2,)), done=0)
        self.assertLess(report.wall_s, 1.5, f"{report}")
        self.assertEqual((self.plain.count(quick), self.elsewhere.count(slow)), (2, 2), f"{report}")

    def test_handles_moving_between_multis_and_outliving_them(self):
        # multi_moves_host: a handle removed from one multi and run in another, a multi cleaned
        # up after its handle moved on, a handle cleaned up while still added, a multi cleaned
        # up with its handle added and that handle then run by curl_easy_perform, a handle
        # added again (to its multi or another) while it waits between attempts, which must fail
        # with CURLM_ADDED_ALREADY, and a multi cleaned up under a transfer in flight, whose
        # handle must then retry like any other. Each transfer fails once and is retried
        # wherever it runs; the host checks one DONE per run.
        keys = [self.key(f"move{i}") for i in range(1, 9)]
        # move6 waits 1 s between its attempts (the host tries to add it again meanwhile); move7
        # answers after 5 s, and its multi is cleaned up under it; move8 runs on that handle.
        slow = self.plain.script_url(keys[6], "hang5000")
        urls = [self.plain.script_url(k, "503,200") for k in keys[:5]]
        urls += [self.plain.script_url(keys[5], "429+ra=1,200"), slow, self.plain.script_url(keys[7], "503,200")]
        result = harness.run([os.path.join(MULTI_HOSTS_DIR, "multi_moves_host"), *urls], preload=True, env=dict(FAST),
                             timeout=60)
        out = result.stdout.decode()
        err = result.stderr.decode("utf-8", "replace")
        self.assertNotIn("CHECK FAILED", err, f"{out}\n{err}")
        self.assertEqual(result.code, 0, f"{out}\n{err}")
        checked = [(k, url) for k, url in zip(keys, urls) if url != slow]
        for k, url in checked:
            want = f"{url} result=0 status=200 len={len(ok_body(k, 2))}"
            self.assertIn(want, out.splitlines(), f"{out}\n{err}")
        self.assertEqual(self.counts([k for k, _ in checked]), {k: 2 for k, _ in checked}, f"{out}\n{err}")

    # --- Retry-After: the others go on, the host idles -----------------------------------------

    def retry_after_run(self, name: str, *args: str) -> None:
        slow_key = self.key("ra2")
        slow = (self.elsewhere.script_url(slow_key, "429+ra=2,200"), slow_key,
                Expect(0, 200, ok_body(slow_key, 2), (2,)))
        quick = []
        for label, script, attempt in (("a", "503,200", 2), ("b", "503,503,200", 3), ("c", "captcha,200", 2),
                                       ("d", "200", 1)):
            k = self.key(label)
            quick.append((self.plain.script_url(k, script), k, Expect(0, 200, ok_body(k, attempt), (attempt,))))
        cases = [slow, *quick]
        report = self.host(name, *args, urls=[u for u, _, _ in cases])
        self.assertHostOk(report, len(cases))
        counts = {**self.counts([k for _, k, _ in quick]), slow_key: self.elsewhere.count(slow_key)}
        for url, k, want in cases:
            self.assertTransfer(report, url, want)
            self.assertIn(counts[k], want.counts, f"requests upstream for {k}\n{report}")
        s = report.lines[slow[0]]
        others = [report.lines[u] for u, _, _ in quick]
        last_other = max(others, key=lambda l: l.t_ms)
        window_cpu_ms = s.cpu_ms - max(l.cpu_ms for l in others)
        figure(f"{name} {' '.join(args)}: Retry-After 2 s transfer done at {s.t_ms:.0f} ms, the others by "
               f"{last_other.t_ms:.0f} ms; host CPU during the wait {window_cpu_ms:.1f} ms, whole run "
               f"{report.cpu_s * 1000:.1f} ms CPU / {report.wall_s * 1000:.0f} ms wall, {report.summary.get('loops')} "
               "loop turns")
        # The others do not wait for the parked one...
        self.assertLess(last_other.t_ms, 1000, f"the quick transfers waited for the Retry-After one\n{report}")
        # ...which is re-sent when due: not early, and not at the host's own 10 s timeout.
        self.assertGreaterEqual(s.t_ms, 1950, f"the Retry-After was not honoured\n{report}")
        self.assertLess(s.t_ms, 3000, f"the parked transfer was resumed late\n{report}")
        # No busy loop while it is parked: well under a tenth of the 2 s window.
        self.assertLess(window_cpu_ms, 200, f"host CPU while a transfer was parked\n{report}")

    def test_retry_after_on_one_transfer_never_stalls_the_others_poll(self):
        self.retry_after_run("multi_poll_host", "inside")

    def test_retry_after_on_one_transfer_never_stalls_the_others_wait(self):
        self.retry_after_run("multi_wait_host")

    def test_retry_after_on_one_transfer_never_stalls_the_others_fdset(self):
        self.retry_after_run("fdset_host")

    def test_retry_after_on_one_transfer_never_stalls_the_others_libuv(self):
        self.retry_after_run("uv_host")

    def test_retry_after_on_one_transfer_never_stalls_the_others_epoll(self):
        self.retry_after_run("epoll_host")

    # --- scale ---------------------------------------------------------------------------------

    def test_scale_1000_transfers_at_64_concurrent_each_failing_once(self):
        n = 1000
        failing = [self.key(f"f{i}") for i in range(n)]
        twin = [self.key(f"t{i}") for i in range(n)]
        bare = [self.key(f"b{i}") for i in range(n)]
        runs = {}
        for label, keys, script, preload in (("failing-once", failing, "503,200", True),
                                              ("no-failure twin", twin, "200", True),
                                              ("no-failure, no preload", bare, "200", False)):
            urls = [self.plain.script_url(k, script) for k in keys]
            report = self.host("multi_poll_host", "rolling:64", urls=urls, preload=preload, timeout=120)
            self.assertHostOk(report, n)
            runs[label] = report
        f, t = runs["failing-once"], runs["no-failure twin"]
        for k in failing:
            url = self.plain.script_url(k, "503,200")
            self.assertTransfer(f, url, Expect(0, 200, ok_body(k, 2), (2,)))
        counts = self.counts(failing)
        self.assertEqual({k: c for k, c in counts.items() if c != 2}, {}, "keys not requested exactly twice")
        for label, r in runs.items():
            figure(f"1000 transfers at 64 concurrent, {label}: wall {r.wall_s:.3f} s, CPU {r.cpu_s:.3f} s, "
                   f"{r.summary.get('loops')} loop turns")
        figure(f"failing-once / twin: CPU x{f.cpu_s / max(t.cpu_s, 1e-3):.2f}, "
               f"wall x{f.wall_s / max(t.wall_s, 1e-3):.2f} (the failing run makes twice the requests)")
        # Each transfer makes two requests and waits ~20 ms in between, so about twice the
        # twin's work; a loop spinning while transfers are parked would blow far past 3x. Under the
        # sanitizer presets the retry path's share is instrumented code (the shim, the decision)
        # while most of the twin's is libcurl's, which is not: TSan measured 3.3x once (0.60 s vs
        # 0.18 s), so there the bound is 5x; the plain build keeps the 3x guard.
        factor = 5 if harness.PRELOAD_PREFIX else 3
        self.assertLess(f.cpu_s, factor * t.cpu_s + 0.05, f"CPU failing-once {f.cpu_s} s vs twin {t.cpu_s} s")

    # --- real programs ---------------------------------------------------------------------------

    def test_curl_parallel_with_20_flaky_urls_and_a_retry_after_on_one(self):
        out = self.temp_dir()
        scripts = (("503,200", 2), ("captcha,200", 2), ("reset,200", 2), ("503,503,200", 3), ("200", 1))
        cases = []
        slow_key = self.key("ra2")
        cases.append((slow_key, "429+ra=2,200", 2))
        for i in range(19):
            script, attempt = scripts[i % len(scripts)]
            cases.append((self.key(f"p{i}"), script, attempt))
        args = ["-sS", "--no-progress-meter", "--parallel", "--parallel-max", "20",
                "-w", "%{stderr}w %{url_effective} %{http_code} %{time_total}\\n"]
        for i, (k, script, _) in enumerate(cases):
            upstream = self.elsewhere if k == slow_key else self.plain
            args += ["-o", f"out{i}", upstream.script_url(k, script)]
        r = harness.curl(args, preload=True, env=FAST, cwd=str(out), timeout=30)
        self.assertEqual(r.code, 0, f"curl --parallel\n{r}")
        counts = {**self.counts([k for k, _, _ in cases if k != slow_key]), slow_key: self.elsewhere.count(slow_key)}
        mtimes = {}
        for i, (k, script, attempt) in enumerate(cases):
            path = out / f"out{i}"
            self.assertEqual(path.read_bytes(), ok_body(k, attempt), f"out{i} ({script})\n{r}")
            self.assertEqual(counts[k], attempt, f"requests upstream for {k} ({script})\n{r}")
            mtimes[k] = path.stat().st_mtime_ns / 1e6
        # One write-out line per transfer, the Retry-After one last.
        written = re.findall(r"\bw (\S+) (\d+) ([\d.]+)\n", r.stderr.decode("utf-8", "replace"))
        self.assertEqual(len(written), 20, f"write-out lines\n{r}")
        self.assertIn(f"/s/{slow_key}/", written[-1][0], f"the Retry-After transfer should finish last\n{r}")
        self.assertEqual({w[1] for w in written}, {"200"}, f"write-out status codes\n{r}")
        # The others were written to disk while it waited: its file came about 2 s after theirs.
        last_other = max(v for k, v in mtimes.items() if k != slow_key)
        gap = mtimes[slow_key] - last_other
        figure(f"curl --parallel: the Retry-After transfer's file written {gap:.0f} ms after the last of the other "
               f"19; run {r.elapsed:.2f} s; time_total per URL (s) {[w[2] for w in written]}")
        self.assertGreater(gap, 1500, f"the other transfers waited for the Retry-After one\n{r}")
        self.assertLess(r.elapsed, 4.5, f"curl --parallel took too long\n{r}")

    def pycurl_multi(self, urls: list[str], preload: bool = True) -> tuple[dict, harness.Result]:
        script = self.temp_dir() / "multi.py"
        script.write_text(PYCURL_MULTI)
        r = harness.run([PYTHON, str(script), *urls], preload=preload, env=FAST if preload else None, timeout=60)
        self.assertEqual(r.code, 0, f"pycurl\n{r}")
        report = json.loads(r.stdout.strip().splitlines()[-1])
        self.assertIn("GnuTLS", report["version"], "pycurl should run on libcurl-gnutls")
        return report, r

    @unittest.skipUnless(HAVE_PYCURL, harness.needs("python3-pycurl", "pycurl"))
    def test_pycurl_curlmulti_with_10_handles(self):
        cases = self.mix_urls()  # 9 scripts
        k = self.key("extra")
        cases.append((self.plain.script_url(k, "503,200"), k, Expect(0, 200, ok_body(k, 2), (2,))))
        report, r = self.pycurl_multi([u for u, _, _ in cases])
        counts = self.counts([k for _, k, _ in cases])
        for (url, key, want), got in zip(cases, report["transfers"]):
            with self.subTest(url=url):
                self.assertEqual(got["url"], url)
                self.assertEqual(got["done"], 1, f"DONE messages for {url}\n{r}")
                self.assertIn(got["result"], want.result if isinstance(want.result, tuple) else (want.result,),
                              f"{url}\n{r}")
                self.assertEqual(got["status"], want.status, f"{url}\n{r}")
                self.assertEqual(base64.b64decode(got["body"]), want.body, f"{url}\n{r}")
                self.assertIn(counts[key], want.counts, f"requests upstream for {key}\n{r}")
        figure(f"pycurl CurlMulti, 10 handles: {report['wall']:.2f} s wall, {report['cpu']:.3f} s CPU, "
               f"{report['loops']} select turns")

    @unittest.skipUnless(HAVE_PYCURL, harness.needs("python3-pycurl", "pycurl"))
    def test_pycurl_loop_idles_while_its_only_transfer_is_parked(self):
        # pycurl's CurlMulti.select() is curl_multi_fdset + select(), and it returns 0 at once
        # when fdset offers no descriptor, without looking at curl_multi_timeout. While the only
        # transfer is parked libcurl has no socket, so unless the shim gives this loop something
        # to wait on, the documented pycurl loop spins for the whole Retry-After.
        # Control: the same loop without the preload, waiting 2 s on a slow server, idles in
        # select() because libcurl has the socket to offer.
        k = self.key("hang")
        control, r = self.pycurl_multi([self.plain.script_url(k, "hang2000")], preload=False)
        figure(f"pycurl CurlMulti without the preload, server answering after 2 s: {control['wall']:.2f} s wall, "
               f"{control['cpu']:.3f} s CPU, {control['loops']} select turns")
        self.assertLess(control["cpu"], 0.5, f"control\n{r}")
        k = self.key()
        report, r = self.pycurl_multi([self.plain.script_url(k, "429+ra=2,200")])
        got = report["transfers"][0]
        self.assertEqual((got["done"], got["result"], got["status"]), (1, 0, 200), f"{r}")
        self.assertEqual(base64.b64decode(got["body"]), ok_body(k, 2), f"{r}")
        self.assertCount(self.plain, k, 2, r)
        figure(f"pycurl CurlMulti, one transfer parked 2 s: {report['wall']:.2f} s wall, {report['cpu']:.3f} s CPU, "
               f"{report['loops']} select turns")
        self.assertLess(report["cpu"], 0.5, f"pycurl's select loop spun while the transfer was parked: "
                        f"{report['loops']} turns, {report['cpu']:.2f} s CPU in {report['wall']:.2f} s\n{r}")

    @unittest.skipUnless(HAVE_PHP_CURL, harness.needs("php-curl", "php-cli with php-curl"))
    def test_php_curl_multi_exec_with_several_handles(self):
        cases = self.mix_urls()
        script = self.temp_dir() / "multi.php"
        script.write_text(PHP_MULTI)
        r = harness.run([PHP, str(script), *[u for u, _, _ in cases]], preload=True, env=FAST, timeout=60)
        self.assertEqual(r.code, 0, f"php\n{r}")
        report = json.loads(r.stdout.strip().splitlines()[-1])
        counts = self.counts([k for _, k, _ in cases])
        for (url, key, want), got in zip(cases, report["transfers"]):
            with self.subTest(url=url):
                self.assertEqual(got["url"], url)
                self.assertEqual(got["done"], 1, f"DONE messages for {url}\n{r}")
                self.assertIn(got["result"], want.result if isinstance(want.result, tuple) else (want.result,),
                              f"{url}\n{r}")
                self.assertEqual(got["status"], want.status, f"{url}\n{r}")
                self.assertEqual(base64.b64decode(got["body"]), want.body, f"{url}\n{r}")
                self.assertIn(counts[key], want.counts, f"requests upstream for {key}\n{r}")
        figure(f"php curl_multi_exec, {len(cases)} handles: {report['wall']:.2f} s wall, {report['cpu']:.3f} s CPU, "
               f"{report['loops']} select turns")


# --- interpreter programs ---------------------------------------------------------------------

# pycurl's documented CurlMulti loop: perform until not E_CALL_MULTI_PERFORM, select (fdset +
# select inside pycurl), info_read until nothing is queued.
PYCURL_MULTI = r"""
import base64, json, resource, sys, time, pycurl
from io import BytesIO
urls = sys.argv[1:]
m = pycurl.CurlMulti()
handles = []
for i, u in enumerate(urls):
    c = pycurl.Curl()
    c.buf = BytesIO()
    c.index = i
    c.done = 0
    c.result = -1
    c.setopt(pycurl.URL, u)
    c.setopt(pycurl.WRITEDATA, c.buf)
    m.add_handle(c)
    handles.append(c)
start = time.monotonic()
loops = 0

def drain():
    while True:
        queued, ok, err = m.info_read()
        for c in ok:
            c.done += 1
            c.result = 0
        for c, errno, _ in err:
            c.done += 1
            c.result = errno
        if queued == 0:
            break

while True:
    ret, num = m.perform()
    if ret != pycurl.E_CALL_MULTI_PERFORM:
        break
drain()
while num and time.monotonic() - start < 30:
    m.select(1.0)
    loops += 1
    while True:
        ret, num = m.perform()
        if ret != pycurl.E_CALL_MULTI_PERFORM:
            break
    drain()
ru = resource.getrusage(resource.RUSAGE_SELF)
out = []
for c in handles:
    out.append({"url": urls[c.index], "done": c.done, "result": c.result,
                "status": c.getinfo(pycurl.RESPONSE_CODE),
                "body": base64.b64encode(c.buf.getvalue()).decode()})
    m.remove_handle(c)
    c.close()
m.close()
print(json.dumps({"transfers": out, "loops": loops, "version": pycurl.version,
                  "wall": time.monotonic() - start, "cpu": ru.ru_utime + ru.ru_stime}))
"""

# PHP's usual loop: curl_multi_exec, drain curl_multi_info_read, curl_multi_select.
PHP_MULTI = r"""<?php
$urls = array_slice($argv, 1);
$m = curl_multi_init();
$hs = []; $done = []; $res = [];
foreach ($urls as $i => $u) {
  $c = curl_init($u);
  curl_setopt($c, CURLOPT_RETURNTRANSFER, true);
  curl_multi_add_handle($m, $c);
  $hs[$i] = $c; $done[$i] = 0; $res[$i] = -1;
}
$start = microtime(true); $loops = 0;
$drain = function () use ($m, &$hs, &$done, &$res) {
  while ($info = curl_multi_info_read($m)) {
    if ($info['msg'] != CURLMSG_DONE) continue;
    $i = array_search($info['handle'], $hs, true);
    $done[$i]++; $res[$i] = $info['result'];
  }
};
do {
  $mc = curl_multi_exec($m, $running);
  $drain();
  if ($running) { curl_multi_select($m, 1.0); $loops++; }
} while ($running && $mc == CURLM_OK && microtime(true) - $start < 30);
$ru = getrusage();
$out = [];
foreach ($hs as $i => $c) {
  $out[] = ["url" => $urls[$i], "done" => $done[$i], "result" => $res[$i],
            "status" => curl_getinfo($c, CURLINFO_RESPONSE_CODE),
            "body" => base64_encode((string) curl_multi_getcontent($c))];
  curl_multi_remove_handle($m, $c);
}
curl_multi_close($m);
echo json_encode(["transfers" => $out, "loops" => $loops, "wall" => microtime(true) - $start,
  "cpu" => $ru["ru_utime.tv_sec"] + $ru["ru_utime.tv_usec"] / 1e6
           + $ru["ru_stime.tv_sec"] + $ru["ru_stime.tv_usec"] / 1e6]), "\n";
"""


if __name__ == "__main__":
    unittest.main()
