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
from harness import ok_body, overloaded_body
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

    def test_curl_through_the_route_is_retried_once_not_twice(self):
        # Issue 26 item 3: the preloaded curl leaves the proxy's give-up alone: the proxy's 3
        # attempts upstream, not 3 x 3 (before: 9 requests, 2 layers of backoff).
        key = self.key()
        result = self.through_proxy("sh", "-c", f"exec {harness.CURL} -q -sS -w ' %{{http_code}}' "
                                                f"\"$FLAKY_BASE_URL/s/{key}/{','.join(['503'] * 12)}\"")
        self.assertRun(result, 0, overloaded_body(key, 3) + b" 503")
        self.assertCount(self.plain, key, 3, result)
        self.assertProxyLines(result)

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


class OwnProxy(harness.UpstreamTestCase):
    """Issue 26: each test its own port, private directory and CA, as a user's first launch."""

    def setUp(self) -> None:
        import tempfile
        d = tempfile.TemporaryDirectory(prefix="curlretry-launcher-proxy-")
        self.addCleanup(d.cleanup)
        self.runtime = d.name
        self.port = free_port()
        self.listen = f"127.0.0.1:{self.port}"
        self.addCleanup(self.stop)

    def stop(self) -> None:
        for port in (self.port, self.moved_port(), *self.beside().values()):
            answer = health(port) if port else None
            if answer:
                os.kill(answer["pid"], signal.SIGTERM)
                wait_for(lambda: not os.path.exists(f"/proc/{answer['pid']}"), 20, "the shared proxy to exit")

    def moved_port(self) -> int | None:
        """The port this test's proxy moved to off a held self.port, as recorded for the next launch."""
        try:
            with open(f"{self.runtime}/curlretry/proxy-127.0.0.1-{self.port}.port") as f:
                return int(f.read())
        except FileNotFoundError:
            return None

    def beside(self) -> dict[str, int]:
        """The proxies recorded beside self.port for other configs: {file stem: port}."""
        out = {}
        for name in os.listdir(f"{self.runtime}/curlretry") if os.path.isdir(f"{self.runtime}/curlretry") else ():
            if name.startswith(f"proxy-127.0.0.1-{self.port}.cfg-") and name.endswith(".port"):
                with open(f"{self.runtime}/curlretry/{name}") as f:
                    out[name[:-len(".port")]] = int(f.read())
        return out

    def write(self, name: str, text: str) -> str:
        path = os.path.join(self.runtime, name)
        with open(path, "w") as f:
            f.write(text)
        return path

    def route_config(self, name: str) -> str:
        return self.write(f"{name}.yaml", f"version: 1\nproxy:\n  routes:\n    {name}: {{upstream: "
                                          f"\"{self.plain.origin}\", env: FLAKY_BASE_URL}}\n")

    def launch(self, *args: str, env: dict[str, str] | None = None) -> harness.Result:
        runtime = {"LD_PRELOAD": harness.PRELOAD_PREFIX} if harness.PRELOAD_PREFIX else {}
        return harness.run([harness.CURLRETRY_BIN, *args], preload=False,
                           env={**runtime, "CURLRETRY_LIBRARY": harness.LIB, "XDG_RUNTIME_DIR": self.runtime,
                                "XDG_DATA_HOME": self.runtime, "HOME": self.runtime, "NO_PROXY": None,
                                "no_proxy": None, "HTTPS_PROXY": None, "https_proxy": None, "HTTP_PROXY": None,
                                "http_proxy": None, **{name: None for name in harness.CA_VARIABLES},
                                "CURLRETRY_BASE_MS": harness.FAST_BASE_MS, **(env or {})})

    def loopback_intercept_config(self, tls: harness.Upstream) -> str:
        """A config intercepting 127.0.0.1, where `tls` (the TLS flaky upstream) listens."""
        return self.write("loop.yaml", "version: 1\nproxy:\n  intercept: [\"127.0.0.1\"]\n"
                                       f"  upstream_ca_file: {tls.cert}\n"
                                       "  forward: {allow_ports: any, allow_loopback: true}\n")

    def fetch_script(self, url: str) -> str:
        """agent.py: python's urllib fetches URL (through the proxy variables it is given) and
        prints the status and the body."""
        return self.write("agent.py", "import urllib.request\n"
                                      f"r = urllib.request.urlopen('{url}')\n"
                                      "print(r.status, r.read().decode(), end='')\n")

    def reason(self, name: str) -> str:
        return (f"; {name} does not load libcurl: its requests to the providers curlretry knows go through the "
                "proxy (HTTPS_PROXY and the local CA; --no-proxy runs it directly)")

    def busy_proxy_with_route_a(self) -> tuple[int, socket.socket]:
        """The shared proxy started with route "a" and carrying one held connection: (pid, that connection)."""
        self.started(self.launch("--proxy", "--listen", self.listen, "--config", self.route_config("a"), "--", "true"))
        held = socket.create_connection(("127.0.0.1", self.port))
        self.addCleanup(held.close)
        wait_for(lambda: health(self.port)["connections"] >= 2, 20, "the held connection to be accepted")
        return health(self.port)["pid"], held

    def started(self, result: harness.Result, how: str = "started", tail: str = "", port: int | None = None,
                stem: str | None = None) -> int:
        """Asserts the launch's last line: the proxy it started on `port` (self.port by default), its
        log named by `stem` (the address's own by default). Returns the proxy's pid."""
        port = port or self.port
        answer = health(port)
        self.assertIsNotNone(answer, str(result))
        log = f"{self.runtime}/curlretry/{stem or f'proxy-127.0.0.1-{self.port}'}.log"
        self.assertEqual(result.stderr.decode().splitlines()[-1],
                         f"curlretry: proxy {how} on http://127.0.0.1:{port} (pid {answer['pid']}, log {log}){tail}",
                         str(result))
        return answer["pid"]


