"""The `curlretry` command line as a user meets it: every subcommand refuses an unknown option or
an extra argument with its own Usage line and a non-zero exit (issue 11 item 7: `check bad.yaml`
used to ignore the file and print OK), `--help` everywhere, errors in curlretry's own words, and
the launcher's flags (issue 17 item 1) with the exit codes of `env` and `timeout`.
"""

from __future__ import annotations

import os
import unittest

import harness

BIN = harness.CURLRETRY_BIN
GLM = "https://open.bigmodel.cn/api/paas/v4/chat/completions"

# Every subcommand, with arguments that make a valid call of it (so that one more argument or
# an unknown option is the only thing wrong).
VALID = {
    "check": [],
    "explain": ["GET", "http://example.com/"],
    "stats": ["/dev/null"],
    "demo": [],
    "fleet": ["--json"],
}
USAGE = {
    "check": "Usage: curlretry check [--json] [--config FILE]... [FILE...]",
    "explain": "Usage: curlretry explain [--json] [--config FILE] [--status N] [--header 'K: V']... "
               "[--body TEXT|@FILE] [--transport KIND] [--attempt N] [OPTIONS] METHOD URL",
    "stats": "Usage: curlretry stats [--json] [--since TIME] [--until TIME] [--processes] [--bucket DURATION] "
             "[--width N] FILE...",
    "demo": "Usage: curlretry demo [--tls] [--curl PATH]",
    "fleet": "Usage: curlretry fleet [--json] [--watch [--interval S] [--count N]] [--clear KEY] [--config FILE]",
    "doctor": "Usage: curlretry doctor [--json] [--] COMMAND|PATH [ARGS...]",
    "run": "Usage: curlretry run [-n N] [--base-ms MS] [--max-delay-ms MS] [--jitter KIND] [-q|-v] "
           "[--log-file F] [--events F] [--config F]... [--] COMMAND [ARGS...]",
}


def cli(args: list[str], env: dict[str, str] | None = None, cwd: str | None = None) -> harness.Result:
    return harness.run([BIN, *args], preload=False, env=env, cwd=cwd)


class CliTestCase(unittest.TestCase):
    def setUp(self) -> None:
        if not BIN or not os.access(BIN, os.X_OK):
            self.fail("CURLRETRY_BIN is not set to the built curlretry binary")

    def temp_dir(self):
        import tempfile
        from pathlib import Path
        d = tempfile.TemporaryDirectory(prefix="curlretry-cli-")
        self.addCleanup(d.cleanup)
        return Path(d.name)

    def assertUsageError(self, result: harness.Result, command: str, problem: str, code: int = 2) -> None:
        """Exactly three lines on stderr: the problem, the Usage line, where to read more."""
        prefix = "curlretry" if command == "" else f"curlretry {command}"
        lines = result.stderr.decode().splitlines()
        self.assertEqual(result.code, code, str(result))
        self.assertEqual(lines[0], f"{prefix}: {problem}", str(result))
        self.assertTrue(lines[1].startswith("Usage: curlretry"), str(result))
        self.assertEqual(lines[-1], f"Run '{prefix} --help' for more.", str(result))
        self.assertEqual(result.stdout, b"", str(result))


class CheckTakesItsFile(CliTestCase):
    """Issue 11 item 7: `check FILE` checks FILE."""

    def test_check_bad_file_fails_naming_file_line_and_column(self) -> None:
        bad = self.temp_dir() / "bad.yaml"
        bad.write_text("version: 1\ndefaults:\n  max_attemps: 3\n")
        result = cli(["check", str(bad)])
        self.assertEqual(result.code, 1, str(result))
        self.assertEqual(result.stderr.decode(),
                         f'curlretry: {bad}:3:3: defaults.max_attemps: unknown key; did you mean "max_attempts"?\n')
        self.assertEqual(result.stdout, b"")

    def test_check_good_file_reports_it(self) -> None:
        good = self.temp_dir() / "good.yaml"
        good.write_text("version: 1\ndefaults:\n  max_attempts: 4\n")
        result = cli(["check", str(good)])
        self.assertEqual(result.code, 0, str(result))
        out = result.stdout.decode()
        self.assertTrue(out.startswith(f"config: {good}\n"), out)
        self.assertIn(f"max_attempts 4 {good}:3:17", [" ".join(line.split()) for line in out.splitlines()])


