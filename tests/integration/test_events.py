"""The attempt log (CURLRETRY_EVENTS=FILE, settings.events_file) and `curlretry stats`.

Three layers:
- EventsWriter: shim/events.cpp compiled here into a small driver (with a stub for the shim's log)
  pins the line format byte for byte, the size bound, UTF-8 repair, one write(2) per line under
  many processes and threads at once, a host that reuses our descriptor number, and a FIFO
  without a reader.
- Stats: `curlretry stats` on a synthetic log, with the exact expected report.
- EventsFromTheShim: real curl under libcurlretry.so against the flaky upstream. These need
  shim/transfer.cpp to call events::record() (and the runtime to call events::configure()); until
  that is wired they fail with "no attempt log was written".

Line format (shim/events.h, curlretry(1) ATTEMPT LOG):
  {"time":"2025-06-01T12:00:00.123Z","pid":N,"program":"curl","method":"GET","host":"h",
   "path":"/p","attempt":1,"status":503,"outcome":"HTTP 503","verdict":"retry",
   "reason":"status:503","delay_ms":50,"bytes":45,"rule":"defaults"}
"""

from __future__ import annotations

import concurrent.futures
import json
import os
import re
import shutil
import stat
import subprocess
import tempfile
import unittest
from pathlib import Path

import harness
from harness import ok_body, overloaded_body

FIELDS = ["time", "pid", "program", "method", "host", "path", "attempt", "status", "outcome", "verdict", "reason",
          "delay_ms", "bytes", "rule"]
TIME = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$")

DRIVER = r"""
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "shim/events.h"
#include "shim/log.h"

// The shim's log, reduced to stderr.
namespace curlretry::shim::log {
void configure(const config::Settings&) {}
// Every level on: enabled() is inline in log.h and reads this.
constinit std::atomic<int> detail::g_level{static_cast<int>(config::LogLevel::debug)};
void write(config::LogLevel, std::string_view m) { std::fprintf(stderr, "log: %.*s\n", (int)m.size(), m.data()); }
}  // namespace curlretry::shim::log

using curlretry::shim::events::Event;
namespace events = curlretry::shim::events;

static Event sample() {
  Event e;
  e.method = "POST";
  e.host = "api.z.ai";
  e.path = "/api/paas/v4/chat/completions";
  e.attempt = 2;
  e.status = 429;
  e.outcome = "HTTP 429 code 1302";
  e.retry = true;
  e.reason = curlretry::core::Reason::code;
  e.reason_detail = "1302";
  e.delay_ms = 3000;
  e.bytes = 57;
  e.rule = "zai";
  return e;
}

struct Job { int proc; int thread; int n; };

static void* hammer(void* p) {
  Job* job = static_cast<Job*>(p);
  for (int i = 0; i < job->n; ++i) {
    std::string path = "/p" + std::to_string(job->proc) + "/t" + std::to_string(job->thread) + "/" +
                       std::to_string(i) + "/" + std::string(200 + (i % 7) * 300, 'x');
    Event e = sample();
    e.path = path;
    e.attempt = i + 1;
    events::record(e);
  }
  return nullptr;
}

int main(int argc, char** argv) {
  const std::string mode = argv[1];
  if (mode == "format") {
    char line[events::kMaxLine];
    Event e = sample();
    size_t n = events::format(e, 1748779200123LL, 4242, "curl", line, sizeof line);
    fwrite(line, 1, n, stdout);
    e.retry = false; e.reason = curlretry::core::Reason::success; e.status = 200; e.outcome = "HTTP 200";
    e.delay_ms = 99;
    n = events::format(e, 951782400000LL, 1, "python3", line, sizeof line);  // 2000-02-29
    fwrite(line, 1, n, stdout);
    e.reason = curlretry::core::Reason::exhausted; e.path = "/a\"b\\c\n\x01\xff\xe9\xa3\x8e";
    n = events::format(e, 0, 1, "x", line, sizeof line);
    fwrite(line, 1, n, stdout);
    e.path = "/"; e.reason = curlretry::core::Reason::committed; e.success = true;  // a 200 whose body streamed
    n = events::format(e, 0, 1, "x", line, sizeof line);
    fwrite(line, 1, n, stdout);
    return 0;
  }
  events::configure(argv[2]);
  if (mode == "long") {
    std::string path(20000, 'p');
    std::string host(1000, 'h');
    Event e = sample();
    e.path = path;
    e.host = host;
    e.outcome = std::string(5000, 'o');
    errno = EAGAIN;
    events::record(e);
    std::printf("errno kept: %d\n", errno == EAGAIN);
    return 0;
  }
  if (mode == "hammer") {
    const int procs = std::atoi(argv[3]), threads = std::atoi(argv[4]), n = std::atoi(argv[5]);
    events::record(sample());  // opened before the fork: children share the descriptor
    for (int p = 0; p < procs; ++p) {
      if (fork() == 0) {
        std::vector<pthread_t> ts(threads);
        std::vector<Job> jobs(threads);
        for (int t = 0; t < threads; ++t) {
          jobs[t] = {p, t, n};
          pthread_create(&ts[t], nullptr, hammer, &jobs[t]);
        }
        for (auto& t : ts) pthread_join(t, nullptr);
        _exit(0);
      }
    }
    int status = 0, failed = 0;
    while (wait(&status) > 0) failed += !(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    return failed;
  }
  if (mode == "reuse") {
    events::record(sample());
    for (int fd = 3; fd < 64; ++fd) close(fd);  // a host that closes what it did not open
    int host = open(argv[3], O_WRONLY | O_CREAT | O_TRUNC, 0600);
    events::record(sample());
    std::printf("host fd %d\n", host);
    close(host);
    return 0;
  }
  if (mode == "once") {
    events::record(sample());
    return 0;
  }
  return 2;
}
"""


