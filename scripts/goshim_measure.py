#!/usr/bin/env python3
"""goshim compare / goshim stress: the measuring half of scripts/goshim.

scripts/goshim (bash) finds the library and the tools, then runs this file
as `goshim_measure.py LIB TOOLS compare|stress ARGS...` (LIB: libgoshim.so;
TOOLS: the directory holding procsample and net_load; arguments, not
environment, so that nothing of ours reaches the measured program). The
numbers come from those two C tools, never from here: procsample samples a whole process tree every
10 ms from /proc and reads wait4's rusage; net_load drives the load from one
epoll thread. This file only runs them, compares, and formats (table, SVG,
JSON), which is why it may be Python: nothing it does is on a measured path.
"""
import argparse
import json
import os
import resource
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request
from xml.sax.saxutils import escape

LIB = TOOLS = ""
MODES = ("native", "goshim")


class Parser(argparse.ArgumentParser):
    """argparse that says what is wrong and exits 2, like the bash half."""

    def error(self, message):
        self.print_usage(sys.stderr)
        print(f"{self.prog}: {message}", file=sys.stderr)
        sys.exit(2)


def positive(s):
    try:
        v = int(s)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {s!r}")
    if v < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1: {s!r}")
    return v


def conns_list(s):
    return [positive(x) for x in s.split(",")]


def read_summary(path):
    out = {}
    with open(path) as f:
        for line in f:
            k, v = line.split()
            out[k] = float(v) if "." in v else int(v)
    return out


def read_series(path):
    pts = []
    with open(path) as f:
        for line in f:
            t, th, rss = line.split()
            pts.append((int(t), int(th), int(rss)))
    return pts


def gomaxprocs(procs):
    """The GOMAXPROCS shown: --procs, the environment's, else the CPUs in
    the affinity mask (the library's default unless a CPU cgroup quota is
    tighter)."""
    if procs:
        return procs
    if os.environ.get("GOMAXPROCS"):
        return int(os.environ["GOMAXPROCS"])
    return len(os.sched_getaffinity(0))


def sampler_cmd(mode, procs, summary, series, cmd):
    argv = [os.path.join(TOOLS, "procsample"), "-o", summary, "-s", series]
    if mode == "goshim":
        pre = LIB + (":" + os.environ["LD_PRELOAD"] if os.environ.get("LD_PRELOAD") else "")
        argv += ["-e", "LD_PRELOAD=" + pre]
        if procs:
            argv += ["-e", f"GOMAXPROCS={procs}"]
    return argv + ["--"] + cmd


def fmt(v):
    if float(v).is_integer():
        return f"{int(v):,}"
    if abs(v) >= 100:
        return f"{v:,.0f}"
    return f"{v:.2f}" if abs(v) >= 1 else f"{v:.3g}"


def ratio(a, b):
    return f"{a / b:.3g}x" if b else "-"


def describe_status(code, sig):
    return f"killed by signal {sig}" if sig else f"exit {code}"


# ---- SVG ---------------------------------------------------------------------

COLOURS = {"native": "#c0392b", "goshim": "#2471a3"}


