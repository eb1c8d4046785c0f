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
It also makes the memory cgroup each measured run goes into (procsample -c
reads it) and removes it afterwards.
"""
import argparse
import bisect
import errno
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
    """[(ms, threads, rss_kib)], or with a memory cgroup [(ms, threads,
    rss_kib, total_kib, kernel_kib, sock_kib, pagetables_kib)]; ms (a
    float) is when the sample's reading began."""
    with open(path) as f:
        return [(float(ms),) + tuple(int(x) for x in rest)
                for ms, *rest in (line.split() for line in f)]


def gomaxprocs(procs):
    """The GOMAXPROCS shown: --procs, the environment's, else the CPUs in
    the affinity mask (the library's default unless a CPU cgroup quota is
    tighter)."""
    if procs:
        return procs
    if os.environ.get("GOMAXPROCS"):
        return int(os.environ["GOMAXPROCS"])
    return len(os.sched_getaffinity(0))


def sampler_cmd(mode, procs, summary, series, cmd, cgroup=None):
    argv = [os.path.join(TOOLS, "procsample"), "-o", summary, "-s", series]
    if cgroup:
        argv += ["-c", cgroup.dir]
    if mode == "goshim":
        pre = LIB + (":" + os.environ["LD_PRELOAD"] if os.environ.get("LD_PRELOAD") else "")
        argv += ["-e", "LD_PRELOAD=" + pre]
        if procs:
            argv += ["-e", f"GOMAXPROCS={procs}"]
    return argv + ["--"] + cmd


def fmt(v):
    if v is None:
        return "-"
    if float(v).is_integer():
        return f"{int(v):,}"
    if abs(v) >= 100:
        return f"{v:,.0f}"
    return f"{v:.2f}" if abs(v) >= 1 else f"{v:.3g}"


def ratio(a, b):
    return f"{a / b:.3g}x" if a is not None and b else "-"


def describe_status(code, sig):
    return f"killed by signal {sig}" if sig else f"exit {code}"


# ---- memory cgroups -----------------------------------------------------------
#
# RSS counts the pages a process maps, not what the kernel spends for it: a
# thread's kernel stack, task structs and page tables, socket structs and
# buffers. A memory cgroup counts both: each measured run goes into a fresh
# one, made under the caller's own cgroup (v2 where it can have the memory
# controller, else v1's memory hierarchy), and removed afterwards.

MEM_FIELDS = ("mem_total_peak_kib", "mem_kernel_peak_kib", "mem_sock_peak_kib",
              "mem_pagetables_peak_kib")


class NoMemCgroup(Exception):
    """No memory cgroup can be made: the reasons, one per place tried."""


def unescape_mount(s):
    """mountinfo writes space, tab, newline and backslash as octal."""
    for code, ch in (("\\040", " "), ("\\011", "\t"), ("\\012", "\n"), ("\\134", "\\")):
        s = s.replace(code, ch)
    return s


def memcg_candidates(proc="/proc/self", prefix=""):
    """Where a memory cgroup could be made under the caller's own, best
    first: [(version, directory)], and why the other places cannot be.
    PREFIX is put before every mount point (a fake root, for tests)."""
    mounts = []
    with open(os.path.join(proc, "mountinfo")) as f:
        for line in f:
            fields = line.split()
            sep = fields.index("-")
            mounts.append((unescape_mount(fields[3]), unescape_mount(fields[4]),
                           fields[sep + 1], fields[sep + 3].split(",")))
    own = {}
    with open(os.path.join(proc, "cgroup")) as f:
        for line in f:
            _, controllers, path = line.rstrip("\n").split(":", 2)
            for c in controllers.split(",") if controllers else [""]:
                own[c] = path

    def directory(root, mnt, path):
        # a mount may show a subtree of the hierarchy (containers)
        rel = os.path.relpath(path, root)
        if rel == ".." or rel.startswith("../"):
            return None
        return os.path.normpath(prefix + os.path.join(mnt, rel))

    found, why = [], []
    for root, mnt, fstype, _ in mounts:
        if fstype != "cgroup2" or "" not in own:
            continue
        d = directory(root, mnt, own[""])
        if d is None or not os.path.isdir(d):
            why.append(f"cgroup v2 at {mnt}: this process's cgroup {own['']} is not under it")
            continue
        try:
            with open(os.path.join(d, "cgroup.controllers")) as f:
                available = f.read().split()
            with open(os.path.join(d, "cgroup.subtree_control")) as f:
                enabled = f.read().split()
        except OSError as e:
            why.append(f"cgroup v2 at {mnt}: {d}: {e.strerror}")
            continue
        if "memory" not in available:
            why.append(f"cgroup v2 at {mnt}: no memory controller in {d} "
                       "(cgroup.controllers; it may be bound to v1)")
            continue
        if "memory" not in enabled:
            # v2 gives a controller to children only of a cgroup without
            # processes of its own (but the root): the caller's has one.
            try:
                with open(os.path.join(d, "cgroup.subtree_control"), "w") as f:
                    f.write("+memory")
            except OSError as e:
                why.append(f"cgroup v2 at {mnt}: {d} does not give the memory controller "
                           f"to its children (cgroup.subtree_control) and cannot be made to: "
                           f"{e.strerror}"
                           + (" (it has processes; run goshim in a delegated cgroup, e.g. "
                              "systemd-run --user --scope -p Delegate=yes)"
                              if e.errno == errno.EBUSY else ""))
                continue
        found.append((2, d))
        break
    for root, mnt, fstype, opts in mounts:
        if fstype != "cgroup" or "memory" not in opts:
            continue
        if "memory" not in own:
            why.append(f"cgroup v1 memory at {mnt}: this process is in none of its cgroups")
            continue
        d = directory(root, mnt, own["memory"])
        if d is None or not os.path.isdir(d):
            why.append(f"cgroup v1 memory at {mnt}: this process's cgroup "
                       f"{own['memory']} is not under it")
            continue
        found.append((1, d))
        break
    if not found and not why:
        why.append("no cgroup v2 and no v1 memory controller mounted")
    return found, why


