"""A machine of its own for the agent CLI tests (test_agents.py): a private network, mount and PID
namespace (`unshare`) in which the providers' real host names (api.anthropic.com, api.openai.com,
generativelanguage.googleapis.com) resolve, through a private /etc/hosts, to the flaky upstream on
198.18.0.1:443, an address added to that namespace's own `lo`. The upstream's certificate names
those hosts and is added to the system CA store seen inside (a private copy bind-mounted over
/etc/ssl/certs/ca-certificates.crt), so the proxy's libcurl verifies it as it would the real one.

Nothing inside can reach any other machine: the namespace has no interface but its loopback, so an
agent's telemetry or update check fails at once instead of hanging a test. The upstream is the
namespace's PID 1 and watches its stdin (a pipe we hold): when the test process closes it or dies,
the upstream exits and the kernel ends every process left inside (the background proxy, agents).

The agents come from the npm registry, pinned in tests/integration/proxy_clients/agents/package.json,
installed into the build tree by scripts/proxy-test-clients.sh --agents, as the SDKs are.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import tempfile
import time
import unittest
import urllib.parse
from pathlib import Path

import harness
import proxy_support

UPSTREAM_ADDRESS = "198.18.0.1"  # RFC 2544 benchmark range, on the namespace's own lo only
PROVIDER_HOSTS = ("api.anthropic.com", "api.openai.com", "generativelanguage.googleapis.com",
                  # What the agents reach when their user signs in instead of setting a key: Gemini
                  # CLI's Code Assist and its token check, Codex's ChatGPT backend, Vertex AI's
                  # regional (Claude Code) and global (Gemini CLI) hosts.
                  "cloudcode-pa.googleapis.com", "oauth2.googleapis.com", "chatgpt.com",
                  "us-east5-aiplatform.googleapis.com", "aiplatform.googleapis.com",
                  # Providers beyond the first four's API keys: Claude Code on Microsoft Foundry
                  # (a resource's host), Pi on MiniMax (one of its built-in providers).
                  "test-resource.services.ai.azure.com", "api.minimax.io",
                  # Qwen Code's Coding Plan on Alibaba Cloud Model Studio (DashScope).
                  "coding.dashscope.aliyuncs.com")
# A provider curlretry does not know, for a user's ANTHROPIC_BASE_URL (a gateway's https:// endpoint).
GATEWAY_HOST = "llm-gateway.example"
# A developer's own name for a server on this machine (/etc/hosts), which NO_PROXY does not cover.
LOOPBACK_NAME = "dev-app.test"
CLIENTS_DIR = Path(__file__).resolve().parent / "proxy_clients"
AGENTS_MANIFEST = CLIENTS_DIR / "agents" / "package.json"
SETUP_CLIENTS = str(harness.REPO / "scripts" / "proxy-test-clients.sh")
SYSTEM_STORE = "/etc/ssl/certs/ca-certificates.crt"
RUN_TIMEOUT = 90.0  # no agent run may take longer, whatever it tries to reach
# What a user's shell would not have: the host's CA overrides (the launcher sets its own) and any
# provider settings of the machine running the tests.
_DROPPED = (*harness.CA_VARIABLES, "SSL_CERT_DIR", "HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy",
            "NO_PROXY", "no_proxy", "ALL_PROXY", "all_proxy", "ANTHROPIC_BASE_URL", "OPENAI_BASE_URL", "GOOGLE_GEMINI_BASE_URL",
            "GOOGLE_VERTEX_BASE_URL", "CODE_ASSIST_ENDPOINT", "ANTHROPIC_VERTEX_BASE_URL", "ANTHROPIC_FOUNDRY_BASE_URL",
            "ANTHROPIC_BEDROCK_BASE_URL", "AZURE_OPENAI_BASE_URL", "PI_CODING_AGENT_DIR", "CLAUDE_CONFIG_DIR",
            "CLAUDE_CODE_USE_BEDROCK", "CLAUDE_CODE_SKIP_BEDROCK_AUTH", "CLAUDE_CODE_USE_VERTEX", "CLAUDE_CODE_USE_FOUNDRY",
            "PI_PROXY", "PI_PROXY_ANTHROPIC", "QWEN_HOME", "QWEN_CODE_SYSTEM_SETTINGS_PATH",
            "QWEN_CODE_SYSTEM_DEFAULTS_PATH", "OPENAI_API_KEY", "OPENAI_MODEL", "DASHSCOPE_API_KEY",
            "ANTHROPIC_AUTH_TOKEN", "GOOGLE_API_KEY", "GOOGLE_CLOUD_PROJECT", "CODEX_HOME")


def strict() -> bool:
    return os.environ.get("CURLRETRY_STRICT_DEPS") == "1"


def namespace_problem() -> str | None:
    """Why a private network+mount+PID namespace cannot be made here (None: it can)."""
    for tool in ("unshare", "nsenter", "ip"):
        if not shutil.which(tool):
            return harness.needs("util-linux" if tool != "ip" else "iproute2", tool)
    probe = subprocess.run(["unshare", "--net", "--mount", "--pid", "--fork", "--mount-proc", "true"],
                           capture_output=True, timeout=30, stdin=subprocess.DEVNULL)
    if probe.returncode != 0:
        return ("cannot make a private network/mount/PID namespace (unshare needs CAP_SYS_ADMIN): "
                + probe.stderr.decode(errors="replace").strip())
    return None


_agents: str | None = None
_agents_error: str | None = None


def require() -> None:
    """The library built, and namespaces this machine lets us make: an error without the first
    (CI builds it), a visible skip without the second."""
    problem = harness.library_problem()
    if problem:
        raise AssertionError(problem)
    problem = namespace_problem()
    if problem:
        raise unittest.SkipTest(problem)


def unavailable(why: str) -> None:
    """npm could not give the tests what they run: a visible skip; under CURLRETRY_STRICT_DEPS=1
    (CI), a failure."""
    if strict():
        raise AssertionError(f"CURLRETRY_STRICT_DEPS=1: {why}")
    raise unittest.SkipTest(why)


def require_agents() -> str:
    """require(), then the folder whose node_modules/ holds the pinned agents (unavailable() without)."""
    require()
    modules, why = agent_modules()
    if not modules:
        unavailable(why)
    return modules


def agent_modules() -> tuple[str | None, str | None]:
    """The folder whose node_modules/ holds the pinned agents, installed on first use; (None, why)."""
    global _agents, _agents_error
    if _agents or _agents_error:
        return _agents, _agents_error
    build = Path(harness.CURLRETRY_BIN).resolve().parents[1] if harness.CURLRETRY_BIN else harness.REPO / "build"
    folder = build / "proxy-test-agents"
    wanted = json.loads(AGENTS_MANIFEST.read_text())["dependencies"]

    def installed() -> bool:
        for name, version in wanted.items():
            meta = folder / "node_modules" / name / "package.json"
            if not meta.exists() or json.loads(meta.read_text()).get("version") != version:
                return False
        return True
    if not installed():
        if not shutil.which("npm"):
            _agents_error = harness.needs("npm", "npm")
            return None, _agents_error
        try:
            done = subprocess.run([SETUP_CLIENTS, "--agents", str(folder)], capture_output=True, timeout=600,
                                  stdin=subprocess.DEVNULL)
        except subprocess.TimeoutExpired:
            done = None
        if done is None or done.returncode != 0 or not installed():
            detail = done.stderr.decode(errors="replace")[-500:] if done else "timed out after 600 s"
            _agents_error = f"npm could not install the agent CLIs (no registry access?): {detail}"
            return None, _agents_error
    _agents = str(folder)
    return _agents, None


def bin_path(modules: str, name: str) -> str:
    return str(Path(modules) / "node_modules" / ".bin" / name)


class Sandbox:
    """The namespace, its upstream, and a fresh user (HOME, runtime and data directories)."""

    def __init__(self):
        self._dir = tempfile.TemporaryDirectory(prefix="curlretry-agents-")
        self.root = Path(self._dir.name)
        self.home = self.root / "home"
        self.runtime = self.root / "run"
        self.data = self.root / "data"
        self.work = self.root / "work"
        for d in (self.home, self.runtime, self.data, self.work):
            d.mkdir(mode=0o700)
        self.cert = str(self.root / "upstream.pem")
        self._proc: subprocess.Popen | None = None
        self.pid = 0  # the namespace's PID 1 (the upstream) as this side sees it

    def start(self) -> "Sandbox":
        binary = harness._upstream_binary()
        names = [arg for host in (*PROVIDER_HOSTS, GATEWAY_HOST) for arg in ("--tls-name", host)]
        setup = (f"ip link set lo up && ip addr add {UPSTREAM_ADDRESS}/32 dev lo && exec \"$0\" \"$@\"")
        self._proc = subprocess.Popen(
            ["unshare", "--net", "--mount", "--pid", "--fork", "--mount-proc", "--propagation", "private",
             "sh", "-c", setup, binary, "--listen", UPSTREAM_ADDRESS, "--port", "443", "--tls", *names,
             "--cert-out", self.cert],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        try:
            self._await_port()
            self.pid = self._namespace_init()
            hosts = self.root / "hosts"
            hosts.write_text(f"127.0.0.1 localhost {LOOPBACK_NAME}\n::1 localhost\n"
                             + "".join(f"{UPSTREAM_ADDRESS} {h}\n" for h in (*PROVIDER_HOSTS, GATEWAY_HOST)))
            store = self.root / "ca-certificates.crt"
            store.write_bytes(Path(SYSTEM_STORE).read_bytes() + Path(self.cert).read_bytes())
            for source, target in ((hosts, "/etc/hosts"), (store, SYSTEM_STORE)):
                done = self.inside(["mount", "--bind", str(source), target], timeout=20)
                if done.returncode != 0:
                    raise RuntimeError(f"mount --bind {source} {target}: {done.stderr!r}")
        except Exception:
            self.stop()
            raise
        return self

    def _await_port(self, timeout: float = 20.0) -> None:
        proc = self._proc
        line = harness.first_line(proc, timeout, "the sandbox's upstream printed no port",
                                  lambda: f"the sandbox's upstream exited: {proc.stderr.read()!r}")
        if line != b"port=443\n":
            raise RuntimeError(f"the sandbox's upstream said {line!r}")

    def _namespace_init(self) -> int:
        # unshare --fork: the upstream is unshare's one child (exec'd by sh), PID 1 inside.
        children = Path(f"/proc/{self._proc.pid}/task/{self._proc.pid}/children").read_text().split()
        if len(children) != 1:
            raise RuntimeError(f"unshare has children {children}, expected one")
        return int(children[0])

    def stop(self) -> None:
        proc, self._proc = self._proc, None
        if proc:
            proc.stdin.close()  # the upstream's lifeline: it exits, and the namespace with it
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
            proc.stdout.close()
            proc.stderr.close()
        self._dir.cleanup()

    def inside(self, cmd: list[str], env: dict[str, str] | None = None, timeout: float = RUN_TIMEOUT,
               cwd: str | None = None) -> subprocess.CompletedProcess:
        # cd by a shell, not nsenter --wd: Codex fails ("No such file or directory") in a
        # directory nsenter entered for it.
        where = ["sh", "-c", 'cd "$0" && exec "$@"', cwd] if cwd else []
        return subprocess.run([*self.enter(), *where, *cmd], env=env, capture_output=True, timeout=timeout,
                              stdin=subprocess.DEVNULL)

    def enter(self) -> list[str]:
        """The prefix that runs a command inside (its network, mounts and PIDs)."""
        return ["nsenter", "--target", str(self.pid), "--net", "--mount", "--pid", "--"]

    def _upstream_get(self, host: str, path: str) -> bytes:
        done = self.inside([harness.CURL, "-q", "-sS", "--fail", "--cacert", self.cert, f"https://{host}{path}"],
                           env=harness.environment(False), timeout=20)
        if done.returncode != 0:
            raise RuntimeError(f"GET https://{host}{path} in the sandbox: {done.stderr!r}")
        return done.stdout

    def arm(self, host: str, prefix: str, key: str, script: str) -> None:
        """Requests to https://HOST<prefix>... play /s/KEY/SCRIPT (upstream/README.md, /arm/)."""
        self._upstream_get(host, f"/arm/{key}/{script}?path={prefix}")

    def arm_json(self, host: str, prefix: str, key: str, body: object, status: str = "200 OK") -> None:
        """Requests to https://HOST<prefix>... are answered STATUS with `body` as JSON (and closed)."""
        data = json.dumps(body).encode()
        answer = (b"HTTP/1.1 %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n"
                  b"Connection: close\r\n\r\n%s" % (status.encode(), len(data), data))
        self.arm(host, prefix, key, "raw+data=" + urllib.parse.quote(answer, safe=""))

    def count(self, host: str, key: str) -> int:
        return int(self._upstream_get(host, f"/count/{key}"))

    def user_env(self, extra: dict[str, str | None]) -> dict[str, str]:
        """A new user's environment: our own HOME and XDG directories, no CURLRETRY_* settings,
        no CA or proxy variables from the machine running the tests."""
        env = harness.environment(False, {name: None for name in _DROPPED})
        env.update({"HOME": str(self.home), "XDG_RUNTIME_DIR": str(self.runtime), "XDG_DATA_HOME": str(self.data),
                    "XDG_CONFIG_HOME": str(self.home / ".config"), "XDG_CACHE_HOME": str(self.home / ".cache"),
                    "XDG_STATE_HOME": str(self.home / ".local" / "state"), "TMPDIR": str(self.root / "tmp")})
        (self.root / "tmp").mkdir(exist_ok=True)
        for key, value in extra.items():
            if value is None:
                env.pop(key, None)
            else:
                env[key] = value
        return env

    def run(self, cmd: list[str], env: dict[str, str | None]) -> harness.Result:
        started = time.monotonic()
        try:
            done = self.inside(cmd, env=self.user_env(env), cwd=str(self.work))
        except subprocess.TimeoutExpired as e:
            return harness.Result(-9, e.stdout or b"", (e.stderr or b"") + b"\n[timed out]", time.monotonic() - started)
        return harness.Result(done.returncode, done.stdout, done.stderr, time.monotonic() - started)

    def stop_proxy(self) -> None:
        """Ends the shared proxy the launches started (the next launch starts a new one)."""
        for pid in self.proxy_pids():
            os.kill(pid, signal.SIGTERM)
            proxy_support.wait_for(lambda: not self._running(pid), 20, "the sandbox's proxy to exit")

    @staticmethod
    def _running(pid: int) -> bool:
        try:
            # A zombie until the namespace's PID 1 (the upstream, which reaps nothing) ends.
            return Path(f"/proc/{pid}/stat").read_text().split(") ", 1)[1][0] != "Z"
        except OSError:
            return False

    def proxy_pids(self) -> list[int]:
        """The curlretry proxies running inside (as seen from here)."""
        out = []
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit():
                continue
            try:
                if os.readlink(entry / "ns" / "pid") != os.readlink(f"/proc/{self.pid}/ns/pid"):
                    continue
                argv0 = (entry / "cmdline").read_bytes().split(b"\0", 1)[0]
                if argv0 == b"curlretry-proxy" and self._running(int(entry.name)):
                    out.append(int(entry.name))
            except OSError:
                continue
        return out
