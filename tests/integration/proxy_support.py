"""Helpers for the proxy tests: `curlretry proxy` as a process, a loopback upstream that mirrors
the request it got, and the Node.js clients (tests/integration/proxy_clients)."""

from __future__ import annotations

import http.server
import json
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import unittest
from pathlib import Path

import harness
from loopback_server import LoopbackHttpServer

NODE = shutil.which("node") or "/usr/bin/node"
CLIENT_JS = str(Path(__file__).resolve().parent / "proxy_clients" / "client.mjs")
SETUP_CLIENTS = str(harness.REPO / "scripts" / "proxy-test-clients.sh")


def wait_for(predicate, timeout: float, what: str, interval: float = 0.02):
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}")
        time.sleep(interval)


class Proxy:
    """`curlretry proxy --listen 127.0.0.1:0` with a config of our own; stopped with SIGTERM."""

    def __init__(self, config: str, *args: str, env: dict[str, str] | None = None):
        self._dir = tempfile.TemporaryDirectory(prefix="curlretry-proxy-")
        self.config = os.path.join(self._dir.name, "config.yaml")
        Path(self.config).write_text(config)
        self.port_file = os.path.join(self._dir.name, "port")
        self.log_path = os.path.join(self._dir.name, "stderr")
        self.args = list(args)
        # The proxy preloads the library into itself (harness.environment(preload=False) does not
        # speed its backoff up); its fleet is the default one, in the module's store.
        self.env = {"CURLRETRY_BASE_MS": harness.FAST_BASE_MS, **(env or {})}
        self.proc: subprocess.Popen | None = None
        self.port = 0

    def start(self) -> "Proxy":
        if not harness.CURLRETRY_BIN:
            raise RuntimeError("CURLRETRY_BIN is not set: run through ctest")
        self._log = open(self.log_path, "wb")
        self.proc = subprocess.Popen(
            [harness.CURLRETRY_BIN, "proxy", "--listen", "127.0.0.1:0", "--config", self.config,
             "--port-file", self.port_file, *self.args],
            env=harness.environment(False, self.env), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
            stderr=self._log)

        def ready():
            if self.proc.poll() is not None:
                raise RuntimeError(f"curlretry proxy exited {self.proc.returncode}:\n{self.log()}")
            return os.path.exists(self.port_file)
        wait_for(ready, 20, "the proxy's port file")
        self.port = int(Path(self.port_file).read_text())
        return self

    def log(self) -> str:
        return Path(self.log_path).read_text(errors="replace") if os.path.exists(self.log_path) else ""

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.port}{path}"

    def terminate(self, timeout: float = 20, signal_it: bool = True) -> int:
        """Its exit status after SIGTERM. signal_it=False: one was sent already; only wait (a
        second SIGTERM that lands after the first one's handler is gone would kill it)."""
        if self.proc is None:
            return 0
        if signal_it and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            code = self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            raise AssertionError(f"the proxy did not stop within {timeout} s of SIGTERM:\n{self.log()}")
        return code

    def stop(self) -> None:
        try:
            self.terminate()
        finally:
            if self.proc is not None and self.proc.poll() is None:
                self.proc.kill()
                self.proc.wait()
            self.proc = None
            if getattr(self, "_log", None):
                self._log.close()
            self._dir.cleanup()

    def rss_kib(self) -> int:
        for line in Path(f"/proc/{self.proc.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
        return 0

    def health(self) -> dict:
        with socket.create_connection(("127.0.0.1", self.port), timeout=10) as s:
            s.sendall(b"GET /_curlretry/health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            data = recv_all(s)
        return json.loads(data.split(b"\r\n\r\n", 1)[1])


def recv_all(s: socket.socket, limit: int = 1 << 26) -> bytes:
    data = b""
    while len(data) < limit:
        try:
            chunk = s.recv(65536)
        except ConnectionResetError:
            break
        if not chunk:
            break
        data += chunk
    return data


def raw_exchange(port: int, request: bytes, timeout: float = 10) -> bytes:
    """Sends `request` as is on a fresh connection and reads until the proxy closes it (the
    request says `Connection: close`, or is bad enough to close it). No half-close: the proxy
    takes a client's end of stream as a hang-up."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
        s.sendall(request)
        return recv_all(s)


class Mirror:
    """A loopback upstream answering every request with the request it saw, as JSON, and response
    headers the test chose (hop-by-hop ones among them)."""

    def __init__(self):
        self.requests: list[dict] = []
        owner = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def _answer(self):
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                seen = {"method": self.command, "path": self.path, "headers": [[k, v] for k, v in self.headers.items()],
                        "body": body.decode("latin-1")}
                owner.requests.append(seen)
                out = json.dumps(seen).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(out)))
                self.send_header("X-Upstream", "mirror")
                self.send_header("Keep-Alive", "timeout=5")
                self.send_header("Connection", "keep-alive, X-Hop")
                self.send_header("X-Hop", "must not reach the client")
                self.end_headers()
                if self.command != "HEAD":
                    self.wfile.write(out)

            do_GET = do_POST = do_PUT = do_DELETE = do_PATCH = do_HEAD = _answer

            def log_message(self, *args):
                pass

        self.server = LoopbackHttpServer(Handler)
        self.port = self.server.port

    def start(self) -> "Mirror":
        self.server.start()
        return self

    def stop(self) -> None:
        self.server.stop()


def node_problem() -> str | None:
    if not os.access(NODE, os.X_OK):
        return harness.needs("nodejs", "node")
    return None


_modules: str | None = None
_modules_error: str | None = None


def node_modules() -> tuple[str | None, str | None]:
    """The folder holding the npm SDKs, installed on first use into the build tree by
    scripts/proxy-test-clients.sh (from the npm registry); (None, why) when that is impossible."""
    global _modules, _modules_error
    if _modules or _modules_error:
        return _modules, _modules_error
    build = Path(harness.CURLRETRY_BIN).resolve().parents[1] if harness.CURLRETRY_BIN else harness.REPO / "build"
    folder = build / "proxy-test-clients"
    wanted = json.loads((Path(CLIENT_JS).parent / "package.json").read_text())["dependencies"]
    have = all((folder / "node_modules" / name / "package.json").exists() for name in wanted)
    if not have:
        if not shutil.which("npm"):
            _modules_error = harness.needs("npm", "npm")
            return None, _modules_error
        try:
            done = subprocess.run([SETUP_CLIENTS, str(folder)], capture_output=True, timeout=300)
        except subprocess.TimeoutExpired:
            done = None
        if done is None or done.returncode != 0:
            detail = done.stderr.decode(errors="replace")[-500:] if done else "timed out"
            _modules_error = f"npm could not install the SDK clients (no registry access?): {detail}"
            return None, _modules_error
    _modules = str(folder)
    return _modules, None


def node(*args: str, timeout: float = 60, env: dict[str, str] | None = None) -> tuple[int, dict, str]:
    modules, _ = node_modules() if os.environ.get("CURLRETRY_NODE_MODULES") is None else (None, None)
    child_env = harness.environment(False, {"CURLRETRY_NODE_MODULES": modules or "", **(env or {})})
    done = subprocess.run([NODE, CLIENT_JS, *args], env=child_env, capture_output=True, timeout=timeout,
                          stdin=subprocess.DEVNULL)
    lines = done.stdout.decode().strip().splitlines()
    result = json.loads(lines[-1]) if lines else {}
    return done.returncode, result, done.stderr.decode(errors="replace")


TINYPROXY = shutil.which("tinyproxy")


class TinyProxy:
    """A real proxy of the user's own (Debian's tinyproxy) on 127.0.0.1, the kind a company puts
    between its machines and the Internet: Basic auth, CONNECT to any port, every request logged."""

    USER = "user"
    PASSWORD = "s3cret-pw"  # tinyproxy's config takes letters, digits, '.' and '-' only

    def __init__(self, enter: list[str] | None = None):
        self.enter = list(enter or [])  # a prefix running it elsewhere (agent_sandbox.Sandbox.enter)
        self._dir = tempfile.TemporaryDirectory(prefix="curlretry-tinyproxy-")
        self.log_path = os.path.join(self._dir.name, "tinyproxy.log")
        self.proc: subprocess.Popen | None = None
        self.port = 0

    def start(self) -> "TinyProxy":
        if not TINYPROXY:
            raise unittest.SkipTest("tinyproxy is not installed (scripts/install-deps.sh installs tinyproxy-bin)")
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            self.port = probe.getsockname()[1]
        config = os.path.join(self._dir.name, "tinyproxy.conf")
        Path(config).write_text(f"Port {self.port}\nListen 127.0.0.1\nTimeout 30\nLogFile \"{self.log_path}\"\n"
                                f"LogLevel Connect\nMaxClients 50\nAllow 127.0.0.1\n"
                                f"BasicAuth {self.USER} {self.PASSWORD}\nDisableViaHeader Yes\n")
        self.proc = subprocess.Popen([*self.enter, TINYPROXY, "-d", "-c", config], stdin=subprocess.DEVNULL,
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        # Its listening socket, in the network namespace it runs in (nsenter joins it before it
        # forks): a connection from here could not reach it there.
        table = f"/proc/{self.proc.pid}/net/tcp"
        local = f"0100007F:{self.port:04X}"

        def listening():
            if self.proc.poll() is not None:
                raise RuntimeError(f"tinyproxy exited {self.proc.returncode}:\n{self.log()}")
            rows = Path(table).read_text().splitlines()[1:]
            return any(row.split()[1] == local and row.split()[3] == "0A" for row in rows)
        wait_for(listening, 10, "tinyproxy to listen")
        return self

    def url(self, password: str | None = None) -> str:
        return f"http://{self.USER}:{self.PASSWORD if password is None else password}@127.0.0.1:{self.port}"

    def log(self) -> str:
        return Path(self.log_path).read_text(errors="replace") if os.path.exists(self.log_path) else ""

    def requests(self) -> list[str]:
        """Each request line tinyproxy was sent, in order: "CONNECT 127.0.0.1:443 HTTP/1.1", ..."""
        marker = "]: Request (file descriptor "
        return [line.split("): ", 1)[1] for line in self.log().splitlines() if marker in line]

    def stop(self) -> None:
        if self.proc is not None:
            # Through nsenter, tinyproxy is its child (it forks to enter the PID namespace).
            children = Path(f"/proc/{self.proc.pid}/task/{self.proc.pid}/children")
            for pid in children.read_text().split() if children.exists() else ():
                os.kill(int(pid), signal.SIGTERM)
            harness.end_process(self.proc)
            self.proc = None
        self._dir.cleanup()
