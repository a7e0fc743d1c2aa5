"""Interpreter hosts under libcurlretry.so: Python (pycurl, ctypes) and PHP (php-curl).

These hosts load libcurl the hard ways (issue 3 §1, §6):
- pycurl is a Python extension module dlopen()ed RTLD_LOCAL, linked against Debian's second
  libcurl flavour, libcurl-gnutls.so.4 (symbol version CURL_GNUTLS_3). The shim's unversioned
  exports must satisfy it, and its real functions must be found by scanning the loaded objects,
  since dlsym(RTLD_NEXT) cannot see a library in a local scope.
- ctypes resolves names with dlsym() on the handle it holds, which never looks at LD_PRELOAD;
  only lookups in the default scope (ctypes.CDLL(None)) find the preloaded wrappers.
- PHP dlopen()s its extensions with RTLD_DEEPBIND, which would bind curl.so to libcurl before any
  preload; the shim's dlopen wrapper drops that flag for libraries that need libcurl.

Every program runs with a timeout against a loopback flaky-upstream; results come back as JSON.
"""

from __future__ import annotations

import base64
import json
import os
import subprocess
import unittest

import harness
from harness import UpstreamTestCase, error_body, ok_body, overloaded_body

PYTHON = harness.PYTHON
PHP = harness.PHP


HAVE_PYCURL = harness.have_pycurl()
HAVE_PHP_CURL = harness.have_php_function("curl_exec")
PYCURL_MISSING = harness.needs("python3-pycurl", "pycurl")
PHP_CURL_MISSING = harness.needs("php-curl", "php-cli with php-curl")


def shim_has_multi() -> bool:
    """Whether the library interposes the multi API (curl_multi_exec needs it)."""
    if harness.library_problem():
        return True  # let the preloaded run report the missing library itself
    try:
        out = subprocess.run(["nm", "-D", "--defined-only", harness.LIB], capture_output=True, timeout=30).stdout
    except (OSError, subprocess.TimeoutExpired):
        return True
    return b" curl_multi_perform" in out


# --- programs --------------------------------------------------------------------------------

PYCURL_GET = r"""
import base64, json, sys, pycurl
from io import BytesIO
body, headers = BytesIO(), BytesIO()
c = pycurl.Curl()
c.setopt(pycurl.URL, sys.argv[1])
c.setopt(pycurl.WRITEDATA, body)
c.setopt(pycurl.HEADERFUNCTION, headers.write)
error = None
try:
    c.perform()
except pycurl.error as e:
    error = e.args[0]
status = c.getinfo(pycurl.RESPONSE_CODE)
c.close()
maps = open("/proc/self/maps").read()
print(json.dumps({
    "result": error or 0, "status": status,
    "body": base64.b64encode(body.getvalue()).decode(),
    "headers": base64.b64encode(headers.getvalue()).decode(),
    "version": pycurl.version,
    "gnutls_loaded": "libcurl-gnutls.so.4" in maps,
    "openssl_flavour_loaded": "/libcurl.so.4" in maps,
}))
"""

