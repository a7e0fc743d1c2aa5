"""Parity of the cookie engine (issue 11 §4, §9): after a retried transfer, the cookie jar and the
cookies sent by the retry and by later requests are what one lucky attempt would have left.

The curl CLI with `-b FILE -c JAR` runs twice: under the preload against a 503 that sets and
changes cookies followed by a 200 that sets one, and without the preload against the 200 alone.
The Cookie headers curl sent (its -v trace), its output and the jar must be equal. The curl tool
keeps its cookies in a share handle (CURL_LOCK_DATA_COOKIE), so this is the shared store case;
a plain easy handle with its own engine is covered by pycurl.
"""

from __future__ import annotations

import json
import unittest
import urllib.parse
from pathlib import Path

import harness
from harness import UpstreamTestCase

INITIAL = "127.0.0.1\tFALSE\t/\tFALSE\t0\tkeep\toriginal\n"


def raw(status_line: str, body: bytes, *headers: str) -> str:
    # `raw` answers and closes: say so, or libcurl may send the next request on the dying
    # connection and silently send it again (one more Cookie line in the trace).
    head = "\r\n".join([status_line, *headers, f"Content-Length: {len(body)}", "Connection: close"]) + "\r\n\r\n"
    return "raw+data=" + urllib.parse.quote(head + body.decode(), safe="")


FAIL = raw("HTTP/1.1 503 Service Unavailable", b"fail", "Set-Cookie: bad=from503; Path=/",
           "Set-Cookie: keep=changed; Path=/", "Set-Cookie: gone=; Path=/; Expires=Thu, 01 Jan 1970 00:00:01 GMT")
OK = raw("HTTP/1.1 200 OK", b"ok", "Set-Cookie: good=from200; Path=/")
LATER = raw("HTTP/1.1 200 OK", b"later")

PYCURL_COOKIES = r"""
import io, json, sys, pycurl
c = pycurl.Curl()
c.setopt(pycurl.COOKIEFILE, "")
c.setopt(pycurl.COOKIELIST, "127.0.0.1\tFALSE\t/\tFALSE\t0\tkeep\toriginal")
c.setopt(pycurl.COOKIELIST, "127.0.0.1\tFALSE\t/\tFALSE\t0\tgone\tstays")
sent = []
def debug(kind, data):
    if kind == pycurl.INFOTYPE_HEADER_OUT:
        sent.extend(l for l in data.decode().splitlines() if l.startswith("Cookie:"))
c.setopt(pycurl.VERBOSE, 1)
c.setopt(pycurl.DEBUGFUNCTION, debug)
out = []
for url in sys.argv[1:]:
    body = io.BytesIO()
    c.setopt(pycurl.URL, url)
    c.setopt(pycurl.WRITEDATA, body)
    c.perform()
    out.append([c.getinfo(pycurl.RESPONSE_CODE), body.getvalue().decode()])
print(json.dumps({"out": out, "sent": sent, "jar": sorted(c.getinfo(pycurl.INFO_COOKIELIST))}))
"""


def cookie_headers(stderr: bytes) -> list[str]:
    return [l for l in stderr.decode("utf-8", "replace").splitlines() if l.startswith("> Cookie:")]


def jar_lines(path) -> list[str]:
    return sorted(l for l in Path(path).read_text().splitlines() if l and not l.startswith("# "))


