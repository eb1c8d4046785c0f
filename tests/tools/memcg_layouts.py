#!/usr/bin/env python3
"""memcg_layouts.py SCRIPTS_DIR WORK_DIR: where `goshim compare` and `goshim
stress` make their memory cgroups, on fake /proc and /sys trees under
WORK_DIR, for the layouts one machine cannot show at once: cgroup v2 only
(the memory controller given to children, or not and not able to be),
hybrid (v2 mounted, memory on v1), v1 in a container (the mount shows a
subtree), none at all. Then the v2 files a MemCgroup writes for a limit, and
its removal. Prints "ok ..." or "FAIL ..." lines; exits 1 on a failure.
Run by tests/run/tools-check.sh; the real cgroup of the machine is tested
there."""
import contextlib
import io
import os
import shutil
import sys

sys.path.insert(0, sys.argv[1])
import goshim_measure as gm  # noqa: E402

work = sys.argv[2]
fails = 0


def check(what, cond, got):
    global fails
    if cond:
        print(f"ok   memcg layout: {what}")
    else:
        fails += 1
        print(f"FAIL memcg layout: {what}: got {got!r}")


def layout(name, mounts, cgroup, files):
    """A fake root: proc/mountinfo from MOUNTS [(root, mountpoint, fstype,
    superopts)], proc/cgroup, and FILES {path: content}; returns (proc dir,
    prefix)."""
    top = os.path.join(work, name)
    shutil.rmtree(top, ignore_errors=True)
    os.makedirs(os.path.join(top, "proc"))
    with open(os.path.join(top, "proc", "mountinfo"), "w") as f:
        for i, (root, mnt, fstype, opts) in enumerate(mounts):
            f.write(f"{30 + i} 25 0:{26 + i} {root} {mnt} rw,nosuid,nodev,noexec,relatime "
                    f"shared:{9 + i} - {fstype} {fstype} {opts}\n")
    with open(os.path.join(top, "proc", "cgroup"), "w") as f:
        f.write(cgroup)
    for path, content in files.items():
        os.makedirs(os.path.dirname(top + path), exist_ok=True)
        with open(top + path, "w") as f:
            f.write(content)
    return os.path.join(top, "proc"), top


scope = "/sys/fs/cgroup/user.slice/user-1000.slice/session-2.scope"

# v2 only, memory given to the children of the caller's cgroup
proc, pre = layout("v2", [("/", "/sys/fs/cgroup", "cgroup2", "rw,nsdelegate")],
                   "0::/user.slice/user-1000.slice/session-2.scope\n",
                   {scope + "/cgroup.controllers": "cpu io memory pids\n",
                    scope + "/cgroup.subtree_control": "memory pids\n"})
found, why = gm.memcg_candidates(proc, pre)
check("v2 with memory in subtree_control: made there", found == [(2, pre + scope)], (found, why))

# v2 only, memory available, not given to children and not able to be (the
# kernel says EBUSY for a cgroup with processes; a read-only sysctl, which
# reads "Linux" and refuses writes even from root, stands in for it)
proc, pre = layout("v2busy", [("/", "/sys/fs/cgroup", "cgroup2", "rw")],
                   "0::/user.slice/user-1000.slice/session-2.scope\n",
                   {scope + "/cgroup.controllers": "cpu memory\n"})
os.symlink("/proc/sys/kernel/ostype", pre + scope + "/cgroup.subtree_control")
found, why = gm.memcg_candidates(proc, pre)
check("v2 whose subtree_control refuses +memory: none, and why",
      found == [] and len(why) == 1 and "cgroup.subtree_control" in why[0]
      and "cannot be made to" in why[0], (found, why))

# v2 only, memory available and not yet given: given (+memory written)
proc, pre = layout("v2give", [("/", "/sys/fs/cgroup", "cgroup2", "rw")], "0::/\n",
                   {"/sys/fs/cgroup/cgroup.controllers": "memory\n",
                    "/sys/fs/cgroup/cgroup.subtree_control": ""})
found, why = gm.memcg_candidates(proc, pre)
with open(pre + "/sys/fs/cgroup/cgroup.subtree_control") as f:
    wrote = f.read()
check("v2 root without memory in subtree_control: '+memory' written, made there",
      found == [(2, pre + "/sys/fs/cgroup")] and wrote == "+memory", (found, why, wrote))

