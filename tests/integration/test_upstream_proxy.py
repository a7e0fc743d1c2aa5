"""curlretry's proxy reaching every upstream through a proxy of the user's own (proxy.upstream_proxy,
CURLRETRY_UPSTREAM_PROXY), the way a company network's only way out is used: a real tinyproxy on
127.0.0.1 with Basic auth. Routes and forward requests go through it as libcurl's proxied requests,
blind tunnels with a CONNECT of their own, and the zero-config launch (`curlretry -- COMMAND` with
HTTPS_PROXY set) keeps that proxy as the way out instead of running COMMAND without retries. The
proxy's password never reaches a log line. Before: the proxy always connected directly (the
launcher ran COMMAND without it), so tinyproxy saw nothing and each test here fails.
"""

from __future__ import annotations

import http.server
import os
import signal
import unittest

import harness
import test_launcher_proxy as launcher
from harness import ok_body, overloaded_body
from loopback_server import LoopbackHttpServer
from proxy_support import Proxy, TinyProxy, raw_exchange, wait_for

UNREACHABLE = b'{"error":"curlretry proxy","detail":"the upstream could not be reached"}\n'


class Parent(harness.UpstreamTestCase):
    """Each test its own tinyproxy, so its log holds that test's requests only."""

    def setUp(self) -> None:
        self.parent = TinyProxy().start()
        self.addCleanup(self.parent.stop)

    def proxy(self, extra: str = "", password: str | None = None) -> Proxy:
        p = Proxy(f"version: 1\nproxy:\n  upstream_proxy: {self.parent.url(password)}\n"
                  "  forward: {allow_ports: any, allow_loopback: true}\n"
                  f"  routes:\n    flaky: {{upstream: \"{self.plain.origin}\"}}\n{extra}").start()
        self.addCleanup(p.stop)
        return p

    def assertNoSecret(self, *texts: str) -> None:
        for text in texts:
            self.assertNotIn(TinyProxy.PASSWORD, text)

    def test_a_route_goes_through_it_and_is_retried(self):
        proxy = self.proxy()
        key = self.key()
        result = harness.run([harness.CURL, "-q", "-sS", "--noproxy", "*", proxy.url(f"/flaky/s/{key}/503,529,200")],
                             preload=False)
        self.assertRun(result, 0, ok_body(key, 3))
        self.assertCount(self.plain, key, 3, result)
        # Each attempt is a request tinyproxy forwarded (absolute form, its credentials accepted).
        self.assertEqual(self.parent.requests(), [f"GET {self.plain.origin}/s/{key}/503,529,200 HTTP/1.1"] * 3)
        self.assertIn(f"curlretry: proxy reaches every upstream through your proxy 127.0.0.1:{self.parent.port} "
                      "(proxy.upstream_proxy)\n", proxy.log())
        self.assertNoSecret(proxy.log())

    def test_a_give_up_through_it_reaches_the_client_byte_for_byte(self):
        proxy = self.proxy()
        key = self.key()
        result = harness.run([harness.CURL, "-q", "-sS", "-w", " %{http_code}", "--noproxy", "*",
                              proxy.url(f"/flaky/s/{key}/{','.join(['503'] * 12)}")], preload=False)
        self.assertRun(result, 0, overloaded_body(key, 3) + b" 503")
        self.assertEqual(len(self.parent.requests()), 3, self.parent.log())

    def test_a_blind_tunnel_goes_through_its_connect(self):
        proxy = self.proxy()
        key = self.key()
        # curl asks curlretry's proxy for a tunnel (-p): not intercepted, so a blind one, which
        # asks tinyproxy for its own.
        result = harness.run([harness.CURL, "-q", "-sS", "-p", "-x", proxy.url(""), self.plain.script_url(key, "200")],
                             preload=False)
        self.assertRun(result, 0, ok_body(key, 1))
        self.assertEqual(self.parent.requests(), [f"CONNECT 127.0.0.1:{self.plain.port} HTTP/1.1"])
        self.assertNoSecret(proxy.log())

    def test_a_tunnel_it_refuses_is_a_502_and_one_line_without_the_password(self):
        proxy = self.proxy(password="wrong-pass")
        key = self.key()
        target = f"127.0.0.1:{self.plain.port}"
        result = harness.run([harness.CURL, "-q", "-sS", "-p", "-x", proxy.url(""), "-w", "%{http_connect}",
                              self.plain.script_url(key, "200")], preload=False)
        # curl says the CONNECT failed; the 502 and its body are what curlretry's proxy answered.
        self.assertEqual((result.code, result.stdout), (56, b"502"), str(result))
        self.assertCount(self.plain, key, 0, result)
        self.assertEqual(self.parent.requests(), [f"CONNECT {target} HTTP/1.1"])
        raw = raw_exchange(proxy.port, f"CONNECT {target} HTTP/1.1\r\nHost: {target}\r\n\r\n".encode())
        self.assertEqual(raw.split(b"\r\n\r\n", 1)[1], UNREACHABLE)
        lines = [line for line in proxy.log().splitlines() if "warning: your proxy" in line]
        # Two refusals, one line: the second came within the line's 10 s.
        self.assertEqual(lines, [f"curlretry: proxy: warning: your proxy (proxy.upstream_proxy) answered 401 to "
                                 f"CONNECT for {target} (1 so far; this line at most every 10 s)"], proxy.log())
        self.assertNoSecret(proxy.log())
        self.assertNotIn("wrong", proxy.log())


