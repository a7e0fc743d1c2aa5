#!/usr/bin/env python3
"""Turns bench/run.sh's raw results into the table of medians and ratios, and the targets.

    report.py META RESULTS

META is key=value lines about the machine and the run; RESULTS has one line per load-generator
run: row, variant, run number and the loadgen's key=value line, tab-separated.

A ratio is the median over runs of the per-run ratio (the variants of one run ran back to back,
so a slow phase of the machine hits both sides of the ratio); the other columns are medians.
"""
import statistics
import sys
from collections import defaultdict


def parse_kv(line):
    out = {}
    for part in line.split():
        if "=" in part:
            k, v = part.split("=", 1)
            out[k] = v
    return out


def main(meta_path, results_path):
    meta = {}
    with open(meta_path) as f:
        for line in f:
            line = line.rstrip("\n")
            if "=" in line:
                whole = line.startswith(("date=", "cpu=", "shim_needed=", "shim_built=", "pinning=", "load="))
                for part in [line] if whole else line.split():
                    k, v = part.split("=", 1)
                    meta[k] = v

    # data[row][variant][run] = {metric: float}
    data = defaultdict(lambda: defaultdict(dict))
    with open(results_path) as f:
        for line in f:
            row, variant, run, rest = line.rstrip("\n").split("\t", 3)
            values = {}
            for k, v in parse_kv(rest).items():
                try:
                    values[k] = float(v)
                except ValueError:
                    pass
            if values.get("cpu_us_per_req", 0) > 0:
                values["rps_cpu"] = 1e6 / values["cpu_us_per_req"]
            # The proxy's own CPU time (run.sh: schedstat of its threads over the whole loadgen
            # run, warm-up included): per request sent, per MiB for bulk, per success on the
            # retry rows (the warm-up is assumed to succeed as often as the measured part).
            if "proxy_cpu_ns" in values and values.get("requests"):
                sent = values["requests"] + values.get("warm_up", 0)
                us = values["proxy_cpu_ns"] / 1000.0
                if row == "bulk" and values.get("bytes"):
                    values["proxy_us"] = us / (values["bytes"] / 1048576.0)
                elif row.startswith("retry-"):
                    if values.get("ok"):
                        values["proxy_us"] = us / (sent * values["ok"] / values["requests"])
                else:
                    values["proxy_us"] = us / sent
            data[row][variant][int(run)] = values

    def med(row, variant, metric):
        vals = [r[metric] for r in data[row][variant].values() if metric in r]
        return statistics.median(vals) if vals else None

    def ratios(row, a, b, metric):
        """The per-run ratios a/b, pairing the runs of the same number, sorted."""
        ra, rb = data[row][a], data[row][b]
        return sorted(ra[k][metric] / rb[k][metric] for k in ra if k in rb and metric in ra[k] and rb[k].get(metric))

    def ratio(row, a, b, metric):
        """Median over runs of a/b."""
        vals = ratios(row, a, b, metric)
        return statistics.median(vals) if vals else None

    def spread(row, a, b, metric):
        """' (runs lo-hi)': the middle half of the per-run ratios, to show how noisy a ratio is."""
        vals = ratios(row, a, b, metric)
        if len(vals) < 4:
            return ""
        q = statistics.quantiles(vals, n=4)
        return " [%.2f-%.2f]" % (q[0], q[2])

    def diff(row, a, b, metric):
        ra, rb = data[row][a], data[row][b]
        vals = [ra[k][metric] - rb[k][metric] for k in ra if k in rb and metric in ra[k] and metric in rb[k]]
        return statistics.median(vals) if vals else None

    def nruns(row, variant):
        return len(data[row][variant])

    def fmt(x, spec):
        return format(x, spec) if x is not None else "-"

    out = []
    p = out.append
    p("curlretry bench: %s" % meta.get("date", "?"))
    p("machine: nproc=%s, kernel %s, %s" % (meta.get("nproc", "?"), meta.get("kernel", "?"), meta.get("cpu", "?")))
    p("libcurl %s, nginx %s, HAProxy %s" % (meta.get("libcurl", "?"), meta.get("nginx", "?"), meta.get("haproxy", "?")))
    p("shim %s, built %s, work tree at %s" % (
        meta.get("shim", "?"), meta.get("shim_built", "?"), meta.get("commit", "?")))
    p("shim NEEDED: %s" % meta.get("shim_needed", "?"))
    p("CPU placement: %s" % meta.get("pinning", "?"))
    if "load" in meta:
        p("load average at start: %s" % meta["load"])
    p("medians of %s interleaved runs%s; a ratio is the median of the per-run ratios (brackets: their middle half)"
      % (meta.get("runs", "?"), " (--quick)" if meta.get("quick") == "1" else ""))
    p("")

    variants = ["direct", "preload", "haproxy", "nginx", "proxy"]
    names = {"direct": "direct", "preload": "preload", "haproxy": "HAProxy", "nginx": "nginx-proxy",
             "proxy": "curlretry-proxy"}
    # (text, met by wall time, met by client CPU time or None when that does not apply)
    targets = []

    def throughput_row(row, title, metric, cpu_metric, unit, cpu_unit, extra=None, target=None):
        if row not in data:
            return
        head = "%-44s %10s %8s %10s %8s" % (title, unit, "/direct", cpu_unit, "/direct")
        if extra:
            head += "".join(" %9s" % e[1] for e in extra)
        p(head + "   runs")
        for v in variants:
            if v not in data[row]:
                continue
            line = "  %-42s %10s %8s %10s %8s" % (names[v], fmt(med(row, v, metric), ".1f"),
                                                 fmt(ratio(row, v, "direct", metric), ".3f"),
                                                 fmt(med(row, v, cpu_metric), ".0f"),
                                                 fmt(ratio(row, v, "direct", cpu_metric), ".3f"))
            if extra:
                line += "".join(" %9s" % fmt(med(row, v, e[0]), ".1f") for e in extra)
            p(line + "   %4d" % nruns(row, v))
        p("")
        r = ratio(row, "preload", "direct", metric)
        rc = ratio(row, "preload", "direct", cpu_metric)
        if target is not None and r is not None:
            targets.append(("%s: preload/direct >= %.2f: wall %s%s, client CPU %s%s" % (
                title.split(" (")[0], target, fmt(r, ".3f"), spread(row, "preload", "direct", metric), fmt(rc, ".3f"),
                spread(row, "preload", "direct", cpu_metric)), r >= target,
                rc >= target if rc is not None else None))
        for proxy in ("haproxy", "nginx"):
            rp = ratio(row, "preload", proxy, metric)
            if rp is not None:
                targets.append(("%s: preload beats %s (preload/%s %s%s > 1)" % (
                    title.split(" (")[0], names[proxy], names[proxy], fmt(rp, ".2f"),
                    spread(row, "preload", proxy, metric)), rp > 1, None))

    m = meta
    throughput_row("easy", "easy-sequential (%s GETs, one handle)" % m.get("n_easy", "?"), "rps", "rps_cpu", "req/s",
                   "req/cpu-s", extra=[("p50_us", "p50 us"), ("p99_us", "p99 us")], target=0.99)
    throughput_row("multi", "multi-concurrent (%s GETs, %s at once)" % (
                       m.get("n_multi", "?"), m.get("concurrency", "?")),
                   "rps", "rps_cpu", "req/s", "req/cpu-s", target=0.98)
    throughput_row("bulk", "bulk (%s x 256 MiB into a write callback)" % m.get("n_bulk", "?"), "mibps", "mib_per_cpu_s",
                   "MiB/s", "MiB/cpu-s", target=0.99)

    def retry_row(row, title):
        if row not in data:
            return
        p("%-44s %10s %8s %10s %9s   runs" % (title, "success %", "req/s", "/HAProxy", "/direct"))
        for v in variants:
            if v not in data[row]:
                continue
            p("  %-42s %10s %8s %10s %9s   %4d" % (names[v], fmt(med(row, v, "success_pct"), ".2f"),
                                                  fmt(med(row, v, "rps"), ".1f"),
                                                  fmt(ratio(row, v, "haproxy", "rps"), ".3f"),
                                                  fmt(ratio(row, v, "direct", "rps"), ".3f"), nruns(row, v)))
        p("")
        s = med(row, "preload", "success_pct")
        rh = ratio(row, "preload", "haproxy", "rps")
        if s is not None and rh is not None:
            short = title.split(" (")[0]
            targets.append(("%s: preload 100%% success (%s %%) at >= HAProxy's req/s (%s%s)" % (
                short, fmt(s, ".2f"), fmt(rh, ".3f"), spread(row, "preload", "haproxy", "rps")),
                            s >= 100.0 and rh >= 1.0, None))
        rn = ratio(row, "preload", "nginx", "rps")
        if rn is not None:
            targets.append(("%s: preload beats nginx-proxy (%s%s > 1)" % (
                title.split(" (")[0], fmt(rn, ".2f"), spread(row, "preload", "nginx", "rps")), rn > 1, None))

    retry_row("retry-easy", "retry path, easy (%s GETs, each 503 once)" % m.get("n_retry_easy", "?"))
    retry_row("retry-multi", "retry path, multi (%s GETs, %s at once)" % (m.get("n_retry_multi", "?"),
                                                                         m.get("concurrency", "?")))

    # Issue 15: curlretry-proxy against HAProxy and nginx, each measured by its own processes' CPU
    # time (the client's is the same libcurl loop for all three).
    proxy_targets = []
    proxy_rows = [("easy", "easy-sequential", "us/req", "<"), ("multi", "multi-concurrent", "us/req", "<"),
                  ("bulk", "bulk", "us/MiB", "<"), ("retry-easy", "retry path, easy", "us/success", "<="),
                  ("retry-multi", "retry path, multi", "us/success", "<=")]
    if any(r in data and "proxy" in data[r] for r, _, _, _ in proxy_rows):
        p("%-44s %10s %10s %10s %10s %10s   runs" % ("proxy processes' CPU time (schedstat)", "HAProxy", "nginx",
                                                    "curlretry", "/HAProxy", "/nginx"))
        for row, title, unit, op in proxy_rows:
            if row not in data:
                continue
            a, b, c = (med(row, v, "proxy_us") for v in ("haproxy", "nginx", "proxy"))
            rh, rn = ratio(row, "proxy", "haproxy", "proxy_us"), ratio(row, "proxy", "nginx", "proxy_us")
            p("  %-42s %10s %10s %10s %10s %10s   %4d" % ("%s, %s" % (title, unit), fmt(a, ".1f"), fmt(b, ".1f"),
                                                         fmt(c, ".1f"), fmt(rh, ".3f"), fmt(rn, ".3f"),
                                                         nruns(row, "proxy")))
            if rh is not None:
                proxy_targets.append(("%s: curlretry-proxy's CPU %s HAProxy's (%s, %s%s)" % (
                    title, op, unit, fmt(rh, ".3f"), spread(row, "proxy", "haproxy", "proxy_us")),
                    rh < 1 if op == "<" else rh <= 1))
            if rn is not None and op == "<":
                proxy_targets.append(("%s: curlretry-proxy's CPU %s nginx's (%s, %s%s)" % (
                    title, op, unit, fmt(rn, ".3f"), spread(row, "proxy", "nginx", "proxy_us")), rn < 1))
            if row.startswith("retry-"):
                sp = med(row, "proxy", "success_pct")
                if sp is not None:
                    proxy_targets.append(("%s: curlretry-proxy 100%% success (%s %%)" % (title, fmt(sp, ".2f")),
                                          sp >= 100.0))
        p("")
    if "idle" in data:
        p("%-44s %10s %10s %10s   runs" % ("idle streams through the proxy (RSS growth)", "before KiB", "after KiB",
                                          "KiB/1000"))
        for v in ("haproxy", "nginx", "proxy"):
            if v in data["idle"]:
                p("  %-42s %10s %10s %10s   %4d" % (names[v], fmt(med("idle", v, "rss_before_kib"), ".0f"),
                                                   fmt(med("idle", v, "rss_after_kib"), ".0f"),
                                                   fmt(med("idle", v, "kib_per_1000"), ".0f"), nruns("idle", v)))
        p("")
        for other in ("haproxy", "nginx"):
            c, o = med("idle", "proxy", "kib_per_1000"), med("idle", other, "kib_per_1000")
            if c is not None and o is not None:
                proxy_targets.append(("idle streams: curlretry-proxy %.0f KiB per 1000 <= %s's %.0f (comparison)"
                                      % (c, names[other], o), c <= o))

    start_rows = [("start-true", "/bin/true"), ("start-curl", "curl --version")]
    if any(r in data for r, _ in start_rows):
        p("%-44s %10s %8s %8s %10s %8s %8s %8s   runs" % ("process start (medians)", "wall us", "preload", "+ms",
                                                            "CPU us", "preload", "+ms", "+faults"))
        for row, label in start_rows:
            if row not in data:
                continue
            delta = med(row, "both", "delta_us")
            cdelta = med(row, "both", "delta_cpu_us")
            faults = None
            if med(row, "both", "preload_minflt") is not None:
                faults = med(row, "both", "preload_minflt") - med(row, "both", "base_minflt")
            p("  %-42s %10s %8s %8s %10s %8s %8s %8s   %4d" % (
                label, fmt(med(row, "both", "base_us"), ".0f"), fmt(med(row, "both", "preload_us"), ".0f"),
                fmt(delta / 1000 if delta is not None else None, "+.2f"), fmt(med(row, "both", "base_cpu_us"), ".0f"),
                fmt(med(row, "both", "preload_cpu_us"), ".0f"),
                fmt(cdelta / 1000 if cdelta is not None else None, "+.2f"),
                fmt(faults, "+.0f"), nruns(row, "both")))
            if delta is not None:
                targets.append(("process start, %s: <= +0.5 ms: wall %+.2f ms, CPU %s ms" % (
                    label, delta / 1000, fmt(cdelta / 1000 if cdelta is not None else None, "+.2f")), delta <= 500,
                    cdelta <= 500 if cdelta is not None else None))
        p("")

    if "rss" in data:
        p("%-44s %10s %8s   runs" % ("peak RSS, multi %s GETs, %s at once, fresh handles" % (m.get("n_rss", "?"),
                                                                                      m.get("concurrency", "?")),
                                   "KiB", "+MiB"))
        for v in ("direct", "preload"):
            if v not in data["rss"]:
                continue
            d = diff("rss", v, "direct", "maxrss_kib")
            p("  %-42s %10s %8s   %4d" % (names[v], fmt(med("rss", v, "maxrss_kib"), ".0f"),
                                         fmt(d / 1024 if d is not None else None, "+.2f"), nruns("rss", v)))
        p("")
        d = diff("rss", "preload", "direct", "maxrss_kib")
        if d is not None:
            targets.append(("peak RSS: preload +%.2f MiB <= +2 MiB" % (d / 1024), d <= 2048, None))

    estimates = {}  # row -> (estimated preload/direct throughput, user share of CPU, instruction overhead)
    instr_rows = [("instr-easy", "easy-sequential, per request", 1),
                  ("instr-multi", "multi-concurrent, per request", 1),
                  ("instr-bulk", "bulk, per MiB", 256)]
    if any(r in data for r, _, _ in instr_rows) or "instr-start-true" in data:
        p("%-44s %12s %12s %10s %8s" % ("user-space instructions (callgrind)", "direct", "preload", "+", "+%"))

        def instr_line(label, a, b):
            if a is None or b is None:
                return
            p("  %-42s %12.0f %12.0f %+10.0f %+7.1f%%" % (label, a, b, b - a, 100.0 * (b - a) / a if a else 0))

        for row, label, per in instr_rows:
            if row in data:
                a, b = med(row, "direct", "ir_per_req"), med(row, "preload", "ir_per_req")
                instr_line(label, a / per if a is not None else None, b / per if b is not None else None)
                # What the extra instructions cost in throughput, from numbers that do not move
                # with the machine's load: the instruction overhead, scaled by the share of the
                # client's CPU time spent in user space (the kernel's part, syscalls and TCP,
                # is the same with and without the shim: strace -c). It assumes the shim's
                # instructions run as fast as the rest of user space, which its small, hot code
                # should, and ignores cache effects it may have on libcurl.
                timed = row[len("instr-"):]
                shares = [r["user_s"] / r["cpu_s"] for r in data.get(timed, {}).get("direct", {}).values()
                          if r.get("cpu_s") and "user_s" in r]
                if a and b is not None and shares:
                    share = statistics.median(shares)
                    estimates[timed] = (1.0 / (1.0 + (b - a) / a * share), share, (b - a) / a)
        for row, label in (("instr-start-true", "start of /bin/true"), ("instr-start-curl", "start of curl --version")):
            if row in data:
                instr_line(label, med(row, "direct", "ir"), med(row, "preload", "ir"))
        p("")

    # Failed or short runs would make the figures above meaningless: say so.
    problems = []
    for row, by_variant in data.items():
        for v, by_run in by_variant.items():
            for run, vals in by_run.items():
                if vals.get("timeout", 0) != 0:
                    problems.append("%s/%s run %d timed out" % (row, v, run))
                if row in ("easy", "multi", "bulk", "rss") and vals.get("fail", 0) != 0:
                    problems.append("%s/%s run %d: %d failed requests" % (row, v, run, vals["fail"]))
                want = float(meta.get("n_bulk", 0)) * 256 * 1024 * 1024
                if row == "bulk" and vals.get("bytes") != want:
                    problems.append("%s/%s run %d: %.0f bytes, want %.0f" % (row, v, run, vals.get("bytes", -1), want))

    if targets:
        p("targets (issue 6), judged on wall time; where client CPU time applies, its verdict follows")
    for text, met, cpu_met in targets:
        verdict = "met" if met else "MISSED"
        if cpu_met is not None:
            verdict += "/" + ("met" if cpu_met else "MISSED")
        p("  %-13s %s" % (verdict, text))
    if targets:
        p("  %d of %d met on wall time" % (sum(1 for _, met, _ in targets if met), len(targets)))
    if proxy_targets:
        if targets:
            p("")
        p("targets (issue 15), curlretry-proxy against HAProxy and nginx, on the proxies' own CPU time")
        for text, met in proxy_targets:
            p("  %-13s %s" % ("met" if met else "MISSED", text))
        p("  %d of %d met" % (sum(1 for _, met in proxy_targets if met), len(proxy_targets)))
    if estimates:
        p("")
        p("success path estimated from instruction counts (steady where wall time is not): instruction")
        p("overhead x user-space share of the client's CPU time")
        for row, title, target in (("easy", "easy-sequential", 0.99), ("multi", "multi-concurrent", 0.98),
                                   ("bulk", "bulk", 0.99)):
            if row in estimates:
                est, share, over = estimates[row]
                p("  %-13s %s: preload/direct >= %.2f: estimated %.3f (instructions %+.1f %%, user share %.0f %%)" % (
                    "met" if est >= target else "MISSED", title, target, est, 100 * over, 100 * share))
    if problems:
        p("")
        p("problems")
        for text in problems:
            p("  " + text)
    if "elapsed_s" in meta:
        p("")
        p("elapsed: %s s" % meta["elapsed_s"])
    print("\n".join(out))


if __name__ == "__main__":
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    main(sys.argv[1], sys.argv[2])
