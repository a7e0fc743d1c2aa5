#!/usr/bin/env python3
"""bench/llm_proxy.sh's raw results -> one table and the verdicts of issue 27, item 5.

Added figures are the median over repetitions of (variant - direct) within one repetition (the
variants of a repetition ran back to back). CPU per request: the proxy's processes' on-CPU time
over a loadgen run divided by its requests, warm-up included; the libcurl floor is the plain
libcurl client's own CPU per request against the upstream directly (bench/README.md).
"""
import statistics
import sys

WARM = {"ttfb": 200, "multi": 500}
NAMES = {"haproxy": "HAProxy", "nginx": "nginx", "proxy": "curlretry-proxy"}
PROXIES = ["haproxy", "nginx", "proxy"]


def main(meta_path, results_path):
    meta = {}
    for line in open(meta_path):
        if line.startswith(("date=", "versions=", "proxy=", "load_")):
            key, value = line.rstrip("\n").split("=", 1)
            meta[key] = value
        else:
            meta.update(part.split("=", 1) for part in line.split() if "=" in part)
    rows = []
    for line in open(results_path):
        row, variant, rep, rest = line.rstrip("\n").split("\t", 3)
        kv = dict(part.split("=", 1) for part in rest.split() if "=" in part)
        rows.append((row, variant, rep, kv))

    def values(row, variant, key):
        return {rep: float(kv[key]) for r, v, rep, kv in rows if r == row and v == variant and key in kv}

    def added(row, variant, key):
        mine, base = values(row, variant, key), values(row, "direct", key)
        diffs = [mine[r] - base[r] for r in mine if r in base and mine[r] >= 0 and base[r] >= 0]
        return statistics.median(diffs) if diffs else None

    def med(row, variant, key):
        vals = [x for x in values(row, variant, key).values() if x >= 0]
        return statistics.median(vals) if vals else None

    def cpu_per_req(row, variant):
        per = [float(kv["proxy_cpu_ns"]) / 1000.0 / (float(kv["requests"]) + WARM[row])
               for r, v, rep, kv in rows if r == row and v == variant and "proxy_cpu_ns" in kv and "requests" in kv]
        return statistics.median(per) if per else None

    def fmt(x, spec="+.0f"):
        return "n/a" if x is None else format(x, spec)

    print(f"bench/llm_proxy.sh: {meta.get('date')}, commit {meta.get('commit')}, {meta.get('versions')}")
    print(f"machine: {meta.get('nproc')} CPUs, SHARED AND BUSY: load average {meta.get('load_start')} at start, "
          f"{meta.get('load_end')} at end (every wall-time figure moves with it); open-files limit {meta.get('fd_limit')}")
    print(f"{meta.get('reps')} interleaved repetitions; {meta.get('elapsed_s')} s; {meta.get('reps')}x: "
          f"{meta.get('n_ttfb')} sequential + {meta.get('n_multi')} at 64 at once non-streamed GETs, streams of "
          f"{meta.get('ev1')}/{meta.get('ev100')}/{meta.get('ev1000')} events {meta.get('gap')} ms apart")
    print()
    head = f"{'':44s}{'HAProxy':>16s}{'nginx':>16s}{'curlretry-proxy':>18s}"
    print(head)

    def line(label, cells):
        print(f"{label:44s}{cells[0]:>16s}{cells[1]:>16s}{cells[2]:>18s}")

    d50, d99 = med("ttfb", "direct", "p50_us"), med("ttfb", "direct", "p99_us")
    line(f"TTFB non-streamed, added p50 us (direct {fmt(d50, '.0f')})", [fmt(added("ttfb", v, "p50_us")) for v in PROXIES])
    line(f"TTFB non-streamed, added p99 us (direct {fmt(d99, '.0f')})", [fmt(added("ttfb", v, "p99_us")) for v in PROXIES])
    for c in (1, 100, 1000):
        row = f"sse{c}"
        b50, b99 = med(row, "direct", "p50_us"), med(row, "direct", "p99_us")
        line(f"SSE event, {c:>4d} streams, added p50 us (direct {fmt(b50, '.0f')})", [fmt(added(row, v, "p50_us")) for v in PROXIES])
        line(f"SSE event, {c:>4d} streams, added p99 us (direct {fmt(b99, '.0f')})", [fmt(added(row, v, "p99_us")) for v in PROXIES])
        per_event = []
        for v in PROXIES:
            runs = [float(kv["proxy_cpu_ns"]) / 1000.0 / float(kv["events"]) for r, vv, rep, kv in rows
                    if r == row and vv == v and "proxy_cpu_ns" in kv and float(kv.get("events", 0)) > 0]
            per_event.append(fmt(statistics.median(runs), ".1f") if runs else "n/a")
        line(f"SSE event, {c:>4d} streams, proxy CPU us/event", per_event)
        fails = [sum(int(kv.get("failed", 0)) for r, vv, rep, kv in rows if r == row and vv == v) for v in PROXIES]
        if any(fails):
            line(f"SSE event, {c:>4d} streams, failed streams", [str(f) for f in fails])
    hold = {v: kv for r, v, rep, kv in rows if r == "hold"}
    body = int(meta.get("hold_body", "0"))
    line("RSS per idle stream, KiB (0 -> 1,000 open)" + (f", {body} B POST body" if body else ""),
         [hold.get(v, {}).get("kib_per_stream", "n/a") for v in PROXIES])
    line(f"most idle streams held (target {meta.get('target')})", [hold.get(v, {}).get("held", "n/a") for v in PROXIES])
    cpu = {row: {v: cpu_per_req(row, v) for v in PROXIES} for row in ("ttfb", "multi")}
    for row, label in (("ttfb", "sequential"), ("multi", "64 at once")):
        floor = med(row, "direct", "cpu_us_per_req")
        line(f"proxy CPU us/request, {label} (floor {fmt(floor, '.1f')})",
             [fmt(cpu[row][v], ".1f") for v in PROXIES])
        h = cpu[row]["haproxy"]
        line(f"  / HAProxy's", [fmt(cpu[row][v] / h if h and cpu[row][v] else None, ".2f") for v in PROXIES])
    print()
    print("floor: the plain libcurl client's own CPU per request, straight to the upstream (what libcurl, the")
    print("proxy's upstream engine, spends on a request before the proxy does anything)")
    for v in PROXIES:
        kv = hold.get(v, {})
        print(f"held, {NAMES[v]}: {kv.get('held', 'n/a')} of {kv.get('target', 'n/a')}; stopped by: "
              f"{kv.get('first_error', 'n/a')}; proxy log's last line: {kv.get('log_last', 'n/a')}")

    print()
    print("verdicts (issue 27, item 5: at or below HAProxy's added latency and memory, CPU within 2x HAProxy's)")

    def verdict(ok, text):
        print(f"  {'met   ' if ok else 'MISSED'}  {text}")

    for key, label in (("p50_us", "p50"), ("p99_us", "p99")):
        p, h = added("ttfb", "proxy", key), added("ttfb", "haproxy", key)
        if p is not None and h is not None:
            verdict(p <= h, f"TTFB added {label}: {p:+.0f} us vs HAProxy {h:+.0f} us")
    for c in (1, 100, 1000):
        for key, label in (("p50_us", "p50"), ("p99_us", "p99")):
            p, h = added(f"sse{c}", "proxy", key), added(f"sse{c}", "haproxy", key)
            if p is not None and h is not None:
                verdict(p <= h, f"SSE {c} streams added {label}: {p:+.0f} us vs HAProxy {h:+.0f} us")
    try:
        p, h = float(hold["proxy"]["kib_per_stream"]), float(hold["haproxy"]["kib_per_stream"])
        verdict(p <= h, f"RSS per idle stream: {p:.2f} KiB vs HAProxy {h:.2f} KiB")
    except (KeyError, ValueError):
        pass
    try:
        held = int(hold["proxy"]["held"])
        verdict(held >= int(meta.get("target", "10000")), f"streams held: {held} (target {meta.get('target')})")
    except (KeyError, ValueError):
        pass
    for row, label in (("ttfb", "sequential"), ("multi", "64 at once")):
        p, h = cpu[row]["proxy"], cpu[row]["haproxy"]
        if p and h:
            verdict(p <= 2 * h, f"CPU per request, {label}: {p:.1f} us = {p / h:.2f}x HAProxy's {h:.1f}")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
