"""Small servers the parity sweep needs and flaky-upstream does not provide: an HTTP CONNECT proxy
whose answers to CONNECT are scripted, and an origin that asks for Basic or Digest credentials.
Standard library only; both bind 127.0.0.1, count what they see, and are stopped by the test
that started them.
"""

from __future__ import annotations

import collections
import hashlib
import http.server
import re
import select
import socket
import threading

from loopback_server import LoopbackHttpServer

USER, PASSWORD = "alice", "s3cret"
REALM = "parity"
TUNNEL_IDLE = 10.0  # a tunnel with no traffic for this long is closed


class ConnectProxy(LoopbackHttpServer):
    """Answers the Nth CONNECT with script[N-1] (the last repeats): "tunnel", or a status such as
    "503" or "407" (with Proxy-Authenticate for 407) and a short body."""

    def __init__(self):
        self.script: list[str] = ["tunnel"]
        self.connects = 0
        self.lock = threading.Lock()
        super().__init__(_ProxyHandler)

    def reset(self, *script: str) -> None:
        with self.lock:
            self.script = list(script)
            self.connects = 0


class _ProxyHandler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_CONNECT(self) -> None:  # noqa: N802
        server: ConnectProxy = self.server  # type: ignore[assignment]
        with server.lock:
            server.connects += 1
            step = server.script[min(server.connects, len(server.script)) - 1]
        if step != "tunnel":
            body = f"proxy says {step}\n".encode()
            self.send_response(int(step))
            if step == "407":
                self.send_header("Proxy-Authenticate", f'Basic realm="{REALM}"')
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            return
        host, _, port = self.path.rpartition(":")
        if host not in ("127.0.0.1", "localhost"):
            self.send_error(403)
            return
        upstream = socket.create_connection(("127.0.0.1", int(port)), timeout=10)
        self.send_response(200, "Connection established")
        self.end_headers()
        self.wfile.flush()
        self.close_connection = True
        pair = [self.connection, upstream]
        try:
            self._pipe(pair, upstream)
        except OSError:
            pass  # either side hung up: the tunnel is over
        finally:
            upstream.close()

    def _pipe(self, pair: list[socket.socket], upstream: socket.socket) -> None:
        while True:
            readable, _, _ = select.select(pair, [], [], TUNNEL_IDLE)
            if not readable:
                return
            for s in readable:
                data = s.recv(65536)
                if not data:
                    return
                (upstream if s is self.connection else self.connection).sendall(data)

    def log_message(self, format: str, *args) -> None:
        pass


class AuthOrigin(LoopbackHttpServer):
    """/basic/<key>/<script> and /digest/<key>/<script>: without valid credentials a 401 with the
    scheme's challenge (/any/... offers both); with them, the key's next step of <script>
    (comma-separated statuses, the last repeats), body "<status> key=<key> n=<n>\\n"."""

    def __init__(self):
        self.counts: collections.Counter[str] = collections.Counter()   # authenticated requests per key
        self.requests: collections.Counter[str] = collections.Counter()  # all requests per key
        self.lock = threading.Lock()
        super().__init__(_AuthHandler)


def _md5(text: str) -> str:
    return hashlib.md5(text.encode()).hexdigest()


class _AuthHandler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    NONCE = "0123456789abcdef"

    def do_GET(self) -> None:  # noqa: N802
        server: AuthOrigin = self.server  # type: ignore[assignment]
        parts = self.path.split("?", 1)[0].split("/")
        if len(parts) != 4:
            self._send(404, b"no\n")
            return
        _, scheme, key, script = parts
        with server.lock:
            server.requests[key] += 1
        if not self._authorized(scheme):
            challenges = []
            if scheme in ("digest", "any"):
                challenges.append(f'Digest realm="{REALM}", nonce="{self.NONCE}", qop="auth", algorithm=MD5')
            if scheme in ("basic", "any"):
                challenges.append(f'Basic realm="{REALM}"')
            self._send(401, b"who are you\n", [("WWW-Authenticate", c) for c in challenges])
            return
        with server.lock:
            server.counts[key] += 1
            n = server.counts[key]
        steps = script.split(",")
        status = int(steps[min(n, len(steps)) - 1])
        self._send(status, f"{status} key={key} n={n}\n".encode())

    def _authorized(self, scheme: str) -> bool:
        header = self.headers.get("Authorization", "")
        if header.startswith("Basic ") and scheme in ("basic", "any"):
            import base64
            return base64.b64decode(header[6:]).decode() == f"{USER}:{PASSWORD}"
        if header.startswith("Digest ") and scheme in ("digest", "any"):
            fields = {k: q or bare for k, q, bare in re.findall(r'(\w+)=(?:"([^"]*)"|([^,\s]*))', header[7:])}
            ha1 = _md5(f"{USER}:{REALM}:{PASSWORD}")
            ha2 = _md5(f"{self.command}:{fields.get('uri', '')}")
            expected = _md5(f"{ha1}:{self.NONCE}:{fields.get('nc', '')}:{fields.get('cnonce', '')}:auth:{ha2}")
            return fields.get("username") == USER and fields.get("response") == expected
        return False

    def _send(self, status: int, body: bytes, headers: list[tuple[str, str]] = ()) -> None:
        self.send_response(status)
        for k, v in headers:
            self.send_header(k, v)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args) -> None:
        pass