class MemCgroup:
    """A fresh memory cgroup under the caller's own; remove() takes it away."""
    made = []  # not yet removed: main() removes them on the way out

    def __init__(self, version, parent, name):
        self.version, self.dir = version, os.path.join(parent, name)
        os.mkdir(self.dir)
        MemCgroup.made.append(self)
        if version == 1:
            # v1 counts socket buffers only once something sets their
            # limit (memory.kmem.tcp): unlimited, to count them.
            try:
                self.write("memory.kmem.tcp.limit_in_bytes", "-1")
            except OSError:
                pass

    def write(self, name, value):
        with open(os.path.join(self.dir, name), "w") as f:
            f.write(value)

    def limit(self, nbytes):
        """At most NBYTES of user and kernel memory; no swap to spill into.
        v1 counts socket buffers apart, outside the limit."""
        if self.version == 2:
            self.write("memory.max", str(nbytes))
            if os.path.exists(os.path.join(self.dir, "memory.swap.max")):
                self.write("memory.swap.max", "0")
        else:
            self.write("memory.limit_in_bytes", str(nbytes))
            if os.path.exists(os.path.join(self.dir, "memory.memsw.limit_in_bytes")):
                self.write("memory.memsw.limit_in_bytes", str(nbytes))

    def remove(self):
        """Kills what is left in it (a process that outlived the run), then
        removes it; a warning if it cannot be."""
        deadline = time.monotonic() + 5
        while True:
            try:
                os.rmdir(self.dir)
                break
            except FileNotFoundError:
                break
            except OSError as e:
                if e.errno != errno.EBUSY or time.monotonic() > deadline:
                    print(f"goshim: cannot remove the cgroup {self.dir}: {e.strerror}",
                          file=sys.stderr)
                    break
            try:
                with open(os.path.join(self.dir, "cgroup.procs")) as f:
                    for pid in f.read().split():
                        os.kill(int(pid), signal.SIGKILL)
            except (OSError, ValueError):
                pass
            time.sleep(0.05)
        if self in MemCgroup.made:
            MemCgroup.made.remove(self)


class MemCgroups:
    """Makes the runs' cgroups in the first place that takes one; says once
    why none can be made, and then the runs measure RSS only."""

    def __init__(self, what, required=False, proc="/proc/self", prefix=""):
        self.what, self.required, self.version, self.why = what, required, None, None
        try:
            self.places, why = memcg_candidates(proc, prefix)
        except OSError as e:
            self.places, why = [], [f"/proc/self: {e.strerror}"]
        self.reasons = why
        self.seq = 0

    def make(self, label):
        """A new MemCgroup, or None (after saying why, once)."""
        self.seq += 1
        name = f"goshim-{os.getpid()}-{label}-{self.seq}"
        while self.places:
            version, parent = self.places[0]
            try:
                cg = MemCgroup(version, parent, name)
                self.version = version
                return cg
            except OSError as e:
                self.reasons.append(f"cgroup v{version}: cannot make a cgroup in {parent}: "
                                    f"{e.strerror}")
                self.places.pop(0)
        if self.why is None:
            self.why = "; ".join(self.reasons)
            if self.required:
                raise NoMemCgroup(self.why)
            print(f"goshim {self.what}: total memory not measured, RSS only: no memory "
                  f"cgroup to run in ({self.why})", file=sys.stderr)
        return None

    def label(self):
        return f"v{self.version}" if self.version else None