def svg_chart(title, panels):
    """panels: [(title, unit, {mode: [(ms, value)]})], one below the other."""
    w, ph, ml, mr, mt, gap = 760, 200, 70, 20, 40, 60
    h = mt + len(panels) * (ph + gap)
    out = [
        '<?xml version="1.0" encoding="UTF-8"?>',
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" '
        f'viewBox="0 0 {w} {h}" font-family="sans-serif" font-size="12">',
        f'<title>{escape(title)}</title>',
        f'<text x="{ml}" y="20" font-size="14">{escape(title)}</text>',
    ]
    for i, (ptitle, unit, series) in enumerate(panels):
        top = mt + i * (ph + gap)
        tmax = max([p[0] for s in series.values() for p in s] + [1])
        vmax = max([p[1] for s in series.values() for p in s] + [1])
        pw = w - ml - mr
        out.append(f'<g class="panel" data-title="{escape(ptitle)}">')
        out.append(f'<text x="{ml}" y="{top - 6}">{escape(ptitle)}</text>')
        out.append(f'<rect x="{ml}" y="{top}" width="{pw}" height="{ph}" '
                   'fill="none" stroke="#888"/>')
        out.append(f'<text x="{ml - 6}" y="{top + 10}" text-anchor="end">'
                   f'{escape(fmt(vmax))}</text>')
        out.append(f'<text x="{ml - 6}" y="{top + ph}" text-anchor="end">0</text>')
        out.append(f'<text x="{ml + pw}" y="{top + ph + 16}" text-anchor="end">'
                   f'{tmax / 1000:.2f} s</text>')
        out.append(f'<text x="{ml}" y="{top + ph + 16}">0 s</text>')
        out.append(f'<text x="{ml + pw / 2}" y="{top + ph + 16}" '
                   'text-anchor="middle">time since start</text>')
        for k, (mode, pts) in enumerate(series.items()):
            coords = " ".join(
                f"{ml + pw * t / tmax:.1f},{top + ph - ph * v / vmax:.1f}" for t, v in pts)
            out.append(f'<polyline class="series {mode}" data-mode="{mode}" '
                       f'fill="none" stroke="{COLOURS[mode]}" stroke-width="1.5" '
                       f'points="{coords}"/>')
            peak = max([v for _, v in pts] + [0])
            out.append(f'<text x="{ml + pw - 10}" y="{top + 16 + 14 * k}" '
                       f'text-anchor="end" fill="{COLOURS[mode]}">'
                       f'{mode} (peak {escape(fmt(peak))} {escape(unit)})</text>')
        out.append("</g>")
    out.append("</svg>")
    return "\n".join(out) + "\n"


# ---- compare -----------------------------------------------------------------

COMPARE_ROWS = [
    ("peak threads", "peak_threads", 1),
    ("mean threads", "mean_threads", 1),
    ("peak RSS, MiB", "peak_rss_kib", 1024),
    ("mean RSS, MiB", "mean_rss_kib", 1024),
    ("wall, s", "wall_s", 1),
    ("CPU user+sys, s", "cpu_s", 1),
    ("voluntary ctx switches", "vol_cs", 1),
    ("involuntary ctx switches", "invol_cs", 1),
]


def first_difference(a, b):
    la, lb = a.splitlines(), b.splitlines()
    for i, (x, y) in enumerate(zip(la, lb)):
        if x != y:
            return f"line {i + 1}: native {x[:60]!r}, goshim {y[:60]!r}"
    return f"native has {len(la)} lines, goshim {len(lb)}" if len(la) != len(lb) \
        else "same lines, different bytes (line endings or a missing final newline)"


