"""Driver of bench/fleet.sh. Every process it starts is stopped before it returns; every loop is
bounded by a count and a time limit."""

import argparse
import os
import random
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

PHASES_FULL = [("healthy", 10.0), ("outage", 20.0), ("partial", 10.0), ("recovered", 10.0)]
PHASES_QUICK = [("healthy", 2.0), ("outage", 6.0), ("partial", 4.0), ("recovered", 2.0)]
RETRY_AFTER_S = 1  # the outage's 529s say Retry-After: 1


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Upstream:
    """flaky-upstream --verbose; each request line is time-stamped as it arrives."""

    def __init__(self, binary: str):
        self.proc = subprocess.Popen([binary, "--port", "0", "--verbose"], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        line = self.proc.stdout.readline()
        if not line.startswith(b"port="):
            raise RuntimeError(f"flaky-upstream said {line!r}")
        self.port = int(line[5:])
        self.lines = []  # (monotonic time, key, attempt, step)
        self.armed = []  # (monotonic time, path): requests to an armed prefix (persistent_outage)
        self.lock = threading.Lock()
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self):
        pattern = re.compile(rb"GET /s/([^/ ]+)\S* attempt=(\d+) step=(\S+)")
        armed = re.compile(rb"GET (/\S+) -> /s/")
        for raw in self.proc.stderr:
            m = pattern.search(raw)
            if m:
                with self.lock:
                    self.lines.append((time.monotonic(), m.group(1).decode(), int(m.group(2)), m.group(3).decode()))
            elif (m := armed.search(raw)):
                with self.lock:
                    self.armed.append((time.monotonic(), m.group(1).decode()))

    def arm(self, key: str, script: str, prefix: str) -> None:
        """Every request under `prefix` plays /s/<key>/<script> from now on (upstream/README.md)."""
        url = f"http://127.0.0.1:{self.port}/arm/{key}/{script}?path={prefix}"
        with urllib.request.urlopen(url, timeout=10) as r:
            if r.read() != f"armed {prefix}\n".encode():
                raise RuntimeError(f"arming {prefix} failed")

    def stop(self):
        if self.proc.poll() is None:
            self.proc.stdin.close()
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def run_mode(mode, args, lib, upstream, redis_url, work):
    fleet_dir = os.path.join(work, f"fleet-{mode}")
    env = fleet_env(mode, lib, redis_url, fleet_dir, work)
    env["CURLRETRY_BASE_MS"] = "500"
    phases = PHASES_QUICK if args.quick else PHASES_FULL
    rate = args.workers * args.rate  # logical requests per second, offered whatever happens
    launched = []  # (phase, key, Popen)
    bounds = {}  # phase -> (monotonic start, end)
    rng = random.Random(12)
    start = time.monotonic()
    n = 0
    for phase, seconds in phases:
        phase_start = time.monotonic()
        phase_end = phase_start + seconds
        bounds[phase] = (phase_start, phase_end)
        while time.monotonic() < phase_end:
            n += 1
            key = f"{mode}-{phase}-{n}"
            if phase == "outage":
                script = f"529+ra={RETRY_AFTER_S}"
            elif phase == "partial":
                script = "529,200" if rng.random() < 0.10 else "200"
            else:
                script = "200"
            url = f"http://127.0.0.1:{upstream.port}/s/{key}/{script}"
            p = subprocess.Popen(["curl", "-q", "-sS", "-o", "/dev/null", "-w", "%{http_code}", "--max-time", "30",
                                  url], env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                 stderr=subprocess.DEVNULL)
            launched.append((phase, key, p, script))
            next_at = start + n / rate
            time.sleep(max(0.0, next_at - time.monotonic()))
    results = {}
    for phase, key, p, script in launched:
        try:
            out, _ = p.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            p.kill()
            out, _ = p.communicate()
        results[key] = (phase, p.returncode == 0 and out.strip() == b"200", script,
                        f"exit {p.returncode}, HTTP {out.strip().decode(errors='replace') or '-'}")
    # Every curl has ended, so every request line is written: wait until the reader has them all
    # (no new line for 0.5 s; at most 5 s).
    settle_until = time.monotonic() + 5.0
    seen, quiet_since = -1, time.monotonic()
    while time.monotonic() < settle_until and time.monotonic() - quiet_since < 0.5:
        with upstream.lock:
            now_seen = len(upstream.lines)
        if now_seen != seen:
            seen, quiet_since = now_seen, time.monotonic()
        time.sleep(0.05)
    with upstream.lock:
        lines = [line for line in upstream.lines if line[1].startswith(mode + "-")]
    return summarise(mode, results, lines, bounds)


