#!/usr/bin/env python3
"""memcg_run.py LABEL CMD [ARGS...]: CMD in a memory cgroup of its own.
memcg_run.py --check: whether one can be made here (the reason if not).

Why: RSS misses what the kernel spends per thread (kernel stack, task
structs, page tables), which is most of what goshim saves. bench.sh's
memory rows run mem_blocked this way: a fresh memory cgroup under the
caller's own (the places and the rules of scripts/goshim_measure.py, which
`goshim compare` uses too), CMD alone in it, its directory in the
environment as BENCH_MEMCG, so the program reads its own total (user +
kernel) at the instants it chooses. This process stays outside; the cgroup
is removed afterwards, whatever is left in it killed. SIGTERM, SIGINT and
SIGHUP are passed on to CMD. Exits with CMD's status (128+SIG when a signal
ended it). Where no cgroup can be made CMD runs without one, after one line
on stderr saying why.
"""
import os
import signal
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "scripts"))
import goshim_measure as gm  # noqa: E402 (after the path it is found on)


def main():
    if sys.argv[1:] == ["--check"]:
        cgs = gm.MemCgroups("bench", required=True)
        try:
            cgs.make("check").remove()
        except gm.NoMemCgroup as e:
            print(e)
            return 1
        return 0
    if len(sys.argv) < 3:
        print("usage: memcg_run.py LABEL CMD [ARGS...] | --check", file=sys.stderr)
        return 2
    label, cmd = sys.argv[1], sys.argv[2:]
    cg = gm.MemCgroups("bench").make(label)
    env = dict(os.environ)
    if cg:
        env["BENCH_MEMCG"] = cg.dir

    def join():
        if cg:
            with open(os.path.join(cg.dir, "cgroup.procs"), "w") as f:
                f.write(str(os.getpid()))

    try:
        child = subprocess.Popen(cmd, env=env, preexec_fn=join)
    except OSError as e:
        print(f"memcg_run: {cmd[0]}: {e.strerror}", file=sys.stderr)
        if cg:
            cg.remove()
        return 127
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, lambda s, f: child.send_signal(s))
    st = child.wait()
    if cg:
        cg.remove()
    return 128 - st if st < 0 else st


if __name__ == "__main__":
    sys.exit(main())
