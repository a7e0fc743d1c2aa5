"""`curlretry proxy` against hostile clients (issue 24): strict HTTP/1.1 framing (RFC 9112), bounded
chunk-size lines, trailers dropped, CONNECT names validated before the local CA signs them, tunnels
counted and timed out, forward proxying limited by proxy.forward, the token from Basic credentials,
dot-segments in route paths. Raw sockets against a real proxy process; what the upstream received
is read from a recording upstream (proxy_support.Mirror) or the flaky upstream's counters."""

from __future__ import annotations

import base64
import json
import os
import socket
import ssl
import subprocess
import tempfile
import threading
import time
import unittest
from pathlib import Path

import harness
from harness import ok_body
from local_users import LocalUsers, needs_root
from proxy_support import Mirror, Proxy, raw_exchange, recv_all, wait_for

ESTABLISHED = b"HTTP/1.1 200 Connection Established\r\n\r\n"
UNREACHABLE = b'{"error":"curlretry proxy","detail":"the upstream could not be reached"}\n'


def status_of(raw: bytes) -> int:
    assert raw.startswith(b"HTTP/1.1 "), raw[:200]
    return int(raw[9:12])


def vm_kib(pid: int, field: str) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise AssertionError(f"no {field} in /proc/{pid}/status")


class MirrorCase(harness.UpstreamTestCase):
    """A proxy with one route to a recording upstream: every request it got is in mirror.requests."""

    extra = ""

    @classmethod
    def setUpClass(cls) -> None:
        super().setUpClass()
        cls.mirror = Mirror().start()
        cls.addClassCleanup(cls.mirror.stop)
        cls.proxy = Proxy(f"version: 1\nproxy:\n{cls.extra}  routes:\n"
                          f"    mirror: {{upstream: \"http://127.0.0.1:{cls.mirror.port}/prefix\"}}\n"
                          f"    flaky: {{upstream: \"{cls.plain.origin}\"}}\n").start()
        cls.addClassCleanup(cls.proxy.stop)

    def seen(self, marker: str) -> list[dict]:
        return [r for r in self.mirror.requests if marker in r["path"]]