class StrictSubcommands(CliTestCase):
    """Every subcommand refuses what it does not know, with its own Usage line."""

    def test_unknown_option_everywhere(self) -> None:
        for command, args in VALID.items():
            with self.subTest(command=command):
                result = cli([command, *args, "--bogus"])
                self.assertUsageError(result, command, "unknown option --bogus")
                self.assertEqual(result.stderr.decode().splitlines()[1], USAGE[command])

    def test_extra_argument_everywhere(self) -> None:
        for command, args in VALID.items():
            if command in ("check", "stats"):
                continue  # their positionals are lists of files
            with self.subTest(command=command):
                self.assertUsageError(cli([command, *args, "extra"]), command, "unexpected argument 'extra'")

    def test_doctor_and_run_refuse_an_option_before_the_command(self) -> None:
        self.assertUsageError(cli(["doctor", "--bogus", "curl"]), "doctor", "unknown option --bogus")
        run = cli(["run", "--bogus", "true"])
        self.assertUsageError(run, "run", "unknown option --bogus", code=125)
        self.assertEqual(run.stderr.decode().splitlines()[1], USAGE["run"])

    def test_missing_arguments_and_bad_values_in_curlretrys_words(self) -> None:
        self.assertUsageError(cli(["explain", "GET"]), "explain", "missing URL")
        self.assertUsageError(cli(["explain", "GET", GLM, "--status", "abc"]), "explain",
                              "--status: 'abc' is not a whole number")
        self.assertUsageError(cli(["explain", "GET", GLM, "--status"]), "explain", "--status needs a value")
        self.assertUsageError(cli(["stats"]), "stats", "missing FILE")
        self.assertUsageError(cli(["stats", "--width", "0", "/dev/null"]), "stats", "--width: '0' is below 1")
        self.assertUsageError(cli(["doctor"]), "doctor", "missing COMMAND|PATH")
        self.assertUsageError(cli(["check", "--config"]), "check", "--config needs a value")

    def test_separator_only_where_a_command_is_taken(self) -> None:
        self.assertUsageError(cli(["check", "--", "x"]), "check",
                              "unexpected `--`: only the launcher and doctor take a command")

    def test_help_everywhere_has_one_usage_line_and_names_the_man_page(self) -> None:
        for command in ["", *USAGE]:
            with self.subTest(command=command):
                result = cli([command, "--help"] if command else ["--help"])
                self.assertEqual(result.code, 0, str(result))
                usage = [line for line in result.stdout.decode().splitlines() if line.startswith("Usage:")]
                self.assertEqual(len(usage), 1, result.stdout.decode())
                if command:
                    self.assertEqual(usage[0], USAGE[command])
        top = cli(["--help"]).stdout.decode()
        self.assertIn("curlretry.yaml(5)", top)
        self.assertNotIn("REFERENCE.md", top)
        for flag in ("-n,--max-attempts N", "--base-ms MS", "--max-delay-ms MS", "--jitter KIND", "-q,--quiet",
                     "-v,--verbose", "--log-file FILE", "--events FILE", "--config FILE"):
            self.assertIn(flag, top)

    def test_no_parser_wording_leaks(self) -> None:
        for args in (["check", "a", "--x"], ["explain"], ["stats", "--width", "x", "f"], ["demo", "--curl"]):
            with self.subTest(args=args):
                err = cli(args).stderr.decode()
                for phrase in ("The following argument", "is required", "Could not convert", "required but"):
                    self.assertNotIn(phrase, err)


