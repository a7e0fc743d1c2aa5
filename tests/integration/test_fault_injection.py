"""Differential fault injection (issue 5 §2): random fault scripts through four real hosts under
libcurlretry.so, each compared byte for byte with what a model of the policy says the host must
see.

A seeded generator (faults/generate.py) writes scripts of upstream steps (200, 429, 503, 529,
captcha 400, plain 4xx, quota 429, z.ai 1302, Retry-After in seconds / ms / HTTP-date / garbage /
too long, x-should-retry, resets and clean closes before any response byte, hangs shorter than the
host's timeout (and, on the multi hosts, some longer), 200s that break mid-body, SSE streams,
echoes of uploaded bodies, error bodies past the shim's hold limit) under nine policies (config
rules by key prefix: 1, 2, 3, 5 and unlimited attempts, a narrow retry set, Retry-After ignored,
JSON code tables, timeouts retried). The scripts go, round robin, through

- `curl`:    the real curl CLI, 25 transfers per process (`--next`; the tool shares its
             connection cache across them, so libcurl's own re-send of a request on a reused
             connection that died is part of what the model predicts), GET, POST --data-binary,
             PUT -T;
- `easy`:    hosts/easy_host (CURLRETRY_HOSTS_DIR), one process per script, `get` (headers too)
             or `body` (no header callback), or `upload` through a read callback with and
             without seek, or libcurl's fread;
- `perform`: faults/fault_host perform, curl_multi_perform + curl_multi_poll, 1, 4, 12 or 24
             transfers in flight, GET, COPYPOSTFIELDS, read callback with and without seek, some
             with a 600 ms CURLOPT_TIMEOUT_MS (2.5 s under the sanitizer presets) that a longer hang
             outlasts; every other round
             without a header callback (the shim then reads the status and the hints from
             libcurl, not from its own header trampoline);
- `socket`:  faults/fault_host socket, curl_multi_socket_action with epoll and the timer
             callback, same transfers.

For every script faults/model.py computes the requests the upstream must have served, the
request whose answer the host sees (body and headers byte for byte), the CURLcode and HTTP
status, the number of `retrying in` log lines and the reason of the final log line. Every
(policy, attempt outcome) pair the model decided is checked against `curlretry explain --json`
(verdict, reason, delay), so the model cannot drift from core::decide.

Environment: CURLRETRY_FAULT_SCRIPTS (default 2000), CURLRETRY_FAULT_SEED (default: random,
printed). Long run (100,000 scripts took 563 s on 2 cores, 0 mismatches):
    cd tests/integration && CURLRETRY_FAULT_SCRIPTS=100000 python3 -m unittest test_fault_injection
(with CURLRETRY_LIB, FLAKY_UPSTREAM, CURLRETRY_BIN, CURLRETRY_HOSTS_DIR, CURLRETRY_FAULTS_DIR
set as tests/integration/CMakeLists.txt sets them, or found in the newest build* folder).
"""

from __future__ import annotations

import concurrent.futures
import dataclasses
import datetime
import email.utils
import http.client
import json
import os
import re
import subprocess
import sys
import tempfile
import time
import unittest
from pathlib import Path

import harness
from faults import generate, model

SCRIPTS = int(os.environ.get("CURLRETRY_FAULT_SCRIPTS") or "2000")
SEED = int(os.environ.get("CURLRETRY_FAULT_SEED") or str(int.from_bytes(os.urandom(4), "little")))
CURL_BATCH = 25
MULTI_BATCH = 100
WORKERS = 3
MAX_REPORTED = 15


def _build_dir(env: str, probe: str) -> str:
    folder = os.environ.get(env, "")
    if folder:
        return folder
    found = sorted(harness.REPO.glob(f"build*/tests/integration/{probe}"), key=lambda p: p.stat().st_mtime)
    return str(found[-1].parent) if found else ""


