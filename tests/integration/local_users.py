"""Second local users for the tests about other users (a hostile neighbour on the same machine):
made with `useradd`, removed with `userdel` in the test's cleanup, also when the test fails; and
what such a user runs to pose as the shared proxy."""

from __future__ import annotations

import os
import pwd
import shutil
import signal
import subprocess
import textwrap
import unittest

from proxy_support import wait_for

# A fake proxy: answers every request with the health body any listener could send, and writes
# every byte it received to OUT (so the test sees exactly what reached it).
FAKE_HEALTH = textwrap.dedent("""
    import socket, sys, time
    port, out = int(sys.argv[1]), sys.argv[2]
    server = socket.socket()
    server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    server.bind(("127.0.0.1", port))
    server.listen(16)
    open(out + ".ready", "w").close()
    server.settimeout(1)
    end = time.monotonic() + 60
    while time.monotonic() < end:
        try:
            conn, _ = server.accept()
        except socket.timeout:
            continue
        conn.settimeout(2)
        data = b""
        try:
            while b"\\r\\n\\r\\n" not in data and len(data) < 65536:
                chunk = conn.recv(4096)
                if not chunk:
                    break
                data += chunk
            with open(out, "ab") as f:
                f.write(data)
            body = b'{"status":"ok","pid":1,"routes":["flaky"]}\\n'
            conn.sendall(b"HTTP/1.1 200 OK\\r\\nContent-Type: application/json\\r\\nContent-Length: "
                         + str(len(body)).encode() + b"\\r\\nConnection: close\\r\\n\\r\\n" + body)
        except OSError:
            pass
        conn.close()
""")


# A client of another user's: sends its stdin as is to 127.0.0.1:PORT and writes what it gets back,
# until the server closes, to stdout.
RAW_CLIENT = textwrap.dedent("""
    import socket, sys
    s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=10)
    s.sendall(sys.stdin.buffer.read())
    data = b""
    while True:
        chunk = s.recv(65536)
        if not chunk:
            break
        data += chunk
    sys.stdout.buffer.write(data)
""")


def needs_root(test):
    return unittest.skipUnless(os.geteuid() == 0 and shutil.which("useradd") and shutil.which("runuser"),
                               "needs root, useradd and runuser to make a second local user")(test)


class LocalUsers:
    """Local users made for one test with useradd, removed with userdel in the test's cleanup."""

    def __init__(self, test: unittest.TestCase):
        self.test = test
        self.groups: list[int] = []

    def make(self, role: str) -> pwd.struct_passwd:
        name = f"curlretry-{role}-{os.getpid() % 100000}"
        subprocess.run(["userdel", name], capture_output=True)  # a leftover of a killed run
        subprocess.run(["useradd", "-M", "-s", "/usr/sbin/nologin", name], check=True, capture_output=True)
        user = pwd.getpwnam(name)
        self.test.addCleanup(self.remove, user)
        return user

    @staticmethod
    def processes(uid: int) -> list[int]:
        pids = []
        for entry in os.listdir("/proc"):
            try:
                if entry.isdigit() and os.stat(f"/proc/{entry}").st_uid == uid:
                    pids.append(int(entry))
            except FileNotFoundError:
                pass
        return pids

    def remove(self, user: pwd.struct_passwd) -> None:
        """Kills what still runs as USER (only processes this test started can), then userdel."""
        for pid in self.processes(user.pw_uid):
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        wait_for(lambda: not self.processes(user.pw_uid), 10, f"{user.pw_name}'s processes to end")
        done = subprocess.run(["userdel", user.pw_name], capture_output=True)
        if done.returncode != 0:
            raise AssertionError(f"userdel {user.pw_name}: {done.stderr!r}")

    @staticmethod
    def exchange(user: pwd.struct_passwd, port: int, request: bytes, python: str) -> bytes:
        """REQUEST sent as USER on a fresh connection to 127.0.0.1:PORT (it must say Connection:
        close); what came back."""
        done = subprocess.run(["runuser", "-u", user.pw_name, "--", python, "-c", RAW_CLIENT, str(port)],
                              input=request, capture_output=True, timeout=30)
        if done.returncode != 0:
            raise AssertionError(f"the client as {user.pw_name}: {done.stderr!r}")
        return done.stdout

    def start(self, user: pwd.struct_passwd, *cmd: str, enter: tuple[str, ...] = ()) -> subprocess.Popen:
        """CMD as USER in its own process group, killed (the group) at cleanup, before userdel;
        ENTER is a command that runs it elsewhere (nsenter into a test's namespaces)."""
        proc = subprocess.Popen([*enter, "runuser", "-u", user.pw_name, "--", *cmd], start_new_session=True,
                                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)

        def stop():
            # USER's own processes first, so that runuser (and nsenter) reap them and exit: a
            # process group killed at once would leave USER's process a zombie of a namespace's
            # init that reaps nothing, and userdel refuses a user with a process.
            for pid in self.processes(user.pw_uid):
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(timeout=20)
            proc.stderr.close()
        self.test.addCleanup(stop)
        return proc