def terminate(sig, frame):
    """SIGTERM and SIGHUP end this like ^C: through the finally clauses, so
    the servers are stopped and the cgroups removed."""
    raise KeyboardInterrupt


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


def series_panels(prefix, series):
    """The chart's panels for {mode: read_series(...)}: OS threads, RSS, and
    total memory where a cgroup measured it."""
    panels = [(f"{prefix}OS threads", "threads",
               {m: [(p[0], p[1]) for p in pts] for m, pts in series.items()}),
              (f"{prefix}RSS, MiB", "MiB",
               {m: [(p[0], p[2] / 1024) for p in pts] for m, pts in series.items()})]
    if any(len(p) > 3 for pts in series.values() for p in pts[:1]):
        panels.append((f"{prefix}total memory (cgroup: user + kernel), MiB", "MiB",
                       {m: [(p[0], p[3] / 1024) for p in pts]
                        for m, pts in series.items() if pts and len(pts[0]) > 3}))
    return panels


def total_memory_note(cgs):
    if not cgs.version:
        return "total memory: not measured (no memory cgroup; see the message above)"
    return (f"total memory: peak, user + kernel (kernel stacks, page tables, socket and "
            f"other kernel structs), from each run's own memory cgroup ({cgs.label()})")


# ---- compare -----------------------------------------------------------------