def _curlretry_bin() -> str:
    if harness.CURLRETRY_BIN:
        return harness.CURLRETRY_BIN
    found = sorted(harness.REPO.glob("build*/cli/curlretry"), key=lambda p: p.stat().st_mtime)
    return str(found[-1]) if found else ""


FAULTS_DIR = _build_dir("CURLRETRY_FAULTS_DIR", "faults/fault_host")
HOSTS_DIR = _build_dir("CURLRETRY_HOSTS_DIR", "hosts/easy_host")
CURLRETRY = _curlretry_bin()


@dataclasses.dataclass
class Seen:
    """What a host reported for one transfer."""
    code: int
    status: int
    body: bytes
    head: str | None = None   # None: this host does not report headers
    extra: str = ""           # a host's own complaint (CHECK FAILED, a missing record)
    os_errno: int | None = None  # CURLINFO_OS_ERRNO at the end, where the host reports it


# --- running the hosts -----------------------------------------------------------------------

def brief(result: harness.Result) -> str:
    """A host run in a few lines: its exit status and its own complaints (never the log)."""
    own = [line for line in result.stderr.decode("utf-8", "replace").splitlines()
           if not line.startswith("curlretry: ")]
    return f"exit {result.code} after {result.elapsed:.2f} s; stderr: {own[-8:]}"


LOG_LINE = re.compile(r"^curlretry: (\S+) \S+?/s/([^/\s]+)/\S* -> (.*)$")
# "retrying in 1500 ms (attempt 1/3)", "retrying in 25 s (Retry-After) (attempt 1/3)"
RETRY_LINE = re.compile(r": retrying in \d+(\.\d)? (ms|s|h)( \d+ min)?( \((Retry-After|retry-after-ms)\))? "
                        r"\(attempt \d+/")


def parse_log(stderr: bytes) -> dict[str, list[tuple[str, str]]]:
    """Log lines per key: [(method, rest of the line)]."""
    lines: dict[str, list[tuple[str, str]]] = {}
    for raw in stderr.decode("utf-8", "replace").splitlines():
        m = LOG_LINE.match(raw)
        if m:
            lines.setdefault(m.group(2), []).append((m.group(1), m.group(3)))
    return lines


