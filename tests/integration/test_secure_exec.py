"""Secure execution (issue 5, item 7; DESIGN.md §4): a setuid/setgid process ignores every
CURLRETRY_* / BILI_REPLAY_* variable and every user config file.

The honest way to get a real AT_SECURE process without touching the system: as root, compile a
small libcurl program into a private directory, make one copy setgid to another group, and run it
as nobody (`setpriv --reuid=65534 --regid=65534 --clear-groups`): the kernel then sets
AT_SECURE=1 (egid != gid). With AT_SECURE, ld.so ignores LD_PRELOAD entries that contain a slash
(so a setgid host can only get libcurlretry.so from a trusted directory marked setuid, which
would modify the system); instead the program dlopen()s libcurlretry.so by absolute path and
calls curl_easy_* through it, exactly as a preloaded host would. A second, plain copy run the
same way (AT_SECURE=0) is the control: there each variable or file does change the outcome.

The program prints getauxval(AT_SECURE) itself, so the test proves which case it ran. Everything
created lives in one temporary directory, removed afterwards. Needs root, setpriv and a C
compiler; skipped otherwise (and when /etc/curlretry/config.yaml exists: a secure process reads
that file, and it is not ours to move).
"""

import grp
import os
import shutil
import subprocess
import tempfile
import unittest
from pathlib import Path

import harness
from harness import ok_body, overloaded_body

NOBODY = 65534
SETPRIV = shutil.which("setpriv")
CC = shutil.which("cc") or shutil.which("gcc")
SYSTEM_CONFIG = Path("/etc/curlretry/config.yaml")

PROGRAM = r"""
#define _GNU_SOURCE
#include <curl/curl.h>
#include <dlfcn.h>
#include <link.h>
#include <stdio.h>
#include <string.h>
#include <sys/auxv.h>
#include <unistd.h>

/* argv[1]: libcurlretry.so to dlopen, or "-" to call libcurl directly; argv[2]: the URL.
   stdout: "secure=N mapped=N egid_differs=N", then the body, then "\nresult=N status=N". */

/* Sanitizer builds: a setgid process cannot read /proc/self/environ, where the runtimes look
   for their *SAN_OPTIONS, so the options it needs are built in (LeakSanitizer cannot run there). */
const char *__asan_default_options(void) { return "detect_leaks=0:verify_asan_link_order=0"; }
const char *__tsan_default_options(void) { return "halt_on_error=1"; }

static size_t sink(char *p, size_t size, size_t n, void *u) { (void)u; return fwrite(p, size, n, stdout) * size; }

static int count_shim(struct dl_phdr_info *info, size_t size, void *data) {
  (void)size;
  if (info->dlpi_name && strstr(info->dlpi_name, "libcurlretry")) ++*(int *)data;
  return 0;
}

int main(int argc, char **argv) {
  if (argc != 3) return 2;
  int mapped = 0;
  dl_iterate_phdr(count_shim, &mapped);  /* before our dlopen: did LD_PRELOAD get it in? */
  printf("secure=%lu mapped=%d egid_differs=%d\n", getauxval(AT_SECURE), mapped, getegid() != getgid());
  fflush(stdout);

  void *lib = RTLD_DEFAULT;
  if (strcmp(argv[1], "-") != 0 && !(lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL))) {
    printf("dlopen failed: %s\n", dlerror());
    return 3;
  }
  /* What the library interposes comes from it, the rest from libcurl: as for a preloaded host. */
#define RESOLVE(name) (dlsym(lib, name) ? dlsym(lib, name) : dlsym(RTLD_DEFAULT, name))
  CURL *(*init)(void) = (CURL *(*)(void))RESOLVE("curl_easy_init");
  CURLcode (*setopt)(CURL *, CURLoption, ...) = (CURLcode (*)(CURL *, CURLoption, ...))RESOLVE("curl_easy_setopt");
  CURLcode (*perform)(CURL *) = (CURLcode (*)(CURL *))RESOLVE("curl_easy_perform");
  CURLcode (*getinfo)(CURL *, CURLINFO, ...) = (CURLcode (*)(CURL *, CURLINFO, ...))RESOLVE("curl_easy_getinfo");
  void (*cleanup)(CURL *) = (void (*)(CURL *))RESOLVE("curl_easy_cleanup");
  if (lib != RTLD_DEFAULT && dlsym(lib, "curl_easy_perform") == dlsym(RTLD_DEFAULT, "curl_easy_perform")) {
    printf("the library does not interpose curl_easy_perform\n");
    return 5;
  }
  if (!init || !setopt || !perform || !getinfo || !cleanup) { printf("missing curl_easy_*\n"); return 4; }

  CURL *easy = init();
  setopt(easy, CURLOPT_URL, argv[2]);
  setopt(easy, CURLOPT_WRITEFUNCTION, sink);
  CURLcode rc = perform(easy);
  long status = 0;
  getinfo(easy, CURLINFO_RESPONSE_CODE, &status);
  cleanup(easy);
  printf("\nresult=%d status=%ld\n", (int)rc, status);
  return 0;
}
"""


