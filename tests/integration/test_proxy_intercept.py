"""`curlretry proxy` intercepting CONNECT for `proxy.intercept` hosts with its local CA
(`curlretry proxy ca`): real clients (curl -x, Python urllib and requests through HTTPS_PROXY)
against the flaky upstream's TLS side, retried inside the tunnel; other hosts stay blind tunnels."""

from __future__ import annotations

import json
import os
import socket
import ssl
import stat
import subprocess
import tempfile
import time
import unittest
from pathlib import Path

import harness
from harness import ok_body, overloaded_body, pattern_bytes
from proxy_support import Proxy, recv_all, wait_for

ESTABLISHED = b"HTTP/1.1 200 Connection Established\r\n\r\n"


def ca_command(data_home: str, *args: str) -> harness.Result:
    return harness.run([harness.CURLRETRY_BIN, "proxy", "ca", *args], preload=False,
                       env={"XDG_DATA_HOME": data_home})


def intercept_config(tls_cert: str, extra: str = "") -> str:
    return (f"version: 1\nproxy:\n  max_body_bytes: 65536\n  intercept: [\"127.0.0.1\", \"*.never.example\"]\n"
            f"  upstream_ca_file: {tls_cert}\n"
            # The tests' upstream is on loopback, on its own port: not a default target (proxy.forward).
            "  forward: {allow_ports: any, allow_loopback: true}\n"
            f"{extra}")


class LocalCa(unittest.TestCase):
    """`curlretry proxy ca`: created once, private, refused when it is not."""

    def setUp(self):
        self._dir = tempfile.TemporaryDirectory(prefix="curlretry-ca-")
        self.addCleanup(self._dir.cleanup)
        self.data_home = self._dir.name
        self.ca_dir = Path(self.data_home) / "curlretry" / "ca"

    def test_created_once_private_and_reused(self):
        first = ca_command(self.data_home)
        self.assertEqual(first.code, 0, first.stderr)
        self.assertIn(b"created the local CA in " + str(self.ca_dir).encode(), first.stderr)
        bundle = self.ca_dir / "bundle.pem"
        self.assertEqual(first.stdout.decode().splitlines(), [
            f"NODE_EXTRA_CA_CERTS={self.ca_dir / 'ca.pem'}", f"SSL_CERT_FILE={bundle}",
            f"REQUESTS_CA_BUNDLE={bundle}", f"GIT_SSL_CAINFO={bundle}", f"CURL_CA_BUNDLE={bundle}"])
        self.assertEqual(stat.S_IMODE(self.ca_dir.stat().st_mode), 0o700)
        self.assertEqual(stat.S_IMODE((self.ca_dir / "ca-key.pem").stat().st_mode), 0o600)
        cert = (self.ca_dir / "ca.pem").read_bytes()
        key = (self.ca_dir / "ca-key.pem").read_bytes()
        # The bundle: the system store first (programs that replace the store still trust the world), then ours.
        system = Path(ssl.get_default_verify_paths().openssl_cafile).read_bytes()
        self.assertTrue(bundle.read_bytes().startswith(system))
        self.assertTrue(bundle.read_bytes().endswith(cert))
        text = subprocess.run(["openssl", "x509", "-noout", "-text"], input=cert, capture_output=True).stdout
        self.assertIn(b"CA:TRUE", text)
        self.assertIn(b"prime256v1", text)

        again = ca_command(self.data_home, "--json")
        self.assertEqual(again.code, 0, again.stderr)
        answer = json.loads(again.stdout)
        self.assertFalse(answer["created"])
        self.assertEqual(answer["env"]["REQUESTS_CA_BUNDLE"], str(bundle))
        self.assertEqual((self.ca_dir / "ca.pem").read_bytes(), cert)
        self.assertEqual((self.ca_dir / "ca-key.pem").read_bytes(), key)

    def test_sessions_creating_it_at_once_make_one_ca(self):
        env = harness.environment(False, {"XDG_DATA_HOME": self.data_home})
        procs = [subprocess.Popen([harness.CURLRETRY_BIN, "proxy", "ca", "--json"], env=env, stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, stdin=subprocess.DEVNULL) for _ in range(6)]
        answers = [json.loads(p.communicate(timeout=60)[0]) for p in procs]
        self.assertEqual(sorted(a["created"] for a in answers), [False] * 5 + [True])
        pubkeys = [subprocess.run(cmd, capture_output=True, check=True).stdout for cmd in (
            ["openssl", "x509", "-noout", "-pubkey", "-in", str(self.ca_dir / "ca.pem")],
            ["openssl", "pkey", "-pubout", "-in", str(self.ca_dir / "ca-key.pem")])]
        self.assertEqual(pubkeys[0], pubkeys[1])

    def test_a_key_open_to_others_is_refused(self):
        self.assertEqual(ca_command(self.data_home).code, 0)
        os.chmod(self.ca_dir / "ca-key.pem", 0o644)
        result = ca_command(self.data_home)
        self.assertEqual(result.code, 1)
        self.assertIn(b"ca-key.pem is open to others (mode 0644, must be 0600); refusing it", result.stderr)
        self.assertEqual(result.stdout, b"")

    def test_a_directory_open_to_others_is_refused(self):
        self.assertEqual(ca_command(self.data_home).code, 0)
        os.chmod(self.ca_dir, 0o755)
        result = ca_command(self.data_home)
        self.assertEqual(result.code, 1)
        self.assertIn(b"is open to others (mode 0755, must be 0700)", result.stderr)

    @unittest.skipUnless(os.geteuid() == 0, "needs root to give the directory to another user")
    def test_a_directory_of_another_user_is_refused(self):
        self.assertEqual(ca_command(self.data_home).code, 0)
        os.chown(self.ca_dir, 65534, 65534)
        result = ca_command(self.data_home)
        self.assertEqual(result.code, 1)
        self.assertIn(b"belongs to uid 65534, not to you", result.stderr)

    def test_bad_flags_get_the_usage_and_2(self):
        result = ca_command(self.data_home, "--bundle")
        self.assertEqual(result.code, 2)
        self.assertEqual(result.stderr, b"curlretry: proxy ca: unknown argument \"--bundle\"\n"
                                        b"usage: curlretry proxy ca [--json]\n")
        self.assertFalse(self.ca_dir.exists())

    def test_intercept_without_a_ca_is_refused_at_start(self):
        with tempfile.TemporaryDirectory() as empty:
            proxy = Proxy("version: 1\nproxy:\n  intercept: [\"127.0.0.1\"]\n", env={"XDG_DATA_HOME": empty})
            with self.assertRaises(RuntimeError) as caught:
                proxy.start()
            proxy.stop()
        self.assertIn("curlretry proxy exited 1", str(caught.exception))
        self.assertIn("proxy.intercept in", str(caught.exception))
        self.assertIn("create it with `curlretry proxy ca`", str(caught.exception))