class Runner:
    def __init__(self, upstream: harness.Upstream, work: Path, env: dict[str, str]):
        self.upstream = upstream
        self.work = work
        self.env = env

    def _upload_file(self, case: generate.Case) -> str:
        path = self.work / f"up-{case.index}"
        path.write_bytes(case.upload.data or b"")
        return str(path)

    def _run(self, cmd: list[str], timeout: float) -> harness.Result:
        """Runs a host under the preload, killed after `timeout` (reported as a mismatch of
        every script it had, with the seed, rather than as an exception)."""
        try:
            return harness.run(cmd, preload=True, env=self.env, timeout=timeout)
        except subprocess.TimeoutExpired as e:
            return harness.Result(-9, e.stdout or b"", (e.stderr or b"") + f"\n[killed after {timeout} s]".encode(),
                                  timeout)

    def curl(self, batch: list[generate.Case]) -> tuple[dict[int, Seen], bytes]:
        out_dir = self.work / f"curl-{batch[0].index}"
        out_dir.mkdir()
        args = [harness.CURL, "-q"]
        for i, case in enumerate(batch):
            if i:
                args.append("--next")
            args += ["-sS", "-g", "-m", "20", "-o", str(out_dir / f"b{case.index}"),
                     "-w", f"##W {case.index} %{{exitcode}} %{{http_code}}\\n"]
            if case.upload_mode == "data":
                args += ["--data-binary", "@" + self._upload_file(case)]
            elif case.upload_mode == "put":
                args += ["-T", self._upload_file(case)]
            args.append(self.upstream.url(case.script.path()))
        result = self._run(args, timeout=120)
        seen: dict[int, Seen] = {}
        for line in result.stdout.decode().splitlines():
            m = re.match(r"^##W (\d+) (\d+) (\d+)$", line)
            if m:
                index = int(m.group(1))
                body_file = out_dir / f"b{index}"
                body = body_file.read_bytes() if body_file.exists() else b""
                seen[index] = Seen(int(m.group(2)), int(m.group(3)), body)
        for case in batch:
            seen.setdefault(case.index, Seen(-1, -1, b"", extra=f"curl reported nothing: {brief(result)}"))
        return seen, result.stderr

    def easy(self, case: generate.Case) -> tuple[dict[int, Seen], bytes]:
        host = os.path.join(HOSTS_DIR, "easy_host")
        url = self.upstream.url(case.script.path())
        if case.upload_mode == "get":
            cmd = [host, "get" if case.headers else "body", url]
        else:
            cmd = [host, "upload", url, self._upload_file(case), case.upload_mode]
        result = self._run(cmd, timeout=60)
        err = result.stderr.decode("utf-8", "replace")
        m = re.search(r"^result=(-?\d+) status=(\d+)$", err, re.M)
        head = None
        if case.upload_mode == "get" and case.headers:
            h = re.search(r"^--- headers ---\n(.*?)--- end headers ---\n", err, re.S | re.M)
            head = h.group(1) if h else "<no header block>"
        extra = "" if (m and result.code == 0) else f"easy_host failed: {brief(result)}"
        seen = Seen(int(m.group(1)) if m else -1, int(m.group(2)) if m else -1, result.stdout, head, extra)
        return {case.index: seen}, result.stderr

    def fault_host(self, loop: str, batch: list[generate.Case], concurrency: int) -> tuple[dict[int, Seen], bytes]:
        jobs = self.work / f"jobs-{batch[0].index}"
        lines = []
        for case in batch:
            upload = "-" if case.upload_mode == "get" else self._upload_file(case)
            timeout = case.timeout_ms or 20000
            headers = "" if case.headers else "\tnoheaders"
            lines.append(f"{self.upstream.url(case.script.path())}\t{case.upload_mode}\t{upload}\t{timeout}{headers}\n")
        jobs.write_text("".join(lines))
        cmd = [os.path.join(FAULTS_DIR, "fault_host"), loop, str(jobs), str(concurrency), "150"]
        result = self._run(cmd, timeout=180)
        out = result.stdout
        seen: dict[int, Seen] = {}
        pos = 0
        complaint = "" if result.code == 0 else f"fault_host {loop} failed: {brief(result)}"
        header = re.compile(rb"@@T (\d+) result=(-?\d+) status=(\d+) errno=(\d+) done=(\d+) hlen=(\d+) blen=(\d+)\n")
        while True:
            m = header.match(out, pos)
            if not m:
                break
            index, code, status, os_errno, done, hlen, blen = map(int, m.groups())
            start = m.end()
            head = out[start:start + hlen].decode("latin-1")
            body = out[start + hlen:start + hlen + blen]
            pos = start + hlen + blen + 1
            extra = complaint + (f"\n{done} DONE messages" if done != 1 else "")
            case = batch[index]
            seen[case.index] = Seen(code, status, body, head if case.headers else None, extra, os_errno)
        for case in batch:
            seen.setdefault(case.index, Seen(-1, -1, b"", extra=f"fault_host reported nothing: {brief(result)}"))
        return seen, result.stderr


# --- comparing -------------------------------------------------------------------------------

def what_the_host_saw(case: generate.Case, seen: Seen, level: str, stderr: bytes) -> list[str]:
    """A mismatch's evidence: the host's own report and every line of its stderr that names the
    key (a log line the parser did not take included), at the level the unit ran with."""
    errno = "" if seen.os_errno is None else f" os_errno {seen.os_errno}"
    lines = [raw for raw in stderr.decode("utf-8", "replace").splitlines() if case.script.key in raw]
    return [f"host reported CURLcode {seen.code}{errno} status {seen.status}; log level {level}, "
            f"{len(lines)} stderr lines name the key: {lines[:12]}"]


