"""test_agents.py's scenarios with the agents on providers other than the four API keys of
test_agents.py: Claude Code on Microsoft Foundry (RESOURCE.services.ai.azure.com), Pi on one of its
built-in providers (MiniMax), and the agents pointed at a gateway by the base-URL variable of the
mode they run in (Gemini CLI's GOOGLE_GEMINI_BASE_URL, Claude Code's ANTHROPIC_VERTEX_BASE_URL and
ANTHROPIC_FOUNDRY_BASE_URL), also from Gemini CLI's .env file, or by their own config files (Pi's
models.json, Codex's config.toml).
Before stop 51 each of these went through a blind tunnel: the agent's own retries only, the
attempt log empty, and the launch said nothing. Real CLIs from npm in the agents' sandbox, as
test_agents.py runs them.
"""

from __future__ import annotations

import json
import os
import unittest
import urllib.parse

import agent_sandbox
import bedrock_stream
import harness
import test_agents  # its agent classes by the module's name only: imported names would run again here
from agent_sandbox import bin_path
from test_agents_signed_in import same_agent


class ClaudeCodeOnFoundry(same_agent(test_agents.ClaudeCode), unittest.TestCase):
    """Claude Code on Microsoft Foundry (CLAUDE_CODE_USE_FOUNDRY with a resource and its API key):
    the model is reached at RESOURCE.services.ai.azure.com/anthropic."""

    host = "test-resource.services.ai.azure.com"
    prefix = "/anthropic/v1/messages"

    @classmethod
    def agent_env(cls):
        # Node's CA variable: the sandbox upstream's certificate, which claude trusts as it would
        # trust Azure's (before stop 51 it reached the host through a blind tunnel).
        return {"ANTHROPIC_API_KEY": None, "CLAUDE_CODE_USE_FOUNDRY": "1", "ANTHROPIC_FOUNDRY_RESOURCE": "test-resource",
                "ANTHROPIC_FOUNDRY_API_KEY": "test-not-a-key", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
                "NODE_EXTRA_CA_CERTS": cls.sandbox.cert}


class PiOnMiniMax(same_agent(test_agents.Pi), unittest.TestCase):
    """Pi with one of its built-in providers that is none of the first four (`--provider minimax`,
    MiniMax's Anthropic-compatible API at api.minimax.io/anthropic)."""

    host = "api.minimax.io"
    prefix = "/anthropic/v1/messages"

    @classmethod
    def command(cls, modules):
        return [bin_path(modules, "pi"), "-p", "--provider", "minimax", "--model", "MiniMax-M2.7", "--no-session",
                "--offline", "Say hello"]

    @classmethod
    def agent_env(cls):
        return {"ANTHROPIC_API_KEY": None, "MINIMAX_API_KEY": "test-not-a-key", "NODE_EXTRA_CA_CERTS": cls.sandbox.cert}


