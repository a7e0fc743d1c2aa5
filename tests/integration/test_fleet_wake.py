"""The recovery wake (issue 23, deliver 2): with the default fleet, the first success on a key
wakes the retries parked in their backoff for that key, so a fleet that waited out an outage
resumes within a second or so of the provider's recovery, not at the end of each process's own
exponential backoff; a retry whose key was healthy when it failed keeps its own backoff.

Real curl processes (easy interface), curl --parallel and uv_host (multi: one loop, several
parked transfers, the socket-action timer path) under the preload, against the flaky upstream.
Each test has an upstream of its own (a fresh port: a fresh fleet key in the module's store). The
outage is the upstream's /arm endpoint: every process's path prefix plays 529 until it is armed
to 200 again.
"""

import hashlib
import os
import re
import subprocess
import sys
import tempfile
import time
import unittest

import harness
from harness import ok_body

N = 8
# The processes' own backoff (exponential, no jitter: the built-in strategy): attempt 2 goes
# BASE after attempt 1 failed. They are woken while parked in that backoff. (Attempt 2 itself
# would find a failing run older than core::fleet_probe::kUnattendedAge, 1 s for these
# unattended processes: the fleet's probe then holds the outage's retries, one at a time,
# test_fleet_probe.py; the wake ends the backoffs before it.)
BASE_MS = 4000
OWN_SECOND_S = BASE_MS / 1000
# How soon after the first success every woken transfer has its answer: a look (100 ms easy,
# 250 ms multi) plus the retry itself, on a loaded 2-core box (measured 0.12-0.22 s).
WAKE_S = 2.0
# Upper bound on any wait below (each loop also bounds itself).
LIMIT_S = 40.0


def _multi_host(name: str) -> str:
    folder = os.environ.get("CURLRETRY_MULTI_HOSTS_DIR", "")
    if not folder:
        found = sorted(harness.REPO.glob(f"build*/tests/integration/multi_hosts/{name}"),
                       key=lambda p: p.stat().st_mtime)
        folder = str(found[-1].parent) if found else ""
    return os.path.join(folder, name)


class WakeTestCase(harness.ArmedUpstreamTestCase):

    def env(self, **extra) -> dict:
        """The test's variables over the harness's (a value of None removes one)."""
        env = {"CURLRETRY_PERSISTENT": "1", "CURLRETRY_BASE_MS": str(BASE_MS), "CURLRETRY_LOG": "info"}
        env.update(extra)
        return env

    def spawn(self, cmd: list[str], env: dict) -> subprocess.Popen:
        # stderr in a file, so that the test can await the parked lines while the process runs.
        err = tempfile.TemporaryFile()
        self.addCleanup(err.close)
        p = subprocess.Popen(cmd, env=harness.environment(True, env), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                             stderr=err)
        p.err_file = err
        self.procs.append(p)
        return p

    @staticmethod
    def err_of(p: subprocess.Popen) -> bytes:
        # pread: the child writes through the same open file, whose offset must not move.
        fd = p.err_file.fileno()
        return os.pread(fd, os.fstat(fd).st_size, 0)

    def finish(self, p: subprocess.Popen) -> tuple[bytes, bytes]:
        out, _ = p.communicate(timeout=LIMIT_S)
        return out, self.err_of(p)

    def await_parked(self, procs: list[subprocess.Popen], each: int, deadline: float) -> None:
        """Until every process said it parked `each` retries ("retrying in"): its failure is
        known to the fleet store and the park recorded. The upstream's count alone comes before
        that: a success sent then could find the key healthy at the park, and a retry parked on a
        healthy key keeps its own backoff, as it should."""
        while not all(self.err_of(p).count(b"retrying in") >= each for p in procs):
            self.assertLess(time.monotonic(), deadline, [self.err_of(p)[-500:] for p in procs])
            time.sleep(0.02)

    def await_counts(self, keys: list[str], at_least: int, deadline: float) -> None:
        while not all(self.up.count(k) >= at_least for k in keys):
            self.assertLess(time.monotonic(), deadline,
                            f"not every key reached {at_least} requests: {[self.up.count(k) for k in keys]}")
            time.sleep(0.02)

    def outage(self, n: int) -> tuple[list[str], list[str]]:
        """n keys, each behind its own path prefix armed to 529: their URLs."""
        keys = [self.key(f"p{i}") for i in range(n)]
        for i, k in enumerate(keys):
            self.arm(k, "529", f"/wake{i}/")
        return keys, [self.up.url(f"/wake{i}/v1/messages") for i in range(n)]

    def recover(self, keys: list[str]) -> float:
        """The provider recovers, then a new request (another process) succeeds at its first
        attempt: the key's first success. Returns when that success was sent."""
        for i, k in enumerate(keys):
            self.arm(k, "200", f"/wake{i}/")
        first = self.key("first")
        sent = time.monotonic()
        r = harness.curl(["-sS", self.up.script_url(first, "200")], preload=True, env=self.env())
        self.assertRun(r, 0, ok_body(first, 1))
        self.assertCount(self.up, first, 1, r)
        return sent

    def busy_key(self) -> subprocess.Popen:
        """Another process that keeps succeeding on the same host (a success every ~30 ms, for
        600 requests): the key is healthy, not in an outage."""
        busy = self.key("busy")
        feeder = self.spawn([harness.CURL, "-q", "-sS", "-o", "/dev/null", self.up.url(f"/s/{busy}-[1-600]/hang20")],
                            self.env(CURLRETRY_PERSISTENT=None, CURLRETRY_BASE_MS=None))
        deadline = time.monotonic() + LIMIT_S
        while self.up.count(f"{busy}-5") < 1:
            self.assertLess(time.monotonic(), deadline, "the busy process never got going")
            time.sleep(0.02)
        return feeder