class LauncherFlags(harness.UpstreamTestCase):
    """Issue 17 item 1: the launcher's flags set the variables of the same settings."""

    def launch(self, args: list[str], env: dict[str, str] | None = None, cwd: str | None = None) -> harness.Result:
        problem = harness.library_problem()
        if problem:
            self.fail(problem)
        return cli(args, env={"CURLRETRY_LIBRARY": harness.LIB, **(env or {})}, cwd=cwd)

    def test_max_attempts_and_base_ms_reach_the_library(self) -> None:
        key = self.key()
        url = self.plain.script_url(key, "503,503,503,200")
        result = self.launch(["-n", "2", "--base-ms", "10", "-q", "--", harness.CURL, "-sS", url])
        self.assertRun(result, 0)
        self.assertEqual(result.stdout, harness.overloaded_body(key, 2))
        self.assertCount(self.plain, key, 2, result)
        # -q (CURLRETRY_LOG=warn): no retry lines, only the give-up after retries.
        path = url.split("://", 1)[1]
        self.assertEqual(result.stderr.decode(),
                         f"curlretry: GET {path} -> HTTP 503: giving up after 2 attempts (exhausted)\n", str(result))

    def test_flags_are_the_variables_check_shows(self) -> None:
        script = 'printf "%s|%s|%s|%s|%s|%s|%s\\n" "$CURLRETRY_MAX_ATTEMPTS" "$CURLRETRY_BASE_MS" ' \
                 '"$CURLRETRY_MAX_DELAY_MS" "$CURLRETRY_JITTER" "$CURLRETRY_LOG" "$CURLRETRY_LOG_FILE" ' \
                 '"$CURLRETRY_EVENTS"'
        result = self.launch(["--max-attempts", "7", "--base-ms", "20", "--max-delay-ms", "900", "--jitter", "full",
                              "-v", "--log-file", "/tmp/x.log", "--events", "/tmp/e.jsonl", "--", "sh", "-c", script])
        self.assertRun(result, 0, b"7|20|900|full|debug|/tmp/x.log|/tmp/e.jsonl\n")
        check = cli(["check"], env={"CURLRETRY_JITTER": "full"})
        self.assertIn("backoff.jitter full env CURLRETRY_JITTER",
                      [" ".join(line.split()) for line in check.stdout.decode().splitlines()], str(check))

    def test_bad_flag_value_names_the_flag_and_exits_125(self) -> None:
        result = self.launch(["-n", "abc", "--", "true"])
        self.assertRun(result, 125)
        self.assertEqual(result.stderr,
                         b"curlretry: --max-attempts abc: not an integer (expected -1 or a number >= 1)\n")
        result = self.launch(["--jitter", "wobbly", "--", "true"])
        self.assertRun(result, 125)
        self.assertEqual(result.stderr,
                         b"curlretry: --jitter wobbly: unknown jitter (expected none, full, equal or decorrelated)\n")

    def test_curl_retry_stacking_is_said_once(self) -> None:
        key = self.key()
        url = self.plain.script_url(key, "200")
        result = self.launch(["-n", "4", "--", harness.CURL, "-sS", "--retry", "2", url])
        self.assertRun(result, 0, harness.ok_body(key, 1))
        self.assertEqual(result.stderr.decode(),
                         "curlretry: warning: curl --retry 2 retries on top of curlretry: one failing request can be "
                         "sent up to 3 x 4 = 12 times; drop curl's --retry or run curlretry -n 1\n")
        quiet = self.launch(["-q", "--", harness.CURL, "-sS", "--retry", "2", url])
        self.assertRun(quiet, 0)
        self.assertEqual(quiet.stderr, b"")

    def test_exit_codes_125_126_127_and_the_commands_own(self) -> None:
        self.assertUsageError = CliTestCase.assertUsageError.__get__(self)
        self.assertUsageError(self.launch(["--bogus", "--", "true"]), "", "unknown option --bogus", code=125)
        self.assertUsageError(self.launch(["-q", "-v", "true"]), "", "-q and -v contradict", code=125)
        self.assertUsageError(self.launch(["-n", "2"]), "", "no command to run", code=125)
        bad = self.temp_dir() / "bad.yaml"
        bad.write_text("version: 1\ndefaults:\n  max_attemps: 3\n")
        self.assertRun(self.launch(["--config", str(bad), "--", "true"]), 125)
        missing = self.launch(["--", "curlretry-no-such-command-xyz"])
        self.assertRun(missing, 127)
        self.assertEqual(missing.stderr, b"curlretry: curlretry-no-such-command-xyz: command not found\n")
        text = self.temp_dir() / "not-executable"
        text.write_text("echo hi\n")
        self.assertRun(self.launch(["--", str(text)]), 126)
        self.assertRun(self.launch(["--", "sh", "-c", "exit 42"]), 42)


if __name__ == "__main__":
    unittest.main()