def count_breaks(ordered, events, o_start, evidence_first):
    """Retries that reached the upstream while a cooldown the fleet knew of was in force (see
    summarise). `evidence_first`: a success that arrived after a raise ends it even when the
    success is known before the raise is (the raise is allowed 100 ms to reach the store, the
    success 20 ms: without this, a success sent 30-100 ms after a raise ended only the raises
    known before it, and the retries it rightly let go were counted as breaks)."""
    cooling_until = 0.0
    raised_at = 0.0
    raised_by = ""
    last_end = 0.0  # arrival of the latest success known
    known = 0  # events[:known] are known
    breaks = 0
    raisers = {kt: key for kt, key, _, kstep in ordered if kstep.startswith("529") and "ra=" in kstep}
    successes = [kt for kt, _, _, kstep in ordered if kstep.startswith("200")]
    for t, key, attempt, step in ordered:
        while known < len(events) and events[known][0] <= t:
            _, what, kt = events[known]
            if what == "raise":
                if kt + RETRY_AFTER_S > cooling_until and not (evidence_first and last_end > kt):
                    cooling_until, raised_at, raised_by = kt + RETRY_AFTER_S, kt, raisers.get(kt, "")
            else:
                last_end = max(last_end, kt)
                if kt > raised_at:
                    cooling_until = 0.0  # ended by a success sent after it was raised
            known += 1
        if attempt >= 2 and t < cooling_until - 0.05:
            breaks += 1
            if evidence_first and os.environ.get("FLEET_BENCH_DEBUG") and breaks <= 8:
                print(f"break: {key} attempt={attempt} step={step} at {t - o_start:+.3f} s into the outage, early by "
                      f"{cooling_until - t:.3f} s (raised by {raised_by} at {raised_at - o_start:+.3f} s); successes "
                      f"arrived after that raise and before it: "
                      f"{[round(x - o_start, 3) for x in successes if raised_at < x < t][:4]}", file=sys.stderr)
    return breaks


def summarise(mode, results, lines, bounds):
    by_phase = {}
    for key, (phase, ok, _, _) in results.items():
        d = by_phase.setdefault(phase, {"logical": 0, "ok": 0, "upstream": 0})
        d["logical"] += 1
        d["ok"] += ok
    # An upstream request belongs to the phase its logical request was launched in (an outage
    # request's retries that land after the outage ended still count against the outage).
    for _, key, _, _ in lines:
        if key in results:
            by_phase[results[key][0]]["upstream"] += 1
    # A retry (a key's attempt >= 2) that reached the upstream before a Retry-After announced at
    # least 100 ms earlier (time for the answer to reach its process and the store) had ended
    # broke a cooldown, unless a success of a request that arrived after the cooldown was raised
    # had ended it (issue 23: a cooldown ends on evidence, and the fleet then rightly lets retries
    # go), whichever of the two the model learns first; a success's answer is on its way for a few
    # ms only (20 ms allowed). Lines are time-stamped on arrival at the reader: 50 ms of slack.
    ordered = sorted(lines)
    events = []  # (when the fleet can know it, what, arrival time)
    for kt, _, _, kstep in ordered:
        if kstep.startswith("529") and "ra=" in kstep:
            events.append((kt + 0.1, "raise", kt))
        elif kstep.startswith("200"):
            events.append((kt + 0.02, "end", kt))
    events.sort()
    o_start = bounds.get("outage", (0.0, 0.0))[0]
    breaks = count_breaks(ordered, events, o_start, True)
    if os.environ.get("FLEET_BENCH_DEBUG"):
        print(f"breaks: {breaks}; {count_breaks(ordered, events, o_start, False)} when a success known before the "
              f"raise it was sent after does not end it (the model before issue 23's probe round)", file=sys.stderr)
    out = by_phase.get("outage", {"logical": 0, "upstream": 0})
    # The issue's wording: upstream requests that arrived during the outage over logical requests
    # offered during it (whatever phase launched them).
    o_start, o_end = bounds.get("outage", (0.0, 0.0))
    during = sum(1 for t, _, _, _ in lines if o_start <= t < o_end)
    part = by_phase.get("partial", {"logical": 0, "ok": 0})
    # What became of the 10 % window's misses: the script, the answer, how many attempts arrived.
    attempts = {}
    for _, key, attempt, _ in lines:
        attempts[key] = max(attempts.get(key, 0), attempt)
    misses = [f"{script} -> {answer}, {attempts.get(key, 0)} attempt(s) upstream"
              for key, (phase, ok, script, answer) in results.items() if phase == "partial" and not ok]
    return {
        "mode": mode,
        "amplification": out["upstream"] / out["logical"] if out["logical"] else float("nan"),
        "during": during / out["logical"] if out["logical"] else float("nan"),
        "partial_success": part["ok"] / part["logical"] if part["logical"] else float("nan"),
        "breaks": breaks,
        "misses": misses,
        "logical": sum(d["logical"] for d in by_phase.values()),
        "upstream": sum(d["upstream"] for d in by_phase.values()),
    }