def head_matches(expected: str, seen: str) -> bool:
    if model.DATE not in expected:
        return expected == seen
    pattern = re.escape(expected).replace(re.escape(model.DATE),
                                          r"[A-Z][a-z]{2}, \d{2} [A-Z][a-z]{2} \d{4} \d{2}:\d{2}:\d{2} GMT")
    return re.fullmatch(pattern, seen) is not None


def expected_final_line(exp: model.Expected, level: str) -> bool:
    """Whether the transfer ends with a final log line at `level`: at info only when it took
    retries or curlretry itself declined one; at debug for every transfer."""
    if exp.attempts == 1 and exp.reason == "committed":
        return level == "debug"  # -v says a first try went through, too
    quiet = exp.attempts == 1 and exp.reason not in ("retry-after-too-long", "not-replayable", "deadline",
                                                     "max-elapsed", "budget")
    return level == "debug" or not quiet


def compare(case: generate.Case, exp: model.Expected, seen: Seen, count: int | None,
            log: list[tuple[str, str]], level: str) -> list[str]:
    problems = []
    if seen.extra:
        problems.append(seen.extra)
    if count is not None and count != exp.requests:
        problems.append(f"upstream served {count} requests, expected {exp.requests}")
    if seen.code not in exp.codes:
        problems.append(f"CURLcode {seen.code}, expected {' or '.join(map(str, exp.codes))}")
    if seen.status != exp.status:
        problems.append(f"HTTP status {seen.status}, expected {exp.status}")
    if seen.body != exp.body:
        problems.append(f"body {seen.body[:300]!r} ({len(seen.body)} bytes), expected {exp.body[:300]!r} "
                        f"({len(exp.body)} bytes; request {exp.final_request})")
    if seen.head is not None and not head_matches(exp.head, seen.head):
        problems.append(f"headers {seen.head!r}, expected {exp.head!r}")
    retries = [rest for _, rest in log if RETRY_LINE.search(rest)]
    finals = [rest for _, rest in log if re.search(r" after \d+ attempts?( \(|$)", rest)]
    # A budget give-up logged the retry it then could not send.
    want_retries = exp.attempts - (0 if exp.reason == "budget" else 1)
    if len(retries) != want_retries:
        problems.append(f"{len(retries)} 'retrying' log lines, expected {want_retries}: {log}")
    want_final = expected_final_line(exp, level)
    if want_final:
        if exp.reason in ("success", "committed"):
            want = f" after {exp.attempts} attempt{'s' if exp.attempts > 1 else ''}"
        else:
            want = f": giving up after {exp.attempts} attempt{'s' if exp.attempts > 1 else ''} ({exp.reason})"
        if len(finals) != 1 or not finals[0].endswith(want):
            problems.append(f"final log line {finals}, expected one ending {want!r}")
    elif finals:
        problems.append(f"unexpected final log line {finals} at level {level}")
    methods = {method for method, _ in log}
    if methods - {exp.method}:
        problems.append(f"log lines name method {methods}, expected {exp.method}")
    return problems


def expectations(unit, budget_after: dict[int, int | None] | None = None) -> dict[int, model.Expected]:
    """What each host of `unit` must see: the model run through its scripts in order (a curl
    process's transfers share its connection cache, so each one starts with the connection the
    last one left); `budget_after[index]`, when known, the attempt after which the fleet's budget
    gave that transfer up."""
    kind, batch, _ = unit
    out: dict[int, model.Expected] = {}
    alive = False
    for case in batch:
        k = (budget_after or {}).get(case.index)
        if kind == "curl":
            out[case.index], alive = model.simulate(case.script, case.upload, connection_alive=alive, reuse=True,
                                                    budget_after=k)
        elif kind == "easy":
            out[case.index], _ = model.simulate(case.script, case.upload, connection_alive=False, reuse=True,
                                                budget_after=k)
        else:
            out[case.index], _ = model.simulate(case.script, case.upload, connection_alive=False, reuse=False,
                                                timeout_ms=case.timeout_ms, budget_after=k)
    return out


