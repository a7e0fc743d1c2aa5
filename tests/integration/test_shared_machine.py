"""Safe on a shared machine (issue 24, findings 1, 2 and the --ensure part of 8): the launcher
trusts only its own proxy, private state lives in one owner-checked directory opened without
following links, and log lines escape what the network or the program chose.

Real processes and real users: the attacker is a second local user made with `useradd` (removed
afterwards, also when a test fails) running a fake health server or planting a directory; the
victim is the launcher `curlretry --proxy -- COMMAND`, as root or as a third local user.
"""

from __future__ import annotations

import json
import os
import pwd
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import textwrap
import threading
import unittest
from pathlib import Path

import harness
from local_users import FAKE_HEALTH, LocalUsers, needs_root
from proxy_support import Proxy, raw_exchange, wait_for

SECRET_KEY = "sk-ant-curlretry-test-0123456789"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def listening(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1):
            return True
    except OSError:
        return False


class Scripted:
    """A loopback server answering the i-th request with answers[i] (the last one after that) and
    keeping every request head it read; any method and path are taken, as a hostile peer's are."""

    def __init__(self, test: unittest.TestCase, answers: list[bytes], port: int = 0):
        self.answers = answers
        self.received: list[bytes] = []
        self.server = socket.socket()
        self.server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.server.bind(("127.0.0.1", port))
        self.server.listen(16)
        self.server.settimeout(0.2)
        self.port = self.server.getsockname()[1]
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self.serve, daemon=True)
        self.thread.start()
        test.addCleanup(lambda: (self.stop.set(), self.thread.join(5), self.server.close()))

    def serve(self) -> None:
        while not self.stop.is_set():
            try:
                conn, _ = self.server.accept()
            except OSError:
                continue
            with conn:
                conn.settimeout(2)
                data = b""
                try:
                    while b"\r\n\r\n" not in data:
                        chunk = conn.recv(4096)
                        if not chunk:
                            break
                        data += chunk
                    self.received.append(data)
                    conn.sendall(self.answers[min(len(self.received), len(self.answers)) - 1])
                except OSError:
                    pass


def answer(status: str, body: bytes) -> bytes:
    return b"HTTP/1.1 %s\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s" % (status.encode(), len(body), body)


HEALTH_OK = answer("200 OK", b'{"status":"ok","pid":1,"routes":["flaky"]}\n')


