#!/usr/bin/python3
"""Runs the built `curlretry` binary and asserts exact results.

Usage: cli_test.py PATH_TO_CURLRETRY CASE
Each case is one ctest entry (see CMakeLists.txt). Exit 0 = pass, 77 = skipped, else fail.
The environment is scrubbed of CURLRETRY_* / BILI_REPLAY_* and HOME / XDG_CONFIG_HOME point into
a fresh temp dir, so a developer's own config cannot change the outcome.
"""
import json
import os
import signal
import subprocess
import sys
import tempfile

SKIP = 77
GLM = "https://open.bigmodel.cn/api/paas/v4/chat/completions"
CAPTCHA = '{"code":3007,"msg":"captcha verify failed"}'


class Failure(Exception):
    pass


def expect(cond, message):
    if not cond:
        raise Failure(message)


class Runner:
    def __init__(self, binary, tmp):
        self.binary = binary
        self.tmp = tmp
        self.env = {k: v for k, v in os.environ.items()
                    if not k.startswith(("CURLRETRY_", "BILI_REPLAY_")) and k != "LD_PRELOAD"}
        self.env["HOME"] = os.path.join(tmp, "home")
        self.env["XDG_CONFIG_HOME"] = os.path.join(tmp, "xdg")

    def run(self, *args, env=None, stdin=None):
        full_env = dict(self.env)
        full_env.update(env or {})
        return subprocess.run([self.binary, *args], env=full_env, input=stdin, capture_output=True,
                              text=True, timeout=60)

    def explain_json(self, *args, env=None):
        if os.path.exists("/etc/curlretry/config.yaml"):
            raise SystemExit(SKIP)  # the system config would change the built-in answers
        r = self.run("explain", "--json", *args, env=env)
        expect(r.returncode in (0, 1), f"exit {r.returncode}, stderr: {r.stderr}")
        lines = r.stdout.splitlines()
        expect(len(lines) == 1, f"expected one line of JSON, got: {r.stdout!r}")
        got = json.loads(lines[0])
        # 0: curlretry would retry; 1: it would not.
        expect_equal(r.returncode, 0 if got["verdict"] == "retry" else 1)
        return got

    def write(self, name, text):
        path = os.path.join(self.tmp, name)
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
        return path

    def fake_library(self):
        # Not a real ELF: ld.so says "cannot be preloaded ... ignored" on stderr and runs the
        # command anyway, which is all the launcher tests need (they check env and exit status).
        return self.write("libcurlretry.so", "not an elf\n")


def expect_equal(got, want):
    expect(got == want, f"got {got!r}, want {want!r}")


# --- explain: the "Done when" examples -------------------------------------------------

def explain_captcha_400_retries_after_1500(r):
    got = r.explain_json("POST", GLM, "--status", "400", "--body", CAPTCHA)
    expect_equal({k: got[k] for k in ("verdict", "delay_ms", "rule")},
                 {"verdict": "retry", "delay_ms": 1500, "rule": "defaults"})
    expect_equal(got["reason"], "marker:captcha")
    expect_equal(sorted(got), ["delay_ms", "reason", "rule", "verdict", "what"])


def explain_bili_replay_retry_max_1_gives_up(r):
    got = r.explain_json("POST", GLM, "--status", "400", "--body", CAPTCHA, env={"BILI_REPLAY_RETRY_MAX": "1"})
    expect_equal(got["verdict"], "give_up")
    expect("delay_ms" not in got, f"give_up must not carry delay_ms: {got}")
    expect_equal(got["reason"], "exhausted")


def explain_503_attempt_2_waits_3000(r):
    got = r.explain_json("POST", GLM, "--status", "503", "--attempt", "2")
    expect_equal((got["verdict"], got["delay_ms"], got["reason"]), ("retry", 3000, "status:503"))


def explain_429_daily_quota_gives_up(r):
    got = r.explain_json("POST", GLM, "--status", "429", "--body",
                         '{"error":{"message":"You exceeded your daily quota"}}')
    expect_equal((got["verdict"], got["reason"]), ("give_up", "permanent:daily quota"))


def explain_429_retry_after_7_waits_7000(r):
    got = r.explain_json("POST", GLM, "--status", "429", "--header", "Retry-After: 7")
    expect_equal((got["verdict"], got["delay_ms"]), ("retry", 7000))


ANTHROPIC = "https://api.anthropic.com/v1/messages"
SSE_SETUP = ('event: message_start\ndata: {"type":"message_start","message":{"id":"msg_1"}}\n\n'
             'event: ping\ndata: {"type": "ping"}\n\n')