BUDGET_FINAL = re.compile(r": giving up after (\d+) attempts? \(budget\)$")
FLEET_WAIT = (": waiting for a fleet token (", ": waiting for the fleet's probe (")


def fleet_gave_up(case: generate.Case, log: list[tuple[str, str]], stderr: bytes) -> int | None:
    """The attempt after which the fleet's retry budget gave the transfer up, when it did so by
    its rules: its final log line says so and, before it, the transfer logged a wait for a token
    (or for the fleet's probe). The budget engages only while the upstream's key has had no
    success for a second (core::budget::kHealthyWithin), which a slow run (the sanitizers) can
    meet between scripts that all fail; a policy's backoff.max_ms of a few ms is then the whole
    wait it allows (issue 23: the fleet delays a retry at most one wait of its own policy)."""
    finals = [m for _, rest in log if (m := BUDGET_FINAL.search(rest))]
    if len(finals) != 1:
        return None
    marker = f"/s/{case.script.key}/".encode()
    waited = any(marker in line and any(w.encode() in line for w in FLEET_WAIT) for line in stderr.splitlines())
    return int(finals[0].group(1)) if waited else None


def canonical(case: generate.Case, o: model.Outcome) -> model.Outcome:
    """The outcome with the script's key and request numbers taken out of the body (the
    classification cannot depend on them: keys carry no marker), so equal decisions share one
    `explain` run."""
    body = o.body.replace(case.script.key.encode(), b"k")
    body = re.sub(rb'"attempt":\d+', b'"attempt":1', body)
    return dataclasses.replace(o, body=body[: case.script.policy.body_window])


def explain(config: str, policy: model.Policy, o: model.Outcome) -> dict:
    args = [CURLRETRY, "explain", "--json", "--config", config, "GET", f"http://127.0.0.1/s/{policy.name}-x/y",
            "--attempt", str(o.attempt)]
    if o.status:
        args += ["--status", str(o.status)]
    if o.transport != "ok":
        args += ["--transport", o.transport]
    for name, value in o.headers:
        if value == model.DATE:
            value = email.utils.format_datetime(
                datetime.datetime.fromtimestamp(int(time.time()) + (o.radate or 0), datetime.timezone.utc),
                usegmt=True)
        args += ["--header", f"{name}: {value}"]
    if o.stream_error:
        args += ["--header", "content-type: text/event-stream"]
    if o.body:
        args += ["--body", o.body.decode("latin-1")]
    if o.committed:
        args.append("--committed")
    if not o.replayable:
        args.append("--not-replayable")
    env = harness.environment(preload=False, env={"CURLRETRY_CONFIG": None})
    proc = subprocess.run(args, capture_output=True, timeout=30, env=env, stdin=subprocess.DEVNULL)
    if proc.returncode not in (0, 1):
        return {"error": f"exit {proc.returncode}: {proc.stderr.decode()} {args}"}
    got = json.loads(proc.stdout)
    if proc.returncode != (0 if got.get("verdict") == "retry" else 1):  # explain's documented exit status
        return {"error": f"exit {proc.returncode} with verdict {got.get('verdict')}: {args}"}
    return got


# --- the test --------------------------------------------------------------------------------

