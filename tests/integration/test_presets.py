"""The provider presets in packaging/examples/: each passes `curlretry check`, and each rule of
each preset is pinned by `curlretry explain --json` with the bodies those APIs really send.

Retry delays are checked against the preset's backoff for attempt 1 (equal jitter: between half
the base and the base), or the server's Retry-After when one is given.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import subprocess
import unittest
from pathlib import Path

import harness

EXAMPLES = harness.REPO / "packaging" / "examples"


@dataclasses.dataclass
class Case:
    label: str
    preset: str
    rule: str
    method: str
    url: str
    status: int
    body: str
    verdict: str                      # "retry" or "give_up"
    reason: str
    headers: tuple[str, ...] = ()
    delay: tuple[int, int] | None = None  # inclusive range for a retry


def anthropic_error(kind: str, message: str, **extra) -> str:
    error = {"type": kind, "message": message, **extra}
    return json.dumps({"type": "error", "error": error, "request_id": "req_011CSHoEeqs5C35K2UUqR7Fy"})


def openai_error(message: str, kind: str, code: str | None) -> str:
    return json.dumps({"error": {"message": message, "type": kind, "param": None, "code": code}})


def zai_error(code: str, message: str) -> str:
    return json.dumps({"error": {"code": code, "message": message}}, ensure_ascii=False)


def gemini_quota(quota_id: str, limit: int) -> str:
    """Gemini's 429, pretty-printed as the API sends it."""
    return json.dumps({"error": {
        "code": 429,
        "message": ("You exceeded your current quota, please check your plan and billing details. For more "
                    "information on this error, head to: https://ai.google.dev/gemini-api/docs/rate-limits.\n"
                    "* Quota exceeded for metric: generativelanguage.googleapis.com/"
                    f"generate_content_free_tier_requests, limit: {limit}, model: gemini-2.0-flash\n"
                    "Please retry in 27.6s."),
        "status": "RESOURCE_EXHAUSTED",
        "details": [
            {"@type": "type.googleapis.com/google.rpc.QuotaFailure",
             "violations": [{"quotaMetric": "generativelanguage.googleapis.com/generate_content_free_tier_requests",
                             "quotaId": quota_id,
                             "quotaDimensions": {"location": "global", "model": "gemini-2.0-flash"},
                             "quotaValue": str(limit)}]},
            {"@type": "type.googleapis.com/google.rpc.Help",
             "links": [{"description": "Learn more about Gemini API quotas",
                        "url": "https://ai.google.dev/gemini-api/docs/rate-limits"}]},
            {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "27s"},
        ]}}, indent=2)


def gemini_error(code: int, status: str, message: str) -> str:
    return json.dumps({"error": {"code": code, "message": message, "status": status}}, indent=2)


def openrouter_error(code: int, message: str, metadata: dict | None = None) -> str:
    return json.dumps({"error": {"message": message, "code": code, "metadata": metadata or {}}})


ANTHROPIC = "https://api.anthropic.com/v1/messages"
OPENAI = "https://api.openai.com/v1/chat/completions"
ZAI_CODING = "https://api.z.ai/api/coding/paas/v4/chat/completions"
ZAI = "https://api.z.ai/api/paas/v4/chat/completions"
BIGMODEL = "https://open.bigmodel.cn/api/paas/v4/chat/completions"
BIGMODEL_CODING = "https://open.bigmodel.cn/api/coding/paas/v4/chat/completions"
GEMINI = "https://generativelanguage.googleapis.com/v1beta/models/gemini-2.0-flash:generateContent"
DEEPSEEK = "https://api.deepseek.com/chat/completions"
OPENROUTER = "https://openrouter.ai/api/v1/chat/completions"

CAPTCHA = '{"code":3007,"msg":"captcha verify failed"}'