# argv: URL MODE, where MODE says where the curl_easy_* functions are looked up:
#   handle        ctypes.CDLL("libcurl.so.4") (RTLD_LOCAL), functions from that handle
#   global        ctypes.CDLL("libcurl.so.4", mode=RTLD_GLOBAL), functions from ctypes.CDLL(None)
#   local-default ctypes.CDLL("libcurl.so.4") (RTLD_LOCAL), functions from ctypes.CDLL(None)
CTYPES_GET = r"""
import base64, ctypes, json, os, sys
url, mode = sys.argv[1], sys.argv[2]
lib = ctypes.CDLL("libcurl.so.4", mode=os.RTLD_GLOBAL if mode == "global" else os.RTLD_LOCAL)
default = ctypes.CDLL(None)
api = lib if mode == "handle" else default

class DlInfo(ctypes.Structure):
    _fields_ = [("dli_fname", ctypes.c_char_p), ("dli_fbase", ctypes.c_void_p),
                ("dli_sname", ctypes.c_char_p), ("dli_saddr", ctypes.c_void_p)]
libc = ctypes.CDLL(None)
libc.dladdr.argtypes = [ctypes.c_void_p, ctypes.POINTER(DlInfo)]
def owner(scope, name):
    try:
        fn = getattr(scope, name)
    except AttributeError:  # e.g. no curl_easy_perform in the default scope without the preload
        return None
    info = DlInfo()
    if not libc.dladdr(ctypes.cast(fn, ctypes.c_void_p), ctypes.byref(info)) or not info.dli_fname:
        return None
    return os.path.realpath(info.dli_fname.decode())

CURLOPT_URL, CURLOPT_WRITEFUNCTION, CURLOPT_NOSIGNAL = 10002, 20011, 99
CURLINFO_RESPONSE_CODE = 0x200002
WRITE = ctypes.CFUNCTYPE(ctypes.c_size_t, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_size_t, ctypes.c_void_p)
chunks = []
def on_write(data, size, nmemb, userdata):
    chunks.append(ctypes.string_at(data, size * nmemb))
    return size * nmemb
write_cb = WRITE(on_write)

api.curl_easy_init.restype = ctypes.c_void_p
api.curl_easy_perform.argtypes = [ctypes.c_void_p]
api.curl_easy_cleanup.argtypes = [ctypes.c_void_p]
lib.curl_easy_getinfo.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_void_p]
easy = api.curl_easy_init()
api.curl_easy_setopt(ctypes.c_void_p(easy), CURLOPT_URL, ctypes.c_char_p(url.encode()))
api.curl_easy_setopt(ctypes.c_void_p(easy), CURLOPT_NOSIGNAL, ctypes.c_long(1))
api.curl_easy_setopt(ctypes.c_void_p(easy), CURLOPT_WRITEFUNCTION, write_cb)
result = api.curl_easy_perform(easy)
status = ctypes.c_long(0)
lib.curl_easy_getinfo(easy, CURLINFO_RESPONSE_CODE, ctypes.byref(status))
api.curl_easy_cleanup(easy)
print(json.dumps({
    "result": result, "status": status.value, "body": base64.b64encode(b"".join(chunks)).decode(),
    "perform_from": owner(api, "curl_easy_perform"),
    "handle_perform_from": owner(lib, "curl_easy_perform"),
    "default_perform_from": owner(default, "curl_easy_perform"),
}))
"""

PHP_EXEC = r"""<?php
$c = curl_init($argv[1]);
curl_setopt($c, CURLOPT_RETURNTRANSFER, true);
$body = curl_exec($c);
echo json_encode([
  "result" => curl_errno($c),
  "status" => curl_getinfo($c, CURLINFO_RESPONSE_CODE),
  "body" => base64_encode($body === false ? "" : $body),
]), "\n";
curl_close($c);
"""

PHP_MULTI = r"""<?php
$c = curl_init($argv[1]);
curl_setopt($c, CURLOPT_RETURNTRANSFER, true);
$m = curl_multi_init();
curl_multi_add_handle($m, $c);
$done = 0; $result = -1; $mcode = 0; $start = microtime(true);
$drain = function () use ($m, &$done, &$result) {
  while ($info = curl_multi_info_read($m)) {
    if ($info['msg'] == CURLMSG_DONE) { $done++; $result = $info['result']; }
  }
};
do {
  $mcode = curl_multi_exec($m, $running);
  if ($mcode != CURLM_OK) break;
  $drain();
  if ($running) curl_multi_select($m, 1.0);
} while ($running && microtime(true) - $start < 20);
$drain();
echo json_encode([
  "mcode" => $mcode, "running" => $running, "done" => $done, "result" => $result,
  "status" => curl_getinfo($c, CURLINFO_RESPONSE_CODE),
  "body" => base64_encode((string) curl_multi_getcontent($c)),
]), "\n";
curl_multi_remove_handle($m, $c);
curl_multi_close($m);
"""


class InterpreterTestCase(UpstreamTestCase):
    def script(self, name: str, text: str) -> str:
        path = self.temp_dir() / name
        path.write_text(text)
        return str(path)

    def run_json(self, cmd: list[str], *, preload: bool,
                 env: dict[str, str] | None = None) -> tuple[dict, harness.Result]:
        child_env = {"CURLRETRY_BASE_MS": "10"} if preload else {}
        child_env.update(env or {})
        result = harness.run(cmd, preload=preload, env=child_env)
        self.assertEqual(result.code, 0, f"the host program failed\n{result}")
        lines = result.stdout.strip().splitlines()
        self.assertTrue(lines, f"no output\n{result}")
        try:
            report = json.loads(lines[-1])
        except ValueError:
            self.fail(f"not JSON\n{result}")
        report["body"] = base64.b64decode(report["body"])
        if "headers" in report:
            report["headers"] = base64.b64decode(report["headers"])
        return report, result

    def assertReport(self, report: dict, result: harness.Result, *, code: int, status: int, body: bytes) -> None:
        self.assertEqual((report["result"], report["status"]), (code, status), f"result/status\n{result}")
        self.assertEqual(report["body"], body, f"body\n{result}")


