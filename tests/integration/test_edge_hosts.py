"""Edge hosts (issue 5 §4): libcurl programs in the shapes that break preload libraries, run under
libcurlretry.so. The programs are in edge_hosts/ (built into CURLRETRY_EDGE_HOSTS_DIR) and know
nothing of curlretry; each checks its own invariants and says `CHECK FAILED: ...` when one breaks.

- 16 threads x 500 performs, each on handles of its own thread, each failing once (503, 200);
- fork() in the middle of a multi loop while transfers are parked between attempts, the child
  running transfers of its own, then 20 forks while three threads keep retrying: parent and
  children finish with the right bodies, no deadlock (every child has a 20 s alarm);
- two libcurl flavours in one process: a host that dlopen()s a plugin linked to libcurl.so.4 and
  one linked to libcurl-gnutls.so.4; both are retried, and each plugin's transfers are run by its
  own libcurl (the object that calls the plugin's CURLOPT_DEBUGFUNCTION, found with dladdr);
- a transfer from a library constructor that the loader runs before the shim's own initialisers,
  and transfers from atexit handlers (one that runs before the shim's static destructors, one
  after them) and from a library destructor;
- a host that closes every descriptor (close_range) and then triggers retry log lines: no crash,
  and no log line in the file the host opened on the freed descriptor (fd 3 after the shim's log
  descriptor was closed; fd 2 when everything was closed before the first log line);
- CURLOPT_PRIVATE set, changed and read back around retried transfers (easy, duphandle, multi).

Every server is a loopback flaky-upstream; every process runs under a timeout.
"""

from __future__ import annotations

import os
import re
import sys
import unittest
from pathlib import Path

import harness
from harness import UpstreamTestCase, ok_body


def _edge_dir() -> str:
    folder = os.environ.get("CURLRETRY_EDGE_HOSTS_DIR", "")
    if folder:
        return folder
    found = sorted(harness.REPO.glob("build*/tests/integration/edge_hosts/edge_host"), key=lambda p: p.stat().st_mtime)
    return str(found[-1].parent) if found else ""


EDGE_DIR = _edge_dir()
FAST = {"CURLRETRY_BASE_MS": "1"}
CURL_SO = "/lib/x86_64-linux-gnu/libcurl.so.4"
CURL_GNUTLS_SO = "/lib/x86_64-linux-gnu/libcurl-gnutls.so.4"


def host(name: str) -> str:
    path = os.path.join(EDGE_DIR, name)
    if not EDGE_DIR or not os.access(path, os.X_OK):
        raise unittest.SkipTest(f"CURLRETRY_EDGE_HOSTS_DIR: {path!r} is not built (target edge_hosts)")
    return path


def log_lines(result: harness.Result) -> list[str]:
    return [line for line in result.stderr.decode("utf-8", "replace").splitlines() if line.startswith("curlretry: ")]


class EdgeHostCase(UpstreamTestCase):

    def prefix(self) -> str:
        return self.key() + "-"

    def assertClean(self, result: harness.Result) -> None:
        """Exit 0, `result=0` last, no CHECK FAILED."""
        out = result.stdout.decode("utf-8", "replace")
        self.assertNotIn("CHECK FAILED", out + result.stderr.decode("utf-8", "replace"), str(result))
        self.assertEqual(result.code, 0, str(result))
        self.assertIn("result=0", out, str(result))


class ThreadsTest(EdgeHostCase):

    def run_threads(self, handles: str) -> None:
        prefix = self.prefix()
        result = harness.run([host("edge_host"), "threads", self.plain.origin, prefix, "16", "500", handles],
                             preload=True, env=FAST, timeout=300)
        self.assertClean(result)
        self.assertIn("ok threads=16 performs=8000 right=8000", result.stdout.decode(), str(result))
        lines = log_lines(result)
        retries = [line for line in lines if ": retrying in " in line]
        finals = [line for line in lines if line.endswith(" after 2 attempts")]
        self.assertEqual(len(retries), 8000, f"retry log lines\n{result}")
        self.assertEqual(len(finals), 8000, f"final log lines\n{result}")
        # Every body said attempt=2; a sample of counters says nothing was sent twice.
        for i, j in ((0, 0), (7, 250), (15, 499)):
            self.assertCount(self.plain, f"{prefix}t{i}-{j}", 2)
        print(f"\nFIGURE threads ({handles}): 16 x 500 retried performs in {result.elapsed:.2f} s",
              file=sys.stderr)

    def test_16_threads_x_500_performs_on_one_handle_per_thread(self):
        self.run_threads("reuse")

    def test_16_threads_x_500_performs_on_a_new_handle_each(self):
        self.run_threads("fresh")