COMPARE_ROWS = [
    ("peak threads", "peak_threads", 1),
    ("mean threads", "mean_threads", 1),
    ("peak RSS, MiB", "peak_rss_kib", 1024),
    ("mean RSS, MiB", "mean_rss_kib", 1024),
    ("peak total memory, MiB", "mem_total_peak_kib", 1024),
    ("  of it kernel, MiB", "mem_kernel_peak_kib", 1024),
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
    cgs = MemCgroups("compare")
    with tempfile.TemporaryDirectory(prefix="goshim-compare.") as tmp:
        for i in range(a.runs):
            for mode in MODES:
                d = os.path.join(tmp, f"{mode}{i}")
                os.mkdir(d)
                cg = cgs.make(mode)
                try:
                    with open(os.path.join(d, "stdout"), "wb") as out:
                        subprocess.run(
                            sampler_cmd(mode, a.procs, f"{d}/summary", f"{d}/series", cmd, cg),
                            stdin=subprocess.DEVNULL, stdout=out, check=False)
                finally:
                    if cg:
                        cg.remove()
                s = {k: None for k in MEM_FIELDS}
                s.update(read_summary(f"{d}/summary"))
                s["cpu_s"] = s["user_s"] + s["sys_s"]
                with open(os.path.join(d, "stdout"), "rb") as f:
                    s["stdout"] = f.read().decode("utf-8", "replace")
                s["series"] = read_series(f"{d}/series")
                runs[mode].append(s)

    # Over K runs: the highest peak, the mean of everything else.
    def over_runs(m, k):
        vals = [r[k] for r in runs[m]]
        if None in vals:
            return None
        return max(vals) if "peak_" in k else sum(vals) / a.runs
    mean = {m: {k: over_runs(m, k) for k in [k for _, k, _ in COMPARE_ROWS] + list(MEM_FIELDS)}
            for m in MODES}
    exits = {m: [describe_status(r["status"], r["signal"]) for r in runs[m]] for m in MODES}
    same_exit = len(set(exits["native"] + exits["goshim"])) == 1
    diffs = [first_difference(n["stdout"], g["stdout"])
             for n, g in zip(runs["native"], runs["goshim"]) if n["stdout"] != g["stdout"]]
    same_stdout = not diffs
    procs = gomaxprocs(a.procs)

    if a.svg:
        with open(a.svg, "w") as f:
            f.write(svg_chart(f"goshim compare: {shlex.join(cmd)} (GOMAXPROCS={procs})",
                              series_panels("", {m: runs[m][0]["series"] for m in MODES})))

    if a.json:
        doc = {
            "command": cmd, "gomaxprocs": procs, "runs": a.runs,
            "mem_cgroup": cgs.label(), "mem_cgroup_unavailable": cgs.why,
            "native": mean["native"], "goshim": mean["goshim"],
            "ratio": {k: (mean["goshim"][k] / mean["native"][k]
                          if mean["native"][k] and mean["goshim"][k] is not None else None)
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
            n, g = (None if mean[m][k] is None else mean[m][k] / scale for m in MODES)
            print(f"{label:26} {fmt(n):>12} {fmt(g):>12} {ratio(g, n):>14}")
        print(total_memory_note(cgs))
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


def start_server(a, mode, d, cg):
    """The server under procsample (in CG where there is one), once it
    listens on the port: (Popen, its stderr file, time.monotonic() at the
    start). Stopped and raises RuntimeError if it does not listen."""
    if listening(a.port):
        raise RuntimeError(f"something already listens on port {a.port}")
    err = open(f"{d}/server.err", "wb")
    t0 = time.monotonic()
    server = subprocess.Popen(
        sampler_cmd(mode, a.procs, f"{d}/summary", f"{d}/series",
                    ["/bin/sh", "-c", "exec " + a.server], cg),
        stdin=subprocess.DEVNULL, stdout=err, stderr=err, start_new_session=True)
    try:
        deadline = time.monotonic() + 20
        while not listening(a.port):
            if server.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(
                    f"{mode} server did not listen on 127.0.0.1:{a.port} "
                    f"({'it exited' if server.poll() is not None else 'after 20 s'})"
                    + (f": {' / '.join(server_err(d, 3))}" if server_err(d, 3) else ""))
            time.sleep(0.05)
    except BaseException:
        stop(server)
        err.close()
        raise
    return server, err, t0


def server_err(d, n):
    with open(f"{d}/server.err", "rb") as f:
        return f.read().decode("utf-8", "replace").strip().splitlines()[-n:]


def run_load(argv, timeout, what):
    """net_load's "name value" lines as a dict, and its stderr."""
    try:
        r = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True,
                           env={k: v for k, v in os.environ.items() if k != "LD_PRELOAD"},
                           timeout=timeout)
    except subprocess.TimeoutExpired:
        raise RuntimeError(f"{what}: the load generator did not end in time")
    res = {}
    for line in r.stdout.decode().splitlines():
        k, v = line.split()
        res[k] = v if k == "ended" else float(v) if "." in v else int(v)
    return res, r.stderr.decode().strip()


def server_summary(d, res):
    """RES with the server's figures from procsample; returns the summary."""
    s = {k: None for k in MEM_FIELDS}
    s.update(read_summary(f"{d}/summary"))
    res.update({k: s[k] for k in ("peak_threads", "peak_rss_kib", "user_s", "sys_s",
                                  "status", "signal") + MEM_FIELDS})
    res["cpu_s"] = s["user_s"] + s["sys_s"]
    res["oom_kills"] = s.get("mem_oom_kills")
    res["series"] = read_series(f"{d}/series")
    return s


def stress_one(a, mode, conns, d, cg):
    server, err, _ = start_server(a, mode, d, cg)
    try:
        load = [os.path.join(TOOLS, "net_load"), "-P", a.proto, "-u", a.path, "-T", "10000"]
        if a.requests:
            load += ["-r", str(a.requests)]
        load += [str(a.port), str(conns), "0", str(int(a.duration * 1000))]
        res, lerr = run_load(load, a.duration + 60 + conns / 100, f"{mode}, {conns} connections")
        if "requests" not in res:
            raise RuntimeError(f"{mode}, {conns} connections: load generator failed: {lerr}")
        res["load_stderr"] = lerr
        if a.hits:
            url = f"http://127.0.0.1:{a.port}{a.hits}"
            with urllib.request.urlopen(url, timeout=10) as h:
                res["hits"] = int(h.read().decode().strip())
    finally:
        stop(server)
        err.close()
    server_summary(d, res)
    return res


# How a fill ended, from net_load's "ended" and the server's fate.
ENDINGS = {
    "oom": "the kernel killed it at the limit (out of memory)",
    "died": "it died",
    "refused": "it refused connection {next:,} (closed it)",
    "unanswered": "it did not answer connection {next:,} in 5 s",
    "max": "it held --max-conns ({held:,}) connections: the limit was not reached",
    "generator": "the load generator ran out of fds or local ports at connection {next:,}",
}


def fill_one(a, mode, d, cg):
    """The server in CG, limited to a.mem_limit: connections opened one at a
    time until it fails; how many it held and how it ended."""
    cg.limit(a.mem_limit)
    server, err, t0 = start_server(a, mode, d, cg)
    try:
        t_load = (time.monotonic() - t0) * 1000
        load = [os.path.join(TOOLS, "net_load"), "-P", a.proto, "-u", a.path, "-T", "5000",
                "-L", f"{d}/held_at", "-F", str(a.max_conns), str(a.port)]
        res, lerr = run_load(load, 120 + a.max_conns / 50, f"{mode}, --mem-limit")
        # it holds them all 500 ms after the last one, then exits
        t_held = (time.monotonic() - t0) * 1000 - 100
        if "held" not in res:
            raise RuntimeError(f"{mode}, --mem-limit: load generator failed: {lerr}")
        res["load_stderr"] = lerr
        # a server the kernel killed takes a moment to be reaped
        if res["ended"] != "max":
            try:
                server.wait(2)
            except subprocess.TimeoutExpired:
                pass
        alive = server.poll() is None
    finally:
        stop(server)
        err.close()
    start_ns = server_summary(d, res)["start_ns"]
    with open(f"{d}/held_at") as f:
        held_at = [(int(x) - start_ns) / 1e6 for x in f]
    res["server_stderr"] = server_err(d, 1)
    killed = not alive and res["signal"] == signal.SIGKILL and res["oom_kills"]
    why = res["ended"]
    res["ending"] = ("oom" if killed else "died" if not alive and why != "max"
                     else "refused" if why in ("closed", "refused")
                     else "unanswered" if why == "timeout" else why)
    res["how"] = ENDINGS[res["ending"]].format(held=res["held"], next=res["held"] + 1)
    if res["ending"] == "died":
        res["how"] += f" ({describe_status(res['status'], res['signal'])})"
    if res["ending"] == "refused" and res["server_stderr"]:
        res["how"] += f": {res['server_stderr'][0]}"
    res["per_conn"] = per_connection(res, t_load, t_held, held_at)
    return res


def per_connection(res, t_load, t_held, held_at):
    """What each held connection cost: the growth from the idle server (the
    last sample before the load) to the fullest sample, the last one before
    the generator closed them or the server's teardown began, over the
    connections held at that sample (HELD_AT: when each was answered, ms on
    the series' clock), in KiB; None without such samples. While connections
    are only added, RSS and page tables only grow: a drop is the teardown (a
    killed process's memory is reaped first, its page tables freed while its
    threads still exit)."""
    pts = [p for p in res["series"] if len(p) > 3]
    idle = [p for p in pts if p[0] <= t_load]
    if not idle or not res["held"]:
        return None
    base = top = idle[-1]
    for p in pts:
        if t_load < p[0] <= t_held:
            if p[6] < top[6] or p[2] < 0.75 * top[2] or p[1] < 0.9 * top[1]:
                break
            top = p
    # a sample's time is when its reading began: what was answered before
    # it is in the reading (one answered during it may be too: a slight
    # excess, where counting up to the reading's end was a larger deficit)
    n = bisect.bisect_right(held_at, top[0])
    if top is base or n == 0:
        return None
    total, kernel, sock, pt = ((top[i] - base[i]) / n for i in (3, 4, 5, 6))
    return {"threads": (top[1] - base[1]) / n, "user_kib": total - kernel,
            "kernel_kib": kernel, "pagetables_kib": pt, "sock_kib": sock,
            "other_kernel_kib": kernel - pt - sock, "total_kib": total,
            "idle_server_kib": base[3], "conns_at_sample": n}


STRESS_ROWS = [
    ("requests/s", "reqs_per_s", 1),
    ("p50 latency, ms", "p50_us", 1000),
    ("p90 latency, ms", "p90_us", 1000),
    ("p99 latency, ms", "p99_us", 1000),
    ("max latency, ms", "max_us", 1000),
    ("errors", "errors", 1),
    ("server peak OS threads", "peak_threads", 1),
    ("server peak RSS, MiB", "peak_rss_kib", 1024),
    ("server peak total mem, MiB", "mem_total_peak_kib", 1024),
    ("  of it kernel, MiB", "mem_kernel_peak_kib", 1024),
    ("server CPU user+sys, s", "cpu_s", 1),
]


def size(s):
    """256M, 1G, 65536K or plain bytes (binary units) -> bytes."""
    units = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}
    t = s.strip().upper().removesuffix("B").removesuffix("I")
    num, unit = (t[:-1], t[-1]) if t and t[-1] in units else (t, "")
    try:
        v = float(num) * units[unit]
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a size: {s!r} (e.g. 256M, 1G)")
    if v < 1 << 20:
        raise argparse.ArgumentTypeError(f"{s!r}: a memory limit is at least 1M")
    return int(v) // 4096 * 4096


def mib(kib):
    return None if kib is None else kib / 1024



def emit_json(a, doc):
    """--json-file writes doc there; --json prints it instead of the table
    (True: the caller prints nothing else)."""
    if a.json_file:
        with open(a.json_file, "w") as f:
            json.dump(doc, f, indent=1)
    if a.json:
        json.dump(doc, sys.stdout, indent=1)
        print()
    return bool(a.json)

def cmd_stress(argv):
    p = Parser(prog="goshim stress",
               description="Start SERVER natively, wait until it listens on 127.0.0.1:PORT, "
               "drive a closed-loop keep-alive load from the built-in load generator "
               "(one epoll thread, CONNS connections, one request in flight each), "
               "record the server's peak threads, RSS and total memory (user + kernel, "
               "from a memory cgroup of its own), stop it; repeat under goshim; "
               "print the comparison. Each connection count gets a fresh server. "
               "With --mem-limit SIZE instead: the server runs in a memory cgroup "
               "limited to SIZE, connections are opened one at a time (each answered "
               "once, then held idle) until the server refuses one, fails or is killed, "
               "and what each connection cost is broken down. "
               "Loads 127.0.0.1 only; every step has a timeout and the server is "
               "always killed at the end. Raises the soft RLIMIT_NOFILE to the hard "
               "limit for the server and the generator. Exit status: 0 no errors, "
               "1 errors or a failed run, 2 bad usage.",
               usage="goshim stress --server 'CMD' --port P [--proto echo|http] "
               "[--conns N[,N...]] [--requests R] [--duration S] [--path PATH] "
               "[--hits PATH] [--procs N] [--svg FILE] [--json] [--json-file FILE]\n"
               "       goshim stress --server 'CMD' --port P --mem-limit SIZE "
               "[--max-conns N] [--proto echo|http] [--path PATH] [--procs N] "
               "[--svg FILE] [--json] [--json-file FILE]")
    p.add_argument("--server", required=True, metavar="CMD",
                   help="the server's command line (run by /bin/sh)")
    p.add_argument("--port", required=True, type=positive, help="the port it listens on")
    p.add_argument("--proto", choices=("echo", "http"), default="http",
                   help="64-byte echo, or HTTP/1.1 GET (default http)")
    p.add_argument("--conns", type=conns_list,
                   help="connection counts, comma-separated (default 100)")
    p.add_argument("--requests", type=positive,
                   help="requests per connection count, in all (default: no bound)")
    p.add_argument("--duration", type=float,
                   help="seconds of load per connection count (default 5)")
    p.add_argument("--path", default="/", help="HTTP path to GET (default /)")
    p.add_argument("--hits", metavar="PATH",
                   help="after the load, GET PATH and report its number as the "
                   "server's count (the bundled server's /hits)")
    p.add_argument("--mem-limit", type=size, metavar="SIZE",
                   help="run the server in a memory cgroup limited to SIZE (user + "
                   "kernel: 256M, 1G) and open connections until it fails")
    p.add_argument("--max-conns", type=positive, metavar="N",
                   help="with --mem-limit: stop at N connections (default: the hard "
                   "RLIMIT_NOFILE less 64)")
    p.add_argument("--procs", type=positive, help="GOMAXPROCS for the goshim runs")
    p.add_argument("--svg", metavar="FILE",
                   help="write the server's threads, RSS and total memory over time")
    p.add_argument("--json", action="store_true", help="print JSON instead of the table")
    p.add_argument("--json-file", metavar="FILE", help="also write the JSON to FILE")
    a = p.parse_args(argv)
    if a.port > 65535:
        p.error(f"bad port {a.port}")
    if not a.path.startswith("/"):
        p.error("--path must start with /")
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    if a.mem_limit:
        given = [o for o, v in (("--conns", a.conns), ("--requests", a.requests),
                                ("--duration", a.duration), ("--hits", a.hits)) if v]
        if given:
            p.error(f"--mem-limit opens connections until the server fails: "
                    f"{', '.join(given)} do not apply")
        if a.max_conns is None:
            a.max_conns = max(1, min(hard, 1 << 20) - 64)
        return stress_mem_limit(a)
    if a.max_conns:
        p.error("--max-conns goes with --mem-limit")
    a.conns = a.conns or [100]
    a.duration = 5.0 if a.duration is None else a.duration
    if not 0 < a.duration <= 600:
        p.error("--duration must be in (0, 600] seconds")

    need = max(a.conns) + 64
    if hard < need:
        print(f"goshim stress: warning: RLIMIT_NOFILE hard limit {hard} is below "
              f"{need}: connections will fail", file=sys.stderr)

    res = {}
    failures = []
    cgs = MemCgroups("stress")
    with tempfile.TemporaryDirectory(prefix="goshim-stress.") as tmp:
        for n in a.conns:
            for mode in MODES:
                d = os.path.join(tmp, f"{mode}{n}")
                os.mkdir(d)
                cg = cgs.make(mode)
                try:
                    res[mode, n] = stress_one(a, mode, n, d, cg)
                except RuntimeError as e:
                    failures.append(str(e))
                    print(f"goshim stress: {e}", file=sys.stderr)
                finally:
                    if cg:
                        cg.remove()
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
            panels += series_panels(f"{n} connections: server ",
                                    {m: res[m, n]["series"] for m in MODES if (m, n) in res})
        with open(a.svg, "w") as f:
            f.write(svg_chart(f"goshim stress: {a.server} ({what}, GOMAXPROCS={procs})", panels))

    doc = {"server": a.server, "port": a.port, "proto": a.proto, "path": a.path,
           "gomaxprocs": procs, "duration_s": a.duration, "requests": a.requests,
           "mem_cgroup": cgs.label(), "mem_cgroup_unavailable": cgs.why,
           "failures": failures,
           "levels": [{"conns": n, **{m: {k: v for k, v in res[m, n].items()
                                            if k != "series"}
                                         for m in MODES if (m, n) in res}}
                      for n in a.conns]}
    if not emit_json(a, doc):
        bound = f"{a.duration:g} s" + (f" or {a.requests:,} requests" if a.requests else "")
        print(f"goshim stress: {a.server}")
        print(f"{what}, persistent connections, one request in flight each, {bound} per level;")
        print(f"GOMAXPROCS={procs} ({len(os.sched_getaffinity(0))} CPUs shared with "
              "the load generator)")
        print(f"{'conns':>6}  {'':26} {'native':>12} {'goshim':>12} {'goshim/native':>14}")
        for n in a.conns:
            rows = STRESS_ROWS + ([("hits counted by server", "hits", 1),
                                   ("requests sent", "sent", 1),
                                   ("requests answered", "total", 1)] if a.hits else [])
            for i, (label, k, scale) in enumerate(rows):
                vals = [res[m, n][k] / scale if (m, n) in res and res[m, n][k] is not None
                        else None for m in MODES]
                cells = [fmt(v) for v in vals]
                r = ratio(vals[1], vals[0]) if k not in ("errors", "hits", "sent", "total") else ""
                print(f"{n if i == 0 else '':>6}  {label:26} {cells[0]:>12} {cells[1]:>12} {r:>14}".rstrip())
        if a.hits and not a.requests:
            print("(sent - answered: requests in flight when the time ran out; "
                  "the server counted those it had served)")
        print(total_memory_note(cgs))
        if a.svg:
            print(f"chart: {a.svg}")
    # The count must match only when every request sent was answered: one
    # abandoned at the end of the time may or may not have been counted.
    bad = failures or any(r["errors"] for r in res.values()) or \
        (a.hits and any(r["hits"] != r["total"] for r in res.values()
                        if r["sent"] == r["total"]))
    return 1 if bad else 0


# Per connection held, in KiB: what the growth from the idle server to its
# fullest is made of.
PER_CONN_ROWS = [
    ("program's own pages", "user_kib"),
    ("kernel memory", "kernel_kib"),
    ("  page tables", "pagetables_kib"),
    ("  socket buffers", "sock_kib"),
    ("  the rest (below)", "other_kernel_kib"),
    ("total", "total_kib"),
]


def stress_mem_limit(a):
    cgs = MemCgroups("stress --mem-limit", required=True)
    res, failures = {}, []
    with tempfile.TemporaryDirectory(prefix="goshim-stress.") as tmp:
        for mode in MODES:
            d = os.path.join(tmp, mode)
            os.mkdir(d)
            cg = cgs.make(mode)
            try:
                res[mode] = fill_one(a, mode, d, cg)
            except RuntimeError as e:
                failures.append(str(e))
                print(f"goshim stress: {e}", file=sys.stderr)
            finally:
                cg.remove()
            if not a.json:
                print(f"  {mode:6} " + (f"{res[mode]['held']:,} connections held; "
                                        f"{res[mode]['how']}" if mode in res else "failed"),
                      file=sys.stderr, flush=True)
    procs = gomaxprocs(a.procs)
    what = f"{a.proto}" + (f" GET {a.path}" if a.proto == "http" else " 64 B")
    limit_mib = a.mem_limit / (1 << 20)
    if a.svg:
        with open(a.svg, "w") as f:
            f.write(svg_chart(f"goshim stress --mem-limit {limit_mib:g}M: {a.server} "
                              f"({what}, GOMAXPROCS={procs})",
                              series_panels("server ", {m: res[m]["series"] for m in res})))
    doc = {"server": a.server, "port": a.port, "proto": a.proto, "path": a.path,
           "gomaxprocs": procs, "mem_limit_kib": a.mem_limit // 1024,
           "max_conns": a.max_conns, "mem_cgroup": cgs.label(), "failures": failures,
           **{m: {k: v for k, v in res[m].items() if k != "series"} for m in res},
           "held_ratio": (res["goshim"]["held"] / res["native"]["held"]
                          if len(res) == 2 and res["native"]["held"] else None)}
    if not emit_json(a, doc):
        print_mem_limit(a, res, cgs, what, procs)
    return 1 if failures else 0


def print_mem_limit(a, res, cgs, what, procs):
    limit_mib = a.mem_limit / (1 << 20)
    print(f"goshim stress --mem-limit {limit_mib:g}M: {a.server}")
    print(f"{what}: connections opened one at a time, each answered once and then held")
    print(f"idle, until the server refuses one, fails or is killed; the server in a memory")
    print(f"cgroup ({cgs.label()}) limited to {limit_mib:g} MiB of user + kernel memory; "
          f"GOMAXPROCS={procs}")

    def row(label, vals, r=True, f=fmt):
        cells = [f(v) for v in vals]
        rt = ratio(vals[1], vals[0]) if r and None not in vals else ""
        print(f"{label:30} {cells[0]:>10} {cells[1]:>10} {rt:>14}".rstrip())

    def get(k):
        return [res[m][k] if m in res else None for m in MODES]

    print(f"{'':30} {'native':>10} {'goshim':>10} {'goshim/native':>14}")
    row("connections held", get("held"))
    row("server peak OS threads", get("peak_threads"))
    row("server peak RSS, MiB", [mib(v) for v in get("peak_rss_kib")])
    row("server peak total mem, MiB", [mib(v) for v in get("mem_total_peak_kib")])
    row("  of it kernel, MiB", [mib(v) for v in get("mem_kernel_peak_kib")])
    for m in MODES:
        if m in res:
            print(f"{m}: {res[m]['how']}")
    per = {m: res[m]["per_conn"] for m in res if res[m].get("per_conn")}
    if not per:
        return
    print()
    print("each connection held, KiB: (the fullest sample - the idle server) / connections then")
    for label, k in PER_CONN_ROWS:
        vals = [per[m][k] if m in per else None for m in MODES]
        row(label, vals, r=None not in vals and min(vals) >= 0.5,
            f=lambda v: "-" if v is None else f"{v:.1f}")
    row("OS threads", [per[m]["threads"] if m in per else None for m in MODES], r=False,
        f=lambda v: "-" if v is None else f"{v:.2f}")
    print("the rest: a thread's kernel stack and task structs (natively one thread per")
    print("connection), and both ways the socket, file and mapping structs of each connection")
    for m in MODES:
        if m in res and m not in per:
            print(f"({m}: it filled up between two 10 ms samples: no breakdown)")
    if len(per) == 2:
        fits = [((a.mem_limit >> 10) - per[m]["idle_server_kib"]) / per[m]["total_kib"]
                for m in MODES]
        print(f"connections that fit: ({a.mem_limit >> 20} MiB - the idle server) / total each: "
              f"native {fits[0]:,.0f}, goshim {fits[1]:,.0f}")


def main():
    global LIB, TOOLS
    if len(sys.argv) < 4 or sys.argv[3] not in ("compare", "stress"):
        print("usage: goshim_measure.py LIB TOOLS compare|stress ARGS... "
              "(run through scripts/goshim)", file=sys.stderr)
        return 2
    LIB, TOOLS, sub, argv = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
    signal.signal(signal.SIGTERM, terminate)
    signal.signal(signal.SIGHUP, terminate)
    try:
        return {"compare": cmd_compare, "stress": cmd_stress}[sub](argv)
    except KeyboardInterrupt:
        print(f"goshim {sub}: interrupted", file=sys.stderr)
        return 130
    except NoMemCgroup as e:
        print(f"goshim {sub}: no memory cgroup to run in: {e}", file=sys.stderr)
        return 1
    finally:
        for cg in list(MemCgroup.made):
            cg.remove()


if __name__ == "__main__":
    sys.exit(main())
