#!/usr/bin/env python3
"""tests/run/diag-check.py BUILD_DIR: checks goshim's diagnostics output whole,
where run-progs.sh can only match one line of stderr.

- the SIGQUIT dump and the exit dump of tests/progs/dump_waits name each
  parked goroutine with its wait reason (mutex, cond, sleep, read fd N) and
  show the function that waited in its backtrace;
- GOSHIM_DEBUG=schedtrace=MS prints Go's SCHED line, one queue length per
  P; scheddetail=1 adds one line per P, per M and per goroutine; an unknown
  key is named in a warning;
- GOSHIM_TRACE of tests/progs/trace_events is JSON that parses, whose
  slices nest on every track (each E closes the B opened last, none is left
  open), and that has one goroutine per thread of the program.

A dump taken before every thread has blocked (a loaded machine) is taken
again, up to 5 times. Each run is bounded (tests/run/watchdog.py): past it,
what the program was doing is printed (its goroutine dump by `goshim
dump`, else its threads from /proc), it is killed, and its check fails.
"""
import collections
import json
import os
import re
import signal
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.dont_write_bytecode = True  # no __pycache__ in the source tree
import watchdog  # noqa: E402

B = sys.argv[1] if len(sys.argv) > 1 else "build"
LIB = os.path.abspath(os.path.join(B, "libgoshim.so"))
PROGS = os.path.join(B, "tests", "progs")
failures = []


def run(prog, args=(), env=None, timeout=120):
    e = dict(os.environ)
    e.update(env or {})
    e["LD_PRELOAD"] = LIB
    # SIGQUIT at its default action (a background job ignores it, and
    # goshim leaves an ignored SIGQUIT alone).
    rc, out, err, hung = watchdog.run(
        [os.path.join(PROGS, prog), *args], timeout, label=prog,
        report_to=sys.stdout.write, env=e, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True,
        preexec_fn=lambda: signal.signal(signal.SIGQUIT, signal.SIG_DFL))
    if hung:
        err += "\n(timed out after %d s: killed)" % timeout
    return rc, out, err


def check(name, ok, detail=""):
    print(("PASS " if ok else "FAIL ") + name)
    if not ok:
        failures.append(name)
        if detail:
            print("    " + detail.replace("\n", "\n    "))


def goroutines(text):
    """{goid: (state, [frame function names])} from a dump."""
    out = {}
    cur = None
    for line in text.splitlines():
        m = re.match(r"^goroutine (\d+) \[([^\]]*)\]:", line)
        if m:
            cur = int(m.group(1))
            out[cur] = (m.group(2), [])
        elif cur is not None and line and not line.startswith("\t"):
            out[cur][1].append(line.split("+0x")[0])
        elif cur is not None and line.startswith("\tgoroutine running"):
            out[cur][1].append(line.strip())
        elif not line:
            cur = None
    return out


WAITS = {  # wait reason pattern -> the program's function that waited
    r"mutex": "mutex_waiter",
    r"cond": "cond_waiter",
    r"sleep": "sleep_waiter",
    r"read fd \d+": "read_waiter",
}


def check_dump(mode, args, env, banner, running):
    for attempt in range(5):
        rc, out, err = run("dump_waits", args, env)
        gs = goroutines(err)
        missing = []
        for reason, fn in WAITS.items():
            if not any(re.fullmatch(reason, st) and fn in frames
                       for st, frames in gs.values()):
                missing.append(f"[{reason}] with {fn}")
        if not missing:
            break
    check(f"dump ({mode}): four wait reasons, each with its waiter's frame",
          rc == 0 and banner in err and not missing,
          f"exit {rc}; missing {missing}\n{err[-3000:]}")
    on = [fr for st, fr in gs.values() if st == "running"]
    other = "goroutine running on other thread; stack unavailable"
    check(f"dump ({mode}): the running goroutine is marked",
          len(on) == 1 and running in on[0] if running else
          on and all(other in fr for fr in on), err[-2000:])
    return err


# The spinner runs on one P while main sleeps in usleep.
err = check_dump("SIGQUIT", ["quit"], {"GOMAXPROCS": "2"},
                 "SIGQUIT: goroutine dump", None)
check("dump (SIGQUIT): main is shown sleeping in usleep, from main",
      any(st == "sleep" and "usleep" in fr and "main" in fr
          for st, fr in goroutines(err).values()), err[-2000:])
err = check_dump("dumponexit", [], {"GOSHIM_DEBUG": "dumponexit=1"},
                 "goshim: goroutines at exit:", "main")
rc, out, err = run("dump_waits", ["quit"], {"GOSHIM_DEBUG": "dumponquit=0"})
check("dumponquit=0: SIGQUIT keeps its default action (no dump)",
      rc == -signal.SIGQUIT and "goroutine" not in err, f"exit {rc}\n{err}")

# ---- schedtrace
nprocs = 3
rc, out, err = run("dump_waits", [], {"GOSHIM_DEBUG": "schedtrace=50",
                                      "GOMAXPROCS": str(nprocs)})
sched = re.compile(r"^SCHED (\d+)ms: gomaxprocs=(\d+) idleprocs=(\d+) "
                   r"threads=(\d+) spinningthreads=(\d+) idlethreads=(\d+) "
                   r"runqueue=(\d+) \[(\d+(?: \d+)*)\]$")
lines = [sched.match(l) for l in err.splitlines() if l.startswith("SCHED")]
check("schedtrace: SCHED lines in Go's format, one queue per P",
      rc == 0 and len(lines) >= 2 and all(
          m and int(m.group(2)) == nprocs and
          len(m.group(8).split()) == nprocs and
          int(m.group(3)) <= nprocs for m in lines),
      err[-2000:])
