"""The model of the differential fault-injection test: what a host must see when a fault script
plays through libcurl + libcurlretry.so, computed without running anything.

Three parts, each small enough to read against its source of truth:

- `Step`: one step of the flaky upstream's script grammar (upstream/README.md) and the
  exact bytes it answers with (status line, headers, body).
- `Policy` / `decide`: the retry policy (core/policy.h) and DESIGN §3.3-§3.5 as core/decide.cpp
  orders it. The test checks every (policy, outcome) pair this module decides against
  `curlretry explain --json`, so this copy cannot drift from core::decide unnoticed.
- `simulate`: what libcurl does with a script on one handle (including its own silent re-send of
  a request on a reused keep-alive connection that dies before answering), what the shim does
  with each attempt, and therefore what the host sees: which request's bytes, how many requests
  the upstream served, the CURLcode, the log lines.

Python 3.11 standard library only.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import urllib.parse

import sse_streams

# --- the upstream (upstream/README.md, responses.cpp) -----------------------------------------

PATTERN = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+\n"
BREAK_SHORTFALL = 1_000_000
DATE = "<HTTP-DATE>"  # stands for a Retry-After date the server computes from its clock

REASONS = {
    200: "OK", 201: "Created", 202: "Accepted", 204: "No Content", 206: "Partial Content",
    301: "Moved Permanently", 302: "Found", 303: "See Other", 304: "Not Modified",
    307: "Temporary Redirect", 308: "Permanent Redirect", 400: "Bad Request", 401: "Unauthorized",
    403: "Forbidden", 404: "Not Found", 405: "Method Not Allowed", 408: "Request Timeout",
    409: "Conflict", 413: "Content Too Large", 422: "Unprocessable Content", 425: "Too Early",
    429: "Too Many Requests", 500: "Internal Server Error", 501: "Not Implemented",
    502: "Bad Gateway", 503: "Service Unavailable", 504: "Gateway Timeout", 529: "Site Overloaded",
}

CAPTCHA_BODY = b'{"code":3007,"msg":"captcha verify failed"}'
QUOTA_BODY = b'{"error":{"code":"1113","message":"You have exceeded your daily quota"}}'
ZAI1302_BODY = b'{"error":{"code":"1302","message":"High concurrency"}}'
FIXED = {"captcha": (400, CAPTCHA_BODY), "quota": (429, QUOTA_BODY), "zai1302": (429, ZAI1302_BODY)}

# CURLcodes a host sees
CURLE_OK = 0
CURLE_PARTIAL_FILE = 18
CURLE_OPERATION_TIMEDOUT = 28
CURLE_GOT_NOTHING = 52
CURLE_SEND_ERROR = 55
CURLE_RECV_ERROR = 56
CURLE_SEND_FAIL_REWIND = 65


# The provider-shaped event streams the generator uses (upstream/sse_scripts.cpp), and the
# error each one sends before any content (None: content comes first, or no error at all).
SSE_SCRIPTS = {"sse-overload": "overloaded_error", "sse-good": None, "sse-late-error": None,
               "sse-oai-chat-overload": "server_is_overloaded", "sse-oai-chat-good": None}


def reason(status: int) -> str:
    return REASONS.get(status, "Status")


def pattern(n: int) -> bytes:
    return (PATTERN * (n // len(PATTERN) + 1))[:n]


def bodyless(status: int) -> bool:
    return status < 200 or status in (204, 304)


@dataclasses.dataclass(frozen=True)
class Step:
    """One step of a script, e.g. `503+ram=20+close`. `text` is the form that goes into the URL
    (values percent-encoded); the other fields are decoded."""

    text: str
    kind: str            # respond | echo | hang | reset | close | sse | break | ssescript
    status: int = 200
    fixed: str = ""      # captcha | quota | zai1302
    number: int = 0      # hang ms, sse events, break bytes
    ra: str | None = None
    radate: int | None = None
    ram: str | None = None
    xsr: str | None = None
    length: int | None = None
    close: bool = False

    @staticmethod
    def parse(text: str) -> "Step":
        base, *mods = text.split("+")
        fields: dict = {"text": text}
        if base in FIXED:
            fields.update(kind="respond", status=FIXED[base][0], fixed=base)
        elif base in SSE_SCRIPTS:
            fields.update(kind="ssescript", fixed=base, status=200)
        elif base in ("reset", "close", "echo"):
            fields.update(kind=base, status=200 if base == "echo" else 0)
        elif base.startswith(("hang", "sse", "break")):
            kind = next(k for k in ("hang", "sse", "break") if base.startswith(k))
            fields.update(kind=kind, number=int(base[len(kind):]), status=200)
        else:
            fields.update(kind="respond", status=int(base))
        for mod in mods:
            if mod == "close":
                fields["close"] = True
                continue
            name, _, value = mod.partition("=")
            value = urllib.parse.unquote(value)
            if name == "radate":
                fields["radate"] = int(value)
            elif name == "len":
                fields["length"] = int(value)
            elif name in ("ra", "ram", "xsr"):
                fields[name] = value
            else:
                raise ValueError(f"modifier {mod!r} is not modelled")
        return Step(**fields)

    # What the step sends for request number `n` of `key` with request body `upload`.
    def body(self, key: str, n: int, upload: bytes = b"") -> bytes:
        if self.kind in ("reset", "close"):
            return b""
        if self.kind == "ssescript":
            return sse_streams.body(self.fixed, key, n)
        if self.kind == "sse":
            events = b"".join(b'data: {"n":%d}\n\n' % i for i in range(1, self.number + 1))
            return events + b"data: [DONE]\n\n"
        if self.kind == "break":
            return pattern(self.number)
        if self.kind == "echo" and self.length is None:
            return f"sha256={hashlib.sha256(upload).hexdigest()} length={len(upload)}\n".encode()
        if bodyless(self.status):
            return b""
        if self.length is not None:
            return pattern(self.length)
        if self.fixed:
            return FIXED[self.fixed][1]
        if self.status < 300:
            return f"ok key={key} attempt={n}\n".encode()
        word = "overloaded" if self.status in (503, 529) else reason(self.status).lower()
        return f'{{"error":"{word}","key":"{key}","attempt":{n}}}'.encode()

    def content_type(self) -> str:
        if self.length is not None:
            return "application/octet-stream"
        if self.kind == "echo":
            return "text/plain"
        if self.fixed or self.status >= 400:
            return "application/json"
        return "text/plain"

    def head(self, body_length: int) -> str:
        """The response head, with DATE where the server writes a date of its own clock."""
        if self.kind in ("reset", "close"):
            return ""
        if self.kind in ("sse", "ssescript"):
            return ("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\n"
                    "Transfer-Encoding: chunked\r\n\r\n")
        if self.kind == "break":
            return (f"HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\n"
                    f"Content-Length: {self.number + BREAK_SHORTFALL}\r\n\r\n")
        lines = [f"HTTP/1.1 {self.status} {reason(self.status)}"]
        if not bodyless(self.status):
            lines += [f"Content-Type: {self.content_type()}", f"Content-Length: {body_length}"]
        for name, value in self.headers():
            lines.append(f"{name}: {value}")
        if self.close:
            lines.append("Connection: close")
        return "\r\n".join(lines) + "\r\n\r\n"

    def headers(self) -> list[tuple[str, str]]:
        """The retry-related headers, in the server's order (DATE for a computed date)."""
        out = []
        if self.ra is not None:
            out.append(("Retry-After", self.ra))
        if self.radate is not None:
            out.append(("Retry-After", DATE))
        if self.ram is not None:
            out.append(("retry-after-ms", self.ram))
        if self.xsr is not None:
            out.append(("x-should-retry", self.xsr))
        return out


