"""The behaviours of a careful API client, under libcurlretry.so, with real hosts (the curl CLI,
pycurl's easy and multi interfaces): rules by request header, heartbeat lines during long waits,
unattended (persistent) mode, fallback to another model or base URL after repeated overloads,
and refreshing a credential with a command on 401.

The fallback and credential tests need an upstream that looks at the request (its JSON model,
its Host, its Authorization header): `AgentUpstream`, a small http.server on 127.0.0.1 in this
process, records every request byte for byte. The rest use the flaky upstream.
"""

from __future__ import annotations

import http.server
import json
import os
import re
import stat
import subprocess
import threading
import unittest

import harness
from loopback_server import LoopbackHttpServer
from harness import curl, ok_body, overloaded_body

HAVE_PYCURL = harness.have_pycurl()
PYCURL_MISSING = "python3-pycurl is not installed (apt-get install python3-pycurl)"

OVERLOADED = b'{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}'
EXPIRED = b'{"type":"error","error":{"type":"authentication_error","message":"token expired"}}'
# Spacing, escapes, non-ASCII and a nested "model": only the top-level value may change.
BODY = ('{ "model" : "claude-x", "max_tokens": 64,\n  "messages": [{"role": "user", "content": '
        '"say \\"model\\": \\u00e9t\u00e9"}], "metadata": {"model": "claude-x"} }').encode()
FALLBACK_MODEL = "claude-fallback-long-name"
FALLBACK_BODY = BODY.replace(b'"claude-x"', f'"{FALLBACK_MODEL}"'.encode(), 1)
HEARTBEAT = re.compile(rb"curlretry: still waiting for (\S+) (\S+) \(529 overloaded, attempt (\d+), "
                       rb"([0-9.]+)s so far, next try in ([0-9.]+)s\)\n")


class AgentUpstream:
    """POST /fallback/<key>: 529 overloaded while the body's model is claude-x and the Host is
    127.0.0.1; anything else gets 200 with the request body echoed. POST /echo/<key>: always
    200 with the body echoed. /auth/<key>: 200 {"ok":true} when Authorization is exactly
    `accepted`, else 401."""

    def __init__(self):
        self.requests: dict[str, list[dict]] = {}
        self.accepted = ""
        self.lock = threading.Lock()
        upstream = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def do_POST(self):
                length = int(self.headers.get("Content-Length", "0"))
                body = self.rfile.read(length)
                parts = self.path.split("/")
                kind, key = parts[1], parts[2] if len(parts) > 2 else ""
                with upstream.lock:
                    upstream.requests.setdefault(key, []).append({
                        "host": self.headers.get("Host", ""), "body": body, "method": self.command,
                        "authorization": self.headers.get("Authorization"),
                        "content_length": self.headers.get_all("Content-Length")})
                    accepted = upstream.accepted
                status, out = 200, body
                if kind == "fallback":
                    try:
                        model = json.loads(body).get("model")
                    except ValueError:
                        model = None
                    primary = self.headers.get("Host", "").startswith("127.0.0.1")
                    if primary and model in ("claude-x", None):
                        status, out = 529, OVERLOADED
                elif kind == "auth":
                    if self.headers.get("Authorization") == accepted:
                        status, out = 200, b'{"ok":true}'
                    else:
                        status, out = 401, EXPIRED
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(out)))
                self.end_headers()
                if self.command != "HEAD":
                    self.wfile.write(out)

            do_GET = do_PUT = do_HEAD = do_POST

        self.server = LoopbackHttpServer(Handler).start()
        self.port = self.server.port

    def url(self, path: str, host: str = "127.0.0.1") -> str:
        return f"http://{host}:{self.port}{path}"

    def seen(self, key: str) -> list[dict]:
        with self.lock:
            return list(self.requests.get(key, []))

    def stop(self):
        self.server.stop()


# --- programs --------------------------------------------------------------------------------

# argv: a JSON list of requests {url, body?, headers?, copy?}; one handle per request, or the same
# handle for all with "reuse"; prints a JSON report per request.
PYCURL_EASY = r"""
import base64, json, sys, time, pycurl
from io import BytesIO
spec = json.loads(sys.argv[1])
reports = []
c = None
for req in spec["requests"]:
    if c is None or not spec.get("reuse"):
        c = pycurl.Curl()
    out = BytesIO()
    progress = [0]
    c.setopt(pycurl.URL, req["url"])
    c.setopt(pycurl.WRITEDATA, out)
    c.setopt(pycurl.HTTPHEADER, req.get("headers", []))
    c.setopt(pycurl.NOPROGRESS, 0)
    began = time.monotonic()
    def on_progress(*args, abort_after=req.get("abort_after")):
        progress[0] += 1
        # "abort_after": the program gives up that many seconds in, from its progress callback.
        return 1 if abort_after is not None and time.monotonic() - began > abort_after else 0
    c.setopt(pycurl.XFERINFOFUNCTION, on_progress)
    if "body" in req:
        c.setopt(pycurl.POSTFIELDS, base64.b64decode(req["body"]))
    if "upload" in req:  # after POSTFIELDS: the fields stay set in libcurl, the request is a PUT
        data = base64.b64decode(req["upload"])
        c.setopt(pycurl.UPLOAD, 1)
        c.setopt(pycurl.READDATA, BytesIO(data))
        c.setopt(pycurl.INFILESIZE, len(data))
    error = None
    try:
        c.perform()
    except pycurl.error as e:
        error = e.args[0]
    reports.append({"result": error or 0, "status": c.getinfo(pycurl.RESPONSE_CODE),
                    "body": base64.b64encode(out.getvalue()).decode(), "progress_calls": progress[0],
                    "done_after": time.monotonic() - began})
print(json.dumps(reports))
"""