CASES = [
    # --- Anthropic ------------------------------------------------------------------------------
    Case("529 overloaded", "anthropic", "anthropic", "POST", ANTHROPIC, 529,
         anthropic_error("overloaded_error", "Overloaded"), "retry", "status:529", delay=(1000, 2000)),
    Case("429 per-minute rate limit, server wait honoured", "anthropic", "anthropic", "POST", ANTHROPIC, 429,
         anthropic_error("rate_limit_error",
                         "This request would exceed the rate limit for your organization of 50,000 input tokens "
                         "per minute. For details, refer to: https://docs.claude.com/en/api/rate-limits. Please "
                         "reduce the prompt length or the maximum tokens requested, or try again later."),
         "retry", "status:429", headers=("retry-after: 20",), delay=(20000, 20000)),
    Case("429 monthly spend limit of the tier", "anthropic", "anthropic", "POST", ANTHROPIC, 429,
         anthropic_error("rate_limit_error",
                         "This request would exceed your account's monthly spend limit. Please try again later.",
                         details={"error_code": "enforced_spend_limit_reached"}),
         "give_up", "permanent-code:enforced_spend_limit_reached"),
    Case("429 spend limit without details still permanent", "anthropic", "anthropic", "POST", ANTHROPIC, 429,
         anthropic_error("rate_limit_error",
                         "This request would exceed your account's monthly spend limit. Please try again later."),
         "give_up", "permanent:spend limit"),
    Case("400 own spend limit", "anthropic", "anthropic", "POST", ANTHROPIC, 400,
         anthropic_error("invalid_request_error",
                         "You have reached your specified API usage limits. You will regain access on "
                         "2026-09-01 at 00:00 UTC."),
         "give_up", "permanent-code:invalid_request_error"),
    Case("400 credit balance too low (billing)", "anthropic", "anthropic", "POST", ANTHROPIC, 400,
         anthropic_error("invalid_request_error",
                         "Your credit balance is too low to access the Anthropic API. Please go to Plans & "
                         "Billing to upgrade or purchase credits."),
         "give_up", "permanent-code:invalid_request_error"),
    Case("402 billing_error", "anthropic", "anthropic", "POST", ANTHROPIC, 402,
         anthropic_error("billing_error", "There is an issue with your payment method."),
         "give_up", "permanent-code:billing_error"),
    Case("500 api_error", "anthropic", "anthropic", "POST", ANTHROPIC, 500,
         anthropic_error("api_error", "Internal server error"), "retry", "status:500", delay=(1000, 2000)),
    Case("x-should-retry: false wins over 529", "anthropic", "anthropic", "POST", ANTHROPIC, 529,
         anthropic_error("overloaded_error", "Overloaded"), "give_up", "should-retry:false",
         headers=("x-should-retry: false",)),
    Case("other hosts keep the defaults", "anthropic", "defaults", "POST", "https://api.example.com/v1/x", 402,
         anthropic_error("billing_error", "x"), "give_up", "permanent:billing"),

    # --- OpenAI ---------------------------------------------------------------------------------
    Case("429 rate_limit_exceeded per minute", "openai", "openai", "POST", OPENAI, 429,
         openai_error("Rate limit reached for gpt-4o in organization org-abc123 on tokens per min (TPM): Limit "
                      "30000, Used 29870, Requested 1523. Please try again in 2.786s. Visit "
                      "https://platform.openai.com/account/rate-limits to learn more.", "tokens",
                      "rate_limit_exceeded"),
         "retry", "status:429", delay=(500, 1000)),
    Case("429 rate_limit_exceeded per day", "openai", "openai", "POST", OPENAI, 429,
         openai_error("Rate limit reached for gpt-4o-mini in organization org-abc123 on requests per day (RPD): "
                      "Limit 10000, Used 10000, Requested 1. Please try again in 8.64s. Visit "
                      "https://platform.openai.com/account/rate-limits to learn more.", "requests",
                      "rate_limit_exceeded"),
         "give_up", "permanent:per day"),
    Case("429 insufficient_quota", "openai", "openai", "POST", OPENAI, 429,
         openai_error("You exceeded your current quota, please check your plan and billing details. For more "
                      "information on this error, read the docs: "
                      "https://platform.openai.com/docs/guides/error-codes/api-errors.", "insufficient_quota",
                      "insufficient_quota"),
         "give_up", "permanent-code:insufficient_quota"),
    Case("503 engine overloaded", "openai", "openai", "POST", OPENAI, 503,
         openai_error("The engine is currently overloaded, please try again later", "server_error", None),
         "retry", "status:503", delay=(500, 1000)),
    Case("400 context_length_exceeded", "openai", "openai", "POST", OPENAI, 400,
         openai_error("This model's maximum context length is 128000 tokens. However, your messages resulted in "
                      "131042 tokens. Please reduce the length of the messages.", "invalid_request_error",
                      "context_length_exceeded"),
         "give_up", "permanent-code:context_length_exceeded"),

    # --- z.ai (api.z.ai, coding plan included) ----------------------------------------------------
    Case("3007 captcha on the coding plan", "zai", "zai", "POST", ZAI_CODING, 400, CAPTCHA,
         "retry", "code:3007", delay=(1000, 2000)),
    Case("1302 concurrency", "zai", "zai", "POST", ZAI_CODING, 429,
         zai_error("1302", "High concurrency usage of this API, please reduce concurrency or contact customer "
                           "service to increase limits"),
         "retry", "code:1302", delay=(1000, 2000)),
    Case("1305 overloaded", "zai", "zai", "POST", ZAI, 429,
         zai_error("1305", "The service may be temporarily overloaded, please try again later"),
         "retry", "code:1305"),
    Case("1113 arrears, despite 'try again'", "zai", "zai", "POST", ZAI, 429,
         zai_error("1113", "Your account is in arrears, please recharge and try again"),
         "give_up", "permanent-code:1113"),
    Case("1304 daily call limit", "zai", "zai", "POST", ZAI, 429,
         zai_error("1304", "The daily call limit for this API has been reached, please try again tomorrow"),
         "give_up", "permanent-code:1304"),
    Case("1308 coding plan usage limit", "zai", "zai", "POST", ZAI_CODING, 429,
         zai_error("1308", "Usage limit reached for 5 hour. Your limit will reset at 2025-08-18 15:48:46"),
         "give_up", "permanent-code:1308"),
    Case("1309 coding plan expired", "zai", "zai", "POST", ZAI_CODING, 429,
         zai_error("1309", "Your GLM Coding Plan package has expired, please renew to restore access"),
         "give_up", "permanent-code:1309"),
    Case("1310 weekly/monthly limit", "zai", "zai", "POST", ZAI_CODING, 429,
         zai_error("1310", "Weekly/Monthly Limit Exhausted. Your limit will reset at 2025-09-01 00:00:00"),
         "give_up", "permanent-code:1310"),

    # --- z.ai (open.bigmodel.cn) -------------------------------------------------------------------
    Case("bigmodel 3007 captcha", "zai", "bigmodel", "POST", BIGMODEL, 400, CAPTCHA, "retry", "code:3007"),
    Case("bigmodel 1302 concurrency", "zai", "bigmodel", "POST", BIGMODEL_CODING, 429,
         zai_error("1302", "您当前使用该API的并发数过高，请降低并发，或联系客服增加限额。"),
         "retry", "code:1302"),
    Case("bigmodel 1305 overloaded", "zai", "bigmodel", "POST", BIGMODEL, 429,
         zai_error("1305", "当前API请求过多，请稍后重试。"), "retry", "code:1305"),
    Case("bigmodel 1113 balance", "zai", "bigmodel", "POST", BIGMODEL, 429,
         zai_error("1113", "余额不足或无可用资源包,请充值。"), "give_up", "permanent-code:1113"),
    Case("bigmodel 1304 daily limit", "zai", "bigmodel", "POST", BIGMODEL, 429,
         zai_error("1304", "该模型已达到当日调用次数限额。"), "give_up", "permanent-code:1304"),
    Case("bigmodel 1308 coding plan limit", "zai", "bigmodel", "POST", BIGMODEL_CODING, 429,
         zai_error("1308", "已达到 5 小时的使用上限。您的限额将在 2025-08-18 15:48:46 重置。"),
         "give_up", "permanent-code:1308"),
    Case("bigmodel 1309 expired", "zai", "bigmodel", "POST", BIGMODEL_CODING, 429,
         zai_error("1309", "您的 GLM Coding Plan 套餐已到期"), "give_up", "permanent-code:1309"),
    Case("bigmodel 1310 weekly limit", "zai", "bigmodel", "POST", BIGMODEL_CODING, 429,
         zai_error("1310", "已达到每周/每月使用上限"), "give_up", "permanent-code:1310"),

    # --- Gemini ---------------------------------------------------------------------------------
    Case("429 per-minute quota", "gemini", "gemini", "POST", GEMINI, 429,
         gemini_quota("GenerateRequestsPerMinutePerProjectPerModel-FreeTier", 15),
         "retry", "code:RESOURCE_EXHAUSTED", delay=(27000, 27000)),  # RetryInfo's 27s, the server's own wait
    Case("429 per-day quota", "gemini", "gemini", "POST", GEMINI, 429,
         gemini_quota("GenerateRequestsPerDayPerProjectPerModel-FreeTier", 1500),
         "give_up", "permanent-code:RESOURCE_EXHAUSTED"),
    Case("503 model overloaded", "gemini", "gemini", "POST", GEMINI, 503,
         gemini_error(503, "UNAVAILABLE", "The model is overloaded. Please try again later."),
         "retry", "code:UNAVAILABLE", delay=(5000, 10000)),
    Case("400 location not supported", "gemini", "gemini", "POST", GEMINI, 400,
         gemini_error(400, "FAILED_PRECONDITION", "User location is not supported for the API use."),
         "give_up", "permanent-code:FAILED_PRECONDITION"),

    # --- DeepSeek -------------------------------------------------------------------------------
    Case("402 insufficient balance", "deepseek", "deepseek", "POST", DEEPSEEK, 402,
         openai_error("Insufficient Balance", "unknown_error", "invalid_request_error"),
         "give_up", "permanent:insufficient balance"),
    Case("503 server overloaded", "deepseek", "deepseek", "POST", DEEPSEEK, 503,
         openai_error("Server overloaded, please try again later.", "server_error", None),
         "retry", "status:503", delay=(1000, 2000)),
    Case("429 rate limit reached", "deepseek", "deepseek", "POST", DEEPSEEK, 429,
         openai_error("Rate Limit Reached", "rate_limit_error", None), "retry", "status:429"),

    # --- OpenRouter -----------------------------------------------------------------------------
    Case("402 not enough credits", "openrouter", "openrouter", "POST", OPENROUTER, 402,
         openrouter_error(402, "This request requires more credits, or fewer max_tokens. You requested up to "
                               "4096 tokens, but can only afford 1000. To increase, visit "
                               "https://openrouter.ai/settings/credits and upgrade to a paid account"),
         "give_up", "permanent-code:402"),
    Case("429 free models per day", "openrouter", "openrouter", "POST", OPENROUTER, 429,
         openrouter_error(429, "Rate limit exceeded: free-models-per-day. Add 10 credits to unlock 1000 free "
                               "model requests per day",
                          {"headers": {"X-RateLimit-Limit": "50", "X-RateLimit-Remaining": "0",
                                       "X-RateLimit-Reset": "1741305600000"}, "provider_name": None}),
         "give_up", "permanent:per-day"),
    Case("429 free models per minute", "openrouter", "openrouter", "POST", OPENROUTER, 429,
         openrouter_error(429, "Rate limit exceeded: free-models-per-min. ",
                          {"headers": {"X-RateLimit-Limit": "20", "X-RateLimit-Remaining": "0"}}),
         "retry", "status:429", delay=(1000, 2000)),
    Case("429 upstream provider rate-limited", "openrouter", "openrouter", "POST", OPENROUTER, 429,
         openrouter_error(429, "Provider returned error",
                          {"raw": "google/gemini-2.0-flash-exp:free is temporarily rate-limited upstream. Please "
                                  "retry shortly, or add your own key to accumulate your rate limits: "
                                  "https://openrouter.ai/settings/integrations",
                           "provider_name": "Google AI Studio"}),
         "retry", "status:429"),
    Case("502 provider down", "openrouter", "openrouter", "POST", OPENROUTER, 502,
         openrouter_error(502, "Provider returned error", {"provider_name": "Together"}), "retry", "status:502"),
    Case("503 no provider available", "openrouter", "openrouter", "POST", OPENROUTER, 503,
         openrouter_error(503, "No instances available"), "retry", "status:503"),
    Case("403 moderation", "openrouter", "openrouter", "POST", OPENROUTER, 403,
         openrouter_error(403, "Your chosen model requires moderation and your input was flagged",
                          {"reasons": ["violence"], "flagged_input": "..."}),
         "give_up", "permanent-code:403"),
]