# --- the policy (core/policy.h, config/REFERENCE.md) ------------------------------------------

RETRY_STATUS = (408, 429, 500, 502, 503, 504, 529)
RETRY_MARKERS = ("captcha", "verify failed", "risk control", "风控", "rate limit", "too many requests",
                 "try again")
PERMANENT_MARKERS = ("per day", "daily quota", "monthly", "billing", "upgrade your plan", "insufficient_quota",
                     "context length", "prompt too long", "usage_limit_reached")
RETRY_TRANSPORT = ("connect_refused", "reset", "send", "recv", "empty_reply", "tls_handshake", "http2_stream")


@dataclasses.dataclass(frozen=True)
class Policy:
    name: str
    max_attempts: int = 3
    strategy: str = "exponential"
    base_ms: int = 1
    max_ms: int = 4
    honor_retry_after: bool = True
    max_retry_after: int = 50
    retry_status: tuple = RETRY_STATUS
    retry_markers: tuple = RETRY_MARKERS
    retry_transport: tuple = RETRY_TRANSPORT
    permanent_markers: tuple = PERMANENT_MARKERS
    codes: tuple = ()  # ((path, retry values, permanent values), ...)
    body_window: int = 4096

    def yaml(self) -> str:
        """The rule for this policy, matching keys `<name>-*` (config/REFERENCE.md)."""
        def strings(values):
            return "[" + ", ".join(json.dumps(v, ensure_ascii=False) for v in values) + "]"
        lines = [
            f"  - name: {self.name}",
            f"    match: {{path: \"/s/{self.name}-*\"}}",
            f"    max_attempts: {self.max_attempts}",
            f"    backoff: {{strategy: {self.strategy}, base_ms: {self.base_ms}, max_ms: {self.max_ms}, jitter: none}}",
            f"    retry_after: {{honor: {'true' if self.honor_retry_after else 'false'}, "
            f"max_ms: {self.max_retry_after}}}",
            "    retry_on:",
            f"      status: [{', '.join(map(str, self.retry_status))}]",
            f"      body_markers: {strings(self.retry_markers)}",
            f"      transport: [{', '.join(self.retry_transport)}]",
            f"    never_retry: {{body_markers: {strings(self.permanent_markers)}}}",
        ]
        if self.codes:
            lines.append("    codes:")
            for path, retry, permanent in self.codes:
                lines.append(f"      - {{path: {path}, retry: {strings(retry)}, permanent: {strings(permanent)}}}")
        else:
            lines.append("    codes: []")
        lines.append(f"    body_window: {self.body_window}")
        return "\n".join(lines)