times = [int(m.group(1)) for m in lines if m]
check("schedtrace: times grow", times == sorted(times) and len(times) >= 2,
      str(times))

rc, out, err = run("dump_waits", [], {
    "GOSHIM_DEBUG": "schedtrace=100,scheddetail=1", "GOMAXPROCS": "2"})
first = err.split("SCHED ")[1] if "SCHED " in err else ""
plines = re.findall(r"^  P\d+: status=\d schedtick=\d+ syscalltick=\d+ "
                    r"m=-?\d+ runqsize=\d+ gfreecnt=\d+$", first, re.M)
mlines = re.findall(r"^  M\d+: p=-?\d+ curg=-?\d+ mallocing=0 throwing=0 "
                    r"preemptoff= locks=0 dying=0 spinning=(?:true|false) "
                    r"blocked=(?:true|false) lockedg=-?\d+$", first, re.M)
glines = re.findall(r"^  G\d+: status=\d\([^)]*\) m=-?\d+ lockedm=-?\d+$",
                    first, re.M)
check("scheddetail: a line per P, per M and per goroutine",
      len(plines) == 2 and len(mlines) >= 1 and len(glines) >= 1,
      first[:2000])

rc, out, err = run("dump_waits", [], {"GOSHIM_DEBUG": "bogus=1,schedtrace=x"})
check("GOSHIM_DEBUG: unknown keys and bad values are named",
      rc == 0 and 'unknown setting "bogus=1"' in err and
      '"schedtrace=x" ignored' in err, err[-1000:])

# ---- GOSHIM_TRACE
with tempfile.TemporaryDirectory() as d:
    path = os.path.join(d, "trace.json")
    rc, out, err = run("trace_events", [], {"GOSHIM_TRACE": path})
    try:
        with open(path) as f:
            events = json.load(f)["traceEvents"]
        parse_err = ""
    except (OSError, ValueError, KeyError) as e:
        events, parse_err = [], str(e)
check("trace: the JSON parses", rc == 0 and events and not parse_err,
      parse_err or err[-1000:])

# A process that inherits GOSHIM_TRACE while another writes FILE (here hold,
# 2 threads kept for 1.5 s) writes FILE.PID; the shell that starts both,
# under goshim too, stays single-threaded and so writes none (goshim's
# scheduler never starts in it).
with tempfile.TemporaryDirectory() as d:
    path = os.path.join(d, "trace.json")
    e = dict(os.environ, GOSHIM_TRACE=path, LD_PRELOAD=LIB)
    ready = os.path.join(d, "ready")
    hold = os.path.join(B, "tools", "hold")
    rc2, out2, err2, _ = watchdog.run(
        ["bash", "-c", f"{hold} 2 1 1500 {ready} >/dev/null & "
         f"until [ -e {ready} ]; do sleep 0.01; done; "
         f"{os.path.join(PROGS, 'trace_events')}; wait"], 120,
        label="bash -c 'hold & trace_events'", report_to=sys.stdout.write,
        env=e, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    os.path.exists(ready) and os.unlink(ready)
    files = sorted(os.listdir(d))
    try:
        counts = [sum(ev.get("name") == "create" for ev in
                      json.load(open(os.path.join(d, f)))["traceEvents"])
                  for f in files]
    except (OSError, ValueError, KeyError) as ex:
        counts = str(ex)
check("trace: a second process writes FILE.PID, both JSON",
      rc2 == 0 and len(files) == 2 and
      files[1].startswith("trace.json.") and counts == [3, 17] and
      "this one writes" in err2, f"{files} {counts}\n{err2}")

tracks = collections.defaultdict(list)
for i, e in enumerate(events):
    if e.get("ph") in ("B", "E", "i"):
        tracks[(e["pid"], e["tid"])].append((float(e["ts"]), i, e))
bad = []
for key, evs in tracks.items():
    evs.sort(key=lambda t: (t[0], t[1]))
    stack = []
    for ts, _, e in evs:
        if e["ph"] == "B":
            stack.append(e["name"])
        elif e["ph"] == "E":
            if not stack or stack[-1] != e["name"]:
                bad.append(f"{key}: E {e['name']} at {ts} closes {stack}")
                break
            stack.pop()
    if stack:
        bad.append(f"{key}: left open: {stack}")
check("trace: B/E slices nest and balance on every track", not bad,
      "\n".join(bad[:10]))

creates = {e["tid"] for e in events
           if e.get("name") == "create" and e.get("pid") == 1}
ends = {e["tid"] for e in events if e.get("name") == "end"}
check("trace: one goroutine per thread (16 + main), 16 ended",
      len(creates) == 17 and len(ends) == 16 and ends <= creates,
      f"created {sorted(creates)}, ended {sorted(ends)}")
kinds = {e.get("name") for e in events}
check("trace: running, syscall, block, unblock and P slices all present",
      {"running", "syscall", "block", "unblock", "P running"} <= kinds,
      str(kinds))
reasons = {e["args"]["reason"] for e in events if e.get("name") == "block"}
check("trace: blocks carry wait reasons (cond, sleep, read fd N)",
      {"cond", "sleep"} <= reasons and
      any(re.fullmatch(r"read fd \d+", r) for r in reasons), str(reasons))

print(f"diag-check: {len(failures)} failed" if failures
      else "diag-check: all passed")
sys.exit(1 if failures else 0)
