"""WebSockets through `curlretry proxy`: a real `ws` client and server from npm (installed into the
build tree by scripts/proxy-test-clients.sh) on 127.0.0.1, plain and TLS, through a route and
through an intercepted CONNECT. The proxy carries the upgrade as a tunnel: the echoed bytes are
exact, close codes cross both ways, a refused handshake (503 before the 101) is retried and the
give-up answer reaches the client byte for byte, and the tunnel is bounded (idle timeout, memory
flat for a message far larger than its buffers). On the proxy before upgrades were carried, every
test here fails: the Upgrade header was dropped and the server answered 426."""

from __future__ import annotations

import base64
import hashlib
import json
import os
import socket
import subprocess
import tempfile
import unittest
from pathlib import Path

import harness
from proxy_support import NODE, Proxy, TinyProxy, node_modules, node_problem, wait_for

SCRIPT = str(Path(__file__).resolve().parent / "proxy_clients" / "websocket.mjs")


class WsServer:
    """`node websocket.mjs server`: an echo server, optionally TLS, refusing its first handshakes."""

    def __init__(self, modules: str, tls: tuple[str, str] | None = None, refuse: tuple[int, int] | None = None):
        self._dir = tempfile.TemporaryDirectory(prefix="curlretry-ws-")
        self.log_path = os.path.join(self._dir.name, "log")
        Path(self.log_path).write_text("")
        args = [NODE, SCRIPT, "server", self.log_path]
        if tls:
            args += ["--tls", *tls]
        if refuse:
            args += ["--refuse", str(refuse[0]), str(refuse[1])]
        self.proc = subprocess.Popen(args, env=harness.environment(False, {"CURLRETRY_NODE_MODULES": modules}),
                                     stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        line = harness.first_line(self.proc, 20, "the WebSocket server printed no port",
                                  lambda: f"the WebSocket server exited: {self.proc.stderr.read().decode()}")
        self.port = int(line)

    def entries(self) -> list[dict]:
        return [json.loads(line) for line in Path(self.log_path).read_text().splitlines() if line]

    def handshakes(self) -> list[dict]:
        return [e for e in self.entries() if "answer" in e or "plain" in e]

    def stop(self) -> None:
        self.proc.kill()
        self.proc.wait(10)
        self.proc.stdout.close()
        self.proc.stderr.close()
        self._dir.cleanup()


def message(data: bytes, binary: bool) -> dict:
    return {"b64": base64.b64encode(data).decode(), "binary": binary}


TEXT = "héllo, wörld ✓ " * 10
BINARY = bytes(range(256)) * 400  # 100 KiB, every byte value, larger than one 16 KiB relay buffer


class WebSocketThroughTheProxy(unittest.TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        problem = node_problem()
        if problem:
            raise unittest.SkipTest(problem)
        modules, problem = node_modules()
        if problem:
            raise unittest.SkipTest(problem)
        cls.modules = modules
        cls._dir = tempfile.TemporaryDirectory(prefix="curlretry-ws-tls-")
        cls.addClassCleanup(cls._dir.cleanup)
        cls.cert = os.path.join(cls._dir.name, "cert.pem")
        cls.key = os.path.join(cls._dir.name, "key.pem")
        subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
                        "-keyout", cls.key, "-out", cls.cert, "-days", "2", "-subj", "/CN=127.0.0.1",
                        "-addext", "subjectAltName=IP:127.0.0.1"], check=True, capture_output=True)
        cls.home = os.path.join(cls._dir.name, "data")
        made = harness.run([harness.CURLRETRY_BIN, "proxy", "ca"], preload=False, env={"XDG_DATA_HOME": cls.home})
        assert made.code == 0, made.stderr
        cls.ca_cert = str(Path(cls.home) / "curlretry" / "ca" / "ca.pem")

    def server(self, tls: bool = False, refuse: tuple[int, int] | None = None) -> WsServer:
        s = WsServer(self.modules, (self.cert, self.key) if tls else None, refuse)
        self.addCleanup(s.stop)
        return s

    def proxy(self, server: WsServer, tls: bool, extra: str = "", env: dict[str, str] | None = None) -> Proxy:
        scheme = "https" if tls else "http"
        p = Proxy(f"version: 1\nproxy:\n  intercept: [\"127.0.0.1\"]\n  upstream_ca_file: {self.cert}\n"
                  "  forward: {allow_ports: any, allow_loopback: true}\n"
                  f"  routes:\n    ws: {{upstream: \"{scheme}://127.0.0.1:{server.port}/base\"}}\n{extra}",
                  env={"XDG_DATA_HOME": self.home, **(env or {})}).start()
        self.addCleanup(p.stop)
        return p

    def client(self, url: str, script: dict, connect: Proxy | None = None) -> dict:
        args = [NODE, SCRIPT, "client", url]
        if connect:
            args += ["--connect", f"127.0.0.1:{connect.port}", "--ca", self.ca_cert]
        done = subprocess.run(args, env=harness.environment(False, {"CURLRETRY_NODE_MODULES": self.modules}),
                              capture_output=True, timeout=60, input=json.dumps(script).encode())
        lines = done.stdout.decode().strip().splitlines()
        self.assertTrue(lines, done.stderr.decode(errors="replace"))
        return json.loads(lines[-1])

    ECHO = {"protocols": ["chat", "other"], "send": [message(TEXT.encode(), False), message(BINARY, True)],
            "close": [4000, "done"]}

    def check_echo(self, result: dict, server: WsServer, path: str) -> None:
        self.assertTrue(result["open"], result)
        self.assertEqual(result["protocol"], "chat")  # Sec-WebSocket-Protocol crossed both ways
        self.assertEqual(result["echoes"], self.ECHO["send"])  # exact bytes, text stays text, binary binary
        self.assertEqual(result["close"], {"code": 4000, "reason": "done"})
        handshakes = server.handshakes()
        self.assertEqual([(h["path"], h["answer"]) for h in handshakes], [(path, 101)])
        self.assertEqual(handshakes[0]["headers"]["upgrade"], "websocket")
        # The server saw the client's close code; the log line comes as its socket closes.
        wait_for(lambda: {"closed": 4000, "reason": "done"} in server.entries(), 10, "the server's close record")

    def test_routed_plain_echo_is_exact(self):
        server = self.server()
        proxy = self.proxy(server, tls=False)
        result = self.client(proxy.url("/ws/echo?x=1").replace("http:", "ws:"), self.ECHO)
        self.check_echo(result, server, "/base/echo?x=1")
        self.assertEqual(server.handshakes()[0]["headers"]["host"], f"127.0.0.1:{server.port}")

    def test_routed_tls_echo_is_exact(self):
        server = self.server(tls=True)
        proxy = self.proxy(server, tls=True)
        result = self.client(proxy.url("/ws/echo").replace("http:", "ws:"), self.ECHO)
        self.check_echo(result, server, "/base/echo")

    def test_intercepted_wss_echo_is_exact(self):
        server = self.server(tls=True)
        proxy = self.proxy(server, tls=True)
        result = self.client(f"wss://127.0.0.1:{server.port}/direct?q=2", self.ECHO, connect=proxy)
        self.check_echo(result, server, "/direct?q=2")

    def test_the_server_closing_with_a_code_reaches_the_client(self):
        server = self.server(tls=True)
        proxy = self.proxy(server, tls=True)
        result = self.client(f"wss://127.0.0.1:{server.port}/x",
                             {"send": [message(b"close:4321:server says bye", False)]}, connect=proxy)
        self.assertTrue(result["open"], result)
        self.assertEqual(result["close"], {"code": 4321, "reason": "server says bye"})
        wait_for(lambda: proxy.health()["active"] == 0, 10, "the tunnel to end")

    def test_a_refused_handshake_is_retried_then_switches(self):
        server = self.server(refuse=(2, 503))
        proxy = self.proxy(server, tls=False)
        result = self.client(proxy.url("/ws/echo").replace("http:", "ws:"), self.ECHO)
        self.assertTrue(result["open"], result)
        self.assertEqual(result["echoes"], self.ECHO["send"])
        self.assertEqual([h["answer"] for h in server.handshakes()], [503, 503, 101])

    def test_an_intercepted_refused_handshake_is_retried_too(self):
        server = self.server(tls=True, refuse=(1, 429))
        proxy = self.proxy(server, tls=True)
        result = self.client(f"wss://127.0.0.1:{server.port}/i", self.ECHO, connect=proxy)
        self.assertEqual(result["echoes"], self.ECHO["send"])
        self.assertEqual([h["answer"] for h in server.handshakes()], [429, 101])

    def test_an_intercepted_wss_goes_through_a_proxy_of_the_users_own(self):
        # proxy.upstream_proxy: each handshake attempt asks tinyproxy for a tunnel (CONNECT, with
        # the URL's Basic credentials) and the TLS handshake runs inside it. Before: the upgrade
        # connected directly and tinyproxy saw nothing.
        parent = TinyProxy().start()
        self.addCleanup(parent.stop)
        server = self.server(tls=True, refuse=(1, 429))
        proxy = self.proxy(server, tls=True, extra=f"  upstream_proxy: {parent.url()}\n")
        result = self.client(f"wss://127.0.0.1:{server.port}/i", self.ECHO, connect=proxy)
        self.assertEqual(result["echoes"], self.ECHO["send"])
        self.assertEqual([h["answer"] for h in server.handshakes()], [429, 101])
        self.assertEqual(parent.requests(), [f"CONNECT 127.0.0.1:{server.port} HTTP/1.1"] * 2)

    def test_the_give_up_answer_reaches_the_client_verbatim(self):
        server = self.server(refuse=(10, 503))
        proxy = self.proxy(server, tls=False)
        result = self.client(proxy.url("/ws/echo").replace("http:", "ws:"), self.ECHO)
        self.assertFalse(result["open"], result)
        unexpected = result["unexpected"]
        self.assertEqual(unexpected["status"], 503)
        self.assertEqual(unexpected["body"], "refused 8\n")  # the third refusal's own body (10, 9, 8)
        self.assertEqual(unexpected["headers"]["x-refusal"], "yes")
        self.assertEqual(unexpected["headers"]["retry-after"], "0")
        self.assertEqual([h["answer"] for h in server.handshakes()], [503] * 3)  # max_attempts: 3

    def test_a_handshake_is_not_retried_when_max_attempts_is_1(self):
        server = self.server(refuse=(10, 503))
        proxy = self.proxy(server, tls=False, extra="defaults:\n  max_attempts: 1\n")
        result = self.client(proxy.url("/ws/echo").replace("http:", "ws:"), self.ECHO)
        self.assertEqual(result["unexpected"]["body"], "refused 10\n")
        self.assertEqual(len(server.handshakes()), 1)

    def test_a_large_message_streams_through_bounded_buffers(self):
        server = self.server(tls=True)
        # Under ASan (the asan preset) freed memory sits in its quarantine, 256 MiB by default, and
        # would count as growth: the bound is about what the proxy keeps, so no quarantine there.
        asan = os.environ.get("ASAN_OPTIONS")
        proxy = self.proxy(server, tls=True, env={"ASAN_OPTIONS": asan + ":quarantine_size_mb=0"} if asan else None)
        before = proxy.rss_kib()
        block = os.urandom(16 * 1024 + 7)
        times = 2048  # 32 MiB in one frame, about 2048 times the relay's buffer
        result = self.client(f"wss://127.0.0.1:{server.port}/big",
                             {"send": [{**message(block, True), "times": times}], "close": [1000, ""], "digest": True},
                             connect=proxy)
        self.assertEqual(result["echoes"],
                         [{"sha256": hashlib.sha256(block * times).hexdigest(), "length": len(block) * times,
                           "binary": True}])
        grown = proxy.rss_kib() - before
        # Less than half the frame: a relay that held one frame would grow by 32 MiB at least.
        # (Measured: 2.5 MiB in the normal build, 11 MiB under ASan's allocator.)
        self.assertLess(grown, 16 * 1024, f"the proxy grew by {grown} KiB relaying 32 MiB each way")

    def test_an_idle_websocket_closes_after_tunnel_idle_ms_and_counts_as_active(self):
        server = self.server()
        proxy = self.proxy(server, tls=False, extra="  tunnel_idle_ms: 1500\n")
        client = subprocess.Popen([NODE, SCRIPT, "client", proxy.url("/ws/idle").replace("http:", "ws:")],
                                  env=harness.environment(False, {"CURLRETRY_NODE_MODULES": self.modules}),
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.PIPE)
        client.stdin.write(json.dumps({"send": [message(b"ping", False)]}).encode())
        client.stdin.close()
        try:
            # While it is open it is a transfer and a connection (health's own request is the other).
            wait_for(lambda: proxy.health()["active"] == 1, 10, "the WebSocket to be active")
            self.assertEqual(proxy.health()["connections"], 2)
            client.wait(timeout=30)  # the client's own script gives up after 20 s
            out = client.stdout.read()
        finally:
            if client.poll() is None:
                client.kill()
                client.wait(10)
            client.stdout.close()
            client.stderr.close()
        result = json.loads(out.decode().strip().splitlines()[-1])
        self.assertEqual(result["echoes"], [message(b"ping", False)])
        self.assertEqual(result["close"]["code"], 1006)  # cut by the proxy, no close frame
        idle_ms = result["ms"] - result["open_ms"]
        self.assertGreaterEqual(idle_ms, 1500)
        self.assertLess(idle_ms, 1500 + 5000)
        self.assertEqual(proxy.health()["active"], 0)

    def test_a_forward_ws_request_is_carried_byte_for_byte(self):
        # ws:// through HTTP_PROXY is an absolute-form GET: RFC 6455's own example key and accept,
        # then one masked client frame and the server's unmasked echo, exact on the wire.
        server = self.server()
        proxy = self.proxy(server, tls=False)
        with socket.create_connection(("127.0.0.1", proxy.port), timeout=10) as s:
            s.sendall(f"GET http://127.0.0.1:{server.port}/fwd HTTP/1.1\r\nHost: 127.0.0.1:{server.port}\r\n"
                      "Connection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\n"
                      "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n".encode())
            head = b""
            while b"\r\n\r\n" not in head and len(head) < 4096:
                chunk = s.recv(4096)
                self.assertTrue(chunk, head)
                head += chunk
            head, rest = head.split(b"\r\n\r\n", 1)
            lines = head.decode().split("\r\n")
            self.assertEqual(lines[0], "HTTP/1.1 101 Switching Protocols")
            self.assertIn("Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=", lines)
            self.assertIn("Upgrade: websocket", lines)
            mask = b"\x01\x02\x03\x04"
            payload = b"Hello"
            s.sendall(b"\x81\x85" + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(payload)))
            while len(rest) < 7:
                chunk = s.recv(64)
                self.assertTrue(chunk, rest)
                rest += chunk
            self.assertEqual(rest, b"\x81\x05Hello")  # text frame, FIN, unmasked, as the server sent it
        self.assertEqual([(h["path"], h["answer"]) for h in server.handshakes()], [("/fwd", 101)])

    def test_a_loopback_forward_target_is_refused_without_allow_loopback(self):
        server = self.server(tls=True)
        p = Proxy("version: 1\nproxy:\n  intercept: [\"*.never.example\"]\n", env={"XDG_DATA_HOME": self.home}).start()
        self.addCleanup(p.stop)
        result = self.client(f"wss://127.0.0.1:{server.port}/x", self.ECHO, connect=p)
        self.assertEqual(result.get("error"), "CONNECT answered HTTP/1.1 403 Forbidden")
        self.assertEqual(server.handshakes(), [])


if __name__ == "__main__":
    unittest.main()
