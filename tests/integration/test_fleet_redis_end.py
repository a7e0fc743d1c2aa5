"""A cooldown in the Redis fleet store ends on evidence (issue 23, deliver 2): the first success
of a request sent after the cooldown was raised ends it fleet-wide, not only in the machine store
of the process that saw the success, and `curlretry fleet` says when and by whose success.

Three simulated machines (three machine stores, CURLRETRY_FLEET_DIR) share one real
redis-server: A is told 429 Retry-After: 30, B's plain request succeeds, C's retry must then go
at its own backoff instead of waiting out A's 30 s.
"""

import json
import socket
import subprocess
import time
import unittest

import harness
from harness import error_body, ok_body
from test_fleet import REDIS_SERVER, FleetTestCase, RedisServer

RETRY_AFTER_S = 30
# C's retry goes at its own backoff (base 10 ms): well inside this on a loaded box; held by the
# cooldown it would take ~30 s.
FAST_S = 5.0


@unittest.skipUnless(REDIS_SERVER, harness.needs("redis-server", "redis-server"))
class RedisCooldownEnds(FleetTestCase):

    def setUp(self):
        super().setUp()
        self.redis = RedisServer().start()
        self.addCleanup(self.redis.stop)
        self.machines = {}

    def machine_env(self, machine: int, **extra) -> dict:
        if machine not in self.machines:
            d = self.temp_dir() / f"machine{machine}"
            d.mkdir(mode=0o700)
            self.machines[machine] = str(d)
        return self.env(CURLRETRY_FLEET=self.redis.url, CURLRETRY_FLEET_DIR=self.machines[machine], **extra)

    def on(self, machine: int, key: str, script: str, header: str = "", **extra) -> harness.Result:
        """curl on `machine`; its first stdout line is its pid (the shell execs curl)."""
        args = ["-H", header] if header else []
        return harness.run(["sh", "-c", 'echo $$; exec "$@"', "sh", harness.CURL, "-q", "-sS", *args,
                            self.plain.script_url(key, script)], preload=True, env=self.machine_env(machine, **extra))

    def fleet_view(self, machine: int) -> dict:
        r = harness.run([harness.CURLRETRY_BIN, "fleet", "--json"], preload=False, env=self.machine_env(machine))
        self.assertRun(r, 0)
        view = json.loads(r.stdout)
        self.assertEqual((view["path"], view.get("redis_error")), (self.redis.url, None), r.stdout)
        return {k["key"]: k for k in view["keys"]}

    def raise_cooldown(self) -> int:
        k = self.key("setter")
        r = self.on(1, k, f"429+ra={RETRY_AFTER_S}", CURLRETRY_MAX_ATTEMPTS="1")
        pid, body = r.stdout.split(b"\n", 1)
        self.assertRun(r, 0)
        self.assertEqual(body, error_body("too many requests", k, 1), str(r))
        entry = self.fleet_view(3)[self.host_key()]
        self.assertGreater(entry["cooling_ms"], (RETRY_AFTER_S - 10) * 1000, entry)
        self.assertEqual((entry["status"], entry["pid"]), (429, int(pid)), entry)
        return int(pid)

    def test_a_success_on_another_machine_ends_the_cooldown_in_redis(self):
        setter = self.raise_cooldown()
        k = self.key("evidence")
        r = self.on(2, k, "200")
        pid, body = r.stdout.split(b"\n", 1)
        self.assertRun(r, 0)
        self.assertEqual(body, ok_body(k, 1), str(r))
        ender = int(pid)
        self.assertNotEqual(ender, setter)
        # Machine 3 has never run a request: what it shows comes from Redis.
        entry = self.fleet_view(3)[self.host_key()]
        self.assertEqual((entry["cooling_ms"], entry["ended_by"], entry["ended_pid"]), (0, "success", ender), entry)
        self.assertEqual(entry["ended_host"], socket.gethostname(), entry)
        # C, on a third machine, fails once: its retry is not held by the 30 s cooldown.
        k = self.key("retry")
        r = self.on(3, k, "503,200")
        self.assertRun(r, 0)
        self.assertEqual(r.stdout.split(b"\n", 1)[1], ok_body(k, 2), str(r))
        self.assertCount(self.plain, k, 2, r)
        self.assertLess(r.elapsed, FAST_S, str(r))
        # The text view names the end: by whose success, on which machine.
        t = harness.run([harness.CURLRETRY_BIN, "fleet"], preload=False, env=self.machine_env(3))
        self.assertRun(t, 0)
        self.assertRegex(t.stdout.decode(), rf"127\.0\.0\.1:{self.plain.port}\s+-\s+ended by a success \(pid {ender} on "
                         rf"{socket.gethostname()}, \d+\.\d s early\)")

    def test_a_credentials_cooldown_ends_in_redis_when_this_machine_holds_it(self):
        # A 429 with an API key cools that credential only. A success with the same key on the
        # machine that holds the cooldown ends it in Redis too: a retry with that key on another
        # machine is not held.
        key_header = "x-api-key: sk-test-fleet-end"
        k = self.key("setter")
        r = self.on(1, k, f"429+ra={RETRY_AFTER_S}", CURLRETRY_MAX_ATTEMPTS="1", header=key_header)
        self.assertRun(r, 0)
        cred = [e for name, e in self.fleet_view(3).items() if name.startswith(self.host_key() + " key:")]
        self.assertEqual(len(cred), 1, cred)
        self.assertGreater(cred[0]["cooling_ms"], (RETRY_AFTER_S - 10) * 1000, cred)
        k = self.key("evidence")
        r = self.on(1, k, "200", header=key_header)
        self.assertRun(r, 0)
        ender = int(r.stdout.split(b"\n", 1)[0])
        entry = self.fleet_view(3)[cred[0]["key"]]
        self.assertEqual((entry["cooling_ms"], entry["ended_by"], entry["ended_pid"]), (0, "success", ender), entry)
        k = self.key("retry")
        r = self.on(3, k, "429,200", header=key_header)
        self.assertRun(r, 0)
        self.assertEqual(r.stdout.split(b"\n", 1)[1], ok_body(k, 2), str(r))
        self.assertCount(self.plain, k, 2, r)
        self.assertLess(r.elapsed, FAST_S, str(r))

    def test_a_success_sent_before_the_cooldown_was_raised_does_not_end_it(self):
        # B's request is on the wire (answered 200 after 2 s) when A is told to come back later:
        # its success says nothing about later, so the cooldown stays.
        k = self.key("early")
        env = harness.environment(True, self.machine_env(2))
        b = subprocess.Popen([harness.CURL, "-q", "-sS", self.plain.script_url(k, "hang2000")], env=env,
                             stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        try:
            deadline = time.monotonic() + 10
            while self.plain.count(k) == 0 and time.monotonic() < deadline and b.poll() is None:
                time.sleep(0.02)
            self.assertEqual(self.plain.count(k), 1)
            self.raise_cooldown()
            out, err = b.communicate(timeout=30)
        finally:
            if b.poll() is None:
                b.kill()
                b.wait()
        self.assertEqual((b.returncode, out), (0, ok_body(k, 1)), err)
        entry = self.fleet_view(3)[self.host_key()]
        self.assertGreater(entry["cooling_ms"], (RETRY_AFTER_S - 10) * 1000, entry)
        self.assertEqual(entry["ended_by"], "", entry)


if __name__ == "__main__":
    unittest.main()