SSE_OVERLOADED = 'event: error\ndata: {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}\n\n'
SSE_DELTA = 'event: content_block_delta\ndata: {"type":"content_block_delta","delta":{"text":"Hi"}}\n\n'


def explain_sse_overloaded_before_content_retries(r):
    body = r.write("over.sse", SSE_SETUP + SSE_OVERLOADED)
    got = r.explain_json("POST", ANTHROPIC, "--status", "200", "--header", "content-type: text/event-stream",
                         "--body", "@" + body)
    expect_equal((got["verdict"], got["delay_ms"], got["reason"]), ("retry", 1500, "stream-error:overloaded_error"))
    expect_equal(got["what"], "HTTP 200 + stream error overloaded_error")
    expect_equal(got["stream"], f"event 3 (error) ending at byte {len(SSE_SETUP + SSE_OVERLOADED)} "
                                "is an error before any content")


def explain_sse_content_first_commits(r):
    body = r.write("late.sse", SSE_SETUP + SSE_DELTA + SSE_OVERLOADED)
    got = r.explain_json("POST", ANTHROPIC, "--status", "200",
                         "--header", "Content-Type: text/event-stream; charset=utf-8", "--body", "@" + body)
    expect_equal((got["verdict"], got["reason"]), ("give_up", "success"))
    expect(got["stream"].startswith("event 3 (content_block_delta) ending at byte "), got)


def explain_sse_without_event_stream_type_is_a_plain_200(r):
    got = r.explain_json("POST", ANTHROPIC, "--status", "200", "--body", SSE_SETUP + SSE_OVERLOADED)
    expect_equal((got["verdict"], got["reason"]), ("give_up", "success"))
    expect("stream" not in got, got)


def explain_sse_text_output_names_the_deciding_event(r):
    body = r.write("over.sse", SSE_SETUP + SSE_OVERLOADED)
    res = r.run("explain", "POST", ANTHROPIC, "--status", "200", "--header", "content-type: text/event-stream",
                "--body", "@" + body)
    expect(res.returncode == 0, res.stderr)
    expect("stream:   event 3 (error) ending at byte" in res.stdout, res.stdout)
    expect("outcome:  HTTP 200 + stream error overloaded_error\n" in res.stdout, res.stdout)


GEMINI = "https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse"
GEMINI_OVERLOADED = ('{"error":{"code":503,"message":"The model is overloaded. Please try again later.",'
                     '"status":"UNAVAILABLE"}}')


def gemini_quota(quota_id, delay):
    return ('{"error":{"code":429,"message":"You exceeded your current quota, please check your plan and billing '
            'details.","status":"RESOURCE_EXHAUSTED","details":[{"@type":"type.googleapis.com/google.rpc.QuotaFailure",'
            '"violations":[{"quotaMetric":"generativelanguage.googleapis.com/generate_content_free_tier_requests",'
            f'"quotaId":"{quota_id}"}}]}},{{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"{delay}"}}]}}}}')


def explain_gemini_unavailable_retries_by_status(r):
    got = r.explain_json("POST", GEMINI, "--status", "503", "--body", GEMINI_OVERLOADED)
    expect_equal((got["verdict"], got["delay_ms"], got["reason"], got["what"]),
                 ("retry", 1500, "code:UNAVAILABLE", "HTTP 503 status UNAVAILABLE"))


def explain_gemini_per_minute_quota_waits_its_retry_delay(r):
    # The message says "billing" (a built-in permanent marker); the quotaId says per minute.
    got = r.explain_json("POST", GEMINI, "--status", "429", "--body",
                         gemini_quota("GenerateRequestsPerMinutePerProjectPerModel-FreeTier", "53s"))
    expect_equal((got["verdict"], got["delay_ms"], got["reason"]), ("retry", 53000, "code:RESOURCE_EXHAUSTED"))


def explain_gemini_per_day_quota_gives_up(r):
    got = r.explain_json("POST", GEMINI, "--status", "429", "--body",
                         gemini_quota("GenerateRequestsPerDayPerProjectPerModel-FreeTier", "20s"))
    expect_equal((got["verdict"], got["reason"]), ("give_up", "permanent-code:RESOURCE_EXHAUSTED"))
    expect_equal(got["what"], "HTTP 429 status RESOURCE_EXHAUSTED per day or longer (permanent)")


def explain_gemini_in_band_unavailable_retries(r):
    body = r.write("gemini.sse", "data: " + GEMINI_OVERLOADED + "\r\n\r\n")
    got = r.explain_json("POST", GEMINI, "--status", "200", "--header", "content-type: text/event-stream",
                         "--body", "@" + body)
    expect_equal((got["verdict"], got["reason"], got["what"]),
                 ("retry", "stream-error:UNAVAILABLE", "HTTP 200 + stream error UNAVAILABLE"))


