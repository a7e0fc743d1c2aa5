"""Shared helpers for the integration tests: the flaky upstream as a process, unique keys, and
running real programs with and without libcurlretry.so preloaded.

Environment (set by tests/integration/CMakeLists.txt):
  CURLRETRY_LIB    path of libcurlretry.so
  FLAKY_UPSTREAM   path of the flaky-upstream binary (upstream/)
  CURLRETRY_BIN    path of the curlretry command
  CURLRETRY_PRELOAD_PREFIX  optional, preloaded before CURLRETRY_LIB (sanitizer runtimes)

Python 3.11 standard library only. Everything started here binds 127.0.0.1 and is torn down by
the test case that started it, even when a test fails.
"""

from __future__ import annotations

import dataclasses
import hashlib
import http.client
import itertools
import os
import select
import shutil
import ssl
import subprocess
import tempfile
import time
import unittest
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
LIB = os.environ.get("CURLRETRY_LIB", "")
# Preloaded in front of LIB, e.g. the sanitizer runtime an instrumented LIB needs first in an
# uninstrumented host (CMakePresets.json: asan, tsan). Colon-separated; empty = nothing.
PRELOAD_PREFIX = os.environ.get("CURLRETRY_PRELOAD_PREFIX", "")
CURLRETRY_BIN = os.environ.get("CURLRETRY_BIN", "")
CURL = shutil.which("curl") or "/usr/bin/curl"
PYTHON = "/usr/bin/python3"  # Debian's interpreter, the one python3-pycurl is built for
PHP = shutil.which("php") or "/usr/bin/php"

# Fast retries unless a test is about timing: the built-in 1500 ms base would make the module slow.
FAST_BASE_MS = "50"
DEFAULT_TIMEOUT = 30.0  # no process a test starts may outlive this

# Variables that would let the developer's own settings leak into a test's expectations.
_ISOLATED_PREFIXES = ("CURLRETRY_", "BILI_REPLAY_")
_PATTERN = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+\n"


def _upstream_binary() -> str:
    path = os.environ.get("FLAKY_UPSTREAM", "")
    if path:
        return path
    # Run by hand from the source tree: take the newest build that has one.
    found = sorted(REPO.glob("build*/upstream/flaky-upstream"), key=lambda p: p.stat().st_mtime)
    return str(found[-1]) if found else ""


# --- what the upstream answers (upstream/README.md) -------------------------------------------

def ok_body(key: str, attempt: int) -> bytes:
    return f"ok key={key} attempt={attempt}\n".encode()


def overloaded_body(key: str, attempt: int) -> bytes:
    """The body of a 503 (and 529)."""
    return f'{{"error":"overloaded","key":"{key}","attempt":{attempt}}}'.encode()


def error_body(reason: str, key: str, attempt: int) -> bytes:
    """Other 4xx/5xx: the reason phrase in lower case, e.g. "bad request"."""
    return f'{{"error":"{reason}","key":"{key}","attempt":{attempt}}}'.encode()


CAPTCHA_BODY = b'{"code":3007,"msg":"captcha verify failed"}'
QUOTA_BODY = b'{"error":{"code":"1113","message":"You have exceeded your daily quota"}}'
ZAI1302_BODY = b'{"error":{"code":"1302","message":"High concurrency"}}'


def echo_body(data: bytes) -> bytes:
    return f"sha256={hashlib.sha256(data).hexdigest()} length={len(data)}\n".encode()