class NeverSilentlyNothing(OwnProxy):
    def test_proxy_with_nothing_to_route_or_intercept_is_an_error(self):
        # Item 2 (before: the proxy started with no routes, the command ran untouched, exit 0).
        if os.path.exists("/etc/curlretry/config.yaml"):
            self.skipTest("a system config would be found")
        result = self.launch("--proxy", "--listen", self.listen, "--", "sh", "-c", "echo ran")
        self.assertEqual((result.code, result.stdout), (125, b""), str(result))
        self.assertEqual(result.stderr.decode(),
                         "curlretry: --proxy: nothing to route or intercept in the config (no config file found): sh "
                         "would run with no retries. Name its provider's host in the config, e.g.\n"
                         "  version: 1\n  proxy:\n    intercept: [\"api.anthropic.com\"]   # through HTTPS_PROXY "
                         "and the local CA\n"
                         "or leave out --proxy: `curlretry -- COMMAND` intercepts the providers curlretry knows\n")
        self.assertIsNone(health(self.port))

    def test_a_running_proxy_with_other_routes_is_restarted_when_idle(self):
        # Item 2 (before: "already running", the route 404'd and the command failed).
        first = self.launch("--proxy", "--listen", self.listen, "--config", self.route_config("a"), "--",
                            "sh", "-c", "echo $FLAKY_BASE_URL")
        pid = self.started(first)
        self.assertEqual(health(self.port)["routes"], ["a"])
        key = self.key()
        script = (f"import os, urllib.request; print(urllib.request.urlopen(os.environ['FLAKY_BASE_URL'] + "
                  f"'/s/{key}/503,200').read().decode(), end='')")
        second = self.launch("--proxy", "--listen", self.listen, "--config", self.route_config("b"), "--",
                             harness.PYTHON, "-c", script)
        self.assertRun(second, 0, ok_body(key, 2))
        self.assertCount(self.plain, key, 2, second)
        again = self.started(second, "restarted", ": the running one had other routes and config files")
        self.assertNotEqual(again, pid)
        self.assertEqual(health(self.port)["routes"], ["b"])
        wait_for(lambda: not os.path.exists(f"/proc/{pid}"), 20, "the replaced proxy to exit")

    def test_other_curlretry_settings_restart_it_the_same_ones_reuse_it(self):
        # Item 2 / issue item 3 (before: CURLRETRY_MAX_ATTEMPTS was silently ignored by the running proxy).
        config = self.route_config("a")
        pid = self.started(self.launch("--proxy", "--listen", self.listen, "--config", config, "--", "true"))
        key = self.key()
        script = (f"import os, urllib.request, urllib.error\ntry:\n  urllib.request.urlopen(os.environ["
                  f"'FLAKY_BASE_URL'] + '/s/{key}/503,503,503,200')\nexcept urllib.error.HTTPError as e:\n"
                  "  print(e.code, end='')\n")
        one = self.launch("--proxy", "--listen", self.listen, "--config", config, "--", harness.PYTHON, "-c", script,
                          env={"CURLRETRY_MAX_ATTEMPTS": "2"})
        self.assertRun(one, 0, b"503")
        self.assertCount(self.plain, key, 2, one)
        self.assertNotEqual(self.started(one, "restarted", ": the running one had other CURLRETRY_* settings"), pid)
        same = self.launch("--proxy", "--listen", self.listen, "--config", config, "--", "true",
                           env={"CURLRETRY_MAX_ATTEMPTS": "2"})
        self.assertEqual((same.code, same.stderr),
                         (0, f"curlretry: proxy already running on http://{self.listen}\n".encode()), str(same))

    def test_a_busy_proxy_with_other_routes_gets_one_beside_it(self):
        # Before: 125, and the command never ran (on the automatic path it ran with no retries).
        pid, held = self.busy_proxy_with_route_a()
        key = self.key()
        script = (f"import os, urllib.request; print(os.environ['FLAKY_BASE_URL']); print(urllib.request.urlopen("
                  f"os.environ['FLAKY_BASE_URL'] + '/s/{key}/503,200').read().decode(), end='')")
        config_b = self.route_config("b")
        result = self.launch("--proxy", "--listen", self.listen, "--config", config_b, "--", harness.PYTHON, "-c",
                             script)
        self.assertEqual(len(self.beside()), 1, str(result))
        [(stem, port)] = self.beside().items()
        answer = health(port)
        self.assertRun(result, 0, f"http://127.0.0.1:{port}/b\n".encode() + ok_body(key, 2))
        self.assertCount(self.plain, key, 2, result)
        busy = (f"your proxy on http://{self.listen} runs with other routes and config files than this launch asks, "
                "and carries 0 transfers on 1 other connection")
        self.started(result, port=port, stem=stem,
                     tail=f": {busy}, so one with this launch's config listens here; the next launch with it finds it")
        self.assertEqual((health(self.port)["pid"], health(self.port)["routes"], answer["routes"]), (pid, ["a"], ["b"]))
        # A bare --ensure gives no command a URL, so it still refuses (a script will use the address).
        bare = self.launch("proxy", "--ensure", "--listen", self.listen, "--config", config_b)
        self.assertEqual((bare.code, bare.stderr.decode()),
                         (125, f"curlretry: {busy}: not restarted under them; run the command again once they are "
                               f"done, stop it with `curlretry proxy --stop --listen {self.listen}`, or choose another "
                               "port with --listen\n"), str(bare))
        # At most four beside one address (each lives until stopped): an idle one makes way for a
        # fifth config; with all four carrying transfers, a fifth is refused.
        for attempts in ("2", "3", "4"):
            more = self.launch("--proxy", "--listen", self.listen, "--config", config_b, "--", "true",
                               env={"CURLRETRY_MAX_ATTEMPTS": attempts})
            self.assertEqual(more.code, 0, str(more))
        four = self.beside()
        self.assertEqual(len(four), 4)
        # b's own carries a connection: the one that makes way is one of the idle three.
        held_b = socket.create_connection(("127.0.0.1", port))
        self.addCleanup(held_b.close)
        wait_for(lambda: health(port)["connections"] >= 2, 20, "the connection to b's proxy to be accepted")
        pids = {health(p)["pid"] for p in four.values()}
        other = busy.replace("routes and config files", "routes, config files and CURLRETRY_* settings")
        fifth = self.launch("--proxy", "--listen", self.listen, "--config", config_b, "--", "true",
                            env={"CURLRETRY_MAX_ATTEMPTS": "5"})
        self.assertEqual(fifth.code, 0, str(fifth))
        self.assertEqual(len(self.beside()), 4, str(fifth))
        [new] = set(self.beside().items()) - set(four.items())
        [gone] = pids - {health(p)["pid"] for p in self.beside().values()}
        self.started(fifth, port=new[1], stem=new[0],
                     tail=f": {other}, so one with this launch's config listens here (in place of an idle one beside "
                          f"it for another config, pid {gone}); the next launch with it finds it")
        wait_for(lambda: not os.path.exists(f"/proc/{gone}"), 20, "the replaced proxy to exit")
        holds = [socket.create_connection(("127.0.0.1", p)) for p in self.beside().values()]
        for h in holds:
            self.addCleanup(h.close)
        wait_for(lambda: all(health(p)["connections"] >= 2 for p in self.beside().values()), 20,
                 "the held connections to be accepted")
        sixth = self.launch("--proxy", "--listen", self.listen, "--config", config_b, "--", "sh", "-c", "echo ran",
                            env={"CURLRETRY_MAX_ATTEMPTS": "6"})
        self.assertEqual((sixth.code, sixth.stdout, sixth.stderr.decode()),
                         (125, b"", f"curlretry: {other}, and the 4 proxies of yours beside it for other configs (the "
                                    "most kept per address) carry transfers too: none started for this one; run the "
                                    "command again once they are done, or stop them all with `curlretry proxy --stop "
                                    f"--listen {self.listen}`\n"), str(sixth))
        for h in (*holds, held_b):
            h.close()
        wait_for(lambda: all(health(p)["connections"] == 1 for p in self.beside().values()), 20,
                 "the held connections to close")
        # The next launch with a config finds its own, even once the address's own is idle again.
        held.close()
        wait_for(lambda: health(self.port)["connections"] == 1, 20, "the held connection to close")
        again = self.launch("--proxy", "--listen", self.listen, "--config", config_b, "--", "true")
        self.assertEqual((again.code, again.stderr.decode()),
                         (0, f"curlretry: proxy already running on http://127.0.0.1:{port}\n"), str(again))
        self.assertEqual(health(self.port)["pid"], pid)
        # --status names them all, --stop stops them all.
        pids = {p: health(p)["pid"] for p in self.beside().values()}
        status = self.launch("proxy", "--status", "--listen", self.listen)
        lines = status.stdout.decode().splitlines()
        self.assertEqual((status.code, lines[0]),
                         (0, f"your proxy on http://{self.listen}: pid {pid}, 0 active transfers, 0 other "
                             "connections, routes [\"a\"]"), str(status))
        self.assertEqual(sorted(lines[1:]), sorted(
            f"your proxy on http://127.0.0.1:{p} (beside {self.listen}, another config): pid {n}, 0 active transfers, "
            "0 other connections, routes [\"b\"]" for p, n in pids.items()), str(status))
        stop = self.launch("proxy", "--stop", "--listen", self.listen)
        lines = stop.stderr.decode().splitlines()
        self.assertEqual((stop.code, lines[0]), (0, f"curlretry: proxy on http://{self.listen} stopped (pid {pid})"),
                         str(stop))
        self.assertEqual(sorted(lines[1:]), sorted(
            f"curlretry: proxy on http://127.0.0.1:{p} (beside {self.listen}, another config) stopped (pid {n})"
            for p, n in pids.items()), str(stop))
        self.assertEqual(self.beside(), {})
        none = self.launch("proxy", "--status", "--listen", self.listen)
        self.assertEqual((none.code, none.stdout.decode()), (3, f"no proxy on http://{self.listen}\n"), str(none))

    def test_a_proxy_beside_it_that_died_is_replaced_and_its_record_dropped(self):
        self.busy_proxy_with_route_a()
        config_b = self.route_config("b")
        first = self.launch("--proxy", "--listen", self.listen, "--config", config_b, "--", "true")
        [(stem, port)] = self.beside().items()
        dead = health(port)["pid"]
        os.kill(dead, signal.SIGKILL)
        wait_for(lambda: not os.path.exists(f"/proc/{dead}"), 20, "the killed proxy to exit")
        self.assertEqual(self.beside(), {stem: port}, str(first))  # a SIGKILL leaves its record
        status = self.launch("proxy", "--status", "--listen", self.listen)
        self.assertEqual(len(status.stdout.decode().splitlines()), 1, str(status))
        self.assertEqual(self.beside(), {}, str(status))
        again = self.launch("--proxy", "--listen", self.listen, "--config", config_b, "--", "true")
        [(stem_again, port_again)] = self.beside().items()
        self.assertEqual(stem_again, stem)
        self.assertEqual(again.stderr.decode().splitlines()[-1].split(" (pid ")[0],
                         f"curlretry: proxy started on http://127.0.0.1:{port_again}", str(again))
        self.assertNotEqual(health(port_again)["pid"], dead)

    def test_status_and_stop_of_the_users_own_proxy(self):
        # Item 4 (before: no such options).
        self.started(self.launch("--proxy", "--listen", self.listen, "--config", self.route_config("a"), "--", "true"))
        pid = health(self.port)["pid"]
        status = self.launch("proxy", "--status", "--listen", self.listen)
        self.assertEqual((status.code, status.stdout.decode()),
                         (0, f"your proxy on http://{self.listen}: pid {pid}, 0 active transfers, 0 other "
                             "connections, routes [\"a\"]\n"), str(status))
        stop = self.launch("proxy", "--stop", "--listen", self.listen)
        self.assertEqual((stop.code, stop.stderr.decode()),
                         (0, f"curlretry: proxy on http://{self.listen} stopped (pid {pid})\n"), str(stop))
        self.assertIsNone(health(self.port))
        wait_for(lambda: not os.path.exists(f"/proc/{pid}"), 20, "the stopped proxy to exit")
        none = self.launch("proxy", "--status", "--listen", self.listen)
        self.assertEqual((none.code, none.stdout.decode()), (3, f"no proxy on http://{self.listen}\n"), str(none))