def _compile_driver(directory: Path) -> Path:
    gxx = shutil.which("g++") or shutil.which("c++")
    if not gxx:
        raise unittest.SkipTest("no C++ compiler")
    src = directory / "driver.cpp"
    src.write_text(DRIVER)
    out = directory / "driver"
    repo = harness.REPO
    r = subprocess.run([gxx, "-std=c++20", "-O1", "-Wall", "-pthread", f"-I{repo}", str(src),
                        str(repo / "shim" / "events.cpp"), str(repo / "shim" / "fork_guard.cpp"),
                        str(repo / "shim" / "owned_fd.cpp"), str(repo / "state" / "user_named_file.cpp"),
                        str(repo / "core" / "json_text.cpp"), str(repo / "core" / "log_text.cpp"),
                        str(repo / "core" / "civil_date.cpp"), str(repo / "core" / "names.cpp"),
                        str(repo / "core" / "utf8.cpp"), "-o", str(out)],
                       capture_output=True, timeout=300)
    if r.returncode != 0:
        raise AssertionError(f"building the events driver failed:\n{r.stderr.decode()}")
    return out


def parse_lines(data: bytes) -> list[dict]:
    assert data.endswith(b"\n") or not data, data[-200:]
    return [json.loads(line) for line in data.decode().splitlines()]