class Interception(harness.UpstreamTestCase):
    proxy: Proxy

    @classmethod
    def setUpClass(cls) -> None:
        super().setUpClass()
        cls._home = tempfile.TemporaryDirectory(prefix="curlretry-ca-")
        cls.addClassCleanup(cls._home.cleanup)
        made = ca_command(cls._home.name)
        assert made.code == 0, made.stderr
        cls.bundle = str(Path(cls._home.name) / "curlretry" / "ca" / "bundle.pem")
        cls.ca_cert = str(Path(cls._home.name) / "curlretry" / "ca" / "ca.pem")
        cls.proxy = Proxy(intercept_config(cls.tls().cert), env={"XDG_DATA_HOME": cls._home.name}).start()
        cls.addClassCleanup(cls.proxy.stop)

    def curl(self, *args: str) -> harness.Result:
        return harness.curl(["-sS", "-i", "-x", self.proxy.url(""), *args], preload=False)

    def client_env(self, **extra: str) -> dict[str, str | None]:
        return {"HTTPS_PROXY": self.proxy.url(""), "https_proxy": self.proxy.url(""), "NO_PROXY": None,
                "no_proxy": None, **extra}

    def test_curl_x_503_503_200_is_one_clean_response(self):
        tls = self.tls()
        key = self.key()
        result = self.curl("--cacert", self.bundle, tls.script_url(key, "503,503,200"))
        self.assertRun(result, 0, ESTABLISHED + harness.head("HTTP/1.1 200 OK", "text/plain", len(ok_body(key, 3)))
                       + ok_body(key, 3))
        self.assertCount(tls, key, 3, result)

    def test_curl_x_give_up_is_verbatim(self):
        tls = self.tls()
        key = self.key()
        result = self.curl("--cacert", self.bundle, tls.script_url(key, "503"))
        body = overloaded_body(key, 3)
        self.assertRun(result, 0, ESTABLISHED + harness.head("HTTP/1.1 503 Service Unavailable", "application/json",
                                                             len(body)) + body)
        self.assertCount(tls, key, 3, result)

    def test_the_leaf_names_the_host_and_is_short_lived(self):
        tls = self.tls()
        with socket.create_connection(("127.0.0.1", self.proxy.port), timeout=10) as raw:
            raw.sendall(f"CONNECT 127.0.0.1:{tls.port} HTTP/1.1\r\nHost: 127.0.0.1:{tls.port}\r\n\r\n".encode())
            self.assertEqual(raw.recv(len(ESTABLISHED), socket.MSG_WAITALL), ESTABLISHED)
            context = ssl.create_default_context(cafile=self.ca_cert)
            context.set_alpn_protocols(["h2", "http/1.1"])
            with context.wrap_socket(raw, server_hostname="127.0.0.1") as wrapped:
                self.assertEqual(wrapped.selected_alpn_protocol(), "http/1.1")
                cert = wrapped.getpeercert()
        self.assertEqual(cert["subjectAltName"], (("IP Address", "127.0.0.1"),))
        lifetime = ssl.cert_time_to_seconds(cert["notAfter"]) - ssl.cert_time_to_seconds(cert["notBefore"])
        self.assertLessEqual(lifetime, 3 * 24 * 3600)

    def test_urllib_through_https_proxy_replays_the_body(self):
        tls = self.tls()
        key = self.key()
        data = pattern_bytes(40000)
        script = ("import sys, urllib.request\n"
                  "req = urllib.request.Request(sys.argv[1], data=sys.stdin.buffer.read(), method='POST')\n"
                  "sys.stdout.buffer.write(urllib.request.urlopen(req, timeout=30).read())\n")
        result = harness.run([harness.PYTHON, "-c", script, tls.script_url(key, "captcha,echo")], preload=False,
                             input=data, env=self.client_env(SSL_CERT_FILE=self.bundle))
        self.assertRun(result, 0, harness.echo_body(data))
        self.assertCount(tls, key, 2, result)

    def test_python_requests_through_https_proxy(self):
        try:
            import requests  # noqa: F401
        except ImportError:
            self.skipTest(harness.needs("python3-requests", "requests"))
        tls = self.tls()
        key = self.key()
        script = ("import sys, requests\n"
                  "r = requests.get(sys.argv[1], timeout=30)\n"
                  "sys.stdout.buffer.write(b'%d ' % r.status_code + r.content)\n")
        result = harness.run([harness.PYTHON, "-c", script, tls.script_url(key, "429,503,200")], preload=False,
                             env=self.client_env(REQUESTS_CA_BUNDLE=self.bundle))
        self.assertRun(result, 0, b"200 " + ok_body(key, 3))
        self.assertCount(tls, key, 3, result)
        key = self.key("give-up")
        result = harness.run([harness.PYTHON, "-c", script, tls.script_url(key, "503")], preload=False,
                             env=self.client_env(REQUESTS_CA_BUNDLE=self.bundle))
        self.assertRun(result, 0, b"503 " + overloaded_body(key, 3))
        self.assertCount(tls, key, 3, result)

    def test_a_host_that_matches_no_glob_stays_a_blind_tunnel(self):
        # localhost is not intercepted: the client sees the upstream's own certificate, and a 503
        # inside the tunnel reaches it unretried.
        tls = self.tls()
        key = self.key()
        url = tls.script_url(key, "503,200").replace("127.0.0.1", "localhost")
        result = self.curl("--cacert", tls.cert, url)
        self.assertRun(result, 0, ESTABLISHED + harness.head("HTTP/1.1 503 Service Unavailable", "application/json",
                                                             len(overloaded_body(key, 1))) + overloaded_body(key, 1))
        self.assertCount(tls, key, 1, result)
        # And our CA alone does not verify it (the proxy did not touch the TLS).
        self.assertNotEqual(self.curl("--cacert", self.ca_cert, url).code, 0)

    def test_garbage_instead_of_a_client_hello_is_closed_and_nothing_goes_upstream(self):
        tls = self.tls()
        key = self.key()
        with socket.create_connection(("127.0.0.1", self.proxy.port), timeout=10) as s:
            s.sendall(f"CONNECT 127.0.0.1:{tls.port} HTTP/1.1\r\nHost: x\r\n\r\n".encode())
            self.assertEqual(s.recv(len(ESTABLISHED), socket.MSG_WAITALL), ESTABLISHED)
            started = time.monotonic()
            s.sendall(f"GET /s/{key}/200 HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".encode())  # plain text, no TLS
            rest = recv_all(s)
            elapsed = time.monotonic() - started
        self.assertNotIn(b"HTTP/1.1 200", rest)
        self.assertLess(elapsed, 5)
        self.assertCount(tls, key, 0)
        self.assertEqual(self.proxy.health()["status"], "ok")

    def test_a_chunked_body_over_the_bound_streams_through_the_tls_side(self):
        tls = self.tls()
        key = self.key()
        data = pattern_bytes(300000)
        result = harness.curl(["-sS", "-x", self.proxy.url(""), "--cacert", self.bundle, "-H",
                               "Transfer-Encoding: chunked", "--data-binary", "@-", tls.script_url(key, "echo")],
                              preload=False, input=data)
        self.assertRun(result, 0, harness.echo_body(data))
        self.assertCount(tls, key, 1, result)