class WithAToken(OwnProxy):
    """proxy.token shares the proxy with other users; the launch's own COMMAND, handed the proxy's
    URL without it, is its user's and is served as without one (before: every request 407)."""

    TOKEN = "tok-0123456789abcdef"

    def test_a_route_of_a_proxy_with_a_token(self):
        key = self.key()
        config = self.write("token.yaml", f"version: 1\nproxy:\n  token: \"{self.TOKEN}\"\n  routes:\n"
                                          f"    flaky: {{upstream: \"{self.plain.origin}\", env: FLAKY_BASE_URL}}\n")
        script = self.write("agent.py", "import os, urllib.request\n"
                                        f"r = urllib.request.urlopen(os.environ['FLAKY_BASE_URL'] + '/s/{key}/503,200')\n"
                                        "print(r.status, r.read().decode(), end='')\n")
        result = self.launch("--proxy", "--listen", self.listen, "--config", config, "--", harness.PYTHON, script)
        self.assertRun(result, 0, b"200 " + ok_body(key, 2))
        self.assertCount(self.plain, key, 2, result)
        self.started(result)

    def test_an_intercepted_host_of_a_proxy_with_a_token(self):
        tls = self.tls()
        config = self.write("token.yaml", f"version: 1\nproxy:\n  token: \"{self.TOKEN}\"\n"
                                          "  intercept: [\"127.0.0.1\"]\n"
                                          f"  upstream_ca_file: {tls.cert}\n"
                                          "  forward: {allow_ports: any, allow_loopback: true}\n")
        key = self.key()
        script = self.fetch_script(tls.script_url(key, '529,200'))
        result = self.launch("--listen", self.listen, "--config", config, "--", harness.PYTHON, script)
        self.assertRun(result, 0, b"200 " + ok_body(key, 2))
        self.assertCount(tls, key, 2, result)
        self.started(result, tail=self.reason(os.path.basename(harness.PYTHON)))


