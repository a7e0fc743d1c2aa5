"""Fair waiting for a token in the Redis fleet store (issue 23, deliver 1: "waiting is roughly
fair across processes"): a token that is there goes to the youngest request waiting for one
(core/token_queue.h), fleet-wide, with every fourth token open to whoever asks first.

The Redis module (curlretry-fleet-redis.so, beside the preload library) is called through its C
boundary (fleet/redis_abi.h) against a real redis-server, with the caller's clock passed in, so
the order of the grants is exact; the machine store's half of the same rule is in
tests/unit/fleet/store_test.cpp.
"""

import ctypes
import os
import subprocess
import sys
import time
import unittest

import harness
from test_fleet import REDIS_SERVER, RedisServer

MODULE = os.path.join(os.path.dirname(harness.LIB), "curlretry-fleet-redis.so") if harness.LIB else ""


class Sync(ctypes.Structure):
    """struct curlretry_redis_sync, field for field."""
    _fields_ = [("key", ctypes.c_char_p), ("cred_key", ctypes.c_char_p), ("epoch", ctypes.c_uint),
                ("slots", ctypes.c_uint), ("add_requests", ctypes.c_uint), ("add_successes", ctypes.c_uint),
                ("refunds", ctypes.c_uint), ("taken", ctypes.c_uint), ("want_retry", ctypes.c_int), ("again", ctypes.c_int),
                ("percent", ctypes.c_int), ("reserve", ctypes.c_int), ("window_ms", ctypes.c_longlong),
                ("now_ms", ctypes.c_longlong), ("success_sent_ms", ctypes.c_longlong), ("born_ms", ctypes.c_longlong),
                ("who", ctypes.c_char_p), ("host_until_ms", ctypes.c_longlong), ("cred_until_ms", ctypes.c_longlong),
                ("requests", ctypes.c_ulonglong), ("tokens", ctypes.c_ulonglong), ("allowed", ctypes.c_int)]


def serve(port: int) -> None:
    """The child's side: load the module, connect, then answer one line per decision asked on
    stdin ("key now born refunds taken" -> "1" allowed, "0" refused, "E why" on an error)."""
    lib = ctypes.CDLL(MODULE)
    connect = lib.curlretry_redis_connect
    connect.restype = ctypes.c_void_p
    connect.argtypes = [ctypes.c_char_p, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_char_p, ctypes.c_ulong]
    err = ctypes.create_string_buffer(256)
    link = connect(b"127.0.0.1", port, 0, 2000, err, 256)
    if not link:
        print("E", err.value.decode(errors="replace"), flush=True)
        return
    sync = lib.curlretry_redis_sync_v6
    sync.argtypes = [ctypes.c_void_p, ctypes.POINTER(Sync), ctypes.c_char_p, ctypes.c_ulong]
    print("ready", flush=True)
    for line in sys.stdin:
        key, *numbers = line.split()
        now, born, refunds, taken = (int(x) for x in numbers)
        s = Sync(key=key.encode(), epoch=now // 500, slots=20, refunds=refunds, taken=taken, want_retry=1, percent=0,
                 reserve=2, window_ms=10_000_000, now_ms=now, born_ms=born, who=b"1 test")
        if sync(link, ctypes.byref(s), err, 256) != 0:
            print("E", err.value.decode(errors="replace"), flush=True)
        else:
            print(int(s.allowed == 1), flush=True)
    free = lib.curlretry_redis_free
    free.argtypes = [ctypes.c_void_p]
    free(link)