class FaultInjectionTest(harness.UpstreamTestCase):

    @classmethod
    def setUpClass(cls) -> None:
        for what, path in (("CURLRETRY_FAULTS_DIR", os.path.join(FAULTS_DIR, "fault_host")),
                           ("CURLRETRY_HOSTS_DIR", os.path.join(HOSTS_DIR, "easy_host")),
                           ("CURLRETRY_BIN", CURLRETRY)):
            if not path or not os.access(path, os.X_OK):
                raise unittest.SkipTest(f"{what}: {path!r} is not built")
        super().setUpClass()

    def setUp(self) -> None:
        self.work = self.temp_dir()
        self.config = str(self.work / "config.yaml")
        Path(self.config).write_text(model.config_yaml())

    def test_config_is_what_the_model_assumes(self):
        """`curlretry check` accepts the generated config (the model's policies are real rules)."""
        proc = subprocess.run([CURLRETRY, "check", "--config", self.config], capture_output=True, timeout=30,
                              env=harness.environment(preload=False), stdin=subprocess.DEVNULL)
        self.assertEqual(proc.returncode, 0, proc.stdout.decode() + proc.stderr.decode())

    def test_random_fault_scripts_match_the_model(self):
        started = time.monotonic()
        run_id = f"{SEED}x{os.getpid()}"
        cases = generate.cases(SEED, SCRIPTS, run_id)
        by_host = {h: [c for c in cases if c.host == h] for h in generate.HOSTS}
        print(f"\nfault injection: seed={SEED} scripts={len(cases)} "
              f"(CURLRETRY_FAULT_SEED={SEED} CURLRETRY_FAULT_SCRIPTS={SCRIPTS} to reproduce)",
              file=sys.stderr, flush=True)

        # What each host must see. Sequential hosts carry the connection state from one script to
        # the next within one process.
        units = []  # (kind, cases, log level)
        levels = ("info", "debug")
        for n, start in enumerate(range(0, len(by_host["curl"]), CURL_BATCH)):
            units.append(("curl", by_host["curl"][start:start + CURL_BATCH], levels[n % 2]))
        for n, case in enumerate(by_host["easy"]):
            units.append(("easy", [case], levels[n % 2]))
        for loop in ("perform", "socket"):
            for n, start in enumerate(range(0, len(by_host[loop]), MULTI_BATCH)):
                units.append((loop, by_host[loop][start:start + MULTI_BATCH], levels[n % 2]))
        expected = {index: exp for unit in units for index, exp in expectations(unit).items()}

        # Run everything, a few processes at a time, the long batches first.
        units.sort(key=lambda u: -len(u[1]))
        seen: dict[int, Seen] = {}
        logs: dict[str, list] = {}
        level_of: dict[int, str] = {}
        stderr_of: dict[int, bytes] = {}  # each case's host's whole stderr, for a mismatch's report

        def run_unit(unit):
            kind, batch, level = unit
            env = {"CURLRETRY_BASE_MS": None, "CURLRETRY_CONFIG": self.config, "CURLRETRY_LOG": level}
            # Each unit's files (uploads, bodies, job lists) go when it is done: a long run
            # would otherwise leave gigabytes behind.
            with tempfile.TemporaryDirectory(prefix=f"{kind}-", dir=self.work) as unit_dir:
                runner = Runner(self.plain, Path(unit_dir), env)
                if kind == "curl":
                    return unit, runner.curl(batch)
                if kind == "easy":
                    return unit, runner.easy(batch[0])
                # From one transfer at a time to many in flight (seeded by the batch's first case).
                concurrency = (1, 4, 12, 24)[batch[0].index % 4]
                return unit, runner.fault_host(kind, batch, concurrency)

        with concurrent.futures.ThreadPoolExecutor(WORKERS) as pool:
            for unit, (got, stderr) in pool.map(run_unit, units):
                seen.update(got)
                for key, lines in parse_log(stderr).items():
                    logs.setdefault(key, []).extend(lines)
                for case in unit[1]:
                    level_of[case.index] = unit[2]
                    stderr_of[case.index] = stderr
        ran = time.monotonic() - started

        counts = self._counts([c.script.key for c in cases])

        # A transfer the fleet's budget gave up (logged as such, after a logged wait for a token)
        # is held to the model of that give-up; the rest of its curl batch then follows from it.
        budget_after = {case.index: fleet_gave_up(case, logs.get(case.script.key, []), stderr_of[case.index])
                        for case in cases}
        judged = {index: exp for unit in units
                  for index, exp in expectations(unit, budget_after).items()}
        failures = []
        for case in cases:
            problems = compare(case, judged[case.index], seen[case.index], counts.get(case.script.key),
                               logs.get(case.script.key, []), level_of[case.index])
            if problems:
                problems += what_the_host_saw(case, seen[case.index], level_of[case.index], stderr_of[case.index])
                failures.append(f"{case.describe()}\n  key={case.script.key}\n  " + "\n  ".join(problems))
        budget = sum(1 for k in budget_after.values() if k is not None)

        # The model against the real decision function.
        drift = self._cross_check(cases, expected)
        elapsed = time.monotonic() - started
        hosts = ", ".join(f"{h}={len(by_host[h])}" for h in generate.HOSTS)
        requests = sum(e.requests for e in expected.values())
        print(f"fault injection: seed={SEED}: {len(cases)} scripts ({hosts}), {requests} upstream requests, "
              f"{len(units)} host processes, {ran:.1f} s running, {elapsed:.1f} s with the explain cross-check; "
              f"{budget} given up by the fleet's budget; "
              f"{len(failures)} mismatches, {len(drift)} model/explain disagreements", file=sys.stderr, flush=True)
        if failures or drift:
            report = [f"seed={SEED} (rerun: CURLRETRY_FAULT_SEED={SEED} CURLRETRY_FAULT_SCRIPTS={SCRIPTS})"]
            report += [f"{len(failures)} of {len(cases)} scripts differ from the model:"] + failures[:MAX_REPORTED]
            report += [f"{len(drift)} decisions where the model and `curlretry explain` disagree:"]
            report += drift[:MAX_REPORTED]
            self.fail("\n".join(report))

    def _counts(self, keys: list[str]) -> dict[str, int]:
        conn = http.client.HTTPConnection("127.0.0.1", self.plain.port, timeout=10)
        counts = {}
        try:
            for key in keys:
                conn.request("GET", f"/count/{key}")
                response = conn.getresponse()
                counts[key] = int(response.read())
        finally:
            conn.close()
        return counts

    def _cross_check(self, cases, expected) -> list[str]:
        unique: dict[tuple, tuple] = {}
        for case in cases:
            for o, verdict in expected[case.index].decisions:
                c = canonical(case, o)
                # A deadline (time left before the host's own timeout) cannot be told to
                # `explain`: check the decision without it; the deadline rule itself is the
                # model's, checked against the hosts.
                if c.remaining is not None:
                    c = dataclasses.replace(c, remaining=None)
                    verdict = model.decide(case.script.policy, c)
                key = (case.script.policy.name, c)
                if key not in unique:
                    # The canonical outcome must decide as the real one did (the model's own check).
                    again = model.decide(case.script.policy, c)
                    if again != verdict:
                        return [f"model: canonical outcome {c} decides {again}, the real one {verdict}"]
                    unique[key] = (case, c, verdict)
        drift = []

        def check(item):
            case, c, verdict = item
            got = explain(self.config, case.script.policy, c)
            want = {"verdict": verdict.action, "reason": verdict.reason}
            if verdict.action == "retry":
                want["delay_ms"] = verdict.delay
            have = {k: got.get(k) for k in want}
            if have != want:
                return f"policy {case.script.policy.name}: {c}\n    model {want}\n    explain {got}"
            return None

        with concurrent.futures.ThreadPoolExecutor(2) as pool:
            drift = [d for d in pool.map(check, unique.values()) if d]
        print(f"fault injection: {len(unique)} distinct decisions checked against `curlretry explain`",
              file=sys.stderr, flush=True)
        return drift


if __name__ == "__main__":
    unittest.main()