def curlretry(*args: str, input: bytes | None = None) -> subprocess.CompletedProcess:
    if not harness.CURLRETRY_BIN:
        raise unittest.SkipTest("CURLRETRY_BIN is not set: run through ctest")
    env = harness.environment(preload=False)
    return subprocess.run([harness.CURLRETRY_BIN, *args], env=env, capture_output=True, timeout=30,
                          input=input, stdin=None if input is not None else subprocess.DEVNULL)


def presets() -> list[Path]:
    return sorted(EXAMPLES.glob("*.yaml"))


def rule_names(preset: Path) -> list[str]:
    out = curlretry("check", "--config", str(preset)).stdout.decode()
    return re.findall(r'^rule "([^"]+)"', out, re.M)


class Presets(unittest.TestCase):
    def test_the_six_providers_have_a_preset(self):
        self.assertEqual([p.stem for p in presets()],
                         ["anthropic", "deepseek", "gemini", "openai", "openrouter", "zai"])

    def test_each_preset_passes_check_without_warnings(self):
        for preset in presets():
            with self.subTest(preset.name):
                r = curlretry("check", "--config", str(preset))
                self.assertEqual(r.returncode, 0, r.stderr.decode())
                self.assertEqual(r.stderr, b"")
                self.assertNotIn(b"warnings:", r.stdout)
                self.assertRegex(r.stdout.decode(), r"\nOK: \d+ rules?\n$")

    def test_presets_hold_only_rules_so_they_can_be_combined(self):
        for preset in presets():
            with self.subTest(preset.name):
                r = curlretry("check", "--config", str(preset))
                self.assertNotRegex(r.stdout.decode().split("\nrule ")[0], r"\S+:\d+:\d+",
                                    "a preset must not change defaults: or settings:")

    def test_every_rule_of_every_preset_is_pinned_below(self):
        pinned = {(c.preset, c.rule) for c in CASES}
        for preset in presets():
            for rule in rule_names(preset):
                with self.subTest(preset=preset.name, rule=rule):
                    self.assertIn((preset.stem, rule), pinned)

    def test_explain(self):
        for case in CASES:
            with self.subTest(f"{case.preset}: {case.label}"):
                args = ["explain", "--json", "--config", str(EXAMPLES / f"{case.preset}.yaml"),
                        case.method, case.url, "--status", str(case.status), "--body", "@-"]
                for header in case.headers:
                    args += ["--header", header]
                r = curlretry(*args, input=case.body.encode())
                self.assertEqual(r.returncode, 0 if case.verdict == "retry" else 1, r.stderr.decode())
                got = json.loads(r.stdout)
                self.assertEqual((got["rule"], got["verdict"], got["reason"]),
                                 (case.rule, case.verdict, case.reason), got)
                if case.verdict == "retry" and case.delay:
                    low, high = case.delay
                    self.assertTrue(low <= got["delay_ms"] <= high, f"delay {got['delay_ms']} not in {case.delay}")


if __name__ == "__main__":
    unittest.main()
