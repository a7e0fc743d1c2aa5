"""`curlretry proxy` driven by real Node.js clients nobody here wrote: Node's own fetch, and the
official @anthropic-ai/sdk and openai packages (installed from npm into the build tree by
scripts/proxy-test-clients.sh), through a reverse route to the flaky upstream. The SDKs' own
retries are off, so every retry counted here is the proxy's."""

from __future__ import annotations

import hashlib
import json
import unittest
import tempfile
import urllib.parse
from pathlib import Path

import harness
from harness import ok_body
from proxy_support import Proxy, node, node_modules, node_problem

PRELOAD = Path(__file__).resolve().parent / "proxy_clients" / "https-proxy-preload.cjs"


def raw_step(response: bytes) -> str:
    """The flaky upstream's `raw` step answering exactly `response`, then closing."""
    return "raw+data=" + urllib.parse.quote(response, safe="")


ANTHROPIC_MESSAGE = {
    "id": "msg_test", "type": "message", "role": "assistant", "model": "claude-test",
    "content": [{"type": "text", "text": "hello"}], "stop_reason": "end_turn", "stop_sequence": None,
    "usage": {"input_tokens": 1, "output_tokens": 1},
}
ANTHROPIC_EVENTS = [
    ("message_start", {"type": "message_start", "message": {**ANTHROPIC_MESSAGE, "content": [], "stop_reason": None}}),
    ("content_block_start", {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
    ("content_block_delta", {"type": "content_block_delta", "index": 0,
                             "delta": {"type": "text_delta", "text": "hello"}}),
    ("content_block_stop", {"type": "content_block_stop", "index": 0}),
    ("message_delta", {"type": "message_delta", "delta": {"stop_reason": "end_turn", "stop_sequence": None},
                       "usage": {"output_tokens": 1}}),
    ("message_stop", {"type": "message_stop"}),
]
OPENAI_COMPLETION = {
    "id": "chatcmpl-test", "object": "chat.completion", "created": 1, "model": "gpt-test",
    "choices": [{"index": 0, "message": {"role": "assistant", "content": "hello"}, "finish_reason": "stop"}],
}


def json_response(document: dict) -> bytes:
    body = json.dumps(document).encode()
    return b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n" % len(body) + body


def sse_response(events: list[tuple[str, dict]]) -> bytes:
    body = b"".join(f"event: {name}\ndata: {json.dumps(data)}\n\n".encode() for name, data in events)
    return b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n" + body


class NodeClients(harness.UpstreamTestCase):
    proxy: Proxy

    @classmethod
    def setUpClass(cls) -> None:
        problem = node_problem()
        if problem:
            raise unittest.SkipTest(problem)
        super().setUpClass()
        cls.proxy = Proxy(f"version: 1\nproxy:\n  routes:\n    flaky: {{upstream: \"{cls.plain.origin}\"}}\n").start()
        cls.addClassCleanup(cls.proxy.stop)

    def base_url(self, key: str, script: str) -> str:
        # An SDK appends its own path (/v1/messages) to the base URL; the flaky upstream reads its
        # script from the path, so the SDK's path goes into the (ignored) query string.
        return self.proxy.url(f"/flaky/s/{key}/{script}?sdk-path=")

    def node(self, *args: str, timeout: float = 60) -> dict:
        code, result, stderr = node(*args, timeout=timeout)
        self.assertEqual(code, 0, f"node {' '.join(args)}\n{result}\n{stderr}\n{self.proxy.log()[-3000:]}")
        return result

    def test_fetch_503_then_200(self):
        key = self.key()
        result = self.node("fetch", self.proxy.url(f"/flaky/s/{key}/503,503,200"))
        self.assertEqual(result, {"status": 200, "type": "text/plain", "body": ok_body(key, 3).decode()})
        self.assertCount(self.plain, key, 3)

    def test_fetch_post_body_replayed_after_captcha(self):
        key = self.key()
        result = self.node("fetch", self.proxy.url(f"/flaky/s/{key}/captcha,echo"), "x" * 5000)
        self.assertEqual(result["body"], harness.echo_body(b"x" * 5000).decode())
        self.assertCount(self.plain, key, 2)

    def test_fetch_sees_the_give_up_429_verbatim(self):
        key = self.key()
        result = self.node("fetch", self.proxy.url(f"/flaky/s/{key}/429"))
        self.assertEqual(result["status"], 429)
        self.assertEqual(result["body"], harness.error_body("too many requests", key, 3).decode())
        self.assertCount(self.plain, key, 3)

    def test_fetch_streams_sse_live(self):
        key = self.key()
        result = self.node("fetch-stream", self.proxy.url(f"/flaky/s/{key}/503,sse10"))
        text = "".join(c["text"] for c in result["chunks"])
        self.assertEqual(text, "".join(f'data: {{"n":{i}}}\n\n' for i in range(1, 11)) + "data: [DONE]\n\n")
        spread = result["chunks"][-1]["at"] - result["chunks"][0]["at"]
        self.assertGreater(len(result["chunks"]), 3, result)
        self.assertGreater(spread, 200, f"events arrived together: buffered, not streamed\n{result}")
        self.assertCount(self.plain, key, 2)

    def test_500_concurrent_fetch_streams(self):
        n = 500
        prefix = self.key("many")
        result = self.node("many", str(n), self.proxy.url(f"/flaky/s/{prefix}-"), "529,sse2", timeout=180)
        events = "".join(f'data: {{"n":{i}}}\n\n' for i in range(1, 3)) + "data: [DONE]\n\n"
        expected = f"200 {hashlib.sha256(events.encode()).hexdigest()}"
        self.assertEqual(result["tally"], {expected: n}, result)
        for i in (0, n - 1):
            self.assertCount(self.plain, f"{prefix}-{i}", 2)


class Sdks(NodeClients):
    @classmethod
    def setUpClass(cls) -> None:
        super().setUpClass()
        modules, problem = node_modules()
        if problem:
            raise unittest.SkipTest(problem)
        cls.modules = modules

    # The fetch tests run once, in NodeClients.
    test_fetch_503_then_200 = test_fetch_post_body_replayed_after_captcha = None
    test_fetch_sees_the_give_up_429_verbatim = test_fetch_streams_sse_live = test_500_concurrent_fetch_streams = None

    def test_anthropic_message_after_a_529(self):
        key = self.key()
        result = self.node("anthropic", self.base_url(key, "529," + raw_step(json_response(ANTHROPIC_MESSAGE))))
        self.assertEqual(result["message"]["id"], "msg_test")
        self.assertEqual(result["message"]["content"], [{"type": "text", "text": "hello"}])
        self.assertCount(self.plain, key, 2)

    def test_anthropic_stream_after_a_529(self):
        key = self.key()
        result = self.node("anthropic-stream", self.base_url(key, "529," + raw_step(sse_response(ANTHROPIC_EVENTS))))
        self.assertEqual(result["events"], [name for name, _ in ANTHROPIC_EVENTS])
        self.assertCount(self.plain, key, 2)

    def test_anthropic_sdk_sees_the_final_529_after_the_attempts(self):
        key = self.key()
        code, result, stderr = node("anthropic", self.base_url(key, "529"))
        self.assertEqual(code, 1, stderr)
        self.assertEqual(result["status"], 529, result)
        self.assertCount(self.plain, key, 3)

    def test_openai_completion_after_a_429(self):
        key = self.key()
        result = self.node("openai", self.base_url(key, "429," + raw_step(json_response(OPENAI_COMPLETION))))
        self.assertEqual(result["completion"]["choices"][0]["message"]["content"], "hello")
        self.assertCount(self.plain, key, 2)

    def test_openai_stream_after_a_503(self):
        key = self.key()
        result = self.node("openai-stream", self.base_url(key, "503,sse3"))
        self.assertEqual(result["events"], [{"n": 1}, {"n": 2}, {"n": 3}])
        self.assertCount(self.plain, key, 2)

    def test_openai_permanent_quota_is_not_retried(self):
        key = self.key()
        code, result, stderr = node("openai", self.base_url(key, "quota,200"))
        self.assertEqual(code, 1, stderr)
        self.assertEqual(result["status"], 429, result)
        self.assertCount(self.plain, key, 1)


class ThroughHttpsProxy(harness.UpstreamTestCase):
    """HTTPS_PROXY + NODE_EXTRA_CA_CERTS with proxy.intercept: the flaky upstream's TLS side is
    intercepted, so fetch and the SDKs are retried though they talk to an https:// URL. Node 20's
    fetch does not read HTTPS_PROXY itself: a `--require` preload sets undici's EnvHttpProxyAgent
    as the global dispatcher (what a user of Node 20 does; Node 24 reads it with NODE_USE_ENV_PROXY)."""

    proxy: Proxy

    @classmethod
    def setUpClass(cls) -> None:
        problem = node_problem()
        if problem:
            raise unittest.SkipTest(problem)
        modules, problem = node_modules()
        if problem:
            raise unittest.SkipTest(problem)
        super().setUpClass()
        cls._home = tempfile.TemporaryDirectory(prefix="curlretry-ca-")
        cls.addClassCleanup(cls._home.cleanup)
        made = harness.run([harness.CURLRETRY_BIN, "proxy", "ca"], preload=False,
                           env={"XDG_DATA_HOME": cls._home.name})
        assert made.code == 0, made.stderr
        tls = cls.tls()
        # The upstream is on loopback, on its own port: not a default target (proxy.forward).
        cls.proxy = Proxy(f"version: 1\nproxy:\n  intercept: [\"127.0.0.1\"]\n  upstream_ca_file: {tls.cert}\n"
                          "  forward: {allow_ports: any, allow_loopback: true}\n",
                          env={"XDG_DATA_HOME": cls._home.name}).start()
        cls.addClassCleanup(cls.proxy.stop)
        cls.env = {"HTTPS_PROXY": cls.proxy.url(""), "NO_PROXY": "", "no_proxy": "",
                   "NODE_EXTRA_CA_CERTS": str(Path(cls._home.name) / "curlretry" / "ca" / "ca.pem"),
                   "NODE_OPTIONS": f"--require {PRELOAD}"}

    def node(self, *args: str, timeout: float = 60) -> dict:
        code, result, stderr = node(*args, timeout=timeout, env=self.env)
        self.assertEqual(code, 0, f"node {' '.join(args)}\n{result}\n{stderr}\n{self.proxy.log()[-3000:]}")
        return result

    def base_url(self, key: str, script: str) -> str:
        return self.tls().script_url(key, script) + "?sdk-path="

    def test_fetch_503_503_200(self):
        key = self.key()
        result = self.node("fetch", self.tls().script_url(key, "503,503,200"))
        self.assertEqual(result, {"status": 200, "type": "text/plain", "body": ok_body(key, 3).decode()})
        self.assertCount(self.tls(), key, 3)

    def test_fetch_sees_the_give_up_429_verbatim(self):
        key = self.key()
        result = self.node("fetch", self.tls().script_url(key, "429"))
        self.assertEqual(result["status"], 429)
        self.assertCount(self.tls(), key, 3)

    def test_without_the_ca_node_refuses_the_intercepted_certificate(self):
        key = self.key()
        code, result, stderr = node("fetch", self.tls().script_url(key, "200"),
                                    env={**self.env, "NODE_EXTRA_CA_CERTS": None})
        self.assertNotEqual(code, 0, result)
        self.assertCount(self.tls(), key, 0)

    def test_anthropic_message_after_a_529(self):
        key = self.key()
        result = self.node("anthropic", self.base_url(key, "529," + raw_step(json_response(ANTHROPIC_MESSAGE))))
        self.assertEqual(result["message"]["content"], [{"type": "text", "text": "hello"}])
        self.assertCount(self.tls(), key, 2)

    def test_anthropic_stream_after_a_529(self):
        key = self.key()
        result = self.node("anthropic-stream", self.base_url(key, "529," + raw_step(sse_response(ANTHROPIC_EVENTS))))
        self.assertEqual(result["events"], [name for name, _ in ANTHROPIC_EVENTS])
        self.assertCount(self.tls(), key, 2)

    def test_openai_stream_after_a_503(self):
        key = self.key()
        result = self.node("openai-stream", self.base_url(key, "503,sse3"))
        self.assertEqual(result["events"], [{"n": 1}, {"n": 2}, {"n": 3}])
        self.assertCount(self.tls(), key, 2)


if __name__ == "__main__":
    unittest.main()