def explain_openai_responses_failed_server_error_retries(r):
    body = r.write("resp.sse", 'event: response.created\ndata: {"type":"response.created","response":{"id":"r"}}\n\n'
                   'event: response.failed\ndata: {"type":"response.failed","response":{"status":"failed",'
                   '"error":{"code":"server_error","message":"An error occurred"}}}\n\n')
    got = r.explain_json("POST", "https://api.openai.com/v1/responses", "--status", "200",
                         "--header", "content-type: text/event-stream", "--body", "@" + body)
    expect_equal((got["verdict"], got["reason"]), ("retry", "stream-error:server_error"))


def explain_body_from_stdin_and_rule_name(r):
    cfg = r.write("glm.yaml", "version: 1\nrules:\n  - name: glm\n"
                              "    match: {host: open.bigmodel.cn, path: \"/api/*\", method: POST}\n"
                              "    backoff: {strategy: triangular, base_ms: 20, max_ms: 50}\n")
    res = r.run("explain", "--json", "--config", cfg, "POST", GLM, "--status", "400", "--body", "@-", stdin=CAPTCHA)
    expect(res.returncode == 0, res.stderr)
    got = json.loads(res.stdout)
    expect_equal((got["verdict"], got["delay_ms"], got["rule"]), ("retry", 20, "glm"))


def explain_text_output_names_rule_verdict_and_reason(r):
    if os.path.exists("/etc/curlretry/config.yaml"):
        raise SystemExit(SKIP)
    res = r.run("explain", "POST", GLM, "--status", "503")
    expect(res.returncode == 0, res.stderr)
    expect("rule:     defaults" in res.stdout, res.stdout)
    expect("verdict:  retry in 1500 ms (status:503)" in res.stdout, res.stdout)
    expect("request:  POST open.bigmodel.cn/api/paas/v4/chat/completions" in res.stdout, res.stdout)


def explain_bad_env_fails_naming_the_variable(r):
    res = r.run("explain", "--json", "POST", GLM, "--status", "503", env={"CURLRETRY_MAX_ATTEMPTS": "abc"})
    expect_equal(res.returncode, 2)
    expect_equal(res.stderr.strip(),
                 "curlretry: CURLRETRY_MAX_ATTEMPTS=abc: not an integer (expected -1 or a number >= 1)")
    expect_equal(res.stdout, "")


def explain_exit_status_says_whether_it_would_retry(r):
    if os.path.exists("/etc/curlretry/config.yaml"):
        raise SystemExit(SKIP)
    expect_equal(r.run("explain", "POST", GLM, "--status", "503").returncode, 0)
    done = r.run("explain", "POST", GLM, "--status", "200")
    expect_equal(done.returncode, 1)
    expect("verdict:  done (success)" in done.stdout.splitlines(), done.stdout)
    expect_equal(r.run("explain", "POST", GLM, "--status", "404").returncode, 1)


def explain_usage_errors_exit_2(r):
    expect_equal(r.run("explain", "POST").returncode, 2)
    expect_equal(r.run("explain", "POST", GLM, "--status", "abc").returncode, 2)
    res = r.run("explain", "POST", GLM)
    expect_equal(res.returncode, 2)
    expect("--status N" in res.stderr, res.stderr)


# --- check ---------------------------------------------------------------------------------------

def check_typo_on_line_3_names_file_and_line(r):
    cfg = r.write("typo.yaml", "version: 1\ndefaults:\n  max_attemps: 3\n")
    res = r.run("check", "--config", cfg)
    expect_equal(res.returncode, 1)
    expect_equal(res.stderr.strip(),
                 f'curlretry: {cfg}:3:3: defaults.max_attemps: unknown key; did you mean "max_attempts"?')
    expect(res.stderr.startswith(f"curlretry: {cfg}:3"), res.stderr)