def instruction_cost(lib, upstream, work, root):
    """Callgrind instruction counts of 2000 successful GETs on one handle, fleet off vs machine."""
    if not shutil.which("valgrind") or not shutil.which("cc"):
        return None
    loadgen = os.path.join(work, "loadgen")
    subprocess.run(["cc", "-O2", "-o", loadgen, os.path.join(root, "bench/loadgen.c"), "-lcurl"], check=True)
    counts = {}
    runs = {}
    # Both at once: an instruction count does not depend on what else runs, and the row then
    # costs one callgrind run of wall time instead of two.
    for mode in ("off", "machine"):
        env = {k: v for k, v in os.environ.items() if not k.startswith(("CURLRETRY_", "BILI_REPLAY_"))}
        env.update({"LD_PRELOAD": lib, "CURLRETRY_FLEET": mode, "CURLRETRY_FLEET_DIR": os.path.join(work, "cg-fleet"),
                    "XDG_CONFIG_HOME": os.path.join(work, "empty"), "HOME": os.path.join(work, "empty")})
        out = os.path.join(work, f"callgrind-{mode}.out")
        runs[mode] = (out, subprocess.Popen(
            ["timeout", "300", "valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", loadgen,
             "easy", "-u", f"http://127.0.0.1:{upstream.port}/ok", "-n", "2000", "-w", "50"],
            env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
    for mode, (out, p) in runs.items():
        if p.wait() != 0:
            raise RuntimeError(f"callgrind of loadgen ({mode}) exited {p.returncode}")
        with open(out) as f:
            total = next(int(line.split()[1]) for line in f if line.startswith(("summary:", "totals:")))
        counts[mode] = total
    return counts


def fleet_env(mode, lib, redis_url, fleet_dir, work):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CURLRETRY_", "BILI_REPLAY_"))}
    env.update({"LD_PRELOAD": lib, "CURLRETRY_LOG": "off", "CURLRETRY_FLEET_DIR": fleet_dir,
                "CURLRETRY_FLEET": redis_url if mode == "redis" else mode,
                "XDG_CONFIG_HOME": os.path.join(work, "empty"), "HOME": os.path.join(work, "empty")})
    if os.environ.get("FLEET_BENCH_LOG"):  # a directory: each mode's processes log there at info
        env.update({"CURLRETRY_LOG": "info",
                    "CURLRETRY_LOG_FILE": os.path.join(os.environ["FLEET_BENCH_LOG"], f"{mode}.log")})
    return env


def pacing_rows(mode, args, lib, upstream, redis_url, work):
    """Issue 23: a lone process with 16 threads, each request failing once (the default backoff),
    and processes one after another, each 503 then 200: every request must succeed."""
    host = os.environ.get("EASY_HOST", os.path.join(args.root, "build/tests/integration/hosts/easy_host"))
    tag = f"{mode}-{random.randrange(1 << 30)}"
    rows = {}
    fleet_dir = os.path.join(work, f"pacing-{mode}")
    if os.path.exists(host):
        per_thread = 5 if args.quick else 40
        start = time.monotonic()
        out = subprocess.run([host, "threads", f"http://127.0.0.1:{upstream.port}/s/lone-{tag}-", "16",
                              str(per_thread)], env=fleet_env(mode, lib, redis_url, fleet_dir, work),
                             capture_output=True, timeout=600)
        m = re.search(rb"ok=(\d+)", out.stdout)
        rows["lone"] = (int(m.group(1)) if m else 0, 16 * per_thread, time.monotonic() - start)
    n = 50 if args.quick else 200
    env = fleet_env(mode, lib, redis_url, fleet_dir, work)
    env["CURLRETRY_BASE_MS"] = "10"
    ok = 0
    start = time.monotonic()
    for i in range(n):
        key = f"seq-{tag}-{i}"
        r = subprocess.run(["curl", "-q", "-sS", f"http://127.0.0.1:{upstream.port}/s/{key}/503,200"], env=env,
                           capture_output=True, timeout=60)
        ok += r.returncode == 0 and r.stdout == f"ok key={key} attempt=2\n".encode()
    rows["sequential"] = (ok, n, time.monotonic() - start)
    return rows


def wait_all(procs, limit_s):
    """Waits for every process (bounded by limit_s, then kills what is left); returns each one's
    (exit status, stdout, monotonic end time or None when killed)."""
    ends = [None] * len(procs)
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline and any(e is None for e in ends):
        for i, p in enumerate(procs):
            if ends[i] is None and p.poll() is not None:
                ends[i] = time.monotonic()
        time.sleep(0.05)
    out = []
    for i, p in enumerate(procs):
        if p.poll() is None:
            p.kill()
        stdout, _ = p.communicate()
        out.append((p.returncode, stdout, ends[i]))
    return out


def quiet_log(upstream):
    """Every process has ended: waits until the upstream's log is quiet (0.5 s, at most 5 s)."""
    until = time.monotonic() + 5.0
    seen, quiet_since = -1, time.monotonic()
    while time.monotonic() < until and time.monotonic() - quiet_since < 0.5:
        with upstream.lock:
            now_seen = len(upstream.lines) + len(upstream.armed)
        if now_seen != seen:
            seen, quiet_since = now_seen, time.monotonic()
        time.sleep(0.05)


PERSIST_PROCS = 50
PERSIST_OUTAGE_S = {False: 60.0, True: 10.0}  # full, --quick
# A process still waiting this long after the recovery is killed and counted as not finished.
PERSIST_DRAIN_LIMIT_S = 240.0


def persistent_outage(modes, args, lib, upstream, redis_url, work):
    """Issue 23: unattended mode (CURLRETRY_PERSISTENT=1), 50 processes, a full 529 outage of
    the whole host (an armed path prefix, upstream/README.md) then healthy. Every mode runs at
    the same time, each on a prefix and a store of its own: side by side, in the same minute."""
    outage_s = PERSIST_OUTAGE_S[args.quick]
    tag = random.randrange(1 << 30)
    runs = {}
    for mode in modes:
        prefix = f"/po-{mode}-{tag}/"
        upstream.arm(f"po-{mode}-{tag}", "529", prefix)
        env = fleet_env(mode, lib, redis_url, os.path.join(work, f"persistent-{mode}"), work)
        env["CURLRETRY_PERSISTENT"] = "1"
        runs[mode] = (prefix, env)
    start = time.monotonic()
    procs = {mode: [] for mode in modes}
    for i in range(PERSIST_PROCS):
        for mode in modes:
            prefix, env = runs[mode]
            procs[mode].append(subprocess.Popen(
                ["curl", "-q", "-sS", "-o", "/dev/null", "-w", "%{http_code}", f"http://127.0.0.1:{upstream.port}{prefix}{i}"],
                env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL))
    time.sleep(max(0.0, start + outage_s - time.monotonic()))
    for mode in modes:
        upstream.arm(f"po-{mode}-{tag}", "200", runs[mode][0])
    recovered = time.monotonic()
    every = [p for mode in modes for p in procs[mode]]
    done = wait_all(every, recovered - time.monotonic() + PERSIST_DRAIN_LIMIT_S)
    quiet_log(upstream)
    with upstream.lock:
        armed = list(upstream.armed)
    rows = {}
    for k, mode in enumerate(modes):
        # `every` is mode by mode: this mode's processes are one slice of it (indexing it as if
        # the modes were interleaved mixed every mode's processes into each row's drain and count).
        mine = done[k * PERSIST_PROCS:(k + 1) * PERSIST_PROCS]
        ok = sum(1 for code, out, _ in mine if code == 0 and out.strip() == b"200")
        ends = [end for _, _, end in mine if end is not None]
        prefix = runs[mode][0]
        lines = [t for t, path in armed if path.startswith(prefix)]
        during = sum(1 for t in lines if start <= t < recovered)
        rows[mode] = {"ok": ok, "logical": PERSIST_PROCS, "during": during / PERSIST_PROCS, "upstream": len(lines),
                      "drain": (max(ends) - recovered) if len(ends) == PERSIST_PROCS else float("inf"),
                      "unfinished": PERSIST_PROCS - len(ends)}
    return rows, outage_s


FLAP_PROCS = 50
FLAP_S = {False: 30, True: 10}  # requests per process at 1/s: the row's length in seconds


def flapping(modes, args, lib, upstream, redis_url, work):
    """Issue 23: 50 processes against a flapping upstream for 30 s, every mode at the same time.
    Each process is one curl making one request a second (`--rate 1/s`) on a key of its own that
    answers every other request 503 (503,200,503,200,...: a retry that was not sent shifts the
    next request onto the 200); base 500 ms like the timeline."""
    n = FLAP_S[args.quick]
    tag = random.randrange(1 << 30)
    script = ",".join(["503,200"] * (n + 2))
    procs = {mode: [] for mode in modes}
    for i in range(FLAP_PROCS):
        for mode in modes:
            env = fleet_env(mode, lib, redis_url, os.path.join(work, f"flap-{mode}"), work)
            env["CURLRETRY_BASE_MS"] = "500"
            url = f"http://127.0.0.1:{upstream.port}/s/flap-{mode}-{tag}-{i}/{script}"
            cmd = ["curl", "-q", "-sS", "--rate", "1/s", "-w", "%{http_code}\n"]
            for _ in range(n):
                cmd += ["-o", "/dev/null", url]
            procs[mode].append(subprocess.Popen(cmd, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                                stderr=subprocess.DEVNULL))
    every = [p for mode in modes for p in procs[mode]]
    done = wait_all(every, 4.0 * n + 60.0)
    quiet_log(upstream)
    with upstream.lock:
        lines = list(upstream.lines)
    rows = {}
    for k, mode in enumerate(modes):
        mine = done[k * FLAP_PROCS:(k + 1) * FLAP_PROCS]  # as in persistent_outage
        ok = sum(out.split().count(b"200") for _, out, _ in mine)
        up = sum(1 for _, key, _, _ in lines if key.startswith(f"flap-{mode}-{tag}-"))
        rows[mode] = {"ok": ok, "logical": FLAP_PROCS * n, "upstream": up}
    return rows, n


ROWS = ("timeline", "pacing", "persistent", "flapping", "cost")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--root", required=True)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--workers", type=int, default=50)
    ap.add_argument("--rate", type=float, default=1.0, help="requests per second per worker")
    ap.add_argument("--modes", default="off,machine,redis")
    ap.add_argument("--keep", action="store_true")
    ap.add_argument("--rows", default=",".join(ROWS), help="which rows: " + ",".join(ROWS))
    args = ap.parse_args()
    wanted = args.rows.split(",")
    if any(r not in ROWS for r in wanted):
        ap.error(f"--rows: one or more of {','.join(ROWS)}")
    lib = os.environ.get("CURLRETRY_LIB", os.path.join(args.root, "build/shim/libcurlretry.so"))
    up_bin = os.environ.get("FLAKY_UPSTREAM", os.path.join(args.root, "build/upstream/flaky-upstream"))
    for path in (lib, up_bin):
        if not os.path.exists(path):
            sys.exit(f"bench/fleet.sh: {path} is missing: build curlretry_shim and flaky-upstream first")
    work = tempfile.mkdtemp(prefix="curlretry-fleet-bench-")
    os.makedirs(os.path.join(work, "empty"))
    upstream = Upstream(up_bin)
    redis = None
    rows = []
    try:
        modes = args.modes.split(",")
        redis_url = ""
        if "redis" in modes:
            if shutil.which("redis-server"):
                port = free_port()
                redis = subprocess.Popen(["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "",
                                          "--appendonly", "no"], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
                for _ in range(100):
                    try:
                        socket.create_connection(("127.0.0.1", port), timeout=1).close()
                        break
                    except OSError:
                        time.sleep(0.05)
                redis_url = f"redis://127.0.0.1:{port}/0"
            else:
                print("redis-server not installed: no Redis row", file=sys.stderr)
                modes.remove("redis")
        pacing = {}
        persist = flap = cost = None
        for mode in modes:
            print(f"bench/fleet.sh: {mode} ...", file=sys.stderr)
            if "timeline" in wanted:
                rows.append(run_mode(mode, args, lib, upstream, redis_url, work))
            if "pacing" in wanted:
                pacing[mode] = pacing_rows(mode, args, lib, upstream, redis_url, work)
        if "persistent" in wanted:
            print(f"bench/fleet.sh: persistent outage ({','.join(modes)} side by side) ...", file=sys.stderr)
            persist, persist_s = persistent_outage(modes, args, lib, upstream, redis_url, work)
        if "flapping" in wanted:
            print(f"bench/fleet.sh: flapping upstream ({','.join(modes)} side by side) ...", file=sys.stderr)
            flap, flap_s = flapping(modes, args, lib, upstream, redis_url, work)
        if "cost" in wanted:
            cost = instruction_cost(lib, upstream, work, args.root)
    finally:
        upstream.stop()
        if redis and redis.poll() is None:
            redis.kill()
            redis.wait()
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    phases = PHASES_QUICK if args.quick else PHASES_FULL
    if rows:
        print_timeline(args, phases, rows)
    if pacing:
        print_pacing(pacing)
    if persist:
        print_persistent(persist, persist_s)
    if flap:
        print_flapping(flap, flap_s)
    if "cost" in wanted:
        print_cost(cost)


def print_timeline(args, phases, rows):
    print(f"{args.workers} workers x {args.rate:g} req/s; phases " +
          ", ".join(f"{p} {s:g} s" for p, s in phases) + f"; outage = 529 with Retry-After: {RETRY_AFTER_S}")
    print("outage ratio: upstream requests of the outage's logical requests (their retries included, wherever"
          " they land) / logical; during: upstream requests that arrived during the outage / its logical requests")
    print(f"{'fleet':8} {'outage ratio':>13} {'during':>7} {'success in 10% window':>22} {'cooldown breaks':>16}"
          f" {'logical':>8} {'upstream':>9}")
    for r in rows:
        print(f"{r['mode']:8} {r['amplification']:>12.3f}x {r['during']:>6.3f}x {100 * r['partial_success']:>21.1f}%"
              f" {r['breaks']:>16} {r['logical']:>8} {r['upstream']:>9}")
    for r in rows:
        for miss in r["misses"][:5]:
            print(f"  {r['mode']}: 10 % window miss: {miss}")


def print_pacing(pacing):
    print("pacing (issue 23): requests that succeed / logical, wall time")
    lone_off = pacing.get("off", {}).get("lone")
    for mode, p in pacing.items():
        for name, label in (("lone", "lone process, 16 threads x N, each 503 once, default backoff"),
                            ("sequential", "processes one after another, each 503 then 200 (base 10 ms)")):
            if name in p:
                ok, total, secs = p[name]
                vs = ""
                if name == "lone" and lone_off and mode != "off":
                    vs = f" ({secs / lone_off[2]:.2f}x fleet off's {lone_off[2]:.1f} s)"
                print(f"  {mode:8} {label}: {ok}/{total} in {secs:.1f} s{vs}")


def print_persistent(persist, persist_s):
    print(f"persistent mode (CURLRETRY_PERSISTENT=1): {PERSIST_PROCS} processes, 529 outage of the whole host for "
          f"{persist_s:g} s, then 200; every mode at once. during: upstream requests that arrived in the outage /"
          f" logical; drain: recovery -> last process done (targets 1.1x, 10 s)")
    print(f"{'fleet':8} {'succeeded':>10} {'during':>8} {'drain':>8} {'upstream':>9}")
    for mode, r in persist.items():
        drain = f"{r['drain']:.1f} s" if r["unfinished"] == 0 else f"{r['unfinished']} left"
        print(f"{mode:8} {r['ok']:>4}/{r['logical']:<5} {r['during']:>7.2f}x {drain:>8} {r['upstream']:>9}")


def print_flapping(flap, flap_s):
    print(f"flapping upstream: {FLAP_PROCS} processes x {flap_s} requests at 1/s, each key answering every other "
          f"request 503 (base 500 ms); every mode at once (targets: success >= off's, upstream <= off's)")
    print(f"{'fleet':8} {'success':>8} {'logical':>8} {'upstream':>9}")
    for mode, r in flap.items():
        print(f"{mode:8} {100 * r['ok'] / r['logical']:>7.1f}% {r['logical']:>8} {r['upstream']:>9}")


def print_cost(cost):
    if cost:
        ratio = cost["machine"] / cost["off"]
        print(f"success path (callgrind, 2000 GETs): off {cost['off']} Ir, machine {cost['machine']} Ir "
              f"({100 * (ratio - 1):+.2f} %)")
    else:
        print("success path: valgrind or cc missing, not measured")


if __name__ == "__main__":
    main()
