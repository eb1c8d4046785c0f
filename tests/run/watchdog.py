#!/usr/bin/env python3
"""tests/run/watchdog.py [--kill-after S] [--report FILE] [--label L] SECS CMD ARGS...
   tests/run/watchdog.py [--kill-after S] [--report FILE] [--label L] --hung PID

timeout(1) for the test runners, which first says what hung. CMD runs in a
process group of its own; if it has not ended after SECS seconds, the
report names every process of that group and below it (the command, a
sampler in front of it, its children), and for each one under goshim
gives its goroutine dump, taken out of band with `goshim dump` (so a
program that blocks or ignores SIGQUIT, or whose stderr is a file, still
shows it); for the others, or when the dump does not come, a line per
thread from /proc (state, wchan, system call, blocked and pending
signals). Then the group is sent SIGTERM, and SIGKILL S seconds later
(default 5). The report goes to FILE (appended) or else to stderr.

--hung PID: the same report and kill for PID and what is below it, a
process the caller started itself (a background job of a shell script)
and has waited for long enough.

Exit status: CMD's; 128+N if a signal N ended it; 124 when it timed out
(whether SIGTERM or SIGKILL ended it). SIGINT, SIGTERM and SIGHUP sent to
the watchdog are passed on to the group.

Also a module: run(cmd, secs, ...) for the python runners.
"""
import collections
import os
import re
import signal
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
GOSHIM = os.path.join(HERE, "..", "..", "scripts", "goshim")
MAX_THREAD_LINES = 64


def _read(path, mode="r"):
    try:
        with open(path, mode) as f:
            return f.read()
    except OSError:
        return None


def _stat(pid):
    """(comm, state, ppid, pgrp) of pid, or None."""
    s = _read("/proc/%d/stat" % pid)
    if not s:
        return None
    i = s.rfind(")")
    rest = s[i + 2:].split()
    return s[s.find("(") + 1:i], rest[0], int(rest[1]), int(rest[2])


def tree(root):
    """root, the processes of its group, and every descendant of those."""
    procs = {}
    for d in os.listdir("/proc"):
        if d.isdigit():
            st = _stat(int(d))
            if st:
                procs[int(d)] = st
    keep = {p for p, st in procs.items() if p == root or st[3] == root}
    grew = True
    while grew:
        grew = False
        for p, st in procs.items():
            if p not in keep and st[2] in keep:
                keep.add(p)
                grew = True
    return sorted(p for p in keep if p in procs)


def _sig_line(status, key):
    for line in (status or "").splitlines():
        if line.startswith(key + ":"):
            v = int(line.split()[1], 16)
            return ",".join(str(s) for s in range(1, 65) if v >> (s - 1) & 1) or "-"
    return "?"


def threads_summary(pid):
    out = []
    try:
        tids = sorted(int(t) for t in os.listdir("/proc/%d/task" % pid))
    except OSError:
        return ["    (gone)"]
    for n, tid in enumerate(tids):
        if n == MAX_THREAD_LINES:
            out.append("    ... %d threads more" % (len(tids) - n))
            break
        base = "/proc/%d/task/%d/" % (pid, tid)
        st = _stat_task(base)
        wchan = (_read(base + "wchan") or "?").strip() or "-"
        sysc = (_read(base + "syscall") or "?").split()
        status = _read(base + "status")
        out.append("    tid %d (%s) state %s wchan %s syscall %s blocked %s pending %s"
                   % (tid, st[0] if st else "?", st[1] if st else "?", wchan,
                      sysc[0] if sysc else "?", _sig_line(status, "SigBlk"),
                      _sig_line(status, "SigPnd")))
    return out


def _stat_task(base):
    s = _read(base + "stat")
    if not s:
        return None
    i = s.rfind(")")
    return s[s.find("(") + 1:i], s[i + 2:].split()[0]


def under_goshim(pid):
    maps = _read("/proc/%d/maps" % pid) or ""
    return "libgoshim" in maps


def goroutine_summary(dump):
    """"goroutines: 5 (3 sleep, 1 mutex, 1 running)": a dump of thousands
    reads best with this first."""
    states = collections.Counter(
        m.group(1) for m in re.finditer(r"^goroutine \d+ \[([^\],]*)", dump, re.M))
    return "goroutines: %d (%s)" % (sum(states.values()), ", ".join(
        "%d %s" % (n, st) for st, n in states.most_common()))