class ForkTest(EdgeHostCase):

    def test_fork_in_the_middle_of_a_multi_loop_and_under_load(self):
        prefix = self.prefix()
        # Under ASan (gcc 12) a forked child can deadlock in the sanitizer's own allocator lock,
        # which it does not hold across fork(): the storm of forks is left to uninstrumented runs.
        forks = 0 if "asan" in harness.PRELOAD_PREFIX or "sanitizer" in harness.PRELOAD_PREFIX else 20
        result = harness.run([host("edge_host"), "fork", self.plain.origin, prefix], preload=True,
                             env=dict(FAST, EDGE_STORM_FORKS=str(forks)), timeout=150)
        self.assertClean(result)
        out = result.stdout.decode()
        self.assertRegex(out, r"parent: forking \d+ ms into the loop with [0-7] of 8 transfers done")
        self.assertIn("ok fork-mid-loop parent=8/8 child=right", out)
        self.assertIn(f"ok fork-storm children={forks}/{forks}", out)
        self.assertRegex(out, r"background_right=[1-9]\d* background_wrong=0")
        for i in range(8):
            self.assertCount(self.plain, f"{prefix}parent-m{i}", 3, result)
        self.assertCount(self.plain, f"{prefix}child-easy", 2, result)
        for i in range(4):
            self.assertCount(self.plain, f"{prefix}child-m{i}", 2, result)
        for i in range(forks):
            self.assertCount(self.plain, f"{prefix}storm-{i}", 2, result)


class FlavoursTest(EdgeHostCase):
    """One process, two libcurls: each plugin must be retried, and served by its own library."""

    @classmethod
    def setUpClass(cls) -> None:
        super().setUpClass()
        for name in ("flavours_host", "plugin_openssl.so", "plugin_gnutls.so"):
            path = os.path.join(EDGE_DIR, name)
            if not os.path.exists(CURL_GNUTLS_SO):
                raise unittest.SkipTest(harness.needs("libcurl3-gnutls", CURL_GNUTLS_SO))
            if not EDGE_DIR or not os.path.exists(path):
                raise unittest.SkipTest(f"{path!r} is not built (target edge_hosts)")
        tls = cls.tls()
        cls.prefix_ = f"flavours-{os.getpid()}-"
        cls.result = harness.run([os.path.join(EDGE_DIR, "flavours_host"), EDGE_DIR, cls.plain.origin, tls.origin,
                                  tls.cert, cls.prefix_], preload=True, env=FAST, timeout=150)
        cls.reports: dict[tuple[str, str, str], dict[str, str]] = {}
        for line in cls.result.stdout.decode("utf-8", "replace").splitlines():
            m = re.match(r"^(seq|par) (openssl|gnutls) (http|multi|https) (.*)$", line)
            if m:
                fields = dict(re.findall(r"(\w+)=(\S*)", m.group(4).split(" body=")[0]))
                fields["body"] = m.group(4).split(" body=", 1)[1] if " body=" in m.group(4) else ""
                cls.reports[(m.group(1), m.group(2), m.group(3))] = fields
            m = re.match(r"^(seq|par) (openssl|gnutls) version=(.*) version_lib=(\S+)$", line)
            if m:
                cls.reports[(m.group(1), m.group(2), "version")] = {"version": m.group(3), "lib": m.group(4)}

    def report(self, round_: str, flavour: str, what: str) -> dict[str, str]:
        found = self.reports.get((round_, flavour, what))
        self.assertIsNotNone(found, f"no report for {round_} {flavour} {what}\n{self.result}")
        return found

    def test_the_host_ran(self):
        self.assertEqual(self.result.code, 0, str(self.result))

    def test_each_plugin_reaches_its_own_libcurl_directly(self):
        """Sanity of the setup: curl_version() (not interposed) from each plugin."""
        for round_ in ("seq", "par"):
            self.assertIn("OpenSSL/", self.report(round_, "openssl", "version")["version"])
            self.assertIn("GnuTLS/", self.report(round_, "gnutls", "version")["version"])
            self.assertEqual(os.path.realpath(self.report(round_, "gnutls", "version")["lib"]),
                             os.path.realpath(CURL_GNUTLS_SO))

    def test_both_flavours_are_retried(self):
        for round_ in ("seq", "par"):
            for flavour in ("openssl", "gnutls"):
                for what in ("http", "multi", "https"):
                    with self.subTest(round=round_, flavour=flavour, what=what):
                        r = self.report(round_, flavour, what)
                        key = f"{self.prefix_}{round_}-{flavour}-{what}"
                        self.assertEqual(r["result"], "0", f"{r}\n{self.result}")
                        self.assertEqual(r["status"], "200", f"{r}\n{self.result}")
                        self.assertEqual(r["body"] + "\n", ok_body(key, 2).decode(), f"{r}")
                        upstream = self.tls() if what == "https" else self.plain
                        self.assertCount(upstream, key, 2, self.result)

    def test_each_flavour_is_served_by_its_own_library(self):
        """The object that ran each transfer (the caller of the plugin's debug callback) is the
        libcurl that plugin links: a shim that routed both plugins to one library would show it
        here, naming the library that served the other flavour's handle."""
        own = {"openssl": os.path.realpath(CURL_SO), "gnutls": os.path.realpath(CURL_GNUTLS_SO)}
        for round_ in ("seq", "par"):
            for flavour in ("openssl", "gnutls"):
                for what in ("http", "multi", "https"):
                    with self.subTest(round=round_, flavour=flavour, what=what):
                        r = self.report(round_, flavour, what)
                        served = os.path.realpath(r["served_by"]) if r["served_by"] != "-" else "-"
                        self.assertEqual(served, own[flavour],
                                         f"the {flavour} plugin's {what} transfer ({round_}) was run by {served}, "
                                         f"not by its own {own[flavour]}")
                        self.assertEqual(r["other_lib"], "-", f"a second object ran part of it: {r}")


