"""`curlretry proxy`: reverse routes through the preload library's own retry engine, driven by
real clients (the curl CLI, Python's urllib, raw sockets) against the flaky upstream."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import socket
import subprocess
import time
import unittest
import urllib.error
import urllib.request

import harness
from harness import error_body, ok_body, overloaded_body, pattern_bytes
from proxy_support import Mirror, Proxy, raw_exchange, recv_all, wait_for

MAX_BODY = 1024 * 1024


def proxy_config(upstream: str, mirror_port: int, extra: str = "") -> str:
    return (f"version: 1\nproxy:\n  max_body_bytes: {MAX_BODY}\n{extra}  routes:\n"
            f"    flaky: {{upstream: \"{upstream}\", env: FLAKY_BASE_URL}}\n"
            f"    mirror: {{upstream: \"http://127.0.0.1:{mirror_port}/prefix\"}}\n")


# Forward proxying and CONNECT to the tests' loopback upstreams on their own ports: not the default
# (proxy.forward), so the classes that do it say so.
WIDE_FORWARD = "  forward: {allow_ports: any, allow_loopback: true}\n"


class ProxyTestCase(harness.UpstreamTestCase):
    proxy: Proxy
    mirror: Mirror
    extra = ""

    @classmethod
    def setUpClass(cls) -> None:
        super().setUpClass()
        cls.mirror = Mirror().start()
        cls.addClassCleanup(cls.mirror.stop)
        cls.proxy = Proxy(proxy_config(cls.plain.origin, cls.mirror.port, cls.extra), "--header-timeout-ms",
                          "1500").start()
        cls.addClassCleanup(cls.proxy.stop)

    def route(self, key: str, script: str) -> str:
        return self.proxy.url(f"/flaky/s/{key}/{script}")

    def curl(self, *args: str) -> harness.Result:
        return harness.curl(["-sS", "-i", *args], preload=False)


def head_and_body(raw: bytes) -> tuple[bytes, bytes]:
    head, _, body = raw.partition(b"\r\n\r\n")
    return head, body


def split_responses(raw: bytes) -> list[tuple[int, bytes]]:
    """(status, body) of each response in `raw`, in order; each must carry a Content-Length."""
    out = []
    while raw:
        head, sep, rest = raw.partition(b"\r\n\r\n")
        if not sep:
            raise AssertionError(f"a response head without its end: {raw[:200]!r}")
        lines = head.split(b"\r\n")
        status = int(lines[0].split(b" ")[1])
        lengths = [int(line.split(b":", 1)[1]) for line in lines[1:] if line.lower().startswith(b"content-length:")]
        if len(lengths) != 1:
            raise AssertionError(f"a response without exactly one Content-Length: {head!r}")
        out.append((status, rest[:lengths[0]]))
        raw = rest[lengths[0]:]
    return out


class RetriesThroughTheProxy(ProxyTestCase):
    def test_503_then_200_is_one_clean_response(self):
        key = self.key()
        result = self.curl(self.route(key, "503,503,200"))
        self.assertRun(result, 0, harness.head("HTTP/1.1 200 OK", "text/plain", len(ok_body(key, 3)))
                       + ok_body(key, 3))
        self.assertCount(self.plain, key, 3, result)

    def test_give_up_hands_over_the_final_503_byte_for_byte(self):
        key = self.key()
        result = self.curl(self.route(key, "503"))
        body = overloaded_body(key, 3)
        self.assertRun(result, 0, harness.head("HTTP/1.1 503 Service Unavailable", "application/json", len(body))
                       + body)
        self.assertCount(self.plain, key, 3, result)

    def test_429_retry_after_is_honoured(self):
        key = self.key()
        result = self.curl(self.route(key, "429+ra=1,200"))
        self.assertEqual(head_and_body(result.stdout)[1], ok_body(key, 2), result)
        self.assertGreaterEqual(result.elapsed, 0.95, result)
        self.assertCount(self.plain, key, 2, result)

    def test_captcha_400_is_retried(self):
        key = self.key()
        result = self.curl(self.route(key, "captcha,200"))
        self.assertEqual(head_and_body(result.stdout)[1], ok_body(key, 2), result)
        self.assertCount(self.plain, key, 2, result)

    def test_permanent_quota_429_is_not_retried(self):
        key = self.key()
        result = self.curl(self.route(key, "quota,200"))
        body = b'{"error":{"code":"1113","message":"You have exceeded your daily quota"}}'
        self.assertRun(result, 0, harness.head("HTTP/1.1 429 Too Many Requests", "application/json", len(body))
                       + body)
        self.assertCount(self.plain, key, 1, result)

    def test_reset_every_time_gives_a_502_after_the_attempts(self):
        # A request that dies on a reused connection before any response byte is sent once more
        # by libcurl itself, on a fresh one (any libcurl program does this): the warm-up makes sure
        # the first attempt rides a pooled connection, so the count is 1 + 3, not 3 by luck.
        self.curl(self.route(self.key("warm-up"), "200"))
        key = self.key()
        result = self.curl(self.route(key, "reset"))
        head, body = head_and_body(result.stdout)
        self.assertTrue(head.startswith(b"HTTP/1.1 502 Bad Gateway\r\n"), result)
        self.assertEqual(json.loads(body)["error"], "curlretry proxy", result)
        self.assertCount(self.plain, key, 4, result)

    def test_reset_then_200(self):
        key = self.key()
        result = self.curl(self.route(key, "reset,200"))
        self.assertEqual(head_and_body(result.stdout)[1], ok_body(key, 2), result)
        self.assertCount(self.plain, key, 2, result)

    def test_urllib_post_body_is_replayed(self):
        key = self.key()
        data = pattern_bytes(200_000)
        request = urllib.request.Request(self.route(key, "503,529,echo"), data=data, method="POST",
                                         headers={"Content-Type": "application/octet-stream"})
        with urllib.request.urlopen(request, timeout=30) as response:
            self.assertEqual(response.status, 200)
            self.assertEqual(response.read(), harness.echo_body(data))
        self.assertCount(self.plain, key, 3)

    def test_body_over_the_bound_streams_upstream(self):
        # Above proxy.max_body_bytes the body is not kept by the proxy: it goes to libcurl through
        # a read callback as the client sends it.
        key = self.key()
        data = pattern_bytes(3 * MAX_BODY + 7)
        request = urllib.request.Request(self.route(key, "echo"), data=data, method="PUT")
        with urllib.request.urlopen(request, timeout=60) as response:
            self.assertEqual(response.read(), harness.echo_body(data))
        self.assertCount(self.plain, key, 1)

    def test_streamed_body_within_the_shims_upload_replay_is_retried(self):
        # The shim's own rule for read-callback uploads (settings.max_upload_replay, 8 MiB): it
        # keeps a copy as libcurl reads, so a 503 after the whole body is replayed from that copy.
        key = self.key()
        data = pattern_bytes(2 * MAX_BODY)
        request = urllib.request.Request(self.route(key, "503,echo"), data=data, method="POST")
        with urllib.request.urlopen(request, timeout=60) as response:
            self.assertEqual(response.read(), harness.echo_body(data))
        self.assertCount(self.plain, key, 2)

    def chunked_post(self, url: str, data: bytes) -> harness.Result:
        return harness.curl(["-sS", "-H", "Transfer-Encoding: chunked", "--data-binary", "@-", url], preload=False,
                            input=data)

    def test_chunked_body_within_the_bound_is_kept_and_replayed(self):
        key = self.key()
        data = pattern_bytes(MAX_BODY // 2)
        result = self.chunked_post(self.route(key, "503,captcha,echo"), data)
        self.assertRun(result, 0, harness.echo_body(data))
        self.assertCount(self.plain, key, 3, result)

    def test_chunked_body_over_the_bound_streams_upstream(self):
        # Its length is unknown until its end: past proxy.max_body_bytes the proxy stops keeping it
        # and streams it (what it read so far first), chunked again to the upstream.
        key = self.key()
        data = pattern_bytes(3 * MAX_BODY + 7)
        result = self.chunked_post(self.route(key, "echo"), data)
        self.assertRun(result, 0, harness.echo_body(data))
        self.assertCount(self.plain, key, 1, result)

    def test_chunked_body_over_the_bound_within_the_shims_upload_replay_is_retried(self):
        key = self.key()
        data = pattern_bytes(2 * MAX_BODY + 3)
        result = self.chunked_post(self.route(key, "503,echo"), data)
        self.assertRun(result, 0, harness.echo_body(data))
        self.assertCount(self.plain, key, 2, result)

    def test_urllib_sees_the_give_up_status(self):
        key = self.key()
        with self.assertRaises(urllib.error.HTTPError) as caught:
            urllib.request.urlopen(self.route(key, "529"), timeout=30)
        self.assertEqual(caught.exception.code, 529)
        self.assertEqual(caught.exception.read(), overloaded_body(key, 3))
        self.assertCount(self.plain, key, 3)

    def test_sse_after_a_529_streams_live(self):
        key = self.key()
        with socket.create_connection(("127.0.0.1", self.proxy.port), timeout=30) as s:
            s.sendall(f"GET /flaky/s/{key}/529,sse10 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".encode())
            data = b""
            first_event_at = None
            while True:
                chunk = s.recv(65536)
                if not chunk:
                    break
                data += chunk
                if first_event_at is None and b"data: " in data:
                    first_event_at = time.monotonic()
            ended_at = time.monotonic()
        head, body = head_and_body(data)
        self.assertIn(b"HTTP/1.1 200 OK\r\n", head)
        self.assertIn(b"Transfer-Encoding: chunked", head)
        events = b"".join(b'data: {"n":%d}\n\n' % i for i in range(1, 11)) + b"data: [DONE]\n\n"
        dechunked = b""
        rest = body
        while rest:
            size_line, _, rest = rest.partition(b"\r\n")
            size = int(size_line, 16)
            if size == 0:
                break
            dechunked += rest[:size]
            rest = rest[size + 2:]
        self.assertEqual(dechunked, events)
        # Ten events 50 ms apart (450 ms): relayed live, the first arrives well before the end; a
        # buffering relay would deliver them together.
        self.assertGreater(ended_at - first_event_at, 0.2, "the stream was buffered, not relayed live")
        self.assertCount(self.plain, key, 2)

    def test_head_request(self):
        key = self.key()
        result = self.curl("-I", self.route(key, "503,200"))
        self.assertRun(result, 0, harness.head("HTTP/1.1 200 OK", "text/plain", len(ok_body(key, 2))))

    def test_keep_alive_carries_several_requests(self):
        keys = [self.key(str(i)) for i in range(3)]
        urls = [self.route(k, "503,200") for k in keys]
        result = harness.curl(["-sS", *urls], preload=False)
        self.assertRun(result, 0, b"".join(ok_body(k, 2) for k in keys))

    def test_pipelined_requests_are_answered_in_order(self):
        # Three requests in one write: the proxy reads them together, so the second and the third
        # wait in its read buffer while the first exchange (a retry) runs, and each next one
        # starts from what is left there.
        k1, k2, k3 = self.key("a"), self.key("b"), self.key("c")
        data = pattern_bytes(3000)
        request = (f"GET /flaky/s/{k1}/503,200 HTTP/1.1\r\nHost: x\r\n\r\n"
                   f"POST /flaky/s/{k2}/captcha,echo HTTP/1.1\r\nHost: x\r\nContent-Length: {len(data)}\r\n\r\n"
                   ).encode() + data + f"GET /flaky/s/{k3}/503,200 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".encode()
        raw = raw_exchange(self.proxy.port, request, timeout=30)
        responses = split_responses(raw)
        self.assertEqual([status for status, _ in responses], [200, 200, 200], raw[:2000])
        self.assertEqual([body for _, body in responses], [ok_body(k1, 2), harness.echo_body(data), ok_body(k3, 2)])
        for key in (k1, k2, k3):
            self.assertCount(self.plain, key, 2)


class ForwardProxy(ProxyTestCase):
    """Absolute-form requests (plain http://): the program's proxy setting, no route needed."""

    extra = WIDE_FORWARD

    def test_curl_x_retries(self):
        key = self.key()
        result = harness.curl(["-sS", "-x", self.proxy.url(""), self.plain.script_url(key, "503,429,200")],
                              preload=False)
        self.assertRun(result, 0, ok_body(key, 3))
        self.assertCount(self.plain, key, 3, result)

    def test_urllib_http_proxy_retries_and_replays_the_body(self):
        key = self.key()
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({"http": self.proxy.url("")}))
        data = pattern_bytes(5000)
        with opener.open(urllib.request.Request(self.plain.script_url(key, "captcha,echo"), data=data),
                         timeout=30) as response:
            self.assertEqual(response.read(), harness.echo_body(data))
        self.assertCount(self.plain, key, 2)

    def test_busybox_wget_through_http_proxy(self):
        # A static binary no preload reaches, through http_proxy (absolute-form requests).
        busybox = shutil.which("busybox")
        if not busybox:
            self.skipTest(harness.needs("busybox-static", "busybox"))
        key = self.key()
        result = harness.run([busybox, "wget", "-q", "-O", "-", f"{self.plain.origin}/s/{key}/503,429,200"],
                             preload=False, env={"http_proxy": self.proxy.url(""), "no_proxy": None,
                                                 "NO_PROXY": None})
        self.assertRun(result, 0, ok_body(key, 3))
        self.assertCount(self.plain, key, 3, result)

    def test_give_up_is_verbatim(self):
        key = self.key()
        result = harness.curl(["-sS", "-i", "-x", self.proxy.url(""), self.plain.script_url(key, "529")],
                              preload=False)
        body = overloaded_body(key, 3)
        self.assertRun(result, 0, harness.head("HTTP/1.1 529 Site Overloaded", "application/json", len(body)) + body)


