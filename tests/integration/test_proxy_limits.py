"""`curlretry proxy` at its connection limit (issue 27 item 5): proxy.max_connections, the limit
derived from the open-files limit when it is not set, and what a connection over it gets: an
HTTP 503 with Retry-After at once, one rate-limited warning line, and service again as soon as a
connection closes. A real proxy process and raw sockets on 127.0.0.1."""

from __future__ import annotations

import json
import resource
import socket
import unittest

import harness
from proxy_support import Proxy, raw_exchange, wait_for

HEALTH = b"GET /_curlretry/health HTTP/1.1\r\nHost: x\r\n\r\n"
LIMIT = 20
REFUSED_BODY = b'{"error":"the proxy holds proxy.max_connections connections","limit":20}\n'
REFUSED = (b"HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\nContent-Length: "
           + str(len(REFUSED_BODY)).encode() + b"\r\nRetry-After: 1\r\nConnection: close\r\n\r\n" + REFUSED_BODY)
WARNING = ("curlretry: proxy: warning: 20 connections open, proxy.max_connections is 20: new ones are answered 503 "
           "with Retry-After: 1 until one closes (1 so far; this line at most every 10 s)")
# What proxy/connection_limit.h keeps out of the per-connection budget, and its built-in ceiling.
RESERVED = 96
DEFAULT_CEILING = 16384


def read_response(s: socket.socket) -> tuple[bytes, bytes]:
    """One response with a Content-Length from a kept-alive connection: (head, body)."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = s.recv(65536)
        assert chunk, data
        data += chunk
    head, body = data.split(b"\r\n\r\n", 1)
    length = next(int(line.split(b":", 1)[1]) for line in head.split(b"\r\n")
                  if line.lower().startswith(b"content-length:"))
    while len(body) < length:
        chunk = s.recv(65536)
        assert chunk, data
        body += chunk
    return head, body


def open_files_hard() -> int:
    return resource.getrlimit(resource.RLIMIT_NOFILE)[1]


class AtTheLimit(unittest.TestCase):
    def setUp(self) -> None:
        self.proxy = Proxy(f"version: 1\nproxy:\n  max_connections: {LIMIT}\n").start()
        self.addCleanup(self.proxy.stop)
        self.held: list[socket.socket] = []
        self.addCleanup(lambda: [s.close() for s in self.held])

    def hold(self) -> dict:
        """A kept-alive connection that the proxy answered (so it is counted): its health answer."""
        s = socket.create_connection(("127.0.0.1", self.proxy.port), timeout=10)
        self.held.append(s)
        s.sendall(HEALTH)
        head, body = read_response(s)
        self.assertTrue(head.startswith(b"HTTP/1.1 200 "), head)
        return json.loads(body)

    def warnings(self) -> list[str]:
        return [line for line in self.proxy.log().splitlines() if "proxy.max_connections is" in line]

    def test_the_21st_connection_gets_503_with_retry_after_and_one_warning_line(self):
        for i in range(LIMIT):
            self.assertEqual(self.hold()["connections"], i + 1)
        self.assertEqual(self.warnings(), [])
        self.assertEqual(raw_exchange(self.proxy.port, HEALTH), REFUSED)
        self.assertEqual(raw_exchange(self.proxy.port, HEALTH), REFUSED)  # the 22nd: same answer, no new line
        self.assertEqual(self.warnings(), [WARNING])
        # The held ones still work, and one leaving makes room for a new connection.
        self.held[0].sendall(HEALTH)
        self.assertEqual(json.loads(read_response(self.held[0])[1])["connections"], LIMIT)
        self.held.pop().close()
        answer = wait_for(lambda: (lambda raw: raw if raw.startswith(b"HTTP/1.1 200 ") else None)(
            raw_exchange(self.proxy.port, HEALTH.replace(b"\r\n\r\n", b"\r\nConnection: close\r\n\r\n"))),
            10, "a connection to be served once one closed")
        self.assertEqual(json.loads(answer.split(b"\r\n\r\n", 1)[1])["connections"], LIMIT)
        self.assertEqual(len(self.warnings()), 1)


class Derived(unittest.TestCase):
    def started(self, yaml: str) -> Proxy:
        proxy = Proxy(yaml).start()
        self.addCleanup(proxy.stop)
        return proxy

    def test_without_the_key_the_limit_follows_the_open_files_limit(self):
        hard = open_files_hard()
        if hard == resource.RLIM_INFINITY:
            self.skipTest("the open-files hard limit is unlimited here: the built-in ceiling applies, asserted below")
        proxy = self.started("version: 1\n")
        expected = min((hard - RESERVED) // 2, DEFAULT_CEILING)
        wait_for(lambda: "proxy listening on" in proxy.log(), 10, "the listening line")
        self.assertIn(f"(at most {expected} connections)", proxy.log())

    def test_a_value_over_what_the_descriptors_allow_is_lowered_with_a_warning(self):
        hard = open_files_hard()
        if hard == resource.RLIM_INFINITY or hard >= 2 * 1000000 + RESERVED:
            self.skipTest(f"the open-files hard limit ({hard}) holds a million connections here")
        proxy = self.started("version: 1\nproxy:\n  max_connections: 1000000\n")
        fit = (hard - RESERVED) // 2
        wait_for(lambda: "proxy listening on" in proxy.log(), 10, "the listening line")
        self.assertIn(f"config.yaml:3:20: proxy.max_connections 1000000 needs about 2000096 descriptors and the "
                      f"open-files limit is {hard} (ulimit -Hn; two per proxied connection): holding at most {fit}\n",
                      proxy.log())
        self.assertIn(f"(at most {fit} connections)", proxy.log())

    def test_a_bad_value_names_its_position(self):
        for value, problem in (("0", b"0 is out of range"), ("many", b'"many" is not an integer')):
            proxy = Proxy(f"version: 1\nproxy:\n  max_connections: {value}\n")
            self.addCleanup(proxy.stop)
            done = harness.run([harness.CURLRETRY_BIN, "proxy", "--listen", "127.0.0.1:0", "--config", proxy.config],
                               preload=False)
            self.assertEqual(done.code, 1, done)
            self.assertIn(b"config.yaml:3:20: proxy.max_connections: " + problem +
                          b" (expected a connection count, 1..1000000)\n", done.stderr)


if __name__ == "__main__":
    unittest.main()