class Framing(MirrorCase):
    def assertRefusedAndClosed(self, raw: bytes, statuses=(400,)):
        self.assertIn(status_of(raw), statuses, raw)
        self.assertIn(b"\r\nConnection: close\r\n", raw.partition(b"\r\n\r\n")[0] + b"\r\n")

    def test_a_final_coding_other_than_chunked_is_refused_never_read_as_bodyless(self):
        for coding, statuses in ((b"xchunked", (400,)), (b"identity", (400,)), (b"chunked, identity", (400,)),
                                 (b"gzip", (400,)), (b"gzip, chunked", (501,)), (b"chunked, chunked", (501,)),
                                 (b"chunked;q=1", (400,))):
            key = self.key(coding.decode().replace(" ", "").replace(",", "-").replace(";", "-"))
            smuggled = f"GET /mirror/SMUGGLED-{key} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".encode()
            body = b"%x\r\n" % len(smuggled) + smuggled + b"\r\n0\r\n\r\n"
            raw = raw_exchange(self.proxy.port, f"POST /mirror/{key} HTTP/1.1\r\nHost: x\r\n".encode()
                               + b"Transfer-Encoding: " + coding + b"\r\n\r\n" + body)
            self.assertRefusedAndClosed(raw, statuses)
            self.assertEqual(raw.count(b"HTTP/1.1 "), 1, raw)  # one answer: the body was never a request
        time.sleep(0.2)  # nothing is awaited upstream: give a wrongly sent request its time to land
        self.assertEqual(self.seen("SMUGGLED"), [])
        self.assertEqual([r["path"] for r in self.mirror.requests if "coding" in r["path"]], [])

    def test_two_transfer_encoding_fields_and_content_length_with_chunked_are_refused(self):
        key = self.key()
        for extra in (b"Transfer-Encoding: chunked\r\nTransfer-Encoding: identity\r\n",
                      b"Content-Length: 5\r\nTransfer-Encoding: chunked\r\n",
                      b"Transfer-Encoding: chunked\r\nContent-Length: 5\r\n"):
            raw = raw_exchange(self.proxy.port, f"POST /mirror/{key} HTTP/1.1\r\nHost: x\r\n".encode() + extra
                               + b"\r\n5\r\nhello\r\n0\r\n\r\n")
            self.assertRefusedAndClosed(raw, (400,))
        raw = raw_exchange(self.proxy.port, f"POST /mirror/{key} HTTP/1.0\r\nHost: x\r\n".encode()
                           + b"Transfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n")
        self.assertRefusedAndClosed(raw, (400,))
        self.assertEqual(self.seen(key), [])

    def test_host_missing_or_repeated_is_refused(self):
        key = self.key()
        for head in (f"GET /mirror/{key} HTTP/1.1\r\nConnection: close\r\n\r\n",
                     f"GET /mirror/{key} HTTP/1.1\r\nHost: a\r\nHost: b\r\nConnection: close\r\n\r\n",
                     f"GET /mirror/{key} HTTP/1.0\r\nHost: a\r\nHost: a\r\n\r\n"):
            raw = raw_exchange(self.proxy.port, head.encode())
            self.assertRefusedAndClosed(raw, (400,))
            self.assertIn(b"Host", raw)
        self.assertEqual(self.seen(key), [])
        # HTTP/1.0 may leave it out.
        raw = raw_exchange(self.proxy.port, f"GET /mirror/{key}-ok HTTP/1.0\r\n\r\n".encode())
        self.assertEqual(status_of(raw), 200, raw)

    def test_request_trailers_never_reach_the_upstream(self):
        key = self.key()
        raw = raw_exchange(self.proxy.port, (
            f"POST /mirror/{key} HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nTrailer: Authorization\r\n"
            "Connection: close\r\n\r\n5\r\nhello\r\n0\r\nAuthorization: Bearer from-a-trailer\r\n"
            "X-From-Trailer: 1\r\n\r\n").encode())
        self.assertEqual(status_of(raw), 200, raw)
        [seen] = self.seen(key)
        self.assertEqual(seen["body"], "hello")
        names = {k.lower() for k, _ in seen["headers"]}
        self.assertNotIn("authorization", names, seen)
        self.assertNotIn("x-from-trailer", names, seen)
        self.assertNotIn("trailer", names, seen)


class Bounds(MirrorCase):
    def test_a_huge_chunk_extension_is_refused_and_memory_stays_bounded(self):
        key = self.key()
        pid = self.proxy.proc.pid
        before = vm_kib(pid, "VmRSS")
        s = socket.create_connection(("127.0.0.1", self.proxy.port), timeout=30)
        answer = bytearray()

        def read():
            try:
                answer.extend(recv_all(s))
            except OSError:
                pass
        reader = threading.Thread(target=read)
        reader.start()
        sent = 0
        try:
            s.sendall(f"POST /mirror/{key} HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n5".encode())
            piece = b";a=b" * (256 * 1024)  # 1 MiB of extensions, never a CRLF
            for _ in range(48):
                s.sendall(piece)
                sent += len(piece)
        except OSError:
            pass  # the proxy answered and stopped listening
        started = time.monotonic()
        reader.join(30)
        s.close()
        self.assertFalse(reader.is_alive(), "the proxy kept the connection open")
        self.assertLess(time.monotonic() - started, 10)
        self.assertEqual(status_of(bytes(answer)), 400, bytes(answer[:300]))
        self.assertIn(b"chunk-size line", bytes(answer))
        grown = vm_kib(pid, "VmHWM") - before
        self.assertLess(grown, 8 * 1024, f"VmHWM grew by {grown} KiB for {sent} bytes sent")
        self.assertEqual(self.seen(key), [])

    def test_a_chunk_extension_under_the_bound_is_fine(self):
        key = self.key()
        raw = raw_exchange(self.proxy.port, (
            f"POST /mirror/{key} HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n"
            + "5;" + "a=b;" * 1000 + "z\r\nhello\r\n0\r\n\r\n").encode())
        self.assertEqual(status_of(raw), 200, raw)
        self.assertEqual(self.seen(key)[0]["body"], "hello")


