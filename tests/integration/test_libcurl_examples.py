"""libcurl's own example programs (Debian's libcurl4-doc), unmodified but for the URL they fetch,
under the preload against the flaky upstream: programs nobody on this team wrote.

Each is compiled at test time from /usr/share/doc/libcurl4/examples. Where an example hard-codes
https://example.com, the test replaces that literal with getenv("EXAMPLE_URL"); nothing else in
the source changes.
"""

from __future__ import annotations

import gzip
import hashlib
import os
import select
import shutil
import subprocess
import tempfile
import time
import unittest
from pathlib import Path

import harness

EXAMPLES = Path("/usr/share/doc/libcurl4/examples")
FAST = {"CURLRETRY_BASE_MS": "50"}


def example_source(name: str) -> str | None:
    for path in (EXAMPLES / f"{name}.c", EXAMPLES / f"{name}.c.gz"):
        if path.exists():
            data = path.read_bytes()
            return (gzip.decompress(data) if path.suffix == ".gz" else data).decode()
    return None


@unittest.skipUnless(EXAMPLES.is_dir(), harness.needs("libcurl4-doc", "libcurl's examples"))
@unittest.skipUnless(shutil.which("cc"), harness.needs("g++", "a C compiler (cc)"))
class LibcurlExamplesTest(harness.UpstreamTestCase):

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.upstream = cls.plain
        cls.work = Path(tempfile.mkdtemp(prefix="curlretry-examples-"))
        cls.addClassCleanup(shutil.rmtree, cls.work, True)

    def build(self, name: str, replace: dict[str, str] | None = None, libs: tuple[str, ...] = ()) -> Path:
        source = example_source(name)
        if source is None:
            self.skipTest(f"{name}.c is not in {EXAMPLES}")
        for old, new in (replace or {}).items():
            self.assertIn(old, source, f"{name}.c changed upstream: {old!r} not found")
            source = source.replace(old, new)
        src = self.work / f"{name}.c"
        src.write_text("#include <stdlib.h>\n" + source)
        exe = self.work / name
        subprocess.run(["cc", "-w", "-O1", "-o", str(exe), str(src), "-lcurl", *libs], check=True, timeout=120)
        return exe

    def url(self, key: str, script: str) -> str:
        return self.upstream.script_url(key, script)

    # --- multi, socket-action event loops ----------------------------------------------------

    def run_downloader(self, exe: Path, libs_name: str):
        """multi-uv / multi-event: URLs from argv, each saved to N.download in the cwd."""
        keys = {1: (self.key("a"), "503,200", 2), 2: (self.key("b"), "200", 1),
                3: (self.key("c"), "429+ra=1,200", 2), 4: (self.key("d"), "503,503,200", 3)}
        cwd = self.work / f"{libs_name}-run"
        cwd.mkdir(exist_ok=True)
        urls = [self.url(k, s) for k, s, _ in keys.values()]
        start = time.monotonic()
        result = harness.run([str(exe), *urls], preload=True, env=FAST, timeout=30, cwd=str(cwd))
        elapsed = time.monotonic() - start
        self.assertEqual(result.code, 0, str(result))
        for n, (k, _, attempts) in keys.items():
            # The programs name each download after its argv position.
            self.assertEqual((cwd / f"{n}.download").read_bytes(), harness.ok_body(k, attempts), str(result))
            self.assertEqual(self.upstream.count(k), attempts, str(result))
        self.assertLess(elapsed, 10, str(result))

    def test_multi_uv_libuv_socket_action(self):
        self.run_downloader(self.build("multi-uv", libs=("-luv",)), "uv")

    def test_multi_event_libevent_socket_action(self):
        self.run_downloader(self.build("multi-event", libs=("-levent",)), "event")

    def run_fifo_program(self, exe: Path):
        """hiperfifo (libevent) / ephiperfifo (epoll): URLs written to ./hiper.fifo."""
        cwd = self.work / f"{exe.name}-run"
        cwd.mkdir(exist_ok=True)
        keys = [(self.key("a"), "503,200", 2), (self.key("b"), "200", 1), (self.key("c"), "503,503,200", 3)]
        child = subprocess.Popen(["stdbuf", "-oL", str(exe)], cwd=str(cwd), env=harness.environment(True, FAST),
                                 stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        def stop():
            child.kill()
            child.wait(timeout=10)
            child.stdout.close()
        self.addCleanup(stop)
        fifo = cwd / "hiper.fifo"
        deadline = time.monotonic() + 10
        while not fifo.exists() and time.monotonic() < deadline:
            time.sleep(0.02)
        self.assertTrue(fifo.exists(), "the program never made its fifo")
        with open(fifo, "w") as f:
            f.write("".join(self.url(k, s) + "\n" for k, s, _ in keys))
        done: list[str] = []
        pending = b""
        deadline = time.monotonic() + 15
        while len(done) < len(keys) and time.monotonic() < deadline:
            ready, _, _ = select.select([child.stdout], [], [], max(0.0, deadline - time.monotonic()))
            if not ready:
                break
            chunk = os.read(child.stdout.fileno(), 65536)
            if not chunk:
                break
            pending += chunk
            *lines, pending = pending.split(b"\n")
            done += [l.decode() for l in lines if l.startswith(b"DONE: ")]
        for k, s, attempts in keys:
            self.assertIn(f"DONE: {self.url(k, s)} => (0) ", done, done)
            self.assertEqual(self.upstream.count(k), attempts)

    def test_hiperfifo_libevent(self):
        self.run_fifo_program(self.build("hiperfifo", libs=("-levent",)))

    def test_ephiperfifo_epoll(self):
        self.run_fifo_program(self.build("ephiperfifo"))

    # --- easy interface ----------------------------------------------------------------------

    def test_sepheaders_headers_and_body_to_separate_files(self):
        exe = self.build("sepheaders", {'"https://example.com"': 'getenv("EXAMPLE_URL")'})
        cwd = self.work / "sepheaders-run"
        cwd.mkdir(exist_ok=True)
        k = self.key("s")
        result = harness.run([str(exe)], preload=True, env=dict(FAST, EXAMPLE_URL=self.url(k, "503,200")),
                             timeout=30, cwd=str(cwd))
        self.assertEqual(result.code, 0, str(result))
        body = harness.ok_body(k, 2)
        self.assertEqual((cwd / "body.out").read_bytes(), body)
        self.assertEqual((cwd / "head.out").read_bytes(),
                         b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: %d\r\n\r\n" % len(body))
        self.assertEqual(self.upstream.count(k), 2)

    def test_httpput_read_callback_without_seek_is_replayed(self):
        exe = self.build("httpput")
        data = os.urandom(300_000)
        path = self.work / "put.bin"
        path.write_bytes(data)
        k = self.key("p")
        result = harness.run([str(exe), str(path), self.url(k, "503,echo")], preload=True, env=FAST, timeout=30)
        self.assertEqual(result.code, 0, str(result))
        expected = b"sha256=%s length=%d\n" % (hashlib.sha256(data).hexdigest().encode(), len(data))
        self.assertEqual(result.stdout, expected, str(result))
        self.assertEqual(self.upstream.count(k), 2)

    def test_post_callback_is_replayed(self):
        exe = self.build("post-callback", {'"https://example.com/index.cgi"': 'getenv("EXAMPLE_URL")'})
        k = self.key("c")
        result = harness.run([str(exe)], preload=True, env=dict(FAST, EXAMPLE_URL=self.url(k, "503,echo")),
                             timeout=30)
        self.assertEqual(result.code, 0, str(result))
        self.assertRegex(result.stdout, rb"^sha256=[0-9a-f]{64} length=424\n$")
        self.assertEqual(self.upstream.count(k), 2)


if __name__ == "__main__":
    unittest.main()
