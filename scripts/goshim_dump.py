#!/usr/bin/env python3
"""goshim dump PID: the goroutine dump of a running program under goshim,
on this command's stdout (jstack's idea).

The runtime's side is core/dumpreq.c. This side makes a pipe, finds the
target's sysmon thread by its name, and sends that thread SIGURG with
rt_tgsigqueueinfo: si_code SI_QUEUE, this process's pid in si_pid, and in
si_value MAGIC << 48 | the pipe's write end << 32 | CLOCK_MONOTONIC in ms
(low 32 bits: sysmon drops a request that waited too long, in a program
that was stopped). sysmon opens /proc/<this pid>/fd/<write
end> and writes the dump there; once its first bytes are in, this side
closes its own write end and reads to the end of the file.

Nothing is sent to a process that is not under goshim: without a thread of
that name (and libgoshim.so in its maps) it is only told so. The kernel
lets only a process of the same user (or root) send the signal.

Exit status: 0 with a dump; 1 when there is none (not under goshim, no such
process, no answer in time); 2 for bad usage.
"""
import ctypes
import os
import platform
import select
import struct
import sys
import time

MAGIC = 0x6764  # core/dumpreq.c's DUMPREQ_MAGIC
SYSMON_NAME = "goshim-sysmon"  # core/dumpreq.c's SYSMON_NAME
SIGURG = 23
SI_QUEUE = -1
NR_RT_TGSIGQUEUEINFO = {"x86_64": 297, "aarch64": 240}


def usage(out):
    out.write("""usage: goshim dump [--timeout S] PID

Prints the goroutine dump of PID, a running program under goshim, on
stdout: every goroutine with its state, wait reason and backtrace, as
SIGQUIT would print on the program's stderr. The request goes to goshim's
own sysmon thread, so it works whatever the program does with SIGQUIT
(blocks it, handles it, ignores it), and the program runs on unharmed.
A process not under goshim is only told so. Exits 1 without a dump.

  --timeout S   wait S seconds for the answer to start (default 5)
""")


def fail(msg):
    sys.stderr.write("goshim: dump: %s\n" % msg)
    sys.exit(1)


def read(path, mode="r"):
    try:
        with open(path, mode) as f:
            return f.read()
    except OSError:
        return None


def sysmon_tid(pid):
    try:
        tids = os.listdir("/proc/%d/task" % pid)
    except OSError:
        return None
    for tid in tids:
        if (read("/proc/%d/task/%s/comm" % (pid, tid)) or "").rstrip("\n") == SYSMON_NAME:
            return int(tid)
    return None


def not_under_goshim(pid):
    """Why pid has no sysmon to ask."""
    maps = read("/proc/%d/maps" % pid)
    if maps is None:
        return "%d: cannot read /proc/%d/maps (a process of another user?)" % (pid, pid)
    if "libgoshim" not in maps:
        return "%d: not under goshim (libgoshim.so is not loaded)" % pid
    env = read("/proc/%d/environ" % pid, "rb") or b""
    for item in env.split(b"\0"):
        if item.startswith(b"GOSHIM_DISABLE="):
            v = item[len(b"GOSHIM_DISABLE="):]
            if v not in (b"", b"0"):
                return "%d: not under goshim (GOSHIM_DISABLE=%s)" % (pid, v.decode(errors="replace"))
    try:
        threads = len(os.listdir("/proc/%d/task" % pid))
    except OSError:
        threads = 0
    if threads == 1:
        return "%d: not under goshim: its runtime not started (one thread)" % pid
    return "%d: not under goshim (libgoshim.so is loaded but its runtime is off)" % pid


def state(pid):
    stat = read("/proc/%d/stat" % pid) or ""
    rest = stat[stat.rfind(")") + 1:].split()
    return rest[0] if rest else "?"


