"""Presets that combine (issue 17 item 2), through the launcher into the preloaded library: a
repeated --config reaches the library as CURLRETRY_CONFIG=A:B (absolute), `include:` is resolved
relative to the including file, and `check` says which file every rule and value came from.
"""

from __future__ import annotations

import json
import unittest

import harness


class CombinedPresets(harness.UpstreamTestCase):
    def launch(self, args: list[str], cwd: str) -> harness.Result:
        problem = harness.library_problem()
        if problem:
            self.fail(problem)
        # No CURLRETRY_BASE_MS: the presets' own backoff must be what the library uses.
        return harness.run([harness.CURLRETRY_BIN, *args], preload=False, cwd=cwd,
                           env={"CURLRETRY_LIBRARY": harness.LIB})

    def write_presets(self):
        d = self.temp_dir()
        (d / "presets").mkdir()
        (d / "presets" / "base.yaml").write_text(
            "version: 1\ndefaults:\n  max_attempts: 2\n  backoff: {base_ms: 5000, max_ms: 5000}\n"
            "rules:\n  - name: loopback\n    match: {host: 127.0.0.1}\n    max_attempts: 5\n")
        (d / "mine.yaml").write_text(
            "version: 1\ninclude: [presets/base.yaml]\ndefaults:\n  backoff: {base_ms: 10, max_ms: 10}\n")
        (d / "fewer.yaml").write_text(
            "version: 1\nrules:\n  - name: other\n    match: {host: example.com}\n    max_attempts: 9\n")
        return d

    def test_two_configs_and_an_include_reach_the_library(self) -> None:
        d = self.write_presets()
        key = self.key()
        url = self.plain.script_url(key, "503,503,503,503,503,503,200")
        result = self.launch(["-q", "--config", "mine.yaml", "--config", "fewer.yaml", "--",
                              harness.CURL, "-sS", url], cwd=str(d))
        # The loopback rule of the included preset (5 attempts) with the including file's 10 ms
        # backoff: 5000 ms from the preset would take 20 s.
        self.assertRun(result, 0)
        self.assertEqual(result.stdout, harness.overloaded_body(key, 5))
        self.assertCount(self.plain, key, 5, result)
        self.assertLess(result.elapsed, 5.0, str(result))

    def test_the_child_gets_absolute_paths_in_order(self) -> None:
        d = self.write_presets()
        result = self.launch(["--config", "mine.yaml", "--config", "fewer.yaml", "--", "sh", "-c",
                              'printf "%s\\n" "$CURLRETRY_CONFIG"'], cwd=str(d))
        self.assertRun(result, 0, f"{d}/mine.yaml:{d}/fewer.yaml\n".encode())

    def test_check_names_the_file_of_every_rule_and_value(self) -> None:
        d = self.write_presets()
        result = harness.run([harness.CURLRETRY_BIN, "check", "--config", "mine.yaml", "fewer.yaml"],
                             preload=False, cwd=str(d))
        self.assertRun(result, 0)
        lines = [" ".join(line.split()) for line in result.stdout.decode().splitlines()]
        self.assertEqual(lines[:4], ["config: 3 files, applied in this order (a later value wins):",
                                     "presets/base.yaml", "mine.yaml", "fewer.yaml"])
        for expected in ("max_attempts 2 presets/base.yaml:3:17", "backoff.base_ms 10 mine.yaml:4:22",
                         'rule "loopback" (host 127.0.0.1) from presets/base.yaml:6:5:',
                         "max_attempts 5 presets/base.yaml:8:19",
                         'rule "other" (host example.com) from fewer.yaml:3:5:', "OK: 2 rules"):
            self.assertIn(expected, lines, result.stdout.decode())

    def test_check_json_has_the_same_sources(self) -> None:
        d = self.write_presets()
        result = harness.run([harness.CURLRETRY_BIN, "check", "--json", "mine.yaml"], preload=False, cwd=str(d))
        self.assertRun(result, 0)
        got = json.loads(result.stdout)
        self.assertEqual(sorted(got), ["defaults", "files", "ok", "rules", "settings", "warnings"])
        self.assertEqual((got["ok"], got["files"], got["warnings"]), (True, ["presets/base.yaml", "mine.yaml"], []))
        self.assertEqual(got["defaults"]["backoff.base_ms"], {"value": "10", "source": "mine.yaml:4:22"})
        self.assertEqual(got["settings"]["log"], {"value": "info", "source": "built-in"})
        [rule] = got["rules"]
        self.assertEqual((rule["name"], rule["match"], rule["from"]),
                         ("loopback", {"host": "127.0.0.1", "path": "", "method": ""}, "presets/base.yaml:6:5"))
        self.assertEqual(rule["values"]["max_attempts"], {"value": "5", "source": "presets/base.yaml:8:19"})
        (d / "bad.yaml").write_text("version: 1\ninclude: [nope.yaml]\n")
        bad = harness.run([harness.CURLRETRY_BIN, "check", "--json", "bad.yaml"], preload=False, cwd=str(d))
        self.assertRun(bad, 1)
        self.assertEqual(json.loads(bad.stdout), {
            "ok": False, "warnings": [],
            "error": "bad.yaml:2:11: include: cannot read nope.yaml: No such file or directory"})

    def test_a_cycle_stops_the_launcher_with_125(self) -> None:
        d = self.temp_dir()
        (d / "a.yaml").write_text("version: 1\ninclude: [b.yaml]\n")
        (d / "b.yaml").write_text("version: 1\ninclude: [a.yaml]\n")
        result = self.launch(["--config", "a.yaml", "--", "true"], cwd=str(d))
        self.assertRun(result, 125)
        self.assertEqual(result.stderr.decode(), "curlretry: b.yaml:2:11: include: cycle: a.yaml -> b.yaml -> a.yaml\n")


if __name__ == "__main__":
    unittest.main()
