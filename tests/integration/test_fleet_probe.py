"""The fleet's half-open probe (issue 23): while a key fails outright (a failing run of 3 s with no
success since it began; 1 s for an unattended retry), its retries draw neither the bank nor the trickle; one at a time,
fleet-wide, goes as the probe, spaced from its own backoff, doubling, up to 8 s
(core/fleet_probe.h). The probe that finds the provider answering ends the outage, and every
waiting retry goes at the budget's pace. Before, a long outage cost the trickle: a token a second
for the whole fleet.

Real curl processes in unattended mode (CURLRETRY_PERSISTENT=1) under the preload, with the
default fleet, against the flaky upstream. The test has an upstream of its own (a fresh port: a
fresh fleet key in the module's store); the outage is the upstream's /arm endpoint (every
process's path prefix plays 529 until it is armed to 200 again). No new request comes at the
recovery: only a probe can find it.
"""

import subprocess
import sys
import time
import unittest

import harness
from harness import ok_body, overloaded_body

N = 16
# The processes' own backoff (exponential, no jitter): their first retries come 4 s after their
# first failures, when the key's failing run is already older than 3 s, so the outage is probed
# from its first retry (a younger run's retries draw the bank, as a fresh burst's must).
BASE_MS = 4000
OUTAGE_S = 20.0
# core::fleet_probe::kMaxGap: the longest a recovery waits for the next probe.
MAX_GAP_S = 8.0
# From the recovery to every process's answer: the next probe, then the release (10 tokens at a
# time, each given back as its retry succeeds), on a loaded 2-core box.
DRAIN_S = MAX_GAP_S + 3.0
LIMIT_S = OUTAGE_S + 60.0
# The outage's own retries waiting for the probe beside a fresh request.
CROWD = 24


def probes_within(seconds: float, base_ms: int = BASE_MS) -> int:
    """The probes the spacing allows in an outage of `seconds`: the first at the first retry
    (base_ms), then each spacing later, from base_ms doubling up to MAX_GAP_S."""
    at, gap, n = base_ms / 1000, base_ms / 1000, 0
    while at < seconds:
        n += 1
        at += gap
        gap = min(gap * 2, MAX_GAP_S)
    return n