class EventsWriter(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls._tmp = tempfile.TemporaryDirectory(prefix="curlretry-events-")
        cls.addClassCleanup(cls._tmp.cleanup)
        cls.dir = Path(cls._tmp.name)
        cls.driver = _compile_driver(cls.dir)

    def run_driver(self, *args: str, timeout: float = 60) -> subprocess.CompletedProcess:
        return subprocess.run([str(self.driver), *args], capture_output=True, timeout=timeout,
                              stdin=subprocess.DEVNULL)

    def test_line_format_byte_for_byte(self):
        r = self.run_driver("format")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout.decode(), "".join(line + "\n" for line in (
            '{"time":"2025-06-01T12:00:00.123Z","pid":4242,"program":"curl","method":"POST",'
            '"host":"api.z.ai","path":"/api/paas/v4/chat/completions","attempt":2,"status":429,'
            '"outcome":"HTTP 429 code 1302","verdict":"retry","reason":"code:1302","delay_ms":3000,'
            '"bytes":57,"rule":"zai"}',
            '{"time":"2000-02-29T00:00:00.000Z","pid":1,"program":"python3","method":"POST",'
            '"host":"api.z.ai","path":"/api/paas/v4/chat/completions","attempt":2,"status":200,'
            '"outcome":"HTTP 200","verdict":"success","reason":"success","delay_ms":0,"bytes":57,'
            '"rule":"zai"}',
            '{"time":"1970-01-01T00:00:00.000Z","pid":1,"program":"x","method":"POST","host":"api.z.ai",'
            '"path":"/a\\"b\\\\c\\n\\u0001\ufffd\u98ce","attempt":2,"status":200,"outcome":"HTTP 200",'
            '"verdict":"give_up","reason":"exhausted","delay_ms":0,"bytes":57,"rule":"zai"}',
            '{"time":"1970-01-01T00:00:00.000Z","pid":1,"program":"x","method":"POST","host":"api.z.ai",'
            '"path":"/","attempt":2,"status":200,"outcome":"HTTP 200","verdict":"success","reason":"success",'
            '"delay_ms":0,"bytes":57,"rule":"zai"}',
        )))
        for line in parse_lines(r.stdout):
            self.assertEqual(list(line), FIELDS)

    def test_a_huge_path_is_cut_and_the_line_stays_valid(self):
        file = self.dir / "long.jsonl"
        r = self.run_driver("long", str(file))
        self.assertEqual(r.stdout, b"errno kept: 1\n", r.stderr)
        data = file.read_bytes()
        self.assertLessEqual(len(data), 4096)
        (line,) = parse_lines(data)
        self.assertEqual(list(line), FIELDS)
        self.assertTrue(line["path"].startswith("pppp") and len(line["path"]) > 2000, len(line["path"]))
        self.assertEqual(len(line["host"]), 256)
        self.assertEqual(stat.S_IMODE(file.stat().st_mode) & 0o077, 0, "the log is private to its user")

    def test_many_processes_and_threads_never_mix_lines(self):
        file = self.dir / "hammer.jsonl"
        procs, threads, n = 6, 4, 300
        r = self.run_driver("hammer", str(file), str(procs), str(threads), str(n), timeout=120)
        self.assertEqual(r.returncode, 0, r.stderr)
        lines = parse_lines(file.read_bytes())  # any torn or interleaved line fails to parse here
        self.assertEqual(len(lines), 1 + procs * threads * n)
        seen = {line["path"].split("/x")[0] for line in lines[1:]}
        self.assertEqual(len(seen), procs * threads * n)
        self.assertEqual(len({line["pid"] for line in lines[1:]}), procs)

    def test_a_host_reusing_our_descriptor_number_never_gets_our_lines(self):
        file = self.dir / "reuse.jsonl"
        host = self.dir / "host-output.txt"
        r = self.run_driver("reuse", str(file), str(host))
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(host.read_bytes(), b"")
        self.assertEqual(len(parse_lines(file.read_bytes())), 2)

    def test_a_fifo_without_reader_does_not_hang_the_host(self):
        fifo = self.dir / "events.fifo"
        os.mkfifo(fifo)
        r = self.run_driver("once", str(fifo), timeout=10)
        self.assertEqual(r.returncode, 0)
        self.assertIn(b"cannot open", r.stderr)

    def test_an_unwritable_place_says_so_once_and_goes_on(self):
        r = self.run_driver("hammer", str(self.dir / "no-such-dir" / "e.jsonl"), "2", "2", "10")
        self.assertEqual(r.returncode, 0)
        self.assertEqual(r.stderr.count(b"cannot open"), 1, r.stderr)


# --- curlretry stats ------------------------------------------------------------------------------