class RoutePaths(MirrorCase):
    def test_dot_segments_are_resolved_and_never_climb_above_the_routes_base(self):
        key = self.key()
        for path in (f"/mirror/../../{key}", f"/mirror/a/../../{key}", f"/mirror/%2e%2e/{key}",
                     f"/mirror/.%2E/x/{key}"):
            raw = raw_exchange(self.proxy.port, f"GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
                               .encode())
            self.assertEqual(status_of(raw), 400, (path, raw))
        self.assertEqual(self.seen(key), [])
        raw = raw_exchange(self.proxy.port, f"GET /mirror/a/./b/../{key}/?q=/../ HTTP/1.1\r\nHost: x\r\n"
                           "Connection: close\r\n\r\n".encode())
        self.assertEqual(status_of(raw), 200, raw)
        self.assertEqual(json.loads(raw.partition(b"\r\n\r\n")[2])["path"], f"/prefix/a/{key}/?q=/../")

    def test_an_unknown_route_name_comes_back_as_json_that_parses(self):
        # The name is the client's bytes: a quote, a backslash and a byte that is not UTF-8 must
        # come back escaped (core/json_text.h), never as a body no JSON reader accepts.
        raw = raw_exchange(self.proxy.port, b'GET /no"ro\\ute\xff/x HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n')
        self.assertEqual(status_of(raw), 404, raw)
        body = raw.partition(b"\r\n\r\n")[2]
        self.assertEqual(body, b'{"error":"no route","route":"no\\"ro\\\\ute\xef\xbf\xbd"}\n')
        self.assertEqual(json.loads(body.decode("utf-8"))["route"], 'no"ro\\ute\ufffd')


@needs_root
class Token(harness.UpstreamTestCase):
    """How the token is presented, by another local user (the proxy's own user needs none:
    test_shared_machine)."""

    TOKEN = "t0ken-0123456789abcdef"

    @classmethod
    def setUpClass(cls) -> None:
        super().setUpClass()
        # Forward proxying to the loopback upstream too (not a default target: proxy.forward).
        cls.proxy = Proxy(f"version: 1\nproxy:\n  token: \"{cls.TOKEN}\"\n  routes:\n"
                          f"    flaky: {{upstream: \"{cls.plain.origin}\"}}\n"
                          "  forward: {allow_ports: any, allow_loopback: true}\n").start()
        cls.addClassCleanup(cls.proxy.stop)

    def setUp(self) -> None:
        self.user = LocalUsers(self).make("client")

    def ask(self, key: str, authorization: str) -> bytes:
        return LocalUsers.exchange(self.user, self.proxy.port, f"GET /flaky/s/{key}/200 HTTP/1.1\r\nHost: x\r\n"
                                   f"Proxy-Authorization: {authorization}\r\nConnection: close\r\n\r\n".encode(),
                                   harness.PYTHON)

    def test_basic_credentials_and_any_case_of_bearer_carry_the_token(self):
        basic = base64.b64encode(f"anyone:{self.TOKEN}".encode()).decode()
        for authorization in (f"Basic {basic}", f"basic {basic}", f"bearer {self.TOKEN}", f"BEARER  {self.TOKEN}"):
            key = self.key()
            raw = self.ask(key, authorization)
            self.assertTrue(raw.endswith(ok_body(key, 1)), (authorization, raw))
        wrong = base64.b64encode(f"{self.TOKEN}:wrong".encode()).decode()
        for authorization in (f"Basic {wrong}", "Basic !!!!", f"Digest {self.TOKEN}", self.TOKEN):
            key = self.key()
            raw = self.ask(key, authorization)
            self.assertEqual(status_of(raw), 407, (authorization, raw))
            self.assertCount(self.plain, key, 0)

    def test_curl_with_the_token_in_the_proxy_url(self):
        key = self.key()
        # HTTP_PROXY=http://user:TOKEN@host:port, as curl -x reads it: Basic credentials.
        result = harness.run(["runuser", "-u", self.user.pw_name, "--", harness.CURL, "-q", "-sS", "-x",
                              f"http://user:{self.TOKEN}@127.0.0.1:{self.proxy.port}",
                              self.plain.script_url(key, "503,200")], preload=False)
        self.assertRun(result, 0, ok_body(key, 2))
        self.assertCount(self.plain, key, 2, result)