def check_prints_every_value_with_its_source(r):
    cfg = r.write("ok.yaml", "version: 1\ndefaults:\n  max_attempts: 4\nrules:\n  - name: glm\n"
                             "    match: {host: open.bigmodel.cn}\n    backoff: {base_ms: 20}\n")
    res = r.run("check", "--config", cfg, env={"CURLRETRY_MAX_DELAY_MS": "900", "CURLRETRY_BASE_MS": "10",
                                               "BILI_REPLAY_RETRY_BASE_MS": "5"})
    expect_equal(res.returncode, 0)
    out = res.stdout
    expect(f"config: {cfg}" in out, out)
    lines = [" ".join(line.split()) for line in out.splitlines()]
    expect(f"max_attempts 4 {cfg}:3:17" in lines, out)
    expect("backoff.max_ms 900 env CURLRETRY_MAX_DELAY_MS" in lines, out)
    expect("backoff.base_ms 10 env CURLRETRY_BASE_MS" in lines, out)
    expect("max_elapsed_ms 1800000 built-in" in lines, out)
    expect(f'rule "glm" (host open.bigmodel.cn) from {cfg}:5:5:' in lines, out)
    expect("BILI_REPLAY_RETRY_BASE_MS=5 is ignored: CURLRETRY_BASE_MS=10 is also set and wins" in lines, out)
    expect(lines[-1] == "OK: 1 rule", out)


def check_without_file_uses_built_in(r):
    if os.path.exists("/etc/curlretry/config.yaml"):
        raise SystemExit(SKIP)
    res = r.run("check")
    expect_equal(res.returncode, 0)
    expect("config: none found, built-in defaults" in res.stdout, res.stdout)


def check_missing_named_file_fails(r):
    res = r.run("check", env={"CURLRETRY_CONFIG": os.path.join(r.tmp, "missing.yaml")})
    expect_equal(res.returncode, 1)
    expect("CURLRETRY_CONFIG=" in res.stderr and "No such file" in res.stderr, res.stderr)


# --- help and version everywhere -----------------------------------------------------------------

def help_and_version_everywhere(r):
    for sub in ([], ["run"], ["check"], ["explain"], ["demo"]):
        v = r.run(*sub, "--version")
        expect_equal((v.returncode, v.stdout.strip()), (0, "curlretry 0.1.0"))
        h = r.run(*sub, "--help")
        expect(h.returncode == 0 and "Usage:" in h.stdout, f"{sub}: {h.stdout} {h.stderr}")


# --- the launcher --------------------------------------------------------------------------------

def launch_sets_preload_config_and_log(r):
    lib = r.fake_library()
    cfg = r.write("c.yaml", "version: 1\n")
    script = 'printf "%s\\n%s\\n%s\\n" "$LD_PRELOAD" "$CURLRETRY_CONFIG" "$CURLRETRY_LOG"'
    res = subprocess.run([r.binary, "--config", "c.yaml", "-v", "--", "sh", "-c", script], cwd=r.tmp,
                         env={**r.env, "CURLRETRY_LIBRARY": lib, "LD_PRELOAD": "/keep/me.so"},
                         capture_output=True, text=True, timeout=60)
    expect_equal(res.returncode, 0)
    expect_equal(res.stdout.splitlines(), [f"{os.path.realpath(lib)}:/keep/me.so", cfg, "debug"])


def launch_run_subcommand_and_bare_form(r):
    lib = r.fake_library()
    env = {"CURLRETRY_LIBRARY": lib}
    for args in (["run", "--", "sh", "-c", "echo $0 $1", "a", "b"], ["run", "sh", "-c", "echo $0 $1", "a", "b"],
                 ["sh", "-c", "echo $0 $1", "a", "b"], ["--", "sh", "-c", "echo $0 $1", "a", "b"]):
        res = r.run(*args, env=env)
        expect_equal((args, res.returncode, res.stdout), (args, 0, "a b\n"))
    # A command named like a subcommand, after `--`, is the command.
    res = r.run("--", "check", env=env)
    expect_equal((res.returncode, res.stderr.strip().splitlines()[-1]), (127, "curlretry: check: command not found"))


def launch_preserves_pid_exit_status_and_signals(r):
    env = {**r.env, "CURLRETRY_LIBRARY": r.fake_library()}
    p = subprocess.Popen([r.binary, "--", "sh", "-c", "echo $$; exit 42"], env=env, stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL, text=True)
    out, _ = p.communicate(timeout=60)
    expect_equal((int(out.strip()), p.returncode), (p.pid, 42))
    res = r.run("--", "sh", "-c", "kill -TERM $$", env={"CURLRETRY_LIBRARY": env["CURLRETRY_LIBRARY"]})
    expect_equal(res.returncode, -signal.SIGTERM)


def launch_missing_command_exits_127(r):
    res = r.run("--", "curlretry-no-such-command-xyz", env={"CURLRETRY_LIBRARY": r.fake_library()})
    expect_equal((res.returncode, res.stderr.strip()),
                 (127, "curlretry: curlretry-no-such-command-xyz: command not found"))


