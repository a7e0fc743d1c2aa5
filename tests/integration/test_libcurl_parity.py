"""What curl's own test suite found (issue 18, scripts/curl-suite.sh), one test of ours each.

Each test runs the same real program (the curl CLI, or tests/integration/callback_hosts/
callback_host, an ordinary libcurl program using the callbacks of the curl test named) with and
without the preload, and compares what the program saw. Servers the flaky upstream cannot play
(a proxy refusing CONNECT, an FTP server a redirect leads to) are small scripted ones here, on
127.0.0.1, stopped by the test that started them.
"""

import json
import os
import re
import socket
import socketserver
import tempfile
import threading
import unittest
import urllib.parse

import harness
from harness import curl

HOSTS_DIR = os.environ.get("CURLRETRY_CALLBACK_HOSTS_DIR", "")
RETRIES_OFF = {"BILI_REPLAY_RETRY_MAX": "1"}


def callback_host(mode, url, *, preload, env=None):
    host = os.path.join(HOSTS_DIR, "callback_host")
    if not os.access(host, os.X_OK):
        raise AssertionError(f"{host} not built (CURLRETRY_CALLBACK_HOSTS_DIR={HOSTS_DIR!r})")
    return harness.run([host, mode, url], preload=preload, env=env)


def refusal_host(scenario, mode, url, *, preload, env=None):
    host = os.path.join(HOSTS_DIR, "refusal_host")
    if not os.access(host, os.X_OK):
        raise AssertionError(f"{host} not built (CURLRETRY_CALLBACK_HOSTS_DIR={HOSTS_DIR!r})")
    return harness.run([host, scenario, mode, url], preload=preload, env=env)


# A header callback that refuses its first line (curl_writeheader_callback.phpt of PHP's ext/curl
# does this), in pycurl easy and multi and in PHP easy and multi: what the program saw, as JSON.
PYCURL_REFUSE_HEADER = r"""
import json, sys, pycurl
calls = []
def header(line):
    calls.append(line.decode("latin-1"))
    return 0
c = pycurl.Curl()
c.setopt(pycurl.URL, sys.argv[1])
c.setopt(pycurl.HEADERFUNCTION, header)
c.setopt(pycurl.WRITEFUNCTION, lambda data: None)
report = {}
if sys.argv[2] == "easy":
    try:
        c.perform()
        report["error"] = None
    except pycurl.error as e:
        report["error"] = list(e.args)
else:
    m = pycurl.CurlMulti()
    m.add_handle(c)
    for _ in range(100000):
        ret, running = m.perform()
        if not running:
            break
        m.select(0.1)
    queued, ok, failed = m.info_read()
    report["error"] = [[code, text] for _, code, text in failed]
    m.remove_handle(c)
report["calls"] = calls
print(json.dumps(report, sort_keys=True))
"""

PHP_REFUSE_HEADER = r"""<?php
$calls = [];
$ch = curl_init($argv[1]);
curl_setopt($ch, CURLOPT_HEADERFUNCTION, function ($ch, $line) use (&$calls) {
    $calls[] = $line;
    return 0;
});
curl_setopt($ch, CURLOPT_RETURNTRANSFER, true);
$report = [];
if ($argv[2] === "easy") {
    $report["exec"] = curl_exec($ch);
} else {
    $mh = curl_multi_init();
    curl_multi_add_handle($mh, $ch);
    for ($i = 0; $i < 100000; $i++) {
        curl_multi_exec($mh, $running);
        if (!$running) break;
        curl_multi_select($mh, 0.1);
    }
    $info = curl_multi_info_read($mh);
    $report["done"] = $info === false ? null : $info["result"];
    curl_multi_remove_handle($mh, $ch);
}
$report["errno"] = curl_errno($ch);
$report["error"] = curl_error($ch);
$report["calls"] = $calls;
echo json_encode($report), "
";
"""