# hybrid: v2 mounted without the memory controller, v1 memory mounted
proc, pre = layout("hybrid", [("/", "/sys/fs/cgroup/unified", "cgroup2", "rw"),
                              ("/", "/sys/fs/cgroup/memory", "cgroup", "rw,memory")],
                   "4:memory:/process_api/abc\n1:cpu,cpuacct:/\n0::/\n",
                   {"/sys/fs/cgroup/unified/cgroup.controllers": "hugetlb\n",
                    "/sys/fs/cgroup/unified/cgroup.subtree_control": "",
                    "/sys/fs/cgroup/memory/process_api/abc/memory.usage_in_bytes": "0\n"})
found, why = gm.memcg_candidates(proc, pre)
check("hybrid: v1's memory hierarchy, and why not v2",
      found == [(1, pre + "/sys/fs/cgroup/memory/process_api/abc")]
      and any("no memory controller" in w for w in why), (found, why))

# v1 in a container: the mount shows the container's own subtree
proc, pre = layout("container", [("/docker/f00", "/sys/fs/cgroup/memory", "cgroup",
                                  "rw,memory")],
                   "9:memory:/docker/f00\n", {"/sys/fs/cgroup/memory/tasks": ""})
found, why = gm.memcg_candidates(proc, pre)
check("v1 mount of a subtree (container): its mount point",
      found == [(1, pre + "/sys/fs/cgroup/memory")], (found, why))

# none: RSS only, said once
proc, pre = layout("none", [("/", "/proc", "proc", "rw")], "0::/\n", {})
found, why = gm.memcg_candidates(proc, pre)
check("no cgroup mounted: none, and why",
      found == [] and why == ["no cgroup v2 and no v1 memory controller mounted"], (found, why))
cgs = gm.MemCgroups("compare", proc=proc, prefix=pre)
said = io.StringIO()
with contextlib.redirect_stderr(said):
    made = [cgs.make("native"), cgs.make("goshim")]
check("no cgroup mounted: make() gives None, RSS only, said once on stderr",
      made == [None, None] and cgs.label() is None and said.getvalue() ==
      "goshim compare: total memory not measured, RSS only: no memory cgroup to run in "
      "(no cgroup v2 and no v1 memory controller mounted)\n", said.getvalue())
try:
    gm.MemCgroups("stress --mem-limit", required=True, proc=proc, prefix=pre).make("native")
    check("no cgroup mounted, --mem-limit: an error", False, "no error")
except gm.NoMemCgroup as e:
    check("no cgroup mounted, --mem-limit: an error that says why",
          "no cgroup v2" in str(e), str(e))

# A v2 cgroup made and limited: memory.max, memory.swap.max; then removed.
proc, pre = layout("v2make", [("/", "/sys/fs/cgroup", "cgroup2", "rw")],
                   "0::/user.slice/user-1000.slice/session-2.scope\n",
                   {scope + "/cgroup.controllers": "memory\n",
                    scope + "/cgroup.subtree_control": "memory\n"})
cgs = gm.MemCgroups("stress", proc=proc, prefix=pre)
cg = cgs.make("native")
cg.write("memory.swap.max", "max")  # as the kernel would show it
cg.limit(gm.size("64M"))
got = {n: open(os.path.join(cg.dir, n)).read() for n in ("memory.max", "memory.swap.max")}
check("v2 limit 64M: memory.max 67108864, memory.swap.max 0",
      cgs.label() == "v2" and got == {"memory.max": "67108864", "memory.swap.max": "0"}
      and os.path.dirname(cg.dir) == pre + scope, (cgs.label(), got, cg.dir))
for n in got:
    os.unlink(os.path.join(cg.dir, n))  # a real cgroup's files go with it
cg.remove()
check("removed afterwards", not os.path.exists(cg.dir) and not gm.MemCgroup.made, cg.dir)

for arg, want in (("256M", 256 << 20), ("1G", 1 << 30), ("1.5GiB", 3 << 29),
                  ("65536K", 64 << 20), ("2097152", 2 << 20)):
    check(f"size {arg}", gm.size(arg) == want, gm.size(arg))
for arg in ("", "x", "12Q", "100K", "-1G"):
    try:
        gm.size(arg)
        check(f"size {arg!r} refused", False, "accepted")
    except Exception as e:  # argparse.ArgumentTypeError
        check(f"size {arg!r} refused: {e}", True, None)
sys.exit(1 if fails else 0)