class Tunnels(ProxyTestCase):
    """CONNECT: a blind tunnel. Nothing inside it can be read, so nothing is retried (yet: the
    intercepting mode with a local CA is what will make HTTPS_PROXY retry)."""

    extra = WIDE_FORWARD

    def test_curl_https_through_connect(self):
        tls = self.tls()
        key = self.key()
        result = harness.curl(["-sS", "-x", self.proxy.url(""), "--cacert", tls.cert, tls.script_url(key, "200")],
                              preload=False)
        self.assertRun(result, 0, ok_body(key, 1))

    def test_blind_tunnel_does_not_retry(self):
        tls = self.tls()
        key = self.key()
        result = harness.curl(["-sS", "-x", self.proxy.url(""), "--cacert", tls.cert, tls.script_url(key, "503,200")],
                              preload=False)
        self.assertRun(result, 0, overloaded_body(key, 1))
        self.assertCount(tls, key, 1, result)

    def test_urllib_https_proxy(self):
        import ssl
        tls = self.tls()
        key = self.key()
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({"https": self.proxy.url("")}),
                                             urllib.request.HTTPSHandler(
                                                 context=ssl.create_default_context(cafile=tls.cert)))
        with opener.open(tls.script_url(key, "sse3"), timeout=30) as response:
            self.assertEqual(response.read(), b"".join(b'data: {"n":%d}\n\n' % i for i in range(1, 4))
                             + b"data: [DONE]\n\n")

    def test_connect_to_a_closed_port_gets_502(self):
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
        raw = raw_exchange(self.proxy.port, f"CONNECT 127.0.0.1:{port} HTTP/1.1\r\nHost: x\r\n\r\n".encode())
        self.assertTrue(raw.startswith(b"HTTP/1.1 502 Bad Gateway\r\n"), raw)
        self.assertIn(b"the upstream could not be reached", raw)


