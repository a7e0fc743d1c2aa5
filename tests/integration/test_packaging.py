"""The .deb: built here with `cmake --build BUILD --target package` (CPack), unpacked into a scratch
root with `dpkg -x`, and run from there: `<root>/usr/bin/curlretry -- curl ...` must find its
library (and the YAML module beside it) relative to itself and retry against the flaky upstream.

Also pinned: the control fields, the conffile, the file list and modes, that the dependencies
cover every DT_NEEDED of the packaged ELF files, that /etc/curlretry/config.yaml is the built-in
defaults (commented out, and still the defaults when uncommented), that the man pages render
without warnings, and that the bash completion completes.
"""

from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
import tempfile
import time
import unittest
from pathlib import Path

import harness
from harness import ok_body, overloaded_body

ARCH = subprocess.run(["dpkg", "--print-architecture"], capture_output=True, text=True).stdout.strip() \
    if shutil.which("dpkg") else ""
MULTIARCH = subprocess.run(["gcc", "-print-multiarch"], capture_output=True, text=True).stdout.strip() \
    if shutil.which("gcc") else ""


def build_dir() -> Path:
    if not harness.CURLRETRY_BIN:
        raise unittest.SkipTest("CURLRETRY_BIN is not set: run through ctest")
    for parent in Path(harness.CURLRETRY_BIN).resolve().parents:
        if (parent / "CMakeCache.txt").exists():
            return parent
    raise AssertionError(f"no CMake build directory above {harness.CURLRETRY_BIN}")


def build_package() -> Path:
    build = build_dir()
    r = subprocess.run(["cmake", "--build", str(build), "--target", "package"], capture_output=True, text=True,
                       timeout=1200)
    if r.returncode != 0:
        raise AssertionError(f"cmake --build {build} --target package failed:\n{r.stdout[-4000:]}\n{r.stderr[-4000:]}")
    found = re.findall(r"package: (\S+\.deb) generated", r.stdout)
    if not found:
        raise AssertionError(f"CPack named no .deb:\n{r.stdout[-4000:]}")
    return Path(found[-1])


def run(cmd: list[str], **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, capture_output=True, timeout=60, stdin=subprocess.DEVNULL, **kwargs)