class Easy(WakeTestCase):
    def test_processes_parked_in_an_outage_resume_at_the_first_success(self):
        keys, urls = self.outage(N)
        started = time.monotonic()
        procs = [self.spawn([harness.CURL, "-q", "-sS", u], self.env()) for u in urls]
        # Every process failed once and waits BASE for its second attempt.
        self.await_parked(procs, 1, started + LIMIT_S)
        self.assertTrue(all(self.up.count(k) == 1 for k in keys), [self.up.count(k) for k in keys])
        sent = self.recover(keys)
        self.await_counts(keys, 2, started + LIMIT_S)
        resumed = time.monotonic()
        outs = [self.finish(p) for p in procs]
        done = time.monotonic()
        print(f"FIGURE easy wake: {N} processes answered {done - sent:.2f} s after the first success; their own "
              f"backoff would send attempt 2 at {started + OWN_SECOND_S - sent:.1f} s", file=sys.stderr, flush=True)
        for p, k, (out, err) in zip(procs, keys, outs):
            with self.subTest(key=k):
                self.assertEqual(p.returncode, 0, err)
                self.assertEqual(out, ok_body(k, 2), err)
                self.assertEqual(self.up.count(k), 2, err)
                self.assertIn(b"another request's success ended the wait", err)
        self.assertLess(resumed - sent, WAKE_S)
        self.assertLess(done - sent, WAKE_S)
        # Far sooner than their own backoff would have sent the second attempt.
        self.assertLess(done - started, OWN_SECOND_S - 1.0)

    def test_a_retry_on_a_healthy_busy_key_keeps_its_own_backoff(self):
        # One path fails twice on a host whose other requests keep succeeding. Its retries met
        # no outage: each waits its own backoff (the built-in 1.5 s, then 3 s), never woken by
        # the busy key's successes.
        feeder = self.busy_key()
        k = self.key()
        r = harness.curl(["-sS", self.up.script_url(k, "503,503,200")], preload=True,
                         env=self.env(CURLRETRY_PERSISTENT=None, CURLRETRY_BASE_MS=None))
        self.assertIsNone(feeder.poll(), "the busy process ended before the failing request did")
        self.assertRun(r, 0, ok_body(k, 3))
        self.assertCount(self.up, k, 3, r)
        self.assertNotIn(b"another request's success ended the wait", r.stderr)
        # 1.5 s + 3 s of its own backoff (a wake would have ended each within ~0.1 s).
        self.assertGreaterEqual(r.elapsed, 4.5, str(r))

    def test_a_servers_stated_wait_is_not_cut_short(self):
        # An outage whose answers say "Retry-After: 5": each retry waits what its server said (a
        # Retry-After may be one credential's rate limit, which another request's success on the
        # host says nothing about), even though the key's first success comes meanwhile.
        keys = [self.key(f"p{i}") for i in range(3)]
        for i, k in enumerate(keys):
            self.arm(k, "529+ra=5", f"/wake{i}/")
        started = time.monotonic()
        procs = [self.spawn([harness.CURL, "-q", "-sS", self.up.url(f"/wake{i}/v1")], self.env()) for i in range(3)]
        self.await_counts(keys, 1, started + LIMIT_S)
        self.recover(keys)
        outs = [self.finish(p) for p in procs]
        done = time.monotonic()
        for p, k, (out, err) in zip(procs, keys, outs):
            with self.subTest(key=k):
                self.assertEqual(p.returncode, 0, err)
                self.assertEqual(out, ok_body(k, 2), err)
                self.assertEqual(self.up.count(k), 2, err)
                self.assertIn(b"retrying in 5000 ms (Retry-After)", err)
                self.assertNotIn(b"another request's success ended the wait", err)
        self.assertGreaterEqual(done - started, 5.0)