class Headers(ProxyTestCase):
    def test_request_headers_pass_host_is_the_upstreams_hop_by_hop_stay(self):
        body = b'{"q":1}'
        raw = raw_exchange(self.proxy.port, (
            b"POST /mirror/v1/messages?beta=true HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Api-Key: secret\r\n"
            b"Connection: close, X-Conn-Listed\r\nX-Conn-Listed: drop me\r\nKeep-Alive: 10\r\nTE: trailers\r\n"
            b"Proxy-Authorization: Basic Zm9vOmJhcg==\r\nContent-Type: application/json\r\nX-Empty:\r\n"
            b"Accept-Encoding: gzip, x-unknown\r\n"
            b"Content-Length: 7\r\n\r\n" + body))
        head, payload = head_and_body(raw)
        self.assertTrue(head.startswith(b"HTTP/1.1 200 OK\r\n"), raw)
        seen = json.loads(payload)
        self.assertEqual(seen["path"], "/prefix/v1/messages?beta=true")
        self.assertEqual(seen["body"], body.decode())
        names = {k.lower(): v for k, v in seen["headers"]}
        self.assertEqual(names["host"], f"127.0.0.1:{self.mirror.port}")
        self.assertEqual(names["x-api-key"], "secret")
        self.assertEqual(names["content-type"], "application/json")
        self.assertEqual(names["content-length"], "7")
        self.assertEqual(names["x-empty"], "")
        # The loopback hop is identity: libcurl negotiates (and decodes) what it can decode.
        self.assertNotIn("x-unknown", names["accept-encoding"])
        for gone in ("x-conn-listed", "keep-alive", "te", "proxy-authorization", "accept", "expect"):
            self.assertNotIn(gone, names, seen)
        # The response: end-to-end headers through, hop-by-hop ones (and those Connection lists) not.
        lower_head = head.lower() + b"\r\n"
        self.assertIn(b"x-upstream: mirror\r\n", lower_head)
        self.assertIn(b"connection: close\r\n", lower_head)
        self.assertNotIn(b"keep-alive", lower_head)
        self.assertNotIn(b"x-hop", lower_head)
        self.assertIn(b"content-length: %d\r\n" % len(payload), lower_head)