# The policies scripts run under, one config rule each (a script's key starts with the name).
POLICIES = {
    p.name: p
    for p in (
        Policy("a1", max_attempts=1),
        Policy("a2", max_attempts=2),
        Policy("a3"),
        Policy("a5", max_attempts=5, strategy="triangular", max_ms=6),
        Policy("au", max_attempts=-1, strategy="constant"),
        Policy("nr", max_attempts=4, retry_status=(503,), retry_transport=("reset",), retry_markers=("captcha",),
               permanent_markers=("daily quota",), max_retry_after=20),
        Policy("ih", honor_retry_after=False),
        Policy("cz", max_attempts=4, retry_status=(503, 529),
               codes=(("error.code", ("1302",), ("1113",)),)),
        Policy("to", max_attempts=4, retry_transport=(*RETRY_TRANSPORT, "timeout")),
    )
}

# Process-wide settings of every run (small enough that the test reaches both sides of them).
MAX_UPLOAD_REPLAY = 65536
MAX_ERROR_BODY = 65536


def config_yaml() -> str:
    rules = "\n".join(p.yaml() for p in POLICIES.values())
    return ("version: 1\n"
            "defaults:\n  max_attempts: 3\n  backoff: {strategy: exponential, base_ms: 1, max_ms: 4}\n"
            "  retry_after: {honor: true, max_ms: 50}\n"
            f"settings: {{max_upload_replay: {MAX_UPLOAD_REPLAY}, max_error_body: {MAX_ERROR_BODY}}}\n"
            f"rules:\n{rules}\n")


# --- one attempt's outcome and the decision (core/outcome.h, core/decide.cpp) -----------------

@dataclasses.dataclass(frozen=True)
class Outcome:
    transport: str = "ok"         # ok | reset | empty_reply | recv | bad_argument
    status: int = 0
    headers: tuple = ()           # (("Retry-After", "1"), ...), DATE for a computed date
    radate: int | None = None     # seconds from now the DATE stands for
    body: bytes = b""             # the first bytes of the body (classification)
    committed: bool = False
    replayable: bool = True
    attempt: int = 1
    remaining: int | None = None  # ms left before the host's own deadline (None: far away)
    stream_error: str | None = None  # the error event before any content of a held event stream


@dataclasses.dataclass(frozen=True)
class Verdict:
    action: str      # retry | give_up
    reason: str
    delay: int = 0   # ms, when action == retry


def _fold(data: bytes) -> bytes:
    return data.lower()  # bytes.lower() folds ASCII only, as core/body_scan.cpp does


def _find_marker(body: bytes, markers) -> str | None:
    folded = _fold(body)
    for marker in markers:
        if marker and _fold(marker.encode()) in folded:
            return marker
    return None