SYNTHETIC = "".join(line + "\n" for line in (
    '{"time":"2025-06-01T12:00:00.100Z","pid":100,"program":"curl","method":"POST","host":"api.z.ai",'
    '"path":"/api/paas/v4/chat/completions","attempt":1,"status":429,"outcome":"HTTP 429 code 1302",'
    '"verdict":"retry","reason":"code:1302","delay_ms":1500,"bytes":57,"rule":"zai"}',
    '{"time":"2025-06-01T12:00:01.700Z","pid":100,"program":"curl","method":"POST","host":"api.z.ai",'
    '"path":"/api/paas/v4/chat/completions","attempt":2,"status":200,"outcome":"HTTP 200",'
    '"verdict":"success","reason":"success","delay_ms":0,"bytes":812,"rule":"zai"}',
    '{"time":"2025-06-01T12:00:30.000Z","pid":101,"program":"python3","method":"POST","host":"api.z.ai",'
    '"path":"/api/coding/paas/v4/chat/completions","attempt":1,"status":400,'
    '"outcome":"HTTP 400 code 3007","verdict":"retry","reason":"code:3007","delay_ms":2000,"bytes":43,'
    '"rule":"zai"}',
    '{"time":"2025-06-01T12:00:32.100Z","pid":101,"program":"python3","method":"POST","host":"api.z.ai",'
    '"path":"/api/coding/paas/v4/chat/completions","attempt":2,"status":429,'
    '"outcome":"HTTP 429 code 1302","verdict":"retry","reason":"code:1302","delay_ms":4000,"bytes":57,'
    '"rule":"zai"}',
    '{"time":"2025-06-01T12:00:36.200Z","pid":101,"program":"python3","method":"POST","host":"api.z.ai",'
    '"path":"/api/coding/paas/v4/chat/completions","attempt":3,"status":429,'
    '"outcome":"HTTP 429 code 1302","verdict":"give_up","reason":"exhausted","delay_ms":0,"bytes":57,'
    '"rule":"zai"}',
    '{"time":"2025-06-01T12:01:10.000Z","pid":102,"program":"curl","method":"GET",'
    '"host":"api.openai.com","path":"/v1/models","attempt":1,"status":200,"outcome":"HTTP 200",'
    '"verdict":"success","reason":"success","delay_ms":0,"bytes":2048,"rule":"openai"}',
    '{"time":"2025-06-01T12:02:05.000Z","pid":102,"program":"curl","method":"GET",'
    '"host":"api.openai.com","path":"/v1/nope","attempt":1,"status":404,"outcome":"HTTP 404",'
    '"verdict":"give_up","reason":"not-retryable","delay_ms":0,"bytes":120,"rule":"openai"}',
    '{"time":"2025-06-01T12:03:00.000Z","pid":103,"program":"git-remote-http","method":"GET",'
    '"host":"github.com","path":"/x/y.git/info/refs","attempt":1,"status":0,"outcome":"connection reset",'
    '"verdict":"retry","reason":"transport:reset","delay_ms":50,"bytes":0,"rule":"defaults"}',
    '{"time":"2025-06-01T12:03:00.100Z","pid":103,"program":"git-remote-http","method":"GET",'
    '"host":"github.com","path":"/x/y.git/info/refs","attempt":2,"status":200,"outcome":"HTTP 200",'
    '"verdict":"success","reason":"success","delay_ms":0,"bytes":4096,"rule":"defaults"}',
    'not json at all',
    '{"time":"2025-06-01T12:04:10.000Z","pid":104,"program":"curl","method":"POST",'
    '"host":"api.openai.com","path":"/v1/chat/completions","attempt":1,"status":429,'
    '"outcome":"HTTP 429 code insufficient_quota (permanent)","verdict":"give_up",'
    '"reason":"permanent-code:insufficient_quota","delay_ms":0,"bytes":300,"rule":"openai"}',
))

