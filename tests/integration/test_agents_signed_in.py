"""test_agents.py's scenarios with the agents as their users sign in rather than set a key, the way
most people run them: Gemini CLI with Google (Code Assist, cloudcode-pa.googleapis.com), Gemini
CLI and Claude Code on Vertex AI (aiplatform.googleapis.com and a region's host), Codex with
ChatGPT (chatgpt.com, intercepted when the user's config says so). curlretry intercepts the first
three since stop 50; before, each went through a blind tunnel: the agent's own retries only, and
the attempt log empty. Real CLIs from npm in the agents' sandbox, as test_agents.py runs them;
the sandbox's upstream also answers the sign-in checks they make first (Sandbox.arm_json). Where
curlretry leaves the host to the config (Claude Code on Bedrock, Pi signed in with ChatGPT or GitHub
Copilot), the launch's line saying so.
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import time
import unittest

import agent_sandbox
import harness
import test_agents  # its agent classes by the module's name only: imported names would run again here
from test_agents import AgentScenarios

CLIENTS = agent_sandbox.CLIENTS_DIR


def same_agent(agent: type) -> type:
    """AgentScenarios for `agent` of test_agents.py (its command and streams) in another of its
    modes: a subclass names the host and path, and how the agent is set up."""

    class Scenarios(AgentScenarios):
        good = agent.good
        overload = agent.overload

        @classmethod
        def command(cls, modules):
            return agent.command(modules)

    return Scenarios


class GeminiCliSignedIn(same_agent(test_agents.GeminiCli), unittest.TestCase):
    """Gemini CLI with "Login with Google" (its oauth-personal auth, what it offers first): the
    model is reached through Code Assist, cloudcode-pa.googleapis.com, not the Gemini API."""

    host = "cloudcode-pa.googleapis.com"
    prefix = "/v1internal:streamGenerateContent"
    good = "sse-code-assist-good"
    # Google's in-band error as its Gemini API streams it; Code Assist documents none of its own.
    overload = "sse-gemini-overload"
    side_paths = ("/v1internal:",)  # retrieveUserQuota, listExperiments

    @classmethod
    def agent_env(cls):
        # The user's token is checked at oauth2.googleapis.com (the sandbox's upstream, through a
        # blind tunnel): the agent trusts it as it would trust Google (and so reaches Code Assist
        # through a blind tunnel too, as before stop 50, where these tests fail on the attempt log).
        return {"GEMINI_API_KEY": None, "GEMINI_CLI_TRUST_WORKSPACE": "true", "NODE_EXTRA_CA_CERTS": cls.sandbox.cert}

    @classmethod
    def prepare_home(cls, home):
        (home / ".gemini").mkdir()
        (home / ".gemini" / "settings.json").write_text(json.dumps(
            {"privacy": {"usageStatisticsEnabled": False}, "security": {"auth": {"selectedType": "oauth-personal"}}}))
        # What its sign-in leaves (~/.gemini/oauth_creds.json), valid for the next hour.
        (home / ".gemini" / "oauth_creds.json").write_text(json.dumps(
            {"access_token": "ya29.test-not-a-token", "refresh_token": "1//test-not-a-token", "token_type": "Bearer",
             "scope": "https://www.googleapis.com/auth/cloud-platform", "expiry_date": int(time.time() + 3600) * 1000}))

    @classmethod
    def arm_sign_in(cls):
        pid = os.getpid()
        cls.sandbox.arm_json("oauth2.googleapis.com", "/tokeninfo", f"token-{pid}",
                             {"aud": "test", "scope": "https://www.googleapis.com/auth/cloud-platform", "expires_in": 3500})
        cls.sandbox.arm_json(cls.host, "/v1internal:loadCodeAssist", f"load-{pid}",
                             {"currentTier": {"id": "free-tier"}, "cloudaicompanionProject": "test-project"})


class GeminiCliOnVertex(same_agent(test_agents.GeminiCli), unittest.TestCase):
    """Gemini CLI on Vertex AI with an API key (GOOGLE_GENAI_USE_VERTEXAI, Vertex's express mode):
    the model is reached at the global aiplatform.googleapis.com."""

    host = "aiplatform.googleapis.com"
    prefix = "/v1beta1/publishers/google/models/gemini-2.5-flash:streamGenerateContent"

    @classmethod
    def agent_env(cls):
        # The CA: as GeminiCliSignedIn's.
        return {"GEMINI_API_KEY": None, "GOOGLE_GENAI_USE_VERTEXAI": "true", "GOOGLE_API_KEY": "test-not-a-key",
                "GEMINI_CLI_TRUST_WORKSPACE": "true", "NODE_EXTRA_CA_CERTS": cls.sandbox.cert}

    @classmethod
    def prepare_home(cls, home):
        (home / ".gemini").mkdir()
        (home / ".gemini" / "settings.json").write_text(json.dumps(
            {"privacy": {"usageStatisticsEnabled": False}, "security": {"auth": {"selectedType": "vertex-ai"}}}))


class CodexSignedIn(same_agent(test_agents.Codex), unittest.TestCase):
    """Codex with "Sign in with ChatGPT" (what it offers first): the model is reached through
    chatgpt.com/backend-api/codex, not api.openai.com. curlretry intercepts it only when told
    (proxy/codex_auth.h says why), as this user's config does; without it the launch says so."""

    host = "chatgpt.com"
    prefix = "/backend-api/codex/responses"
    side_paths = ("/backend-api/",)  # its plugins, models, settings, MCP and analytics requests

    @classmethod
    def agent_env(cls):
        # Not reachable through a blind tunnel here, unlike the real chatgpt.com: rustls refuses
        # the sandbox upstream's certificate (a CA serving as its own leaf), so before stop 50
        # these runs exit 1 rather than pass on Codex's own retries.
        return {"OPENAI_API_KEY": None, "CODEX_API_KEY": None, "CURLRETRY_CONFIG": str(cls.sandbox.home / "chatgpt.yaml")}

    @classmethod
    def prepare_home(cls, home):
        # What its sign-in leaves (~/.codex/auth.json): tokens Codex reads the account from.
        now = int(time.time())
        claims = {"https://api.openai.com/auth": {"chatgpt_plan_type": "plus", "chatgpt_account_id": "acct-test",
                                                  "chatgpt_user_id": "user-test", "user_id": "user-test"},
                  "email": "user@example.com", "iat": now, "exp": now + 3600}
        (home / ".codex").mkdir()
        (home / ".codex" / "auth.json").write_text(json.dumps({"OPENAI_API_KEY": None, "last_refresh": time.strftime(
            "%Y-%m-%dT%H:%M:%SZ", time.gmtime(now)), "tokens": {"id_token": unsigned_jwt(claims), "access_token":
            unsigned_jwt(claims), "refresh_token": "rt-test-not-a-token", "account_id": "acct-test"}}))
        shutil.copy(CLIENTS / "agents" / "codex-chatgpt-config.toml", home / ".codex" / "config.toml")
        # What the launch's line tells the user to do.
        (home / "chatgpt.yaml").write_text("version: 1\nproxy:\n  intercept: [chatgpt.com]\n")

    @classmethod
    def arm_sign_in(cls):
        cls.sandbox.arm_json(cls.host, "/backend-api/wham/accounts/check", f"accounts-{os.getpid()}", {
            "accounts": [{"id": "acct-test", "account_id": "acct-test", "plan_type": "plus", "structure": "personal",
                          "workspace_backend_origin": "https://chatgpt.com", "account_routing_override": "NO_CONSTRAINT"}],
            "account_ordering": ["acct-test"]})


    def test_without_chatgpt_in_the_config_the_launch_says_none_of_its_requests_is_retried(self):
        result = self.sandbox.run([harness.CURLRETRY_BIN, "--", *self.command(self.modules)[:1], "--version"],
                                  {**self.agent_env(), "CURLRETRY_CONFIG": None})
        self.assertEqual(result.code, 0, str(result))
        line = (f"curlretry: proxy: codex is signed in with ChatGPT ({self.sandbox.home}/.codex/auth.json): its model "
                "requests go to chatgpt.com, which curlretry does not intercept unless told (its Cloudflare may refuse "
                "a client other than Codex itself), so none of them is retried; to retry them, add chatgpt.com to "
                "proxy.intercept in your config\n")
        self.assertEqual(result.stderr.decode().count(line), 1, str(result))
        # Told, it says nothing of it (every other scenario here runs with chatgpt.com in the config).
        self.assertNotIn(b"signed in with ChatGPT", self.healthy.stderr, str(self.healthy))

    def test_its_plans_usage_limit_is_given_to_it_at_once(self):
        # A ChatGPT plan's limit resets in hours: retrying it only delays Codex's own message.
        key = self.key()
        since = self.events_size()
        limit = {"error": {"type": "usage_limit_reached", "message": "The usage limit has been reached",
                           "plan_type": "plus", "resets_at": int(time.time()) + 7200}}
        self.sandbox.arm_json(self.host, self.prefix, key, limit, "429 Too Many Requests")
        result = self._launch(key, None)
        self.assertNotEqual(result.code, 0, str(result))
        self.assertEqual(self.sandbox.count(self.host, key), 1, f"requests upstream\n{result}")
        self.assertEqual([(e["attempt"], e["status"], e["verdict"], e["reason"]) for e in self.completion_events(since)],
                         [(1, 429, "give_up", "permanent:usage_limit_reached")], str(result))


def unsigned_jwt(claims: dict) -> str:
    def part(value: dict) -> str:
        return base64.urlsafe_b64encode(json.dumps(value).encode()).rstrip(b"=").decode()
    return f"{part({'alg': 'RS256', 'typ': 'JWT'})}.{part(claims)}.c2lnbmF0dXJl"


class ClaudeCodeOnVertex(same_agent(test_agents.ClaudeCode), unittest.TestCase):
    """Claude Code on Google Cloud's Vertex AI (CLAUDE_CODE_USE_VERTEX=1): the model is reached at
    REGION-aiplatform.googleapis.com."""

    host = "us-east5-aiplatform.googleapis.com"
    prefix = "/v1/projects/test-project/locations/us-east5/publishers/anthropic/models/"

    @classmethod
    def agent_env(cls):
        # CLAUDE_CODE_SKIP_VERTEX_AUTH: Claude Code's documented switch for a gateway that signs
        # requests itself; it spares the test Google's token service. The CA: as GeminiCliSignedIn's.
        return {"ANTHROPIC_API_KEY": None, "CLAUDE_CODE_USE_VERTEX": "1", "CLAUDE_CODE_SKIP_VERTEX_AUTH": "1",
                "ANTHROPIC_VERTEX_PROJECT_ID": "test-project", "CLOUD_ML_REGION": "us-east5",
                "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "NODE_EXTRA_CA_CERTS": cls.sandbox.cert}


class ClaudeCodeOnBedrock(unittest.TestCase):
    """Claude Code on Amazon Bedrock (CLAUDE_CODE_USE_BEDROCK) is not intercepted unless the config
    says so (docs/PROXY.md: its requests are signed over their headers): the launch says that none
    of its requests is retried, and how to have them retried, rather than nothing."""

    @classmethod
    def setUpClass(cls):
        cls.modules = agent_sandbox.require_agents()
        cls.sandbox = agent_sandbox.Sandbox().start()
        cls.addClassCleanup(cls.sandbox.stop)

    def launch(self, extra: dict[str, str]) -> harness.Result:
        # --version: what the launcher says comes before claude runs.
        return self.sandbox.run([harness.CURLRETRY_BIN, "--", agent_sandbox.bin_path(self.modules, "claude"), "--version"],
                                {"CLAUDE_CODE_USE_BEDROCK": "1", "AWS_REGION": "eu-west-3", **extra})

    def test_the_launch_says_none_of_its_requests_is_retried(self):
        result = self.launch({})
        self.assertEqual(result.code, 0, str(result))
        line = ("curlretry: proxy: claude uses Amazon Bedrock (CLAUDE_CODE_USE_BEDROCK): its requests go to "
                "bedrock-runtime.eu-west-3.amazonaws.com, which curlretry does not intercept unless told (they are "
                "signed over their headers), so none of them is retried; to retry them, add "
                "bedrock-runtime.*.amazonaws.com to proxy.intercept in your config\n")
        self.assertEqual(result.stderr.decode().count(line), 1, str(result))

    def test_told_to_intercept_it_the_launch_says_nothing_of_it(self):
        config = self.sandbox.home / "bedrock.yaml"
        config.write_text("version: 1\nproxy:\n  intercept: [bedrock-runtime.*.amazonaws.com]\n")
        result = self.launch({"CURLRETRY_CONFIG": str(config)})
        self.assertEqual(result.code, 0, str(result))
        self.assertNotIn(b"Bedrock", result.stderr, str(result))


class PiSignedIn(unittest.TestCase):
    """Pi signed in to a subscription whose host curlretry leaves to the config (its /login's
    "ChatGPT Plus/Pro (Codex)" and "GitHub Copilot", proxy/pi_auth.h): the launch says, once for
    each, that none of that provider's requests is retried, and how to have them retried, rather
    than nothing."""

    @classmethod
    def setUpClass(cls):
        cls.modules = agent_sandbox.require_agents()
        cls.sandbox = agent_sandbox.Sandbox().start()
        cls.addClassCleanup(cls.sandbox.stop)
        # What its /login leaves (~/.pi/agent/auth.json), beside a key of another provider.
        cls.auth = cls.sandbox.home / ".pi" / "agent" / "auth.json"
        cls.auth.parent.mkdir(parents=True)
        cls.auth.write_text(json.dumps({
            "anthropic": {"type": "api_key", "key": "sk-ant-test-not-a-key"},
            "openai-codex": {"type": "oauth", "access": "not-a-token", "refresh": "rt-test", "expires": 0},
            "github-copilot": {"type": "oauth", "access": "tid=1;proxy-ep=proxy.individual.githubcopilot.com",
                               "refresh": "gho_test", "expires": 0}}))

    def launch(self, extra: dict[str, str]) -> harness.Result:
        # --version: what the launcher says comes before pi runs.
        return self.sandbox.run([harness.CURLRETRY_BIN, "--", agent_sandbox.bin_path(self.modules, "pi"), "--version"],
                                extra)

    def test_the_launch_says_none_of_their_requests_is_retried(self):
        result = self.launch({})
        self.assertEqual(result.code, 0, str(result))
        for line in (f"curlretry: proxy: pi is signed in with ChatGPT ({self.auth}): its requests on that provider "
                     "(openai-codex) go to chatgpt.com, which curlretry does not intercept unless told (its Cloudflare "
                     "may refuse a client other than Codex itself), so none of them is retried; to retry them, add "
                     "chatgpt.com to proxy.intercept in your config\n",
                     f"curlretry: proxy: pi is signed in with GitHub Copilot ({self.auth}): its requests on that provider "
                     "(github-copilot) go to api.*.githubcopilot.com, which curlretry does not intercept unless told "
                     "(curlretry has not been tried with Copilot's service), so none of them is retried; to retry them, "
                     "add *.githubcopilot.com to proxy.intercept in your config\n"):
            self.assertEqual(result.stderr.decode().count(line), 1, str(result))

    def test_told_to_intercept_them_the_launch_says_nothing_of_them(self):
        config = self.sandbox.home / "subscriptions.yaml"
        config.write_text("version: 1\nproxy:\n  intercept: [chatgpt.com, '*.githubcopilot.com']\n")
        result = self.launch({"CURLRETRY_CONFIG": str(config)})
        self.assertEqual(result.code, 0, str(result))
        self.assertNotIn(b"signed in with", result.stderr, str(result))


class PiSignedInWithChatGPT(AgentScenarios, unittest.TestCase):
    """Pi signed in with ChatGPT (its /login's "ChatGPT Plus/Pro (Codex)", provider openai-codex),
    with chatgpt.com in the config as PiSignedIn's line tells the user to put it: its requests to
    chatgpt.com/backend-api/codex are retried as any provider's, under Pi's own Node client (its
    WebSocket transport falls back to these POSTs where Node has no WebSocket, as Node 20 here)."""

    host = "chatgpt.com"
    prefix = "/backend-api/codex/responses"
    good = "sse-oai-responses-good"
    overload = "sse-oai-responses-overload"

    @classmethod
    def command(cls, modules):
        return [agent_sandbox.bin_path(modules, "pi"), "-p", "--provider", "openai-codex", "--model", "gpt-5.1-codex",
                "--no-session", "--offline", "Say hello"]

    @classmethod
    def agent_env(cls):
        return {"CURLRETRY_CONFIG": str(cls.sandbox.home / "chatgpt.yaml")}

    @classmethod
    def prepare_home(cls, home):
        # What its /login leaves: an access token (a JWT Pi reads the account from), valid for an hour.
        now = int(time.time())
        claims = {"https://api.openai.com/auth": {"chatgpt_plan_type": "plus", "chatgpt_account_id": "acct-test"},
                  "iat": now, "exp": now + 3600}
        (home / ".pi" / "agent").mkdir(parents=True)
        (home / ".pi" / "agent" / "auth.json").write_text(json.dumps({"openai-codex": {
            "type": "oauth", "access": unsigned_jwt(claims), "refresh": "rt-test-not-a-token",
            "expires": (now + 3600) * 1000, "accountId": "acct-test"}}))
        (home / "chatgpt.yaml").write_text("version: 1\nproxy:\n  intercept: [chatgpt.com]\n")
