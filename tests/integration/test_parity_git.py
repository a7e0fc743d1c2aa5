"""git over smart HTTP, the parity sweep's git rows (issue 11 §9): clone, fetch and push, with
small and large packs, each with one 503 on the requests that carry the protocol (the ref
advertisement GET and the upload-pack / receive-pack POST). Under the preload the operation
succeeds and leaves what a lucky run without the preload leaves (refs, files, a clean fsck);
every failed request is asked exactly once more. The large push is test_git_push.py.
"""

from __future__ import annotations

import os
import unittest
from pathlib import Path

import harness
from git_smart_http import FailRule
from test_git_push import HAVE_GIT, SmartHttpRepo, git

def first_503s() -> tuple[FailRule, ...]:
    """Fresh rules (each is spent by the request it fails)."""
    return FailRule("GET", "/info/refs"), FailRule("POST", "/git-upload-pack")


@unittest.skipUnless(HAVE_GIT, harness.needs("git", "git or git-http-backend"))
class GitSmartHttpParity(unittest.TestCase):
    def setUp(self) -> None:
        self.repo = SmartHttpRepo(self, "parity-git")

    def dest(self, name: str) -> Path:
        return self.repo.tmp / name

    def clone(self, name: str, *, preload: bool) -> harness.Result:
        return git(["clone", "-q", self.repo.remote, str(self.dest(name))], env=self.repo.env, preload=preload)

    def tree(self, path: Path) -> dict[str, bytes]:
        return {str(p.relative_to(path)): p.read_bytes() for p in sorted(path.rglob("*"))
                if p.is_file() and ".git" not in p.relative_to(path).parts}

    def check_clone(self, large: bool) -> None:
        if large:
            self.repo.commit_large()
        self.repo.ok(["push", "-q", str(self.repo.bare), "main"], cwd=self.repo.work)
        self.repo.server.reset()
        lucky = self.clone("lucky", preload=False)
        self.assertEqual(lucky.code, 0, str(lucky))
        lucky_counts = self.repo.server.counts()
        self.repo.server.reset(*first_503s())
        retried = self.clone("retried", preload=True)
        self.assertEqual(retried.code, 0, str(retried))
        counts = self.repo.server.counts()
        self.assertEqual(len(self.repo.server.failed), 2, f"{self.repo.server.requests}")
        for request in self.repo.server.failed:
            self.assertEqual(counts[request], lucky_counts[request] + 1, f"{request}\n{counts}\n{lucky_counts}")
        self.assertEqual(self.tree(self.dest("retried")), self.tree(self.dest("lucky")))
        self.assertEqual(self.repo.rev(self.dest("retried")), self.repo.rev(self.dest("lucky")))
        fsck = git(["fsck", "--full"], cwd=self.dest("retried"), env=self.repo.env)
        self.assertEqual(fsck.code, 0, str(fsck))

    def test_clone_small(self):
        self.check_clone(large=False)

    def test_clone_large(self):
        self.check_clone(large=True)

    def test_fetch(self):
        self.assertEqual(self.clone("mine", preload=False).code, 0)
        head = self.repo.commit_large(200_000)
        self.repo.ok(["push", "-q", str(self.repo.bare), "main"], cwd=self.repo.work)
        self.repo.server.reset(*first_503s())
        r = git(["fetch", "-q", "origin"], cwd=self.dest("mine"), env=self.repo.env, preload=True)
        self.assertEqual(r.code, 0, str(r))
        self.assertEqual(self.repo.rev(self.dest("mine"), "origin/main"), head)
        self.assertEqual(len(self.repo.server.failed), 2)

    def test_push_small(self):
        (self.repo.work / "more.txt").write_text("more\n")
        self.repo.ok(["add", "-A"], cwd=self.repo.work)
        self.repo.ok(["commit", "-q", "-m", "more"], cwd=self.repo.work)
        head = self.repo.rev(self.repo.work)
        self.repo.server.reset(FailRule("GET", "/info/refs"), FailRule("POST", "/git-receive-pack"))
        r = self.repo.push(preload=True)
        self.assertEqual(r.code, 0, str(r))
        self.assertEqual(self.repo.remote_head(), head)
        self.assertEqual(len(self.repo.server.failed), 2)
        posts = [n for req, n in self.repo.server.requests if req.endswith("/git-receive-pack")]
        self.assertEqual(len(posts), 2)
        self.assertEqual(posts[0], posts[1], "the retry re-sent a different body")
        fsck = git(["fsck", "--full"], cwd=self.repo.bare, env=self.repo.env)
        self.assertEqual(fsck.code, 0, str(fsck))

    def test_control_without_the_preload_a_503_fails_the_clone(self):
        self.repo.server.reset(*first_503s())
        r = self.clone("control", preload=False)
        self.assertNotEqual(r.code, 0, str(r))
        self.assertIn(b"503", r.stderr)


if __name__ == "__main__":
    unittest.main()