# --- pycurl (libcurl-gnutls.so.4) -----------------------------------------------------------

@unittest.skipUnless(HAVE_PYCURL, PYCURL_MISSING)
class PycurlTest(InterpreterTestCase):
    def pycurl(self, url: str, preload: bool = True) -> tuple[dict, harness.Result]:
        return self.run_json([PYTHON, self.script("get.py", PYCURL_GET), url], preload=preload)

    def test_pycurl_is_the_gnutls_flavour(self):
        # What makes this host worth testing: the second flavour, CURL_GNUTLS_3 symbol versions.
        key = self.key()
        report, result = self.pycurl(self.plain.script_url(key, "200"), preload=False)
        self.assertIn("GnuTLS", report["version"], str(result))
        self.assertTrue(report["gnutls_loaded"], str(result))
        self.assertFalse(report["openssl_flavour_loaded"], str(result))

    def test_without_preload_pycurl_gets_the_first_503(self):
        key = self.key()
        report, result = self.pycurl(self.plain.script_url(key, "503,503,200"), preload=False)
        self.assertReport(report, result, code=0, status=503, body=overloaded_body(key, 1))
        self.assertCount(self.plain, key, 1, result)

    def test_pycurl_get_retried_to_the_200(self):
        key = self.key()
        report, result = self.pycurl(self.plain.script_url(key, "503,503,200"))
        body = ok_body(key, 3)
        self.assertReport(report, result, code=0, status=200, body=body)
        self.assertEqual(report["headers"], harness.head("HTTP/1.1 200 OK", "text/plain", len(body)),
                         f"only the final response's headers\n{result}")
        self.assertCount(self.plain, key, 3, result)

    def test_pycurl_plain_400_is_one_request(self):
        key = self.key()
        report, result = self.pycurl(self.plain.script_url(key, "400"))
        self.assertReport(report, result, code=0, status=400, body=error_body("bad request", key, 1))
        self.assertCount(self.plain, key, 1, result)


# --- ctypes ----------------------------------------------------------------------------------

class CtypesTest(InterpreterTestCase):
    def ctypes_get(self, url: str, mode: str, preload: bool = True) -> tuple[dict, harness.Result]:
        return self.run_json([PYTHON, self.script("ctypes_get.py", CTYPES_GET), url, mode], preload=preload)

    def test_calls_through_the_library_handle_bypass_the_preload(self):
        # ctypes.CDLL("libcurl.so.4").curl_easy_perform is dlsym(handle, ...): the lookup is
        # confined to libcurl.so.4 and its dependencies, and LD_PRELOAD objects are not among
        # them. So the host calls the real curl_easy_perform: no retry, the first 503 verbatim,
        # one request. (libcurl's own internal calls to its public API still land in the
        # preloaded wrappers through the PLT; they must pass straight through without harm.)
        key = self.key()
        report, result = self.ctypes_get(self.plain.script_url(key, "503,503,200"), "handle")
        self.assertEqual(report["perform_from"], os.path.realpath(report["handle_perform_from"]))
        self.assertIn("libcurl.so.4", os.path.basename(report["handle_perform_from"] or ""),
                      f"the handle's curl_easy_perform is libcurl's own\n{result}")
        self.assertEqual(report["default_perform_from"], os.path.realpath(harness.LIB),
                         f"the default scope's curl_easy_perform is the preloaded wrapper\n{result}")
        self.assertReport(report, result, code=0, status=503, body=overloaded_body(key, 1))
        self.assertCount(self.plain, key, 1, result)
        self.assertNotIn(b"retrying", result.stderr, str(result))

    def test_default_scope_after_rtld_global_is_retried(self):
        # ctypes.CDLL(None) looks names up in the global scope, where the preload comes first:
        # the host gets the wrapper, which finds the real libcurl with dlsym(RTLD_NEXT).
        key = self.key()
        report, result = self.ctypes_get(self.plain.script_url(key, "503,503,200"), "global")
        self.assertEqual(report["perform_from"], os.path.realpath(harness.LIB), str(result))
        self.assertReport(report, result, code=0, status=200, body=ok_body(key, 3))
        self.assertCount(self.plain, key, 3, result)

    def test_default_scope_with_libcurl_loaded_rtld_local_is_retried(self):
        # libcurl.so.4 is in a local scope, so dlsym(RTLD_NEXT) from the wrapper finds nothing:
        # the shim must fall back to scanning the loaded libcurl*.so* objects.
        key = self.key()
        report, result = self.ctypes_get(self.plain.script_url(key, "503,503,200"), "local-default")
        self.assertEqual(report["perform_from"], os.path.realpath(harness.LIB), str(result))
        self.assertReport(report, result, code=0, status=200, body=ok_body(key, 3))
        self.assertCount(self.plain, key, 3, result)

    def test_without_preload_the_handle_host_gets_the_503(self):
        key = self.key()
        report, result = self.ctypes_get(self.plain.script_url(key, "503,503,200"), "handle", preload=False)
        self.assertReport(report, result, code=0, status=503, body=overloaded_body(key, 1))
        self.assertCount(self.plain, key, 1, result)


