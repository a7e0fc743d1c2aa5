"""`curlretry --proxy [--listen A] [--config F] -- COMMAND` (issue 15 item 7): the launcher ensures
the one shared proxy (`curlretry proxy --ensure`) and runs COMMAND with each route's `env`
variable pointing at it, the preload still in place for COMMAND's libcurl children. Real
processes: the launcher, the background proxy, Node's fetch, Python's urllib and curl against the
flaky upstream. Bad combinations of launcher flags are usage errors (125) and start nothing.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import unittest
import urllib.request

import harness
from harness import ok_body
from proxy_support import NODE, node_problem, wait_for


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def health(port: int) -> dict | None:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/_curlretry/health", timeout=5) as response:
            return json.loads(response.read())
    except OSError:
        return None


def usage(problem: str) -> bytes:
    return (f"curlretry: {problem}\n"
            "Usage: curlretry [-n N] [--base-ms MS] [--max-delay-ms MS] [--jitter KIND] [-q|-v] [--log-file F] "
            "[--events F] [--config F]... [--] COMMAND [ARGS...]\n"
            "       curlretry --proxy [--listen HOST:PORT] [--config F]... [--] COMMAND [ARGS...]\n"
            "       curlretry SUBCOMMAND [OPTIONS] [ARGS...]\n"
            "Run 'curlretry --help' for more.\n").encode()


class LauncherProxy(harness.UpstreamTestCase):
    """One shared proxy per class, started by the first launch that needs it, like a user's."""

    @classmethod
    def setUpClass(cls) -> None:
        super().setUpClass()
        problem = harness.library_problem()
        if problem:
            raise AssertionError(problem)
        cls.port = free_port()
        cls.runtime = cls.class_dir()
        cls.config = os.path.join(cls.runtime, "config.yaml")
        with open(cls.config, "w") as f:
            f.write(f"version: 1\nproxy:\n  routes:\n    flaky: {{upstream: \"{cls.plain.origin}\", "
                    "env: FLAKY_BASE_URL}\n")
        cls.addClassCleanup(cls.stop_shared_proxy)

    @classmethod
    def class_dir(cls) -> str:
        import tempfile
        d = tempfile.TemporaryDirectory(prefix="curlretry-launcher-proxy-")
        cls.addClassCleanup(d.cleanup)
        return d.name

    @classmethod
    def stop_shared_proxy(cls) -> None:
        answer = health(cls.port)
        if answer:
            os.kill(answer["pid"], signal.SIGTERM)
            wait_for(lambda: not os.path.exists(f"/proc/{answer['pid']}"), 20, "the shared proxy to exit")

    def launch(self, *args: str, env: dict[str, str] | None = None) -> harness.Result:
        # The shared proxy inherits this environment: fast retries and no fleet budget, as the
        # other proxy tests run it (proxy_support.Proxy).
        # Under the sanitizer presets the launcher's children must get the sanitizer runtime
        # preloaded too: the instrumented library alone, loaded into node, calls an interceptor
        # that was never resolved (ASan SEGV at pc 0).
        runtime = {"LD_PRELOAD": harness.PRELOAD_PREFIX} if harness.PRELOAD_PREFIX else {}
        return harness.run([harness.CURLRETRY_BIN, *args], preload=False,
                           env={**runtime, "CURLRETRY_LIBRARY": harness.LIB, "XDG_RUNTIME_DIR": self.runtime,
                                "CURLRETRY_BASE_MS": harness.FAST_BASE_MS, **(env or {})})

    def through_proxy(self, *command: str) -> harness.Result:
        return self.launch("--proxy", "--listen", f"127.0.0.1:{self.port}", "--config", self.config, "--", *command)

    def assertProxyLines(self, result: harness.Result) -> None:
        # Exactly one line from --ensure (started or found), and nothing from the reach watcher.
        lines = result.stderr.decode().splitlines()
        self.assertEqual(len(lines), 1, str(result))
        self.assertRegex(lines[0],
                         rf"^curlretry: proxy (started on|already running on) http://127\.0\.0\.1:{self.port}",
                         str(result))

    def test_node_fetch_through_the_route_is_retried(self):
        problem = node_problem()
        if problem:
            self.skipTest(problem)
        key = self.key()
        script = (f"fetch(process.env.FLAKY_BASE_URL + '/s/{key}/503,503,200')"
                  ".then(r => r.text().then(t => process.stdout.write(r.status + ' ' + t)))")
        result = self.through_proxy(NODE, "-e", script)
        self.assertRun(result, 0, b"200 " + ok_body(key, 3))
        self.assertCount(self.plain, key, 3, result)
        self.assertProxyLines(result)

    def test_python_urllib_through_the_route_is_retried(self):
        key = self.key()
        script = ("import os, urllib.request\n"
                  f"r = urllib.request.urlopen(os.environ['FLAKY_BASE_URL'] + '/s/{key}/503,503,200')\n"
                  "print(r.status, r.read().decode(), end='')\n")
        result = self.through_proxy(harness.PYTHON, "-c", script)
        self.assertRun(result, 0, b"200 " + ok_body(key, 3))
        self.assertCount(self.plain, key, 3, result)
        self.assertProxyLines(result)
        self.assertEqual(health(self.port)["routes"], ["flaky"])

    def test_libcurl_children_keep_the_preload(self):
        # curl straight at the upstream, not through the proxy: the preload retries it.
        key = self.key()
        result = self.through_proxy(harness.CURL, "-q", "-sS", self.plain.script_url(key, "503,200"))
        self.assertRun(result, 0, ok_body(key, 2))
        self.assertCount(self.plain, key, 2, result)

    def test_the_command_keeps_its_exit_status(self):
        result = self.through_proxy("sh", "-c", "exit 7")
        self.assertRun(result, 7, b"")
        self.assertProxyLines(result)

    def test_the_run_form_takes_it_too(self):
        key = self.key()
        script = f"import os, urllib.request; print(urllib.request.urlopen(os.environ['FLAKY_BASE_URL'] + " \
                 f"'/s/{key}/503,200').read().decode(), end='')"
        result = self.launch("run", "--proxy", "--listen", f"127.0.0.1:{self.port}", "--config", self.config,
                             harness.PYTHON, "-c", script)
        self.assertRun(result, 0, ok_body(key, 2))
        self.assertCount(self.plain, key, 2, result)


