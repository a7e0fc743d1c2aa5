"""A smart-HTTP git remote for the tests: `git http-backend` behind a small CGI server on
127.0.0.1, built from Python's standard library (http.server's CGI handler reads no chunked
request bodies, and git streams a large push chunked).

`fail_first` names requests that get one 503 before the backend ever sees them: the first
request matching each (method, path suffix, minimum body size) is answered 503 after its body
was read whole, every later one goes to the backend. Every request is counted by
"METHOD path" (query string dropped) with the size of its body, so a test can compare runs.
"""

from __future__ import annotations

import collections
import dataclasses
import http.server
import os
import signal
import subprocess
import threading
import time
from pathlib import Path

import harness
from loopback_server import LoopbackHttpServer

GIT_HTTP_BACKEND = "/usr/lib/git-core/git-http-backend"
BACKEND_TIMEOUT = 60.0


@dataclasses.dataclass
class FailRule:
    method: str
    suffix: str
    min_body: int = 0   # a git probe ("0000", 4 bytes) is not the pack
    spent: bool = False


def run_in_group(cmd: list[str], *, preload: bool, env: dict[str, str], cwd: Path | None,
                 timeout: float) -> harness.Result:
    """harness.run for programs that fork helpers (git push runs git-remote-http, which runs
    send-pack): the whole process group is killed on timeout, so a hang fails the test and
    leaves nothing behind. A hang is reported as exit code -9 with the output so far."""
    child_env = harness.environment(preload, env)
    start = time.monotonic()
    proc = subprocess.Popen(cmd, env=child_env, cwd=str(cwd) if cwd else None, stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
        return harness.Result(-9, out, err + b"\n[killed: timed out]", time.monotonic() - start)
    finally:
        try:
            os.killpg(proc.pid, signal.SIGKILL)  # helpers left behind by a failed run
        except ProcessLookupError:
            pass
    return harness.Result(proc.returncode, out, err, time.monotonic() - start)


class SmartHttpServer(LoopbackHttpServer):

    def __init__(self, project_root: Path):
        self.project_root = project_root.resolve()
        self.lock = threading.Lock()
        self.requests: list[tuple[str, int]] = []   # ("POST /repo.git/git-receive-pack", body bytes)
        self.fail_rules: list[FailRule] = []
        self.failed: list[str] = []
        super().__init__(_Handler)

    def reset(self, *fail: FailRule) -> None:
        with self.lock:
            self.requests.clear()
            self.failed.clear()
            self.fail_rules = list(fail)

    def counts(self) -> dict[str, int]:
        with self.lock:
            return dict(collections.Counter(r for r, _ in self.requests))

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"


class _Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_GET(self) -> None:  # noqa: N802
        self._serve()

    def do_POST(self) -> None:  # noqa: N802
        self._serve()

    def _body(self) -> bytes:
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            parts = []
            while True:
                size = int(self.rfile.readline().split(b";", 1)[0].strip() or b"0", 16)
                if size == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass  # trailers
                    return b"".join(parts)
                parts.append(self.rfile.read(size))
                self.rfile.readline()
        return self.rfile.read(int(self.headers.get("Content-Length", "0") or 0))

    def _serve(self) -> None:
        server: SmartHttpServer = self.server  # type: ignore[assignment]
        if self.headers.get("Expect", "").lower() == "100-continue":
            self.send_response_only(100)
            self.end_headers()
        body = self._body()
        path, _, query = self.path.partition("?")
        name = f"{self.command} {path}"
        with server.lock:
            server.requests.append((name, len(body)))
            rule = next((r for r in server.fail_rules if not r.spent and r.method == self.command
                         and path.endswith(r.suffix) and len(body) >= r.min_body), None)
            if rule:
                rule.spent = True
                server.failed.append(name)
        if rule:
            self._send(503, {"Content-Type": "text/plain"}, b"overloaded\n")
            return
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "GIT_PROJECT_ROOT": str(server.project_root),
               "GIT_HTTP_EXPORT_ALL": "1", "REQUEST_METHOD": self.command, "PATH_INFO": path,
               "QUERY_STRING": query, "CONTENT_TYPE": self.headers.get("Content-Type", ""),
               "CONTENT_LENGTH": str(len(body)), "REMOTE_USER": "tester", "REMOTE_ADDR": "127.0.0.1",
               "GIT_CONFIG_NOSYSTEM": "1", "HOME": str(server.project_root)}
        if self.headers.get("Git-Protocol"):
            env["GIT_PROTOCOL"] = self.headers["Git-Protocol"]
        if self.headers.get("Content-Encoding"):
            env["HTTP_CONTENT_ENCODING"] = self.headers["Content-Encoding"]
        proc = subprocess.run([GIT_HTTP_BACKEND], input=body, env=env, capture_output=True, timeout=BACKEND_TIMEOUT)
        head, _, payload = proc.stdout.partition(b"\r\n\r\n")
        if not _:
            head, _, payload = proc.stdout.partition(b"\n\n")
        status = 200
        headers: dict[str, str] = {}
        for line in head.decode("latin-1").splitlines():
            key, _, value = line.partition(":")
            if key.lower() == "status":
                status = int(value.strip().split()[0])
            elif key:
                headers[key.strip()] = value.strip()
        self._send(status, headers, payload)

    def _send(self, status: int, headers: dict[str, str], body: bytes) -> None:
        self.send_response(status)
        for key, value in headers.items():
            self.send_header(key, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args) -> None:  # quiet
        pass