# A multi host: every request on its own handle in one CurlMulti, driven by perform + select.
PYCURL_MULTI = r"""
import base64, json, sys, time, pycurl
from io import BytesIO
spec = json.loads(sys.argv[1])
m = pycurl.CurlMulti()
handles = []
start = time.monotonic()
for req in spec["requests"]:
    c = pycurl.Curl()
    out = BytesIO()
    c.setopt(pycurl.URL, req["url"])
    c.setopt(pycurl.WRITEDATA, out)
    c.setopt(pycurl.HTTPHEADER, req.get("headers", []))
    if "body" in req:
        c.setopt(pycurl.POSTFIELDS, base64.b64decode(req["body"]))
    m.add_handle(c)
    handles.append((c, out))
done = {}
deadline = start + 60
while len(done) < len(handles) and time.monotonic() < deadline:
    while m.perform()[0] == pycurl.E_CALL_MULTI_PERFORM:
        pass
    while True:
        queued, ok, failed = m.info_read()
        for c in ok:
            done[id(c)] = (0, time.monotonic() - start)
        for c, code, msg in failed:
            done[id(c)] = (code, time.monotonic() - start)
        if queued == 0:
            break
    if len(done) < len(handles):
        m.select(1.0)
reports = []
for c, out in handles:
    result, at = done.get(id(c), (-1, -1))
    reports.append({"result": result, "status": c.getinfo(pycurl.RESPONSE_CODE), "done_after": at,
                    "body": base64.b64encode(out.getvalue()).decode()})
print(json.dumps(reports))
"""


# A C-level host through ctypes (global scope, so the preloaded wrappers are the ones called): one
# handle, one curl_slist built with curl_slist_append, two performs. It prints the list's lines
# after each perform, read back from the program's own nodes.
CTYPES_SLIST = r"""
import ctypes, json, os, sys
url, lines = sys.argv[1], json.loads(sys.argv[2])
ctypes.CDLL("libcurl.so.4", mode=os.RTLD_GLOBAL)
api = ctypes.CDLL(None)
class Slist(ctypes.Structure):
    pass
Slist._fields_ = [("data", ctypes.c_char_p), ("next", ctypes.POINTER(Slist))]
api.curl_slist_append.restype = ctypes.POINTER(Slist)
api.curl_slist_append.argtypes = [ctypes.POINTER(Slist), ctypes.c_char_p]
api.curl_easy_init.restype = ctypes.c_void_p
api.curl_easy_perform.argtypes = [ctypes.c_void_p]
api.curl_easy_getinfo.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_void_p]
WRITE = ctypes.CFUNCTYPE(ctypes.c_size_t, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_size_t, ctypes.c_void_p)
write_cb = WRITE(lambda data, size, n, u: size * n)
head = ctypes.POINTER(Slist)()
for line in lines:
    head = api.curl_slist_append(head, line.encode())
easy = api.curl_easy_init()
api.curl_easy_setopt(ctypes.c_void_p(easy), 10002, ctypes.c_char_p(url.encode()))
api.curl_easy_setopt(ctypes.c_void_p(easy), 10023, head)
api.curl_easy_setopt(ctypes.c_void_p(easy), 20011, write_cb)
report = []
for _ in range(2):
    result = api.curl_easy_perform(easy)
    status = ctypes.c_long(0)
    api.curl_easy_getinfo(easy, 0x200002, ctypes.byref(status))
    seen, node = [], head
    while node:
        seen.append(node.contents.data.decode())
        node = node.contents.next
    report.append({"result": result, "status": status.value, "list": seen})
print(json.dumps(report))
"""


def b64(data: bytes) -> str:
    import base64
    return base64.b64encode(data).decode()


def unb64(text: str) -> bytes:
    import base64
    return base64.b64decode(text)


