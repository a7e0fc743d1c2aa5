"""Parity of uploads from callbacks (issue 11 §2, §9; issue 18 §1, §2): a program's read, seek
and ioctl callbacks see under libcurlretry.so exactly what they see in a lucky first try.

Each case runs the same program twice against the flaky upstream: under the preload against a
script that fails first (`503,echo`), and without it against the lucky script (`echo`). The
program reports what its callbacks saw (calls, bytes, reads after it returned 0, rewinds); those
and the echoed body (SHA-256 and length of what the server received) must be equal. A libcurl
rewind of its own (a 307 re-sending the POST) must reach the program as it does without us.
"""

from __future__ import annotations

import json
import os
import unittest

import harness
from harness import UpstreamTestCase, echo_body, overloaded_body

PARITY_HOSTS = os.environ.get("CURLRETRY_PARITY_HOSTS_DIR", "")
UPLOAD_HOST = os.path.join(PARITY_HOSTS, "upload_host") if PARITY_HOSTS else ""
HAVE_PYCURL = harness.have_pycurl()

# argv: URL SIZE seek|noseek. A chunked PUT (no size) from READFUNCTION, as pycurl programs
# stream a generator; the callback counts every call and every call after it returned b"".
PYCURL_UPLOAD = r"""
import hashlib, io, json, sys, pycurl
url, size, how = sys.argv[1], int(sys.argv[2]), sys.argv[3]
data = hashlib.sha256(b"seed").digest() * (size // 32 + 1)
data = data[:size]
s = {"pos": 0, "reads": 0, "after_eof": 0, "eof": False, "seeks": 0, "read_bytes": 0}
def read(n):
    s["reads"] += 1
    if s["eof"]:
        s["after_eof"] += 1
    chunk = data[s["pos"]:s["pos"] + n]
    s["pos"] += len(chunk)
    s["read_bytes"] += len(chunk)
    if not chunk:
        s["eof"] = True
    return chunk
def seek(offset, origin):
    s["seeks"] += 1
    s["pos"], s["eof"] = offset, False
    return pycurl.SEEKFUNC_OK
body = io.BytesIO()
c = pycurl.Curl()
c.setopt(pycurl.URL, url)
c.setopt(pycurl.UPLOAD, 1)
c.setopt(pycurl.READFUNCTION, read)
if how == "seek":
    c.setopt(pycurl.SEEKFUNCTION, seek)
c.setopt(pycurl.WRITEDATA, body)
error = 0
try:
    c.perform()
except pycurl.error as e:
    error = e.args[0]
s.pop("eof")
print(json.dumps({"result": error, "status": c.getinfo(pycurl.RESPONSE_CODE),
                  "body": body.getvalue().decode("latin-1"),
                  "sha": hashlib.sha256(data).hexdigest(), **s}))
"""