def cmd_compare(argv):
    p = Parser(prog="goshim compare",
               description="Run PROG natively and under goshim, sample its process tree "
               "every 10 ms (threads, RSS; CPU time and context switches from wait4), "
               "check both exit the same way and print the same stdout, and print a "
               "before/after table. Exit status: 0 same behaviour, 1 they differ, "
               "2 bad usage.",
               usage="goshim compare [--procs N] [--runs K] [--svg FILE] [--json] -- PROG ARGS...")
    p.add_argument("--procs", type=positive, help="GOMAXPROCS for the goshim runs")
    p.add_argument("--runs", type=positive, default=1,
                   help="runs of each, alternating (default 1); the table shows the "
                   "highest peaks and the means of the rest")
    p.add_argument("--svg", metavar="FILE", help="write threads and RSS over time (first runs)")
    p.add_argument("--json", action="store_true", help="print JSON instead of the table")
    p.add_argument("prog", nargs=argparse.REMAINDER, help="the program and its arguments")
    a = p.parse_args(argv)
    cmd = a.prog[1:] if a.prog[:1] == ["--"] else a.prog
    if not cmd:
        p.error("no program given (goshim compare [options] -- PROG ARGS...)")
    if not shutil.which(cmd[0]):
        p.error(f"{cmd[0]}: no such program")

    runs = {m: [] for m in MODES}
    with tempfile.TemporaryDirectory(prefix="goshim-compare.") as tmp:
        for i in range(a.runs):
            for mode in MODES:
                d = os.path.join(tmp, f"{mode}{i}")
                os.mkdir(d)
                with open(os.path.join(d, "stdout"), "wb") as out:
                    subprocess.run(
                        sampler_cmd(mode, a.procs, f"{d}/summary", f"{d}/series", cmd),
                        stdin=subprocess.DEVNULL, stdout=out, check=False)
                s = read_summary(f"{d}/summary")
                s["cpu_s"] = s["user_s"] + s["sys_s"]
                with open(os.path.join(d, "stdout"), "rb") as f:
                    s["stdout"] = f.read().decode("utf-8", "replace")
                s["series"] = read_series(f"{d}/series")
                runs[mode].append(s)

    # Over K runs: the highest peak, the mean of everything else.
    mean = {m: {k: max(r[k] for r in runs[m]) if k.startswith("peak_")
                else sum(r[k] for r in runs[m]) / a.runs for _, k, _ in COMPARE_ROWS}
            for m in MODES}
    exits = {m: [describe_status(r["status"], r["signal"]) for r in runs[m]] for m in MODES}
    same_exit = len(set(exits["native"] + exits["goshim"])) == 1
    diffs = [first_difference(n["stdout"], g["stdout"])
             for n, g in zip(runs["native"], runs["goshim"]) if n["stdout"] != g["stdout"]]
    same_stdout = not diffs
    procs = gomaxprocs(a.procs)

    if a.svg:
        with open(a.svg, "w") as f:
            f.write(svg_chart(
                f"goshim compare: {shlex.join(cmd)} (GOMAXPROCS={procs})",
                [("OS threads", "threads", {m: [(t, th) for t, th, _ in runs[m][0]["series"]]
                                            for m in MODES}),
                 ("RSS, MiB", "MiB", {m: [(t, rss / 1024) for t, _, rss in runs[m][0]["series"]]
                                      for m in MODES})]))

    if a.json:
        doc = {
            "command": cmd, "gomaxprocs": procs, "runs": a.runs,
            "native": mean["native"], "goshim": mean["goshim"],
            "ratio": {k: (mean["goshim"][k] / mean["native"][k] if mean["native"][k] else None)
                      for _, k, _ in COMPARE_ROWS},
            "exit": exits, "same_exit": same_exit,
            "same_stdout": same_stdout, "stdout_differences": diffs,
            "per_run": {m: [{k: v for k, v in r.items() if k not in ("stdout", "series")}
                            for r in runs[m]] for m in MODES},
        }
        json.dump(doc, sys.stdout, indent=1)
        print()
    else:
        print(f"goshim compare: {shlex.join(cmd)}")
        print(f"GOMAXPROCS={procs}, {a.runs} run{'s' if a.runs > 1 else ''} each"
              f"{' (peaks: the highest; the rest: means)' if a.runs > 1 else ''}, "
              "sampled every 10 ms")
        print(f"{'':26} {'native':>12} {'goshim':>12} {'goshim/native':>14}")
        for label, k, scale in COMPARE_ROWS:
            n, g = mean["native"][k] / scale, mean["goshim"][k] / scale
            print(f"{label:26} {fmt(n):>12} {fmt(g):>12} {ratio(g, n):>14}")
        if same_exit:
            print(f"exit: same ({exits['native'][0]})")
        else:
            print(f"exit: DIFFERENT: native {', '.join(exits['native'])}; "
                  f"goshim {', '.join(exits['goshim'])}")
        if same_stdout:
            n = len(runs["native"][0]["stdout"].splitlines())
            print(f"stdout: same ({n} line{'' if n == 1 else 's'})")
        else:
            print(f"stdout: DIFFERENT in {len(diffs)} of {a.runs} run pairs; first: {diffs[0]}")
        if a.svg:
            print(f"chart: {a.svg}")
    return 0 if same_exit and same_stdout else 1


