"""Parity over HTTP/2 with TLS and multiplexed `curl --parallel` (issue 11 §9).

nghttpx (Debian's nghttp2-proxy) terminates TLS and speaks HTTP/2 to curl, and HTTP/1.1 to the
flaky upstream behind it. curl fetches several URLs at once over one multiplexed connection:
without the preload each URL's lucky script (`200`), under it a script that fails first
(`503,200`). The files written, exit code and HTTP version must be the same; each failing key is
asked exactly twice.
"""

from __future__ import annotations

import ctypes
import os
import shutil
import signal
import socket
import subprocess
import time
import unittest
from pathlib import Path

import harness
from harness import UpstreamTestCase
from test_parity_curl_cli import fold

NGHTTPX = shutil.which("nghttpx") or "/usr/sbin/nghttpx"
OPENSSL = shutil.which("openssl") or "/usr/bin/openssl"
HAVE_NGHTTPX = os.access(NGHTTPX, os.X_OK) and os.access(OPENSSL, os.X_OK)
URLS = 6


def _die_with_parent() -> None:
    # nghttpx must not outlive the test process, even if that is killed.
    ctypes.CDLL(None).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@unittest.skipUnless(HAVE_NGHTTPX, harness.needs("nghttp2-proxy", "nghttpx"))
class Http2Parallel(UpstreamTestCase):
    @classmethod
    def setUpClass(cls) -> None:
        super().setUpClass()
        d = Path(cls._tempdir())
        cls.cert, key = d / "cert.pem", d / "key.pem"
        subprocess.run([OPENSSL, "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
                        "-nodes", "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1", "-days", "1",
                        "-keyout", str(key), "-out", str(cls.cert)], check=True, capture_output=True, timeout=60)
        cls.port = free_port()
        cls.proxy = subprocess.Popen(
            [NGHTTPX, "--single-process", "--conf=/dev/null", f"--frontend=127.0.0.1,{cls.port}",
             f"--backend=127.0.0.1,{cls.plain.port}", "--no-ocsp", f"--errorlog-file={d / 'error.log'}",
             "--backend-connections-per-frontend=16", str(key), str(cls.cert)],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, preexec_fn=_die_with_parent)
        cls.addClassCleanup(cls._stop_proxy)
        deadline = time.monotonic() + 15
        while True:
            try:
                socket.create_connection(("127.0.0.1", cls.port), timeout=1).close()
                break
            except OSError:
                if cls.proxy.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"nghttpx did not listen on {cls.port}: "
                                       f"{(d / 'error.log').read_text() if (d / 'error.log').exists() else ''}")
                time.sleep(0.05)  # polling a condition, bounded by the deadline

    @classmethod
    def _tempdir(cls) -> str:
        import tempfile
        t = tempfile.TemporaryDirectory(prefix="curlretry-h2-")
        cls.addClassCleanup(t.cleanup)
        return t.name

    @classmethod
    def _stop_proxy(cls) -> None:
        harness.end_process(cls.proxy)

    def fetch(self, script: str, *, preload: bool) -> tuple[harness.Result, Path, list[str]]:
        out = self.temp_dir()
        keys = [f"{self.key()}-{i}" for i in range(URLS)]
        args = ["-sS", "--http2", "--cacert", str(self.cert), "--parallel", "--parallel-immediate",
                "--parallel-max", str(URLS), "-w", "%{http_version} %{response_code}\\n"]
        for i, key in enumerate(keys):
            args += [f"https://127.0.0.1:{self.port}/s/{key}/{script}", "-o", str(out / f"{i}.txt")]
        return harness.curl(args, preload=preload, timeout=60), out, keys

    def test_multiplexed_transfers_each_retried_to_the_lucky_answer(self):
        lucky, lucky_dir, lucky_keys = self.fetch("200", preload=False)
        retried, dir_, keys = self.fetch("503,200", preload=True)
        self.assertEqual(retried.code, lucky.code, f"{retried}\nlucky {lucky}")
        self.assertEqual(sorted(retried.stdout.splitlines()), [b"2 200"] * URLS, str(retried))
        self.assertEqual(sorted(lucky.stdout.splitlines()), [b"2 200"] * URLS, str(lucky))
        for i in range(URLS):
            self.assertEqual(fold((dir_ / f"{i}.txt").read_bytes(), keys[i]),
                             fold((lucky_dir / f"{i}.txt").read_bytes(), lucky_keys[i]))
            self.assertCount(self.plain, keys[i], 2, retried)

    def test_control_without_the_preload_every_transfer_gets_its_503(self):
        r, out, keys = self.fetch("503,200", preload=False)
        self.assertEqual(sorted(r.stdout.splitlines()), [b"2 503"] * URLS, str(r))
        for i in range(URLS):
            self.assertCount(self.plain, keys[i], 1, r)


if __name__ == "__main__":
    unittest.main()
