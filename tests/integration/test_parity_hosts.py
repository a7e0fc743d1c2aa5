"""The parity sweep's rows that need a C program (issue 11 §9): CURLOPT_HEADER with
CURLINFO_HEADER_SIZE / CURLINFO_REQUEST_SIZE after a retry, and CURLOPT_CONNECT_ONLY with
curl_easy_send/recv, where libcurl runs no HTTP at all and nothing may be retried. Pause and
unpause from a write callback are test_easy_hosts.py's PauseTest; read-callback uploads are
test_parity_uploads.py.
"""

from __future__ import annotations

import os
import unittest

import harness
from harness import UpstreamTestCase
from test_parity_curl_cli import fold

PARITY_HOSTS = os.environ.get("CURLRETRY_PARITY_HOSTS_DIR", "")
INFO_HOST = os.path.join(PARITY_HOSTS, "info_host") if PARITY_HOSTS else ""


def values(r: harness.Result) -> dict[str, str]:
    out = {}
    for line in r.stderr.decode("utf-8", "replace").splitlines():
        if not line.startswith("curlretry:"):
            out.update(w.split("=", 1) for w in line.split() if "=" in w)
    return out


class InfoHost(UpstreamTestCase):
    @classmethod
    def setUpClass(cls) -> None:
        if not INFO_HOST or not os.access(INFO_HOST, os.X_OK):
            raise RuntimeError(f"info_host not found ({INFO_HOST!r}): build the info_host target "
                               "(tests/integration/parity_hosts) and set CURLRETRY_PARITY_HOSTS_DIR")
        super().setUpClass()

    def keys(self) -> tuple[str, str]:
        base = self.key()
        return base + "-l", base + "-r"

    def test_header_in_the_body_stream_and_header_size_after_a_retry(self):
        lk, rk = self.keys()
        # The lucky script as long as the other: CURLINFO_REQUEST_SIZE counts the path.
        lucky = harness.run([INFO_HOST, "header-size", self.plain.script_url(lk, "200,200,200")], preload=False)
        retried = harness.run([INFO_HOST, "header-size", self.plain.script_url(rk, "503,429,200")], preload=True)
        self.assertEqual((retried.code, lucky.code), (0, 0), f"{retried}\n{lucky}")
        self.assertEqual(fold(retried.stdout, rk), fold(lucky.stdout, lk))
        self.assertEqual(values(retried), values(lucky))
        self.assertEqual(values(retried)["status"], "200")
        self.assertCount(self.plain, rk, 3, retried)

    def test_connect_only_send_recv_is_the_programs_own(self):
        runs = []
        for preload in (False, True):
            key = self.key()
            r = harness.run([INFO_HOST, "connect-only", self.plain.origin + "/", f"/s/{key}/503,200"], preload=preload)
            self.assertEqual(r.code, 0, str(r))
            self.assertCount(self.plain, key, 1, r)
            runs.append((r, key))
        (plain, pk), (pre, k) = runs
        self.assertEqual(fold(pre.stdout, k), fold(plain.stdout, pk))
        self.assertTrue(pre.stdout.startswith(b"HTTP/1.1 503 "), str(pre))
        self.assertEqual(values(pre), values(plain))
        self.assertNotIn(b"curlretry:", pre.stderr)


if __name__ == "__main__":
    unittest.main()