# ---- stress ------------------------------------------------------------------

def listening(port):
    """Is something listening on 127.0.0.1:PORT (or any address)? From
    /proc/net/tcp, so that asking makes no connection."""
    want = f"{port:04X}"
    for name in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            with open(name) as f:
                next(f)
                for line in f:
                    fields = line.split()
                    addr, lport = fields[1].rsplit(":", 1)
                    if lport == want and fields[3] == "0A" and \
                            addr in ("0100007F", "00000000", "0" * 32,
                                     "0000000000000000FFFF00000100007F",
                                     "00000000000000000000000001000000"):
                        return True
        except FileNotFoundError:
            pass
    return False


def stop(proc):
    """SIGTERM to the sampler, which forwards it to the server; SIGKILL to
    the server after 2 s, then to the whole group after 5 s more. The
    sampler outlives the server as long as it can: it writes the summary.
    (Under goshim today, a process-directed SIGTERM stays pending while every
    goroutine is parked, since idle Ms block signals: the SIGKILL is what
    ends an idle server there.)"""
    steps = ((2, lambda: proc.send_signal(signal.SIGTERM)),
             (5, lambda: kill_children(proc.pid)),
             (5, lambda: os.killpg(proc.pid, signal.SIGKILL)))
    for wait, act in steps:
        try:
            act()
        except ProcessLookupError:
            pass
        try:
            proc.wait(wait)
            return
        except subprocess.TimeoutExpired:
            pass


def kill_children(pid):
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as f:
            kids = [int(x) for x in f.read().split()]
    except FileNotFoundError:
        return
    for k in kids:
        os.kill(k, signal.SIGKILL)


def stress_one(a, mode, conns, d):
    if listening(a.port):
        raise RuntimeError(f"something already listens on port {a.port}")
    err = open(f"{d}/server.err", "wb")
    server = subprocess.Popen(
        sampler_cmd(mode, a.procs, f"{d}/summary", f"{d}/series",
                    ["/bin/sh", "-c", "exec " + a.server]),
        stdin=subprocess.DEVNULL, stdout=err, stderr=err, start_new_session=True)
    try:
        deadline = time.monotonic() + 20
        while not listening(a.port):
            if server.poll() is not None or time.monotonic() > deadline:
                with open(f"{d}/server.err", "rb") as f:
                    tail = f.read().decode("utf-8", "replace").strip().splitlines()[-3:]
                raise RuntimeError(
                    f"{mode} server did not listen on 127.0.0.1:{a.port} "
                    f"({'it exited' if server.poll() is not None else 'after 20 s'})"
                    + (f": {' / '.join(tail)}" if tail else ""))
            time.sleep(0.05)
        load = [os.path.join(TOOLS, "net_load"), "-P", a.proto, "-u", a.path, "-T", "10000"]
        if a.requests:
            load += ["-r", str(a.requests)]
        load += [str(a.port), str(conns), "0", str(int(a.duration * 1000))]
        try:
            r = subprocess.run(load, stdin=subprocess.DEVNULL, capture_output=True,
                               env={k: v for k, v in os.environ.items() if k != "LD_PRELOAD"},
                               timeout=a.duration + 60 + conns / 100)
            out, lerr = r.stdout.decode(), r.stderr.decode()
        except subprocess.TimeoutExpired:
            raise RuntimeError(f"{mode}, {conns} connections: the load generator "
                               "did not end in time")
        res = {}
        for line in out.splitlines():
            k, v = line.split()
            res[k] = float(v) if "." in v else int(v)
        if "requests" not in res:
            raise RuntimeError(f"{mode}, {conns} connections: load generator failed: "
                               f"{lerr.strip()}")
        res["load_stderr"] = lerr.strip()
        if a.hits:
            url = f"http://127.0.0.1:{a.port}{a.hits}"
            with urllib.request.urlopen(url, timeout=10) as h:
                res["hits"] = int(h.read().decode().strip())
    finally:
        stop(server)
        err.close()
    s = read_summary(f"{d}/summary")
    res.update({k: s[k] for k in ("peak_threads", "peak_rss_kib", "user_s", "sys_s")})
    res["cpu_s"] = s["user_s"] + s["sys_s"]
    res["series"] = read_series(f"{d}/series")
    return res