class Package(harness.UpstreamTestCase):
    @classmethod
    def setUpClass(cls):
        if not shutil.which("dpkg-deb"):
            raise unittest.SkipTest("dpkg-deb is not installed")
        super().setUpClass()
        cls.deb = build_package()
        cls._root = tempfile.TemporaryDirectory(prefix="curlretry-deb-root-")
        cls.addClassCleanup(cls._root.cleanup)
        cls.root = Path(cls._root.name)
        r = run(["dpkg", "-x", str(cls.deb), str(cls.root)])
        if r.returncode != 0:
            raise AssertionError(f"dpkg -x failed: {r.stderr.decode()}")
        cls.bin = cls.root / "usr/bin/curlretry"
        cls.libdir = cls.root / "usr/lib" / MULTIARCH / "curlretry"

    def field(self, name: str) -> str:
        return run(["dpkg-deb", "-f", str(self.deb), name]).stdout.decode().strip()

    def depends(self, field: str = "Depends") -> set[str]:
        return {re.split(r"[ (]", d.strip())[0] for d in self.field(field).split(",") if d.strip()}

    def installed(self, *args: str, env: dict | None = None, **kwargs) -> harness.Result:
        """The unpacked curlretry, with nothing pointing it at the build tree."""
        return harness.run([str(self.bin), *args], preload=False,
                           env={"CURLRETRY_BASE_MS": harness.FAST_BASE_MS, **(env or {})}, **kwargs)

    # --- what is in the package ----------------------------------------------------------------

    def test_control_fields(self):
        self.assertEqual(self.field("Package"), "curlretry")
        self.assertEqual(self.field("Version"), "0.1.0")
        self.assertEqual(self.field("Architecture"), ARCH)
        self.assertEqual(self.field("Section"), "net")
        self.assertTrue({"libc6", "libstdc++6", "libgcc-s1", "libyaml-cpp0.7"} <= self.depends(), self.depends())
        self.assertIn("libcurlretry.so", self.field("Description"))
        # The Redis store's module needs hiredis; only a redis:// store loads it: Recommends.
        self.assertEqual(self.depends("Recommends"), {"libhiredis0.14"})
        self.assertNotIn("libhiredis0.14", self.depends())

    def test_example_config_is_a_conffile(self):
        with tempfile.TemporaryDirectory() as control:
            self.assertEqual(run(["dpkg-deb", "-e", str(self.deb), control]).returncode, 0)
            self.assertEqual(Path(control, "conffiles").read_text(), "/etc/curlretry/config.yaml\n")

    def test_files_and_modes(self):
        listing = run(["dpkg-deb", "-c", str(self.deb)]).stdout.decode().splitlines()
        files = {}
        for line in listing:
            mode, owner, _size, _date, _time, path = line.split(None, 5)
            self.assertEqual(owner, "root/root", line)
            if not mode.startswith("d"):
                files[path.removeprefix(".")] = mode
        lib = f"/usr/lib/{MULTIARCH}/curlretry"
        presets = ["anthropic", "deepseek", "gemini", "openai", "openrouter", "zai"]
        expected = {
            "/usr/bin/curlretry": "-rwxr-xr-x",
            "/usr/bin/curlretry-proxy": "-rwxr-xr-x",
            "/usr/lib/systemd/user/curlretry-proxy.service": "-rw-r--r--",
            f"{lib}/libcurlretry.so": "-rw-r--r--",
            f"{lib}/curlretry-yaml.so": "-rw-r--r--",
            f"{lib}/curlretry-fleet-redis.so": "-rw-r--r--",
            "/usr/share/man/man1/curlretry.1.gz": "-rw-r--r--",
            "/usr/share/man/man5/curlretry.yaml.5.gz": "-rw-r--r--",
            "/usr/share/bash-completion/completions/curlretry": "-rw-r--r--",
            "/etc/curlretry/config.yaml": "-rw-r--r--",
            "/usr/share/doc/curlretry/examples/README.md": "-rw-r--r--",
            **{f"/usr/share/doc/curlretry/examples/{p}.yaml": "-rw-r--r--" for p in presets},
        }
        self.assertEqual(files, expected)
        for p in presets:
            self.assertEqual((self.root / f"usr/share/doc/curlretry/examples/{p}.yaml").read_bytes(),
                             (harness.REPO / f"packaging/examples/{p}.yaml").read_bytes())

    def test_dependencies_cover_every_needed_library(self):
        if not shutil.which("readelf") or not shutil.which("ldconfig") and not os.path.exists("/sbin/ldconfig"):
            self.skipTest("readelf or ldconfig missing")
        ldconfig = shutil.which("ldconfig") or "/sbin/ldconfig"
        cache = {}
        for line in run([ldconfig, "-p"]).stdout.decode().splitlines()[1:]:
            m = re.match(r"\s*(\S+) \((.*)\) => (\S+)", line)
            if m and ("x86-64" in m.group(2)) == ("64" in ARCH):
                cache.setdefault(m.group(1), m.group(3))
        depends = self.depends()
        elves = [(self.bin, depends), (self.libdir / "libcurlretry.so", depends),
                 (self.libdir / "curlretry-yaml.so", depends),
                 (self.libdir / "curlretry-fleet-redis.so", depends | self.depends("Recommends"))]
        for elf, depends in elves:
            dynamic = run(["readelf", "-d", str(elf)]).stdout.decode()
            for soname in re.findall(r"\(NEEDED\)\s+Shared library: \[(.+?)\]", dynamic):
                with self.subTest(elf=elf.name, needed=soname):
                    path = cache.get(soname)
                    self.assertIsNotNone(path, f"{soname} is not in the loader cache")
                    owner = run(["dpkg", "-S", os.path.realpath(path)])
                    if owner.returncode != 0:
                        owner = run(["dpkg", "-S", path])
                    package = owner.stdout.decode().split(":")[0]
                    self.assertIn(package, depends, f"{soname} comes from {package}")

    # --- running it from the unpacked root -----------------------------------------------------

    def test_unpacked_curlretry_retries_curl(self):
        k = self.key()
        r = self.installed("--", harness.CURL, "-q", "-sS", self.plain.script_url(k, "503,503,200"))
        self.assertRun(r, 0, ok_body(k, 3))
        self.assertCount(self.plain, k, 3, r)
        self.assertIn(b"curlretry: GET 127.0.0.1", r.stderr)
        self.assertIn(b"after 3 attempts", r.stderr)

    def test_unpacked_proxy_runs_with_the_library_of_the_package(self):
        with tempfile.TemporaryDirectory() as scratch:
            config = Path(scratch, "config.yaml")
            config.write_text(f"version: 1\nproxy:\n  routes:\n    f: {{upstream: \"{self.plain.origin}\"}}\n")
            port_file = Path(scratch, "port")
            proxy = subprocess.Popen(
                [str(self.bin), "proxy", "--listen", "127.0.0.1:0", "--config", str(config), "--port-file",
                 str(port_file)], env=harness.environment(False, {"CURLRETRY_BASE_MS": harness.FAST_BASE_MS}),
                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
            try:
                deadline = time.monotonic() + 20
                while not port_file.exists() and proxy.poll() is None and time.monotonic() < deadline:
                    time.sleep(0.02)
                self.assertTrue(port_file.exists(), proxy.stderr.read().decode() if proxy.poll() is not None else "")
                key = self.key()
                port = int(port_file.read_text())
                result = harness.curl(["-sS", f"http://127.0.0.1:{port}/f/s/{key}/503,200"], preload=False)
                self.assertRun(result, 0, ok_body(key, 2))
                maps = Path(f"/proc/{proxy.pid}/maps").read_text()
                self.assertIn(str(self.libdir.resolve() / "libcurlretry.so"), maps)
            finally:
                proxy.terminate()
                proxy.wait(timeout=20)
                proxy.stderr.close()

    def test_systemd_user_unit_runs_the_packaged_proxy_on_loopback(self):
        unit = (self.root / "usr/lib/systemd/user/curlretry-proxy.service").read_text()
        exec_start = [line for line in unit.splitlines() if line.startswith("ExecStart=")]
        self.assertEqual(exec_start, ["ExecStart=/usr/bin/curlretry-proxy --listen 127.0.0.1:7878"])
        self.assertIn("WantedBy=default.target", unit)

    def test_it_preloads_the_library_of_the_package(self):
        r = self.installed("--", "sh", "-c", 'printf %s "$LD_PRELOAD"')
        self.assertRun(r, 0)
        self.assertEqual(r.stdout.decode(), str((self.libdir / "libcurlretry.so").resolve()))

    def test_yaml_module_is_found_beside_the_library(self):
        # A config file makes the library load curlretry-yaml.so from its own directory.
        k = self.key()
        config = self.temp_dir() / "config.yaml"
        config.write_text("version: 1\ndefaults:\n  max_attempts: 2\n")
        r = self.installed("--config", str(config), "--", harness.CURL, "-q", "-sS",
                           self.plain.script_url(k, "503,503,200"))
        self.assertRun(r, 0, overloaded_body(k, 2))
        self.assertCount(self.plain, k, 2, r)
        self.assertIn(b"giving up after 2 attempts", r.stderr)

    def test_redis_module_is_found_beside_the_library(self):
        # A redis:// store makes the library load curlretry-fleet-redis.so from its own directory;
        # nothing listens on the port, so it says it cannot connect (not that it cannot load the
        # module) and decides with the machine store: the retry still goes.
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        k = self.key()
        r = self.installed("--", harness.CURL, "-q", "-sS", self.plain.script_url(k, "503,200"),
                           env={"CURLRETRY_FLEET": f"redis://127.0.0.1:{port}/0",
                                "CURLRETRY_FLEET_DIR": str(self.temp_dir() / "fleet")})
        self.assertRun(r, 0, ok_body(k, 2))
        self.assertNotIn(b"cannot load the Redis store", r.stderr)
        self.assertIn(b"cannot connect", r.stderr)
        self.assertIn(b"deciding with the machine store", r.stderr)

    def test_installed_doctor_and_check_run(self):
        r = self.installed("doctor", "--json", "curl")
        self.assertRun(r, 0)
        self.assertIn(b'"verdict":"works"', r.stdout)
        r = self.installed("check", "--config", str(self.root / "etc/curlretry/config.yaml"))
        self.assertRun(r, 0)

    # --- /etc/curlretry/config.yaml ------------------------------------------------------------

    def check_values(self, config: Path) -> dict[str, str]:
        # Without the harness's own fleet directory: the built-in values, every one of them.
        r = self.installed("check", "--config", str(config), env={"CURLRETRY_BASE_MS": None, "CURLRETRY_FLEET_DIR": None})
        self.assertEqual(r.code, 0, r)
        values = {}
        section = ""
        for line in r.stdout.decode().splitlines():
            if line and not line.startswith(" "):
                section = line
            elif line.startswith("  "):
                key, rest = line.strip().split(None, 1)
                values[f"{section} {key}"] = rest
        return values

    def test_example_config_changes_nothing(self):
        builtin = self.temp_dir() / "builtin.yaml"
        builtin.write_text("version: 1\n")
        expected = self.check_values(builtin)
        self.assertEqual(self.check_values(self.root / "etc/curlretry/config.yaml"), expected)
        self.assertTrue(all(v.endswith("built-in") for v in expected.values()), expected)

    def test_example_config_comments_are_the_defaults(self):
        # Uncommenting defaults: and settings: gives the same values, now read from the file.
        text = (self.root / "etc/curlretry/config.yaml").read_text()
        preamble, sections = text.split("\ndefaults:", 1)
        sections = "defaults:" + sections.split("\nrules:")[0]
        uncommented = self.temp_dir() / "uncommented.yaml"
        uncommented.write_text(preamble + "\n" + re.sub(r"^#(  )", r"\1", sections, flags=re.M) + "\n")
        strip = lambda values: {k: re.sub(r"\s{2,}\S+$", "", v) for k, v in values.items()}
        builtin = self.temp_dir() / "builtin.yaml"
        builtin.write_text("version: 1\n")
        got = self.check_values(uncommented)
        self.assertEqual(strip(got), strip(self.check_values(builtin)))
        from_file = [k for k, v in got.items() if "uncommented.yaml:" in v]
        self.assertGreaterEqual(len(from_file), 18, got)

    # --- man pages and completion --------------------------------------------------------------

    def test_man_pages_render_without_warnings(self):
        if not shutil.which("man"):
            self.skipTest("man is not installed")
        for page, title in (("man1/curlretry.1.gz", "CURLRETRY(1)"), ("man5/curlretry.yaml.5.gz", "CURLRETRY.YAML(5)")):
            with self.subTest(page):
                r = run(["man", "--warnings", "-l", str(self.root / "usr/share/man" / page)],
                        env={**os.environ, "MANWIDTH": "80", "LC_ALL": "C.UTF-8", "MANPAGER": "cat", "PAGER": "cat"})
                self.assertEqual(r.returncode, 0, r.stderr)
                self.assertEqual(r.stderr.decode(), "")
                out = r.stdout.decode()
                self.assertTrue(out.startswith(title), out[:200])
                for section in ("NAME", "SYNOPSIS", "DESCRIPTION", "SEE ALSO"):
                    self.assertIn(f"\n{section}\n", out)

    def complete(self, line: str) -> list[str]:
        """COMPREPLY for `line` (completing its last word), with bash-completion's helpers stubbed."""
        script = r"""
_init_completion() { cur=${COMP_WORDS[COMP_CWORD]}; prev=${COMP_WORDS[COMP_CWORD-1]};
                     words=("${COMP_WORDS[@]}"); cword=$COMP_CWORD; }
_command_offset() { COMPREPLY=("OFFSET:$1"); }
_filedir() { COMPREPLY=("FILEDIR:$1"); }
compopt() { :; }
source "$1"
read -r -a COMP_WORDS <<<"$2"
[[ $2 == *" " ]] && COMP_WORDS+=("")
COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
_curlretry
printf '%s\n' "${COMPREPLY[@]}"
"""
        r = run(["bash", "-c", script, "bash", str(self.root / "usr/share/bash-completion/completions/curlretry"),
                 line])
        self.assertEqual(r.returncode, 0, r.stderr)
        return r.stdout.decode().split()

    def test_bash_completion(self):
        if not shutil.which("bash"):
            self.skipTest("bash is not installed")
        self.assertIn("doctor", self.complete("curlretry do"))
        self.assertEqual(self.complete("curlretry explain --tr"), ["--transport"])
        self.assertIn("tls_handshake", self.complete("curlretry explain --transport "))
        self.assertEqual(self.complete("curlretry stats --bucket 1"), ["10s", "1m", "15m", "1h", "1d"])
        self.assertEqual(self.complete("curlretry --config x.yaml -- cu"), ["OFFSET:4"])
        self.assertEqual(self.complete("curlretry curl -"), ["OFFSET:1"])
        self.assertEqual(self.complete("curlretry doctor --json py"), ["OFFSET:3"])
        self.assertEqual(self.complete("curlretry doctor --j"), ["--json"])
        self.assertIn("fleet", self.complete("curlretry fl"))
        self.assertEqual(self.complete("curlretry fleet --w"), ["--watch"])
        self.assertEqual(self.complete("curlretry --config "), ["FILEDIR:@(yaml|yml)"])
        self.assertEqual(self.complete("curlretry -n 3 --jitter full curl -"), ["OFFSET:5"])
        self.assertEqual(self.complete("curlretry --jitter e"), ["equal"])
        self.assertEqual(self.complete("curlretry run -q --events e.jsonl cu"), ["OFFSET:5"])


if __name__ == "__main__":
    unittest.main()