def closed_port():
    """A loopback port nothing listens on: connecting is refused."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class _Server(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True


def _serve(handler, case):
    server = _Server(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()

    def stop():
        server.shutdown()
        server.server_close()
        thread.join(5)

    case.addCleanup(stop)
    return server


def read_head(rfile):
    lines = []
    for _ in range(100):
        line = rfile.readline(8192)
        if line in (b"\r\n", b"\n", b""):
            break
        lines.append(line)
    return lines


def start_connect_proxy(case, statuses):
    """A proxy that answers the Nth CONNECT with statuses[N-1] (the last one repeats), a short
    body and Connection: close. Returns (port, the list of CONNECT lines it saw)."""
    seen = []

    class Handler(socketserver.StreamRequestHandler):
        def handle(self):
            head = read_head(self.rfile)
            if not head:
                return
            seen.append(head[0].decode(errors="replace").strip())
            status = statuses[min(len(seen), len(statuses)) - 1]
            body = b"proxy says no\n"
            extra = b"Proxy-Authenticate: Basic realm=\"p\"\r\n" if status == 407 else b""
            self.wfile.write(b"HTTP/1.1 %d Status\r\n%sContent-Length: %d\r\nConnection: close\r\n\r\n%s"
                             % (status, extra, len(body), body))

    server = _serve(Handler, case)
    return server.server_address[1], seen


def start_ftp(case, content):
    """Enough of an FTP server for curl to fetch /file.txt, or list it for a wildcard (passive
    mode): returns its port."""

    class Handler(socketserver.StreamRequestHandler):
        def reply(self, text):
            self.wfile.write(text.encode() + b"\r\n")

        def handle(self):
            data_listener = None
            self.reply("220 ready")
            for _ in range(50):
                line = self.rfile.readline(1024).decode(errors="replace").strip()
                if not line:
                    break
                verb, _, arg = line.partition(" ")
                verb = verb.upper()
                if verb == "USER":
                    self.reply("331 password please")
                elif verb == "PASS":
                    self.reply("230 welcome")
                elif verb == "PWD":
                    self.reply('257 "/" is current')
                elif verb in ("TYPE", "CWD"):
                    self.reply("200 ok")
                elif verb == "SIZE":
                    self.reply(f"213 {len(content)}")
                elif verb == "MDTM":
                    self.reply("213 20240101000000")
                elif verb == "EPSV":
                    data_listener = socket.socket()
                    data_listener.bind(("127.0.0.1", 0))
                    data_listener.listen(1)
                    data_listener.settimeout(10)
                    self.reply(f"229 Entering Extended Passive Mode (|||{data_listener.getsockname()[1]}|)")
                elif verb == "LIST" and data_listener is not None:
                    # One file, in the `ls -l` form libcurl's wildcard matching parses.
                    conn, _ = data_listener.accept()
                    self.reply("150 listing")
                    conn.sendall(b"-rw-r--r--    1 ftp      ftp      %8d Jan 01  2024 file.txt\r\n" % len(content))
                    conn.close()
                    data_listener.close()
                    data_listener = None
                    self.reply("226 done")
                elif verb == "RETR" and data_listener is not None:
                    conn, _ = data_listener.accept()
                    self.reply("150 here it comes")
                    conn.sendall(content)
                    conn.close()
                    data_listener.close()
                    data_listener = None
                    self.reply("226 done")
                elif verb == "QUIT":
                    self.reply("221 bye")
                    break
                else:
                    self.reply("502 not implemented")
            if data_listener is not None:
                data_listener.close()

    server = _serve(Handler, case)
    return server.server_address[1]


class LibcurlParity(harness.UpstreamTestCase):
    # libcurl's connect error names the milliseconds it took ("after 0 ms"): a wall-clock
    # figure of the machine, 0 or 1 by chance (and more under a sanitizer), not a byte curlretry
    # owns. Every other byte is compared as is.
    ELAPSED = re.compile(rb"after \d+ ms: ")

    def assertSame(self, plain, preloaded):
        def seen(r):
            return r.code, self.ELAPSED.sub(b"after N ms: ", r.stdout)
        self.assertEqual(seen(preloaded), seen(plain),
                         f"\nwithout curlretry: {plain}\nwith curlretry:    {preloaded}")

    # --- item 3, curl test 585: the order of the header and close-socket callbacks ----------

    def test_headers_of_a_bodyless_response_come_before_the_socket_closes(self):
        raw = ("HTTP/1.1 302 eat this!\r\nLocation: this-is-the-first.html\r\nContent-Length: 0\r\n"
               "Connection: close\r\n\r\n")
        script = "raw+data=" + urllib.parse.quote(raw, safe="")
        for env in (None, RETRIES_OFF):
            with self.subTest(env=env):
                k = self.key()
                url = self.plain.script_url(k, script)
                plain = callback_host("closesocket", url, preload=False)
                self.assertEqual(plain.stdout.splitlines()[-2:], [b"[CLOSE]", b"result=0"], plain)
                self.assertSame(plain, callback_host("closesocket", url, preload=True, env=env))

    # --- item 4, curl tests 1028, 1055, 973, 975: a redirect to ftp:// with --include ------

    def test_http_headers_of_a_redirect_to_ftp_reach_the_output(self):
        ftp_port = start_ftp(self, b"file contents\n")
        target = urllib.parse.quote(f"ftp://127.0.0.1:{ftp_port}/file.txt", safe="")
        for env in (None, RETRIES_OFF):
            with self.subTest(env=env):
                k = self.key()
                url = self.plain.script_url(k, "302+loc=" + target)
                plain = curl(["-sS", "-i", "-L", url], preload=False)
                self.assertIn(b"HTTP/1.1 302", plain.stdout)
                self.assertTrue(plain.stdout.endswith(b"file contents\n"), plain)
                self.assertSame(plain, curl(["-sS", "-i", "-L", url], preload=True, env=env))

    # --- item 5, curl test 1533: a response that arrives while the host holds its upload ----

    def test_an_early_response_to_a_paused_upload_reaches_the_write_callback(self):
        # Every attempt is answered early: this program's upload waits for the response, so it
        # cannot talk to a server that waits for the upload (with or without curlretry).
        # (Keys of one length: the response names its key, and its length is compared.)
        keys = [self.key() for _ in range(4)]
        keys = [k.ljust(max(map(len, keys)), "x") for k in keys]
        plain = callback_host("pause-upload", self.plain.script_url(keys[0], "early503"), preload=False)
        self.assertEqual(plain.code, 0, plain)
        self.assertIn(b"status=503", plain.stdout)
        # Without the fix the library holds the 503 body, the host never resumes its upload and
        # the program is killed by its alarm after 20 s.
        for key in keys[1:]:
            preloaded = callback_host("pause-upload", self.plain.script_url(key, "early503"), preload=True)
            self.assertSame(plain, preloaded)

    # --- item 6, curl test 1915: callbacks libcurl calls once per transfer ------------------

    def test_the_hsts_read_callback_runs_once_per_transfer_not_per_attempt(self):
        url = f"http://127.0.0.1:{closed_port()}/"
        plain = callback_host("hsts", url, preload=False)
        self.assertEqual(plain.stdout, b"hsts-read calls=3\nresult=7\n", plain)
        preloaded = callback_host("hsts", url, preload=True)
        self.assertSame(plain, preloaded)
        self.assertIn(b"retrying", preloaded.stderr)  # the refused connection was retried

    # --- item 7 (and issue 11 item 3): a proxy refusing CONNECT -----------------------------

    def connect_via(self, port, preload):
        return curl(["-sS", "-x", f"http://127.0.0.1:{port}", "https://origin.invalid/x"], preload=preload)

    def test_a_proxy_refusing_connect_is_not_retried(self):
        for status in (407, 405, 403):
            with self.subTest(status=status):
                port, seen = start_connect_proxy(self, [status])
                plain = self.connect_via(port, False)
                self.assertEqual(plain.code, 56, plain)
                self.assertEqual(len(seen), 1)
                preloaded = self.connect_via(port, True)
                self.assertSame(plain, preloaded)
                self.assertEqual(preloaded.stderr, plain.stderr)
                self.assertEqual(len(seen), 2, seen)  # one CONNECT each

    def test_a_proxy_answering_connect_with_503_is_retried(self):
        port, seen = start_connect_proxy(self, [503])
        preloaded = self.connect_via(port, True)
        self.assertEqual(preloaded.code, 56, preloaded)
        self.assertEqual(len(seen), 3, seen)  # max_attempts 3
        self.assertIn(b"HTTP 503", preloaded.stderr)

    # --- item 8, curl test 1416: a malformed chunked response is a protocol error -----------

    def test_a_malformed_chunked_response_is_not_retried(self):
        raw = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nFFFFFFFFFFFFFFFFFFFFFFFFFFFF\r\nabc\r\n"
        script = "raw+data=" + urllib.parse.quote(raw, safe="") + ",200"
        plain_key, key = self.key(), self.key()
        plain = curl(["-sS", self.plain.script_url(plain_key, script)], preload=False)
        self.assertEqual(plain.code, 56, plain)
        preloaded = curl(["-sS", self.plain.script_url(key, script)], preload=True)
        self.assertSame(plain, preloaded)
        self.assertCount(self.plain, key, 1, preloaded)

    # --- item 9, curl tests 158, 170, 1531: a POST answered by a closed connection -----------

    def config_file(self, text):
        d = tempfile.TemporaryDirectory(prefix="curlretry-parity-")
        self.addCleanup(d.cleanup)
        path = os.path.join(d.name, "config.yaml")
        with open(path, "w") as f:
            f.write(text)
        return path

    def test_an_unanswered_post_is_sent_again_by_default(self):
        k = self.key()
        r = curl(["-sS", "-d", "x=1", self.plain.script_url(k, "close,200")], preload=True)
        self.assertRun(r, 0, harness.ok_body(k, 2))
        self.assertCount(self.plain, k, 2, r)

    def test_unanswered_post_false_hands_the_empty_reply_to_the_program(self):
        config = self.config_file("version: 1\ndefaults:\n  retry_on: {unanswered_post: false}\n")
        env = {"CURLRETRY_CONFIG": config}
        k, plain_key = self.key(), self.key()
        plain = curl(["-sS", "-d", "x=1", self.plain.script_url(plain_key, "close,200")], preload=False)
        self.assertEqual(plain.code, 52, plain)
        r = curl(["-sS", "-d", "x=1", self.plain.script_url(k, "close,200")], preload=True, env=env)
        self.assertSame(plain, r)
        self.assertCount(self.plain, k, 1, r)
        # A GET is idempotent whatever the key says, and so is a POST refused before it went out.
        g = self.key()
        r = curl(["-sS", self.plain.script_url(g, "close,200")], preload=True, env=env)
        self.assertRun(r, 0, harness.ok_body(g, 2))
        r = curl(["-sS", "-d", "x=1", f"http://127.0.0.1:{closed_port()}/"], preload=True, env=env)
        self.assertEqual(r.code, 7, r)
        self.assertIn(b"retrying", r.stderr)


    # --- issue 25: a program's own "no" is final -------------------------------------------

    def twin_keys(self):
        """Two fresh keys of the same length: a response naming its key is as long for both."""
        a, b = self.key("a"), self.key("b")
        width = max(len(a), len(b))
        return a.ljust(width, "x"), b.ljust(width, "x")

    # Each refusal of the program's header or write callback: the same calls with their
    # arguments, the same code, the same CURLOPT_ERRORBUFFER text as without curlretry, easy and
    # multi, with retries off and with the default policy, and one request upstream.
    WRITE_REFUSALS = ("header-0", "header-short", "header-error", "header-later", "write-0", "write-short",
                      "write-error")

    def assertRefusalSame(self, scenario, script, *, envs=(None, RETRIES_OFF), requests=1, plain_requests=1):
        for mode in ("easy", "multi"):
            for env in envs:
                with self.subTest(scenario=scenario, mode=mode, env=env):
                    plain_key, key = self.twin_keys()
                    plain = refusal_host(scenario, mode, self.plain.script_url(plain_key, script), preload=False)
                    self.assertIn(b"result=", plain.stdout, plain)
                    preloaded = refusal_host(scenario, mode, self.plain.script_url(key, script), preload=True,
                                             env=env)
                    self.assertSame(plain, preloaded)
                    self.assertCount(self.plain, plain_key, plain_requests, plain)
                    self.assertCount(self.plain, key, requests if env is None else plain_requests, preloaded)

    def test_a_refused_header_or_body_ends_the_transfer_as_without_curlretry(self):
        for scenario in self.WRITE_REFUSALS:
            self.assertRefusalSame(scenario, "200")

    def test_the_header_callback_refusing_the_status_line_is_called_once(self):
        plain = refusal_host("header-0", "easy", self.plain.script_url(self.key(), "200"), preload=False)
        self.assertEqual(plain.stdout.splitlines()[0], b"header(17): HTTP/1.1 200 OK", plain)
        self.assertEqual(plain.stdout.count(b"header("), 1, plain)
        self.assertIn(b"\nerror=Failed writing header\n", plain.stdout)
        # Before the fix: the status line a second time, then every header, and libcurl's text
        # for a refused body.
        for env in (None, RETRIES_OFF):
            r = refusal_host("header-0", "easy", self.plain.script_url(self.key(), "200"), preload=True,
                             env={**(env or {}), "CURLRETRY_LOG": "debug"})
            self.assertEqual(r.stdout.count(b"header("), 1, r)
            self.assertIn(b"\nerror=Failed writing header\n", r.stdout)
            self.assertNotIn(b"-> replaying", r.stderr)

    def test_a_refused_final_response_after_retries_reads_as_libcurls_refusal(self):
        # The 503s before were never the program's; the one it refuses is the delivered one.
        for scenario in ("header-0", "header-later", "write-0"):
            self.assertRefusalSame(scenario, "503", requests=3)

    def test_an_open_socket_callback_returning_bad_is_not_retried(self):
        # libcurl reports it as a refused connection (7): the program's own refusal, called once
        # as without curlretry (before the fix: 3 calls and the backoff waits between them).
        self.assertRefusalSame("opensocket-bad", "200", requests=0, plain_requests=0)
        plain = refusal_host("opensocket-bad", "easy", self.plain.script_url(self.key(), "200"), preload=False)
        self.assertEqual(plain.stdout.count(b"opensocket("), 1, plain)
        self.assertIn(b"result=7 ", plain.stdout)
        # A socket the program opens, refused by the network, is retried as before.
        url = f"http://127.0.0.1:{closed_port()}/"
        plain = refusal_host("opensocket-ok", "easy", url, preload=False)
        self.assertEqual(plain.stdout.count(b"opensocket("), 1, plain)
        for mode in ("easy", "multi"):
            r = refusal_host("opensocket-ok", mode, url, preload=True)
            self.assertEqual(r.stdout.count(b"opensocket("), 3, r)
            self.assertIn(b"result=7 ", r.stdout)

    # The rest of the sweep: each callback's stop value, with and without curlretry.
    def test_every_other_callback_refusal_is_the_programs_own(self):
        for scenario in ("xferinfo-abort", "progress-abort", "sockopt-error", "prereq-abort", "debug"):
            self.assertRefusalSame(scenario, "200", plain_requests=0 if scenario != "debug" else 1,
                                   requests=0 if scenario != "debug" else 1)

    def test_a_resolver_start_refusal_is_not_retried(self):
        # A name is resolved (127.0.0.1 is not): the callback refuses, libcurl says error 6.
        port = self.plain.origin.rsplit(":", 1)[1].strip("/")
        for mode in ("easy", "multi"):
            url = f"http://localhost:{port}/s/{self.key()}/200"
            plain = refusal_host("resolver-start", mode, url, preload=False)
            self.assertIn(b"result=6 ", plain.stdout, plain)
            for env in (None, RETRIES_OFF):
                self.assertSame(plain, refusal_host("resolver-start", mode, url, preload=True, env=env))

    def test_an_ssl_ctx_refusal_is_not_retried(self):
        # Whatever code the program's SSL_CTX callback returns, a handshake error's included.
        for scenario in ("ssl-ctx", "ssl-ctx-35"):
            for mode in ("easy", "multi"):
                with self.subTest(scenario=scenario, mode=mode):
                    plain_key, key = self.twin_keys()
                    plain = refusal_host(scenario, mode, self.tls().script_url(plain_key, "200"), preload=False)
                    self.assertEqual(plain.stdout.count(b"ssl-ctx\n"), 1, plain)
                    preloaded = refusal_host(scenario, mode, self.tls().script_url(key, "200"), preload=True)
                    self.assertSame(plain, preloaded)

    def test_upload_callback_refusals_end_the_transfer_as_without_curlretry(self):
        # The same calls, the same result and error text, nothing retried. (Their order against
        # the header callback differs: a 100 Continue and a followed redirect's headers are held
        # until the response's first body byte, docs/CALLBACKS.md.)
        cases = (("read-abort", "200"), ("trailer-abort", "200"),
                 ("seek-fail", "307+loc=%2Fs%2Fseek-target%2F200"), ("seek-cantseek", "307+loc=%2Fs%2Fseek-target%2F200"))
        for scenario, script in cases:
            for mode in ("easy", "multi"):
                for env in (None, RETRIES_OFF):
                    with self.subTest(scenario=scenario, mode=mode, env=env):
                        plain_key, key = self.twin_keys()
                        plain = refusal_host(scenario, mode, self.plain.script_url(plain_key, script), preload=False)
                        preloaded = refusal_host(scenario, mode, self.plain.script_url(key, script), preload=True,
                                                 env=env)
                        self.assertEqual(preloaded.code, plain.code, preloaded)
                        self.assertEqual(sorted(preloaded.stdout.splitlines()), sorted(plain.stdout.splitlines()),
                                         f"\nwithout curlretry: {plain}\nwith curlretry:    {preloaded}")
                        self.assertEqual(preloaded.stdout.splitlines()[-3:], plain.stdout.splitlines()[-3:])
                        self.assertEqual(self.plain.count(key), self.plain.count(plain_key), preloaded)

    def test_an_ioctl_refusal_is_libcurls_own(self):
        # No seek callback, the old ioctl one: a 307 makes libcurl rewind the upload through it,
        # and its CURLIOE_FAILRESTART ends the transfer with 65 and libcurl's own text.
        script = "307+loc=%2Fs%2Fioctl-target%2F200"
        for mode in ("easy", "multi"):
            for env in (None, RETRIES_OFF):
                with self.subTest(mode=mode, env=env):
                    plain_key, key = self.twin_keys()
                    plain = refusal_host("ioctl-fail", mode, self.plain.script_url(plain_key, script), preload=False)
                    self.assertIn(b"result=65 ", plain.stdout, plain)
                    self.assertEqual(plain.stdout.count(b"ioctl("), 1, plain)
                    preloaded = refusal_host("ioctl-fail", mode, self.plain.script_url(key, script), preload=True,
                                             env=env)
                    self.assertEqual(sorted(preloaded.stdout.splitlines()), sorted(plain.stdout.splitlines()),
                                     f"\nwithout curlretry: {plain}\nwith curlretry:    {preloaded}")
                    self.assertEqual(preloaded.stdout.splitlines()[-3:], plain.stdout.splitlines()[-3:])
                    self.assertEqual(self.plain.count(key), self.plain.count(plain_key), preloaded)

    def test_hsts_callback_refusals_are_libcurls_own(self):
        # CURLSTS_FAIL from the read callback (called once per transfer, at its start) and from
        # the write callback (called at cleanup with the entry the read callback gave).
        for scenario, requests in (("hsts-read-fail", 0), ("hsts-write-fail", 1)):
            self.assertRefusalSame(scenario, "200", requests=requests, plain_requests=requests)
            plain = refusal_host(scenario, "easy", self.plain.script_url(self.key(), "200"), preload=False)
            self.assertIn(b"hsts-read(1)", plain.stdout, plain)
        plain = refusal_host("hsts-write-fail", "easy", self.plain.script_url(self.key(), "200"), preload=False)
        self.assertIn(b"hsts-write(hsts.example.invalid, 0/1)", plain.stdout, plain)

    def test_hsts_read_is_called_once_per_transfer_across_retries(self):
        plain_key, key = self.twin_keys()
        plain = refusal_host("hsts-write-fail", "easy", self.plain.script_url(plain_key, "200"), preload=False)
        preloaded = refusal_host("hsts-write-fail", "easy", self.plain.script_url(key, "503,200"), preload=True)
        self.assertEqual(preloaded.stdout.count(b"hsts-read("), plain.stdout.count(b"hsts-read("), preloaded)
        self.assertIn(b"result=0 ", preloaded.stdout, preloaded)
        self.assertCount(self.plain, key, 2, preloaded)

    def test_a_paused_body_is_resumed_as_without_curlretry(self):
        # CURL_WRITEFUNC_PAUSE is the program's to hold and to end (curl_easy_pause from its
        # progress callback): the chunk comes again once.
        self.assertRefusalSame("write-pause", "200")
        plain = refusal_host("write-pause", "easy", self.plain.script_url(self.key(), "200"), preload=False)
        self.assertEqual(plain.stdout.count(b"write("), 2, plain)
        self.assertIn(b"resume=0\n", plain.stdout, plain)

    # A held body (a 503 retried until given up, then handed over) that the program pauses, then
    # resumes from its progress callback: libcurl hands the pending chunk over inside
    # curl_easy_pause(CONT), and keeps calling the progress callback while the transfer is
    # paused, with the counts it had when it read that chunk. (Before: easy got the chunk after
    # curl_easy_pause returned; multi never called the progress callback, a hang of the host.)
    # write-pause-abort: the progress callback aborts the paused transfer instead;
    # write-pause-refuse: the chunk handed over inside curl_easy_pause is refused (libcurl 7.88:
    # that call says 23, the transfer keeps its own result).
    PAUSED_HELD_BODY = {
        "write-pause": rb"header\(2\): \r\nwrite\((\d+)\)\npause\nxferinfo\(\1/\1, 0/0\)\nwrite\(\1\)\nresume=0\n"
                       rb"(done\n)?result=0 \(No error\)\nerror=\n",
        "write-pause-abort": rb"header\(2\): \r\nwrite\((\d+)\)\npause\nxferinfo\(\1/\1, 0/0\)\n(done\n)?result=42 "
                             rb"\(.*\)\nerror=Callback aborted\n",
        "write-pause-refuse": rb"header\(2\): \r\nwrite\((\d+)\)\npause\nxferinfo\(\1/\1, 0/0\)\nwrite\(\1\)\n"
                              rb"resume=23\n(done\n)?result=0 \(No error\)\nerror=Failure writing output to destination\n",
    }

    def assertPausedHeldBodySame(self, mode):
        for scenario, plain_shape in self.PAUSED_HELD_BODY.items():
            with self.subTest(scenario=scenario):
                plain_key, key = self.twin_keys()
                plain = refusal_host(scenario, mode, self.plain.script_url(plain_key, "503"), preload=False)
                self.assertRegex(plain.stdout, plain_shape, plain)
                preloaded = refusal_host(scenario, mode, self.plain.script_url(key, "503"), preload=True)
                self.assertSame(plain, preloaded)
                self.assertCount(self.plain, plain_key, 1, plain)
                self.assertCount(self.plain, key, 3, preloaded)  # max_attempts 3: held, then given

    def test_a_paused_held_body_is_resumed_inside_curl_easy_pause(self):
        self.assertPausedHeldBodySame("easy")

    def test_a_paused_held_body_on_a_multi_handle_is_resumed_from_the_progress_callback(self):
        self.assertPausedHeldBodySame("multi")

    def test_ftp_wildcard_callback_refusals_are_libcurls_own(self):
        # CURLOPT_WILDCARDMATCH over FTP: not HTTP, never an attempt of curlretry's; each refusal
        # (the chunk-begin, chunk-end and fnmatch callbacks) ends the transfer as libcurl ends it.
        port = start_ftp(self, b"file contents\n")
        url = f"ftp://127.0.0.1:{port}/*.txt"
        plain = refusal_host("wildcard-ok", "easy", url, preload=False)
        self.assertIn(b"chunk-bgn(file.txt)\n", plain.stdout, plain)
        self.assertIn(b"write(14)\nchunk-end\n", plain.stdout, plain)
        self.assertIn(b"result=0 ", plain.stdout, plain)

        def passive_ports_out(run):  # each data connection has a port of its own
            run.stdout = re.sub(rb"\(\|\|\|\d+\|\)", b"(|||port|)", run.stdout)
            return run

        for scenario in ("wildcard-ok", "chunk-bgn-fail", "chunk-end-fail", "fnmatch-fail"):
            for mode in ("easy", "multi"):
                for env in (None, RETRIES_OFF):
                    with self.subTest(scenario=scenario, mode=mode, env=env):
                        plain = refusal_host(scenario, mode, url, preload=False)
                        self.assertIn(b"result=", plain.stdout, plain)
                        # (libcurl 7.88 ends the transfer with 0 after the last file whatever the
                        # chunk-end callback says: so does it with curlretry.)
                        if scenario in ("chunk-bgn-fail", "fnmatch-fail"):
                            self.assertNotIn(b"result=0 ", plain.stdout, plain)
                        self.assertSame(passive_ports_out(plain),
                                        passive_ports_out(refusal_host(scenario, mode, url, preload=True, env=env)))

    def test_multi_socket_and_timer_callbacks_returning_minus_one(self):
        # curl_multi_socket_action hosts: a socket or timer callback's -1 is the program's own
        # abort of the multi handle, as libcurl makes of it; the same loop without a refusal is
        # the control.
        for scenario in ("socket-ok", "socket-fail", "timer-fail"):
            for env in (None, RETRIES_OFF):
                with self.subTest(scenario=scenario, env=env):
                    plain_key, key = self.twin_keys()
                    plain = refusal_host(scenario, "socket", self.plain.script_url(plain_key, "200"), preload=False)
                    self.assertIn(b"result=", plain.stdout, plain)
                    preloaded = refusal_host(scenario, "socket", self.plain.script_url(key, "200"), preload=True,
                                             env=env)
                    self.assertSame(plain, preloaded)
                    self.assertEqual(self.plain.count(key), self.plain.count(plain_key), preloaded)
        plain = refusal_host("socket-ok", "socket", self.plain.script_url(self.key(), "200"), preload=False)
        self.assertIn(b"result=0 ", plain.stdout, plain)

    def run_script(self, interpreter, name, text, url, mode, preload, env=None):
        path = self.temp_dir() / name
        path.write_text(text)
        return harness.run([interpreter, str(path), url, mode], preload=preload, env=env)

    def assertScriptRefusalSame(self, interpreter, name, text):
        for mode in ("easy", "multi"):
            plain_key, key = self.twin_keys()
            plain = self.run_script(interpreter, name, text, self.plain.script_url(plain_key, "200"), mode, False)
            self.assertEqual(plain.code, 0, plain)
            report = json.loads(plain.stdout)
            self.assertEqual(report["calls"], ["HTTP/1.1 200 OK\r\n"], plain)
            self.assertIn("Failed writing header", plain.stdout.decode(), plain)
            for runs, env in enumerate((None, RETRIES_OFF), start=1):
                with self.subTest(interpreter=interpreter, mode=mode, env=env):
                    preloaded = self.run_script(interpreter, name, text, self.plain.script_url(key, "200"), mode,
                                                True, env)
                    self.assertSame(plain, preloaded)
                    self.assertCount(self.plain, key, runs, preloaded)  # one request per run
                    self.assertCount(self.plain, plain_key, 1)

    @unittest.skipUnless(harness.have_pycurl(), harness.needs("python3-pycurl", "pycurl"))
    def test_pycurl_header_callback_refusing_the_status_line(self):
        self.assertScriptRefusalSame(harness.PYTHON, "refuse.py", PYCURL_REFUSE_HEADER)

    @unittest.skipUnless(harness.have_php_function("curl_exec"), harness.needs("php-curl", "php-cli with php-curl"))
    def test_php_header_callback_refusing_the_status_line(self):
        self.assertScriptRefusalSame(harness.PHP, "refuse.php", PHP_REFUSE_HEADER)

if __name__ == "__main__":
    unittest.main()
