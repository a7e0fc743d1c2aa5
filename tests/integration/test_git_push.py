"""git push over smart HTTP under libcurlretry.so, with a pack large enough that git streams it
(issue 11 §1).

A push bigger than git's http.postBuffer (1 MiB) makes git-remote-http send the pack chunked
from its read callback (rpc_out), and its seek callback (rpc_seek) refuses to rewind once the
first buffer is gone ("unable to rewind rpc post data"); rpc_out, called again after the pack
ended, blocks reading a pipe that never delivers. The remote answers the first pack POST with
503. Required: never a hang; either the whole pack re-sent from the library's kept copy without
git noticing (the default: the pack fits max_upload_replay), or, when the copy cannot hold it,
the failure git reports without the library.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import unittest
from pathlib import Path

import harness
from git_smart_http import FailRule, SmartHttpServer, run_in_group

GIT = shutil.which("git") or "/usr/bin/git"
HAVE_GIT = os.access(GIT, os.X_OK) and os.access("/usr/lib/git-core/git-http-backend", os.X_OK)
PACK_BYTES = 3 * 1024 * 1024 + 12345   # random, so the pack is about as large
PUSH_TIMEOUT = 60.0                      # a hang fails the test instead of blocking ctest

GIT_ENV = {"GIT_CONFIG_NOSYSTEM": "1", "GIT_TERMINAL_PROMPT": "0", "GIT_ASKPASS": "", "SSH_ASKPASS": "",
           "LANG": "C", "LC_ALL": "C", "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.invalid",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.invalid",
           "GIT_AUTHOR_DATE": "2024-01-01T00:00:00Z", "GIT_COMMITTER_DATE": "2024-01-01T00:00:00Z"}


def git(args: list[str], *, env: dict[str, str], cwd: Path | None = None, preload: bool = False,
        timeout: float = PUSH_TIMEOUT) -> harness.Result:
    return run_in_group([GIT, *args], preload=preload, env=env, cwd=cwd, timeout=timeout)


class SmartHttpRepo:
    """A bare remote behind `git http-backend` and a work tree one large commit ahead of it."""

    def __init__(self, case: unittest.TestCase, label: str):
        d = tempfile.TemporaryDirectory(prefix=f"curlretry-{label}-")
        case.addCleanup(d.cleanup)
        self.tmp = Path(d.name)
        home = self.tmp / "home"
        home.mkdir()
        self.env = dict(GIT_ENV, HOME=str(home), XDG_CONFIG_HOME=str(home / ".config"))
        self.bare = self.tmp / "srv" / "repo.git"
        self.work = self.tmp / "work"
        self.ok(["init", "-q", "--bare", "-b", "main", str(self.bare)])
        self.ok(["config", "http.receivepack", "true"], cwd=self.bare)
        self.ok(["init", "-q", "-b", "main", str(self.work)])
        (self.work / "small.txt").write_text("small\n")
        self.ok(["add", "-A"], cwd=self.work)
        self.ok(["commit", "-q", "-m", "small"], cwd=self.work)
        self.ok(["push", "-q", str(self.bare), "main"], cwd=self.work)
        self.base = self.rev(self.work)
        self.server = SmartHttpServer(self.tmp / "srv").start()
        case.addCleanup(self.server.stop)
        self.remote = f"{self.server.url}/repo.git"

    def ok(self, args: list[str], cwd: Path | None = None) -> str:
        r = git(args, cwd=cwd, env=self.env)
        if r.code != 0:
            raise RuntimeError(f"git {args}: {r}")
        return r.stdout.decode().strip()

    def rev(self, repo: Path, ref: str = "HEAD") -> str:
        return self.ok(["rev-parse", ref], cwd=repo)

    def commit_large(self, size: int = PACK_BYTES) -> str:
        (self.work / "large.bin").write_bytes(os.urandom(size))
        self.ok(["add", "-A"], cwd=self.work)
        self.ok(["commit", "-q", "-m", "large"], cwd=self.work)
        return self.rev(self.work)

    def push(self, *, preload: bool, env: dict[str, str] | None = None) -> harness.Result:
        return git(["push", self.remote, "main"], cwd=self.work, env=dict(self.env, **(env or {})), preload=preload)

    def remote_head(self) -> str:
        return self.rev(self.bare, "refs/heads/main")


def pack_posts(server: SmartHttpServer) -> list[int]:
    """Body sizes of the receive-pack POSTs that carried more than a probe."""
    return [n for r, n in server.requests if r.endswith("/git-receive-pack") and n > 4]


@unittest.skipUnless(HAVE_GIT, harness.needs("git", "git or git-http-backend"))
class GitPushStreamedPack(unittest.TestCase):
    def setUp(self) -> None:
        self.repo = SmartHttpRepo(self, "push")
        self.head = self.repo.commit_large()
        self.repo.server.reset(FailRule("POST", "/git-receive-pack", min_body=1024 * 1024))

    def test_control_without_the_preload_the_503_fails_the_push(self):
        r = self.repo.push(preload=False)
        self.assertEqual(r.code, 1, f"git push without curlretry\n{r}")
        self.assertIn(b"RPC failed; HTTP 503", r.stderr, str(r))
        self.assertNotIn(b"unable to rewind", r.stderr, str(r))
        self.assertEqual(self.repo.remote_head(), self.repo.base)
        self.assertEqual(len(pack_posts(self.repo.server)), 1, f"{self.repo.server.requests}")

    def test_the_whole_pack_is_resent_from_the_kept_copy_and_git_never_notices(self):
        r = self.repo.push(preload=True)
        self.assertEqual(r.code, 0, f"git push under curlretry\n{r}")
        stderr = r.stderr.decode("utf-8", "replace")
        self.assertNotIn("unable to rewind", stderr, str(r))
        self.assertNotIn("RPC failed", stderr, str(r))
        retries = [l for l in stderr.splitlines() if l.startswith("curlretry: POST ") and "HTTP 503: retrying" in l]
        self.assertEqual(len(retries), 1, str(r))
        posts = pack_posts(self.repo.server)
        self.assertEqual(len(posts), 2, f"pack POSTs: {self.repo.server.requests}")
        self.assertEqual(posts[0], posts[1], "the retry re-sent a different body")
        self.assertGreater(posts[0], PACK_BYTES, "the pack is not the size of the random file")
        self.assertEqual(self.repo.remote_head(), self.head)
        fsck = git(["fsck", "--full", "--strict"], cwd=self.repo.bare, env=self.repo.env)
        self.assertEqual(fsck.code, 0, f"git fsck on the remote\n{fsck}")

    def test_a_pack_larger_than_the_kept_copy_fails_as_without_the_preload(self):
        config = self.repo.tmp / "curlretry.yaml"
        config.write_text("version: 1\nsettings: {max_upload_replay: 1048576}\n")
        control = self.repo.push(preload=False)
        self.repo.server.reset(FailRule("POST", "/git-receive-pack", min_body=1024 * 1024))
        r = self.repo.push(preload=True, env={"CURLRETRY_CONFIG": str(config)})
        self.assertEqual(r.code, control.code, f"git push under curlretry\n{r}\ncontrol\n{control}")
        self.assertIn(b"RPC failed; HTTP 503", r.stderr, str(r))
        # git's own lines are the control's, in order; the only additions are the library's
        # give-up line and git's answer to the one rewind the library asked for, which is how
        # it learns the pack cannot be re-sent (README, "What it does, exactly").
        lines = r.stderr.decode("utf-8", "replace").splitlines()
        added = [l for l in lines if l.startswith("curlretry: ") or l.startswith("error: unable to rewind rpc post")]
        self.assertEqual([l for l in lines if l not in added], control.stderr.decode().splitlines(), str(r))
        self.assertEqual(len(added), 2, str(r))
        self.assertIn("giving up after 1 attempt (not-replayable)", added[1], str(r))
        self.assertEqual(self.repo.remote_head(), self.repo.base)
        self.assertEqual(len(pack_posts(self.repo.server)), 1, f"{self.repo.server.requests}")
        # No backoff: the library gave up at once, it did not wait for a retry it cannot make.
        self.assertLess(r.elapsed, control.elapsed + 5.0, f"{r}\ncontrol\n{control}")


if __name__ == "__main__":
    unittest.main()
