"""What curl's own test suite found (issue 18, scripts/curl-suite.sh), one test of ours each.

Each test runs the same real program (the curl CLI, or tests/integration/callback_hosts/
callback_host, an ordinary libcurl program using the callbacks of the curl test named) with and
without the preload, and compares what the program saw. Servers the flaky upstream cannot play
(a proxy refusing CONNECT, an FTP server a redirect leads to) are small scripted ones here, on
127.0.0.1, stopped by the test that started them.
"""

import os
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
    """Enough of an FTP server for curl to fetch /file.txt (passive mode): returns its port."""

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
    def assertSame(self, plain, preloaded):
        self.assertEqual((preloaded.code, preloaded.stdout), (plain.code, plain.stdout),
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
        plain = callback_host("pause-upload", self.plain.script_url(self.key(), "early503"), preload=False)
        self.assertEqual(plain.code, 0, plain)
        self.assertIn(b"status=503", plain.stdout)
        # Without the fix the library holds the 503 body, the host never resumes its upload and
        # the program is killed by its alarm after 20 s.
        for _ in range(3):
            preloaded = callback_host("pause-upload", self.plain.script_url(self.key(), "early503"),
                                      preload=True)
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


if __name__ == "__main__":
    unittest.main()
