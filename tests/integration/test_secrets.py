"""Secrets never reach curlretry's output (issue 5, item 6; DESIGN.md §3.10).

Real curl sends every kind of secret a request carries: Authorization (Bearer, and Basic from
-u), Proxy-Authorization, x-api-key, api-key, cookies, userinfo in the URL, a query string, a
fragment, a request body. It does so for transfers that are retried and that are given up, one
at a time (easy interface) and with --parallel (multi interface), at every log level and with
every destination: stderr, CURLRETRY_LOG_FILE, and the attempt log CURLRETRY_EVENTS. No sentinel
value may appear in any of them. Every sentinel is plain alphanumerics, so its percent-encoded
and base64-free forms are the same bytes; Basic credentials are also checked base64-encoded.
"""

import base64
import itertools
import unittest

import harness
from harness import curl, ok_body, overloaded_body

LEVELS = ("debug", "info", "warn", "error")

BEARER = "SntlBearer7c1f"
BASIC_USER, BASIC_PASS = "SntlBasicUser3a9", "SntlBasicPass5e2"
PROXY = "SntlProxyAuth8d4"
X_API_KEY = "SntlXApiKey2b6"
API_KEY = "SntlApiKey9f0"
COOKIE = "SntlCookie4e7"
URL_USER, URL_PASS = "SntlUrlUser1d3", "SntlUrlPass6c8"
QUERY_KEY, QUERY_VALUE = "SntlQueryKey0a5", "SntlQueryValue7b2"
FRAGMENT = "SntlFragment5f1"
BODY = "SntlRequestBody3e9"

SENTINELS = [s.encode() for s in (BEARER, BASIC_USER, BASIC_PASS, PROXY, X_API_KEY, API_KEY, COOKIE,
                                  URL_USER, URL_PASS, QUERY_KEY, QUERY_VALUE, FRAGMENT, BODY)]
SENTINELS.append(base64.b64encode(f"{BASIC_USER}:{BASIC_PASS}".encode()))
SENTINELS.append(base64.b64encode(f"{URL_USER}:{URL_PASS}".encode()))

SECRET_ARGS = [
    "-H", f"Authorization: Bearer {BEARER}",
    "-H", f"Proxy-Authorization: Basic {PROXY}",
    "-H", f"x-api-key: {X_API_KEY}",
    "-H", f"api-key: {API_KEY}",
    "-b", f"session={COOKIE}",
    "--data-binary", f"secret={BODY}",
]

# (label, script, whether the preload retries it, the last attempt's number)
TRANSFERS = (
    ("retried", "503,503,200", 3),
    ("given-up", "503", 3),            # 503 forever: 3 attempts (built-in), then the 503
    ("transport", "reset,200", 2),
    ("captcha", "captcha,200", 2),
    ("plain-400", "400", 1),           # not retried at all
    ("too-long", "503+ra=99999,200", 1),  # a server wait over max_retry_after: given up at once
)


class Secrets(harness.UpstreamTestCase):
    def urls(self, tag: str) -> list[tuple[str, str, int]]:
        out = []
        for label, script, attempts in TRANSFERS:
            k = self.key(f"{tag}-{label}")
            url = (f"http://{URL_USER}:{URL_PASS}@127.0.0.1:{self.plain.port}/s/{k}/{script}"
                   f"?{QUERY_KEY}={QUERY_VALUE}#{FRAGMENT}")
            out.append((k, url, attempts))
        return out

    def run_curl(self, level: str, destination: str, parallel: bool):
        tag = f"{level}-{destination}-{'multi' if parallel else 'easy'}"
        transfers = self.urls(tag)
        d = self.temp_dir()
        log_file, events_file = d / "curlretry.log", d / "events.jsonl"
        env = {"CURLRETRY_LOG": level, "CURLRETRY_EVENTS": str(events_file)}
        if destination == "file":
            env["CURLRETRY_LOG_FILE"] = str(log_file)
        args = ["-sS", "-u", f"{BASIC_USER}:{BASIC_PASS}", *SECRET_ARGS]
        if parallel:
            args += ["--parallel", "--parallel-max", "6"]
        for _, url, _ in transfers:
            args += ["-o", "/dev/null", url]
        r = curl(args, preload=True, env=env, timeout=60)
        outputs = {"stderr": r.stderr,
                   "log file": log_file.read_bytes() if log_file.exists() else b"",
                   "events file": events_file.read_bytes() if events_file.exists() else b""}
        return transfers, r, outputs

    def test_no_secret_in_any_output_at_any_level_in_any_destination(self):
        for level, destination, parallel in itertools.product(LEVELS, ("stderr", "file"), (False, True)):
            with self.subTest(level=level, destination=destination, multi=parallel):
                transfers, r, outputs = self.run_curl(level, destination, parallel)
                self.assertEqual(r.code, 0, str(r))
                for k, _, attempts in transfers:
                    self.assertCount(self.plain, k, attempts, r)
                for where, data in outputs.items():
                    for secret in SENTINELS:
                        self.assertNotIn(secret, data, f"{secret!r} in the {where}:\n{data[:3000]!r}")
                    self.assertNotIn(b"?", data.replace(b'"', b""), f"a query string in the {where}")

                # The logging did happen (otherwise the test would prove nothing).
                ours = outputs["log file"] if destination == "file" else outputs["stderr"]
                if level in ("debug", "info"):
                    self.assertIn(b"retrying in", ours, f"no retry line at {level}\n{r}")
                    self.assertIn(b"giving up after 3 attempts", ours, f"no give-up line at {level}\n{r}")
                    self.assertIn(b"/s/", ours)  # the path is shown, only the path
                if destination == "file":
                    self.assertNotIn(b"curlretry:", r.stderr, "log lines on stderr despite CURLRETRY_LOG_FILE")
                self.assertIn(b'"verdict":"retry"', outputs["events file"])
                self.assertIn(b'"verdict":"give_up"', outputs["events file"])

    def test_the_same_transfers_without_the_preload_are_what_the_host_sees(self):
        # Control: the upstream really answers these scripts, and curl really sends the secrets
        # (curl -v shows them on its own stderr): the test above is not vacuous.
        k = self.key()
        url = (f"http://{URL_USER}:{URL_PASS}@127.0.0.1:{self.plain.port}/s/{k}/503,200"
               f"?{QUERY_KEY}={QUERY_VALUE}")
        r = curl(["-sS", "-v", "-u", f"{BASIC_USER}:{BASIC_PASS}", *SECRET_ARGS, url], preload=False)
        self.assertRun(r, 0, overloaded_body(k, 1))
        for secret in (BEARER, PROXY, X_API_KEY, API_KEY, COOKIE, QUERY_VALUE):
            self.assertIn(secret.encode(), r.stderr)

    def test_retried_transfer_delivers_the_final_body(self):
        k = self.key()
        url = f"http://{URL_USER}:{URL_PASS}@127.0.0.1:{self.plain.port}/s/{k}/503,200?{QUERY_KEY}={QUERY_VALUE}"
        r = curl(["-sS", *SECRET_ARGS, url], preload=True, env={"CURLRETRY_LOG": "debug"})
        self.assertRun(r, 0, ok_body(k, 2))
        for secret in SENTINELS:
            self.assertNotIn(secret, r.stderr)


if __name__ == "__main__":
    unittest.main()