class SeveralConfigs(unittest.TestCase):
    def test_every_config_file_reaches_the_proxy(self):
        # The launcher's --config files reach curlretry-proxy as one list: both files' routes.
        import tempfile
        d = tempfile.TemporaryDirectory(prefix="curlretry-launcher-proxy-")
        self.addCleanup(d.cleanup)
        port = free_port()
        files = []
        for name in ("a", "b"):
            files += ["--config", os.path.join(d.name, f"{name}.yaml")]
            with open(files[-1], "w") as f:
                f.write(f"version: 1\nproxy:\n  routes:\n    {name}: {{upstream: \"http://127.0.0.1:9\", "
                        f"env: {name.upper()}_URL}}\n")
        result = harness.run([harness.CURLRETRY_BIN, "--proxy", "--listen", f"127.0.0.1:{port}", *files, "--",
                              "sh", "-c", "echo $A_URL $B_URL"], preload=False,
                             env={"CURLRETRY_LIBRARY": harness.LIB, "XDG_RUNTIME_DIR": d.name})
        answer = health(port)
        if answer:
            self.addCleanup(lambda: (os.kill(answer["pid"], signal.SIGTERM), wait_for(
                lambda: not os.path.exists(f"/proc/{answer['pid']}"), 20, "the shared proxy to exit")))
        self.assertEqual((result.code, result.stdout.decode()),
                         (0, f"http://127.0.0.1:{port}/a http://127.0.0.1:{port}/b\n"), str(result))
        self.assertEqual(answer["routes"], ["a", "b"])


class BadCombinations(unittest.TestCase):
    """Usage errors of the launcher: 125, its Usage lines, and no proxy started."""

    def setUp(self) -> None:
        import tempfile
        d = tempfile.TemporaryDirectory(prefix="curlretry-launcher-proxy-")
        self.addCleanup(d.cleanup)
        self.runtime = d.name
        self.port = free_port()

    def launch(self, *args: str) -> harness.Result:
        return harness.run([harness.CURLRETRY_BIN, *args], preload=False,
                           env={"CURLRETRY_LIBRARY": harness.LIB, "XDG_RUNTIME_DIR": self.runtime})

    def assertNothingStarted(self, result: harness.Result) -> None:
        self.assertEqual(os.listdir(self.runtime), [], str(result))
        self.assertIsNone(health(self.port), str(result))

    def test_a_policy_flag_with_proxy(self):
        for flag, args in [("-n", ["-n", "3"]), ("--base-ms", ["--base-ms", "10"]), ("-q", ["-q"]),
                           ("-v", ["-v"]), ("--events", ["--events", "/tmp/x.jsonl"])]:
            with self.subTest(flag=flag):
                result = self.launch("--proxy", "--listen", f"127.0.0.1:{self.port}", *args, "--", "true")
                self.assertEqual((result.code, result.stdout), (125, b""), str(result))
                self.assertEqual(result.stderr, usage(f"--proxy and {flag} cannot be used together: the shared "
                                                      "proxy takes its settings from its config file (--config F)"))
                self.assertNothingStarted(result)

    def test_listen_without_proxy(self):
        result = self.launch("--listen", f"127.0.0.1:{self.port}", "--", "true")
        self.assertEqual((result.code, result.stdout), (125, b""), str(result))
        self.assertEqual(result.stderr, usage("--listen needs --proxy (it names the shared proxy's address)"))
        self.assertNothingStarted(result)

    def test_proxy_without_a_command(self):
        result = self.launch("--proxy", "--listen", f"127.0.0.1:{self.port}")
        self.assertEqual((result.code, result.stderr), (125, usage("no command to run")), str(result))
        self.assertNothingStarted(result)

    def test_a_bad_config_is_the_launchers_error(self):
        config = os.path.join(self.runtime, "bad.yaml")
        with open(config, "w") as f:
            f.write("version: 1\nproxy:\n  routes:\n    flaky: {upstream: 3}\n")
        result = self.launch("--proxy", "--listen", f"127.0.0.1:{self.port}", "--config", config, "--", "true")
        self.assertEqual((result.code, result.stdout), (125, b""), str(result))
        self.assertTrue(result.stderr.startswith(f"curlretry: {config}:4:".encode()), str(result))
        os.unlink(config)
        self.assertNothingStarted(result)


if __name__ == "__main__":
    unittest.main()