class UpstreamVerification(harness.UpstreamTestCase):
    def test_without_upstream_ca_file_the_upstream_certificate_is_refused(self):
        # Interception never loosens the upstream side: the flaky upstream's own certificate is in
        # no system store, so without proxy.upstream_ca_file the proxy answers 502, nothing sent.
        with tempfile.TemporaryDirectory() as home:
            self.assertEqual(ca_command(home).code, 0)
            proxy = Proxy("version: 1\nproxy:\n  intercept: [\"127.0.0.1\"]\n"
                          "  forward: {allow_ports: any, allow_loopback: true}\n", env={"XDG_DATA_HOME": home}).start()
            self.addCleanup(proxy.stop)
            tls = self.tls()
            key = self.key()
            bundle = str(Path(home) / "curlretry" / "ca" / "bundle.pem")
            result = harness.curl(["-sS", "-x", proxy.url(""), "--cacert", bundle, "-w", "%{http_code}",
                                   tls.script_url(key, "200")], preload=False)
            self.assertEqual(result.code, 0, result.stderr)
            self.assertTrue(result.stdout.endswith(b"502"), result.stdout)
            self.assertIn(b"certificate", result.stdout.lower())
            self.assertCount(tls, key, 0)


class EnsureCommandEnvironment(harness.UpstreamTestCase):
    def test_command_gets_https_proxy_no_proxy_and_the_ca_variables(self):
        runtime = self.temp_dir()
        home = self.temp_dir()  # no CA yet: --ensure -- COMMAND makes it before the proxy needs it
        config = runtime / "config.yaml"
        tls = self.tls()
        config.write_text(intercept_config(tls.cert))
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
        env = {"XDG_RUNTIME_DIR": str(runtime), "XDG_DATA_HOME": str(home), "CURLRETRY_BASE_MS": harness.FAST_BASE_MS,
               "NO_PROXY": "ignored.example", "no_proxy": "internal.example  *,127.0.0.1:443",
               **{name: None for name in harness.CA_VARIABLES}}
        script = ("import json, os\n"
                  "names = ['HTTPS_PROXY', 'https_proxy', 'HTTP_PROXY', 'NO_PROXY', 'no_proxy', 'NODE_EXTRA_CA_CERTS',"
                  " 'SSL_CERT_FILE', 'REQUESTS_CA_BUNDLE', 'GIT_SSL_CAINFO', 'CURL_CA_BUNDLE']\n"
                  "print(json.dumps({n: os.environ.get(n) for n in names}))\n")
        cmd = [harness.CURLRETRY_BIN, "proxy", "--ensure", "--listen", f"127.0.0.1:{port}", "--config", str(config),
               "--", harness.PYTHON, "-c", script]
        result = harness.run(cmd, preload=False, env=env, timeout=60)

        def stop():
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
                    s.sendall(b"GET /_curlretry/health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
                    pid = json.loads(recv_all(s).split(b"\r\n\r\n", 1)[1])["pid"]
            except OSError:
                return
            os.kill(pid, 15)
            wait_for(lambda: not os.path.exists(f"/proc/{pid}"), 20, "the background proxy to exit")
        self.addCleanup(stop)
        self.assertEqual(result.code, 0, result.stderr)
        self.assertIn(b"created the local CA in", result.stderr)
        seen = json.loads(result.stdout)
        origin = f"http://127.0.0.1:{port}"
        ca = home / "curlretry" / "ca"
        # 127.0.0.1 is intercepted and allowed (proxy.forward.allow_loopback): it must not go direct (issue 26),
        # nor may the user's entries that cover it ("*", "127.0.0.1:443"; before: kept, so the
        # command went around the proxy). Blanks separate entries too, as curl and Node read them,
        # and no_proxy is the one they read when both are set (before: NO_PROXY was taken).
        self.assertEqual(seen, {"HTTPS_PROXY": origin, "https_proxy": origin, "HTTP_PROXY": origin,
                                "NO_PROXY": "internal.example,localhost,::1",
                                "no_proxy": "internal.example,localhost,::1",
                                "NODE_EXTRA_CA_CERTS": str(ca / "ca.pem"), "SSL_CERT_FILE": str(ca / "bundle.pem"),
                                "REQUESTS_CA_BUNDLE": str(ca / "bundle.pem"), "GIT_SSL_CAINFO": str(ca / "bundle.pem"),
                                "CURL_CA_BUNDLE": str(ca / "bundle.pem")})


if __name__ == "__main__":
    unittest.main()