class HostileClients(ProxyTestCase):
    def assertNothingUpstream(self, key: str):
        self.assertCount(self.plain, key, 0)

    def status_of(self, raw: bytes) -> int:
        self.assertTrue(raw.startswith(b"HTTP/1.1 "), raw[:200])
        return int(raw[9:12])

    def test_garbage_gets_400(self):
        self.assertEqual(self.status_of(raw_exchange(self.proxy.port, b"GARBAGE\r\n\r\n")), 400)

    def test_bad_content_length_gets_400_and_nothing_upstream(self):
        key = self.key()
        raw = raw_exchange(self.proxy.port,
                           f"POST /flaky/s/{key}/200 HTTP/1.1\r\nHost: x\r\nContent-Length: 1x\r\n\r\n".encode())
        self.assertEqual(self.status_of(raw), 400)
        self.assertNothingUpstream(key)

    def test_bad_chunked_body_gets_400_and_nothing_upstream(self):
        key = self.key()
        raw = raw_exchange(self.proxy.port, f"POST /flaky/s/{key}/200 HTTP/1.1\r\nHost: x\r\n"
                           "Transfer-Encoding: chunked\r\n\r\nzz\r\nabc\r\n0\r\n\r\n".encode())
        self.assertEqual(self.status_of(raw), 400)
        self.assertNothingUpstream(key)

    def test_huge_head_gets_431(self):
        key = self.key()
        raw = raw_exchange(self.proxy.port, f"GET /flaky/s/{key}/200 HTTP/1.1\r\nHost: x\r\n".encode()
                           + b"X-Big: " + b"a" * 100_000 + b"\r\n\r\n")
        self.assertEqual(self.status_of(raw), 431)
        self.assertNothingUpstream(key)

    def test_unknown_route_with_a_large_body_is_answered_and_closed(self):
        raw = raw_exchange(self.proxy.port, f"POST /nope/x HTTP/1.1\r\nHost: x\r\n"
                           f"Content-Length: {MAX_BODY + 1}\r\n\r\n".encode())
        self.assertEqual(self.status_of(raw), 404)
        self.assertIn(b"Connection: close\r\n", raw)

    def test_unknown_route_404_connect_501_other_targets_400(self):
        self.assertEqual(self.status_of(raw_exchange(
            self.proxy.port, b"GET /nope/x HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")), 404)
        self.assertEqual(self.status_of(raw_exchange(
            self.proxy.port, b"CONNECT example.com HTTP/1.1\r\nHost: example.com\r\n\r\n")), 400)
        for target in (b"ftp://example.com/", b"*", b"http://", b"http://user@example.com/"):
            self.assertEqual(self.status_of(raw_exchange(
                self.proxy.port, b"GET " + target + b" HTTP/1.1\r\nHost: example.com\r\nConnection: close\r\n\r\n")),
                400, target)

    def test_slow_head_times_out(self):
        key = self.key()
        with socket.create_connection(("127.0.0.1", self.proxy.port), timeout=30) as s:
            started = time.monotonic()
            s.sendall(f"GET /flaky/s/{key}/200 HTTP/1.1\r\nHost: x\r\n".encode())
            closed = False
            # One header byte every 300 ms: each keeps the connection busy, none completes the head.
            for _ in range(40):
                try:
                    s.sendall(b"X")
                except OSError:
                    closed = True
                    break
                s.settimeout(0.3)
                try:
                    if s.recv(1024) == b"":
                        closed = True
                        break
                except socket.timeout:
                    pass
                except OSError:
                    closed = True
                    break
            elapsed = time.monotonic() - started
        self.assertTrue(closed, "a trickling client kept its connection for 12 s")
        self.assertLess(elapsed, 6.0)
        self.assertNothingUpstream(key)

    def test_health(self):
        with urllib.request.urlopen(self.proxy.url("/_curlretry/health"), timeout=10) as response:
            health = json.loads(response.read())
        self.assertEqual(health["status"], "ok")
        self.assertEqual(health["routes"], ["flaky", "mirror"])