class LifecycleTest(EdgeHostCase):
    """Transfers at the edges of the process's life (edge_hosts/ctor_lib.c, ctor_host.c)."""

    def run_ctor_host(self, prefix: str, skip_ctor: bool, only_at_exit: bool = False) -> harness.Result:
        env = dict(FAST, EDGE_ORIGIN=self.plain.origin, EDGE_KEYPREFIX=prefix)
        if skip_ctor:
            env["EDGE_SKIP_CTOR"] = "1"
        if only_at_exit:
            env["EDGE_ONLY_AT_EXIT"] = "1"
        return harness.run([host("ctor_host")], preload=True, env=env, timeout=60)

    def lines(self, result: harness.Result) -> dict[str, list[str]]:
        """Report lines by the place that made the transfer (a place may report more than once
        if its code ran more than once)."""
        out: dict[str, list[str]] = {}
        for line in result.stdout.decode("utf-8", "replace").splitlines():
            where, _, rest = line.partition(" ")
            out.setdefault(where, []).append(rest)
        return out

    def assertRetried(self, lines: dict[str, list[str]], prefix: str, where: str, result: harness.Result) -> None:
        """Exactly one transfer from `where`, retried once, the second attempt's body."""
        self.assertIn(where, lines, f"no transfer reported from {where}\n{result}")
        self.assertEqual(len(lines[where]), 1, f"{where} ran {len(lines[where])} times: {lines[where]}\n{result}")
        self.assertEqual(lines[where][0], f"result=0 status=200 body={ok_body(prefix + where, 2).decode().rstrip()}",
                         f"{where}\n{result}")
        self.assertCount(self.plain, prefix + where, 2, result)

    def test_the_constructor_runs_before_the_shim_initialises(self):
        """The premise of the next test, shown by the dynamic loader itself."""
        result = harness.run([host("ctor_host")], preload=True, env={"LD_DEBUG": "files"}, timeout=60)
        order = [os.path.basename(m) for m in re.findall(r"calling init: (\S+)", result.stderr.decode())]
        # The last process in the trace is ctor_host itself.
        self.assertIn("libedge_ctor.so", order, str(result))
        self.assertIn(os.path.basename(harness.LIB), order, str(result))
        ctor = len(order) - 1 - order[::-1].index("libedge_ctor.so")
        shim = len(order) - 1 - order[::-1].index(os.path.basename(harness.LIB))
        self.assertLess(ctor, shim, f"init order {order}")

    def test_transfer_from_a_constructor_that_runs_before_the_shim(self):
        prefix = self.prefix()
        result = self.run_ctor_host(prefix, skip_ctor=False)
        self.assertEqual(result.code, 0, f"ctor_host (constructor transfer before the shim's initialisers)\n{result}")
        lines = self.lines(result)
        self.assertEqual(len(lines.get("load", [])), 1, str(result))
        for where in ("ctor", "main", "atexit-late", "atexit-early", "dtor"):
            self.assertRetried(lines, prefix, where, result)

    def test_transfers_from_exit_handlers_and_a_destructor(self):
        """atexit-late runs before the shim's static destructors, atexit-early and the library
        destructor after them."""
        prefix = self.prefix()
        result = self.run_ctor_host(prefix, skip_ctor=True)
        self.assertEqual(result.code, 0, str(result))
        lines = self.lines(result)
        self.assertEqual(len(lines.get("load", [])), 1, str(result))
        for where in ("main", "atexit-late", "atexit-early", "dtor"):
            self.assertRetried(lines, prefix, where, result)


    def test_first_use_of_the_shim_during_exit(self):
        """No transfer before exit: the shim is first entered from a library destructor during
        _dl_fini (then from that library's exit handler, after the shim's static destructors).
        The library's constructor must not run again, nor its exit handler twice."""
        prefix = self.prefix()
        result = self.run_ctor_host(prefix, skip_ctor=True, only_at_exit=True)
        self.assertEqual(result.code, 0, str(result))
        lines = self.lines(result)
        self.assertEqual(len(lines.get("load", [])), 1,
                         f"ctor_lib's constructor ran {len(lines.get('load', []))} times\n{result}")
        self.assertEqual(sorted(lines), ["atexit-early", "dtor", "load"], str(result))
        # The library's destructor runs first (glibc's _dl_fini), then its exit handler
        # (__cxa_finalize of the library): each exactly once, as without the shim.
        for where in ("dtor", "atexit-early"):
            self.assertRetried(lines, prefix, where, result)