class Probe(harness.ArmedUpstreamTestCase):
    def full_outage(self, n: int, outage_s: float, base_ms: int | None, name: str):
        """n unattended processes whose paths play 529 for outage_s, then 200 (`base_ms` None: the
        built-in backoff). Every answer is its path's 200, byte for byte, and none gave up for the
        budget. Returns the upstream requests during the outage, every process's stderr, and the
        seconds from the recovery to the last answer."""
        keys = [self.key(f"{name}{i}") for i in range(n)]
        for i, k in enumerate(keys):
            self.arm(k, "529", f"/{name}{i}/")
        env = harness.environment(True, {"CURLRETRY_PERSISTENT": "1", "CURLRETRY_LOG": "info",
                                         "CURLRETRY_BASE_MS": None if base_ms is None else str(base_ms)})
        started = time.monotonic()
        for i in range(n):
            self.procs.append(subprocess.Popen([harness.CURL, "-q", "-sS", self.up.url(f"/{name}{i}/v1/messages")],
                                               env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                               stderr=subprocess.PIPE))
        deadline = started + LIMIT_S
        while not all(self.up.count(k) >= 1 for k in keys):
            self.assertLess(time.monotonic(), deadline, [self.up.count(k) for k in keys])
            time.sleep(0.02)
        # The outage's length (the timeline the bound is computed for), not a synchronisation.
        time.sleep(max(0.0, started + outage_s - time.monotonic()))
        during = sum(self.up.count(k) for k in keys)
        for i, k in enumerate(keys):
            self.arm(k, "200", f"/{name}{i}/")
        recovered = time.monotonic()
        outs = [p.communicate(timeout=LIMIT_S) for p in self.procs]
        drain = time.monotonic() - recovered
        for p, k, (out, err) in zip(self.procs, keys, outs):
            with self.subTest(key=k):
                self.assertEqual(p.returncode, 0, err)
                self.assertEqual(out, ok_body(k, self.up.count(k)), err)
                self.assertNotIn(b"(budget)", err)
        return during, b"".join(err for _, err in outs), drain

    def test_persistent_processes_in_a_full_outage_send_one_probe_at_a_time(self):
        during, errs, drain = self.full_outage(N, OUTAGE_S, BASE_MS, "probe")
        allowed = probes_within(OUTAGE_S) + 1
        print(f"FIGURE probe: {N} persistent processes, {OUTAGE_S:.0f} s outage: {during} upstream requests "
              f"during it ({during - N} retries, {allowed} allowed), every answer {drain:.2f} s after "
              f"the recovery", file=sys.stderr, flush=True)
        # One probe at a time: the first attempts, then a retry a spacing (+1 for a probe racing the
        # arm above). Before, the bank (10) and the trickle (a token a second) went too: N + 26.
        self.assertLessEqual(during, N + allowed, errs.decode(errors="replace")[-3000:])
        self.assertIn(b"waiting for the fleet's probe", errs)
        # The probe after the recovery found it, and the waiting retries went at once behind it.
        self.assertLess(drain, DRAIN_S)

    def test_a_fresh_outage_is_probed_from_its_first_unattended_retries(self):
        # The built-in backoff: the first retries come 1.5 s after their failures, when the run is
        # older than core::fleet_probe::kUnattendedAge (1 s). They are probed: one at a time goes.
        # Before (a key failed outright only at 3 s for every retry), those first retries drew the
        # bank: 10 of them went into the outage at once, then the probes began (25 requests).
        n, outage_s, default_base_ms = 12, 5.0, 1500
        during, errs, drain = self.full_outage(n, outage_s, None, "fresh")
        allowed = probes_within(outage_s, default_base_ms) + 1  # +1: a probe racing the arm
        print(f"FIGURE fresh outage: {n} persistent processes, {outage_s:.0f} s: {during} upstream requests during it "
              f"({during - n} retries, {allowed} allowed), every answer {drain:.2f} s after the recovery",
              file=sys.stderr, flush=True)
        self.assertLessEqual(during, n + allowed, errs.decode(errors="replace")[-3000:])
        self.assertLess(drain, DRAIN_S)

    def test_a_young_runs_probe_never_refuses_an_unattended_retry_the_bank_would_send(self):
        # Two unattended requests fail together on a fresh key. A's retry (its own 1.3 s backoff)
        # goes as the probe, fails, and puts the next probe 1.3 s after it. B's retry comes at
        # 1.6 s, a run younger than core::budget::kOutageAge (3 s): the next probe (at 2.6 s)
        # cannot come before B's own timeout (curl -m 2.4). B takes a token from the bank instead,
        # as every retry of so young a run does, and its retry is answered: the earlier probe
        # delays, never denies (core::fleet_verdict::probe_stands; without it, B gave up with
        # reason "budget" at 1.6 s).
        a, b = self.key("a"), self.key("b")
        env_a = harness.environment(True, {"CURLRETRY_PERSISTENT": "1", "CURLRETRY_LOG": "debug",
                                           "CURLRETRY_BASE_MS": "1300"})
        env_b = harness.environment(True, {"CURLRETRY_PERSISTENT": "1", "CURLRETRY_LOG": "info",
                                           "CURLRETRY_BASE_MS": "1600"})
        pa = subprocess.Popen([harness.CURL, "-q", "-sS", "-m", "3", self.up.script_url(a, "503")], env=env_a,
                              stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.procs.append(pa)
        pb = subprocess.Popen([harness.CURL, "-q", "-sS", "-m", "2.4", self.up.script_url(b, "503,200")], env=env_b,
                              stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.procs.append(pb)
        out_b, err_b = pb.communicate(timeout=LIMIT_S)
        _, err_a = pa.communicate(timeout=LIMIT_S)  # A ends at its own -m 3, still failing
        self.assertIn(b"goes as the fleet's probe (the key fails outright)", err_a)
        self.assertEqual(pb.returncode, 0, err_b)
        self.assertEqual(out_b, ok_body(b, 2), err_b)
        self.assertEqual(self.up.count(b), 2, err_b)
        self.assertNotIn(b"(budget)", err_b)

    def get(self, key: str, script: str, **env) -> harness.Result:
        return harness.curl(["-sS", self.up.script_url(key, script)], preload=True,
                            env={"CURLRETRY_LOG": "info", **env})

    def test_a_retry_waits_for_the_probe_within_its_own_limits_and_explain_says_why(self):
        # A failing run older than 3 s: one-attempt 503s every 0.4 s (no gap longer than
        # core::budget::kRunGap), bounded by count; the sleeps are the outage's timeline.
        for i in range(10):
            k = self.key(f"outage{i}")
            self.assertRun(self.get(k, "503", CURLRETRY_MAX_ATTEMPTS="1"), 0, overloaded_body(k, 1))
            time.sleep(0.4)
        # A lone retry finds no probe under way: it goes as the probe (its own 4 s backoff: the
        # next probe no sooner than 4 s after its answer). Said at debug only.
        prober = self.key("prober")
        r = self.get(prober, "503", CURLRETRY_MAX_ATTEMPTS="2", CURLRETRY_BASE_MS="4000", CURLRETRY_LOG="debug")
        self.assertRun(r, 0, overloaded_body(prober, 2))
        self.assertIn(b"goes as the fleet's probe (the key fails outright)", r.stderr)
        e = harness.run([harness.CURLRETRY_BIN, "explain", "--status", "503", "GET",
                         self.up.script_url(self.key(), "503")], preload=False, env={})
        self.assertEqual(e.code, 0, str(e))  # 0: it would retry
        self.assertRegex(e.stdout, rb"\nfleet now: would wait \d+ ms for the fleet's probe \(the key fails outright in "
                                   rb"this machine's store\)\n")
        # Another request's retry (10 ms backoff) waits for the next probe, not for a token, and
        # goes as that probe: attempt 2, at the fleet's time. Before, it waited one more wait of
        # its own backoff (1 s) and gave up (budget) after 1 attempt, a request its own retries
        # could have saved.
        k = self.key()
        r = self.get(k, "503", CURLRETRY_MAX_ATTEMPTS="2")
        self.assertRun(r, 0, overloaded_body(k, 2))
        self.assertEqual(self.up.count(k), 2, str(r))
        self.assertIn(b"waiting for the fleet's probe (the key fails outright; the next probe in about", r.stderr)
        self.assertIn(b"giving up after 2 attempts (exhausted)", r.stderr)
        self.assertNotIn(b"(budget)", r.stderr)
        self.assertGreaterEqual(r.elapsed, 1.0, str(r))
        # The program's own timeout is a limit of the request: a retry whose next probe (8 s
        # after the last one failed) cannot come before it gives up at once, its response verbatim.
        k = self.key("timeout")
        r = harness.curl(["-sS", "-m", "3", self.up.script_url(k, "503")], preload=True,
                         env={"CURLRETRY_LOG": "info", "CURLRETRY_MAX_ATTEMPTS": "2"})
        self.assertRun(r, 0, overloaded_body(k, 1))
        self.assertEqual(self.up.count(k), 1, str(r))
        self.assertIn(b"giving up after 1 attempt (budget)", r.stderr)
        self.assertLess(r.elapsed, 3.0, str(r))

    def test_a_request_new_to_the_outage_gets_the_next_probe_before_the_outages_own_retries(self):
        # The outage: CROWD unattended curl processes, every answer 529, each retrying a second
        # after its last failure (backoff.max_ms 1 s). Once their failing run is 3 s old, each of
        # them waits for the fleet's probe, looking every 100 ms; the probe went to whichever
        # process looked first after it was due.
        crowd = self.key("crowd")
        self.arm(crowd, "529", "/crowd/")
        work = self.temp_dir()
        env = harness.environment(True, {"CURLRETRY_PERSISTENT": "1", "CURLRETRY_BASE_MS": "1000",
                                         "CURLRETRY_MAX_DELAY_MS": "1000", "CURLRETRY_LOG": "info"})
        for i in range(CROWD):
            with open(work / f"out{i}", "wb") as out, open(work / f"err{i}", "wb") as err:
                self.procs.append(subprocess.Popen([harness.CURL, "-q", "-sS", self.up.url(f"/crowd/{i}/v1/messages")],
                                                   env=env, stdin=subprocess.DEVNULL, stdout=out, stderr=err))
        # Until the key fails outright in the module's store (explain says what a retry would do).
        deadline = time.monotonic() + 30
        while True:
            e = harness.run([harness.CURLRETRY_BIN, "explain", "--status", "503", "GET",
                             self.up.script_url(self.key(), "503")], preload=False, env={})
            if b"for the fleet's probe" in e.stdout:
                break
            self.assertLess(time.monotonic(), deadline, str(e))
            time.sleep(0.2)
        # A request that has not probed: its first attempt fails (503), its retry would succeed.
        # It waits for the probe, and the next one is its (or, an open turn's going to the first
        # who looks, the one after), not one more of the outage's retries: it is the youngest
        # waiter (core::token_queue). Before, it won a probe as one of CROWD + 1 lookers, and gave
        # up (budget) after its allowance (its schedule, 1+2+4+8 s, plus 8 s) most of the time: a
        # request the fleet off saves.
        k = self.key("fresh")
        r = harness.curl(["-sS", self.up.script_url(k, "503,200")], preload=True,
                         env={"CURLRETRY_LOG": "info", "CURLRETRY_MAX_ATTEMPTS": "5",
                              "CURLRETRY_BASE_MS": "1000"})
        self.assertRun(r, 0, ok_body(k, 2))
        self.assertEqual(self.up.count(k), 2, str(r))
        self.assertIn(b"waiting for the fleet's probe", r.stderr)
        self.assertNotIn(b"(budget)", r.stderr)
        # The outage ends; the crowd's next probe finds it and every process gets its 200.
        self.arm(crowd, "200", "/crowd/")
        for i, p in enumerate(self.procs):
            with self.subTest(process=i):
                self.assertEqual(p.wait(timeout=60), 0, (work / f"err{i}").read_bytes()[-2000:])
                self.assertTrue((work / f"out{i}").read_bytes().startswith(b"ok key="))
                self.assertNotIn(b"(budget)", (work / f"err{i}").read_bytes())


if __name__ == "__main__":
    unittest.main()