class ForwardLimits(harness.UpstreamTestCase):
    """proxy.forward: by default forward proxying and CONNECT go to ports 80 and 443 of
    non-loopback hosts only; routes are not limited."""

    @classmethod
    def setUpClass(cls) -> None:
        super().setUpClass()
        cls.proxy = Proxy(f"version: 1\nproxy:\n  routes:\n    flaky: {{upstream: \"{cls.plain.origin}\"}}\n").start()
        cls.addClassCleanup(cls.proxy.stop)
        cls.wide = Proxy("version: 1\nproxy:\n  forward: {allow_ports: any, allow_loopback: true}\n").start()
        cls.addClassCleanup(cls.wide.stop)

    def test_loopback_and_other_ports_are_refused_by_default(self):
        key = self.key()
        port = self.plain.port
        for request in (f"GET {self.plain.script_url(key, '200')} HTTP/1.1\r\nHost: x\r\n\r\n",
                        f"GET http://localhost/s/{key}/200 HTTP/1.1\r\nHost: x\r\n\r\n",
                        f"GET http://0.0.0.0:80/s/{key}/200 HTTP/1.1\r\nHost: x\r\n\r\n",
                        f"GET http://example.com:{port}/s/{key}/200 HTTP/1.1\r\nHost: x\r\n\r\n",
                        f"CONNECT 127.0.0.1:{port} HTTP/1.1\r\nHost: x\r\n\r\n",
                        "CONNECT [::1]:443 HTTP/1.1\r\nHost: x\r\n\r\n",
                        "CONNECT localhost:443 HTTP/1.1\r\nHost: x\r\n\r\n",
                        f"CONNECT example.com:{port} HTTP/1.1\r\nHost: x\r\n\r\n"):
            raw = raw_exchange(self.proxy.port, request.encode())
            self.assertEqual(status_of(raw), 403, (request, raw))
            self.assertIn(b"proxy.forward.allow_", raw)
        self.assertCount(self.plain, key, 0)
        # A route to the same loopback upstream is the config's own choice.
        result = harness.curl(["-sS", self.proxy.url(f"/flaky/s/{key}/200")], preload=False)
        self.assertRun(result, 0, ok_body(key, 1))

    def test_a_name_that_resolves_to_loopback_is_refused_at_connect_time(self):
        name = socket.gethostname()
        try:
            addresses = {a[4][0] for a in socket.getaddrinfo(name, 80, proto=socket.IPPROTO_TCP)}
        except OSError:
            addresses = set()
        if not addresses or not all(a.startswith("127.") or a == "::1" for a in addresses):
            self.skipTest(f"the host name {name!r} does not resolve to loopback only ({addresses})")
        # Something listens on its port 80? Either way the answer is the one for "unreachable".
        raw = raw_exchange(self.proxy.port, f"CONNECT {name}:443 HTTP/1.1\r\nHost: x\r\n\r\n".encode())
        self.assertEqual(raw.partition(b"\r\n\r\n")[2], UNREACHABLE, raw)
        raw = raw_exchange(self.proxy.port, f"GET http://{name}/x HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
                           .encode())
        self.assertEqual(raw.partition(b"\r\n\r\n")[2], UNREACHABLE, raw)

    def test_refused_and_unresolvable_look_the_same(self):
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            closed = probe.getsockname()[1]
        answers = set()
        for request in (f"CONNECT 127.0.0.1:{closed} HTTP/1.1\r\nHost: x\r\n\r\n",
                        "CONNECT no-such-host.invalid:443 HTTP/1.1\r\nHost: x\r\n\r\n",
                        f"GET http://127.0.0.1:{closed}/x HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
                        "GET http://no-such-host.invalid/x HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"):
            raw = raw_exchange(self.wide.port, request.encode(), timeout=60)
            self.assertEqual(status_of(raw), 502, (request, raw))
            answers.add(raw.partition(b"\r\n\r\n")[2])
        self.assertEqual(answers, {UNREACHABLE})

    def test_widened_config_reaches_a_loopback_upstream(self):
        key = self.key()
        result = harness.curl(["-sS", "-x", self.wide.url(""), self.plain.script_url(key, "503,200")], preload=False)
        self.assertRun(result, 0, ok_body(key, 2))