class CloseFdsTest(EdgeHostCase):

    def run_closefds(self, when: str) -> tuple[harness.Result, Path]:
        data = self.temp_dir() / "data"
        prefix = self.prefix()
        result = harness.run([host("edge_host"), "closefds", self.plain.origin, prefix, str(data), when],
                             preload=True, env=FAST, timeout=60)
        self.prefix_ = prefix
        return result, data

    def test_log_descriptor_closed_and_reused_after_the_first_log_line(self):
        result, data = self.run_closefds("after")
        self.assertClean(result)
        self.assertIn("data file on fd 3", result.stdout.decode(), str(result))
        self.assertIn("ok closefds-after transfer=right", result.stdout.decode(), str(result))
        content = data.read_bytes()
        self.assertNotIn(b"curlretry", content, f"log lines in the host's own file:\n{content!r}")
        self.assertEqual(content, b"host data line 1\nhost data line 2\n")
        self.assertCount(self.plain, self.prefix_ + "second", 3, result)

    def test_everything_closed_before_the_first_log_line_file_on_fd_2(self):
        """The host closed fds 0-2 as well and its data file is now fd 2: the shim's first log
        line must not go into it."""
        result, data = self.run_closefds("before")
        report = Path(str(data) + ".report").read_text()
        self.assertEqual(result.code, 0, f"{result}\nreport: {report}")
        self.assertIn("data file on fd 2", report)
        self.assertIn("ok closefds-before transfer=right", report)
        self.assertNotIn("CHECK FAILED", report)
        self.assertCount(self.plain, self.prefix_ + "second", 3, result)
        content = data.read_bytes()
        self.assertNotIn(b"curlretry", content, f"log lines in the host's own file (fd 2):\n{content!r}")


class PrivateTest(EdgeHostCase):

    def test_curlopt_private_survives_retries(self):
        prefix = self.prefix()
        result = harness.run([host("edge_host"), "private", self.plain.origin, prefix], preload=True, env=FAST,
                             timeout=60)
        self.assertClean(result)
        self.assertIn("ok private easy=right multi=3/3", result.stdout.decode(), str(result))
        for key, count in (("easy1", 3), ("easy2", 2), ("dup", 2), ("multi0", 2), ("multi1", 2), ("multi2", 3)):
            self.assertCount(self.plain, prefix + key, count, result)


if __name__ == "__main__":
    unittest.main()
