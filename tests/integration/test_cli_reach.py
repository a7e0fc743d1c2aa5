"""Nothing silent (issue 17 item 3): when the launched program exits without ever having used
libcurl, the launcher says once on stderr that curlretry had nothing to retry and the exact
command that retries it through the local proxy (`curlretry --proxy -- COMMAND`, issue 15); not
with -q, not when any process of the command used libcurl, not when the command could not be run.
The command keeps the launcher's pid and gets no extra child.
"""

from __future__ import annotations

import os
import re
import subprocess
import unittest

import harness


def shell_words(words: list[str]) -> str:
    """As a shell takes them back: plain words as they are, others in single quotes ('\\'' for ')."""
    plain = re.compile(r"[A-Za-z0-9_./:=@%+,-]+")
    return " ".join(w if plain.fullmatch(w) else "'" + w.replace("'", "'\\''") + "'" for w in words)


def message(program: str, command: str, launcher: str = "curlretry") -> str:
    """The reach watch's advice (cli/reach_watch.cpp): what works today for `program`."""
    return (f"curlretry: {program} never used libcurl, so curlretry had nothing to retry.\n"
            "curlretry: if it starts a program without libcurl (node, bun, deno, python without pycurl, a Go or Rust "
            f"binary), run that one as {launcher} -- PROGRAM [ARGS...]: it then goes through the shared local proxy, "
            "the providers curlretry knows intercepted, no config needed\n"
            f"curlretry: for {program}'s own requests, name their hosts in proxy.intercept (or proxy.routes) of the "
            f"config, then: {launcher} --proxy -- {command}\n"
            "curlretry: the preload reaches programs that call the system's libcurl (curl, git, PHP's curl, pycurl); "
            f"'curlretry doctor {program}' says what this one uses.\n")


class NothingSilent(harness.UpstreamTestCase):
    def setUp(self) -> None:
        problem = harness.library_problem()
        if problem:
            self.fail(problem)
        self.tmp = self.temp_dir()

    def launch(self, args: list[str]) -> harness.Result:
        result = harness.run([harness.CURLRETRY_BIN, *args], preload=False,
                             env={"CURLRETRY_LIBRARY": harness.LIB, "TMPDIR": str(self.tmp)})
        # The watcher cleaned up after itself before closing stderr (which run() waited for).
        self.assertEqual(os.listdir(self.tmp), [], str(result))
        return result

    def test_a_program_without_libcurl_is_named_once(self) -> None:
        result = self.launch(["--", "sh", "-c", "echo out; echo err >&2; exit 3"])
        self.assertRun(result, 3, b"out\n")
        self.assertEqual(result.stderr.decode(),
                         "err\n" + message("sh", "sh -c 'echo out; echo err >&2; exit 3'"))

    def test_the_advice_carries_the_configs_and_quotes_the_words(self) -> None:
        config = self.tmp.parent / f"{self.tmp.name}.yaml"
        config.write_text("version: 1\n")
        self.addCleanup(config.unlink)
        result = self.launch(["--config", str(config), "--", "printf", "%s", "it's $HOME"])
        self.assertRun(result, 0, b"it's $HOME")
        self.assertEqual(result.stderr.decode(),
                         message("printf", "printf %s 'it'\\''s $HOME'", launcher=f"curlretry --config {config}"))

    def test_quiet_says_nothing(self) -> None:
        result = self.launch(["-q", "--", "true"])
        self.assertRun(result, 0, b"")
        self.assertEqual(result.stderr, b"")

    def test_libcurl_used_by_a_child_counts(self) -> None:
        key = self.key()
        url = self.plain.script_url(key, "200")
        result = self.launch(["--", "sh", "-c", f'"{harness.CURL}" -sS "{url}"'])
        self.assertRun(result, 0, harness.ok_body(key, 1))
        self.assertEqual(result.stderr, b"")

    def test_a_command_that_cannot_run_gets_only_its_error(self) -> None:
        result = self.launch(["--", "curlretry-no-such-command-xyz"])
        self.assertRun(result, 127)
        self.assertEqual(result.stderr, b"curlretry: curlretry-no-such-command-xyz: command not found\n")

    def test_doctor_says_the_same_ahead_of_time(self) -> None:
        result = harness.run([harness.CURLRETRY_BIN, "doctor", "true"], preload=False)
        self.assertRun(result, 4)
        self.assertIn("  next:     curlretry would have nothing to retry: run it through curlretry's local proxy: "
                      "curlretry --proxy -- COMMAND (https:// through HTTPS_PROXY also needs, once: "
                      "curlretry proxy ca)",
                      result.stdout.decode().splitlines(), str(result))

    def test_the_command_keeps_the_pid_and_has_no_extra_child(self) -> None:
        script = "import os\nprint(os.getpid())\ntry:\n    os.waitpid(-1, os.WNOHANG)\nexcept ChildProcessError:\n" \
                 "    print('no children')\n"
        env = harness.environment(False, {"CURLRETRY_LIBRARY": harness.LIB, "TMPDIR": str(self.tmp)})
        proc = subprocess.Popen([harness.CURLRETRY_BIN, "--", harness.PYTHON, "-c", script], env=env,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL)
        out, err = proc.communicate(timeout=harness.DEFAULT_TIMEOUT)
        self.assertEqual((proc.returncode, out.decode()), (0, f"{proc.pid}\nno children\n"), err)
        self.assertEqual(err.decode(), message(os.path.basename(harness.PYTHON),
                                               shell_words([harness.PYTHON, "-c", script])))


if __name__ == "__main__":
    unittest.main()
