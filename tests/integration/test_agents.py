"""The real agent CLIs from npm (issue 26 item 7): Claude Code (`claude -p`, a Bun binary), Pi
(`pi -p`, Node), Codex (`codex exec`, Rust), Gemini CLI (`gemini -p`, Node), oh-my-pi (`omp -p`, Bun)
and Qwen Code (`qwen -p`, Node), plus users' plain programs that never load libcurl (a Node script on
the official Anthropic SDK, Python scripts on httpx and requests, a static Go program), each run as a
user would, `curlretry -- AGENT ...` with no
config file, against the flaky upstream standing in for the provider's real host (agent_sandbox.py: a private
network, mount and PID namespace with its own /etc/hosts and CA store). The agents keep their own
defaults, retries included; only fake keys, a fresh HOME and their offline switches are given.

Per agent, in its own wire format (Anthropic Messages SSE, OpenAI Responses SSE, Gemini
streamGenerateContent SSE): 529 twice, 429 with Retry-After, an in-band overloaded error before any
content, a connection reset. Each must succeed with stdout byte-identical to a healthy run, the
exact upstream request count (failures + 1), and the retries made by curlretry, not the agent: the
proxy's attempt log (CURLRETRY_EVENTS) shows ONE request from the agent holding every attempt
(1, 2, 3). An agent retrying on its own shows up as attempt 1 again (1, 1, 1): with curlretry's
retries off (CURLRETRY_MAX_ATTEMPTS=1) every scenario here fails, and Pi, Codex and the SDK script
exit 1 on the in-band error. Claude Code also runs once with the shared proxy's port held by a
second local user (a real one, useradd): its proxy moves to a port of its own and still retries.
The same scenarios with the agents as their users sign in: test_agents_signed_in.py; on other
providers and through gateways: test_agents_providers.py.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
import unittest
from pathlib import Path

import agent_sandbox
import harness
import proxy_support
from agent_sandbox import Sandbox, bin_path
from local_users import FAKE_HEALTH, LocalUsers, needs_root

CLIENTS = agent_sandbox.CLIENTS_DIR


class AgentScenarios:
    """One agent in one sandbox; subclasses say how to run it and what its provider streams."""

    host = ""
    prefix = ""     # the path the agent posts its completion to (upstream /arm/ prefix)
    good = ""       # the provider's healthy stream (upstream/README.md sse-*-good)
    overload = ""   # its in-band overloaded error before any content
    needs_sdk = False
    greeting = b"Hello world"  # what the agent prints of the healthy stream
    side_paths: tuple[str, ...] = ()  # other requests the agent makes to the host: 404 and close

    @classmethod
    def command(cls, modules: str) -> list[str]:
        raise NotImplementedError

    @classmethod
    def agent_env(cls) -> dict[str, str]:
        return {}

    @classmethod
    def prepare_home(cls, home: Path) -> None:
        pass

    @classmethod
    def arm_sign_in(cls) -> None:
        """Answers the agent needs before its completion (a signed-in user's account checks)."""

    # --- the sandbox, shared by the class's tests ------------------------------------------

    @classmethod
    def setUpClass(cls) -> None:
        super().setUpClass()
        modules = agent_sandbox.require_agents()
        if cls.needs_sdk:
            sdk, why = proxy_support.node_modules()
            if not sdk:
                agent_sandbox.unavailable(why)
            cls.sdk_modules = sdk
        cls.modules = modules
        cls.sandbox = Sandbox().start()
        cls.addClassCleanup(cls.sandbox.stop)
        cls.events = cls.sandbox.root / "events.jsonl"
        cls.prepare_home(cls.sandbox.home)
        for prefix in cls.side_paths:
            # Closed after the answer, so that the completion request never rides a connection
            # they left in the proxy's pool (see test_reset).
            cls.sandbox.arm(cls.host, prefix, f"side-{os.getpid()}", "404+close")
        cls.arm_sign_in()
        cls.healthy_key = f"healthy-{os.getpid()}"
        cls.healthy = cls._launch(cls.healthy_key, cls.good)

    @classmethod
    def _launch(cls, key: str, script: str | None, extra: dict[str, str] | None = None) -> harness.Result:
        if script is not None:  # None: armed by the caller
            cls.sandbox.arm(cls.host, cls.prefix, key, script)
        # Under the sanitizer presets the launched programs need the sanitizer runtime first.
        runtime = {"LD_PRELOAD": harness.PRELOAD_PREFIX} if harness.PRELOAD_PREFIX else {}
        env = {**runtime, "CURLRETRY_LIBRARY": harness.LIB, "CURLRETRY_BASE_MS": harness.FAST_BASE_MS,
               "CURLRETRY_EVENTS": str(cls.events), **cls.agent_env(), **(extra or {})}
        # No config file, no flag: what curlretry knows of the providers decides.
        return cls.sandbox.run([harness.CURLRETRY_BIN, "--", *cls.command(cls.modules)], env)

    def completion_events(self, since: int) -> list[dict]:
        """What the proxy logged (CURLRETRY_EVENTS) after byte `since` for the agent's completion path."""
        lines = self.events.read_bytes()[since:].decode().splitlines() if self.events.exists() else []
        events = [json.loads(line) for line in lines]
        return [e for e in events if e.get("host") == self.host and e.get("path", "").startswith(self.prefix)]

    def events_size(self) -> int:
        return self.events.stat().st_size if self.events.exists() else 0

    def assertScenario(self, script: str, requests: int) -> list[dict]:
        key = self.key()
        since = self.events_size()
        result = self._launch(key, script)
        self.assertEqual(result.code, 0, f"exit status\n{result}")
        self.assertEqual(result.stdout, self.healthy.stdout, f"stdout differs from the healthy run\n{result}")
        self.assertEqual(self.sandbox.count(self.host, key), requests, f"requests upstream\n{result}")
        # [1, 2, 3]: one request of the agent's, tried three times by curlretry; [1, 1, 1] would be
        # three requests of its own.
        events = self.completion_events(since)
        self.assertEqual([e["attempt"] for e in events], list(range(1, requests + 1)),
                         f"one request from the agent, every attempt curlretry's\n{result}\nevents:\n"
                         + "\n".join(map(json.dumps, events)))
        return events

    def assertRetriedThroughUsersProxy(self, variable: str) -> None:
        """`variable` names the user's own proxy, the only way out as a company's is: a real
        tinyproxy inside the sandbox, with Basic auth. A 529 then the healthy stream: curlretry's
        proxy goes through tinyproxy, and retries."""
        self.sandbox.stop_proxy()
        self.addCleanup(self.sandbox.stop_proxy)
        parent = proxy_support.TinyProxy(enter=self.sandbox.enter()).start()
        self.addCleanup(parent.stop)
        key = self.key()
        since = self.events_size()
        result = self._launch(key, f"529,{self.good}", {variable: parent.url()})
        self.assertEqual((result.code, result.stdout), (0, self.healthy.stdout), str(result))
        self.assertEqual(self.sandbox.count(self.host, key), 2, str(result))
        self.assertEqual([e["attempt"] for e in self.completion_events(since)], [1, 2], str(result))
        # The provider's attempts went through it (with the agent's other hosts, tunnelled blind).
        self.assertIn(f"CONNECT {self.host}:443 HTTP/1.1", parent.requests(), parent.log())
        self.assertIn(f"curlretry: proxy: {variable} names a proxy of yours: curlretry's proxy reaches the providers "
                      "through it", result.stderr.decode().splitlines(), str(result))

    def key(self) -> str:
        return f"{type(self).__name__}-{self._testMethodName.removeprefix('test_')}-{os.getpid()}"

    # --- the scenarios ----------------------------------------------------------------------

    def test_healthy_run(self):
        result = self.healthy
        self.assertEqual(result.code, 0, str(result))
        self.assertIn(self.greeting, result.stdout, str(result))
        self.assertEqual(self.sandbox.count(self.host, self.healthy_key), 1, str(result))

    def test_529_twice(self):
        self.assertScenario(f"529,529,{self.good}", 3)

    def test_429_with_retry_after(self):
        events = self.assertScenario(f"429+ra=1,{self.good}", 2)
        # The server's wait, not the backoff's 50 ms base: what curlretry decided, as logged.
        self.assertEqual([(e["status"], e["verdict"], e["delay_ms"]) for e in events],
                         [(429, "retry", 1000), (200, "success", 0)])

    def test_in_band_overloaded_before_content(self):
        self.assertScenario(f"{self.overload},{self.good}", 2)

    def test_reset(self):
        # On a connection it reuses, libcurl itself re-sends a request the peer reset before any
        # byte of answer: a new proxy, so that the reset meets a fresh connection and curlretry.
        self.sandbox.stop_proxy()
        self.assertScenario(f"reset,{self.good}", 2)


class AnthropicMessages:
    """The provider of the agents below that reach Anthropic: its Messages API and streams."""

    host = "api.anthropic.com"
    prefix = "/v1/messages"
    good = "sse-anthropic-good"
    overload = "sse-overload"


class ClaudeCode(AnthropicMessages, AgentScenarios, unittest.TestCase):
    side_paths = ("/api/claude_code/",)  # settings and policy_limits, fetched at start

    @classmethod
    def command(cls, modules):
        return [bin_path(modules, "claude"), "-p", "Say hello"]

    @classmethod
    def agent_env(cls):
        # Claude Code's documented switch for telemetry, error reports and update checks.
        return {"ANTHROPIC_API_KEY": "sk-ant-test-not-a-key", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1"}


    @needs_root
    def test_529_with_the_shared_port_held_by_another_user(self):
        # A second local user listens on 127.0.0.1:7878, the shared proxy's port, before the user
        # runs `curlretry -- claude`. Before: the launch refused her listener and ran claude
        # without the proxy, so the 529 reached it unretried. Now the user's proxy moves to a port
        # of its own, claude is given that one, and she gets nothing, not even a health request.
        self.sandbox.stop_proxy()
        self.addCleanup(self.sandbox.stop_proxy)
        users = LocalUsers(self)
        attacker = users.make("squatter")
        d = tempfile.TemporaryDirectory(prefix="curlretry-squatter-")
        self.addCleanup(d.cleanup)
        os.chmod(d.name, 0o755)
        drop = Path(d.name) / "drop"
        drop.mkdir()
        os.chown(drop, attacker.pw_uid, attacker.pw_gid)
        script = Path(d.name) / "fake.py"
        script.write_text(FAKE_HEALTH)
        seen = drop / "seen"
        fake = users.start(attacker, harness.PYTHON, str(script), "7878", str(seen), enter=tuple(self.sandbox.enter()))
        proxy_support.wait_for(lambda: fake.poll() is not None or os.path.exists(f"{seen}.ready"), 20,
                               "the squatter's server")
        self.assertIsNone(fake.poll(), "the squatter's server exited")
        key = self.key()
        since = self.events_size()
        result = self._launch(key, f"529,{self.good}")
        self.assertEqual((result.code, result.stdout), (0, self.healthy.stdout), str(result))
        self.assertEqual(self.sandbox.count(self.host, key), 2, str(result))
        self.assertEqual([e["attempt"] for e in self.completion_events(since)], [1, 2], str(result))
        self.assertRegex(result.stderr.decode(),
                         rf"(?m)^curlretry: proxy started on http://127\.0\.0\.1:\d+ \(pid \d+, log .*\): "
                         rf"127\.0\.0\.1:7878 is held by uid {attacker.pw_uid} \({attacker.pw_name}\), not by you, "
                         "so yours listens here; the next launch finds it; ")
        self.assertEqual(seen.read_bytes() if seen.exists() else b"", b"")


    def test_529_from_a_gateway_its_base_url_names(self):
        # ANTHROPIC_BASE_URL naming a provider curlretry does not know (Kimi's, MiniMax's or a
        # company gateway's https:// endpoint) makes that host claude's provider: it is intercepted
        # as the known ones are. Before: its CONNECT was tunnelled blind, and claude's own retry
        # hid the 529 (no attempt in curlretry's log).
        self.assertGatewayRetried({"ANTHROPIC_BASE_URL": f"https://{agent_sandbox.GATEWAY_HOST}"})

    def test_529_from_a_gateway_its_settings_name(self):
        # The same gateway named where Claude Code's guides put it, the `env` block of
        # ~/.claude/settings.json, which the launcher's environment does not show.
        settings = self.sandbox.home / ".claude" / "settings.json"
        settings.parent.mkdir(exist_ok=True)
        settings.write_text(json.dumps({"env": {"ANTHROPIC_BASE_URL": f"https://{agent_sandbox.GATEWAY_HOST}"}}))
        self.addCleanup(settings.unlink)
        self.assertGatewayRetried({})

    def assertGatewayRetried(self, extra: dict[str, str]) -> None:
        """A 529 then a good stream from the sandbox's gateway host: retried by curlretry."""
        gateway = agent_sandbox.GATEWAY_HOST
        self.sandbox.arm(gateway, "/api/claude_code/", f"side-{os.getpid()}", "404+close")
        key = self.key()
        self.sandbox.arm(gateway, self.prefix, key, f"529,{self.good}")
        since = self.events_size()
        result = self._launch(key, None, extra)
        self.assertEqual((result.code, result.stdout), (0, self.healthy.stdout), str(result))
        self.assertEqual(self.sandbox.count(gateway, key), 2, str(result))
        lines = self.events.read_bytes()[since:].decode().splitlines() if self.events.exists() else []
        attempts = [e["attempt"] for e in map(json.loads, lines)
                    if e.get("host") == gateway and e.get("path", "").startswith(self.prefix)]
        # [1, 2]: one request of claude's, retried by curlretry; [] would be a blind tunnel.
        self.assertEqual(attempts, [1, 2], str(result))

    def test_529_behind_a_company_proxy(self):
        # HTTPS_PROXY names the user's own proxy. Before: claude ran directly with it, so the 529
        # reached claude unretried by curlretry (no attempt in the proxy's log).
        self.assertRetriedThroughUsersProxy("HTTPS_PROXY")


class Pi(AnthropicMessages, AgentScenarios, unittest.TestCase):
    @classmethod
    def command(cls, modules):
        # --offline: no startup network operations (its update and package checks).
        return [bin_path(modules, "pi"), "-p", "--provider", "anthropic", "--model", "claude-sonnet-4-5",
                "--no-session", "--offline", "Say hello"]

    @classmethod
    def agent_env(cls):
        return {"ANTHROPIC_API_KEY": "sk-ant-test-not-a-key"}


class Omp(AnthropicMessages, AgentScenarios, unittest.TestCase):
    """oh-my-pi (`omp`, Pi's fork, a Bun script). It sends its provider requests directly, not
    through HTTPS_PROXY, unless PI_PROXY names a proxy (proxy/omp_proxy.h): before, each of them
    went around curlretry's proxy and omp retried the 529 itself (attempts [] in curlretry's log).
    The sandbox's certificate is the user's own NODE_EXTRA_CA_CERTS, as the real provider's is
    trusted by default: a request that goes around the proxy still reaches it."""

    @classmethod
    def command(cls, modules):
        # --no-title: no second request to name the session; --no-tools: the prompt alone.
        return [bin_path(modules, "omp"), "-p", "--model", "anthropic/claude-sonnet-4-5", "--no-session", "--no-title",
                "--no-tools", "Say hello"]

    @classmethod
    def agent_env(cls):
        # Its `#!/usr/bin/env bun` finds the pinned Bun on PATH, as a user's install puts it there.
        return {"ANTHROPIC_API_KEY": "sk-ant-test-not-a-key", "NODE_EXTRA_CA_CERTS": cls.sandbox.cert,
                "PATH": f"{Path(bin_path(cls.modules, 'omp')).parent}:{os.environ.get('PATH', '/usr/bin:/bin')}"}

    def test_a_pi_proxy_of_the_users_own_is_kept_and_the_launch_says_so(self):
        # PI_PROXY may be the only way out for a region the provider allows: omp keeps it, unretried.
        result = self.sandbox.run([harness.CURLRETRY_BIN, "--", *self.command(self.modules)[:1], "--version"],
                                  {**self.agent_env(), "PI_PROXY": "http://user:s3cret@proxy.eu.example:3128"})
        self.assertEqual(result.code, 0, str(result))
        line = ("curlretry: proxy: PI_PROXY names a proxy of yours, which omp sends its provider requests through in "
                "place of curlretry's: none of them is retried; to have them retried, name that proxy in HTTPS_PROXY "
                "instead (curlretry's proxy then reaches the providers through it)\n")
        self.assertEqual(result.stderr.decode().count(line), 1, str(result))
        self.assertNotIn(b"s3cret", result.stderr, str(result))


class Codex(AgentScenarios, unittest.TestCase):
    host = "api.openai.com"
    prefix = "/v1/responses"
    good = "sse-oai-responses-good"
    overload = "sse-oai-responses-overload"

    @classmethod
    def command(cls, modules):
        return [bin_path(modules, "codex"), "exec", "--skip-git-repo-check", "Say hello"]

    @classmethod
    def agent_env(cls):
        return {"OPENAI_API_KEY": "sk-test-not-a-key"}

    @classmethod
    def prepare_home(cls, home):
        # Codex's built-in provider opens a WebSocket first (GET /v1/responses with Upgrade),
        # which no HTTP proxy hop carries; the same provider with supports_websockets = false
        # posts over HTTPS from the start (see the file).
        (home / ".codex").mkdir()
        shutil.copy(CLIENTS / "agents" / "codex-config.toml", home / ".codex" / "config.toml")

    def test_529_behind_a_company_proxy_its_all_proxy_names(self):
        # ALL_PROXY alone names the user's proxy: curl's variable for every scheme, which Codex
        # (and Claude Code) honour too. The launch hands codex HTTPS_PROXY, which comes first. Before,
        # curlretry's proxy then went around the user's (tinyproxy saw nothing), where the user's
        # network has no other way out.
        self.assertRetriedThroughUsersProxy("ALL_PROXY")


class GeminiCli(AgentScenarios, unittest.TestCase):
    host = "generativelanguage.googleapis.com"
    # -m: one model, so no routing-classifier call (generateContent) before the stream.
    prefix = "/v1beta/models/gemini-2.5-flash:streamGenerateContent"
    good = "sse-gemini-good"
    overload = "sse-gemini-overload"

    @classmethod
    def command(cls, modules):
        return [bin_path(modules, "gemini"), "-m", "gemini-2.5-flash", "-p", "Say hello"]

    @classmethod
    def agent_env(cls):
        # A fresh directory is untrusted, and headless runs then refuse to start.
        return {"GEMINI_API_KEY": "test-not-a-key", "GEMINI_CLI_TRUST_WORKSPACE": "true"}

    @classmethod
    def prepare_home(cls, home):
        (home / ".gemini").mkdir()
        (home / ".gemini" / "settings.json").write_text('{"privacy": {"usageStatisticsEnabled": false}}\n')


class QwenCode(AgentScenarios, unittest.TestCase):
    """Qwen Code (`qwen`, a Gemini CLI fork on Node) on Alibaba Cloud's Coding Plan, set up as its
    docs' headless setup says: ~/.qwen/settings.json declares the model on
    coding.dashscope.aliyuncs.com, the key in the variable it names. Before, DashScope's hosts were
    no provider curlretry knew: a blind tunnel, qwen's own retries hiding each failure."""

    host = "coding.dashscope.aliyuncs.com"
    prefix = "/v1/chat/completions"
    good = "sse-oai-chat-good"
    overload = "sse-oai-chat-overload"
    greeting = b"Hello\n"  # the upstream's chat stream says "Hello"

    # Its settings: the Coding Plan's model, and no auto-memory (a second request after each
    # prompt, which would make every count here one more).
    settings = {"modelProviders": {"openai": [{"id": "qwen3-coder-plus", "name": "qwen3-coder-plus (Coding Plan)",
                                               "baseUrl": "https://coding.dashscope.aliyuncs.com/v1",
                                               "envKey": "BAILIAN_CODING_PLAN_API_KEY"}]},
                "security": {"auth": {"selectedType": "openai"}}, "model": {"name": "qwen3-coder-plus"},
                "memory": {"enableManagedAutoMemory": False}}

    @classmethod
    def command(cls, modules):
        return [bin_path(modules, "qwen"), "-p", "Say hello"]

    @classmethod
    def agent_env(cls):
        # The sandbox's certificate is the user's own NODE_EXTRA_CA_CERTS, as the real provider's is
        # trusted by default: through a blind tunnel (before) qwen still reaches it.
        return {"BAILIAN_CODING_PLAN_API_KEY": "sk-sp-test-not-a-key", "NODE_EXTRA_CA_CERTS": cls.sandbox.cert}

    @classmethod
    def prepare_home(cls, home):
        (home / ".qwen").mkdir()
        (home / ".qwen" / "settings.json").write_text(json.dumps(cls.settings))


class AnthropicSdkScript(AnthropicMessages, AgentScenarios, unittest.TestCase):
    """A plain user script on @anthropic-ai/sdk (its defaults: own retries, base URL from the
    environment). Node 20's fetch ignores HTTPS_PROXY, so interception never sees it: the launcher
    points ANTHROPIC_BASE_URL at the proxy's built-in route instead."""

    needs_sdk = True

    @classmethod
    def command(cls, modules):
        return [proxy_support.NODE, str(CLIENTS / "sdk-script.mjs")]

    @classmethod
    def agent_env(cls):
        return {"ANTHROPIC_API_KEY": "sk-ant-test-not-a-key", "CURLRETRY_NODE_MODULES": cls.sdk_modules}

    def test_a_base_url_its_env_file_names_is_left_to_it(self):
        # `node --env-file=.env` (or dotenv) loads the file's ANTHROPIC_BASE_URL only over an unset
        # variable. Before, the launch set it to the built-in route, which won: the script's request,
        # and the gateway's key, went to api.anthropic.com. Node 20's fetch ignores HTTPS_PROXY, so
        # the gateway is reached directly, unretried, and the launch says so.
        gateway = agent_sandbox.GATEWAY_HOST
        dotenv = self.sandbox.work / ".env"
        dotenv.write_text(f"ANTHROPIC_BASE_URL=https://{gateway}/sdk-env\n")
        self.addCleanup(dotenv.unlink)
        key = self.key()
        self.sandbox.arm(gateway, "/sdk-env/v1/messages", key, self.good)
        command = self.command(self.modules)
        result = self.sandbox.run(
            [harness.CURLRETRY_BIN, "--", command[0], f"--env-file={dotenv}", *command[1:]],
            {**({"LD_PRELOAD": harness.PRELOAD_PREFIX} if harness.PRELOAD_PREFIX else {}), "CURLRETRY_LIBRARY": harness.LIB,
             **self.agent_env(), "NODE_EXTRA_CA_CERTS": self.sandbox.cert})
        self.assertEqual((result.code, result.stdout), (0, self.healthy.stdout), str(result))
        self.assertEqual(self.sandbox.count(gateway, key), 1, str(result))
        self.assertIn(f"curlretry: proxy: ANTHROPIC_BASE_URL is set in {dotenv}, which {command[0]} may load itself: it "
                      f"is left unset for it (a value given by the launch would win over that file's), so {command[0]}'s "
                      "requests there are retried only if it sends them through HTTPS_PROXY\n", result.stderr.decode(),
                      str(result))



class PythonHttpx(AnthropicMessages, AgentScenarios, unittest.TestCase):
    """A plain user script streaming with Python's httpx (Debian's python3-httpx), the HTTP stack of
    the official Python SDKs: it never loads libcurl, so `curlretry --` runs it through the proxy,
    which it reaches by HTTPS_PROXY. (aiohttp does not: its default session ignores HTTPS_PROXY;
    docs/PROXY.md.)"""

    library = "httpx"
    package = "python3-httpx"
    greeting = b"200\nHello world\n"

    @classmethod
    def setUpClass(cls):
        if not harness.succeeds([harness.PYTHON, "-c", f"import {cls.library}"]):
            raise unittest.SkipTest(harness.needs(cls.package, f"Python's {cls.library}"))
        super().setUpClass()

    @classmethod
    def command(cls, modules):
        return [harness.PYTHON, str(CLIENTS / "python-stream.py"), cls.library]


class PythonRequests(PythonHttpx):
    """The same script on requests (Debian's python3-requests), which reads REQUESTS_CA_BUNDLE."""

    library = "requests"
    package = "python3-requests"


class GoProgram(AnthropicMessages, AgentScenarios, unittest.TestCase):
    """A plain user program on Go's net/http, built static (CGO_ENABLED=0) with Debian's golang-go:
    doctor cannot reach it with the preload, so `curlretry --` runs it through the proxy, which it
    reaches by HTTPS_PROXY, trusting the local CA by SSL_CERT_FILE."""

    greeting = b"200\nHello world\n"

    @classmethod
    def setUpClass(cls):
        go = shutil.which("go") or "/usr/bin/go"
        if not os.access(go, os.X_OK):
            raise unittest.SkipTest(harness.needs("golang-go", "go"))
        cls.go_dir = Path(tempfile.mkdtemp(prefix="curlretry-go-"))
        cls.addClassCleanup(shutil.rmtree, cls.go_dir, True)
        env = {**os.environ, "CGO_ENABLED": "0", "GOCACHE": str(cls.go_dir / "cache"), "GOPATH": str(cls.go_dir / "path"),
               "GOFLAGS": "", "GOPROXY": "off", "GOTOOLCHAIN": "local", "GO111MODULE": "off"}
        built = subprocess.run([go, "build", "-o", str(cls.go_dir / "go-stream"), str(CLIENTS / "go-stream" / "main.go")],
                               env=env, capture_output=True, timeout=300)
        if built.returncode != 0:
            raise AssertionError(f"go build failed: {built.stderr.decode(errors='replace')}")
        super().setUpClass()

    @classmethod
    def command(cls, modules):
        return [str(cls.go_dir / "go-stream")]


class TheRestOfItsTraffic(unittest.TestCase):
    """What an agent reaches besides its provider under `curlretry -- AGENT`, which hands it
    curlretry's proxy in HTTPS_PROXY and HTTP_PROXY for every host it does not keep direct: servers
    on ports other than 80 and 443 of a host not on loopback (a local network's Ollama on 11434, a
    cluster on 6443), here two flaky upstreams on the sandbox's 198.18.0.1, and a developer's own
    name for a server on loopback (/etc/hosts), which NO_PROXY's loopback entries do not cover.
    Python's urllib stands in for the agent's own fetches. Before: 403 `port ... is not in
    proxy.forward.allow_ports`, and 502 for the loopback name, for requests the command made fine
    without curlretry."""

    PLAIN, TLS, LOOPBACK = 11434, 6443, 3000

    @classmethod
    def setUpClass(cls) -> None:
        super().setUpClass()
        agent_sandbox.require()
        cls.sandbox = Sandbox().start()
        cls.addClassCleanup(cls.sandbox.stop)
        for address, port, tls in ((agent_sandbox.UPSTREAM_ADDRESS, cls.PLAIN, []),
                                   (agent_sandbox.UPSTREAM_ADDRESS, cls.TLS, ["--tls"]),
                                   ("127.0.0.1", cls.LOOPBACK, [])):
            # Inside the namespace, ended with it (its PID 1 is the sandbox's upstream).
            server = subprocess.Popen([*cls.sandbox.enter(), harness._upstream_binary(), "--listen",
                                       address, "--port", str(port), *tls],
                                      stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
            cls.addClassCleanup(server.wait, 20)
            cls.addClassCleanup(server.kill)
            cls.addClassCleanup(server.stdout.close)
            cls.addClassCleanup(server.stderr.close)
            line = harness.first_line(server, 20, f"the upstream on port {port} printed no port",
                                      lambda: f"it exited: {server.stderr.read()!r}")
            if line != f"port={port}\n".encode():
                raise RuntimeError(f"the upstream on port {port} said {line!r}")

    def count(self, key: str) -> int:
        done = self.sandbox.inside([harness.CURL, "-q", "-sS", "--fail",
                                    f"http://{agent_sandbox.UPSTREAM_ADDRESS}:{self.PLAIN}/count/{key}"],
                                   env=harness.environment(False), timeout=20)
        self.assertEqual(done.returncode, 0, done.stderr)
        return int(done.stdout)

    def test_other_ports_and_names_of_loopback_are_reached_as_without_curlretry(self):
        self.addCleanup(self.sandbox.stop_proxy)
        plain, tls, local = f"plain-{os.getpid()}", f"tls-{os.getpid()}", f"local-{os.getpid()}"
        at = agent_sandbox.UPSTREAM_ADDRESS
        script = ("import os, ssl, urllib.request\n"
                  "print(os.environ['HTTP_PROXY'] == os.environ['HTTPS_PROXY'] != '')\n"
                  f"r = urllib.request.urlopen('http://{at}:{self.PLAIN}/s/{plain}/200')\n"
                  "print(r.status, r.read().decode(), end='')\n"
                  f"r = urllib.request.urlopen('https://{at}:{self.TLS}/s/{tls}/200',"
                  " context=ssl._create_unverified_context())\n"
                  "print(r.status, r.read().decode(), end='')\n"
                  f"r = urllib.request.urlopen('http://{agent_sandbox.LOOPBACK_NAME}:{self.LOOPBACK}/s/{local}/200')\n"
                  "print(r.status, r.read().decode(), end='')\n")
        fetch = self.sandbox.work / "fetch.py"  # a script (with -c, python3 is taken to load pycurl)
        fetch.write_text(script)
        runtime = {"LD_PRELOAD": harness.PRELOAD_PREFIX} if harness.PRELOAD_PREFIX else {}
        result = self.sandbox.run([harness.CURLRETRY_BIN, "--", harness.PYTHON, str(fetch)],
                                  {**runtime, "CURLRETRY_LIBRARY": harness.LIB})
        self.assertEqual((result.code, result.stdout),
                         (0, b"True\n200 " + harness.ok_body(plain, 1) + b"200 " + harness.ok_body(tls, 1)
                          + b"200 " + harness.ok_body(local, 1)),
                         str(result))
        self.assertEqual(self.count(plain), 1)