def report(root, write):
    """What the processes from root down are doing, through write(str)."""
    for pid in tree(root):
        st = _stat(pid)
        if st is None:
            continue
        cmd = (_read("/proc/%d/cmdline" % pid, "rb") or b"").replace(b"\0", b" ").decode(errors="replace").strip()
        try:
            nthreads = len(os.listdir("/proc/%d/task" % pid))
        except OSError:
            nthreads = 0
        write("== pid %d (%s) state %s, %d threads, pending for the process %s: %s\n"
              % (pid, st[0], st[1], nthreads,
                 _sig_line(_read("/proc/%d/status" % pid), "ShdPnd"), cmd[:300]))
        if under_goshim(pid):
            try:
                p = subprocess.run([GOSHIM, "dump", "--timeout", "5", str(pid)],
                                   capture_output=True, timeout=30)
                if p.returncode == 0 and p.stdout:
                    text = p.stdout.decode(errors="replace")
                    write(goroutine_summary(text) + "\n" + text)
                    # its threads too: which call a goroutine in a
                    # system call is in
                    write("threads:\n")
                else:
                    write("(goshim dump: %s)\n" % (p.stderr.decode(errors="replace").strip()
                                                   or "exit %d" % p.returncode))
            except subprocess.TimeoutExpired:
                write("(goshim dump: no answer in 30 s)\n")
            except OSError as e:
                write("(goshim dump: %s)\n" % e)
        write("\n".join(threads_summary(pid)) + "\n")


def _kill_all(root, sig):
    for pid in [root] + tree(root):
        try:
            os.kill(pid, sig)
        except OSError:
            pass
    try:
        os.killpg(root, sig)
    except OSError:
        pass


def _status(rc):
    return 128 - rc if rc < 0 else rc


def run(cmd, secs, kill_after=5, label=None, report_to=None, on_start=None,
        **popen):
    """Run cmd (Popen's keywords in popen, e.g. stdout=PIPE) for at most
    secs seconds. Returns (returncode, stdout, stderr, timed_out): Popen's
    returncode (-N for a signal N), 124 when it timed out; on a time out,
    report_to(text) gets the report first (default: stderr).
    on_start(pid): told the group's pid as soon as it runs."""
    write = report_to or sys.stderr.write
    p = subprocess.Popen(cmd, process_group=0, **popen)
    if on_start:
        on_start(p.pid)
    try:
        out, err = p.communicate(timeout=secs)
        return p.returncode, out, err, False
    except subprocess.TimeoutExpired:
        pass
    write("watchdog: %s: still running after %g s; what it is doing:\n"
          % (label or " ".join(cmd)[:200], secs))
    try:
        report(p.pid, write)
    except Exception as e:  # a report must not keep the kill from coming
        write("watchdog: report failed: %r\n" % e)
    _kill_all(p.pid, signal.SIGTERM)
    try:
        out, err = p.communicate(timeout=kill_after)
        how = "SIGTERM"
    except subprocess.TimeoutExpired:
        _kill_all(p.pid, signal.SIGKILL)
        out, err = p.communicate()
        how = "SIGKILL (SIGTERM did not end it in %g s)" % kill_after
    # what is left of the group (a child that ignored SIGTERM)
    _kill_all(p.pid, signal.SIGKILL)
    write("watchdog: %s: killed with %s\n" % (label or cmd[0], how))
    return 124, out, err, True


def reap(pid, kill_after, label, write):
    """--hung PID: for a process the caller started in the background and
    waited for too long: the report, then SIGTERM, SIGKILL, to it and
    everything below it."""
    write("watchdog: %s: still running; what it is doing:\n" % label)
    try:
        report(pid, write)
    except Exception as e:
        write("watchdog: report failed: %r\n" % e)
    _kill_all(pid, signal.SIGTERM)
    end = time.monotonic() + kill_after
    while time.monotonic() < end and _stat(pid) and _stat(pid)[1] != "Z":
        time.sleep(0.05)
    _kill_all(pid, signal.SIGKILL)
    write("watchdog: %s: killed\n" % label)
    return 124


def main(argv):
    kill_after, report_file, label, hung = 5.0, None, None, None
    args = list(argv)
    while args and args[0].startswith("--"):
        a = args.pop(0)
        if a == "--":
            break
        if not args:
            sys.exit("watchdog: %s needs a value" % a)
        v = args.pop(0)
        if a == "--kill-after":
            kill_after = float(v)
        elif a == "--report":
            report_file = v
        elif a == "--label":
            label = v
        elif a == "--hung":
            hung = int(v)
        else:
            sys.exit("watchdog: unknown option %s" % a)
    if report_file:
        def write(text):
            with open(report_file, "a") as f:
                f.write(text)
    else:
        write = sys.stderr.write
    if hung is not None:
        return reap(hung, kill_after, label or str(hung), write)
    if len(args) < 2:
        sys.exit(__doc__.splitlines()[0])
    secs = float(args[0])
    cmd = args[1:]
    child = []

    def forward(sig, frame):
        if child:
            _kill_all(child[0], sig)

    for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(s, forward)
    try:
        rc, _, _, _ = run(cmd, secs, kill_after, label, write, child.append)
    except FileNotFoundError as e:
        sys.stderr.write("watchdog: %s\n" % e)
        return 127
    return _status(rc)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