class Backpressure(ProxyTestCase):
    def test_a_client_that_hangs_up_takes_its_upstream_transfer_along(self):
        key = self.key()
        s = socket.create_connection(("127.0.0.1", self.proxy.port), timeout=30)
        s.sendall(f"GET /flaky/s/{key}/hang20000 HTTP/1.1\r\nHost: x\r\n\r\n".encode())
        wait_for(lambda: self.plain.count(key) == 1, 10, "the request upstream")
        wait_for(lambda: self.proxy.health()["active"] == 1, 10, "the exchange")
        s.close()
        wait_for(lambda: self.proxy.health()["active"] == 0, 5, "the exchange to end with its client")

    def test_a_slow_reader_pauses_the_upstream_and_memory_stays_bounded(self):
        size = 300 * 1024 * 1024
        s = socket.create_connection(("127.0.0.1", self.proxy.port), timeout=60)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 64 * 1024)
        s.sendall(f"GET /flaky/big/{size} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".encode())
        baseline = self.proxy.rss_kib()
        time.sleep(1.5)  # not synchronisation: the time an unbounded relay would take to buffer it all
        grown = self.proxy.rss_kib() - baseline
        self.assertLess(grown, 64 * 1024, f"the proxy buffered {grown} KiB for a client that reads nothing")
        got = 0
        digest = hashlib.sha256()
        head = b""
        while b"\r\n\r\n" not in head:
            head += s.recv(4096)
        head, _, first = head.partition(b"\r\n\r\n")
        digest.update(first)
        got = len(first)
        while True:
            chunk = s.recv(1 << 20)
            if not chunk:
                break
            got += len(chunk)
            digest.update(chunk)
        s.close()
        self.assertIn(b"Content-Length: %d" % size, head)
        self.assertEqual(got, size)


