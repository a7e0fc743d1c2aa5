"""What a request that needs no retry costs with curlretry (issue 27), by instruction count.

callgrind counts user-space instructions: repeatable for the same binaries and inputs, whatever
else the machine does. Each workload runs at two request counts; the difference divided by the
extra requests is one request's cost, start-up and warm-up cancelled out. Plain libcurl and the
preload (built-in defaults, the fleet store on as a user gets it) run the same loadgen.

The attribution table sums, per feature, the exclusive instructions of the shim's functions and
of what they call outside it (libcurl's getinfo/setopt, libc's malloc), as the difference of
the preloaded run against the plain one per shared object, so a regression names its feature.

Used by bench/success_path.sh (by hand) and by tests/integration/test_success_path.py (the CI
guard), which imports measure().
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fleet import Upstream  # noqa: E402  (the flaky upstream as the fleet bench runs it)

# Function-name patterns of the shim's code, by feature (first match wins). Every pattern is a
# substring of callgrind's "file:function" text.
FEATURES = [
    ("fleet store", ("fleet_hook", "fleet::", "core::budget", "core::cooldown", "retry_tokens", "fleet_key",
                     "core::tokens")),
    ("stream detection", ("stream_hold.cpp", "is_event_stream", "stream_wanted", "hold_stream", "sse_parser")),
    ("header rules", ("request_headers", "request_override", "HeaderListCopy", "RequestOverride")),
    ("credentials", ("credential",)),
    ("phase/log checks", ("Transfer::enter", "log::enabled", "shim::log::", "transfer_phase")),
    ("option recording", ("host_options", "easy_options", "record_option", "forward_option", "curl_easy_setopt",
                          "is_recorded_option", "OncePerTransfer", "once_per_transfer")),
    # Before routing: find_multi, inlined, is filed under reentry_guard.h.
    ("multi bookkeeping", ("multi_api", "multi_state", "find_multi", "MultiState")),
    ("routing to the right libcurl", ("real_curl", "real::for_caller", "reentry_guard", "LibcurlScope", "HostScope")),
    ("handle table", ("registry", "remembered_lookup")),
    ("transfer lifecycle", ("transfer.cpp", "transfer_run", "transfer_attempt", "cookie_snapshot", "upload_replay",
                            "url_parts", "response_head", "runtime", "easy_api", "Transfer::")),
]
OTHER = "other shim code (inlined std::, helpers)"
# The shim's helpers that make the program's own call for a wrapper (the program's setopt goes to
# libcurl through forward_option): their calls out are the program's work, not the shim's.
FORWARDERS = ("forward_option", "forward_multi_option")
# "  1,234 ( 0.5%)  file:function [clone .isra.0] [/path/of/object.so]": the object is the last
# bracket holding a path; a line without one is a total or a caller line, not a function.
LINE = re.compile(r"^\s*([\d,]+)\s+\([^)]*\)\s+(.*?)\s+\[(/[^\]]*)\]\s*$")


def annotate(out: str) -> dict[tuple[str, str], int]:
    """Exclusive instructions per (function, object) of one callgrind profile."""
    text = subprocess.run(["callgrind_annotate", "--inclusive=no", "--tree=none", "--threshold=100", out],
                          capture_output=True, text=True, check=True).stdout
    counts: dict[tuple[str, str], int] = {}
    started = False
    for line in text.splitlines():
        if "file:function" in line:
            started = True
            continue
        m = LINE.match(line) if started else None
        if not m or line.lstrip().startswith("=>"):
            continue
        key = (m.group(2), os.path.basename(m.group(3)))
        counts[key] = counts.get(key, 0) + int(m.group(1).replace(",", ""))
    return counts


def shim_cost(out: str, shim: str = "libcurlretry") -> tuple[dict[str, int], dict[str, int]]:
    """The instructions the shim itself adds, from a callgrind profile's call graph: the
    exclusive cost of the shim's functions, plus the inclusive cost of every call they make out of
    the shim (libcurl's getinfo and setopt, libc's malloc, clock_gettime) except a wrapper's call
    to its own real twin (curl_easy_perform -> the real curl_easy_perform: the program's own
    work) and calls into the program (its callbacks). Unlike the whole-process difference, this
    does not move with how many times libcurl's own loop polled. Returns ({shim function: its
    exclusive cost}, {callee outside the shim: inclusive cost of the shim's calls to it})."""
    objects: dict[str, str] = {}
    functions: dict[str, str] = {}
    files: dict[str, str] = {}

    def name(table: dict[str, str], spec: str) -> str:
        spec = spec.strip()
        m = re.match(r"\((\d+)\)(?:\s+(.*))?$", spec)
        if not m:
            return spec
        if m.group(2) is not None:
            table[m.group(1)] = m.group(2)
        return table.get(m.group(1), "?")

    main_object = None
    own: dict[str, int] = {}
    calls: dict[str, int] = {}
    ob = fn = cob = cfn = fl = None
    in_shim = False
    pending_call = False
    with open(out, errors="replace") as f:
        for line in f:
            if line.startswith("cmd:") and main_object is None:
                main_object = os.path.basename(line.split()[1])
            if line.startswith("ob="):
                ob = name(objects, line[3:])
                cob = None
            elif line.startswith("fl="):
                fl = name(files, line[3:])
            elif line.startswith("fi=") or line.startswith("fe="):
                name(files, line[3:])  # inlined code: still counted to the function it is in
            elif line.startswith("fn="):
                fn = os.path.basename(fl or "?") + ":" + name(functions, line[3:])
                in_shim = shim in os.path.basename(ob or "")
                cob = None
            elif line.startswith("cob="):
                cob = name(objects, line[4:])
            elif line.startswith("cfn="):
                cfn = name(functions, line[4:])
            elif line.startswith("cfi=") or line.startswith("cfl="):
                name(files, line[4:])
            elif line.startswith("calls="):
                pending_call = True
            elif line[:1].isdigit() or line[:1] in "+-*":
                parts = line.split()
                cost = int(parts[1]) if len(parts) > 1 else 0
                if pending_call:
                    pending_call = False
                    target_ob = os.path.basename(cob if cob is not None else (ob or ""))
                    if in_shim and shim not in target_ob and target_ob != main_object:
                        if not is_twin(fn, bare(cfn)) and not any(f in fn for f in FORWARDERS):
                            calls[bare(cfn)] = calls.get(bare(cfn), 0) + cost
                    cob = None
                elif in_shim:
                    own[fn] = own.get(fn, 0) + cost
    return own, calls


def is_twin(caller: str, callee: str) -> bool:
    """Whether the shim's `caller` is the wrapper of libcurl's `callee`, making the program's own
    call: the exported wrapper itself (curl_easy_perform -> curl_easy_perform), or the out-of-line
    host half of one (multi_perform_from_host, and the lambdas and templates it instantiates,
    -> curl_multi_perform)."""
    return bare(caller.split(":", 1)[1]) == callee or (
        callee.startswith("curl_") and f"{callee[len('curl_'):]}_from_host" in caller)


def bare(function: str | None) -> str:
    """curl_easy_perform of "curl_easy_perform'2" (callgrind's recursion marks)."""
    return (function or "?").split("'")[0]


def total(err_file: str) -> int:
    with open(err_file) as f:
        found = re.findall(r"^==\d+== Collected : (\d+)$", f.read(), re.M)
    if not found:
        raise RuntimeError(f"no callgrind total in {err_file}")
    return int(found[-1])


class Bench:
    def __init__(self, lib: str, loadgen: str, url: str, work: str):
        self.lib, self.loadgen, self.url, self.work = lib, loadgen, url, work
        self.home = os.path.join(work, "home")
        self.runtime_dir = os.path.join(work, "runtime")
        os.makedirs(self.home, exist_ok=True)
        os.makedirs(self.runtime_dir, mode=0o700, exist_ok=True)

    def run(self, variant: str, args: list[str], n: int) -> tuple[int, str]:
        env = {k: v for k, v in os.environ.items()
               if not k.startswith(("CURLRETRY_", "BILI_REPLAY_")) and k != "LD_PRELOAD"}
        # No user config; the fleet store in a private directory of this run (the default store,
        # in its default place under XDG_RUNTIME_DIR).
        env.update({"HOME": self.home, "XDG_CONFIG_HOME": self.home, "XDG_RUNTIME_DIR": self.runtime_dir})
        if variant == "preload":
            env["LD_PRELOAD"] = self.lib
        tag = f"{variant}-{args[0]}-{'-'.join(a.lstrip('-') for a in args[3:])}-{n}"
        out = os.path.join(self.work, f"cg-{tag}.out")
        err = os.path.join(self.work, f"cg-{tag}.err")
        with open(err, "w") as errf:
            subprocess.run(["timeout", "600", "valgrind", "--tool=callgrind", f"--callgrind-out-file={out}",
                            self.loadgen, *args, "-n", str(n), "-w", "0"],
                           env=env, stdout=subprocess.DEVNULL, stderr=errf, check=True)
        return total(err), out

    def per_request(self, variant: str, args: list[str], n1: int, n2: int):
        a, out_a = self.run(variant, args, n1)
        b, out_b = self.run(variant, args, n2)
        return (b - a) / (n2 - n1), out_a, out_b


def attribution(preload: tuple[str, str], n1: int, n2: int) -> list[tuple[str, float]]:
    """Per feature, the shim's own instructions per request, then its calls out of the shim by
    callee (shim_cost), largest first."""
    (own_a, calls_a), (own_b, calls_b) = shim_cost(preload[0]), shim_cost(preload[1])
    rows: dict[str, float] = {}
    for fn in set(own_a) | set(own_b):
        ir = (own_b.get(fn, 0) - own_a.get(fn, 0)) / (n2 - n1)
        feature = next((name for name, pats in FEATURES if any(p in fn for p in pats)), OTHER)
        rows[feature] = rows.get(feature, 0.0) + ir
    out = sorted(rows.items(), key=lambda r: -r[1])
    called = {fn: (calls_b.get(fn, 0) - calls_a.get(fn, 0)) / (n2 - n1) for fn in set(calls_a) | set(calls_b)}
    out += [(f"calls out: {fn}", ir) for fn, ir in sorted(called.items(), key=lambda r: -r[1]) if ir >= 1]
    return out


def shim_per_request(preload: tuple[str, str], n1: int, n2: int) -> float:
    """The shim's whole added cost of one request (shim_cost), from the two request counts."""
    (own_a, calls_a), (own_b, calls_b) = shim_cost(preload[0]), shim_cost(preload[1])
    return (sum(own_b.values()) + sum(calls_b.values()) - sum(own_a.values()) - sum(calls_a.values())) / (n2 - n1)


def measure(lib: str, loadgen: str, url: str, work: str, workloads, n1: int, n2: int, attribute: bool = True):
    """[(name, plain, preload, shim, attribution rows)] for each (name, loadgen args): plain and
    preload are whole-process instructions per request, shim the shim's own added cost."""
    bench = Bench(lib, loadgen, url, work)
    results = []
    for name, args in workloads:
        plain, _, _ = bench.per_request("plain", args, n1, n2)
        pre, qa, qb = bench.per_request("preload", args, n1, n2)
        rows = attribution((qa, qb), n1, n2) if attribute else []
        results.append((name, plain, pre, shim_per_request((qa, qb), n1, n2), rows))
    return results


def build_loadgen(root: str, work: str) -> str:
    loadgen = os.path.join(work, "loadgen")
    subprocess.run(["cc", "-O2", "-o", loadgen, os.path.join(root, "bench/loadgen.c"), "-lcurl"], check=True)
    return loadgen


WORKLOADS = [
    ("easy, sequential", ["easy"]),
    ("multi, 1 in flight", ["multi", "-c", "1"]),
    ("multi, 16 in flight", ["multi", "-c", "16"]),
]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--root", required=True)
    ap.add_argument("--requests", type=int, nargs=2, default=(500, 1500), metavar=("N1", "N2"))
    ap.add_argument("--keep", action="store_true", help="keep the callgrind profiles")
    args = ap.parse_args()
    for tool in ("valgrind", "callgrind_annotate", "cc"):
        if not shutil.which(tool):
            sys.exit(f"bench/success_path.sh: {tool} is missing (bench/install-deps.sh installs it)")
    lib = os.environ.get("CURLRETRY_LIB", os.path.join(args.root, "build/shim/libcurlretry.so"))
    up_bin = os.environ.get("FLAKY_UPSTREAM", os.path.join(args.root, "build/upstream/flaky-upstream"))
    for path in (lib, up_bin):
        if not os.path.exists(path):
            sys.exit(f"bench/success_path.sh: {path} is missing: build curlretry_shim and flaky-upstream first")
    work = tempfile.mkdtemp(prefix="curlretry-success-path-")
    upstream = Upstream(up_bin)
    try:
        loadgen = build_loadgen(args.root, work)
        url = f"http://127.0.0.1:{upstream.port}/ok"
        n1, n2 = args.requests
        results = measure(lib, loadgen, url, work, [(n, [a[0], "-u", url, *a[1:]]) for n, a in WORKLOADS], n1, n2)
    finally:
        upstream.stop()
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
        else:
            print(f"profiles kept in {work}", file=sys.stderr)
    print(f"user-space instructions per request (callgrind, requests {n1} vs {n2}, default config)")
    print("whole process: plain and preloaded runs (moves by about +-2k with libcurl's own poll loop);")
    print("shim: what the shim's own code and its calls out of it add (deterministic; the figure judged)")
    print(f"{'workload':22s} {'plain':>8s} {'preload':>8s} {'whole +':>8s} {'shim +':>7s} {'shim %':>7s}")
    for name, plain, pre, shim, _ in results:
        print(f"{name:22s} {plain:8.0f} {pre:8.0f} {pre - plain:+8.0f} {shim:+7.0f} {100 * shim / plain:+6.2f}%")
    for name, _, _, shim, rows in results:
        print(f"\nwhere the shim's {shim:.0f} instructions go: {name} (per request)")
        for feature, ir in rows:
            print(f"  {feature:44s} {ir:+7.0f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