# --- PHP (curl.so loaded with RTLD_DEEPBIND) ---------------------------------------------------

@unittest.skipUnless(HAVE_PHP_CURL, PHP_CURL_MISSING)
class PhpTest(InterpreterTestCase):
    def php(self, name: str, text: str, url: str, preload: bool = True) -> tuple[dict, harness.Result]:
        # The system php.ini stays on: it is what loads curl.so, with RTLD_DEEPBIND.
        return self.run_json([PHP, self.script(name, text), url], preload=preload)

    def test_without_preload_curl_exec_gets_the_first_503(self):
        key = self.key()
        report, result = self.php("exec.php", PHP_EXEC, self.plain.script_url(key, "503,503,200"), preload=False)
        self.assertReport(report, result, code=0, status=503, body=overloaded_body(key, 1))
        self.assertCount(self.plain, key, 1, result)

    def test_curl_exec_retried_to_the_200(self):
        # Only possible because the shim's dlopen wrapper dropped RTLD_DEEPBIND for curl.so:
        # with it, curl.so would bind to libcurl's curl_easy_perform directly.
        key = self.key()
        report, result = self.php("exec.php", PHP_EXEC, self.plain.script_url(key, "503,503,200"))
        self.assertReport(report, result, code=0, status=200, body=ok_body(key, 3))
        self.assertCount(self.plain, key, 3, result)

    def test_curl_exec_plain_400_is_one_request(self):
        key = self.key()
        report, result = self.php("exec.php", PHP_EXEC, self.plain.script_url(key, "400"))
        self.assertReport(report, result, code=0, status=400, body=error_body("bad request", key, 1))
        self.assertCount(self.plain, key, 1, result)

    def test_curl_multi_exec_retried_to_the_200_with_one_done(self):
        if not shim_has_multi():
            self.skipTest("the shim does not interpose the multi API yet (no curl_multi_perform export)")
        key = self.key()
        report, result = self.php("multi.php", PHP_MULTI, self.plain.script_url(key, "503,503,200"))
        self.assertEqual(report["mcode"], 0, str(result))
        self.assertEqual(report["running"], 0, f"the loop must end on running == 0\n{result}")
        self.assertEqual(report["done"], 1, f"exactly one CURLMSG_DONE per added handle\n{result}")
        self.assertReport(report, result, code=0, status=200, body=ok_body(key, 3))
        self.assertCount(self.plain, key, 3, result)

    def test_curl_multi_exec_plain_400_is_one_request(self):
        if not shim_has_multi():
            self.skipTest("the shim does not interpose the multi API yet (no curl_multi_perform export)")
        key = self.key()
        report, result = self.php("multi.php", PHP_MULTI, self.plain.script_url(key, "400"))
        self.assertEqual((report["mcode"], report["running"], report["done"]), (0, 0, 1), str(result))
        self.assertReport(report, result, code=0, status=400, body=error_body("bad request", key, 1))
        self.assertCount(self.plain, key, 1, result)


if __name__ == "__main__":
    unittest.main()