class ScriptedParent(unittest.TestCase):
    """A proxy of the user's that answers CONNECT with bytes the test chose: the bounds and the
    bytes a real proxy rarely sends."""

    def parent(self, reply: bytes) -> list[dict]:
        seen: list[dict] = []

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_CONNECT(self):
                seen.append({"line": self.requestline, "authorization": self.headers.get("Proxy-Authorization")})
                self.wfile.write(reply)
                self.wfile.flush()
                self.close_connection = True

            def log_message(self, *args):
                pass

        server = LoopbackHttpServer(Handler).start()
        self.addCleanup(server.stop)
        self.proxy = Proxy(f"version: 1\nproxy:\n  upstream_proxy: http://u%40x:p@127.0.0.1:{server.port}\n"
                           "  forward: {allow_ports: any, allow_loopback: true}\n").start()
        self.addCleanup(self.proxy.stop)
        return seen

    def test_an_answer_head_past_16_kib_is_refused_not_buffered(self):
        seen = self.parent(b"HTTP/1.1 200 OK\r\nX-Pad: " + b"a" * (20 * 1024) + b"\r\n\r\n")
        raw = raw_exchange(self.proxy.port, b"CONNECT 127.0.0.1:9 HTTP/1.1\r\nHost: 127.0.0.1:9\r\n\r\n")
        self.assertEqual(raw.split(b"\r\n\r\n", 1)[1], UNREACHABLE)
        # The credentials went as Basic, decoded from the URL ("u@x:p").
        self.assertEqual(seen, [{"line": "CONNECT 127.0.0.1:9 HTTP/1.1", "authorization": "Basic dUB4OnA="}])
        self.assertIn("curlretry: proxy: warning: your proxy (proxy.upstream_proxy) sent no answer to CONNECT it "
                      "could be read from for 127.0.0.1:9 (1 so far; this line at most every 10 s)\n", self.proxy.log())

    def test_bytes_it_sends_after_its_200_reach_the_client(self):
        self.parent(b"HTTP/1.1 200 Connection established\r\nX-Any: 1\r\n\r\nfirst bytes of the target")
        raw = raw_exchange(self.proxy.port, b"CONNECT 127.0.0.1:9 HTTP/1.1\r\nHost: 127.0.0.1:9\r\n\r\n")
        self.assertEqual(raw, b"HTTP/1.1 200 Connection Established\r\n\r\nfirst bytes of the target")


