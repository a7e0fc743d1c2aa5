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
        self.lock = threading.Lock()
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self):
        pattern = re.compile(rb"GET /s/([^/ ]+)\S* attempt=(\d+) step=(\S+)")
        for raw in self.proc.stderr:
            m = pattern.search(raw)
            if m:
                with self.lock:
                    self.lines.append((time.monotonic(), m.group(1).decode(), int(m.group(2)), m.group(3).decode()))

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
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CURLRETRY_", "BILI_REPLAY_"))}
    env.update({"LD_PRELOAD": lib, "CURLRETRY_LOG": "off", "CURLRETRY_FLEET_DIR": fleet_dir,
                "CURLRETRY_FLEET": redis_url if mode == "redis" else mode, "CURLRETRY_BASE_MS": "500",
                "XDG_CONFIG_HOME": os.path.join(work, "empty"), "HOME": os.path.join(work, "empty")})
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
    # go); a success's answer is on its way for a few ms only (20 ms allowed). Lines are
    # time-stamped on arrival at the reader: 50 ms of slack.
    ordered = sorted(lines)
    events = []  # (when the fleet can know it, what, arrival time)
    for kt, _, _, kstep in ordered:
        if kstep.startswith("529") and "ra=" in kstep:
            events.append((kt + 0.1, "raise", kt))
        elif kstep.startswith("200"):
            events.append((kt + 0.02, "end", kt))
    events.sort()
    cooling_until = 0.0
    raised_at = 0.0
    known = 0  # events[:known] are known
    breaks = 0
    for t, key, attempt, step in ordered:
        while known < len(events) and events[known][0] <= t:
            _, what, kt = events[known]
            if what == "raise":
                if kt + RETRY_AFTER_S > cooling_until:
                    cooling_until, raised_at = kt + RETRY_AFTER_S, kt
            elif kt > raised_at:
                cooling_until = 0.0  # ended by a success sent after it was raised
            known += 1
        if attempt >= 2 and t < cooling_until - 0.05:
            breaks += 1
            if os.environ.get("FLEET_BENCH_DEBUG") and breaks <= 8:
                print(f"break: {key} attempt={attempt} step={step} early by {cooling_until - t:.3f} s", file=sys.stderr)
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
    for mode in ("off", "machine"):
        env = {k: v for k, v in os.environ.items() if not k.startswith(("CURLRETRY_", "BILI_REPLAY_"))}
        env.update({"LD_PRELOAD": lib, "CURLRETRY_FLEET": mode, "CURLRETRY_FLEET_DIR": os.path.join(work, "cg-fleet"),
                    "XDG_CONFIG_HOME": os.path.join(work, "empty"), "HOME": os.path.join(work, "empty")})
        out = os.path.join(work, f"callgrind-{mode}.out")
        subprocess.run(["timeout", "300", "valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", loadgen,
                        "easy", "-u", f"http://127.0.0.1:{upstream.port}/ok", "-n", "2000", "-w", "50"],
                       env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
        with open(out) as f:
            total = next(int(line.split()[1]) for line in f if line.startswith(("summary:", "totals:")))
        counts[mode] = total
    return counts


def fleet_env(mode, lib, redis_url, fleet_dir, work):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CURLRETRY_", "BILI_REPLAY_"))}
    env.update({"LD_PRELOAD": lib, "CURLRETRY_LOG": "off", "CURLRETRY_FLEET_DIR": fleet_dir,
                "CURLRETRY_FLEET": redis_url if mode == "redis" else mode,
                "XDG_CONFIG_HOME": os.path.join(work, "empty"), "HOME": os.path.join(work, "empty")})
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


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--root", required=True)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--workers", type=int, default=50)
    ap.add_argument("--rate", type=float, default=1.0, help="requests per second per worker")
    ap.add_argument("--modes", default="off,machine,redis")
    ap.add_argument("--keep", action="store_true")
    args = ap.parse_args()
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
        for mode in modes:
            print(f"bench/fleet.sh: {mode} ...", file=sys.stderr)
            rows.append(run_mode(mode, args, lib, upstream, redis_url, work))
            pacing[mode] = pacing_rows(mode, args, lib, upstream, redis_url, work)
        cost = instruction_cost(lib, upstream, work, args.root)
    finally:
        upstream.stop()
        if redis and redis.poll() is None:
            redis.kill()
            redis.wait()
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    phases = PHASES_QUICK if args.quick else PHASES_FULL
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
    print("pacing (issue 23): requests that succeed / logical, wall time")
    for mode, p in pacing.items():
        for name, label in (("lone", "lone process, 16 threads x N, each 503 once, default backoff"),
                            ("sequential", "processes one after another, each 503 then 200 (base 10 ms)")):
            if name in p:
                ok, total, secs = p[name]
                print(f"  {mode:8} {label}: {ok}/{total} in {secs:.1f} s")
    if cost:
        ratio = cost["machine"] / cost["off"]
        print(f"success path (callgrind, 2000 GETs): off {cost['off']} Ir, machine {cost['machine']} Ir "
              f"({100 * (ratio - 1):+.2f} %)")
    else:
        print("success path: valgrind or cc missing, not measured")


if __name__ == "__main__":
    main()