class GatewaysTheirBaseUrlsName(unittest.TestCase):
    """An agent pointed at a company gateway by the base-URL variable of its mode: the gateway is
    its provider, intercepted as the built-in hosts are. Each scenario: a healthy run, then a 529
    and the healthy stream, which curlretry retries (attempts [1, 2] in its log; [] before, a blind
    tunnel, the agent's own retry hiding the 529)."""

    gateway = agent_sandbox.GATEWAY_HOST

    @classmethod
    def setUpClass(cls):
        cls.modules = agent_sandbox.require_agents()
        cls.sandbox = agent_sandbox.Sandbox().start()
        cls.addClassCleanup(cls.sandbox.stop)
        cls.events = cls.sandbox.root / "events.jsonl"
        (cls.sandbox.home / ".gemini").mkdir()
        # Chosen, as the CLI's own dialog leaves it: with GOOGLE_GEMINI_BASE_URL and no choice, Gemini
        # CLI 0.61 picks its "gateway" auth, which its own check then refuses ("Invalid auth method").
        (cls.sandbox.home / ".gemini" / "settings.json").write_text(json.dumps(
            {"privacy": {"usageStatisticsEnabled": False}, "security": {"auth": {"selectedType": "gemini-api-key"}}}))
        # Claude Code's start-up requests to the gateway (settings, policy limits).
        cls.sandbox.arm(cls.gateway, "/api/claude_code/", f"side-{os.getpid()}", "404+close")

    def assertRetriedThroughTheGateway(self, agent: type, env: dict[str, str | None], prefix: str, source: str,
                                       args: list[str] | None = None, good: str | None = None) -> harness.Result:
        """... and the launch's line names the gateway and `source`, the setting it was taken from.
        `good`: the healthy answer's script, when not the agent's own stream."""
        good = good or agent.good
        runtime = {"LD_PRELOAD": harness.PRELOAD_PREFIX} if harness.PRELOAD_PREFIX else {}
        env = {**runtime, "CURLRETRY_LIBRARY": harness.LIB, "CURLRETRY_BASE_MS": harness.FAST_BASE_MS,
               "CURLRETRY_EVENTS": str(self.events), "NODE_EXTRA_CA_CERTS": self.sandbox.cert, **env}
        command = [harness.CURLRETRY_BIN, "--", *(args or agent.command(self.modules))]
        name = f"{self._testMethodName.removeprefix('test_')}-{os.getpid()}"
        self.sandbox.arm(self.gateway, prefix, f"healthy-{name}", good)
        healthy = self.sandbox.run(command, env)
        self.assertEqual(healthy.code, 0, str(healthy))
        self.assertIn(agent.greeting, healthy.stdout, str(healthy))
        self.assertIn(f"(HTTPS_PROXY and the local CA; --no-proxy runs it directly); so do those to the hosts you point "
                      f"it at: {self.gateway} ({source})\n".encode(), healthy.stderr, str(healthy))
        since = self.events.stat().st_size if self.events.exists() else 0
        self.sandbox.arm(self.gateway, prefix, name, f"529,{good}")
        result = self.sandbox.run(command, env)
        self.assertEqual((result.code, result.stdout), (0, healthy.stdout), str(result))
        self.assertEqual(self.sandbox.count(self.gateway, name), 2, str(result))
        lines = self.events.read_bytes()[since:].decode().splitlines() if self.events.exists() else []
        attempts = [e["attempt"] for e in map(json.loads, lines)
                    if e.get("host") == self.gateway and e.get("path", "").startswith(prefix)]
        self.assertEqual(attempts, [1, 2], str(result))
        return healthy

    def test_gemini_cli_through_GOOGLE_GEMINI_BASE_URL(self):
        self.assertRetriedThroughTheGateway(
            test_agents.GeminiCli,
            {"GEMINI_API_KEY": "test-not-a-key", "GEMINI_CLI_TRUST_WORKSPACE": "true",
             "GOOGLE_GEMINI_BASE_URL": f"https://{self.gateway}/gemini"},
            "/gemini/v1beta/models/gemini-2.5-flash:streamGenerateContent", "GOOGLE_GEMINI_BASE_URL")

    def test_gemini_cli_through_GOOGLE_GEMINI_BASE_URL_in_its_env_file(self):
        # Where Gemini CLI's docs put its variables: ~/.gemini/.env, which it loads itself.
        dotenv = self.sandbox.home / ".gemini" / ".env"
        dotenv.write_text(f"# the company gateway\nexport GOOGLE_GEMINI_BASE_URL=https://{self.gateway}/gemini-env  # v1\n")
        self.addCleanup(dotenv.unlink)
        self.assertRetriedThroughTheGateway(
            test_agents.GeminiCli, {"GEMINI_API_KEY": "test-not-a-key", "GEMINI_CLI_TRUST_WORKSPACE": "true"},
            "/gemini-env/v1beta/models/gemini-2.5-flash:streamGenerateContent", f"GOOGLE_GEMINI_BASE_URL in {dotenv}")

    def test_claude_code_on_vertex_through_ANTHROPIC_VERTEX_BASE_URL(self):
        self.assertRetriedThroughTheGateway(
            test_agents.ClaudeCode,
            {"CLAUDE_CODE_USE_VERTEX": "1", "CLAUDE_CODE_SKIP_VERTEX_AUTH": "1",
             "ANTHROPIC_VERTEX_PROJECT_ID": "test-project", "CLOUD_ML_REGION": "us-east5",
             "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "ANTHROPIC_VERTEX_BASE_URL": f"https://{self.gateway}/vertex/v1"},
            "/vertex/v1/projects/test-project/locations/us-east5/publishers/anthropic/models/", "ANTHROPIC_VERTEX_BASE_URL")

    def test_claude_code_on_foundry_through_ANTHROPIC_FOUNDRY_BASE_URL(self):
        self.assertRetriedThroughTheGateway(
            test_agents.ClaudeCode,
            {"CLAUDE_CODE_USE_FOUNDRY": "1", "ANTHROPIC_FOUNDRY_API_KEY": "test-not-a-key",
             "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "ANTHROPIC_FOUNDRY_BASE_URL": f"https://{self.gateway}/foundry"},
            "/foundry/v1/messages", "ANTHROPIC_FOUNDRY_BASE_URL")

    def test_claude_code_on_bedrock_through_a_gateway_that_authenticates_for_it(self):
        # Claude Code's LLM-gateway guide for Bedrock: the gateway holds the AWS credentials and
        # claude sends it unsigned requests (CLAUDE_CODE_SKIP_BEDROCK_AUTH), answered as Bedrock
        # answers, an AWS event stream. Before, the launch said none of them was retried.
        self.sandbox.arm(self.gateway, "/bedrock/inference-profiles", f"profiles-{os.getpid()}", "404+close")
        healthy = self.assertRetriedThroughTheGateway(
            test_agents.ClaudeCode,
            {"CLAUDE_CODE_USE_BEDROCK": "1", "CLAUDE_CODE_SKIP_BEDROCK_AUTH": "1", "AWS_REGION": "us-east-1",
             "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "ANTHROPIC_BEDROCK_BASE_URL": f"https://{self.gateway}/bedrock"},
            "/bedrock/model/", "ANTHROPIC_BEDROCK_BASE_URL",
            good="raw+data=" + urllib.parse.quote(bedrock_stream.response("msg_bedrock"), safe=""))
        self.assertNotIn(b"Amazon Bedrock", healthy.stderr, str(healthy))  # no line saying it is not retried

    def test_pi_through_a_provider_of_its_models_json(self):
        # Pi reads no base-URL variable: a gateway is a provider of ~/.pi/agent/models.json (its
        # `//` comments and trailing commas allowed, as Pi allows them).
        models = self.sandbox.home / ".pi" / "agent" / "models.json"
        models.parent.mkdir(parents=True, exist_ok=True)
        models.write_text('{\n  // the company gateway\n  "providers": {\n    "company": {\n'
                          f'      "baseUrl": "https://{self.gateway}/pi",\n'
                          '      "api": "anthropic-messages", "apiKey": "test-not-a-key",\n'
                          '      "models": [{"id": "claude-sonnet-4-5"},],\n    },\n  },\n}\n')
        self.addCleanup(models.unlink)
        self.assertRetriedThroughTheGateway(
            test_agents.Pi, {}, "/pi/v1/messages", str(models),
            [bin_path(self.modules, "pi"), "-p", "--provider", "company", "--model", "claude-sonnet-4-5",
             "--no-session", "--offline", "Say hello"])

    def test_codex_through_a_provider_of_its_config_toml(self):
        # Codex ignores OPENAI_BASE_URL: a gateway is a provider of ~/.codex/config.toml (declared
        # with supports_websockets = false, for the reason proxy_clients/agents/codex-config.toml
        # gives). Through a blind tunnel (before stop 51) rustls refuses the sandbox upstream's
        # certificate, so there Codex exits 1 rather than passing on its own retries.
        config = self.sandbox.home / ".codex" / "config.toml"
        config.parent.mkdir(exist_ok=True)
        config.write_text('model_provider = "company"\n\n[model_providers.company]\nname = "Company gateway"\n'
                          f'base_url = "https://{self.gateway}/codex/v1"\nenv_key = "COMPANY_API_KEY"\n'
                          'wire_api = "responses"\nsupports_websockets = false\n')
        self.addCleanup(config.unlink)
        self.assertRetriedThroughTheGateway(test_agents.Codex, {"COMPANY_API_KEY": "test-not-a-key"},
                                            "/codex/v1/responses", str(config))

    def test_qwen_code_through_a_provider_of_its_settings(self):
        # Qwen Code's docs declare a gateway as a model of ~/.qwen/settings.json's modelProviders
        # (`/* */` and `//` comments allowed, as qwen strips them).
        settings = self.sandbox.home / ".qwen" / "settings.json"
        settings.parent.mkdir(exist_ok=True)
        models = {"openai": [{"id": "qwen3-coder-plus", "baseUrl": f"https://{self.gateway}/qwen/v1",
                              "envKey": "COMPANY_API_KEY"}]}
        settings.write_text("/* the company gateway */\n" + json.dumps(
            {**test_agents.QwenCode.settings, "modelProviders": models}))
        self.addCleanup(settings.unlink)
        self.assertRetriedThroughTheGateway(test_agents.QwenCode, {"COMPANY_API_KEY": "test-not-a-key"},
                                            "/qwen/v1/chat/completions", str(settings))

    def test_qwen_code_through_OPENAI_BASE_URL_in_its_env_file(self):
        # Its docs' other setup: the variables in ~/.qwen/.env, which qwen loads over unset ones only.
        # Before, the launch handed qwen OPENAI_BASE_URL (the built-in route to api.openai.com),
        # which won over the file's: the request, and the gateway's key, went to api.openai.com.
        (self.sandbox.home / ".qwen").mkdir(exist_ok=True)
        settings = self.sandbox.home / ".qwen" / "settings.json"
        settings.write_text(json.dumps({"security": {"auth": {"selectedType": "openai"}},
                                        "memory": {"enableManagedAutoMemory": False}}))
        self.addCleanup(settings.unlink)
        dotenv = self.sandbox.home / ".qwen" / ".env"
        dotenv.write_text(f"OPENAI_BASE_URL=https://{self.gateway}/qwen-env/v1\nOPENAI_API_KEY=sk-gw-test-not-a-key\n"
                          "OPENAI_MODEL=qwen3-coder-plus\n")
        self.addCleanup(dotenv.unlink)
        self.assertRetriedThroughTheGateway(test_agents.QwenCode, {"BAILIAN_CODING_PLAN_API_KEY": None},
                                            "/qwen-env/v1/chat/completions", f"OPENAI_BASE_URL in {dotenv}")


if __name__ == "__main__":
    unittest.main()