class Launched(launcher.OwnProxy):
    """`curlretry -- COMMAND` with HTTPS_PROXY naming the user's own proxy."""

    def setUp(self) -> None:
        super().setUp()
        self.parent = TinyProxy().start()
        self.addCleanup(self.parent.stop)

    def test_the_launch_goes_through_the_users_proxy_and_retries(self):
        tls = self.tls()
        config = self.loopback_intercept_config(tls)
        key = self.key()
        script = self.write("agent.py", "import os, urllib.request\n"
                                        "print(os.environ['HTTPS_PROXY'])\n"
                                        f"r = urllib.request.urlopen('{tls.script_url(key, '503,529,200')}')\n"
                                        "print(r.status, r.read().decode(), end='')\n")
        result = self.launch("--listen", self.listen, "--config", config, "--", harness.PYTHON, script,
                             env={"HTTPS_PROXY": self.parent.url()})
        self.assertRun(result, 0, f"http://{self.listen}\n".encode() + b"200 " + ok_body(key, 3))
        self.assertCount(tls, key, 3, result)
        # The intercepted request's attempts left through tinyproxy (one tunnel, or one per attempt
        # when the upstream closed it), never directly.
        connects = self.parent.requests()
        self.assertTrue(connects, self.parent.log())
        self.assertEqual(set(connects), {f"CONNECT 127.0.0.1:{tls.port} HTTP/1.1"}, self.parent.log())
        lines = result.stderr.decode().splitlines()
        self.assertEqual(lines[0], "curlretry: proxy: HTTPS_PROXY names a proxy of yours: curlretry's proxy reaches "
                                   "the providers through it", str(result))
        self.started(result, tail=self.reason(os.path.basename(harness.PYTHON)))
        with open(f"{self.runtime}/curlretry/proxy-127.0.0.1-{self.port}.log") as f:
            log = f.read()
        for text in (log, result.stderr.decode()):
            self.assertNotIn(TinyProxy.PASSWORD, text)
        # The next launch with the same proxy of the user's finds the proxy it started.
        quiet = self.write("quiet.py", "")
        again = self.launch("--listen", self.listen, "--config", config, "--", harness.PYTHON, quiet,
                            env={"HTTPS_PROXY": self.parent.url()})
        self.assertEqual(again.code, 0, str(again))
        self.assertEqual(again.stderr.decode().splitlines(), [
            lines[0], f"curlretry: proxy already running on http://{self.listen}"
                      f"{self.reason(os.path.basename(harness.PYTHON))}"], str(again))

    def test_routes_keep_the_users_proxy_for_the_rest_and_go_through_it_upstream(self):
        # Routes only: COMMAND keeps its own proxy variables, and is handed the route's URL on
        # loopback, which must not be asked of that proxy (before: NO_PROXY was left as it was,
        # so urllib sent the route's request to tinyproxy). Upstream, the attempts go through it.
        key = self.key()
        script = self.write("agent.py", "import os, urllib.request\n"
                                        "print(os.environ['http_proxy'] == os.environ['CURLRETRY_UPSTREAM_PROXY'])\n"
                                        f"r = urllib.request.urlopen(os.environ['FLAKY_BASE_URL'] + '/s/{key}/503,200')\n"
                                        "print(r.status, r.read().decode(), end='')\n")
        result = self.launch("--proxy", "--listen", self.listen, "--config", self.route_config("flaky"), "--",
                             harness.PYTHON, script, env={"http_proxy": self.parent.url()})
        self.assertRun(result, 0, b"True\n200 " + ok_body(key, 2))
        self.assertCount(self.plain, key, 2, result)
        self.assertEqual(self.parent.requests(), [f"GET {self.plain.origin}/s/{key}/503,200 HTTP/1.1"] * 2)
        self.assertEqual(result.stderr.decode().splitlines()[0], "curlretry: proxy: http_proxy names a proxy of "
                         "yours: curlretry's proxy reaches the providers through it", str(result))

    def test_the_certificates_the_command_trusted_stay_trusted(self):
        # A company's TLS-inspecting proxy signs every site with a CA of its own, given to programs
        # in SSL_CERT_FILE or NODE_EXTRA_CA_CERTS: here the TLS upstream's certificate, which no
        # system store holds, and a config naming no upstream_ca_file. Before: the launch replaced
        # both with curlretry's CA alone, so python could not verify the host it reaches directly,
        # and curlretry's proxy could not verify the intercepted one.
        tls = self.tls()
        config = self.write("bare.yaml", "version: 1\nproxy:\n  intercept: [\"127.0.0.1\"]\n"
                                         "  forward: {allow_ports: any, allow_loopback: true}\n")
        key, direct = self.key(), self.key("direct")
        ca = f"{self.runtime}/curlretry/ca/ca.pem"
        script = self.write("agent.py", "import os, urllib.request\n"
                                        f"r = urllib.request.urlopen('{tls.script_url(key, '503,200')}')\n"
                                        "print(r.status, r.read().decode())\n"
                                        f"r = urllib.request.urlopen('https://localhost:{tls.port}/s/{direct}/200')\n"
                                        "print(r.status, r.read().decode())\n"
                                        "node = open(os.environ['NODE_EXTRA_CA_CERTS']).read()\n"
                                        f"print(node == open('{tls.cert}').read() + open('{ca}').read())\n")
        result = self.launch("--listen", self.listen, "--config", config, "--", harness.PYTHON, script,
                             env={"SSL_CERT_FILE": tls.cert, "NODE_EXTRA_CA_CERTS": tls.cert})
        self.assertRun(result, 0, b"200 " + ok_body(key, 2) + b"\n200 " + ok_body(direct, 1) + b"\nTrue\n")
        self.assertCount(tls, key, 2, result)
        self.assertCount(tls, direct, 1, result)

    def test_trust_variables_naming_no_certificates_keep_nothing_and_never_block(self):
        # /dev/zero would never end, a FIFO would wait for a writer, a file of junk holds no
        # certificate (libcurl handed it would refuse every verification): the command gets
        # curlretry's CA as if the variables were unset, at once.
        fifo = os.path.join(self.runtime, "fifo")
        os.mkfifo(fifo)
        junk = self.write("junk.pem", "-----BEGIN CERTIFICATE-----\nnot base64\n-----END CERTIFICATE-----\n")
        script = self.write("agent.py", "import os\nprint(os.environ['NODE_EXTRA_CA_CERTS'], "
                                        "os.environ['SSL_CERT_FILE'], os.environ['CURL_CA_BUNDLE'])\n")
        result = self.launch("--listen", self.listen, "--", harness.PYTHON, script,
                             env={"NODE_EXTRA_CA_CERTS": "/dev/zero", "SSL_CERT_FILE": fifo, "CURL_CA_BUNDLE": junk})
        ca = f"{self.runtime}/curlretry/ca"
        self.assertRun(result, 0, f"{ca}/ca.pem {ca}/bundle.pem {ca}/bundle.pem\n".encode())
        self.assertEqual(sorted(n for n in os.listdir(ca) if n.endswith(".pem")), ["bundle.pem", "ca-key.pem", "ca.pem"])

    def test_a_no_proxy_entry_for_an_intercepted_host_is_kept_and_said(self):
        # With a proxy of the user's in play, NO_PROXY may be how the user's network reaches a
        # provider: the entry stays, COMMAND reaches the host directly, and one line says that its
        # requests there are not retried (before: the same, without a word).
        tls = self.tls()
        config = self.loopback_intercept_config(tls)
        key = self.key()
        script = self.write("agent.py", "import os, urllib.request\n"
                                        f"r = urllib.request.urlopen('{tls.script_url(key, '200')}')\n"
                                        "print(r.status, os.environ['NO_PROXY'])\n")
        result = self.launch("--listen", self.listen, "--config", config, "--", harness.PYTHON, script,
                             env={"HTTPS_PROXY": self.parent.url(), "NO_PROXY": "127.0.0.1,x.example",
                                  "SSL_CERT_FILE": tls.cert})
        self.assertRun(result, 0, b"200 127.0.0.1,x.example,localhost,::1\n")
        self.assertCount(tls, key, 1, result)
        self.assertEqual(self.parent.requests(), [])
        self.assertEqual(result.stderr.decode().splitlines()[-1],
                         "curlretry: proxy: NO_PROXY names 127.0.0.1, which covers a host curlretry intercepts: "
                         f"{harness.PYTHON} reaches it directly, as you asked, and its requests there are not retried")

    def test_a_proxy_of_curlretrys_own_on_another_port_is_not_gone_through(self):
        # A shell that exports HTTPS_PROXY for a proxy the user started by hand (`curlretry proxy
        # --listen 127.0.0.1:OTHER`) names curlretry's proxy, not a company's: going through it
        # would put two retry layers on one request (each attempt of one retried by the other).
        # The health proof tells it from a proxy of the user's own; the launch uses its own
        # proxy and hands COMMAND that one, as for the address it ensures.
        tls = self.tls()
        config = self.loopback_intercept_config(tls)
        other = launcher.free_port()
        self.addCleanup(self.stop_other, other)
        self.assertEqual(self.launch("--proxy", "--listen", f"127.0.0.1:{other}", "--config", config, "--",
                                     "true").code, 0)
        key = self.key()
        script = self.write("agent.py", "import os, urllib.request\n"
                                        "print(os.environ['HTTPS_PROXY'])\n"
                                        f"r = urllib.request.urlopen('{tls.script_url(key, '503,503,200')}')\n"
                                        "print(r.status, r.read().decode(), end='')\n")
        result = self.launch("--listen", self.listen, "--config", config, "--", harness.PYTHON, script,
                             env={"HTTPS_PROXY": f"http://localhost:{other}"})
        self.assertRun(result, 0, f"http://{self.listen}\n".encode() + b"200 " + ok_body(key, 3))
        self.assertCount(tls, key, 3, result)
        self.assertEqual(len(result.stderr.decode().splitlines()), 1, str(result))
        self.started(result, tail=self.reason(os.path.basename(harness.PYTHON)))
        self.assertEqual(self.parent.requests(), [])

    def stop_other(self, port: int) -> None:
        answer = launcher.health(port)
        if answer:
            os.kill(answer["pid"], signal.SIGTERM)
            wait_for(lambda: not os.path.exists(f"/proc/{answer['pid']}"), 20, "the other proxy to exit")

    def test_a_proxy_url_it_cannot_go_through_is_named_without_its_value(self):
        # The launcher's own refusal of a SOCKS proxy: test_launcher_proxy.
        bad = self.launch("check", env={"CURLRETRY_UPSTREAM_PROXY": "https://user:s3cret@proxy.example:3128"})
        self.assertEqual((bad.code, bad.stderr.decode().count("s3cret")), (1, 0), str(bad))
        self.assertIn("CURLRETRY_UPSTREAM_PROXY: its scheme is https://; curlretry's proxy goes through http:// "
                      "proxies only (the value is not shown)", bad.stderr.decode())


if __name__ == "__main__":
    unittest.main()