def sanitizer_flags(library: str) -> list[str]:
    """The -fsanitize flags the program needs to host `library` (a sanitizer build needs its
    runtime loaded first: linked into the program, since nothing can be preloaded)."""
    try:
        dynamic = subprocess.run(["readelf", "-d", library], capture_output=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        dynamic = Path(library).read_bytes()
    if b"libtsan" in dynamic:
        return ["-fsanitize=thread"]
    if b"libasan" in dynamic:
        return ["-fsanitize=address,undefined"]
    return []


def why_skip() -> str | None:
    if os.geteuid() != 0:
        return "needs root (to make a setgid copy of a test program)"
    if not SETPRIV:
        return "needs setpriv (util-linux)"
    if not CC:
        return "needs a C compiler"
    if SYSTEM_CONFIG.exists():
        return f"{SYSTEM_CONFIG} exists: a secure process reads it, so the expectations would not hold"
    return harness.library_problem()


@unittest.skipIf(why_skip(), why_skip())
class SecureExecution(harness.UpstreamTestCase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.dir = Path(tempfile.mkdtemp(prefix="curlretry-secure-"))
        cls.addClassCleanup(shutil.rmtree, cls.dir, True)
        os.chmod(cls.dir, 0o755)
        if os.statvfs(cls.dir).f_flag & os.ST_NOSUID:
            raise unittest.SkipTest(f"{cls.dir} is on a nosuid mount: no setgid there")
        source = cls.dir / "secure_host.c"
        source.write_text(PROGRAM)
        cls.plain_program = cls.dir / "secure_host"
        subprocess.run([CC, "-O1", "-g", *sanitizer_flags(harness.LIB), "-o", str(cls.plain_program), str(source),
                        "-Wl,--no-as-needed", "-lcurl", "-ldl"], check=True, capture_output=True)
        os.chmod(cls.plain_program, 0o755)
        # The setgid copy: group `daemon` (or gid 1), so that egid != gid once run as nobody.
        try:
            group = grp.getgrnam("daemon").gr_gid
        except KeyError:
            group = 1
        cls.setgid_program = cls.dir / "secure_host_setgid"
        shutil.copy(cls.plain_program, cls.setgid_program)
        os.chown(cls.setgid_program, 0, group)
        os.chmod(cls.setgid_program, 0o2755)
        # A directory nobody may write to, for the log files the control run creates.
        cls.writable = cls.dir / "nobody"
        cls.writable.mkdir()
        os.chown(cls.writable, NOBODY, NOBODY)
        # nobody's own private fleet store for this module (the harness's is root's).
        cls.fleet = cls.dir / "nobody-fleet"
        cls.fleet.mkdir(mode=0o700)
        os.chown(cls.fleet, NOBODY, NOBODY)
        cls.counter = 0

    def config(self, text: str) -> Path:
        type(self).counter += 1
        path = self.dir / f"config-{self.counter}.yaml"
        path.write_text(text)
        os.chmod(path, 0o644)
        return path

    def run_as_nobody(self, secure: bool, url: str, env: dict, library: str | None = None) -> dict:
        program = self.setgid_program if secure else self.plain_program
        cmd = [SETPRIV, f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups",
               str(program), library or harness.LIB, url]
        # No user config unless a test asks for one (the harness's empty XDG_CONFIG_HOME is
        # root's, and a directory nobody cannot search is an error, not an absence).
        # The default fleet, in nobody's own store for this module (a secure run never opens one).
        child_env = {"HOME": "/nonexistent", "XDG_CONFIG_HOME": None, "CURLRETRY_FLEET_DIR": str(self.fleet), **env}
        # Sanitizer reports to stderr: nobody cannot write the presets' report directory, and
        # LeakSanitizer does not run in a setgid process.
        for name in ("ASAN_OPTIONS", "UBSAN_OPTIONS", "TSAN_OPTIONS"):
            child_env[name] = ("detect_leaks=0:halt_on_error=1:exitcode=86:verify_asan_link_order=0"
                               if name == "ASAN_OPTIONS" else "halt_on_error=1")
        r = harness.run(cmd, preload=False, env=child_env)
        self.assertEqual(r.code, 0, str(r))
        head, _, rest = r.stdout.partition(b"\n")
        body, _, tail = rest.rpartition(b"\nresult=")
        fields = dict(item.split(b"=") for item in head.split())
        result, status = (int(v.split(b"=")[-1]) for v in (b"result=" + tail).split())
        out = {"secure": int(fields[b"secure"]), "mapped": int(fields[b"mapped"]), "body": body,
               "result": result, "status": status, "stderr": r.stderr, "run": r}
        self.assertEqual(out["secure"], 1 if secure else 0, f"AT_SECURE is not what this run needs\n{r}")
        self.assertEqual(int(fields[b"egid_differs"]), 1 if secure else 0, str(r))
        return out

    def both(self, env: dict, script: str = "503+ra=0,200") -> tuple[str, dict, str, dict]:
        """The control (plain copy) and the secure run (setgid copy), each on a fresh key."""
        kc, ks = self.key("control"), self.key("secure")
        control = self.run_as_nobody(False, self.plain.script_url(kc, script), env)
        secure = self.run_as_nobody(True, self.plain.script_url(ks, script), env)
        return kc, control, ks, secure

    def assertPassedThrough(self, key, out):
        self.assertEqual((out["body"], out["status"], out["result"]), (overloaded_body(key, 1), 503, 0),
                         str(out["run"]))
        self.assertCount(self.plain, key, 1, out["run"])

    def assertRetried(self, key, out):
        # Built-in policy: the 503 (Retry-After: 0) is retried at once, the 200 delivered.
        self.assertEqual((out["body"], out["status"], out["result"]), (ok_body(key, 2), 200, 0), str(out["run"]))
        self.assertCount(self.plain, key, 2, out["run"])

    # --- the environment ----------------------------------------------------------------------

    def test_variables_that_would_stop_retries_are_ignored(self):
        for name, value in (("CURLRETRY_MAX_ATTEMPTS", "1"), ("CURLRETRY_DISABLE", "1"),
                            ("BILI_REPLAY_RETRY_MAX", "1"), ("BILI_REPLAY_RETRY_MAX", "0")):
            with self.subTest(f"{name}={value}"):
                kc, control, ks, secure = self.both({name: value})
                self.assertPassedThrough(kc, control)
                self.assertRetried(ks, secure)

    def test_a_variable_that_would_allow_more_attempts_is_ignored(self):
        kc, control, ks, secure = self.both({"CURLRETRY_MAX_ATTEMPTS": "5"}, script="503+ra=0,503+ra=0,503+ra=0,200")
        self.assertEqual((control["body"], control["status"]), (ok_body(kc, 4), 200), str(control["run"]))
        self.assertCount(self.plain, kc, 4, control["run"])
        self.assertEqual((secure["body"], secure["status"]), (overloaded_body(ks, 3), 503), str(secure["run"]))
        self.assertCount(self.plain, ks, 3, secure["run"])  # the built-in 3 attempts

    def test_an_invalid_variable_is_not_even_read(self):
        kc, control, ks, secure = self.both({"CURLRETRY_MAX_ATTEMPTS": "abc"})
        self.assertPassedThrough(kc, control)
        self.assertIn(b"CURLRETRY_MAX_ATTEMPTS=abc", control["stderr"])
        self.assertRetried(ks, secure)
        self.assertNotIn(b"CURLRETRY_MAX_ATTEMPTS", secure["stderr"])

    def test_the_log_variables_are_ignored(self):
        log = self.writable / "curlretry.log"
        kc, control, ks, secure = self.both({"CURLRETRY_LOG_FILE": str(log)})
        self.assertRetried(kc, control)
        self.assertIn(b"retrying", log.read_bytes())      # the control writes where it is told
        self.assertNotIn(b"curlretry:", control["stderr"])
        log.unlink()
        self.assertRetried(ks, secure)
        self.assertFalse(log.exists(), "a setgid process wrote to a file named by the environment")
        self.assertIn(b"curlretry: GET", secure["stderr"])  # built-in: info, on stderr

        kc, control, ks, secure = self.both({"CURLRETRY_LOG": "off"})
        self.assertNotIn(b"curlretry:", control["stderr"])
        self.assertIn(b"retrying", secure["stderr"])

    def test_a_variable_that_would_change_the_delay_is_ignored(self):
        # Control: CURLRETRY_BASE_MS=0 retries a plain 503 at once. Secure: the built-in 1500 ms.
        kc, control, ks, secure = self.both({"CURLRETRY_BASE_MS": "0"}, script="503,200")
        self.assertRetried(kc, control)
        self.assertRetried(ks, secure)
        self.assertLess(control["run"].elapsed, 1.0, str(control["run"]))
        self.assertGreaterEqual(secure["run"].elapsed, 1.5, str(secure["run"]))

    # --- user config files --------------------------------------------------------------------

    def test_curlretry_config_is_ignored(self):
        path = self.config("version: 1\ndefaults: {max_attempts: 1}\n")
        kc, control, ks, secure = self.both({"CURLRETRY_CONFIG": str(path)})
        self.assertPassedThrough(kc, control)
        self.assertRetried(ks, secure)

    def test_a_malformed_curlretry_config_is_not_even_read(self):
        path = self.config("version: 1\ndefaults: {max_attemps: 1}\n")
        kc, control, ks, secure = self.both({"CURLRETRY_CONFIG": str(path)})
        self.assertPassedThrough(kc, control)
        self.assertIn(f"{path}:2:".encode(), control["stderr"])
        self.assertRetried(ks, secure)
        self.assertEqual(b"", b"".join(l for l in secure["stderr"].splitlines() if str(path).encode() in l))

    def test_xdg_and_home_config_files_are_ignored(self):
        for variable, relative in (("XDG_CONFIG_HOME", "curlretry/config.yaml"),
                                   ("HOME", ".config/curlretry/config.yaml")):
            with self.subTest(variable):
                root = self.dir / f"user-{variable.lower()}"
                (root / relative).parent.mkdir(parents=True, exist_ok=True)
                (root / relative).write_text("version: 1\nsettings: {disable: true}\n")
                for d in [root, *(root / relative).parents]:
                    if str(d).startswith(str(root)):
                        os.chmod(d, 0o755)
                env = {"XDG_CONFIG_HOME": str(root)} if variable == "XDG_CONFIG_HOME" else {"HOME": str(root)}
                if variable == "HOME":
                    env["XDG_CONFIG_HOME"] = None
                kc, control, ks, secure = self.both(env)
                self.assertPassedThrough(kc, control)
                self.assertRetried(ks, secure)

    # --- why the test dlopen()s: LD_PRELOAD does not reach a secure process -------------------

    def test_ld_preload_with_a_path_is_dropped_for_a_secure_process(self):
        k1, k2 = self.key("plain"), self.key("secure")
        preload = {"LD_PRELOAD": harness.LIB}
        plain = self.run_as_nobody(False, self.plain.script_url(k1, "503+ra=0,200"), preload, library="-")
        self.assertEqual(plain["mapped"], 1, str(plain["run"]))
        self.assertRetried(k1, plain)
        secure = self.run_as_nobody(True, self.plain.script_url(k2, "503+ra=0,200"), preload, library="-")
        self.assertEqual(secure["mapped"], 0, str(secure["run"]))
        self.assertPassedThrough(k2, secure)


if __name__ == "__main__":
    unittest.main()