class CarefulClient(harness.UpstreamTestCase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.agent = AgentUpstream()
        cls.addClassCleanup(cls.agent.stop)

    def config(self, text: str) -> str:
        path = self.temp_dir() / "config.yaml"
        path.write_text(text)
        return str(path)

    def env(self, config: str, **extra) -> dict:
        env = {"CURLRETRY_CONFIG": config}
        env.update(extra)
        return env

    def pycurl(self, program: str, spec: dict, env: dict) -> tuple[list, harness.Result]:
        if not HAVE_PYCURL:
            self.skipTest(PYCURL_MISSING)
        r = harness.run([harness.PYTHON, "-c", program, json.dumps(spec)], preload=True, env=env, timeout=90)
        self.assertEqual(r.code, 0, str(r))
        return json.loads(r.stdout), r

    def events(self, path) -> list[dict]:
        with open(path) as f:
            return [json.loads(line) for line in f]

    # --- rules by request header ---------------------------------------------------------

    HEADER_RULES = """version: 1
rules:
  - name: background
    match: {host: 127.0.0.1, header: {X-Request-Kind: "bg-*"}}
    max_attempts: 1
  - name: agent-ua
    match: {header: {user-agent: "agent-bg/*"}}
    max_attempts: 1
  - name: foreground
    match: {host: 127.0.0.1}
    max_attempts: 4
"""

    def test_header_rule_background_fails_fast_foreground_retries_curl(self):
        config = self.config(self.HEADER_RULES)
        for label, headers, attempts, body_of in (
                ("bg", ["-H", "x-request-kind: bg-secret-42"], 1, lambda k: overloaded_body(k, 1)),
                ("bg-name-case", ["-H", "X-REQUEST-KIND:   bg-secret-42"], 1, lambda k: overloaded_body(k, 1)),
                ("other-value", ["-H", "X-Request-Kind: conversation"], 3, lambda k: ok_body(k, 3)),
                ("ua-override", ["-H", "User-Agent: agent-bg/2.1"], 1, lambda k: overloaded_body(k, 1)),
                ("ua-removed", ["-H", "User-Agent:"], 3, lambda k: ok_body(k, 3)),
                ("none", [], 3, lambda k: ok_body(k, 3))):
            with self.subTest(label):
                k = self.key(label)
                r = curl(["-sS", *headers, self.plain.script_url(k, "529,529,200")], preload=True,
                         env=self.env(config))
                self.assertRun(r, 0, body_of(k))
                self.assertCount(self.plain, k, attempts, r)
                self.assertNotIn(b"secret-42", r.stderr)  # header values are never logged
                self.assertNotIn(b"agent-bg", r.stderr)

    def test_header_rule_in_a_multi_host(self):
        config = self.config(self.HEADER_RULES)
        kb, kf = self.key("bg"), self.key("fg")
        reports, r = self.pycurl(PYCURL_MULTI, {"requests": [
            {"url": self.plain.script_url(kb, "529,200"), "headers": ["X-Request-Kind: bg-summary"]},
            {"url": self.plain.script_url(kf, "529,200"), "headers": ["X-Request-Kind: chat"]},
        ]}, self.env(config))
        self.assertEqual([(x["status"], unb64(x["body"])) for x in reports],
                         [(529, overloaded_body(kb, 1)), (200, ok_body(kf, 2))], str(r))
        self.assertCount(self.plain, kb, 1, r)
        self.assertCount(self.plain, kf, 2, r)

    def test_explain_and_check_show_header_rules(self):
        fallback = "    fallback: {after: 3, on: [529, overloaded_error], model: claude-y}\n"
        config = self.config(self.HEADER_RULES + fallback)
        url = self.plain.url("/v1/messages")
        r = harness.run([harness.CURLRETRY_BIN, "explain", "--config", config, "POST", url, "--status", "529",
                         "--header", "x-request-kind: bg-summary", "--json"], preload=False)
        self.assertEqual(r.code, 1, str(r))  # explain: 1 = no retry
        self.assertEqual(json.loads(r.stdout)["rule"], "background")
        self.assertEqual(json.loads(r.stdout)["verdict"], "give_up")
        r = harness.run([harness.CURLRETRY_BIN, "explain", "--config", config, "POST", url, "--status", "529",
                         "--json"], preload=False)
        self.assertEqual(json.loads(r.stdout)["rule"], "foreground")
        self.assertEqual(json.loads(r.stdout)["verdict"], "retry")
        for attempt, fallback in ((2, None), (3, "model claude-y"), (4, None)):  # 4 of 4: no next attempt
            r = harness.run([harness.CURLRETRY_BIN, "explain", "--config", config, "POST", url, "--status", "529",
                             "--attempt", str(attempt), "--json"], preload=False)
            self.assertEqual(json.loads(r.stdout).get("fallback"), fallback, str(r))
        r = harness.run([harness.CURLRETRY_BIN, "explain", "--config", config, "POST", url, "--status", "503",
                         "--body", '{"type":"error","error":{"type":"overloaded_error"}}', "--attempt", "3"],
                        preload=False)
        self.assertIn(b"fallback: the next attempt sends model claude-y (after 3 overloads in a row)\n", r.stdout)
        r = harness.run([harness.CURLRETRY_BIN, "check", "--config", config], preload=False)
        self.assertEqual(r.code, 0, str(r))
        self.assertIn(f'rule "background" (host 127.0.0.1, header x-request-kind: bg-*) from {config}:3:5:\n'.encode(),
                      r.stdout)
        self.assertRegex(r.stdout.decode(), r'  fallback +\{after: 3, on: \[529, "overloaded_error"\], '
                                            r'model: "claude-y"\} +' + re.escape(config) + r':12:15\n')

    # --- heartbeat and persistent mode ---------------------------------------------------

    def heartbeat_config(self, period_ms: int) -> str:
        return self.config(f"""version: 1
settings:
  heartbeat_ms: {period_ms}
defaults:
  backoff: {{strategy: constant, base_ms: 1000}}
""")

    def assert_heartbeats(self, stderr: bytes, attempts_and_waits: list[int], period_s: float, wait_s: float):
        lines = HEARTBEAT.findall(stderr)
        self.assertEqual([int(m[2]) for m in lines], attempts_and_waits, stderr.decode(errors="replace"))
        # Within one wait, "next try in" steps down by one period; "so far" steps up by one.
        nexts = [float(m[4]) for m in lines]
        per_wait = round(wait_s / period_s - 0.5)
        for i, value in enumerate(nexts):
            expected = wait_s - period_s * (i % per_wait + 1)
            self.assertAlmostEqual(value, expected, delta=0.25, msg=stderr.decode(errors="replace"))

    def test_heartbeat_lines_during_a_long_wait_curl(self):
        # Waits of 1 s, a line every 0.3 s: at 0.3, 0.6 and 0.9 s of each wait.
        k = self.key()
        env = self.env(self.heartbeat_config(300), CURLRETRY_BASE_MS=None)
        r = curl(["-sS", self.plain.script_url(k, "529,529,200")], preload=True, env=env)
        self.assertRun(r, 0, ok_body(k, 3))
        self.assert_heartbeats(r.stderr, [1, 1, 1, 2, 2, 2], 0.3, 1.0)
        first = HEARTBEAT.search(r.stderr)
        self.assertEqual(first[1], b"GET")
        self.assertEqual(first[2], f"127.0.0.1:{self.plain.port}/s/{k}/529,529,200".encode())

    def test_no_heartbeat_when_the_wait_is_shorter_than_the_period(self):
        for period in (1000, 5000, 0):
            with self.subTest(period):
                k = self.key(str(period))
                r = curl(["-sS", self.plain.script_url(k, "529,200")], preload=True,
                         env=self.env(self.heartbeat_config(period), CURLRETRY_BASE_MS=None))
                self.assertRun(r, 0, ok_body(k, 2))
                self.assertNotIn(b"still waiting", r.stderr)

    def test_heartbeat_easy_host_progress_callback_keeps_being_called(self):
        k = self.key()
        reports, r = self.pycurl(PYCURL_EASY, {"requests": [{"url": self.plain.script_url(k, "529,200")}]},
                                 self.env(self.heartbeat_config(300), CURLRETRY_BASE_MS=None))
        self.assertEqual(unb64(reports[0]["body"]), ok_body(k, 2), str(r))
        self.assert_heartbeats(r.stderr, [1, 1, 1], 0.3, 1.0)
        self.assertGreaterEqual(reports[0]["progress_calls"], 8, str(r))  # every 100 ms of the 1 s wait

    def test_heartbeat_in_a_multi_host_which_is_never_blocked(self):
        k, quick = self.key("waits"), self.key("quick")
        reports, r = self.pycurl(PYCURL_MULTI, {"requests": [
            {"url": self.plain.script_url(k, "529,200")},
            {"url": self.plain.script_url(quick, "200")},
        ]}, self.env(self.heartbeat_config(300), CURLRETRY_BASE_MS=None))
        self.assertEqual([unb64(x["body"]) for x in reports], [ok_body(k, 2), ok_body(quick, 1)], str(r))
        self.assert_heartbeats(r.stderr, [1, 1, 1], 0.3, 1.0)
        self.assertLess(reports[1]["done_after"], 0.9, str(r))  # not held up by the parked wait
        self.assertGreater(reports[0]["done_after"], 0.95, str(r))

    def test_heartbeat_in_c_multi_hosts(self):
        # multi_poll_host polls with a 10 s timeout and epoll_host/uv_host sleep until their timer:
        # the lines come only if a heartbeat is a wake-up of its own.
        folder = os.environ.get("CURLRETRY_MULTI_HOSTS_DIR", "")
        for host, args in (("multi_poll_host", ["inside"]), ("epoll_host", []), ("uv_host", []),
                           ("fdset_host", [])):
            with self.subTest(host):
                binary = os.path.join(folder, host)
                if not os.access(binary, os.X_OK):
                    self.skipTest(f"{binary} not built (CURLRETRY_MULTI_HOSTS_DIR={folder!r})")
                k = self.key(host)
                r = harness.run([binary, *args, self.plain.script_url(k, "529,200")], preload=True,
                                env=self.env(self.heartbeat_config(300), CURLRETRY_BASE_MS=None))
                self.assertEqual(r.code, 0, str(r))
                self.assertCount(self.plain, k, 2, r)
                self.assert_heartbeats(r.stderr, [1, 1, 1], 0.3, 1.0)

    def test_persistent_mode_outlasts_the_attempt_limit(self):
        k = self.key()
        config = self.config("version: 1\n")
        script = ",".join(["529"] * 7 + ["200"])
        r = curl(["-sS", self.plain.script_url(k, script)], preload=True, env=self.env(config))
        self.assertRun(r, 0, overloaded_body(k, 3))  # the built-in 3 attempts
        k = self.key("persistent")
        r = curl(["-sS", self.plain.script_url(k, script)], preload=True,
                 env=self.env(config, CURLRETRY_PERSISTENT="1", CURLRETRY_MAX_DELAY_MS="100"))
        self.assertRun(r, 0, ok_body(k, 8))
        self.assertCount(self.plain, k, 8, r)
        self.assertIn(b"(attempt 7/unlimited)", r.stderr)
        r = harness.run([harness.CURLRETRY_BIN, "check", "--config", config], preload=False,
                        env={"CURLRETRY_PERSISTENT": "1"})
        self.assertRegex(r.stdout.decode(),
                         r"  max_attempts +-1 \(unlimited\) +persistent \(env CURLRETRY_PERSISTENT\)")
        self.assertRegex(r.stdout.decode(), r"  max_elapsed_ms +21600000 +persistent")

    # --- fallback ------------------------------------------------------------------------

    FALLBACK = """version: 1
settings:
  heartbeat_ms: 0
rules:
  - name: anthropic
    match: {{path: "/fallback/*"}}
    max_attempts: 6
    fallback: {{after: 3, on: [529, overloaded_error], {what}}}
"""

    def fallback_config(self, what: str = f"model: {FALLBACK_MODEL}") -> str:
        return self.config(self.FALLBACK.format(what=what))

    def assert_fallback_requests(self, key: str, result, switched_body: bytes = FALLBACK_BODY):
        seen = self.agent.seen(key)
        self.assertEqual([s["body"] for s in seen], [BODY, BODY, BODY, switched_body], str(result))
        self.assertEqual(seen[3]["content_length"], [str(len(switched_body))])

    def test_fallback_model_curl_body_byte_exact(self):
        k = self.key()
        events = self.temp_dir() / "events.jsonl"
        body_file = self.temp_dir() / "body.json"
        body_file.write_bytes(BODY)
        for label, extra in (("", []), ("explicit-length", ["-H", f"Content-Length: {len(BODY)}"])):
            with self.subTest(label or "plain"):
                k = self.key(label)
                r = curl(["-sS", "-H", "Content-Type: application/json", *extra, "--data-binary", f"@{body_file}",
                          self.agent.url(f"/fallback/{k}")], preload=True,
                         env=self.env(self.fallback_config(), CURLRETRY_EVENTS=str(events)))
                self.assertRun(r, 0, FALLBACK_BODY)
                self.assert_fallback_requests(k, r)
                self.assertEqual(r.stderr.count(b"switching model claude-x -> " + FALLBACK_MODEL.encode() +
                                                b" after 3 overloads\n"), 1, str(r))
        lines = [e for e in self.events(events) if e["path"] == f"/fallback/{k}"]
        self.assertEqual([e.get("fallback") for e in lines], [None, None, None, f"model {FALLBACK_MODEL}"])

    def test_fallback_counts_overloaded_error_events_inside_a_200_stream(self):
        # Anthropic's in-band overload (200 text/event-stream, then `event: error` overloaded_error)
        # counts toward the fallback like a 529.
        k = self.key()
        config = self.config("""version: 1
settings:
  heartbeat_ms: 0
rules:
  - name: anthropic-stream
    match: {path: "/s/*"}
    max_attempts: 6
    backoff: {strategy: constant, base_ms: 10}
    fallback: {after: 3, on: [529, overloaded_error], model: %s}
""" % FALLBACK_MODEL)
        url = self.plain.script_url(k, "sse-overload,sse-overload,sse-overload,sse-good")
        r = curl(["-sS", "-N", "-H", "Content-Type: application/json", "--data-binary", "@-", url], preload=True,
                 input=BODY, env=self.env(config))
        self.assertEqual(r.code, 0, str(r))
        self.assertEqual(r.stderr.count(b"switching model claude-x -> " + FALLBACK_MODEL.encode() +
                                        b" after 3 overloads\n"), 1, str(r))
        self.assertTrue(r.stdout.endswith(b"event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n"), str(r))
        self.assertNotIn(b"event: error", r.stdout)
        self.assertCount(self.plain, k, 4, r)

    def test_fallback_model_pycurl_then_the_programs_own_body_again(self):
        k, again = self.key(), self.key("again")
        reports, r = self.pycurl(PYCURL_EASY, {"reuse": True, "requests": [
            {"url": self.agent.url(f"/fallback/{k}"), "body": b64(BODY)},
            {"url": self.agent.url(f"/echo/{again}"), "body": b64(BODY)},
        ]}, self.env(self.fallback_config()))
        self.assertEqual([unb64(x["body"]) for x in reports], [FALLBACK_BODY, BODY], str(r))
        self.assert_fallback_requests(k, r)
        self.assertEqual([s["body"] for s in self.agent.seen(again)], [BODY])

    def test_fallback_model_in_a_multi_host(self):
        k1, k2 = self.key("a"), self.key("b")
        reports, r = self.pycurl(PYCURL_MULTI, {"requests": [
            {"url": self.agent.url(f"/fallback/{k1}"), "body": b64(BODY)},
            {"url": self.agent.url(f"/echo/{k2}"), "body": b64(BODY)},
        ]}, self.env(self.fallback_config()))
        self.assertEqual([unb64(x["body"]) for x in reports], [FALLBACK_BODY, BODY], str(r))
        self.assert_fallback_requests(k1, r)

    def test_fallback_url_switches_the_base(self):
        k = self.key()
        base = f"http://localhost:{self.agent.port}"
        r = curl(["-sS", "--data-binary", "@-", self.agent.url(f"/fallback/{k}")], preload=True, input=BODY,
                 env=self.env(self.fallback_config(f'url: "{base}"')))
        self.assertRun(r, 0, BODY)
        seen = self.agent.seen(k)
        self.assertEqual([s["host"] for s in seen], [f"127.0.0.1:{self.agent.port}"] * 3 +
                         [f"localhost:{self.agent.port}"], str(r))
        self.assertEqual([s["body"] for s in seen], [BODY] * 4)
        self.assertIn(f"switching to localhost:{self.agent.port}/ after 3 overloads".encode(), r.stderr)

    def test_fallback_leaves_a_body_without_a_top_level_model_alone(self):
        k = self.key()
        form = b"model=claude-x&prompt=hi"
        r = curl(["-sS", "--data-binary", "@-", self.agent.url(f"/fallback/{k}")], preload=True, input=form,
                 env=self.env(self.fallback_config(), CURLRETRY_LOG="debug"))
        self.assertRun(r, 0, OVERLOADED)
        self.assertEqual([s["body"] for s in self.agent.seen(k)], [form] * 6)
        self.assertIn(b"fallback model " + FALLBACK_MODEL.encode() + b" not used: the request body is not a JSON "
                      b"object with a top-level \"model\" string", r.stderr)
        self.assertNotIn(b"switching", r.stderr)

    def test_fallback_leaves_an_upload_alone_even_with_postfields_set(self):
        k = self.key()
        reports, r = self.pycurl(PYCURL_EASY, {"requests": [
            {"url": self.agent.url(f"/fallback/{k}"), "body": b64(b'{"model":"other"}'), "upload": b64(BODY)}]},
            self.env(self.fallback_config()))
        self.assertEqual((reports[0]["status"], unb64(reports[0]["body"])), (529, OVERLOADED), str(r))
        seen = self.agent.seen(k)
        self.assertEqual([(s["method"], s["body"]) for s in seen], [("PUT", BODY)] * 6, str(r))

    def test_fallback_is_off_by_default(self):
        k = self.key()
        r = curl(["-sS", "--data-binary", "@-", self.agent.url(f"/fallback/{k}")], preload=True, input=BODY,
                 env=self.env(self.config("version: 1\ndefaults: {max_attempts: 5}\n")))
        self.assertRun(r, 0, OVERLOADED)
        self.assertEqual([s["body"] for s in self.agent.seen(k)], [BODY] * 5)

    def test_presets_show_fallback_commented_out_and_valid(self):
        examples = sorted((harness.REPO / "packaging" / "examples").glob("*.yaml"))
        self.assertTrue(examples)
        for example in examples:
            with self.subTest(example.name):
                text = example.read_text()
                self.assertEqual(len(re.findall(r"(?m)^    # fallback: \{after: 3, on: \[", text)), 1)
                r = harness.run([harness.CURLRETRY_BIN, "check", "--config", str(example)], preload=False)
                self.assertEqual(r.code, 0, str(r))
                self.assertNotIn(b"  fallback ", r.stdout)  # off by default
                enabled = self.config(text.replace("    # fallback:", "    fallback:"))
                r = harness.run([harness.CURLRETRY_BIN, "check", "--config", enabled], preload=False)
                self.assertEqual(r.code, 0, str(r))
                self.assertIn(b"  fallback ", r.stdout)

    # --- credential refresh --------------------------------------------------------------

    def token_script(self, body: str) -> tuple[str, str]:
        d = self.temp_dir()
        runs = d / "runs"
        script = d / "issue-token"
        script.write_text(f"#!/bin/sh\necho run >> '{runs}'\n{body}\n")
        script.chmod(script.stat().st_mode | stat.S_IXUSR)
        return str(script), str(runs)

    def auth_config(self, script: str, timeout_ms: int = 5000) -> str:
        return self.config(f"""version: 1
rules:
  - name: api
    match: {{path: "/auth/*"}}
    auth: {{on: [401], command: ["{script}", "--scope", "api"], header: Authorization, timeout_ms: {timeout_ms}}}
""")

    def runs(self, path: str) -> int:
        try:
            with open(path) as f:
                return len(f.readlines())
        except FileNotFoundError:
            return 0

    def test_auth_refresh_curl(self):
        k = self.key()
        token = f"Bearer fresh-{k}"
        self.agent.accepted = token
        script, runs = self.token_script(f'[ "$1 $2" = "--scope api" ] || exit 3\necho "issuing" >&2\n'
                                         f'echo "{token}"\necho "second line ignored"')
        events = self.temp_dir() / "events.jsonl"
        r = curl(["-sS", "-H", "Authorization: Bearer stale", "-d", "{}", self.agent.url(f"/auth/{k}")],
                 preload=True, env=self.env(self.auth_config(script), CURLRETRY_EVENTS=str(events)))
        self.assertRun(r, 0, b'{"ok":true}')
        self.assertEqual([s["authorization"] for s in self.agent.seen(k)], ["Bearer stale", token])
        self.assertEqual(self.runs(runs), 1)
        self.assertIn(b"issuing\n", r.stderr)  # the command's stderr passes through
        self.assertIn(b"refreshed Authorization, retrying once", r.stderr)
        self.assertNotIn(b"fresh-", r.stderr)
        self.assertNotIn("fresh-", events.read_text())

    def test_auth_refresh_is_reused_by_later_requests_pycurl(self):
        k1, k2 = self.key("a"), self.key("b")
        token = f"Bearer fresh-{k1}"
        self.agent.accepted = token
        script, runs = self.token_script(f'echo "{token}"')
        reports, r = self.pycurl(PYCURL_EASY, {"requests": [
            {"url": self.agent.url(f"/auth/{k1}"), "headers": ["Authorization: Bearer stale", "X-Keep: 1"]},
            {"url": self.agent.url(f"/auth/{k2}"), "headers": ["Authorization: Bearer stale", "X-Keep: 1"]},
        ]}, self.env(self.auth_config(script)))
        self.assertEqual([x["status"] for x in reports], [200, 200], str(r))
        self.assertEqual([s["authorization"] for s in self.agent.seen(k1)], ["Bearer stale", token])
        self.assertEqual([s["authorization"] for s in self.agent.seen(k2)], [token])
        self.assertEqual(self.runs(runs), 1)

    def test_auth_refresh_never_modifies_the_programs_header_list(self):
        k = self.key()
        token = f"Bearer fresh-{k}"
        self.agent.accepted = token
        script, runs = self.token_script(f'echo "{token}"')
        lines = ["X-First: 1", "authorization: Bearer stale", "X-Last: 2"]
        r = harness.run([harness.PYTHON, "-c", CTYPES_SLIST, self.agent.url(f"/auth/{k}"), json.dumps(lines)],
                        preload=True, env=self.env(self.auth_config(script)))
        self.assertEqual(r.code, 0, str(r))
        report = json.loads(r.stdout)
        self.assertEqual(report, [{"result": 0, "status": 200, "list": lines}] * 2, str(r))
        # First perform: the stale value, then the fresh one; second perform: the fresh one at once.
        self.assertEqual([s["authorization"] for s in self.agent.seen(k)], ["Bearer stale", token, token])
        self.assertEqual(self.runs(runs), 1)

    def test_a_cached_credential_goes_on_the_first_put_and_head(self):
        # Issue 28: before the first attempt libcurl has no effective method, and the rule is
        # matched by the one the options make, as libcurl makes it (Curl_http_method): curl -T is
        # a PUT, curl -I a HEAD (NOBODY), not a GET. The second request of the process carries the
        # credential the first one refreshed, on its first attempt.
        body = self.temp_dir() / "body"
        body.write_bytes(b"put me\n")
        for method, per_url in (("PUT", ["-T", str(body)]), ("HEAD", ["-I"])):
            with self.subTest(method):
                k1, k2 = self.key(f"{method}-a"), self.key(f"{method}-b")
                token = f"Bearer fresh-{k1}"
                self.agent.accepted = token
                script, runs = self.token_script(f'echo "{token}"')
                config = self.config(f"""version: 1
rules:
  - name: by-method
    match: {{path: "/auth/*", method: {method}}}
    auth: {{on: [401], command: ["{script}"], header: Authorization}}
""")
                args = ["-sS", "-H", "Authorization: Bearer stale", "-w", "%{http_code}\n"]
                for k in (k1, k2):
                    args += [*per_url, "-o", "/dev/null", self.agent.url(f"/auth/{k}")]
                r = curl(args, preload=True, env=self.env(config))
                self.assertRun(r, 0, b"200\n200\n")
                seen = {k: [(s["method"], s["authorization"]) for s in self.agent.seen(k)] for k in (k1, k2)}
                self.assertEqual(seen, {k1: [(method, "Bearer stale"), (method, token)], k2: [(method, token)]},
                                 str(r))
                self.assertEqual(self.runs(runs), 1)
                if method == "PUT":
                    self.assertEqual([s["body"] for s in self.agent.seen(k1) + self.agent.seen(k2)],
                                     [b"put me\n"] * 3)

    def test_auth_command_that_itself_gets_a_401_starts_no_further_command(self):
        k, inner = self.key(), self.key("inner")
        token = f"Bearer fresh-{k}"
        self.agent.accepted = token
        # The command asks the same API (through curl, under the same preload and config) and is
        # refused too: its own curlretry must not run the command again.
        script, runs = self.token_script(f"{harness.CURL} -sS -q -o /dev/null {self.agent.url(f'/auth/{inner}')}\n"
                                         f'echo "{token}"')
        r = curl(["-sS", "-H", "Authorization: Bearer stale", self.agent.url(f"/auth/{k}")], preload=True,
                 env=self.env(self.auth_config(script)))
        self.assertRun(r, 0, b'{"ok":true}')
        self.assertEqual(self.runs(runs), 1)
        self.assertEqual(len(self.agent.seen(inner)), 1)
        self.assertEqual(r.stderr.count(b"not run from inside another credential command"), 1, str(r))

    def test_a_slow_auth_command_leaves_an_easy_host_its_timeout(self):
        # Issue 28: easy runs the command as multi does, in the background, through the one
        # between-attempt driver, so the program's own limit still holds while it runs. curl -m 1
        # (CURLOPT_TIMEOUT) with a 6 s command: at about 1 s the command is killed and curl gets
        # the refused 401 byte for byte, exit 0, as without curlretry, after the one request (the
        # next attempt is never sent). Before, the command ran inside curl_easy_perform and curl
        # waited the whole command for it, then exited 0 or 28 as the retry's 1 ms timeout fell.
        # The upper bound is far from both: 1 s plus a loaded machine's start-up, and the 6 s.
        k = self.key()
        token = f"Bearer fresh-{k}"
        self.agent.accepted = token
        script, runs = self.token_script(f'sleep 6\necho "{token}"')
        r = curl(["-sS", "-m", "1", "-H", "Authorization: Bearer stale", self.agent.url(f"/auth/{k}")],
                 preload=True, env=self.env(self.auth_config(script)))
        self.assertEqual(r.code, 0, str(r))
        self.assertEqual(r.stdout, EXPIRED, str(r))
        self.assertIn(b"the program's timeout came while refreshing Authorization", r.stderr)
        self.assertGreater(r.elapsed, 0.9, str(r))
        self.assertLess(r.elapsed, 4.0, str(r))
        self.assertEqual([s["authorization"] for s in self.agent.seen(k)], ["Bearer stale"], str(r))

    def test_an_easy_host_may_abort_from_its_progress_callback_while_the_auth_command_runs(self):
        # Issue 28: the program's progress callback keeps coming while the command runs, and its
        # abort ends the transfer at once (42, CURLE_ABORTED_BY_CALLBACK), the command killed.
        k = self.key()
        self.agent.accepted = f"Bearer fresh-{k}"
        script, runs = self.token_script(f'sleep 6\necho "Bearer fresh-{k}"')
        reports, r = self.pycurl(PYCURL_EASY, {"requests": [
            {"url": self.agent.url(f"/auth/{k}"), "headers": ["Authorization: Bearer stale"], "abort_after": 0.5}]},
            self.env(self.auth_config(script)))
        self.assertEqual((reports[0]["result"], unb64(reports[0]["body"])), (42, b""), str(r))
        self.assertGreater(reports[0]["done_after"], 0.5, str(r))
        self.assertLess(reports[0]["done_after"], 3.5, str(r))  # the command's 6 s, had it waited
        self.assertEqual([s["authorization"] for s in self.agent.seen(k)], ["Bearer stale"], str(r))
        self.assertIn(b"the host aborted during the retry wait after 1 attempt", r.stderr)

    def test_auth_refresh_in_a_multi_host(self):
        k = self.key()
        token = f"Bearer fresh-{k}"
        self.agent.accepted = token
        script, runs = self.token_script(f'echo "{token}"')
        reports, r = self.pycurl(PYCURL_MULTI, {"requests": [
            {"url": self.agent.url(f"/auth/{k}"), "headers": ["Authorization: Bearer stale"]}]},
            self.env(self.auth_config(script)))
        self.assertEqual((reports[0]["status"], unb64(reports[0]["body"])), (200, b'{"ok":true}'), str(r))
        self.assertEqual([s["authorization"] for s in self.agent.seen(k)], ["Bearer stale", token])

    def test_auth_command_does_not_block_a_multi_host(self):
        k, quick, slow = self.key(), self.key("quick"), self.key("slow")
        token = f"Bearer fresh-{k}"
        self.agent.accepted = token
        script, runs = self.token_script(f'sleep 1\necho "{token}"')
        reports, r = self.pycurl(PYCURL_MULTI, {"requests": [
            {"url": self.agent.url(f"/auth/{k}"), "headers": ["Authorization: Bearer stale"]},
            {"url": self.plain.script_url(quick, "hang300")}]}, self.env(self.auth_config(script)))
        self.assertEqual([(x["status"], unb64(x["body"])) for x in reports],
                         [(200, b'{"ok":true}'), (200, ok_body(quick, 1))], str(r))
        # Its answer comes 0.3 s in, while the command sleeps: the loop was free to read it.
        self.assertLess(reports[1]["done_after"], 0.8, str(r))
        self.assertGreater(reports[0]["done_after"], 0.95, str(r))
        self.assertEqual(self.runs(runs), 1)
        # A command past its time: the 401 as the upstream sent it, the other transfer unaffected.
        script, runs = self.token_script("sleep 20; echo 'Bearer late'")
        reports, r = self.pycurl(PYCURL_MULTI, {"requests": [
            {"url": self.agent.url(f"/auth/{slow}"), "headers": ["Authorization: Bearer stale"]},
            {"url": self.plain.script_url(quick, "hang300")}]}, self.env(self.auth_config(script, 1500)))
        self.assertEqual([(x["status"], unb64(x["body"])) for x in reports],
                         [(401, EXPIRED), (200, ok_body(quick, 2))], str(r))
        self.assertLess(reports[1]["done_after"], 1.2, str(r))
        self.assertGreater(reports[0]["done_after"], 1.45, str(r))
        self.assertIn(b"did not finish within 1500 ms; giving up with the upstream's response", r.stderr)
        self.assertLess(r.elapsed, 10.0)

    def test_auth_failing_or_slow_command_gives_up_with_the_401(self):
        self.agent.accepted = "Bearer never"
        for label, body, timeout_ms, why in (
                ("fails", "echo 'Bearer x'; exit 4", 5000, b"exited with status 4"),
                ("empty", "true", 5000, b"printed no value"),
                ("slow", "sleep 20; echo 'Bearer late'", 300, b"did not finish within 300 ms")):
            with self.subTest(label):
                k = self.key(label)
                script, runs = self.token_script(body)
                r = curl(["-sS", "-H", "Authorization: Bearer stale", self.agent.url(f"/auth/{k}")], preload=True,
                         env=self.env(self.auth_config(script, timeout_ms)))
                self.assertRun(r, 0, EXPIRED)
                self.assertEqual(len(self.agent.seen(k)), 1)
                lines = [line for line in r.stderr.splitlines() if line.startswith(b"curlretry:")]
                self.assertEqual(len(lines), 1, str(r))
                self.assertIn(b"cannot refresh Authorization: " + script.encode() + b" " + why +
                              b"; giving up with the upstream's response", lines[0])
                self.assertLess(r.elapsed, 10.0)

    def test_auth_without_a_rule_the_401_is_final(self):
        k = self.key()
        self.agent.accepted = "Bearer never"
        r = curl(["-sS", self.agent.url(f"/auth/{k}")], preload=True, env=self.env(self.config("version: 1\n")))
        self.assertRun(r, 0, EXPIRED)
        self.assertEqual(len(self.agent.seen(k)), 1)


if __name__ == "__main__":
    unittest.main()