def send(pid, tid, wfd):
    nr = NR_RT_TGSIGQUEUEINFO.get(platform.machine())
    if nr is None:
        fail("rt_tgsigqueueinfo's number on %s is not known here" % platform.machine())
    # siginfo_t: si_signo, si_errno, si_code, padding; then _rt: si_pid,
    # si_uid, si_value (8 bytes); 128 bytes in all
    if wfd > 0xFFFF:
        fail("the pipe's fd %d does not fit the request" % wfd)
    now_ms = time.clock_gettime_ns(time.CLOCK_MONOTONIC) // 1000000
    si = struct.pack("iiiiiIQ", SIGURG, 0, SI_QUEUE, 0, os.getpid(), os.getuid(),
                     MAGIC << 48 | wfd << 32 | now_ms & 0xFFFFFFFF)
    buf = ctypes.create_string_buffer(si.ljust(128, b"\0"), 128)
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    r = libc.syscall(ctypes.c_long(nr), ctypes.c_long(pid), ctypes.c_long(tid),
                     ctypes.c_long(SIGURG), buf)
    if r != 0:
        err = ctypes.get_errno()
        if err == 1:  # EPERM
            fail("%d: not allowed to ask it (a process of another user?)" % pid)
        if err == 3:  # ESRCH
            fail("%d: its sysmon thread %d is gone (did it exit?)" % (pid, tid))
        fail("%d: rt_tgsigqueueinfo: %s" % (pid, os.strerror(err)))


def main(argv):
    timeout = 5.0
    args = list(argv)
    pid = None
    while args:
        a = args.pop(0)
        if a in ("-h", "--help"):
            usage(sys.stdout)
            return 0
        if a == "--timeout" or a.startswith("--timeout="):
            v = a.split("=", 1)[1] if "=" in a else (args.pop(0) if args else "")
            try:
                timeout = float(v)
                if not timeout > 0:
                    raise ValueError
            except ValueError:
                sys.stderr.write("goshim: dump: --timeout needs a positive number of seconds, not '%s'\n" % v)
                usage(sys.stderr)
                return 2
        elif a.startswith("-") and a != "-":
            sys.stderr.write("goshim: dump: unknown option %s\n" % a)
            usage(sys.stderr)
            return 2
        elif pid is None and a.isdigit() and int(a) > 0:
            pid = int(a)
        else:
            sys.stderr.write("goshim: dump: one PID (a positive number) is needed, not '%s'\n" % a)
            usage(sys.stderr)
            return 2
    if pid is None:
        sys.stderr.write("goshim: dump: no PID given\n")
        usage(sys.stderr)
        return 2
    if not os.path.isdir("/proc/%d" % pid):
        fail("%d: no such process" % pid)
    tid = sysmon_tid(pid)
    maps = read("/proc/%d/maps" % pid)
    if tid is None or maps is None or "libgoshim" not in maps:
        fail(not_under_goshim(pid))

    rfd, wfd = os.pipe()
    send(pid, tid, wfd)
    out = sys.stdout.buffer
    got = 0
    complete = False
    deadline = time.monotonic() + timeout
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            break
        ready, _, _ = select.select([rfd], [], [], left)
        if not ready:
            continue
        data = os.read(rfd, 65536)
        if not data:
            complete = True  # every write end closed: the whole answer is in
            break
        if got == 0 and wfd >= 0:
            # sysmon has its own open of the pipe now: only its close
            # ends the file
            os.close(wfd)
            wfd = -1
        got += len(data)
        out.write(data)
        out.flush()
        # sysmon gives up on a reader that does not read for 5 s; allow
        # the same between pieces
        deadline = time.monotonic() + max(timeout, 5.0)
    if got == 0:
        st = state(pid)
        if st in ("T", "t"):
            fail("%d: no answer in %g s: it is stopped (state %s)" % (pid, timeout, st))
        if not os.path.isdir("/proc/%d" % pid):
            fail("%d: no answer: it exited" % pid)
        fail("%d: no answer from goshim's sysmon (thread %d) in %g s" % (pid, tid, timeout))
    if not complete:
        fail("%d: the answer stopped after %d bytes" % (pid, got))
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except BrokenPipeError:
        sys.exit(1)