EXPECTED_REPORT = """\
10 attempts in 6 requests by 5 processes, 2025-06-01 12:00:00 to 12:04:10 UTC (4m10s)

host            requests  ok  first-try  saved  gave up  failed  retries  waited
api.openai.com         3   1          1      0        0       2        0    0 ms
api.z.ai               2   1          0      1        1       0        3   7.5 s
github.com             1   1          0      1        0       0        1   50 ms
all                    6   3          1      2        1       2        4   7.6 s

retried because: code:1302 (2), code:3007 (1), transport:reset (1)
gave up because: exhausted (1)
failed because:  not-retryable (1), permanent-code:insufficient_quota (1)
  exhausted                          every attempt max_attempts allows was used
  not-retryable                      a status or error curlretry does not retry
  permanent-code:insufficient_quota  a JSON error code listed as permanent (codes.permanent)

attempts over time (UTC, 15 s per row; o ok, r retry, x gave up, - failed)
  12:00:00  or   2
  12:00:15       0
  12:00:30  rrx  3
  12:00:45       0
  12:01:00  o    1
  12:01:15       0
  12:01:30       0
  12:01:45       0
  12:02:00  -    1
  12:02:15       0
  12:02:30       0
  12:02:45       0
  12:03:00  or   2
  12:03:15       0
  12:03:30       0
  12:03:45       0
  12:04:00  -    1

retry delays (4 retries; median 1.5 s, max 4.0 s)
  < 100 ms    #   1
  100-499 ms      0
  0.5-1 s         0
  1-2 s       #   1
  2-5 s       ##  2
"""


def curlretry(*args: str, input: bytes | None = None, timeout: float = 30) -> subprocess.CompletedProcess:
    if not harness.CURLRETRY_BIN:
        raise unittest.SkipTest("CURLRETRY_BIN is not set: run through ctest")
    return subprocess.run([harness.CURLRETRY_BIN, *args], env=harness.environment(preload=False),
                          capture_output=True, timeout=timeout, input=input,
                          stdin=None if input is not None else subprocess.DEVNULL)