class ZeroConfig(OwnProxy):
    """Item 1: a command that will not load libcurl goes through the shared proxy by itself."""

    ENV_SCRIPT = ("import os\nfor name in ('HTTPS_PROXY', 'SSL_CERT_FILE', 'NO_PROXY', 'ANTHROPIC_BASE_URL'):\n"
                  "    print(name, os.environ.get(name))\n")

    def test_python_without_pycurl_gets_the_proxy_and_the_ca(self):
        script = self.write("agent.py", self.ENV_SCRIPT)
        result = self.launch("--listen", self.listen, "--", harness.PYTHON, script)
        bundle = f"{self.runtime}/curlretry/ca/bundle.pem"
        self.assertEqual((result.code, result.stdout.decode()),
                         (0, f"HTTPS_PROXY http://{self.listen}\nSSL_CERT_FILE {bundle}\n"
                             "NO_PROXY localhost,127.0.0.1,::1\nANTHROPIC_BASE_URL None\n"), str(result))
        self.assertEqual(result.stderr.decode().splitlines()[0],
                         f"curlretry: proxy: created the local CA in {self.runtime}/curlretry/ca", str(result))
        self.started(result, tail=self.reason(os.path.basename(harness.PYTHON)))
        pid = health(self.port)["pid"]
        quiet = self.launch("-q", "--listen", self.listen, "--", harness.PYTHON, script)
        self.assertEqual((quiet.code, quiet.stderr), (0, b""), str(quiet))
        self.assertEqual(health(self.port)["pid"], pid)  # -q is not another config: the same proxy
        direct = self.launch("--no-proxy", "--", harness.PYTHON, script, env={"HTTPS_PROXY": None})
        self.assertEqual(direct.stdout.decode().splitlines()[0], "HTTPS_PROXY None", str(direct))

    def test_node_is_intercepted_curl_and_sh_keep_the_preload(self):
        problem = node_problem()
        if problem:
            self.skipTest(problem)
        # Node 20's fetch ignores HTTPS_PROXY: a plain Node script (the official SDKs on it) also gets
        # the built-in routes' base URLs, where the user set none.
        script = ("const e = process.env; console.log([e.HTTPS_PROXY, e.NODE_EXTRA_CA_CERTS, e.NODE_USE_ENV_PROXY, "
                  "e.ANTHROPIC_BASE_URL, e.OPENAI_BASE_URL].join(' '))")
        result = self.launch("--listen", self.listen, "--", NODE, "-e", script)
        self.assertEqual((result.code, result.stdout.decode()),
                         (0, f"http://{self.listen} {self.runtime}/curlretry/ca/ca.pem 1 http://{self.listen}/anthropic "
                             f"http://{self.listen}/openai\n"), str(result))
        self.started(result, tail=self.reason(os.path.basename(NODE)))
        self.assertEqual(health(self.port)["routes"], ["anthropic", "openai"])
        mine = self.launch("--listen", self.listen, "--", NODE, "-e", script,
                           env={"ANTHROPIC_BASE_URL": "https://api.z.ai/api/anthropic"})
        self.assertEqual(mine.stdout.decode().split()[3:], ["https://api.z.ai/api/anthropic", f"http://{self.listen}/openai"],
                         str(mine))
        self.assertEqual(mine.stderr.decode().splitlines(),
                         [f"curlretry: proxy already running on http://{self.listen}{self.reason(os.path.basename(NODE))}"])
        # A libcurl program is never routed through the proxy, nor a shell (it may start one).
        key = self.key()
        for command, out in (([harness.CURL, "-q", "-sS", "-o", "/dev/null", "-w", "%{http_code}",
                               self.plain.script_url(key, "503,200")], b"200"),
                             (["sh", "-c", "echo ${HTTPS_PROXY:-none}"], b"none\n")):
            with self.subTest(command=command[0]):
                other = self.launch("--listen", self.listen, "--", *command)
                self.assertEqual((other.code, other.stdout), (125, b""), str(other))
                self.assertIn(b"--listen needs --proxy", other.stderr)
                plain = self.launch("--", *command)
                self.assertEqual((plain.code, plain.stdout), (0, out), str(plain))
                self.assertNotIn(b"curlretry: proxy ", plain.stderr, str(plain))
        self.assertCount(self.plain, key, 2)

    def test_a_port_held_by_something_else_moves_the_proxy(self):
        # Before: the command ran without the proxy (nothing retried) while anything held the port.
        holder = socket.socket()
        self.addCleanup(holder.close)
        holder.bind(("127.0.0.1", self.port))
        holder.listen(8)
        script = self.write("agent.py", self.ENV_SCRIPT)
        result = self.launch("--listen", self.listen, "--", harness.PYTHON, script)
        moved = self.moved_port()
        self.assertIsNotNone(moved, str(result))
        answer = health(moved)
        self.assertIsNotNone(answer, str(result))
        self.assertEqual((result.code, result.stdout.decode().splitlines()[0]),
                         (0, f"HTTPS_PROXY http://127.0.0.1:{moved}"), str(result))
        self.started(result, port=moved,
                     tail=f": {self.listen} answers but is not your curlretry proxy (no answer to the health request), "
                          "so yours listens here; the next launch finds it"
                          f"{self.reason(os.path.basename(harness.PYTHON))}")
        # The next launch finds it there, even once the port is free again: one proxy, not two.
        holder.close()
        again = self.launch("--listen", self.listen, "--", harness.PYTHON, script)
        self.assertEqual((again.code, again.stdout.decode().splitlines()[0]),
                         (0, f"HTTPS_PROXY http://127.0.0.1:{moved}"), str(again))
        self.assertEqual(again.stderr.decode().splitlines(),
                         [f"curlretry: proxy already running on http://127.0.0.1:{moved}"
                          f"{self.reason(os.path.basename(harness.PYTHON))}"], str(again))
        self.assertIsNone(health(self.port))
        stop = self.launch("proxy", "--stop", "--listen", self.listen)
        self.assertEqual((stop.code, stop.stderr.decode()),
                         (0, f"curlretry: proxy on http://127.0.0.1:{moved} (moved from {self.listen}) stopped "
                             f"(pid {answer['pid']})\n"), str(stop))

    def test_a_busy_proxy_of_another_config_gets_one_of_its_own(self):
        # Before: the command ran without the proxy, none of its requests retried.
        pid, _ = self.busy_proxy_with_route_a()
        script = self.write("agent.py", self.ENV_SCRIPT)
        result = self.launch("--listen", self.listen, "--", harness.PYTHON, script)
        self.assertEqual(len(self.beside()), 1, str(result))
        [(stem, port)] = self.beside().items()
        answer = health(port)
        self.assertEqual((result.code, result.stdout.decode().splitlines()[0]),
                         (0, f"HTTPS_PROXY http://127.0.0.1:{port}"), str(result))
        self.started(result, port=port, stem=stem,
                     tail=f": your proxy on http://{self.listen} runs with other routes, intercept list and config files "
                          "than this launch asks, and carries 0 transfers on 1 other connection, so one with this "
                          "launch's config listens here; the next launch with it finds it"
                          f"{self.reason(os.path.basename(harness.PYTHON))}")
        self.assertEqual((answer["routes"], health(self.port)["pid"]), (["anthropic", "openai"], pid))

    def test_a_proxy_of_the_users_own_it_cannot_go_through_is_kept_and_the_command_runs_directly(self):
        # Before: HTTPS_PROXY was replaced by curlretry's proxy, which cannot go through a SOCKS
        # proxy: behind a company proxy that is the only way out, every request then failed. (An
        # http:// one is gone through: test_upstream_proxy.)
        script = self.write("agent.py", self.ENV_SCRIPT)
        own = "socks5://user:s3cret@127.0.0.1:9/"  # never contacted; its password never shown
        cannot = "names a proxy of yours that curlretry's proxy cannot go through (its scheme is socks5://; " \
                 "curlretry's proxy goes through http:// proxies only)"
        # all_proxy: curl's variable for every scheme, the user's proxy when none of the others is set.
        for name in ("HTTPS_PROXY", "http_proxy", "all_proxy"):
            with self.subTest(name=name):
                result = self.launch("--listen", self.listen, "--", harness.PYTHON, script, env={name: own})
                self.assertEqual((result.code, result.stdout.decode().splitlines()[0]),
                                 (0, f"HTTPS_PROXY {own if name == 'HTTPS_PROXY' else None}"), str(result))
                self.assertEqual(result.stderr.decode().splitlines(), [
                    f"curlretry: proxy: {name} {cannot}",
                    f"curlretry: running {harness.PYTHON} without the proxy: none of its requests is retried "
                    "(--no-proxy says so quietly)"], str(result))
        config = self.write("intercept.yaml", "version: 1\nproxy:\n  intercept: [\"api.anthropic.com\"]\n")
        explicit = self.launch("--proxy", "--listen", self.listen, "--config", config, "--", "sh", "-c", "echo ran",
                               env={"HTTPS_PROXY": own})
        self.assertEqual((explicit.code, explicit.stdout, explicit.stderr.decode()),
                         (125, b"", f"curlretry: --proxy: HTTPS_PROXY {cannot}: sh would lose it; unset "
                                    "HTTPS_PROXY for this command where the providers are reachable without it\n"),
                         str(explicit))
        self.assertIsNone(health(self.port))
        # curlretry's own proxy is not the user's: the address this launch ensures (a shell that
        # exports it for every program; the proxy is started when it does not run), or the one a
        # launch above this one set.
        exported = self.launch("--listen", self.listen, "--", harness.PYTHON, script,
                               env={"https_proxy": f"http://localhost:{self.port}/"})
        self.assertEqual((exported.code, exported.stdout.decode().splitlines()[0]),
                         (0, f"HTTPS_PROXY http://{self.listen}"), str(exported))
        self.started(exported, tail=self.reason(os.path.basename(harness.PYTHON)))
        elsewhere = free_port()
        nested = self.launch("--listen", self.listen, "--", harness.PYTHON, script,
                             env={"HTTPS_PROXY": f"http://127.0.0.1:{elsewhere}",
                                  "CURLRETRY_VIA_PROXY": f"127.0.0.1:{elsewhere}"})
        self.assertEqual((nested.code, nested.stdout.decode().splitlines()[0]),
                         (0, f"HTTPS_PROXY http://{self.listen}"), str(nested))

    def test_a_local_ca_that_cannot_be_made_runs_it_directly_and_says_so(self):
        # A service account's HOME (and so ~/.local/share) that cannot be written. Before: exit 1,
        # the command never ran, on the automatic path that promises it runs as it did before.
        nowhere = self.write("not-a-directory", "") + "/home"
        script = self.write("agent.py", self.ENV_SCRIPT)
        result = self.launch("--listen", self.listen, "--", harness.PYTHON, script,
                             env={"HOME": nowhere, "XDG_DATA_HOME": None})
        self.assertEqual((result.code, result.stdout.decode().split("\n")[0]), (0, "HTTPS_PROXY None"), str(result))
        self.assertEqual(result.stderr.decode().splitlines()[-2:], [
            f"curlretry: proxy: cannot create {nowhere}: Not a directory",
            f"curlretry: running {harness.PYTHON} without the proxy: none of its requests is retried (--no-proxy says "
            "so quietly)"], str(result))
        self.assertIsNone(health(self.port))

    def test_no_proxy_entries_covering_an_intercepted_host_do_not_take_the_retries_away(self):
        # A NO_PROXY entry covering a provider host ("127.0.0.1" here, ".anthropic.com" for a
        # user) made the command go around the proxy: the launch retried nothing and said nothing.
        # "*" did too for clients that read it anywhere in a list (undici's EnvHttpProxyAgent;
        # urllib and curl only alone). With no proxy of the user's in play, the entries covering an
        # intercepted host are dropped from COMMAND's NO_PROXY.
        tls = self.tls()
        config = self.loopback_intercept_config(tls)
        script = self.write("agent.py", "import os, sys, urllib.request\n"
                                        "print(os.environ['NO_PROXY'], os.environ['no_proxy'])\n"
                                        "r = urllib.request.urlopen(sys.argv[1])\n"
                                        "print(r.status, r.read().decode(), end='')\n")
        for no_proxy in ("127.0.0.1", "*", "internal.example *,127.0.0.1"):
            with self.subTest(no_proxy=no_proxy):
                key = self.key()
                result = self.launch("--listen", self.listen, "--config", config, "--", harness.PYTHON, script,
                                     tls.script_url(key, "503,200"), env={"NO_PROXY": no_proxy, "no_proxy": no_proxy})
                kept = "internal.example," if no_proxy.startswith("internal") else ""
                self.assertRun(result, 0, f"{kept}localhost,::1 {kept}localhost,::1\n200 ".encode() + ok_body(key, 2))
                self.assertCount(tls, key, 2, result)

    def test_a_proxy_in_claude_codes_settings_is_said(self):
        # Claude Code applies its settings' env over the environment it is given, so a proxy named
        # there takes claude past curlretry's (measured with the real one: HTTPS_PROXY in
        # ~/.claude/settings.json, and claude never reached curlretry's proxy). Before: not a word.
        settings = os.path.join(self.runtime, ".claude", "settings.json")
        os.makedirs(os.path.dirname(settings))
        with open(settings, "w") as f:
            json.dump({"env": {"HTTPS_PROXY": "http://proxy.corp.example:3128"}}, f)
        claude = self.write("claude", f"#!{harness.PYTHON}\nprint('ran')\n")
        os.chmod(claude, 0o755)
        result = self.launch("--listen", self.listen, "--", claude)
        self.assertRun(result, 0, b"ran\n")
        self.assertIn(f"curlretry: proxy: Claude Code's settings file {settings} sets HTTPS_PROXY, which claude uses "
                      "in place of curlretry's proxy: none of its requests is retried (set it in your shell instead: "
                      "curlretry's proxy then reaches the providers through it)", result.stderr.decode().splitlines(),
                      str(result))

    def test_an_intercepted_loopback_upstream_is_retried(self):
        # Items 1 and 5: interception (HTTPS_PROXY + CA variables) of a host the config names on a
        # loopback address (before: 127.0.0.1 always went into NO_PROXY, so the client went direct).
        tls = self.tls()
        config = self.loopback_intercept_config(tls)
        key = self.key()
        script = self.fetch_script(tls.script_url(key, '503,529,200'))
        result = self.launch("--listen", self.listen, "--config", config, "--", harness.PYTHON, script)
        self.assertRun(result, 0, b"200 " + ok_body(key, 3))
        self.assertCount(tls, key, 3, result)
        self.started(result, tail=self.reason(os.path.basename(harness.PYTHON)))
        # A libcurl child through the same interception: the proxy's attempts only (item 3).
        key = self.key("curl")
        curl = self.launch("--proxy", "--listen", self.listen, "--config", config, "--", harness.CURL, "-q", "-sS",
                           "-w", " %{http_code}", tls.script_url(key, ",".join(["503"] * 12)))
        self.assertRun(curl, 0, overloaded_body(key, 3) + b" 503")
        self.assertCount(tls, key, 3, curl)


if __name__ == "__main__":
    unittest.main()
