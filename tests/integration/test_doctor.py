"""`curlretry doctor`: the verdict for real programs of every kind curlretry meets.

Real hosts: curl (libcurl.so.4, OpenSSL), git's https helper (libcurl-gnutls.so.4, GnuTLS), git
itself (through that helper), python3 + pycurl, php + php-curl, a shell script that runs curl.
Built here: a static hello world, a static program carrying libcurl's signature, a dynamic program
with the real libcurl.a linked in, a fake Go binary (.go.buildinfo), and set-user-ID and
file-capability copies of curl. Each case checks the JSON verdict and the exit status; one checks
the text layout.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
import unittest
from pathlib import Path

import harness

PYTHON = harness.PYTHON
PHP = harness.PHP
GIT_REMOTE_HTTP = "/usr/lib/git-core/git-remote-http"
GCC = shutil.which("gcc") or shutil.which("cc")
MULTIARCH = subprocess.run(["gcc", "-print-multiarch"], capture_output=True, text=True).stdout.strip() if GCC else ""

EXIT = {"works": 0, "works-through": 0, "not-reachable": 3, "preload-ignored": 3, "nothing-to-do": 4, "maybe": 5}


HAVE_PYCURL = harness.have_pycurl()
HAVE_PHP_CURL = harness.have_php_function("curl_exec")


def doctor(*command: str, json_output: bool = True, cwd: str | None = None) -> tuple[int, dict | str, str]:
    if not harness.CURLRETRY_BIN:
        raise unittest.SkipTest("CURLRETRY_BIN is not set: run through ctest")
    args = [harness.CURLRETRY_BIN, "doctor", *(["--json"] if json_output else []), *command]
    r = subprocess.run(args, env=harness.environment(preload=False), capture_output=True, timeout=60, cwd=cwd,
                       stdin=subprocess.DEVNULL)
    out = r.stdout.decode()
    return r.returncode, (json.loads(out) if json_output and out else out), r.stderr.decode()


def compile_c(directory: Path, name: str, source: str, *flags: str) -> Path | None:
    if not GCC:
        return None
    src = directory / f"{name}.c"
    src.write_text(source)
    out = directory / name
    r = subprocess.run([GCC, "-O1", str(src), "-o", str(out), *flags], capture_output=True, timeout=120)
    return out if r.returncode == 0 else None


class Doctor(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls._dir = tempfile.TemporaryDirectory(prefix="curlretry-doctor-")
        cls.addClassCleanup(cls._dir.cleanup)
        cls.dir = Path(cls._dir.name)

    def assertVerdict(self, result, verdict: str, **fields):
        code, d, err = result
        self.assertIsInstance(d, dict, f"no JSON; stderr: {err}")
        self.assertEqual(d["verdict"], verdict, json.dumps(d, indent=2))
        self.assertEqual(code, EXIT[verdict], json.dumps(d, indent=2))
        for key, value in fields.items():
            self.assertEqual(d[key], value, f"{key}\n{json.dumps(d, indent=2)}")
        return d

    # --- dynamic libcurl --------------------------------------------------------------------------

    def test_curl_links_libcurl_openssl(self):
        d = self.assertVerdict(doctor("curl"), "works", libcurl="libcurl.so.4", flavour="OpenSSL", via="")
        self.assertEqual(d["program"], shutil.which("curl", path=os.environ.get("PATH")))
        self.assertTrue(any(line.startswith("libcurl: libcurl.so.4 -> ") for line in d["details"]), d["details"])

    def test_git_remote_http_links_libcurl_gnutls(self):
        if not os.access(GIT_REMOTE_HTTP, os.X_OK):
            self.skipTest(harness.needs("git", "git"))
        self.assertVerdict(doctor(GIT_REMOTE_HTTP), "works", libcurl="libcurl-gnutls.so.4", flavour="GnuTLS")

    def test_git_works_through_its_https_helper(self):
        if not shutil.which("git"):
            self.skipTest(harness.needs("git", "git"))
        d = self.assertVerdict(doctor("git"), "works-through", via="git-remote-http", flavour="GnuTLS")
        self.assertIn("git clone", d["advice"])

    def test_text_output_is_one_verdict_line_then_reasons(self):
        code, out, _ = doctor("curl", json_output=False)
        self.assertEqual(code, 0)
        lines = out.splitlines()
        self.assertTrue(lines[0].startswith("works: curl links libcurl dynamically (libcurl.so.4, OpenSSL flavour)"),
                        out)
        self.assertTrue(all(line.startswith("  ") for line in lines[1:]), out)
        self.assertTrue(lines[-1].startswith("  next:     curlretry -- curl"), out)

    # --- interpreters -----------------------------------------------------------------------------

    def test_python_script_importing_pycurl_works_through_pycurl(self):
        if not HAVE_PYCURL:
            self.skipTest(harness.needs("python3-pycurl", "pycurl"))
        script = self.dir / "fetch.py"
        script.write_text("#!/usr/bin/python3\nimport pycurl\nc = pycurl.Curl()\n")
        script.chmod(0o755)
        d = self.assertVerdict(doctor(str(script)), "works-through", via="pycurl", libcurl="libcurl-gnutls.so.4",
                               flavour="GnuTLS")
        self.assertEqual(d["chain"], [str(script), "/usr/bin/python3"])
        self.assertIn("uses pycurl", d["summary"])

    def test_python_given_the_script_as_an_argument(self):
        if not HAVE_PYCURL:
            self.skipTest(harness.needs("python3-pycurl", "pycurl"))
        script = self.dir / "fetch_arg.py"
        script.write_text("import pycurl\n")
        d = self.assertVerdict(doctor(PYTHON, str(script)), "works-through", via="pycurl")
        self.assertEqual(d["advice"], f"curlretry -- {PYTHON} {script} ...")

    def test_python_script_without_pycurl_has_nothing_to_do(self):
        script = self.dir / "plain.py"
        script.write_text("#!/usr/bin/python3\nimport urllib.request\n")
        script.chmod(0o755)
        self.assertVerdict(doctor(str(script)), "nothing-to-do")

    def test_python3_itself_reports_its_pycurl(self):
        if not HAVE_PYCURL:
            self.skipTest(harness.needs("python3-pycurl", "pycurl"))
        self.assertVerdict(doctor(PYTHON), "works-through", via="pycurl")

    def test_php_works_through_php_curl(self):
        if not HAVE_PHP_CURL:
            self.skipTest(harness.needs("php-curl", "php-cli with php-curl"))
        d = self.assertVerdict(doctor(PHP), "works-through", via="php-curl", flavour="OpenSSL")
        self.assertTrue(any("RTLD_DEEPBIND" in line for line in d["details"]), d["details"])
        script = self.dir / "fetch.php"
        script.write_text('<?php\n$c = curl_init("https://example.com");\ncurl_exec($c);\n')
        self.assertVerdict(doctor(PHP, str(script)), "works-through", via="php-curl")

    def test_shell_script_running_curl_works_through_curl(self):
        script = self.dir / "fetch.sh"
        script.write_text("#!/bin/sh\nset -e\ncurl -sS https://example.com/ >/dev/null\n")
        script.chmod(0o755)
        self.assertVerdict(doctor(str(script)), "works-through", via="curl", libcurl="libcurl.so.4")

    # --- programs no preload reaches --------------------------------------------------------------

    def test_static_hello_world_has_nothing_to_do(self):
        program = compile_c(self.dir, "hello-static", '#include <stdio.h>\nint main(void){puts("hi");return 0;}\n',
                            "-static")
        if program is None:
            self.skipTest("cannot link a static program (libc6-dev's libc.a?)")
        d = self.assertVerdict(doctor(str(program)), "nothing-to-do", libcurl="")
        self.assertIn("statically linked", d["summary"])

    def test_static_program_with_libcurl_inside_is_not_reachable(self):
        source = ('#include <stdio.h>\n'
                  'const char banner[] = "CLIENT libcurl 8.5.0";\n'
                  'int curl_easy_perform(void *h) { (void)h; return 0; }\n'
                  'int main(int argc, char **argv) { (void)argv; if (argc > 9) puts(banner);\n'
                  '  return curl_easy_perform(0); }\n')
        program = compile_c(self.dir, "static-libcurl", source, "-static")
        if program is None:
            self.skipTest("cannot link a static program")
        d = self.assertVerdict(doctor(str(program)), "not-reachable")
        self.assertIn("libcurl 8.5.0", d["summary"])
        self.assertIn("proxy", d["advice"])

    def test_real_libcurl_a_in_a_dynamic_program_is_not_reachable(self):
        archive = Path(f"/usr/lib/{MULTIARCH}/libcurl.a")
        deps = ["nghttp2.so.14", "idn2.so.0", "rtmp.so.1", "ssh2.so.1", "psl.so.5", "ssl.so.3", "crypto.so.3",
                "gssapi_krb5.so.2", "lber-2.5.so.0", "ldap-2.5.so.0", "zstd.so.1", "brotlidec.so.1", "z.so.1"]
        libs = [f"/usr/lib/{MULTIARCH}/lib{d}" for d in deps]
        if not archive.exists() or not all(os.path.exists(l) for l in libs):
            self.skipTest("libcurl.a or its dependencies are not installed")
        source = ('#include <curl/curl.h>\n'
                  'int main(void) { CURL *c = curl_easy_init(); curl_easy_cleanup(c); return 0; }\n')
        program = compile_c(self.dir, "libcurl-a", source, str(archive), *libs)
        if program is None:
            self.skipTest("linking libcurl.a failed")
        d = self.assertVerdict(doctor(str(program)), "not-reachable", libcurl="")
        self.assertIn("static copy in a dynamic program", d["summary"])

    def test_go_binary_is_not_reachable(self):
        # What doctor looks for in a Go program: the .go.buildinfo section and its magic.
        source = ('__attribute__((used, section(".go.buildinfo")))\n'
                  'const char buildinfo[64] = "\\xff Go buildinf:\\x08\\x02";\n'
                  'int main(void) { return 0; }\n')
        program = compile_c(self.dir, "fake-go", source, "-static")
        if program is None:
            self.skipTest("cannot link a static program")
        d = self.assertVerdict(doctor(str(program)), "not-reachable")
        self.assertIn("Go program", d["summary"])

    def test_setuid_copy_ignores_ld_preload(self):
        copy = self.dir / "curl-setuid"
        shutil.copy(shutil.which("curl"), copy)
        copy.chmod(0o4755)
        if os.statvfs(copy).f_flag & os.ST_NOSUID:
            self.skipTest(f"{self.dir} is mounted nosuid: the bit has no effect there")
        d = self.assertVerdict(doctor(str(copy)), "preload-ignored", libcurl="libcurl.so.4")
        self.assertIn("set-user-ID", d["summary"])

    def test_setgid_copy_ignores_ld_preload(self):
        copy = self.dir / "curl-setgid"
        shutil.copy(shutil.which("curl"), copy)
        copy.chmod(0o2755)
        if os.statvfs(copy).f_flag & os.ST_NOSUID:
            self.skipTest(f"{self.dir} is mounted nosuid")
        d = self.assertVerdict(doctor(str(copy)), "preload-ignored")
        self.assertIn("set-group-ID", d["summary"])

    def test_file_capabilities_ignore_ld_preload(self):
        setcap = shutil.which("setcap") or "/usr/sbin/setcap"
        copy = self.dir / "curl-cap"
        shutil.copy(shutil.which("curl"), copy)
        if not os.access(setcap, os.X_OK) or subprocess.run([setcap, "cap_net_raw+ep", str(copy)],
                                                            capture_output=True).returncode != 0:
            self.skipTest("cannot set file capabilities here (not root, or no setcap)")
        d = self.assertVerdict(doctor(str(copy)), "preload-ignored")
        self.assertIn("cap_net_raw=ep", d["summary"])

    # --- nothing to do, and errors ----------------------------------------------------------------

    def test_program_without_libcurl_has_nothing_to_do(self):
        self.assertVerdict(doctor("ls"), "nothing-to-do", libcurl="")

    def test_missing_program_is_an_error(self):
        code, out, err = doctor("no-such-program-curlretry-test", json_output=False)
        self.assertEqual(code, 1)
        self.assertIn("not found in PATH", err)

    def test_no_program_is_a_usage_error(self):
        code, _, err = doctor(json_output=False)
        self.assertEqual(code, 2, err)


if __name__ == "__main__":
    unittest.main()
