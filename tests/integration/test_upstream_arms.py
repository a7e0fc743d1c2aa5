"""The flaky upstream's pieces for programs with fixed paths and host names (test_agents.py):
`/arm/<key>/<script>?path=<prefix>`, `--tls-name`, and `--listen` only on a loopback interface."""

from __future__ import annotations

import subprocess
import tempfile
import unittest
import urllib.error
import urllib.request

import harness
from harness import ok_body, overloaded_body


def get(upstream: harness.Upstream, path: str, method: str = "GET") -> tuple[int, bytes]:
    request = urllib.request.Request(upstream.url(path), method=method, data=b"{}" if method == "POST" else None)
    try:
        with urllib.request.urlopen(request, timeout=10) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()


class Arms(harness.UpstreamTestCase):
    def test_an_armed_prefix_plays_the_script_under_its_key(self):
        key = self.key()
        self.assertEqual(get(self.plain, f"/arm/{key}/503,200?path=/v1/messages"), (200, b"armed /v1/messages\n"))
        self.assertEqual(get(self.plain, "/v1/messages?beta=true", "POST"), (503, overloaded_body(key, 1)))
        self.assertEqual(get(self.plain, "/v1/messages", "POST"), (200, ok_body(key, 2)))
        self.assertEqual(self.plain.count(key), 2)
        # Other paths are untouched, and /s/ still plays its own scripts.
        self.assertEqual(get(self.plain, "/v1/models"), (404, b'{"error":"not found"}'))
        other = self.key("s")
        self.assertEqual(get(self.plain, f"/s/{other}/200"), (200, ok_body(other, 1)))

    def test_the_longest_prefix_wins_and_arming_again_replaces(self):
        wide, narrow = self.key("wide"), self.key("narrow")
        get(self.plain, f"/arm/{wide}/200?path=/v1beta/")
        get(self.plain, f"/arm/{narrow}/429?path=/v1beta/models/m%3AstreamGenerateContent")
        self.assertEqual(get(self.plain, "/v1beta/models/m:streamGenerateContent?alt=sse", "POST")[0], 429)
        self.assertEqual(get(self.plain, "/v1beta/models/m:countTokens", "POST"), (200, ok_body(wide, 1)))
        get(self.plain, f"/arm/{narrow}/201?path=/v1beta/models/m%3AstreamGenerateContent")
        self.assertEqual(get(self.plain, "/v1beta/models/m:streamGenerateContent", "POST"), (201, ok_body(narrow, 2)))

    def test_a_bad_script_or_prefix_arms_nothing(self):
        key = self.key()
        for path in (f"/arm/{key}/5033?path=/x", f"/arm/{key}/200", f"/arm/{key}/200?path=x"):
            with self.subTest(path=path):
                status, body = get(self.plain, path)
                self.assertEqual(status, 400, body)
                self.assertIn(b'"bad script"', body)
        self.assertEqual(get(self.plain, "/x")[0], 404)


class Listen(unittest.TestCase):
    def run_upstream(self, *args: str) -> subprocess.CompletedProcess:
        return subprocess.run([harness._upstream_binary(), *args], capture_output=True, timeout=20,
                              stdin=subprocess.DEVNULL)

    def test_an_address_of_no_loopback_interface_is_refused(self):
        for address in ("192.0.2.1", "0.0.0.0", "localhost"):
            with self.subTest(address=address):
                done = self.run_upstream("--listen", address)
                self.assertEqual(done.returncode, 1, done)
                self.assertEqual(done.stdout, b"")
                self.assertIn(b"flaky-upstream: listen address", done.stderr)

    def test_tls_names_are_in_the_certificate_and_checked(self):
        tls_names = ["api.example.com", "b.example.org"]
        # harness.Upstream has no knob for it: the binary as it starts it, with the names.
        cert = self.enterContext(tempfile.TemporaryDirectory()) + "/cert.pem"
        proc = subprocess.Popen([harness._upstream_binary(), "--tls", "--cert-out", cert,
                                 *[a for n in tls_names for a in ("--tls-name", n)]],
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        self.addCleanup(proc.wait, 10)
        self.addCleanup(proc.stdin.close)
        self.addCleanup(proc.stdout.close)
        self.assertTrue(proc.stdout.readline().startswith(b"port="))
        text = subprocess.run(["openssl", "x509", "-noout", "-ext", "subjectAltName", "-in", cert],
                              capture_output=True, check=True).stdout
        self.assertIn(b"DNS:localhost, IP Address:127.0.0.1, DNS:api.example.com, DNS:b.example.org", text)
        done = self.run_upstream("--tls", "--tls-name", "a.test,DNS:victim.example")
        self.assertEqual(done.returncode, 1, done)
        self.assertIn(b"is not a DNS name", done.stderr)
        done = self.run_upstream("--tls-name", "a.test")
        self.assertEqual(done.returncode, 2, done)
        self.assertIn(b"--tls-name needs --tls", done.stderr)


if __name__ == "__main__":
    unittest.main()