class Echo:
    """A loopback TCP server that echoes; counts its connections."""

    def __init__(self):
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(64)
        self.port = self.sock.getsockname()[1]
        self.open = 0
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self):
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self._echo, args=(conn,), daemon=True).start()

    def _echo(self, conn):
        self.open += 1
        with conn:
            while True:
                try:
                    data = conn.recv(65536)
                except OSError:
                    break
                if not data:
                    break
                conn.sendall(data)
        self.open -= 1

    def stop(self):
        self.sock.close()


class Tunnels(unittest.TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        cls.echo = Echo()
        cls.addClassCleanup(cls.echo.stop)
        cls.proxy = Proxy("version: 1\nproxy:\n  tunnel_idle_ms: 700\n"
                          "  forward: {allow_ports: any, allow_loopback: true}\n").start()
        cls.addClassCleanup(cls.proxy.stop)

    def open_tunnel(self) -> socket.socket:
        s = socket.create_connection(("127.0.0.1", self.proxy.port), timeout=10)
        s.sendall(f"CONNECT 127.0.0.1:{self.echo.port} HTTP/1.1\r\nHost: x\r\n\r\n".encode())
        got = b""
        while len(got) < len(ESTABLISHED):
            chunk = s.recv(len(ESTABLISHED) - len(got))
            self.assertTrue(chunk, got)
            got += chunk
        self.assertEqual(got, ESTABLISHED)
        return s

    def test_tunnels_count_as_connections(self):
        tunnels = [self.open_tunnel() for _ in range(5)]
        try:
            self.assertEqual(self.proxy.health()["connections"], 6)  # the five and the health request's own
        finally:
            for s in tunnels:
                s.close()
        wait_for(lambda: self.proxy.health()["connections"] == 1, 10, "the tunnels to leave")

    def test_an_idle_tunnel_closes_after_tunnel_idle_ms_a_busy_one_lives(self):
        idle = self.open_tunnel()
        busy = self.open_tunnel()
        started = time.monotonic()
        # The busy one echoes a byte every 200 ms for 1.6 s, past two idle periods.
        for i in range(8):
            busy.sendall(b"%d" % i)
            self.assertEqual(busy.recv(16), b"%d" % i)
            time.sleep(0.2)
        idle.settimeout(10)
        self.assertEqual(recv_all(idle), b"")
        elapsed = time.monotonic() - started
        self.assertGreaterEqual(elapsed, 0.7)
        busy.sendall(b"still")
        self.assertEqual(busy.recv(16), b"still")
        busy.close()
        idle.close()


class Config(unittest.TestCase):
    def refused(self, yaml: str) -> bytes:
        proxy = Proxy(yaml)
        self.addCleanup(proxy.stop)
        done = harness.run([harness.CURLRETRY_BIN, "proxy", "--listen", "127.0.0.1:0", "--config", proxy.config],
                           preload=False)
        self.assertEqual(done.code, 1, done)
        return done.stderr

    def test_bad_values_name_their_position(self):
        self.assertIn(b"config.yaml:3:19: proxy.tunnel_idle_ms", self.refused(
            "version: 1\nproxy:\n  tunnel_idle_ms: 0\n"))
        self.assertIn(b"config.yaml:4:23: proxy.forward.allow_ports[1]", self.refused(
            "version: 1\nproxy:\n  forward:\n    allow_ports: [80, 70000]\n"))
        self.assertIn(b"config.yaml:3:13: proxy.forward.allow_loop: unknown key", self.refused(
            "version: 1\nproxy:\n  forward: {allow_loop: true}\n"))


class InterceptNames(unittest.TestCase):
    """The local CA signs only names that are names: CONNECT targets are validated before the
    intercept glob sees them, and the leaf's SAN is exactly the one name."""

    @classmethod
    def setUpClass(cls) -> None:
        cls._home = tempfile.TemporaryDirectory(prefix="curlretry-ca-")
        cls.addClassCleanup(cls._home.cleanup)
        done = harness.run([harness.CURLRETRY_BIN, "proxy", "ca"], preload=False,
                           env={"XDG_DATA_HOME": cls._home.name})
        assert done.code == 0, done
        cls.ca = os.path.join(cls._home.name, "curlretry", "ca", "ca.pem")
        cls.proxy = Proxy("version: 1\nproxy:\n  intercept: [\"*.test\", \"10.0.0.*\"]\n",
                          env={"XDG_DATA_HOME": cls._home.name}).start()
        cls.addClassCleanup(cls.proxy.stop)

    def leaf(self, host: str) -> bytes:
        s = socket.create_connection(("127.0.0.1", self.proxy.port), timeout=10)
        with s:
            s.sendall(f"CONNECT {host}:443 HTTP/1.1\r\nHost: {host}:443\r\n\r\n".encode())
            got = b""
            while not got.endswith(b"\r\n\r\n"):
                chunk = s.recv(1)
                self.assertTrue(chunk, got)
                got += chunk
            self.assertEqual(got, ESTABLISHED)
            context = ssl.create_default_context(cafile=self.ca)
            with context.wrap_socket(s, server_hostname=host) as tls:
                return tls.getpeercert(binary_form=True)

    def san(self, der: bytes) -> str:
        done = subprocess.run(["openssl", "x509", "-inform", "DER", "-noout", "-ext", "subjectAltName"], input=der,
                              capture_output=True, timeout=30)
        self.assertEqual(done.returncode, 0, done.stderr)
        return done.stdout.decode().splitlines()[-1].strip()

    def test_names_carrying_other_names_are_refused_and_nothing_is_minted(self):
        for host in ("www.victim-bank.example,DNS:a.test", "x.test,IP:10.0.0.1,email:a@b.test", "a b.test",
                     "a=b.test", "-a.test", "a..test", "x.test\tIP:1.2.3.4"):
            raw = raw_exchange(self.proxy.port, f"CONNECT {host}:443 HTTP/1.1\r\nHost: x\r\n\r\n".encode())
            self.assertEqual(status_of(raw), 400, (host, raw))
            self.assertNotIn(b"Established", raw)

    def test_a_good_name_gets_a_leaf_for_exactly_that_name(self):
        self.assertEqual(self.san(self.leaf("api.good.test")), "DNS:api.good.test")
        self.assertEqual(self.san(self.leaf("10.0.0.7")), "IP Address:10.0.0.7")


if __name__ == "__main__":
    unittest.main()