def _json_scalar(body: bytes, path: str) -> str | None:
    try:
        value = json.loads(body.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        return None
    for part in path.split("."):
        if not isinstance(value, dict) or part not in value:
            return None
        value = value[part]
    if isinstance(value, bool) or value is None or isinstance(value, (dict, list)):
        return None if isinstance(value, (dict, list)) else json.dumps(value)
    return str(value)


def _header(outcome: Outcome, name: str) -> str | None:
    for key, value in outcome.headers:  # first occurrence wins
        if key.lower() == name:
            return value
    return None


def _classify(policy: Policy, o: Outcome) -> tuple[str, str]:
    should = _header(o, "x-should-retry")
    if should is not None:
        if should.lower() == "false":
            return "give_up", "should-retry:false"
        if should.lower() == "true":
            return "retry", "should-retry:true"
    if o.stream_error:
        # The generator's stream errors are the built-in table's transient ones, and no policy
        # names them in its codes or markers.
        return "retry", f"stream-error:{o.stream_error}"
    if o.status >= 400:
        body = o.body[: policy.body_window]
        for path, retry, permanent in policy.codes:
            value = _json_scalar(body, path)
            if value is None:
                continue
            if value in permanent:
                return "give_up", f"permanent-code:{value}"
            if value in retry:
                return "retry", f"code:{value}"
        marker = _find_marker(body, policy.permanent_markers)
        if marker:
            return "give_up", f"permanent:{marker}"
        if o.status in policy.retry_status:
            return "retry", f"status:{o.status}"
        if o.status < 500:
            marker = _find_marker(body, policy.retry_markers)
            if marker:
                return "retry", f"marker:{marker}"
    if o.transport in policy.retry_transport:
        return "retry", f"transport:{o.transport}"
    return "give_up", "not-retryable"


def _digits(text: str) -> bool:
    return text != "" and all("0" <= c <= "9" for c in text)


def parse_retry_after(value: str, radate: int | None) -> int | None:
    """core/retry_after.cpp for the values the generator sends: delta-seconds, a date in the past
    (0), a date far in the future, or garbage (None)."""
    v = value.strip(" \t")
    if radate is not None and value == DATE:
        return max(radate, 0) * 1000  # a whole-second date from now: 0 for now, else >= that
    if not v:
        return None
    if "0" <= v[0] <= "9":
        return int(v) * 1000 if _digits(v) else None
    if v in PAST_DATES:
        return 0
    if v in FUTURE_DATES:
        return 10**12
    return None


def parse_retry_after_ms(value: str) -> int | None:
    v = value.strip(" \t")
    whole, dot, fraction = v.partition(".")
    if not whole and not fraction:
        return None
    if (whole and not _digits(whole)) or (fraction and not _digits(fraction)):
        return None
    ms = int(whole) if whole else 0
    if fraction.strip("0"):
        ms += 1  # a fraction rounds up
    return ms


PAST_DATES = ("Sun, 06 Nov 1994 08:49:37 GMT", "Sunday, 06-Nov-94 08:49:37 GMT", "Sun Nov  6 08:49:37 1994")
FUTURE_DATES = ("Fri, 01 Jan 2100 00:00:00 GMT",)


def _server_wait(policy: Policy, o: Outcome) -> int | None:
    if not policy.honor_retry_after:
        return None
    ram = _header(o, "retry-after-ms")
    if ram is not None:
        ms = parse_retry_after_ms(ram)
        if ms is not None:
            return ms
    ra = _header(o, "retry-after")
    if ra is not None:
        return parse_retry_after(ra, o.radate)
    return None


def backoff(policy: Policy, attempt: int) -> int:
    if policy.base_ms <= 0:
        return 0
    n = max(attempt, 1)
    if policy.strategy == "exponential":
        return min(policy.base_ms * 2 ** (n - 1), policy.max_ms)
    if policy.strategy == "triangular":
        return min(policy.base_ms * n * (n + 1) // 2, policy.max_ms)
    return min(policy.base_ms, policy.max_ms)


def decide(policy: Policy, o: Outcome) -> Verdict:
    action, why = _classify(policy, o)
    if o.committed:
        return Verdict("give_up", "committed")
    if o.transport == "bad_argument":
        return Verdict("give_up", "bad-argument")
    if o.transport == "ok" and 200 <= o.status < 400 and not o.stream_error:
        return Verdict("give_up", "success")
    if not o.replayable:
        return Verdict("give_up", "not-replayable")
    if policy.max_attempts != -1 and o.attempt >= policy.max_attempts:
        return Verdict("give_up", "exhausted")
    if action == "give_up":
        return Verdict("give_up", why)
    wait = _server_wait(policy, o)
    if wait is not None:
        if wait > policy.max_retry_after:
            return Verdict("give_up", "retry-after-too-long")
        delay = wait
    else:
        delay = backoff(policy, o.attempt)
    if o.remaining is not None and delay >= o.remaining:
        return Verdict("give_up", "deadline")  # sleeping into the host's own timeout
    return Verdict("retry", why, delay)


def may_retry_response(policy: Policy, status: int, xsr: str | None) -> bool:
    """Whether the shim holds a response's body (core::may_retry_response)."""
    if policy.max_attempts != -1 and policy.max_attempts <= 1:
        return False
    if 200 <= status < 400:
        return False
    if status >= 400:
        return True
    return xsr is not None and xsr.lower() == "true"


# --- a transfer through libcurl and the shim --------------------------------------------------

@dataclasses.dataclass(frozen=True)
class Upload:
    """The request body a host sends, and how. `rewindable`: libcurl can rewind it when it
    re-sends a request on its own (a seek callback, the default fread, or POSTFIELDS);
    `replayable`: the shim can send it again for a retry."""

    method: str = "GET"
    data: bytes | None = None
    rewindable: bool = True
    replayable: bool = True

    @property
    def expect100(self) -> bool:
        """libcurl sends `Expect: 100-continue` with every non-empty PUT (and with POSTs over
        1 MiB, which the generator never makes): the upstream answers `100 Continue` before it
        reads the body, so even a reset or close comes after a response byte."""
        return self.method == "PUT" and bool(self.data)


@dataclasses.dataclass
class Expected:
    requests: int                # requests the upstream served for the key
    attempts: int                # attempts the shim made (= retry log lines + 1)
    final_request: int           # the request whose answer the host sees (0: none)
    codes: tuple                 # acceptable CURLcodes
    status: int                  # CURLINFO_RESPONSE_CODE
    head: str                    # header bytes (DATE placeholder), "" when none
    body: bytes
    reason: str                  # the final verdict's reason, as the last log line says it
    method: str
    decisions: list              # [(Outcome, Verdict)] for the explain cross-check


@dataclasses.dataclass
class Script:
    key: str
    policy: Policy
    steps: tuple  # of Step

    @property
    def text(self) -> str:
        return ",".join(s.text for s in self.steps)

    def path(self) -> str:
        return f"/s/{self.key}/{self.text}"

    def step(self, n: int) -> Step:
        return self.steps[min(n, len(self.steps)) - 1]


def outcome_of(step: Step, policy: Policy, key: str, n: int, upload: bytes, attempt: int, replayable: bool,
               transport: str | None = None, status: int = 0) -> Outcome:
    """What the shim hands core::decide when request `n` played `step`."""
    if transport == "timeout":  # the host's whole-transfer deadline passed: no time is left
        return Outcome(transport=transport, status=status, attempt=attempt, replayable=replayable, remaining=0)
    if transport is not None:  # a request that died before any final response byte
        return Outcome(transport=transport, status=status, attempt=attempt, replayable=replayable)
    if step.kind == "break":
        return Outcome(transport="recv", status=200, committed=step.number > 0, attempt=attempt,
                       replayable=replayable)
    if step.kind == "ssescript":
        # A 2xx event stream is held up to its first content event unless nothing could be retried.
        error = SSE_SCRIPTS[step.fixed] if policy.max_attempts != 1 else None
        if error:
            return Outcome(transport="ok", status=200, body=sse_streams.body(step.fixed, "k", 1), attempt=attempt,
                           replayable=replayable, stream_error=error)
        return Outcome(transport="ok", status=200, committed=True, attempt=attempt, replayable=replayable)
    body = step.body(key, n, upload)
    held = may_retry_response(policy, step.status, step.xsr) if step.kind in ("respond", "echo", "hang") else False
    # A body the shim does not hold reaches the host at once: its first byte commits the transfer.
    committed = not held and len(body) > 0
    return Outcome(transport="ok", status=step.status, headers=tuple(step.headers()), radate=step.radate,
                   body=body[:MAX_ERROR_BODY] if held else b"", committed=committed, attempt=attempt,
                   replayable=replayable)


def simulate(script: Script, upload: Upload, *, connection_alive: bool, reuse: bool,
             timeout_ms: int | None = None, budget_after: int | None = None) -> tuple[Expected, bool]:
    """Plays `script` through libcurl and the shim on one handle. `connection_alive`: the handle
    (or the connection cache it shares) holds an idle keep-alive connection to the upstream;
    `reuse`: connections are kept at all (False with CURLOPT_FORBID_REUSE); `timeout_ms`: the
    host's CURLOPT_TIMEOUT_MS when a `hang` of the script outlasts it (scripts are generated so
    that everything before such a hang takes a few ms); `budget_after`: the fleet's retry budget
    gave the transfer up after that many attempts (its retry waited for a token as long as its
    policy's backoff.max_ms lets it, issue 23, and none came): the retry decided after that attempt
    is logged ("retrying in") and then not sent. Returns what the host must see and whether a
    keep-alive connection is left afterwards."""
    policy = script.policy
    sent = upload.data if upload.data is not None else b""
    alive = connection_alive and reuse
    requests = 0
    attempt = 0
    decisions = []
    while True:
        attempt += 1
        transport = None
        code = CURLE_OK
        while True:  # one attempt: a request, and libcurl's own re-send on a dead reused connection
            requests += 1
            step = script.step(requests)
            reused = alive
            if step.kind in ("reset", "close"):
                alive = False
                if reused and not upload.expect100:
                    # libcurl: "Connection died, retrying a fresh connect" (no byte received on a
                    # reused connection). A sent upload must be rewound first.
                    if upload.data and not upload.rewindable:
                        transport, code = "bad_argument", CURLE_SEND_FAIL_REWIND
                        break
                    continue
                transport = "reset" if step.kind == "reset" else "empty_reply"
                code = CURLE_RECV_ERROR if step.kind == "reset" else CURLE_GOT_NOTHING
            elif step.kind == "break":
                alive = False
                code = CURLE_PARTIAL_FILE
            elif step.kind == "hang" and timeout_ms is not None and step.number >= timeout_ms:
                alive = False
                transport, code = "timeout", CURLE_OPERATION_TIMEDOUT
            else:
                alive = reuse and not step.close
            break
        # After `100 Continue` the attempt has a status line, and so does the handle.
        interim = 100 if transport in ("reset", "empty_reply") and upload.expect100 else 0
        o = outcome_of(step, policy, script.key, requests, sent, attempt, upload.replayable, transport, interim)
        verdict = decide(policy, o)
        decisions.append((o, verdict))
        body = b"" if transport else step.body(script.key, requests, sent)
        held = not (not transport and step.kind == "ssescript") and not (
            not transport and step.kind in ("respond", "echo", "hang") and len(body) > MAX_ERROR_BODY)
        if verdict.action == "retry" and attempt == budget_after and held:
            # The shim holds the whole answer while the retry waits: the host gets it as a give-up.
            verdict = Verdict("give_up", "budget")
        if verdict.action == "retry":
            if not transport and step.kind in ("respond", "echo", "hang") and len(body) > MAX_ERROR_BODY:
                alive = False  # the shim stopped the attempt once the held body outgrew its bound
            if not transport and step.kind == "ssescript":
                alive = False  # stopped at the error event: libcurl closes the connection
            continue
        reason_ = verdict.reason
        if not transport and o.body and len(body) > MAX_ERROR_BODY:
            reason_ = "committed"  # given up while holding: the rest streamed, the host has the bytes
        if transport:
            codes = (CURLE_SEND_ERROR, CURLE_RECV_ERROR) if code == CURLE_RECV_ERROR else (code,)
            expected = Expected(requests, attempt, 0, codes, interim, "", b"", reason_, upload.method, decisions)
        else:
            expected = Expected(requests, attempt, requests, (code,), step.status, step.head(len(body)), body,
                                reason_, upload.method, decisions)
        return expected, alive


def is_terminal(policy: Policy, step: Step) -> bool:
    """Whether `step`, repeated forever, ends a transfer under `policy` at any attempt (scripts of
    the unlimited policy must end)."""
    if step.kind in ("reset", "close", "break") and step.number == 0:
        transport = {"reset": "reset", "close": "empty_reply", "break": "recv"}[step.kind]
        status = 200 if step.kind == "break" else 0
        return decide(policy, Outcome(transport=transport, status=status, attempt=1000)).action == "give_up"
    o = outcome_of(step, policy, "k", 1, b"", 1000, True)
    return decide(policy, o).action == "give_up"