_LINE = re.compile(rb"^(\S+) result=(-?\d+) status=(\d+) body_sha256=([0-9a-f]{64}) len=(\d+) done=(\d+) ")


class Multi(WakeTestCase):
    def multi_outage(self, cmd_of):
        keys, urls = self.outage(N)
        started = time.monotonic()
        proc = self.spawn(cmd_of(urls), self.env())
        self.await_parked([proc], N, started + LIMIT_S)
        self.assertTrue(all(self.up.count(k) == 1 for k in keys), [self.up.count(k) for k in keys])
        sent = self.recover(keys)
        out, err = self.finish(proc)
        done = time.monotonic()
        self.assertEqual(proc.returncode, 0, err)
        for k in keys:
            self.assertEqual(self.up.count(k), 2, err)
        print(f"FIGURE multi wake ({os.path.basename(proc.args[0])}): {N} transfers answered {done - sent:.2f} s "
              f"after the first success", file=sys.stderr, flush=True)
        self.assertLess(done - sent, WAKE_S, err)
        self.assertLess(done - started, OWN_SECOND_S - 1.0, err)
        self.assertEqual(err.count(b"another request's success ended the wait"), N, err)
        return keys, urls, out, err

    def test_curl_parallel_transfers_parked_in_one_loop_resume_at_the_first_success(self):
        keys, _, out, err = self.multi_outage(
            lambda urls: [harness.CURL, "-q", "-sS", "--parallel", "--parallel-immediate",
                          "--parallel-max", str(N), *urls])
        # One body per transfer, in whatever order they finished.
        self.assertEqual(sorted(out.splitlines(keepends=True)), sorted(ok_body(k, 2) for k in keys), err)

    def uv_host(self) -> str:
        host = _multi_host("uv_host")
        if not os.access(host, os.X_OK):
            self.fail(f"uv_host not found ({host!r}): build the multi_hosts target")
        return host

    def test_socket_action_transfers_resume_at_the_first_success(self):
        host = self.uv_host()
        keys, urls, out, err = self.multi_outage(lambda urls: [host, *urls])
        lines = {m.group(1).decode(): m for m in map(_LINE.match, out.splitlines()) if m}
        for k, u in zip(keys, urls):
            with self.subTest(key=k):
                m = lines.get(u)
                self.assertIsNotNone(m, out)
                body = ok_body(k, 2)
                self.assertEqual((int(m.group(2)), int(m.group(3)), m.group(4).decode(), int(m.group(5)),
                                  int(m.group(6))), (0, 200, hashlib.sha256(body).hexdigest(), len(body), 1), out)

    def test_a_parked_transfer_on_a_healthy_key_costs_the_loop_no_extra_wakeups(self):
        # The 250 ms looks are only for a transfer that can be woken: a retry parked on a healthy
        # key (another process keeps succeeding) leaves the host's timer as libcurl and its own
        # due set it. With the looks, its 1.5 s backoff alone would fire the timer 6 times.
        feeder = self.busy_key()
        k = self.key()
        url = self.up.script_url(k, "503,200")
        r = harness.run([self.uv_host(), url], preload=True,
                        env=self.env(CURLRETRY_PERSISTENT=None, CURLRETRY_BASE_MS=None, MULTI_HOST_TRACE="1"))
        self.assertIsNone(feeder.poll(), "the busy process ended before the failing request did")
        self.assertEqual(r.code, 0, str(r))
        self.assertCount(self.up, k, 2, r)
        self.assertGreaterEqual(r.elapsed, 1.5, str(r))
        fired = r.stderr.count(b" timer fired\n")
        print(f"FIGURE healthy-key park, uv_host: the timer fired {fired} times in {r.elapsed:.2f} s",
              file=sys.stderr, flush=True)
        self.assertLess(fired, 6, str(r))
        body = ok_body(k, 2)
        self.assertIn(f"{url} result=0 status=200 body_sha256={hashlib.sha256(body).hexdigest()} "
                      f"len={len(body)} done=1 ".encode(), r.stdout)


if __name__ == "__main__":
    unittest.main()