def launch_invalid_config_exits_125_without_running(r):
    cfg = r.write("bad.yaml", "version: 1\ndefaults:\n  max_attemps: 3\n")
    marker = os.path.join(r.tmp, "ran")
    res = r.run("--config", cfg, "--", "touch", marker, env={"CURLRETRY_LIBRARY": r.fake_library()})
    expect_equal(res.returncode, 125)
    expect(f"{cfg}:3:3" in res.stderr, res.stderr)
    expect(not os.path.exists(marker), "the command ran despite the invalid config")


def launch_missing_library_exits_125(r):
    res = r.run("--", "true", env={"CURLRETRY_LIBRARY": os.path.join(r.tmp, "nope.so")})
    expect_equal(res.returncode, 125)
    expect("CURLRETRY_LIBRARY=" in res.stderr, res.stderr)


def launch_without_command_is_a_usage_error(r):
    expect_equal(r.run().returncode, 125)
    expect_equal(r.run("run", env={"CURLRETRY_LIBRARY": r.fake_library()}).returncode, 125)


def launch_proxy_and_no_proxy_contradict(r):
    res = r.run("--proxy", "--no-proxy", "--", "true", env={"CURLRETRY_LIBRARY": r.fake_library()})
    expect_equal(res.returncode, 125)
    expect_equal(res.stderr.splitlines()[0], "curlretry: --proxy and --no-proxy contradict")


def launch_no_proxy_takes_no_listen_address(r):
    # A python script that never imports pycurl would go through the proxy; --no-proxy says not.
    script = r.write("agent.py", "print('hi')\n")
    res = r.run("--no-proxy", "--listen", "127.0.0.1:1", "--", sys.executable, script,
                env={"CURLRETRY_LIBRARY": r.fake_library()})
    expect_equal(res.returncode, 125)
    expect_equal(res.stderr.splitlines()[0], "curlretry: --listen needs --proxy (it names the shared proxy's address)")


def help_shows_the_agent_case_next_to_curl(r):
    res = r.run("--help")
    expect_equal(res.returncode, 0)
    expect('  curlretry -- claude -p "hello"    (no libcurl inside: through the shared local proxy, no config)'
           in res.stdout.splitlines(), res.stdout)
    expect("--no-proxy" in res.stdout, res.stdout)


def launch_doctor_advises_the_command_that_works_as_it_is(r):
    # A python script without pycurl: the launcher routes it by itself, so doctor says `curlretry --`.
    script = r.write("agent.py", "import urllib.request\n")
    res = r.run("doctor", "--json", "/usr/bin/python3", script)
    expect_equal(res.returncode, 4)
    expect(json.loads(res.stdout)["advice"].startswith(
        "curlretry -- COMMAND runs it through curlretry's local proxy, no config needed:"), res.stdout)


# --- the demo ------------------------------------------------------------------------------------

def demo_shows_the_built_in_policy_whatever_the_environment_overrides(r):
    # Every variable of a policy key (config/keys.h) is dropped for the demo's curl, so it waits
    # the built-in 1500 and 3000 ms that it announces, under a user's CURLRETRY_JITTER too.
    if subprocess.run(["sh", "-c", "command -v curl"], capture_output=True).returncode != 0:
        raise SystemExit(SKIP)
    env = {"CURLRETRY_JITTER": "full", "CURLRETRY_MAX_ATTEMPTS": "9", "CURLRETRY_BASE_MS": "1",
           "BILI_REPLAY_RETRY_MAX": "9", "CURLRETRY_MAX_DELAY_MS": "1"}
    res = r.run("demo", env=env)
    expect_equal(res.returncode, 0)
    lines = [line.split(" -> ", 1)[1] for line in (res.stdout + res.stderr).splitlines()
             if line.startswith("curlretry: GET ") and "demo-retry" in line]
    expect_equal(lines, ["HTTP 503: retrying in 1500 ms (attempt 1/3)", "HTTP 503: retrying in 3000 ms (attempt 2/3)",
                         "HTTP 200 after 3 attempts"])


CASES = {name: fn for name, fn in globals().items() if callable(fn) and name.split("_")[0] in
         ("explain", "check", "help", "launch", "demo")}


def main():
    if len(sys.argv) == 2 and sys.argv[1] == "--list":
        print("\n".join(CASES))
        return 0
    if len(sys.argv) != 3 or sys.argv[2] not in CASES:
        print(f"usage: {sys.argv[0]} CURLRETRY CASE (one of: {', '.join(CASES)})", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="curlretry-cli-") as tmp:
        try:
            CASES[sys.argv[2]](Runner(os.path.abspath(sys.argv[1]), tmp))
        except Failure as e:
            print(f"FAIL {sys.argv[2]}: {e}", file=sys.stderr)
            return 1
    print(f"ok {sys.argv[2]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