def pattern_bytes(n: int) -> bytes:
    return (_PATTERN * (n // len(_PATTERN) + 1))[:n]


def head(status_line: str, content_type: str, length: int, *extra: str) -> bytes:
    """A response head exactly as the upstream writes it (no Date, no Server)."""
    lines = [status_line, f"Content-Type: {content_type}", f"Content-Length: {length}", *extra]
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


# --- results ---------------------------------------------------------------------------------

@dataclasses.dataclass
class Result:
    code: int          # exit status; -N when killed by signal N
    stdout: bytes
    stderr: bytes
    elapsed: float     # seconds, wall clock

    def __str__(self) -> str:
        return (f"exit {self.code} after {self.elapsed:.2f} s\n"
                f"stdout: {self.stdout[:2000]!r}\nstderr: {self.stderr[:4000]!r}")


# --- the upstream ----------------------------------------------------------------------------

def first_line(proc: subprocess.Popen, timeout: float, silent: str, exited) -> bytes:
    """The first line a server process prints on stdout (its port), awaited without a sleep and
    within timeout: the condition the tests wait for before they talk to it. silent names what is
    missing when nothing comes; exited() says why when the process ends first."""
    fd = proc.stdout.fileno()
    line = b""
    deadline = time.monotonic() + timeout
    while not line.endswith(b"\n"):
        left = deadline - time.monotonic()
        if left <= 0 or not select.select([fd], [], [], left)[0]:
            raise RuntimeError(f"{silent} within {timeout} s")
        chunk = os.read(fd, 64)
        if not chunk:
            raise RuntimeError(exited())
        line += chunk
    return line


class Upstream:
    """A flaky-upstream process. Its stdin is a pipe we hold: if this test process dies, the
    pipe closes and the server exits on its own."""

    def __init__(self, tls: bool = False, verbose: bool = False):
        self.tls = tls
        self.verbose = verbose
        self.port = 0
        self.cert = ""
        self._dir: tempfile.TemporaryDirectory | None = None
        self._proc: subprocess.Popen | None = None

    def start(self) -> "Upstream":
        binary = _upstream_binary()
        if not binary or not os.access(binary, os.X_OK):
            raise RuntimeError(f"FLAKY_UPSTREAM={binary!r} is not an executable: build the "
                               "flaky-upstream target (upstream/) first")
        args = [binary, "--port", "0"]
        if self.tls:
            self._dir = tempfile.TemporaryDirectory(prefix="curlretry-upstream-")
            self.cert = os.path.join(self._dir.name, "cert.pem")
            args += ["--tls", "--cert-out", self.cert]
        if self.verbose:
            args.append("--verbose")
        self._proc = subprocess.Popen(args, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        try:
            self.port = self._read_port(timeout=10.0)
        except Exception:
            self.stop()
            raise
        return self

    def _read_port(self, timeout: float) -> int:
        assert self._proc and self._proc.stdout
        proc = self._proc
        line = first_line(proc, timeout, "flaky-upstream printed no port",
                          lambda: f"flaky-upstream exited (status {proc.wait()}) before listening")
        if not line.startswith(b"port="):
            raise RuntimeError(f"flaky-upstream said {line!r}, expected port=<n>")
        return int(line[5:])

    def stop(self) -> None:
        proc, self._proc = self._proc, None
        if proc:
            for stream in (proc.stdin, proc.stdout):
                if stream:
                    stream.close()  # EOF on stdin: the server's own way out
            try:
                proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        if self._dir:
            self._dir.cleanup()
            self._dir = None

    @property
    def origin(self) -> str:
        # 127.0.0.1, not localhost: no resolver involved, and the certificate names it too.
        return f"{'https' if self.tls else 'http'}://127.0.0.1:{self.port}"

    def url(self, path: str) -> str:
        return self.origin + path

    def script_url(self, key: str, script: str, query: str = "") -> str:
        return self.url(f"/s/{key}/{script}" + (f"?{query}" if query else ""))

    def _get(self, path: str) -> bytes:
        if self.tls:
            context = ssl.create_default_context(cafile=self.cert)
            conn = http.client.HTTPSConnection("127.0.0.1", self.port, timeout=10, context=context)
        else:
            conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=10)
        try:
            conn.request("GET", path)
            response = conn.getresponse()
            body = response.read()
            if response.status != 200:
                raise RuntimeError(f"GET {path}: HTTP {response.status} {body!r}")
            return body
        finally:
            conn.close()

    def count(self, key: str) -> int:
        """How many requests /s/<key>/... has seen."""
        return int(self._get(f"/count/{key}"))

    def reset(self, key: str) -> None:
        """The key's counter back to 0: the next request plays step 1 again."""
        self._get(f"/reset/{key}")


# --- running programs ------------------------------------------------------------------------

class LibraryMissing(AssertionError):
    """The preload library is not there: every preloaded run fails with this, clearly."""


def succeeds(cmd: list[str]) -> bool:
    """Whether `cmd` runs and exits 0 (a probe for an optional tool; never raises)."""
    try:
        return subprocess.run(cmd, stdin=subprocess.DEVNULL, capture_output=True, timeout=30).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


def needs(package: str, what: str) -> str:
    """The reason for a skip because `what` is missing, naming the Debian package that provides
    it. run_module.py turns such a skip into a failure under CURLRETRY_STRICT_DEPS=1 (as
    scripts/test.sh runs) when scripts/install-deps.sh installs that package."""
    return f"needs {package}: {what} is not installed (scripts/install-deps.sh installs {package})"


def have_pycurl() -> bool:
    return succeeds([PYTHON, "-c", "import pycurl"])


def have_php_function(name: str) -> bool:
    """php-cli is installed and defines `name` (curl_exec, curl_multi_exec: php-curl is loaded)."""
    return os.access(PHP, os.X_OK) and succeeds([PHP, "-r", f"exit(function_exists('{name}') ? 0 : 1);"])


def library_problem() -> str | None:
    if not LIB:
        return "CURLRETRY_LIB is not set: run through ctest, or point it at libcurlretry.so"
    if not os.path.isfile(LIB):
        return f"CURLRETRY_LIB={LIB} does not exist: build the curlretry_shim target first"
    return None


def environment(preload: bool, env: dict[str, str] | None = None) -> dict[str, str]:
    """The child's environment: ours without CURLRETRY_*/BILI_REPLAY_*, no user config, the
    library prepended to LD_PRELOAD when `preload`, fast retries, then the test's own `env`
    (a value of None there removes the variable)."""
    child = {k: v for k, v in os.environ.items() if not k.startswith(_ISOLATED_PREFIXES)}
    child["XDG_CONFIG_HOME"] = _empty_dir()  # no ~/.config/curlretry/config.yaml, no .curlrc
    if preload:
        problem = library_problem()
        if problem:
            raise LibraryMissing(problem)
        existing = child.get("LD_PRELOAD", "")
        child["LD_PRELOAD"] = ":".join(p for p in (PRELOAD_PREFIX, LIB, existing) if p)
        child["CURLRETRY_BASE_MS"] = FAST_BASE_MS
    # The default fleet, as a user gets it, in a store of this module's own: every process the
    # module starts shares it (as a user's processes share theirs), and modules run side by side
    # never see each other's cooldowns or budget.
    child["CURLRETRY_FLEET_DIR"] = fleet_dir()
    for key, value in (env or {}).items():
        if value is None:
            child.pop(key, None)
        else:
            child[key] = value
    return child


_empty = None
_fleet = None


def fleet_dir() -> str:
    """This module's machine store directory (fresh, private, removed at exit)."""
    global _fleet
    if _fleet is None:
        _fleet = tempfile.TemporaryDirectory(prefix="curlretry-fleet-")
    return _fleet.name


def _empty_dir() -> str:
    global _empty
    if _empty is None:
        _empty = tempfile.TemporaryDirectory(prefix="curlretry-empty-")
    return _empty.name


# The variables a program reads trusted certificates from, which the proxy launcher hands curlretry's
# CA in (keeping what they named: proxy/command_trust.h). A test that asserts what a command is
# handed clears the host's, as a user's shell would not have them.
CA_VARIABLES = ("NODE_EXTRA_CA_CERTS", "SSL_CERT_FILE", "REQUESTS_CA_BUNDLE", "GIT_SSL_CAINFO", "CURL_CA_BUNDLE")


def end_process(proc: subprocess.Popen, timeout: float = 10) -> None:
    """SIGTERM, then SIGKILL if it has not exited within `timeout`; reaped either way."""
    proc.terminate()
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def run(cmd: list[str], *, preload: bool, env: dict[str, str] | None = None,
        input: bytes | None = None, timeout: float = DEFAULT_TIMEOUT, cwd: str | None = None) -> Result:
    """Runs `cmd` to completion (killed after `timeout`), stdin from `input` (a pipe) or
    /dev/null. Raises LibraryMissing for a preloaded run without the library."""
    child_env = environment(preload, env)
    start = time.monotonic()
    proc = subprocess.run(cmd, env=child_env, input=input, capture_output=True, timeout=timeout,
                          cwd=cwd, stdin=None if input is not None else subprocess.DEVNULL)
    return Result(proc.returncode, proc.stdout, proc.stderr, time.monotonic() - start)


def curl(args: list[str], **kwargs) -> Result:
    """The real curl CLI. `-q` first so that no ~/.curlrc changes what a test sees."""
    return run([CURL, "-q", *args], **kwargs)


# --- test cases ------------------------------------------------------------------------------

_keys = itertools.count(1)


class UpstreamTestCase(unittest.TestCase):
    """A test class with one plain and (lazily) one TLS upstream, shared by its tests. Keys are
    unique per call, so tests never see each other's counters."""

    plain: Upstream
    _tls: Upstream | None = None

    @classmethod
    def setUpClass(cls) -> None:
        super().setUpClass()
        cls.plain = Upstream().start()
        cls.addClassCleanup(cls.plain.stop)
        cls._tls = None

    @classmethod
    def tls(cls) -> Upstream:
        if cls._tls is None:
            cls._tls = Upstream(tls=True).start()
            cls.addClassCleanup(cls._tls.stop)
        return cls._tls

    def key(self, label: str = "") -> str:
        name = self.id().rsplit(".", 1)[-1].removeprefix("test_")[:60]
        return f"{name}{'-' + label if label else ''}-{next(_keys)}-{os.getpid()}"

    def temp_dir(self) -> Path:
        d = tempfile.TemporaryDirectory(prefix="curlretry-test-")
        self.addCleanup(d.cleanup)
        return Path(d.name)

    # Assertions that print the whole run when they fail.
    def assertRun(self, result: Result, code: int, stdout: bytes | None = None) -> None:
        self.assertEqual(result.code, code, f"exit status\n{result}")
        if stdout is not None:
            self.assertEqual(result.stdout, stdout, f"stdout\n{result}")

    def assertCount(self, upstream: Upstream, key: str, expected: int, result: Result | None = None) -> None:
        self.assertEqual(upstream.count(key), expected,
                         f"requests upstream for {key}" + (f"\n{result}" if result else ""))


class ArmedUpstreamTestCase(UpstreamTestCase):
    """A test class with an upstream of its own per test (its path prefixes are armed to play one
    script for a while: flaky-upstream's /arm) and the processes a test starts, reaped at its end."""

    def setUp(self):
        super().setUp()
        self.up = Upstream().start()
        self.addCleanup(self.up.stop)
        self.procs: list[subprocess.Popen] = []
        self.addCleanup(self.reap)

    def reap(self):
        for p in self.procs:
            if p.poll() is None:
                p.kill()
            p.wait()
            for stream in (p.stdout, p.stderr):
                if stream:
                    stream.close()

    def arm(self, key: str, script: str, prefix: str) -> None:
        self.assertEqual(self.up._get(f"/arm/{key}/{script}?path={prefix}"), f"armed {prefix}\n".encode())
