"""git under libcurlretry.so: a dumb-HTTP clone from a server whose every path fails once
(issue 4 §4, DESIGN §3.8).

git's HTTP transport (git-remote-http) runs every request through libcurl's multi interface in
an fdset + select + curl_multi_timeout loop, and it is linked against Debian's second libcurl
flavour, libcurl-gnutls. A dumb-protocol clone makes many requests (info/refs, HEAD, pack
indexes and packs, loose objects, several in flight at once), each of which must be retried
without git noticing, and without any response of a failed attempt reaching git.

flaky-upstream has no file-serving mode (upstream/README.md), so the server is here: a
ThreadingHTTPServer on 127.0.0.1 that answers 503 to the first request for each path and serves
a bare repository's files from then on, counting requests per path.
"""

from __future__ import annotations

import collections
import http.server
import os
import shutil
import sys
import tempfile
import threading
import unittest
from pathlib import Path

import harness
from loopback_server import LoopbackHttpServer

GIT = shutil.which("git") or "/usr/bin/git"
HAVE_GIT = os.access(GIT, os.X_OK)


class FlakyRepoServer(LoopbackHttpServer):
    """Serves `root` over HTTP/1.1 on 127.0.0.1; the first request for each path (the query
    string ignored) gets a 503, every later one the file (or 404)."""

    def __init__(self, root: Path):
        self.root = root.resolve()
        self.counts: collections.Counter[str] = collections.Counter()
        self.lock = threading.Lock()
        super().__init__(_Handler)

    def reset(self) -> None:
        with self.lock:
            self.counts.clear()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"


class _Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as git's libcurl expects

    def do_GET(self) -> None:  # noqa: N802 (http.server's naming)
        server: FlakyRepoServer = self.server  # type: ignore[assignment]
        path = self.path.split("?", 1)[0]
        with server.lock:
            server.counts[path] += 1
            first = server.counts[path] == 1
        if first:
            self._send(503, b'{"error":"overloaded"}', "application/json")
            return
        file = (server.root / path.lstrip("/")).resolve()
        if server.root not in file.parents or not file.is_file():
            self._send(404, b'{"error":"not found"}', "application/json")
            return
        self._send(200, file.read_bytes(), "text/plain" if path.endswith("/info/refs") else "application/octet-stream")

    def _send(self, status: int, body: bytes, content_type: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args) -> None:  # quiet
        pass


def git(args: list[str], *, cwd: Path | str | None = None, env: dict[str, str], preload: bool = False,
        timeout: float = 60) -> harness.Result:
    return harness.run([GIT, *args], preload=preload, env=env, cwd=str(cwd) if cwd else None, timeout=timeout)