def stop_proxies_on(port: int) -> None:
    """SIGTERM to every curlretry-proxy this test's launches started for `port` (found by their
    exact --listen argument, a port only this test uses, or the record of the port they moved to),
    then waits for them to exit."""
    mine = []
    for entry in os.listdir("/proc"):
        try:
            args = Path(f"/proc/{entry}/cmdline").read_bytes().split(b"\0")
        except (FileNotFoundError, ProcessLookupError, NotADirectoryError, PermissionError):
            continue
        # A proxy that moved off a held port listens on 127.0.0.1:0 and records where in PROXY.port;
        # one beside it for another config records STEM.cfg-ID.port.
        moved = any(re.search(rf"/proxy-127\.0\.0\.1-{port}(\.cfg-[0-9a-f]{{12}})?\.port$".encode(), a) for a in args)
        if args[:1] == [b"curlretry-proxy"] and (f"127.0.0.1:{port}".encode() in args or moved) \
                and b"--ensure" not in args:
            mine.append(int(entry))
    for pid in mine:
        try:
            os.kill(pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
    wait_for(lambda: not any(os.path.exists(f"/proc/{pid}/cmdline") and Path(f"/proc/{pid}/cmdline").read_bytes()
                             for pid in mine), 20, "the proxies to exit")


def launcher_env(runtime: str | None) -> dict[str, str | None]:
    prefix = {"LD_PRELOAD": harness.PRELOAD_PREFIX} if harness.PRELOAD_PREFIX else {}
    return {**prefix, "CURLRETRY_LIBRARY": harness.LIB, "XDG_RUNTIME_DIR": runtime,
            "CURLRETRY_BASE_MS": harness.FAST_BASE_MS, "HTTPS_PROXY": None, "https_proxy": None,
            "HTTP_PROXY": None, "http_proxy": None}


# The command the victim runs: would send the API key to the route's URL, and says what it got.
def victim_command() -> list[str]:
    return ["sh", "-c", f'echo "URL=$FLAKY_BASE_URL"; {harness.CURL} -q -sS -m 5 -H "x-api-key: {SECRET_KEY}" '
                        '"$FLAKY_BASE_URL/v1/messages"']


class LauncherTrustsOnlyItsOwnProxy(unittest.TestCase):
    def setUp(self) -> None:
        problem = harness.library_problem()
        if problem:
            raise AssertionError(problem)
        d = tempfile.TemporaryDirectory(prefix="curlretry-shared-")
        self.addCleanup(d.cleanup)
        self.dir = Path(d.name)
        self.runtime = self.dir / "runtime"
        self.runtime.mkdir(mode=0o700)
        self.port = free_port()
        self.addCleanup(stop_proxies_on, self.port)
        self.config = self.dir / "config.yaml"
        self.config.write_text("version: 1\nproxy:\n  routes:\n    flaky: {upstream: \"http://127.0.0.1:9\", "
                               "env: FLAKY_BASE_URL}\n")

    def launch(self, *command: str, config: Path | None = None) -> harness.Result:
        return harness.run([harness.CURLRETRY_BIN, "--proxy", "--listen", f"127.0.0.1:{self.port}", "--config",
                            str(config or self.config), "--", *command], preload=False,
                           env=launcher_env(str(self.runtime)))

    def assert_moved(self, result: harness.Result, held: str, tail: bytes = b"") -> int:
        """The launch ran its command through a proxy of ours on a port of its own, recorded for the
        next launch, and said why in one line; returns that port."""
        record = self.runtime / "curlretry" / f"proxy-127.0.0.1-{self.port}.port"
        self.assertTrue(record.exists(), str(result))
        moved = int(record.read_text())
        self.assertNotEqual(moved, self.port)
        self.assertEqual((result.code, result.stdout), (0, f"URL=http://127.0.0.1:{moved}/flaky\n".encode() + tail),
                         str(result))
        self.assertEqual(result.stderr.decode(),
                         f"curlretry: proxy started on http://127.0.0.1:{moved} (pid {self.proxy_pid(port=moved)}, log "
                         f"{self.runtime}/curlretry/proxy-127.0.0.1-{self.port}.log): 127.0.0.1:{self.port} {held}, "
                         "so yours listens here; the next launch finds it\n")
        again = self.launch("sh", "-c", "echo URL=$FLAKY_BASE_URL")
        self.assertEqual((again.code, again.stdout, again.stderr),
                         (0, f"URL=http://127.0.0.1:{moved}/flaky\n".encode(),
                          f"curlretry: proxy already running on http://127.0.0.1:{moved}\n".encode()), str(again))
        return moved

    @needs_root
    def test_another_users_listener_gets_nothing_and_the_proxy_moves(self):
        users = LocalUsers(self)
        attacker = users.make("attacker")
        drop = self.dir / "drop"
        drop.mkdir()
        os.chown(drop, attacker.pw_uid, attacker.pw_gid)
        os.chmod(self.dir, 0o755)
        script = self.dir / "fake.py"
        script.write_text(FAKE_HEALTH)
        seen = drop / "seen"
        fake = users.start(attacker, harness.PYTHON, str(script), str(self.port), str(seen))
        wait_for(lambda: fake.poll() is not None or os.path.exists(f"{seen}.ready"), 20, "the fake server")
        if fake.poll() is not None:
            self.fail(f"the fake server exited {fake.returncode}: {fake.stderr.read()!r}")
        # Before: exit 1, the command not run; a squatted port cost the user their retries.
        moved = self.assert_moved(self.launch("sh", "-c", "echo URL=$FLAKY_BASE_URL"),
                                  f"is held by uid {attacker.pw_uid} ({attacker.pw_name}), not by you")
        # The kernel named the owner before a byte was sent: not even a health request arrived.
        self.assertEqual(seen.read_bytes() if seen.exists() else b"", b"")
        # Whoever asks for the address itself (no COMMAND to hand another URL) is still refused.
        alone = harness.run([harness.CURLRETRY_BIN, "proxy", "--ensure", "--listen", f"127.0.0.1:{self.port}", "--config",
                             str(self.config)], preload=False, env=launcher_env(str(self.runtime)))
        self.assertEqual((alone.code, alone.stderr.decode()),
                         (1, f"curlretry: proxy --ensure: 127.0.0.1:{self.port} is held by uid {attacker.pw_uid} "
                             f"({attacker.pw_name}), not by you (uid 0): it is not your curlretry proxy, and the "
                             "command is not given its URL; stop it or choose another port with --listen\n"),
                         str(alone))
        status = harness.run([harness.CURLRETRY_BIN, "proxy", "--status", "--listen", f"127.0.0.1:{self.port}"], preload=False,
                             env=launcher_env(str(self.runtime)))
        self.assertEqual(status.code, 0, str(status))
        self.assertRegex(status.stdout.decode(),
                         rf"^your proxy on http://127\.0\.0\.1:{moved} \(moved from 127\.0\.0\.1:{self.port}\): "
                         rf"pid {self.proxy_pid(port=moved)}, ")
        self.assertEqual(seen.read_bytes() if seen.exists() else b"", b"")

    def test_a_listener_of_the_same_user_that_is_not_ours_gets_no_key_and_the_proxy_moves(self):
        # Root's own plain server answering {"status":"ok"}: the kernel says it is ours, but it
        # cannot prove the secret, so it gets one health request (with a nonce) and no key.
        impostor = Scripted(self, [HEALTH_OK], self.port)
        received = impostor.received
        # The key went to the proxy of ours, which found nothing on the route's upstream.
        self.assert_moved(self.launch(*victim_command()),
                          "answers but is not your curlretry proxy (its health answer does not prove the secret)",
                          b'{"error":"curlretry proxy","detail":"Couldn\'t connect to server"}\n')
        self.assertEqual(len(received), 1, received)
        self.assertRegex(received[0], rb"^GET /_curlretry/health HTTP/1\.1\r\n")
        self.assertRegex(received[0], rb"\r\nX-Curlretry-Nonce: [0-9a-f]{64}\r\n")
        self.assertNotIn(SECRET_KEY.encode(), b"".join(received))

    def test_a_proxy_with_a_token_is_found_healthy(self):
        # Finding 8: --ensure sends proxy.token with its health request (before: 407, 20 s, failure).
        config = self.dir / "token.yaml"
        config.write_text("version: 1\nproxy:\n  token: tok-0123456789abcdef\n  routes:\n"
                          "    flaky: {upstream: \"http://127.0.0.1:9\", env: FLAKY_BASE_URL}\n")
        first = self.launch("sh", "-c", "echo $FLAKY_BASE_URL", config=config)
        pid = self.proxy_pid(b"tok-0123456789abcdef")
        self.assertEqual((first.code, first.stdout), (0, f"http://127.0.0.1:{self.port}/flaky\n".encode()),
                         str(first))
        self.assertRegex(first.stderr.decode(), rf"^curlretry: proxy started on http://127\.0\.0\.1:{self.port} ")
        self.assertLess(first.elapsed, 15, str(first))
        second = self.launch("sh", "-c", "echo $FLAKY_BASE_URL", config=config)
        self.assertEqual((second.code, second.stderr),
                         (0, f"curlretry: proxy already running on http://127.0.0.1:{self.port}\n".encode()),
                         str(second))
        self.assertEqual(self.proxy_pid(b"tok-0123456789abcdef"), pid)

    def test_private_files_are_0600_in_a_0700_directory(self):
        result = self.launch("true")
        pid = self.proxy_pid()
        self.assertEqual(result.code, 0, str(result))
        state = self.runtime / "curlretry"
        self.assertEqual(os.stat(state).st_mode & 0o7777, 0o700)
        names = sorted(os.listdir(state))
        self.assertEqual(names, sorted(["proxy.secret", f"proxy-127.0.0.1-{self.port}.lock",
                                        f"proxy-127.0.0.1-{self.port}.log"]) + names[3:], names)
        for name in ("proxy.secret", f"proxy-127.0.0.1-{self.port}.lock", f"proxy-127.0.0.1-{self.port}.log"):
            self.assertEqual(os.stat(state / name).st_mode & 0o7777, 0o600, name)
        self.assertRegex((state / "proxy.secret").read_text(), r"^[0-9a-f]{64}\n$")
        self.assertTrue(pid)

    def proxy_pid(self, token: bytes | None = None, port: int | None = None) -> int:
        """The pid of the proxy on PORT (self.port by default; stopped at cleanup), from its health answer."""
        auth = b"Proxy-Authorization: Bearer " + token + b"\r\n" if token else b""
        answer = raw_exchange(port or self.port, b"GET /_curlretry/health HTTP/1.1\r\nHost: x\r\n" + auth +
                              b"Connection: close\r\n\r\n")
        if not answer.startswith(b"HTTP/1.1 200 "):
            return 0
        pid = json.loads(answer.split(b"\r\n\r\n", 1)[1])["pid"]

        def stop():
            try:
                os.kill(pid, signal.SIGTERM)
            except ProcessLookupError:
                return
            wait_for(lambda: not os.path.exists(f"/proc/{pid}"), 20, "the shared proxy to exit")
        self.addCleanup(stop)
        return pid


class PrivateStateDirectory(harness.UpstreamTestCase):
    """Finding 2: with no XDG_RUNTIME_DIR the fallback /dev/shm/curlretry-$UID is a name anyone
    can take first. The victim is a third user, so the test never touches root's own directory."""

    def plant(self, with_home: bool) -> tuple[dict, Path, Path, int]:
        """A victim (with a home of its own, or none) and the attacker's directory at both names
        the victim's state may fall back to, with a link to the victim's startup file in it."""
        problem = harness.library_problem()
        if problem:
            raise AssertionError(problem)
        users = LocalUsers(self)
        attacker = users.make("attacker")
        victim = users.make("victim")
        d = tempfile.TemporaryDirectory(prefix="curlretry-victim-")
        self.addCleanup(d.cleanup)
        home = Path(d.name)
        os.chmod(home, 0o755)
        bashrc = home / "bashrc"
        bashrc.write_text("# the victim's shell startup file\n")
        config = home / "config.yaml"
        config.write_text("version: 1\nproxy:\n  routes:\n    flaky: {upstream: \"http://127.0.0.1:9\", "
                          "env: FLAKY_BASE_URL}\n")
        for path in (home, bashrc, config):
            os.chown(path, victim.pw_uid, victim.pw_gid)
        port = free_port()
        # Both fallbacks a victim's launcher may use (/tmp is main's before the fix, /dev/shm now).
        planted = Path(f"/dev/shm/curlretry-{victim.pw_uid}")
        for where in (planted, Path(f"/tmp/curlretry-{victim.pw_uid}")):
            self.addCleanup(shutil.rmtree, where, True)
            shutil.rmtree(where, True)
            plant = subprocess.run(["runuser", "-u", attacker.pw_name, "--", "sh", "-c",
                                    f"mkdir -m 777 {where} && ln -s {bashrc} {where}/proxy-127.0.0.1-{port}.log"],
                                   capture_output=True)
            self.assertEqual(plant.returncode, 0, plant.stderr)
        self.addCleanup(stop_proxies_on, port)
        env = {k: v for k, v in launcher_env(None).items() if v is not None}
        # runuser sets HOME to the passwd entry's, which useradd -M never made: no home of its own.
        env["HOME"] = str(home) if with_home else f"/home/{victim.pw_name}"
        env["XDG_CONFIG_HOME"] = f"{env['HOME']}/.config"  # the harness's empty one is root's
        self.victim, self.attacker, self.bashrc, self.config = victim, attacker, bashrc, config
        return env, home, planted, port

    def as_victim(self, env: dict, *cmd: str) -> harness.Result:
        # The default places, not the per-module fleet directory the harness gives root's tests.
        return harness.run(["runuser", "-u", self.victim.pw_name, "--", "env", "-u", "XDG_RUNTIME_DIR", "-u",
                            "CURLRETRY_FLEET_DIR",
                            *[f"{k}={v}" for k, v in env.items()], *cmd], preload=False, env={"XDG_RUNTIME_DIR": None})

    @needs_root
    def test_a_planted_directory_is_never_used_and_a_home_takes_its_place(self):
        env, home, planted, port = self.plant(with_home=True)
        result = self.as_victim(env, harness.CURLRETRY_BIN, "--proxy", "--listen", f"127.0.0.1:{port}", "--config",
                                str(self.config), "--", "sh", "-c", "echo URL=$FLAKY_BASE_URL")
        private = home / f".curlretry-{socket.gethostname()}"
        self.assertEqual(self.bashrc.read_text(), "# the victim's shell startup file\n", str(result))
        # Before: exit 1, the command not run (the proxy refused the planted directory).
        self.assertEqual((result.code, result.stdout), (0, f"URL=http://127.0.0.1:{port}/flaky\n".encode()),
                         str(result))
        self.assertRegex(result.stderr.decode(),
                         rf"^curlretry: proxy started on http://127\.0\.0\.1:{port} \(pid \d+, log "
                         rf"{private}/proxy-127\.0\.0\.1-{port}\.log\)\n$")
        st = os.stat(private)
        self.assertEqual((st.st_uid, st.st_mode & 0o7777), (self.victim.pw_uid, 0o700))
        self.assertEqual(sorted(os.listdir(planted)), [f"proxy-127.0.0.1-{port}.log"])
        # The fleet too (before: "the fleet directory ... belongs to uid ...; this process retries
        # on its own"): curl's retry is decided with the table in the home, and says nothing else.
        key = self.key()
        preload = ":".join(p for p in (harness.PRELOAD_PREFIX, harness.LIB) if p)
        fetched = self.as_victim({**env, "LD_PRELOAD": preload}, harness.CURL, "-q", "-sS",
                                 self.plain.script_url(key, "503,200"))
        self.assertRun(fetched, 0, harness.ok_body(key, 2))
        shown = f"GET 127.0.0.1:{self.plain.port}/s/{key}/503,200"
        self.assertEqual(fetched.stderr.decode().splitlines(),
                         [f"curlretry: {shown} -> HTTP 503: retrying in {harness.FAST_BASE_MS} ms (attempt 1/3)",
                          f"curlretry: {shown} -> HTTP 200 after 2 attempts"], str(fetched))
        self.assertTrue([n for n in os.listdir(private) if n.startswith("table-")], os.listdir(private))
        self.assertEqual(sorted(os.listdir(planted)), [f"proxy-127.0.0.1-{port}.log"])

    @needs_root
    def test_a_planted_directory_without_a_home_of_ones_own_is_refused_and_the_link_not_followed(self):
        env, _, planted, port = self.plant(with_home=False)
        result = self.as_victim(env, harness.CURLRETRY_BIN, "--proxy", "--listen", f"127.0.0.1:{port}", "--config",
                                str(self.config), "--", "sh", "-c", "echo URL=$FLAKY_BASE_URL")
        self.assertEqual(self.bashrc.read_text(), "# the victim's shell startup file\n", str(result))
        self.assertEqual((result.code, result.stdout), (1, b""), str(result))
        self.assertEqual(result.stderr.decode(),
                         f"curlretry: proxy --ensure: {planted} belongs to uid {self.attacker.pw_uid}, not to you "
                         f"(uid {self.victim.pw_uid}); refusing it: have user {self.attacker.pw_name} (or root) "
                         "remove it\n")
        self.assertEqual(sorted(os.listdir(planted)), [f"proxy-127.0.0.1-{port}.log"])
        self.assertFalse(listening(port))


class FilesNamedInADirectoryAnyoneCanWriteTo(harness.UpstreamTestCase):
    """A log file, an attempt log or a --port-file the user names in /tmp (or any directory
    anyone can write to): another local user can plant a link at that name to a file of the
    victim's, or a file of their own that collects the victim's lines, before the victim's
    program opens it. This machine has fs.protected_symlinks and fs.protected_regular off, as
    many containers do, so the kernel does not refuse either. Nothing goes through the link or
    into the planted file; the program's request is retried all the same; one line says why."""

    def shared_dir(self) -> Path:
        # What /tmp is: root's, mode 1777.
        d = tempfile.TemporaryDirectory(prefix="curlretry-shared-")
        self.addCleanup(d.cleanup)
        os.chmod(d.name, 0o1777)
        return Path(d.name)

    def victims_file(self) -> Path:
        private = self.temp_dir()
        os.chmod(private, 0o755)  # the attacker may not even read it: links need no access
        target = private / "profile"
        target.write_text("# the victim's shell startup file\n")
        return target

    def plant(self, attacker: pwd.struct_passwd, script: str) -> None:
        planted = subprocess.run(["runuser", "-u", attacker.pw_name, "--", "sh", "-c", script], capture_output=True)
        self.assertEqual(planted.returncode, 0, planted.stderr)

    @needs_root
    def test_a_planted_link_and_a_planted_file_get_none_of_the_lines(self):
        attacker = LocalUsers(self).make("attacker")
        shared = self.shared_dir()
        target = self.victims_file()
        events, log = shared / "attempts.jsonl", shared / "curlretry.log"
        self.plant(attacker, f"ln -s {target} {events} && : > {log} && chmod 666 {log}")
        key = self.key()
        result = harness.curl(["-sS", self.plain.script_url(key, "503,200")], preload=True,
                              env={"CURLRETRY_EVENTS": str(events), "CURLRETRY_LOG_FILE": str(log)})
        self.assertRun(result, 0, harness.ok_body(key, 2))
        self.assertCount(self.plain, key, 2, result)
        self.assertEqual(target.read_text(), "# the victim's shell startup file\n", str(result))
        self.assertEqual(log.read_bytes(), b"", str(result))
        shown = f"GET 127.0.0.1:{self.plain.port}/s/{key}/503,200"
        anyone = "in a directory anyone can write to"
        self.assertEqual(sorted(result.stderr.decode().splitlines()), sorted([
            f"curlretry: cannot open the log file {log} (a file owned by uid {attacker.pw_uid} {anyone}: "
            "not written to, another user may have put it there); logging to stderr instead",
            f"curlretry: events file {events}: cannot open (a symbolic link owned by uid {attacker.pw_uid} {anyone}: "
            "not followed, another user may have put it there); no attempt log for this process",
            f"curlretry: {shown} -> HTTP 503: retrying in {harness.FAST_BASE_MS} ms (attempt 1/3)",
            f"curlretry: {shown} -> HTTP 200 after 2 attempts"]), str(result))

    @needs_root
    def test_ones_own_link_there_is_followed_and_ones_own_file_written(self):
        # What the kernel's own rules allow stays allowed: a link of the user's in a sticky
        # directory (nobody else can replace it), a file of the user's.
        shared = self.shared_dir()
        target = self.temp_dir() / "events.jsonl"
        events, log = shared / "mine.jsonl", shared / "mine.log"
        events.symlink_to(target)
        log.write_bytes(b"")
        key = self.key()
        result = harness.curl(["-sS", self.plain.script_url(key, "503,200")], preload=True,
                              env={"CURLRETRY_EVENTS": str(events), "CURLRETRY_LOG_FILE": str(log)})
        self.assertRun(result, 0, harness.ok_body(key, 2))
        self.assertEqual(result.stderr, b"", str(result))
        attempts = [json.loads(line) for line in target.read_text().splitlines()]
        self.assertEqual([a["attempt"] for a in attempts], [1, 2], target.read_text())
        self.assertEqual(len(log.read_text().splitlines()), 2, log.read_text())

    @needs_root
    def test_a_config_another_user_can_change_is_not_read(self):
        # A config names commands curlretry runs (auth.command) and where requests and their
        # credentials go: one the attacker wrote would run their command as the victim. It is
        # refused as ssh refuses its own config, and the program's requests pass through.
        attacker = LocalUsers(self).make("attacker")
        shared = self.shared_dir()
        marker = self.temp_dir() / "ran"
        config = shared / "zai.yaml"
        self.plant(attacker, f"cat > {config} <<'END'\nversion: 1\nrules:\n  - name: all\n    match: {{path: \"/s/*\"}}\n"
                             f"    auth: {{on: [401], command: [/bin/sh, -c, \"touch {marker}; echo Bearer x\"]}}\nEND")
        key = self.key()
        result = harness.curl(["-sS", "-o", "/dev/null", "-w", "%{http_code}", self.plain.script_url(key, "401,200")],
                              preload=True, env={"CURLRETRY_CONFIG": str(config)})
        self.assertRun(result, 0, b"401")
        self.assertCount(self.plain, key, 1, result)
        self.assertFalse(marker.exists(), str(result))
        self.assertEqual(result.stderr.decode(),
                         f"curlretry: CURLRETRY_CONFIG={config}: cannot read the config: it belongs to uid "
                         f"{attacker.pw_uid}, not to you (uid 0) nor root: a config can name a command to run and the "
                         "upstreams that get your credentials, so curlretry reads only one no other user can change; "
                         "retries are off for this process (pass-through)\n")

    @needs_root
    def test_a_link_planted_where_the_port_file_is_written_first_is_not_followed(self):
        # The proxy wrote "PORT.tmp" and renamed it: a name the attacker could take first, and
        # the write then truncated whatever the link pointed to.
        attacker = LocalUsers(self).make("attacker")
        shared = self.shared_dir()
        target = self.victims_file()
        port_file = shared / "proxy.port"
        self.plant(attacker, f"ln -s {target} {port_file}.tmp")
        config = self.temp_dir() / "proxy.yaml"
        config.write_text(f"version: 1\nproxy:\n  routes:\n    up: {{upstream: \"{self.plain.origin}\"}}\n")
        proxy = subprocess.Popen([harness.CURLRETRY_BIN, "proxy", "--listen", "127.0.0.1:0", "--config", str(config),
                                  "--port-file", str(port_file)], env=harness.environment(False),
                                 stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        self.addCleanup(lambda: (proxy.poll() is None and proxy.terminate(), proxy.wait(10), proxy.stderr.close()))
        wait_for(lambda: port_file.exists() or proxy.poll() is not None, 20, "the proxy's port file")
        self.assertIsNone(proxy.poll(), proxy.stderr.read().decode() if proxy.poll() is not None else "")
        self.assertEqual(target.read_text(), "# the victim's shell startup file\n")
        self.assertFalse(port_file.is_symlink())
        port = int(port_file.read_text())
        self.assertEqual(port_file.read_text(), f"{port}\n")
        self.assertTrue(listening(port))
        self.assertEqual(sorted(p.name for p in shared.iterdir()), ["proxy.port", "proxy.port.tmp"])


class AnotherUserAtTheProxy(harness.UpstreamTestCase):
    """A proxy without proxy.token listens on loopback, where every local user can connect. It
    runs with its user's fleet store, config and credentials (an auth.command's token, cached for
    later requests), so it serves its own user (and root) only, as ssh-agent does; the token is
    how a user shares it. The attacker is a real second user (useradd)."""

    def proxy(self, extra: str = "") -> Proxy:
        proxy = Proxy(f"version: 1\nproxy:\n{extra}  routes:\n    up: {{upstream: \"{self.plain.origin}\"}}\n").start()
        self.addCleanup(proxy.stop)
        return proxy

    def ask_as(self, user: pwd.struct_passwd | None, proxy: Proxy, key: str, token: str = "") -> bytes:
        auth = f"Proxy-Authorization: Bearer {token}\r\n" if token else ""
        request = f"GET /up/s/{key}/200 HTTP/1.1\r\nHost: x\r\n{auth}Connection: close\r\n\r\n".encode()
        if user is None:
            return raw_exchange(proxy.port, request)
        return LocalUsers.exchange(user, proxy.port, request, harness.PYTHON)

    @needs_root
    def test_another_users_request_is_refused_and_never_reaches_the_upstream(self):
        attacker = LocalUsers(self).make("attacker")
        proxy = self.proxy()
        key = self.key()
        body = b'{"error":"this curlretry proxy serves only the user who runs it (uid 0); set proxy.token to share it"}\n'
        self.assertEqual(self.ask_as(attacker, proxy, key),
                         b"HTTP/1.1 403 Forbidden\r\nContent-Type: application/json\r\nContent-Length: %d\r\n"
                         b"Connection: close\r\n\r\n%s" % (len(body), body))
        self.assertCount(self.plain, key, 0)
        self.assertIn(f"curlretry: proxy: refused a connection from uid {attacker.pw_uid}: this proxy serves uid 0 only "
                      "(set proxy.token to share it) (1 so far; this line at most every 10 s)\n", proxy.log())
        # Its own user is served as before.
        self.assertTrue(self.ask_as(None, proxy, key).endswith(b"\r\n\r\n" + harness.ok_body(key, 1)))
        self.assertCount(self.plain, key, 1)

    @needs_root
    def test_with_proxy_token_another_user_who_presents_it_is_served_and_its_own_needs_none(self):
        attacker = LocalUsers(self).make("attacker")
        proxy = self.proxy('  token: "s3cret-token-for-the-test"\n')
        key = self.key()
        for token in ("", "wrong-token-for-the-test!!"):
            denied = self.ask_as(attacker, proxy, key, token)
            self.assertTrue(denied.startswith(b"HTTP/1.1 407 "), denied)
            self.assertIn(b"\r\nProxy-Authenticate: Bearer realm=\"curlretry\"\r\n", denied)
        self.assertCount(self.plain, key, 0)
        self.assertTrue(self.ask_as(attacker, proxy, key, token="s3cret-token-for-the-test")
                        .endswith(b"\r\n\r\n" + harness.ok_body(key, 1)))
        self.assertCount(self.plain, key, 1)
        # The proxy's own user is served without it, as without a token: its launches hand
        # COMMAND the proxy's URL with no credentials (before: 407 for each of its requests).
        self.assertTrue(self.ask_as(None, proxy, key).endswith(b"\r\n\r\n" + harness.ok_body(key, 2)))
        self.assertCount(self.plain, key, 2)


class LogLinesEscapeWhatTheyDidNotWrite(harness.UpstreamTestCase):
    """Finding 2's payload and the log-escaping rule: a method or path chosen by the client
    lands in the retry line escaped, on one line, with no byte a terminal would act on."""

    def test_a_method_with_a_newline_through_preloaded_curl(self):
        # `curl -X $'A\nB\x1b[2J'`: the upstream refuses such a request (400, given up at once);
        # at debug level every line about the transfer carries the method.
        key = self.key()
        result = harness.curl(["-sS", "-o", "/dev/null", "-X", "A\nB\x1b[2J", self.plain.script_url(key, "503,200")],
                              preload=True, env={"CURLRETRY_LOG": "debug"})
        self.assertEqual(result.code, 0, str(result))
        shown = f"A\\nB\\x1b[2J 127.0.0.1:{self.plain.port}/s/{key}/503,200"
        self.assertEqual(result.stderr.decode().splitlines(), [
            "curlretry: phase of a transfer: idle -> attempting (attempt 1)",
            f"curlretry: {shown} -> HTTP 400: giving up after 1 attempt (not-retryable)",
            f"curlretry: phase of {shown}: attempting -> replaying (attempt 1)",
            f"curlretry: phase of {shown}: replaying -> done (attempt 1)",
            f"curlretry: phase of {shown}: done -> idle (attempt 1)"], str(result))

    def test_a_hostile_method_and_path_through_the_proxy(self):
        # The issue's method (legal token characters) and a path with a C1 CSI and a byte that
        # is not UTF-8, to an upstream that takes any request: 503, then 200.
        upstream = Scripted(self, [answer("503 Service Unavailable", b"busy"), answer("200 OK", b"fine")])
        proxy = Proxy(f"version: 1\nproxy:\n  routes:\n    api: {{upstream: \"http://127.0.0.1:{upstream.port}\"}}\n").start()
        self.addCleanup(proxy.stop)
        method = b"A&echo$IFS'x'|sh&#"
        reply = raw_exchange(proxy.port, method + b" /api/v1/\xc2\x9b2J\xff/x HTTP/1.1\r\nHost: x\r\n"
                             b"Connection: close\r\n\r\n")
        self.assertTrue(reply.startswith(b"HTTP/1.1 200 "), reply)
        self.assertEqual(len(upstream.received), 2, upstream.received)
        ours = lambda: [line for line in Path(proxy.log_path).read_bytes().splitlines()
                        if line.startswith(b"curlretry: A&")]
        wait_for(lambda: len(ours()) >= 2, 10, "the proxy's two lines about the request")
        log = Path(proxy.log_path).read_bytes()
        shown = b"A&echo$IFS'x'|sh&# 127.0.0.1:%d/v1/\\u009b2J\\xff/x" % upstream.port
        self.assertEqual(ours(), [b"curlretry: " + shown + b" -> HTTP 503: retrying in 50 ms (attempt 1/3)",
                                  b"curlretry: " + shown + b" -> HTTP 200 after 2 attempts"], log)
        self.assertNotIn(b"\xc2\x9b", log)


if __name__ == "__main__":
    unittest.main()