class Stats(unittest.TestCase):
    def setUp(self):
        self._tmp = tempfile.TemporaryDirectory(prefix="curlretry-stats-")
        self.addCleanup(self._tmp.cleanup)
        self.dir = Path(self._tmp.name)

    def write(self, name: str, text: str) -> str:
        path = self.dir / name
        path.write_text(text)
        return str(path)

    def test_a_time_window_and_the_per_process_view(self):
        file = self.write("events.jsonl", SYNTHETIC)
        r = curlretry("stats", "--processes", "--since", "2025-06-01T12:01:00Z", "--until", "2025-06-01T12:03:30Z",
                      file)
        self.assertEqual(r.returncode, 0, r.stderr)
        out = r.stdout.decode()
        self.assertTrue(out.startswith(
            "4 attempts in 3 requests by 2 processes, 2025-06-01 12:01:10 to 12:03:00 UTC (1m50s)\n\n"
            "host            requests  ok  first-try  saved  gave up  failed  retries  waited\n"
            "api.openai.com         2   1          1      0        0       1        0    0 ms\n"
            "github.com             1   1          0      1        0       0        1   50 ms\n"
            "all                    3   2          1      1        0       1        1   50 ms\n\n"
            "by process:\n"
            "pid  program          requests  ok  first-try  saved  gave up  failed  retries  waited\n"
            "102  curl                    2   1          1      0        0       1        0    0 ms\n"
            "103  git-remote-http         1   1          0      1        0       0        1   50 ms\n"), out)
        none = curlretry("stats", "--since", "2025-06-02", file)
        self.assertEqual((none.returncode, none.stdout), (0, b"no attempts in that time\n"))
        bad = curlretry("stats", "--since", "yesterday", file)
        self.assertEqual(bad.returncode, 2)
        self.assertTrue(bad.stderr.startswith(b"curlretry stats: --since yesterday: expected a UTC time"), bad.stderr)

    def test_json(self):
        file = self.write("events.jsonl", SYNTHETIC)
        r = curlretry("stats", "--json", file)
        self.assertEqual(r.returncode, 0, r.stderr)
        got = json.loads(r.stdout)
        self.assertEqual((got["attempts"], got["requests"], got["processes"], got["from"], got["to"]),
                         (10, 6, 5, "2025-06-01T12:00:00.100Z", "2025-06-01T12:04:10.000Z"))
        self.assertEqual(got["all"], {"requests": 6, "ok": 3, "first_try": 1, "saved": 2, "gave_up": 1, "failed": 2,
                                      "retries": 4, "waited_ms": 7550})
        self.assertEqual(got["hosts"]["github.com"]["saved"], 1)
        self.assertEqual(got["reasons"], {
            "retry": {"code:1302": 2, "code:3007": 1, "transport:reset": 1},
            "gave_up": {"exhausted": 1},
            "failed": {"not-retryable": 1, "permanent-code:insufficient_quota": 1}})
        self.assertEqual(got["by_process"][0], {"pid": 100, "program": "curl", "requests": 1, "ok": 1, "first_try": 0,
                                                "saved": 1, "gave_up": 0, "failed": 0, "retries": 1,
                                                "waited_ms": 1500})

    def test_report_of_a_synthetic_log(self):
        file = self.write("events.jsonl", SYNTHETIC)
        r = curlretry("stats", file)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout.decode(), EXPECTED_REPORT)
        self.assertEqual(r.stderr.decode(),
                         f"curlretry stats: skipped 1 line that is not an attempt record (first: {file}:10)\n")

    def test_several_files_and_stdin_are_merged_in_time_order(self):
        lines = SYNTHETIC.splitlines(keepends=True)
        valid = [l for l in lines if l.startswith("{")]
        self.assertEqual(len(valid), 10)
        a = self.write("a.jsonl", "".join(valid[1::2][:-1]))  # 1 3 5 7
        b = self.write("b.jsonl", "".join(valid[0::2]))       # 0 2 4 6 8; 9 comes on stdin
        r = curlretry("stats", a, "-", b, input=valid[-1].encode())
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout.decode(), EXPECTED_REPORT)
        self.assertEqual(r.stderr, b"")

    def test_bucket_and_width(self):
        file = self.write("events.jsonl", SYNTHETIC)
        r = curlretry("stats", "--bucket", "1m", "--width", "10", file)
        self.assertEqual(r.returncode, 0, r.stderr)
        chart = "attempts over time" + r.stdout.decode().split("attempts over time")[1].split("\n\n")[0]
        self.assertEqual(chart.splitlines(), [
            "attempts over time (UTC, 1 min per row; o ok, r retry, x gave up, - failed)",
            "  12:00  orrrx  5",
            "  12:01  o      1",
            "  12:02  -      1",
            "  12:03  or     2",
            "  12:04  -      1",
        ])

    def test_large_counts_are_scaled(self):
        line = ('{"time":"2025-06-01T12:00:%02d.000Z","pid":1,"program":"p","method":"GET","host":"h",'
                '"path":"/","attempt":1,"status":503,"outcome":"HTTP 503","verdict":"retry","reason":"status:503",'
                '"delay_ms":%d,"bytes":0,"rule":"defaults"}\n')
        file = self.write("many.jsonl", "".join(line % (i % 60, 100 + i) for i in range(240)))
        r = curlretry("stats", "--bucket", "1m", file)
        self.assertEqual(r.returncode, 0, r.stderr)
        out = r.stdout.decode()
        self.assertIn("one mark = up to 5 attempts)\n  12:00  " + "r" * 48 + "  240\n", out)
        self.assertIn("retry delays (240 retries; median 219 ms, max 339 ms; one # = up to 5 retries)\n"
                      "  100-499 ms  " + "#" * 48 + "  240\n", out)

    def test_no_records_is_an_error(self):
        r = curlretry("stats", self.write("empty.jsonl", "\n"))
        self.assertEqual(r.returncode, 1)
        self.assertIn(b"no attempt records", r.stderr)

    def test_bad_arguments(self):
        self.assertEqual(curlretry("stats").returncode, 2)
        self.assertEqual(curlretry("stats", "--bucket", "soon", self.write("e.jsonl", SYNTHETIC)).returncode, 2)
        r = curlretry("stats", str(self.dir / "missing.jsonl"))
        self.assertEqual(r.returncode, 1)
        self.assertIn(b"cannot open", r.stderr)


# --- the shim writes it ----------------------------------------------------------------------------

NOT_WIRED = ("no attempt log was written: shim/transfer.cpp does not call curlretry::shim::events::record() "
             "yet (or the runtime does not call events::configure(settings.events_file))")