@unittest.skipUnless(HAVE_GIT, harness.needs("git", "git"))
class GitDumbHttpClone(unittest.TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        super().setUpClass()
        cls.tmp = Path(cls._temp_dir())
        home = cls.tmp / "home"
        home.mkdir()
        # No user or system configuration, no prompts, no credential helpers, stable output.
        cls.env = {"HOME": str(home), "XDG_CONFIG_HOME": str(home / ".config"), "GIT_CONFIG_NOSYSTEM": "1",
                   "GIT_TERMINAL_PROMPT": "0", "GIT_ASKPASS": "", "SSH_ASKPASS": "", "LANG": "C", "LC_ALL": "C",
                   "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.invalid",
                   "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.invalid",
                   "GIT_AUTHOR_DATE": "2024-01-01T00:00:00Z", "GIT_COMMITTER_DATE": "2024-01-01T00:00:00Z"}
        cls.bare = cls.tmp / "srv" / "repo.git"
        cls.head = cls._make_repository()
        cls.server = FlakyRepoServer(cls.tmp / "srv").start()
        cls.addClassCleanup(cls.server.stop)

    @classmethod
    def _temp_dir(cls) -> str:
        d = tempfile.TemporaryDirectory(prefix="curlretry-git-")
        cls.addClassCleanup(d.cleanup)
        return d.name

    @classmethod
    def _run(cls, args: list[str], cwd: Path | None = None) -> str:
        r = git(args, cwd=cwd, env=cls.env)
        if r.code != 0:
            raise RuntimeError(f"git {args}: {r}")
        return r.stdout.decode().strip()

    @classmethod
    def _make_repository(cls) -> str:
        """A bare repository with a pack (two commits) and loose objects (two more commits)."""
        work = cls.tmp / "work"
        cls._run(["init", "-q", "-b", "main", str(work)])
        cls._run(["init", "-q", "--bare", "-b", "main", str(cls.bare)])
        for n in range(4):
            (work / f"file{n}.txt").write_text(f"line {n}\n" * (50 + n))
            (work / "dir").mkdir(exist_ok=True)
            (work / "dir" / f"blob{n}.bin").write_bytes(os.urandom(2000 + n))
            cls._run(["add", "-A"], cwd=work)
            cls._run(["commit", "-q", "-m", f"commit {n}"], cwd=work)
            cls._run(["push", "-q", str(cls.bare), "main"], cwd=work)
            if n == 1:
                cls._run(["repack", "-q", "-a", "-d"], cwd=cls.bare)
        cls._run(["update-server-info"], cwd=cls.bare)
        return cls._run(["rev-parse", "HEAD"], cwd=work)

    def clone(self, dest: Path, *, preload: bool) -> harness.Result:
        env = dict(self.env)
        if preload:
            env["CURLRETRY_BASE_MS"] = "20"
        return git(["-c", "http.lowSpeedLimit=0", "clone", f"{self.server.url}/repo.git", str(dest)],
                   env=env, preload=preload)

    def test_control_clone_without_the_preload_fails_on_the_first_503(self):
        self.server.reset()
        dest = Path(self._temp_dir()) / "clone"
        r = self.clone(dest, preload=False)
        self.assertNotEqual(r.code, 0, f"git clone should fail on the 503\n{r}")
        self.assertIn(b"503", r.stderr, f"git should report the 503\n{r}")
        self.assertEqual(dict(self.server.counts), {"/repo.git/info/refs": 1}, f"requests\n{r}")

    def test_clone_retries_every_path_once_and_fsck_passes(self):
        self.server.reset()
        dest = Path(self._temp_dir()) / "clone"
        r = self.clone(dest, preload=True)
        self.assertEqual(r.code, 0, f"git clone under the preload\n{r}")
        counts = dict(self.server.counts)
        # Every path git asked for was asked for exactly twice: the 503, then the answer.
        self.assertEqual({p: c for p, c in counts.items() if c != 2}, {}, f"paths not requested exactly twice\n{r}")
        self.assertIn("/repo.git/info/refs", counts)
        self.assertTrue(any(p.endswith(".pack") for p in counts), f"no pack fetched: {sorted(counts)}")
        self.assertTrue(any("/objects/" in p and not p.startswith("/repo.git/objects/info") and "/pack/" not in p
                            for p in counts), f"no loose object fetched: {sorted(counts)}")
        # The shim did it: one retry line per path, on git's stderr.
        retries = [l for l in r.stderr.decode("utf-8", "replace").splitlines()
                   if l.startswith("curlretry: GET ") and "-> HTTP 503: retrying" in l]
        self.assertEqual(len(retries), len(counts), f"curlretry retry lines\n{r}")
        fsck = git(["fsck", "--full"], cwd=dest, env=self.env)
        self.assertEqual(fsck.code, 0, f"git fsck --full\n{fsck}")
        self.assertEqual(git(["rev-parse", "HEAD"], cwd=dest, env=self.env).stdout.decode().strip(), self.head)
        self.assertEqual((dest / "file3.txt").read_text(), "line 3\n" * 53)
        print(f"FIGURE git clone (dumb HTTP, every path 503 once): {len(counts)} paths, "
              f"{sum(counts.values())} requests, {r.elapsed:.2f} s", file=sys.stderr)


if __name__ == "__main__":
    unittest.main()