STRESS_ROWS = [
    ("requests/s", "reqs_per_s", 1),
    ("p50 latency, ms", "p50_us", 1000),
    ("p90 latency, ms", "p90_us", 1000),
    ("p99 latency, ms", "p99_us", 1000),
    ("max latency, ms", "max_us", 1000),
    ("errors", "errors", 1),
    ("server peak OS threads", "peak_threads", 1),
    ("server peak RSS, MiB", "peak_rss_kib", 1024),
    ("server CPU user+sys, s", "cpu_s", 1),
]


def cmd_stress(argv):
    p = Parser(prog="goshim stress",
               description="Start SERVER natively, wait until it listens on 127.0.0.1:PORT, "
               "drive a closed-loop keep-alive load from the built-in load generator "
               "(one epoll thread, CONNS connections, one request in flight each), "
               "record the server's peak threads and RSS, stop it; repeat under goshim; "
               "print the comparison. Each connection count gets a fresh server. "
               "Loads 127.0.0.1 only; every step has a timeout and the server is "
               "always killed at the end. Raises the soft RLIMIT_NOFILE to the hard "
               "limit for the server and the generator. Exit status: 0 no errors, "
               "1 errors or a failed run, 2 bad usage.",
               usage="goshim stress --server 'CMD' --port P [--proto echo|http] "
               "[--conns N[,N...]] [--requests R] [--duration S] [--path PATH] "
               "[--hits PATH] [--procs N] [--svg FILE] [--json] [--json-file FILE]")
    p.add_argument("--server", required=True, metavar="CMD",
                   help="the server's command line (run by /bin/sh)")
    p.add_argument("--port", required=True, type=positive, help="the port it listens on")
    p.add_argument("--proto", choices=("echo", "http"), default="http",
                   help="64-byte echo, or HTTP/1.1 GET (default http)")
    p.add_argument("--conns", type=conns_list, default=[100],
                   help="connection counts, comma-separated (default 100)")
    p.add_argument("--requests", type=positive,
                   help="requests per connection count, in all (default: no bound)")
    p.add_argument("--duration", type=float, default=5.0,
                   help="seconds of load per connection count (default 5)")
    p.add_argument("--path", default="/", help="HTTP path to GET (default /)")
    p.add_argument("--hits", metavar="PATH",
                   help="after the load, GET PATH and report its number as the "
                   "server's count (the bundled server's /hits)")
    p.add_argument("--procs", type=positive, help="GOMAXPROCS for the goshim runs")
    p.add_argument("--svg", metavar="FILE", help="write the server's threads and RSS over time")
    p.add_argument("--json", action="store_true", help="print JSON instead of the table")
    p.add_argument("--json-file", metavar="FILE", help="also write the JSON to FILE")
    a = p.parse_args(argv)
    if a.port > 65535:
        p.error(f"bad port {a.port}")
    if not 0 < a.duration <= 600:
        p.error("--duration must be in (0, 600] seconds")
    if not a.path.startswith("/"):
        p.error("--path must start with /")

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    need = max(a.conns) + 64
    if hard < need:
        print(f"goshim stress: warning: RLIMIT_NOFILE hard limit {hard} is below "
              f"{need}: connections will fail", file=sys.stderr)

    res = {}
    failures = []
    with tempfile.TemporaryDirectory(prefix="goshim-stress.") as tmp:
        for n in a.conns:
            for mode in MODES:
                d = os.path.join(tmp, f"{mode}{n}")
                os.mkdir(d)
                try:
                    res[mode, n] = stress_one(a, mode, n, d)
                except RuntimeError as e:
                    failures.append(str(e))
                    print(f"goshim stress: {e}", file=sys.stderr)
                if not a.json:
                    print(f"  {mode:6} {n:>6} connections: "
                          + (f"{res[mode, n]['reqs_per_s']:,.0f} req/s, "
                             f"{res[mode, n]['peak_threads']} threads"
                             if (mode, n) in res else "failed"),
                          file=sys.stderr, flush=True)
    procs = gomaxprocs(a.procs)
    what = f"{a.proto}" + (f" GET {a.path}" if a.proto == "http" else " 64 B")
    if a.svg:
        panels = []
        for n in a.conns:
            for label, unit, idx, scale in (("OS threads", "threads", 1, 1),
                                            ("RSS, MiB", "MiB", 2, 1024)):
                panels.append((f"{n} connections: server {label}", unit,
                               {m: [(p_[0], p_[idx] / scale) for p_ in res[m, n]["series"]]
                                for m in MODES if (m, n) in res}))
        with open(a.svg, "w") as f:
            f.write(svg_chart(f"goshim stress: {a.server} ({what}, GOMAXPROCS={procs})", panels))

    doc = {"server": a.server, "port": a.port, "proto": a.proto, "path": a.path,
           "gomaxprocs": procs, "duration_s": a.duration, "requests": a.requests,
           "failures": failures,
           "levels": [{"conns": n, **{m: {k: v for k, v in res[m, n].items()
                                            if k != "series"}
                                         for m in MODES if (m, n) in res}}
                      for n in a.conns]}
    if a.json_file:
        with open(a.json_file, "w") as f:
            json.dump(doc, f, indent=1)
    if a.json:
        json.dump(doc, sys.stdout, indent=1)
        print()
    else:
        bound = f"{a.duration:g} s" + (f" or {a.requests:,} requests" if a.requests else "")
        print(f"goshim stress: {a.server}")
        print(f"{what}, persistent connections, one request in flight each, {bound} per level;")
        print(f"GOMAXPROCS={procs} ({len(os.sched_getaffinity(0))} CPUs shared with "
              "the load generator)")
        print(f"{'conns':>6}  {'':24} {'native':>12} {'goshim':>12} {'goshim/native':>14}")
        for n in a.conns:
            rows = STRESS_ROWS + ([("hits counted by server", "hits", 1),
                                   ("requests sent", "sent", 1),
                                   ("requests answered", "total", 1)] if a.hits else [])
            for i, (label, k, scale) in enumerate(rows):
                vals = [res[m, n][k] / scale if (m, n) in res else None for m in MODES]
                cells = [fmt(v) if v is not None else "-" for v in vals]
                r = ratio(vals[1], vals[0]) if None not in vals and k not in ("errors", "hits", "sent", "total") else ""
                print(f"{n if i == 0 else '':>6}  {label:24} {cells[0]:>12} {cells[1]:>12} {r:>14}".rstrip())
        if a.hits and not a.requests:
            print("(sent - answered: requests in flight when the time ran out; "
                  "the server counted those it had served)")
        if a.svg:
            print(f"chart: {a.svg}")
    # The count must match only when every request sent was answered: one
    # abandoned at the end of the time may or may not have been counted.
    bad = failures or any(r["errors"] for r in res.values()) or \
        (a.hits and any(r["hits"] != r["total"] for r in res.values()
                        if r["sent"] == r["total"]))
    return 1 if bad else 0


def main():
    global LIB, TOOLS
    if len(sys.argv) < 4 or sys.argv[3] not in ("compare", "stress"):
        print("usage: goshim_measure.py LIB TOOLS compare|stress ARGS... "
              "(run through scripts/goshim)", file=sys.stderr)
        return 2
    LIB, TOOLS, sub, argv = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
    return {"compare": cmd_compare, "stress": cmd_stress}[sub](argv)


if __name__ == "__main__":
    sys.exit(main())