class EventsFromTheShim(harness.UpstreamTestCase):
    def read_log(self, path: Path) -> list[dict]:
        if not path.exists():
            self.fail(NOT_WIRED)
        return parse_lines(path.read_bytes())

    def test_one_line_per_attempt_of_a_503_503_200(self):
        k = self.key()
        log = self.temp_dir() / "events.jsonl"
        url = self.plain.script_url(k, "503,503,200", query="token=secret-abc")
        r = harness.curl(["-sS", url], preload=True, env={"CURLRETRY_EVENTS": str(log)})
        self.assertRun(r, 0, ok_body(k, 3))
        lines = self.read_log(log)
        self.assertEqual(len(lines), 3, lines)
        for n, line in enumerate(lines, start=1):
            with self.subTest(attempt=n):
                self.assertEqual(list(line), FIELDS)
                self.assertRegex(line["time"], TIME)
                self.assertEqual((line["program"], line["method"], line["host"], line["path"], line["rule"]),
                                 ("curl", "GET", "127.0.0.1", f"/s/{k}/503,503,200", "defaults"))
                self.assertEqual(line["attempt"], n)
        self.assertEqual(len({line["pid"] for line in lines}), 1)
        self.assertNotEqual(lines[0]["pid"], os.getpid())
        self.assertEqual([(l["status"], l["verdict"], l["reason"], l["delay_ms"]) for l in lines],
                         [(503, "retry", "status:503", 50), (503, "retry", "status:503", 100),
                          (200, "success", "success", 0)])
        self.assertEqual([l["outcome"] for l in lines], ["HTTP 503", "HTTP 503", "HTTP 200"])
        self.assertEqual([l["bytes"] for l in lines],
                         [len(overloaded_body(k, 1)), len(overloaded_body(k, 2)), len(ok_body(k, 3))])
        self.assertEqual(sorted(l["time"] for l in lines), [l["time"] for l in lines])
        self.assertNotIn(b"secret-abc", log.read_bytes())

    def test_a_permanent_failure_is_one_give_up_line(self):
        k = self.key()
        log = self.temp_dir() / "events.jsonl"
        r = harness.curl(["-sS", self.plain.script_url(k, "quota,200")], preload=True,
                         env={"CURLRETRY_EVENTS": str(log)})
        self.assertRun(r, 0)
        (line,) = self.read_log(log)
        self.assertEqual((line["status"], line["verdict"], line["reason"], line["delay_ms"]),
                         (429, "give_up", "permanent:daily quota", 0))

    def test_config_events_file_and_the_launcher(self):
        k = self.key()
        d = self.temp_dir()
        log = d / "from-config.jsonl"
        config = d / "config.yaml"
        config.write_text(f'version: 1\nsettings: {{events_file: "{log}"}}\n')
        r = harness.run([harness.CURLRETRY_BIN, "--config", str(config), "--", harness.CURL, "-q", "-sS",
                         self.plain.script_url(k, "503,200")], preload=False,
                        env={"CURLRETRY_BASE_MS": "10", "CURLRETRY_LIBRARY": harness.LIB})
        self.assertRun(r, 0, ok_body(k, 2))
        self.assertEqual([l["verdict"] for l in self.read_log(log)], ["retry", "success"])

    def test_many_processes_share_one_log(self):
        log = self.temp_dir() / "shared.jsonl"
        keys = [self.key(str(i)) for i in range(8)]

        def fetch(k):
            return harness.curl(["-sS", self.plain.script_url(k, "503,200")], preload=True,
                                env={"CURLRETRY_EVENTS": str(log), "CURLRETRY_BASE_MS": "20"})

        with concurrent.futures.ThreadPoolExecutor(len(keys)) as pool:
            results = list(pool.map(fetch, keys))
        for k, r in zip(keys, results):
            self.assertRun(r, 0, ok_body(k, 2))
        lines = self.read_log(log)
        self.assertEqual(len(lines), 2 * len(keys))
        self.assertEqual(len({l["pid"] for l in lines}), len(keys))
        r = curlretry("stats", str(log))
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertRegex(r.stdout.decode(),
                         r"\n127\.0\.0\.1\s+8\s+8\s+0\s+8\s+0\s+0\s+8\s+160 ms\n")  # ok = first-try + saved


if __name__ == "__main__":
    unittest.main()