def pycurl_data(size: int) -> bytes:
    import hashlib
    return (hashlib.sha256(b"seed").digest() * (size // 32 + 1))[:size]


class ParityTestCase(UpstreamTestCase):
    def url(self, script: str, label: str = "") -> tuple[str, str]:
        key = self.key(label)
        return key, self.plain.script_url(key, script)


@unittest.skipUnless(HAVE_PYCURL, harness.needs("python3-pycurl", "pycurl"))
class PycurlReadCallbackUpload(ParityTestCase):
    SIZE = 300_000

    def upload(self, script: str, how: str, *, preload: bool) -> tuple[dict, str]:
        key, url = self.url(script, how)
        r = harness.run([harness.PYTHON, "-c", PYCURL_UPLOAD, url, str(self.SIZE), how], preload=preload)
        self.assertEqual(r.code, 0, str(r))
        return json.loads(r.stdout), key

    def check(self, how: str) -> None:
        lucky, _ = self.upload("echo", how, preload=False)
        retried, key = self.upload("503,echo", how, preload=True)
        self.assertEqual(lucky["body"], echo_body(pycurl_data(self.SIZE)).decode(), f"lucky run {lucky}")
        self.assertEqual(retried["after_eof"], 0, f"the read callback was called after it returned EOF\n{retried}")
        self.assertEqual(retried, lucky, "the program saw something a lucky first try would not show it")
        self.assertCount(self.plain, key, 2)

    def test_without_seek_callback_the_replay_comes_from_the_kept_copy(self):
        self.check("noseek")

    def test_with_seek_callback_the_program_is_not_asked_to_seek(self):
        self.check("seek")

    def test_control_without_the_preload_the_503_is_the_answer(self):
        retried, key = self.upload("503,echo", "noseek", preload=False)
        self.assertEqual((retried["result"], retried["status"]), (0, 503), str(retried))
        self.assertEqual(retried["body"], overloaded_body(key, 1).decode())


class CHostTestCase(ParityTestCase):
    @classmethod
    def setUpClass(cls) -> None:
        if not UPLOAD_HOST or not os.access(UPLOAD_HOST, os.X_OK):
            raise RuntimeError(f"upload_host not found ({UPLOAD_HOST!r}): build the upload_host target "
                               "(tests/integration/parity_hosts) and set CURLRETRY_PARITY_HOSTS_DIR")
        super().setUpClass()

    def host(self, mode: str, url: str, size: int, *, preload: bool,
             env: dict[str, str] | None = None) -> tuple[dict[str, str], harness.Result]:
        r = harness.run([UPLOAD_HOST, mode, url, str(size)], preload=preload, env=env)
        self.assertEqual(r.code, 0, f"upload_host exit status\n{r}")
        values: dict[str, str] = {}
        for line in r.stderr.decode("utf-8", "replace").splitlines():
            if line.startswith("curlretry:"):
                continue
            for word in line.split():
                k, sep, v = word.partition("=")
                if sep:
                    values[k] = v
        return values, r


class IoctlRewind(CHostTestCase):
    """CURLOPT_IOCTLFUNCTION, no seek callback: libcurl rewinds through it (issue 18 §1)."""

    SIZE = 100_000

    def test_libcurls_own_rewind_reaches_the_ioctl_callback(self):
        runs = []
        for preload in (False, True):
            key, url = self.url(f"307+loc=/s/{self.key('target')}/echo")
            runs.append(self.host("ioctl", url, self.SIZE, preload=preload))
        (plain, plain_run), (pre, pre_run) = runs
        self.assertEqual((plain["result"], plain["status"], plain["ioctls"]), ("0", "200", "1"), str(plain_run))
        self.assertEqual(pre, plain, f"under the preload\n{pre_run}\nwithout\n{plain_run}")
        self.assertEqual(pre_run.stdout, plain_run.stdout)

    def test_a_retry_resends_the_kept_copy_without_asking_the_program(self):
        _, lucky_url = self.url("echo")
        lucky, lucky_run = self.host("ioctl", lucky_url, self.SIZE, preload=False)
        key, url = self.url("503,echo")
        retried, run = self.host("ioctl", url, self.SIZE, preload=True)
        self.assertEqual(retried, lucky, f"retried\n{run}\nlucky\n{lucky_run}")
        self.assertEqual(run.stdout, lucky_run.stdout)
        self.assertCount(self.plain, key, 2, run)


class FormStream(CHostTestCase):
    """curl_formadd(CURLFORM_STREAM): libcurl calls the read callback with the part's own
    pointer (issue 18 §2). The program's callback stays on the handle; such a form is not
    re-sent (the library kept no copy), so a 503 reaches the program as without us."""

    SIZE = 100_000

    def test_the_stream_part_is_read_by_the_programs_callback(self):
        runs = [self.host("formstream", self.url("echo")[1], self.SIZE, preload=p) for p in (False, True)]
        (plain, plain_run), (pre, pre_run) = runs
        self.assertEqual((plain["result"], plain["status"], plain["wrong_userdata"]), ("0", "200", "0"), str(plain_run))
        self.assertEqual(pre, plain, f"under the preload\n{pre_run}\nwithout\n{plain_run}")
        # The multipart boundary is random: compare the length of what the server received.
        self.assertEqual(pre_run.stdout.split(b"length=")[1], plain_run.stdout.split(b"length=")[1])

    def test_a_503_is_not_retried_and_reaches_the_program(self):
        runs = []
        for preload in (False, True):
            key, url = self.url("503,echo")
            values, r = self.host("formstream", url, self.SIZE, preload=preload)
            self.assertCount(self.plain, key, 1, r)
            self.assertEqual(r.stdout, overloaded_body(key, 1))
            runs.append(values)
        self.assertEqual(runs[1], runs[0])


def mime_source(size: int) -> bytes:
    """What upload_host's read callback gives: A..Z repeated."""
    return bytes(ord("A") + i % 26 for i in range(size))


class MimeCallbackPart(CHostTestCase):
    """CURLOPT_MIMEPOST with a curl_mime_data_cb part (issue 25 item 3). libcurl rewinds a MIME
    body at the start of each request and, for a part it read that has no seek callback, fails
    with CURLE_SEND_FAIL_REWIND (65). A retry is such a request: the shim keeps a bounded copy of
    what the part's read callback gave and answers the retry's rewind from it; a part it cannot
    re-send (copy overflowed, no seek) is not retried and the program gets the delivered 503."""

    SIZE = 100_000

    def expected_echo(self, values: dict[str, str]) -> bytes:
        # The exact multipart body of one part named "stream", with the boundary libcurl chose.
        b = values["boundary"].encode()
        body = (b"--" + b + b'\r\nContent-Disposition: form-data; name="stream"\r\n\r\n' +
                mime_source(self.SIZE) + b"\r\n--" + b + b"--\r\n")
        return echo_body(body)

    def small_copy(self) -> dict[str, str]:
        path = os.path.join(self.temp_dir(), "config.yaml")
        with open(path, "w") as f:
            f.write("version: 1\nsettings:\n  max_upload_replay: 1000\n")
        return {"CURLRETRY_CONFIG": path}

    def lucky_and_retried(self, mode: str) -> None:
        lucky, lucky_run = self.host(mode, self.url("echo")[1], self.SIZE, preload=False)
        key, url = self.url("503,echo")
        retried, run = self.host(mode, url, self.SIZE, preload=True)
        self.assertEqual((lucky["result"], lucky["status"], lucky["after_eof"]), ("0", "200", "0"), str(lucky_run))
        lucky.pop("boundary"), retried.pop("boundary")
        self.assertEqual(retried, lucky, f"retried\n{run}\nlucky\n{lucky_run}")
        self.assertCount(self.plain, key, 2, run)
        return lucky_run, run

    def test_lucky_run_reads_the_part_once(self):
        values, r = self.host("mimecb", self.url("echo")[1], self.SIZE, preload=True)
        self.assertEqual((values["result"], values["status"], values["after_eof"]), ("0", "200", "0"), str(r))
        self.assertEqual(r.stdout, self.expected_echo(values))

    def test_the_rebuilt_body_is_what_the_server_gets_without_the_preload(self):
        values, r = self.host("mimecb", self.url("echo")[1], self.SIZE, preload=False)
        self.assertEqual(r.stdout, self.expected_echo(values), str(r))

    def test_a_retry_resends_the_part_from_the_kept_copy(self):
        key, url = self.url("503,echo")
        values, r = self.host("mimecb", url, self.SIZE, preload=True)
        self.assertEqual((values["result"], values["status"]), ("0", "200"), f"not error 65\n{r}")
        self.assertEqual(r.stdout, self.expected_echo(values))
        self.assertEqual((values["reads"], values["read_bytes"], values["after_eof"]), ("2", str(self.SIZE), "0"), str(r))
        self.assertCount(self.plain, key, 2, r)
        self.lucky_and_retried("mimecb")

    def test_with_a_seek_callback_the_program_is_not_asked_to_seek(self):
        _, run = self.lucky_and_retried("mimecb-seek")

    def test_a_nested_part_of_unknown_size_is_resent_and_freed_once(self):
        lucky_run, run = self.lucky_and_retried("mimecb-nested")
        # Two random boundaries: what the server received has the same length.
        self.assertEqual(run.stdout.split(b"length=")[1], lucky_run.stdout.split(b"length=")[1])

    def test_multi_a_retry_resends_the_part_from_the_kept_copy(self):
        key, url = self.url("503,echo")
        values, r = self.host("mimecb-multi", url, self.SIZE, preload=True)
        self.assertEqual((values["result"], values["status"]), ("0", "200"), f"not error 65\n{r}")
        self.assertEqual(r.stdout, self.expected_echo(values))
        self.lucky_and_retried("mimecb-multi")

    def test_a_duplicated_handle_resends_its_copy_of_the_part(self):
        key, url = self.url("503,echo")
        values, r = self.host("mimecb-dup", url, self.SIZE, preload=True)
        self.assertEqual((values["result"], values["status"]), ("0", "200"), f"not error 65\n{r}")
        self.assertEqual(r.stdout, self.expected_echo(values))
        self.lucky_and_retried("mimecb-dup")

    def test_a_part_over_the_bound_without_seek_gets_the_503_as_without_the_preload(self):
        runs = []
        for preload in (False, True):
            key, url = self.url("503,echo")
            values, r = self.host("mimecb", url, self.SIZE, preload=preload, env=self.small_copy())
            self.assertNotIn(b"pass-through", r.stderr, f"the config was refused\n{r}")
            self.assertEqual(r.stdout, overloaded_body(key, 1), str(r))
            self.assertCount(self.plain, key, 1, r)
            values.pop("boundary")
            runs.append(values)
        self.assertEqual(runs[0]["result"], "0")
        self.assertEqual(runs[1], runs[0])

    def test_a_part_over_the_bound_with_seek_is_rewound_by_the_program_once(self):
        key, url = self.url("503,echo")
        values, r = self.host("mimecb-seek", url, self.SIZE, preload=True, env=self.small_copy())
        self.assertEqual((values["result"], values["status"], values["seeks"]), ("0", "200", "1"), str(r))
        self.assertEqual(r.stdout, self.expected_echo(values))
        self.assertEqual(values["read_bytes"], str(2 * self.SIZE), str(r))
        self.assertCount(self.plain, key, 2, r)

    def test_libcurls_own_rewind_reaches_the_program_as_without_the_preload(self):
        # A 307 re-sends the POST: libcurl rewinds the part itself. Without a seek callback that is
        # its error 65, with one a seek: both exactly as without the shim.
        for mode, code, seeks in (("mimecb", "65", "0"), ("mimecb-seek", "0", "1")):
            runs = []
            for preload in (False, True):
                key, url = self.url(f"307+loc=/s/{self.key('target')}/echo")
                values, r = self.host(mode, url, self.SIZE, preload=preload)
                values.pop("boundary")
                runs.append(values)
                self.assertEqual((values["result"], values["seeks"]), (code, seeks), f"{mode}\n{r}")
            self.assertEqual(runs[1], runs[0], mode)


if __name__ == "__main__":
    unittest.main()