class CurlCliCookies(UpstreamTestCase):
    def run_curl(self, first: str, *, preload: bool):
        d = self.temp_dir()
        (d / "in.txt").write_text(INITIAL)
        key, later = self.key("first"), self.key("later")
        r = harness.curl(["-sS", "-v", "-b", str(d / "in.txt"), "-c", str(d / "jar.txt"),
                          self.plain.script_url(key, first), "--next", "-b", str(d / "in.txt"), "-c",
                          str(d / "jar.txt"), self.plain.script_url(later, LATER)], preload=preload)
        return r, jar_lines(d / "jar.txt"), key

    def test_a_discarded_attempts_cookies_reach_neither_the_retry_nor_the_jar(self):
        lucky, lucky_jar, _ = self.run_curl(OK, preload=False)
        retried, jar, key = self.run_curl(f"{FAIL},{OK}", preload=True)
        self.assertEqual((retried.code, retried.stdout), (lucky.code, lucky.stdout), f"{retried}\nlucky\n{lucky}")
        self.assertCount(self.plain, key, 2, retried)
        sent = cookie_headers(retried.stderr)
        # Both attempts, then the later request: each sends what the lucky run sent.
        self.assertEqual(len(sent), 3, str(retried))
        self.assertEqual(sent[1:], cookie_headers(lucky.stderr), f"{retried}\nlucky\n{lucky}")
        self.assertEqual(jar, lucky_jar)
        self.assertIn("127.0.0.1\tFALSE\t/\tFALSE\t0\tkeep\toriginal", jar)

    def test_a_cookie_deleted_by_max_age_0_stays_deleted_for_the_next_url(self):
        # curl test 329: two URLs sharing `-b FILE`; the first answer deletes a file cookie with
        # Max-Age=0, so the second request must not send it, with retries off and on alike.
        delete = raw("HTTP/1.1 200 OK", b"one", "Set-Cookie: keep=yes; Path=/; Max-Age=0")
        runs = {}
        for label, preload, env in (("plain", False, {}), ("off", True, {"BILI_REPLAY_RETRY_MAX": "1"}),
                                    ("on", True, {})):
            d = self.temp_dir()
            (d / "in.txt").write_text(INITIAL)
            r = harness.curl(["-sS", "-v", "-b", str(d / "in.txt"), self.plain.script_url(self.key(label), delete),
                              self.plain.script_url(self.key(label + "-later"), LATER)], preload=preload, env=env)
            self.assertEqual((r.code, r.stdout), (0, b"onelater"), str(r))
            runs[label] = cookie_headers(r.stderr)
        self.assertEqual(runs["plain"], ["> Cookie: keep=original"], str(runs))
        self.assertEqual(runs["off"], runs["plain"])
        self.assertEqual(runs["on"], runs["plain"])

    def test_control_without_the_preload_the_503_sets_its_cookies(self):
        r, jar, _ = self.run_curl(f"{FAIL},{OK}", preload=False)
        self.assertEqual(r.code, 0, str(r))
        self.assertEqual(r.stdout, b"faillater", str(r))
        self.assertIn("127.0.0.1\tFALSE\t/\tFALSE\t0\tbad\tfrom503", jar)


@unittest.skipUnless(harness.have_pycurl(), harness.needs("python3-pycurl", "pycurl"))
class PycurlOwnCookieEngine(UpstreamTestCase):
    """An easy handle with its own cookie engine (no share): the same, and a cookie the 503
    deleted comes back."""

    def run_py(self, first: str, *, preload: bool) -> tuple[dict, str]:
        key = self.key()
        r = harness.run([harness.PYTHON, "-c", PYCURL_COOKIES, self.plain.script_url(key, first),
                         self.plain.script_url(self.key("later"), LATER)], preload=preload)
        self.assertEqual(r.code, 0, str(r))
        return json.loads(r.stdout), key

    def test_the_jar_and_the_cookies_sent_are_the_lucky_runs(self):
        lucky, _ = self.run_py(OK, preload=False)
        retried, key = self.run_py(f"{FAIL},{OK}", preload=True)
        self.assertCount(self.plain, key, 2)
        self.assertEqual(retried["out"], lucky["out"])
        self.assertEqual(retried["jar"], lucky["jar"])
        self.assertEqual(len(retried["sent"]), 3, str(retried))
        self.assertEqual(retried["sent"][1:], lucky["sent"])

if __name__ == "__main__":
    unittest.main()