@unittest.skipUnless(REDIS_SERVER, harness.needs("redis-server", "redis-server"))
@unittest.skipUnless(MODULE and os.path.exists(MODULE), "the Redis module is not built beside CURLRETRY_LIB")
class RedisTokenQueue(unittest.TestCase):

    def setUp(self):
        self.redis = RedisServer().start()
        self.addCleanup(self.redis.stop)
        # The module is loaded in a child interpreter, never in this one: an instrumented build
        # (the asan and tsan presets) needs its sanitizer runtime loaded first, as every host the
        # suite starts gets it (harness.PRELOAD_PREFIX); dlopen'ing a TSan module into a plain
        # interpreter fails ("cannot allocate memory in static TLS block").
        env = {k: v for k, v in os.environ.items() if k != "LD_PRELOAD"}
        if harness.PRELOAD_PREFIX:
            env["LD_PRELOAD"] = harness.PRELOAD_PREFIX
        self.child = subprocess.Popen([harness.PYTHON, os.path.abspath(__file__), "--serve", str(self.redis.port)],
                                      stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env, text=True,
                                      cwd=os.path.dirname(os.path.abspath(__file__)))
        self.addCleanup(self._stop_child)
        self.assertEqual(self._line(), "ready")
        self.tries = 0

    def scenario(self, run) -> None:
        """Runs `run` on a fresh key until its decisions came in time (at most 3 tries).

        Redis's own clock stamps when a waiter last looked, and a waiter not seen for 250 ms
        (core::token_queue::kWaiterFresh) no longer waits: a gap that long between two decisions
        (a loaded machine descheduling this process) would test that rule, not the order. A try
        with such a gap goes again on a new key; its assertions hold in every try that is timely."""
        for _ in range(3):
            self.tries += 1
            self.key = f"q{self.tries}.example:443"
            self.now = int(time.time() * 1000)  # the caller's clock, passed in
            self.last = time.monotonic()
            self.slowest = 0.0
            answers = run()
            if self.slowest < 0.2:
                return answers
        self.skipTest(f"no timely try in 3 (slowest gap {self.slowest:.3f} s): the machine is too loaded")

    def _line(self) -> str:
        # Bounded: the child answers each line at once or has died (EOF).
        return self.child.stdout.readline().strip()

    def _stop_child(self) -> None:
        self.child.stdin.close()
        try:
            self.assertEqual(self.child.wait(timeout=10), 0)
        finally:
            if self.child.poll() is None:
                self.child.kill()
                self.child.wait()
            self.child.stdout.close()

    def take(self, born: int, at: int = 0, refunds: int = 0, taken: int = 0) -> bool:
        """A retry decision of a request born `born` ms before now, `at` ms after now: allowed?
        `refunds` and `taken` travel with it (Link::note_refund, Link::note_taken)."""
        self.child.stdin.write(f"{self.key} {self.now + at} {self.now - born} {refunds} {taken}\n")
        self.child.stdin.flush()
        answer = self._line()
        self.assertIn(answer, ("0", "1"), answer)
        done = time.monotonic()
        self.slowest, self.last = max(self.slowest, done - self.last), done
        return answer == "1"

    def test_a_token_goes_to_the_youngest_request_waiting(self):
        def run():
            # A new key starts full: 2 tokens (reserve 2, a window too long to trickle here).
            answers = [self.take(20_000), self.take(20_000)]
            answers.append(self.take(1_000))  # the fresh request waits
            # A token comes back (a retry that succeeded): the old request asks first and is
            # refused, the fresh one gets it.
            answers += [self.take(20_000, at=10, refunds=1), self.take(1_000, at=20)]
            # With no younger waiter the old one gets the next.
            answers.append(self.take(20_000, at=30, refunds=1))
            return answers

        self.assertEqual(self.scenario(run), [True, True, False, False, True, True])

    def test_every_fourth_token_is_open_so_the_oldest_never_starves(self):
        def run():
            answers = [self.take(60_000), self.take(60_000)]  # grants 1, 2
            for i in range(8):
                fresh = 1_000 - i  # a younger request waits for every token
                answers.append(self.take(fresh, at=i * 10))
                old = self.take(60_000, at=i * 10 + 1, refunds=1)
                answers.append(old)
                if not old:
                    answers.append(self.take(fresh, at=i * 10 + 2))
            return answers

        # Grants 3, 4 (open), 5, 6, 7, 8 (open), 9, 10: the old request takes the open ones; the
        # fresh one waits each time and takes every other token.
        expected = [True, True]
        for old in (False, True, False, False, False, True, False, False):
            expected += [False, old] + ([] if old else [True])
        self.assertEqual(self.scenario(run), expected)

    def test_retries_a_machine_store_let_go_while_redis_was_silent_are_charged(self):
        def run():
            # The bucket holds 2 tokens. A process whose Redis did not answer let 2 retries go on
            # its machine store: its next sync takes their tokens, and a decision finds none.
            answers = [self.take(20_000, taken=2)]
            # One of them succeeded: its token comes back with a later sync.
            answers.append(self.take(20_000, at=10, refunds=1))
            answers.append(self.take(20_000, at=20))
            return answers

        self.assertEqual(self.scenario(run), [False, True, False])


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--serve":
        serve(int(sys.argv[2]))
    else:
        unittest.main()