class ManyStreams(ProxyTestCase):
    def test_300_concurrent_streams_with_retries(self):
        n = 300
        prefix = self.key("many")
        results: list[bytes] = [b""] * n
        import concurrent.futures

        def one(i: int) -> bytes:
            with socket.create_connection(("127.0.0.1", self.proxy.port), timeout=60) as s:
                s.sendall(f"GET /flaky/s/{prefix}-{i}/503,sse3 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
                          .encode())
                return recv_all(s)

        with concurrent.futures.ThreadPoolExecutor(max_workers=n) as pool:
            results = list(pool.map(one, range(n)))
        events = b"".join(b'data: {"n":%d}\n\n' % i for i in range(1, 4)) + b"data: [DONE]\n\n"
        for raw in results:
            head, body = head_and_body(raw)
            self.assertTrue(head.startswith(b"HTTP/1.1 200 OK"), raw[:300])
            self.assertIn(events.split(b"\n\n")[0], body)
            self.assertTrue(body.endswith(b"0\r\n\r\n"), body[-40:])
        for i in (0, n // 2, n - 1):
            self.assertCount(self.plain, f"{prefix}-{i}", 2)


class Lifecycle(harness.UpstreamTestCase):
    def test_sigterm_lets_an_in_flight_stream_finish(self):
        proxy = Proxy(f"version: 1\nproxy:\n  routes:\n    flaky: {{upstream: \"{self.plain.origin}\"}}\n").start()
        self.addCleanup(proxy.stop)
        key = self.key()
        with socket.create_connection(("127.0.0.1", proxy.port), timeout=30) as s:
            s.sendall(f"GET /flaky/s/{key}/sse20 HTTP/1.1\r\nHost: x\r\n\r\n".encode())
            first = s.recv(65536)
            self.assertTrue(first.startswith(b"HTTP/1.1 200 OK"), first)
            proxy.proc.send_signal(15)
            rest = recv_all(s)
        self.assertIn(b"data: [DONE]", first + rest)
        self.assertTrue((first + rest).endswith(b"0\r\n\r\n"))
        self.assertEqual(proxy.terminate(signal_it=False), 0, proxy.log())
        self.assertIn("SIGTERM", proxy.log())

    def test_streamed_body_beyond_the_shims_upload_replay_is_not_retried(self):
        proxy = Proxy(f"version: 1\nsettings:\n  max_upload_replay: 65536\nproxy:\n  max_body_bytes: 65536\n"
                      f"  routes:\n    flaky: {{upstream: \"{self.plain.origin}\"}}\n").start()
        self.addCleanup(proxy.stop)
        key = self.key()
        data = pattern_bytes(1024 * 1024)
        request = urllib.request.Request(proxy.url(f"/flaky/s/{key}/503,echo"), data=data, method="POST")
        with self.assertRaises(urllib.error.HTTPError) as caught:
            urllib.request.urlopen(request, timeout=60)
        self.assertEqual(caught.exception.code, 503)
        self.assertEqual(caught.exception.read(), overloaded_body(key, 1))
        self.assertCount(self.plain, key, 1)
        # The same for a chunked body (its length unknown): streamed past the bound, not retried.
        key = self.key("chunked")
        result = harness.curl(["-sS", "-H", "Transfer-Encoding: chunked", "--data-binary", "@-",
                               proxy.url(f"/flaky/s/{key}/503,echo")], preload=False, input=data)
        self.assertRun(result, 0, overloaded_body(key, 1))
        self.assertCount(self.plain, key, 1, result)

    def test_upstream_tls_is_verified_against_the_system_store(self):
        # The flaky upstream's self-signed certificate is in no system store: the proxy refuses it.
        tls = self.tls()
        proxy = Proxy(f"version: 1\nproxy:\n  routes:\n    tls: {{upstream: \"{tls.origin}\"}}\n").start()
        self.addCleanup(proxy.stop)
        key = self.key()
        raw = raw_exchange(proxy.port, f"GET /tls/s/{key}/200 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
                           .encode())
        head, body = head_and_body(raw)
        self.assertTrue(head.startswith(b"HTTP/1.1 502 Bad Gateway"), raw)
        self.assertIn(b"certificate", body.lower())
        self.assertCount(tls, key, 0)

    def test_two_ensures_at_once_start_one_shared_proxy(self):
        runtime = self.temp_dir()
        config = runtime / "config.yaml"
        config.write_text(f"version: 1\nproxy:\n  routes:\n    flaky: {{upstream: \"{self.plain.origin}\"}}\n")
        with socket.socket() as probe:  # a free port: --ensure needs a fixed one
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
        env = harness.environment(False, {"XDG_RUNTIME_DIR": str(runtime), "CURLRETRY_BASE_MS": harness.FAST_BASE_MS})
        cmd = [harness.CURLRETRY_BIN, "proxy", "--ensure", "--listen", f"127.0.0.1:{port}", "--config", str(config)]
        both = [subprocess.Popen(cmd, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                 stderr=subprocess.PIPE) for _ in range(2)]
        outcomes = sorted(p.communicate(timeout=60)[1].decode() for p in both)
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/_curlretry/health", timeout=10) as response:
            pid = json.loads(response.read())["pid"]

        def stop():
            # The one answering now: the second --ensure below restarts it (issue 26).
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/_curlretry/health", timeout=10) as answer:
                    running = json.loads(answer.read())["pid"]
            except OSError:
                return
            os.kill(running, 15)
            wait_for(lambda: not os.path.exists(f"/proc/{running}"), 20, "the background proxy to exit")
        self.addCleanup(stop)
        self.assertEqual([p.returncode for p in both], [0, 0], outcomes)
        self.assertIn("curlretry: proxy already running on", outcomes[0])
        self.assertIn(f"curlretry: proxy started on http://127.0.0.1:{port} (pid {pid}", outcomes[1])
        key = self.key()
        result = harness.curl(["-sS", f"http://127.0.0.1:{port}/flaky/s/{key}/503,200"], preload=False)
        self.assertRun(result, 0, ok_body(key, 2))
        # With a COMMAND: it runs with each route's variable pointing at the shared proxy.
        config.write_text(config.read_text().replace("}", ", env: FLAKY_BASE_URL}"))
        key = self.key("command")
        script = f"import os, urllib.request; print(urllib.request.urlopen(os.environ['FLAKY_BASE_URL'] + " \
                 f"'/s/{key}/503,200').read().decode(), end='')"
        again = harness.run([*cmd, "--", harness.PYTHON, "-c", script], preload=False,
                            env={"XDG_RUNTIME_DIR": str(runtime)})
        self.assertRun(again, 0, ok_body(key, 2))
        # The file changed and the settings differ (no fast backoff): the idle proxy is restarted (issue 26).
        self.assertIn(b"restarted", again.stderr)

    def test_the_fleet_budget_applies_through_the_proxy(self):
        # Same engine: the shim's fleet state (issue 12) governs the proxy's transfers unchanged. A
        # budget of zero retries: a 503 is handed over at once, one request upstream.
        fleet_dir = self.temp_dir()
        proxy = Proxy(f"version: 1\nfleet:\n  store: machine\n  budget: {{percent: 0, reserve: 0}}\n"
                      f"proxy:\n  routes:\n    flaky: {{upstream: \"{self.plain.origin}\"}}\n",
                      env={"CURLRETRY_FLEET": None, "CURLRETRY_FLEET_DIR": str(fleet_dir)}).start()
        self.addCleanup(proxy.stop)
        key = self.key()
        result = harness.curl(["-sS", proxy.url(f"/flaky/s/{key}/503,200")], preload=False)
        self.assertRun(result, 0, overloaded_body(key, 1))
        self.assertCount(self.plain, key, 1, result)
        self.assertIn("budget", proxy.log())

    def test_non_loopback_listen_needs_a_token(self):
        proxy = Proxy("version: 1\n")
        self.addCleanup(proxy.stop)
        done = harness.run([harness.CURLRETRY_BIN, "proxy", "--listen", "0.0.0.0:0", "--config", proxy.config],
                           preload=False)
        self.assertEqual(done.code, 2, done)
        self.assertIn(b"proxy.token", done.stderr)

    def test_bad_route_config_is_refused_with_its_position(self):
        proxy = Proxy("version: 1\nproxy:\n  routes:\n    bad: {upstream: \"ftp://x\"}\n")
        self.addCleanup(proxy.stop)
        done = harness.run([harness.CURLRETRY_BIN, "proxy", "--listen", "127.0.0.1:0", "--config", proxy.config],
                           preload=False)
        self.assertEqual(done.code, 1, done)
        self.assertIn(b"config.yaml:4:", done.stderr)
        self.assertIn(b"not an http:// or https:// URL", done.stderr)


if __name__ == "__main__":
    unittest.main()
