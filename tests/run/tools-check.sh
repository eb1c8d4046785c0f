#!/usr/bin/env bash
# tests/run/tools-check.sh BUILD_DIR: `make tools-check`, part of `make check`.
#
# Drives each scripts/goshim subcommand on small bundled programs and holds
# what it prints against what this script reads from /proc itself, while
# the program holds a known shape (tests/tools/hold.c: N threads parked and
# M MiB touched, a ready file while it holds). Never asserts on time:
# thread counts and hit counters are exact, RSS gets a tolerance (the
# sampler and the direct reading see the same pages, give or take the
# allocator and stacks), and CPU time and context switches are only checked
# for being there and plausible.
#
# Every step runs under tests/run/watchdog.py (bounded SECS CMD, or reap for a
# background job): past its bound, what hung is printed (goroutine dumps
# by `goshim dump`, else its threads from /proc), then it is killed and the
# step fails. The bounds are for a slow, loaded 2-CPU machine.
set -euo pipefail

if [[ $# -ne 1 ]]; then
	echo "usage: $0 BUILD_DIR" >&2
	exit 2
fi
B=$(readlink -f "$1")
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
goshim=$here/scripts/goshim
hold=$B/tools/hold
parked=$B/tools/parked
httpd=$B/tests/servers/legacy_httpd
echod=$B/tests/servers/legacy_echod
lib=$B/libgoshim.so
procs=${GOMAXPROCS:-$(nproc)}
work=$(mktemp -d "${TMPDIR:-/tmp}/tools-check.XXXXXX")
trap 'rm -rf "$work"' EXIT
fails=0

ok() { echo "ok   $*"; }
fail() { echo "FAIL $*"; fails=$((fails + 1)); }
check() { # DESCRIPTION PYTHON-EXPRESSION-ON-v (v: the parsed JSON FILE) FILE
	if python3 -c 'import json, sys; v = json.load(open(sys.argv[2])); sys.exit(0 if eval(sys.argv[1]) else 1)' \
		"$2" "$3"; then
		ok "$1"
	else
		fail "$1 (wanted: $2)"
	fi
}
status_of() { local st=0; "$@" >/dev/null 2>&1 || st=$?; echo "$st"; }
watchdog=$here/tests/run/watchdog.py
# bounded SECS CMD...: CMD, killed after SECS (exit 124) with a report of
# what hung on stderr.
bounded() { "$watchdog" --kill-after 10 --label "$(basename "$2") ${3:-}" "$@"; }
# reap PID SECS: wait for the background job PID; past SECS, report what
# hung on stderr and kill it. Its exit status, 124 if it was killed.
reap() {
	local pid=$1 n=0 st=0
	while kill -0 "$pid" 2>/dev/null && [[ $(awk '{ print $3 }' "/proc/$pid/stat" 2>/dev/null) != Z ]]; do
		if [[ $n -ge $(($2 * 20)) ]]; then
			"$watchdog" --kill-after 10 --label "background job $pid" --hung "$pid" || true
			wait "$pid" 2>/dev/null || true
			return 124
		fi
		sleep 0.05
		n=$((n + 1))
	done
	wait "$pid" 2>/dev/null || st=$?
	return "$st"
}

# direct_reading ENV... : runs hold 40 threads / 64 MiB under env ENV, and
# once it holds, reads Threads and VmRSS (KiB) from its /proc/PID/status.
direct_reading() {
	local ready=$work/ready pid n=0
	rm -f "$ready"
	env "$@" "$hold" 40 64 1500 "$ready" >/dev/null &
	pid=$!
	while [[ ! -e $ready && $n -lt 600 ]]; do
		sleep 0.05
		n=$((n + 1))
	done
	awk '/^Threads:/ { t = $2 } /^VmRSS:/ { r = $2 } END { print t, r }' "/proc/$pid/status"
	reap "$pid" 120
}

echo "== goshim compare"
read -r nat_threads nat_rss < <(direct_reading -u LD_PRELOAD)
read -r gs_threads gs_rss < <(direct_reading LD_PRELOAD="$lib")
echo "     /proc while holding: native $nat_threads threads, $nat_rss KiB; goshim $gs_threads threads, $gs_rss KiB"
if [[ $nat_threads -eq 41 ]]; then ok "hold 40: 41 threads natively by /proc"; else fail "hold 40: $nat_threads threads natively by /proc, wanted 41"; fi

st=0
bounded 300 "$goshim" compare --json --svg "$work/c.svg" -- "$hold" 40 64 1500 >"$work/c.json" || st=$?
if [[ $st -eq 0 ]]; then ok "compare exit 0 for the same behaviour"; else fail "compare exit $st for the same behaviour"; fi
check "compare --json parses, same exit and stdout" 'v["same_exit"] and v["same_stdout"]' "$work/c.json"
check "compare: native peak threads = /proc's $nat_threads" "v['native']['peak_threads'] == $nat_threads" "$work/c.json"
# (goshim starts Ms as the run needs them: another run may have one more
# or one fewer than the one read from /proc)
check "compare: goshim peak threads within 2 of /proc's $gs_threads and <= GOMAXPROCS+4" \
	"abs(v['goshim']['peak_threads'] - $gs_threads) <= 2 and v['goshim']['peak_threads'] <= $procs + 4" "$work/c.json"
check "compare: native peak RSS within 10% of /proc's $nat_rss KiB" \
	"0.9 * $nat_rss <= v['native']['peak_rss_kib'] <= 1.1 * $nat_rss + 1024" "$work/c.json"
check "compare: goshim peak RSS within 10% of /proc's $gs_rss KiB" \
	"0.9 * $gs_rss <= v['goshim']['peak_rss_kib'] <= 1.1 * $gs_rss + 4096" "$work/c.json"
check "compare: held 1.5 s, so wall >= 1.5 s and mean threads near the peak natively" \
	"v['native']['wall_s'] >= 1.5 and v['goshim']['wall_s'] >= 1.5 and v['native']['mean_threads'] > 0.7 * $nat_threads" "$work/c.json"
check "compare: CPU <= wall x CPUs; each of 40 native threads blocked once (>= 40 voluntary switches), goshim's Ms at least once" \
	"all(0 <= v[m]['cpu_s'] <= v[m]['wall_s'] * $(nproc) + 0.1 and v[m]['invol_cs'] >= 0 for m in ('native', 'goshim')) and v['native']['vol_cs'] >= 40 and v['goshim']['vol_cs'] >= 1" "$work/c.json"
# threads and RSS, and total memory where a cgroup measured it
if python3 - "$work/c.svg" "$work/c.json" <<'PY'; then ok "compare --svg: well-formed XML, native and goshim series with points (total memory too where measured)"; else fail "compare --svg"; fi
import json, sys, xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()
panels = 3 if json.load(open(sys.argv[2]))["mem_cgroup"] else 2
lines = root.findall(".//{http://www.w3.org/2000/svg}polyline")
modes = [l.get("data-mode") for l in lines]
assert modes.count("native") == panels and modes.count("goshim") == panels, modes
assert all(len(l.get("points").split()) >= 10 for l in lines)
PY

bounded 300 "$goshim" compare -- "$hold" 3 1 300 >"$work/c.txt"
if grep -q '^peak threads  *4 ' "$work/c.txt" && grep -q '^stdout: same (1 line)' "$work/c.txt" &&
	grep -q '^exit: same (exit 0)' "$work/c.txt"; then
	ok "compare table: peak threads 4 natively for hold 3, same exit, same stdout"
else
	fail "compare table for hold 3:"; cat "$work/c.txt"
fi

st=0
# shellcheck disable=SC2016 # the inner shell expands it
bounded 300 "$goshim" compare -- sh -c 'if [ -n "${LD_PRELOAD:-}" ]; then echo one; exit 3; fi; echo other' >"$work/d.txt" || st=$?
if [[ $st -eq 1 ]] && grep -q '^exit: DIFFERENT: native exit 0; goshim exit 3' "$work/d.txt" &&
	grep -q "^stdout: DIFFERENT.*line 1: native 'other', goshim 'one'" "$work/d.txt"; then
	ok "compare: different exit and stdout reported, exit 1"
else
	fail "compare on a program that differs (exit $st):"; cat "$work/d.txt"
fi

# (one prints, so that stdout does not depend on which ends first)
bounded 300 "$goshim" compare --json -- sh -c "$hold 10 1 800 >/dev/null & $hold 20 1 800; wait" >"$work/t.json"
check "compare: the whole process tree: sh + hold 10 + hold 20 = 33 threads natively" \
	"v['native']['peak_threads'] == 33 and v['same_stdout']" "$work/t.json"

# A process that never makes a second thread runs as natively under goshim
# (lazy start): one OS thread, no handler, mask or fd of goshim's.
# shellcheck disable=SC2016 # the inner shell expands it
# The fds the shell inherits depend on who runs this script (a make's
# jobserver pipe may come and go): the check is that none is goshim's kind.
# The shell reads its own status with its read builtin: a child reading it
# (grep) could find the shell's mask as dash sets it around a fork, every
# signal blocked for a moment, natively too.
probe='while read -r k v; do case $k in Threads:|SigBlk:|SigIgn:|SigCgt:) echo "$k $v";; esac; done </proc/$$/status; ls -l /proc/$$/fd | grep -cE "eventpoll|eventfd|/proc/|/sys/fs/cgroup"'
nat=$(bounded 60 sh -c "$probe" 2>&1 || true)
gs=$(LD_PRELOAD=$lib bounded 60 sh -c "$probe" 2>&1 || true)
if [[ -n $nat && $nat == "$gs" ]] && grep -q '^Threads: 1$' <<<"$gs" && [[ ${gs##*$'\n'} == 0 ]]; then
	ok "lazy start: sh under goshim has 1 OS thread and the handlers and masks of a native one, no fd of goshim's"
else
	fail "lazy start: sh under goshim differs from native:"; diff <(echo "$nat") <(echo "$gs") || true
fi

# dash's wait builtin with a job still running sits in sigsuspend under
# the mask sigprocmask reported, after dash cleared its mask with
# sigsetmask(0): the job outlives the foreground command, so the wait
# reaches sigsuspend every time. With lazy start dash itself stays
# native; signal_mask_legacy keeps the
# sigsetmask path under test on goroutines.
hangs=0
for _ in 1 2 3 4 5; do
	timeout -k 1 10 env LD_PRELOAD="$lib" sh -c "$hold 2 1 300 >/dev/null & $hold 2 1 20; wait" \
		>/dev/null 2>&1 || hangs=$((hangs + 1))
done
if [[ $hangs -eq 0 ]]; then
	ok "sh under goshim: wait for a job that outlives the foreground command, 5 of 5 end"
else
	fail "sh under goshim: wait for a background job hung or failed $hangs of 5 times"
fi

st=$(status_of bounded 120 "$goshim" compare -- "$work/no-such-program")
if [[ $st -eq 2 ]]; then ok "compare: a program that does not exist is bad usage"; else fail "compare on a missing program: exit $st"; fi

echo "== total memory: memory cgroups"
mkdir "$work/layouts"
if bounded 60 python3 "$here/tests/tools/memcg_layouts.py" "$here/scripts" "$work/layouts"; then
	: # its ok lines say what passed
else
	fail "memcg layouts (tests/tools/memcg_layouts.py)"
fi

# procsample -c on a fake v2 cgroup (plain files): what it reads and how.
fake=$work/fakecg
mkdir "$fake"
: >"$fake/cgroup.procs"
echo 104857600 >"$fake/memory.current"
echo 209715200 >"$fake/memory.peak"
printf 'anon 1000\nkernel 20971520\nkernel_stack 65536\nsock 1048576\n' >"$fake/memory.stat"
printf 'low 0\nhigh 0\nmax 4\noom 2\noom_kill 2\n' >"$fake/memory.events"
st=0
bounded 60 "$B/tools/procsample" -c "$fake" -o "$work/fake.sum" -s "$work/fake.series" -- sleep 0.2 || st=$?
want='mem_cgroup 2 mem_total_peak_kib 204800 mem_kernel_peak_kib 21504 mem_sock_peak_kib 1024 mem_oom_kills 2'
got=$(grep -E '^mem_(cgroup|total_peak_kib|kernel_peak_kib|sock_peak_kib|oom_kills) ' "$work/fake.sum" | tr '\n' ' ')
if [[ $st -eq 0 && $got == "$want " && $(<"$fake/cgroup.procs") == 0 ]] &&
	awk 'NF != 7 || $4 != 102400 || $5 != 21504 || $6 != 1024 { bad = 1 } END { exit bad || NR == 0 }' "$work/fake.series"; then
	ok "procsample -c on a v2 cgroup: joins it ('0' to cgroup.procs), memory.peak, kernel + sock, oom_kill; series with the cgroup's columns"
else
	fail "procsample -c on a fake v2 cgroup: exit $st, summary '$got', series '$(head -n 1 "$work/fake.series")'"
fi

# The caller's own memory cgroup, found here without goshim's code: v2
# where its children can have the memory controller, else v1's. Empty
# when neither can be written.
memcg_parent() {
	local mnt rel
	mnt=$(awk '$(NF-2) == "cgroup2" { print $5; exit }' /proc/self/mountinfo)
	rel=$(sed -n 's/^0:://p' /proc/self/cgroup)
	if [[ -n $mnt && -n $rel ]] && grep -qw memory "$mnt$rel/cgroup.subtree_control" 2>/dev/null &&
		[[ -w $mnt$rel ]]; then
		echo "2 $mnt${rel%/}"
		return
	fi
	mnt=$(awk '$(NF-2) == "cgroup" && $NF ~ /(^|,)memory(,|$)/ { print $5; exit }' /proc/self/mountinfo)
	rel=$(awk -F: '$2 ~ /(^|,)memory(,|$)/ { print $3; exit }' /proc/self/cgroup)
	if [[ -n $mnt && -n $rel && -w $mnt$rel ]]; then
		echo "1 $mnt${rel%/}"
	fi
}
# outside_reading ENV...: hold 400 threads / 64 MiB under env ENV in a
# cgroup of this script's making; once it holds, the cgroup's total and
# kernel KiB.
outside_reading() {
	local cg=$cg_parent/tools-check-$$ ready=$work/ready.cg pid n=0 total kernel
	rm -f "$ready"
	mkdir "$cg"
	# shellcheck disable=SC2016 # the inner shell expands it
	env "$@" sh -c 'echo $$ >"$1/cgroup.procs" && exec "$2" 400 64 1500 "$3"' sh "$cg" "$hold" "$ready" >/dev/null &
	pid=$!
	while [[ ! -e $ready && $n -lt 600 ]]; do
		sleep 0.05
		n=$((n + 1))
	done
	sleep 0.2
	if [[ $cg_version == 2 ]]; then
		total=$(($(<"$cg/memory.current") / 1024))
		kernel=$(awk '$1 == "kernel" || $1 == "sock" { k += $2 } END { print int(k / 1024) }' "$cg/memory.stat")
	else
		total=$(($(<"$cg/memory.usage_in_bytes") / 1024))
		kernel=$(($(<"$cg/memory.kmem.usage_in_bytes") / 1024))
	fi
	echo "$total $kernel"
	reap "$pid" 120 || true
	rmdir "$cg"
}
read -r cg_version cg_parent < <(memcg_parent) || true
st=0
bounded 300 "$goshim" compare --json -- "$hold" 400 64 1500 >"$work/m.json" 2>"$work/m.err" || st=$?
if [[ -z ${cg_version:-} ]]; then
	echo "     (no writable memory cgroup here: the RSS-only path is checked)"
	check "compare without a memory cgroup: exit 0, total memory null, the reason given" \
		"v['native']['mem_total_peak_kib'] is None and v['mem_cgroup'] is None and v['mem_cgroup_unavailable']" "$work/m.json"
	if grep -q 'total memory not measured, RSS only: no memory cgroup to run in (' "$work/m.err"; then
		ok "compare without a memory cgroup: said so on stderr"
	else
		fail "compare without a memory cgroup: stderr '$(head -c 300 "$work/m.err")'"
	fi
else
	# (into files: a process substitution would run on past the read)
	outside_reading -u LD_PRELOAD >"$work/out.native"
	outside_reading LD_PRELOAD="$lib" >"$work/out.goshim"
	read -r nat_total nat_kernel <"$work/out.native"
	read -r gs_total gs_kernel <"$work/out.goshim"
	echo "     cgroup v$cg_version under $cg_parent, while holding: native $nat_total KiB ($nat_kernel kernel), goshim $gs_total KiB ($gs_kernel kernel)"
	check "compare --json: each side in its own v$cg_version memory cgroup" \
		"$st == 0 and v['mem_cgroup'] == 'v$cg_version' and v['mem_cgroup_unavailable'] is None" "$work/m.json"
	check "compare: hold 400 threads, 64 MiB: both sides' total memory >= 64 MiB" \
		"all(v[m]['mem_total_peak_kib'] >= 65536 for m in ('native', 'goshim'))" "$work/m.json"
	check "compare: native total memory within 15% of the outside reading ($nat_total KiB)" \
		"0.85 * $nat_total <= v['native']['mem_total_peak_kib'] <= 1.15 * $nat_total" "$work/m.json"
	check "compare: goshim total memory within 15% of the outside reading ($gs_total KiB)" \
		"0.85 * $gs_total <= v['goshim']['mem_total_peak_kib'] <= 1.15 * $gs_total" "$work/m.json"
	# (the kernel's share gets 1 MiB more: per-CPU charge caches)
	check "compare: native kernel share within 15% of the outside reading ($nat_kernel KiB)" \
		"0.85 * $nat_kernel - 1024 <= v['native']['mem_kernel_peak_kib'] <= 1.15 * $nat_kernel + 1024" "$work/m.json"
	check "compare: goshim kernel share within 15% of the outside reading ($gs_kernel KiB)" \
		"0.85 * $gs_kernel - 1024 <= v['goshim']['mem_kernel_peak_kib'] <= 1.15 * $gs_kernel + 1024" "$work/m.json"
	check "compare: 400 threads cost the kernel more natively than under goshim" \
		"v['native']['mem_kernel_peak_kib'] > v['goshim']['mem_kernel_peak_kib']" "$work/m.json"
	left=$(find "$cg_parent" -maxdepth 1 -name 'goshim-*' | head -n 3)
	if [[ -z $left ]]; then ok "compare: its cgroups are removed afterwards"; else fail "compare left cgroups: $left"; fi
	bounded 300 "$goshim" compare -- "$hold" 3 1 300 >"$work/m.txt" 2>&1
	if grep -qE '^peak total memory, MiB +[0-9.]+ +[0-9.]+ ' "$work/m.txt" &&
		grep -qE '^  of it kernel, MiB +[0-9.]+ +[0-9.]+ ' "$work/m.txt" &&
		grep -q "^total memory: .*memory cgroup (v$cg_version)" "$work/m.txt"; then
		ok "compare table: peak total memory and its kernel share, both sides"
	else
		fail "compare table without total memory:"; cat "$work/m.txt"
	fi
fi

echo "== goshim run"
out=$(bounded 60 "$goshim" run --procs 3 --debug schedtrace=0 -- printenv GOMAXPROCS GOSHIM_DEBUG LD_PRELOAD 2>/dev/null | tr '\n' ' ')
if [[ $out == "3 schedtrace=0 $lib " ]]; then ok "run --procs --debug: GOMAXPROCS, GOSHIM_DEBUG, LD_PRELOAD"; else fail "run env: '$out'"; fi
st=$(status_of bounded 60 "$goshim" run -- sh -c 'exit 7')
if [[ $st -eq 7 ]]; then ok "run: exits as the program"; else fail "run: exit $st, wanted 7"; fi

echo "== goshim dump"
# check_dump FILE LABEL: FILE is a dump of tests/tools/parked: main, and a
# goroutine in each wait with the function of the program's that waits.
check_dump() {
	python3 - "$1" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
gs, cur = {}, None
for line in text.splitlines():
    m = re.match(r"^goroutine (\d+) \[([^\]]*)\]:( \(main\))?$", line)
    if m:
        cur = gs.setdefault(int(m.group(1)), [m.group(2), [], bool(m.group(3))])
    elif cur is not None and line and not line.startswith("\t"):
        cur[1].append(line.split("+0x")[0])
    elif not line:
        cur = None
want = {"mutex": "mutex_waiter", "cond": "cond_waiter", "sleep": "sleep_waiter",
        r"read fd \d+": "read_waiter"}
missing = [f"[{r}] with {fn}" for r, fn in want.items()
           if not any(re.fullmatch(r, st) and fn in fr for st, fr, _ in gs.values())]
main = [g for g in gs.values() if g[2]]
if not (1 in gs and gs[1][2] and "main" in gs[1][1]):
    missing.append("goroutine 1 (main) with main in its backtrace")
if not text.startswith("goshim dump: goroutines of pid "):
    missing.append("the 'goshim dump: goroutines of pid' line first")
print("; ".join(missing))
sys.exit(1 if missing else 0)
PY
}
# dump_parked MODE: tests/tools/parked MODE under goshim, its stderr to a
# file; while it waits `goshim dump` must print its goroutines (twice: a
# second request is answered as the first), and afterwards it must run on
# to its normal end, its masks and SIGQUIT's disposition as they were, and
# nothing of the dump on its stderr.
dump_parked() {
	local mode=$1 ready=$work/ready.$1 go=$work/go.$1 pid st n=0 why=
	rm -f "$ready" "$go"
	LD_PRELOAD=$lib "$parked" "$mode" "$ready" "$go" >"$work/parked.$mode.out" 2>"$work/parked.$mode.err" &
	pid=$!
	while [[ ! -e $ready && $n -lt 1200 ]] && kill -0 "$pid" 2>/dev/null; do
		sleep 0.05
		n=$((n + 1))
	done
	# a goroutine caught between two of its sleeps: ask again
	for try in 1 2 3; do
		st=0
		bounded 60 "$goshim" dump "$pid" >"$work/dump.$mode" 2>"$work/dump.$mode.err" || st=$?
		if [[ $st -eq 0 ]] && why=$(check_dump "$work/dump.$mode"); then break; fi
		why="exit $st: ${why:-} $(head -c 300 "$work/dump.$mode.err")"
	done
	if [[ $st -eq 0 && -z $why ]]; then
		ok "dump ($mode): main and four waits (mutex, cond, sleep, read fd), each with the program's function that waits"
	else
		fail "dump ($mode): $why"; head -n 40 "$work/dump.$mode"
	fi
	st=0
	bounded 60 "$goshim" dump --timeout 10 "$pid" >"$work/dump2.$mode" 2>&1 || st=$?
	if [[ $st -eq 0 ]] && grep -q '^goroutine 1 \[.*(main)$' "$work/dump2.$mode"; then
		ok "dump ($mode): asked again, answered again"
	else
		fail "dump ($mode) a second time: exit $st: $(head -c 300 "$work/dump2.$mode")"
	fi
	if kill -0 "$pid" 2>/dev/null; then ok "dump ($mode): the program still runs"; else fail "dump ($mode): the program is gone"; fi
	touch "$go"
	st=0
	reap "$pid" 60 || st=$?
	local want="parked $mode: 4 threads joined, read 1 byte, 0 EINTR, 0 masks changed, SIGQUIT disposition kept"
	if [[ $st -eq 0 && $(<"$work/parked.$mode.out") == "$want" ]]; then
		ok "dump ($mode): then the program ran to its end: exit 0, no EINTR, masks and SIGQUIT kept"
	else
		fail "dump ($mode): afterwards exit $st, stdout '$(<"$work/parked.$mode.out")'"
	fi
	if grep -q 'goroutine' "$work/parked.$mode.err"; then
		fail "dump ($mode): the dump reached the program's stderr too"; head -n 5 "$work/parked.$mode.err"
	else
		ok "dump ($mode): the program's stderr has none of it"
	fi
}
dump_parked blockall
dump_parked ignquit

# dump_refused WHAT MESSAGE ENV...: sleep 30 run with ENV: `goshim dump`
# says MESSAGE, exits 1, and sleep sleeps on, undisturbed.
dump_refused() {
	local what=$1 msg=$2 pid st=0
	shift 2
	env "$@" sleep 30 &
	pid=$!
	local n=0
	# exec'd into sleep, its libraries mapped
	while [[ $(readlink "/proc/$pid/exe" 2>/dev/null) != */sleep && $n -lt 200 ]]; do sleep 0.05; n=$((n + 1)); done
	sleep 0.2
	bounded 60 "$goshim" dump "$pid" >"$work/nd.out" 2>"$work/nd.err" || st=$?
	local state
	state=$(awk '{ print $3 }' "/proc/$pid/stat" 2>/dev/null || echo gone)
	if [[ $st -eq 1 ]] && grep -q "$pid: $msg" "$work/nd.err" && [[ ! -s $work/nd.out && $state == S ]]; then
		ok "dump of $what: '$(tail -n 1 "$work/nd.err")', exit 1, it sleeps on"
	else
		fail "dump of $what: exit $st, state $state: $(head -c 300 "$work/nd.err")"
	fi
	kill "$pid" 2>/dev/null || true
	reap "$pid" 30 || true
}
dump_refused "a native sleep" "not under goshim (libgoshim.so is not loaded)" -u LD_PRELOAD
dump_refused "sleep with GOSHIM_DISABLE=1" "not under goshim (GOSHIM_DISABLE=1)" LD_PRELOAD="$lib" GOSHIM_DISABLE=1
# One thread under goshim: a dump, or, where the runtime starts only with a
# second thread, that it has not started.
env LD_PRELOAD="$lib" sleep 30 &
pid=$!
sleep 0.5
st=0
bounded 60 "$goshim" dump "$pid" >"$work/one.out" 2>"$work/one.err" || st=$?
if [[ $st -eq 0 ]] && grep -q '^goroutine 1 \[sleep\]: (main)$' "$work/one.out"; then
	ok "dump of a one-thread sleep under goshim: its one goroutine"
elif [[ $st -eq 1 ]] && grep -q "$pid: not under goshim: its runtime not started (one thread)" "$work/one.err"; then
	ok "dump of a one-thread sleep under goshim: runtime not started (one thread)"
else
	fail "dump of a one-thread sleep under goshim: exit $st: $(head -c 300 "$work/one.err") $(head -c 300 "$work/one.out")"
fi
kill "$pid" 2>/dev/null || true
reap "$pid" 30 || true
st=$(status_of bounded 60 "$goshim" dump 999999999)
if [[ $st -eq 1 ]]; then ok "dump of no such process: exit 1"; else fail "dump of no such process: exit $st"; fi

echo "== goshim stress"
ulimit -Sn "$(ulimit -Hn)"
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
st=0
bounded 600 "$goshim" stress --server "$httpd $port" --port "$port" --conns 50 --requests 3000 \
	--duration 60 --hits /hits --json --svg "$work/s.svg" >"$work/s.json" 2>"$work/s.err" || st=$?
if [[ $st -eq 0 ]]; then ok "stress: exit 0"; else fail "stress: exit $st: $(tail -n 3 "$work/s.err")"; fi
check "stress --json: both runs, zero errors, all 3000 answered" \
	"all(l[m]['errors'] == 0 and l[m]['sent'] == l[m]['total'] == 3000 for l in v['levels'] for m in ('native', 'goshim'))" "$work/s.json"
check "stress: the server's /hits counter = requests answered" \
	"all(l[m]['hits'] == l[m]['total'] for l in v['levels'] for m in ('native', 'goshim'))" "$work/s.json"
check "stress: native server peak threads >= 51, goshim <= GOMAXPROCS+4" \
	"v['levels'][0]['native']['peak_threads'] >= 51 and v['levels'][0]['goshim']['peak_threads'] <= $procs + 4" "$work/s.json"
python3 -c 'import json, sys; l = json.load(open(sys.argv[1]))["levels"][0]
print("     (peak threads: native %s, goshim %s)" % (l["native"]["peak_threads"], l["goshim"]["peak_threads"]))' "$work/s.json"
check "stress: latencies ordered p50 <= p90 <= p99 <= max" \
	"all(0 < l[m]['p50_us'] <= l[m]['p90_us'] <= l[m]['p99_us'] <= l[m]['max_us'] for l in v['levels'] for m in ('native', 'goshim'))" "$work/s.json"
check "stress --json: the server's total memory both ways where a cgroup measures it" \
	"all((l[m]['mem_total_peak_kib'] or 0) > 0 if v['mem_cgroup'] else l[m]['mem_total_peak_kib'] is None for l in v['levels'] for m in ('native', 'goshim'))" "$work/s.json"
if python3 -c 'import json, sys, xml.etree.ElementTree as E; r = E.parse(sys.argv[1]).getroot(); n = 3 if json.load(open(sys.argv[2]))["mem_cgroup"] else 2; m = [p.get("data-mode") for p in r.iter("{http://www.w3.org/2000/svg}polyline")]; sys.exit(0 if sorted(m) == ["goshim"] * n + ["native"] * n else 1)' "$work/s.svg" "$work/s.json"; then
	ok "stress --svg: well-formed, both series"
else
	fail "stress --svg"
fi
st=0
bounded 600 "$goshim" stress --server "$echod $port" --port "$port" --proto echo --conns 20 \
	--requests 1000 --duration 60 --json >"$work/e.json" 2>"$work/e.err" || st=$?
if [[ $st -eq 0 ]]; then ok "stress --proto echo: exit 0"; else fail "stress --proto echo: exit $st: $(tail -n 3 "$work/e.err")"; fi
check "stress --proto echo: zero errors, all 1000 echoed, both runs" \
	"all(l[m]['errors'] == 0 and l[m]['sent'] == l[m]['total'] == 1000 for l in v['levels'] for m in ('native', 'goshim'))" "$work/e.json"
if [[ -e /proc/net/tcp ]] && awk -v p="$(printf ':%04X' "$port")" '$2 ~ p"$" && $4 == "0A" { found = 1 } END { exit !found }' /proc/net/tcp; then
	fail "stress: the server still listens on $port afterwards"
else
	ok "stress: the server is gone afterwards"
fi

st=0
bounded 120 "$goshim" stress --server "exit 3" --port "$port" --conns 5 --duration 1 >/dev/null 2>"$work/x.err" || st=$?
if [[ $st -eq 1 ]] && grep -q "did not listen on 127.0.0.1:$port (it exited)" "$work/x.err"; then
	ok "stress: a server that exits at once: said so, exit 1"
else
	fail "stress with a server that exits (exit $st): $(head -c 300 "$work/x.err")"
fi
"$httpd" "$port" &
squatter=$!
n=0
while ! awk -v p="$(printf ':%04X' "$port")" '$2 ~ p"$" && $4 == "0A" { f = 1 } END { exit !f }' /proc/net/tcp && [[ $n -lt 200 ]]; do
	sleep 0.05
	n=$((n + 1))
done
st=0
bounded 120 "$goshim" stress --server "$httpd $port" --port "$port" --conns 5 --duration 1 >/dev/null 2>"$work/x.err" || st=$?
kill "$squatter"
reap "$squatter" 30 || true
if [[ $st -eq 1 ]] && grep -q "something already listens on port $port" "$work/x.err"; then
	ok "stress: a port already taken: said so, exit 1"
else
	fail "stress on a taken port (exit $st): $(head -c 300 "$work/x.err")"
fi

# --mem-limit 4M: the bundled server holds a few connections in 4 MiB, then
# the kernel kills it at the limit, both ways; the cgroups go afterwards.
st=0
bounded 300 "$goshim" stress --server "$httpd $port" --port "$port" --mem-limit 4M --json \
	>"$work/l.json" 2>"$work/l.err" || st=$?
if [[ -z ${cg_version:-} ]]; then
	if [[ $st -eq 1 ]] && grep -q 'no memory cgroup to run in: ' "$work/l.err"; then
		ok "stress --mem-limit without a memory cgroup: exit 1, says why"
	else
		fail "stress --mem-limit without a memory cgroup: exit $st: $(head -c 300 "$work/l.err")"
	fi
else
	if [[ $st -eq 0 ]]; then ok "stress --mem-limit 4M: exit 0"; else fail "stress --mem-limit 4M: exit $st: $(tail -n 3 "$work/l.err")"; fi
	check "stress --mem-limit 4M: both ways some connections held, then the kernel killed the server at the limit" \
		"all(0 < v[m]['held'] < 2000 and v[m]['ending'] == 'oom' and v[m]['signal'] == 9 and v[m]['oom_kills'] >= 1 for m in ('native', 'goshim'))" "$work/l.json"
	check "stress --mem-limit 4M: the total memory peaked at the limit, not above" \
		"all(3 * 1024 <= v[m]['mem_total_peak_kib'] <= 4 * 1024 + 256 and v['mem_limit_kib'] == 4096 for m in ('native', 'goshim'))" "$work/l.json"
	# The threads are read at a sample, the connections counted as
	# answered before it: near the limit the kernel reclaims and a few
	# accepted ones (a thread each) are not answered yet. 1.03 was usual,
	# and one CI run went past 1.1; goshim's is about 0.02.
	check "stress --mem-limit 4M: natively one OS thread per connection held" \
		"v['native']['per_conn'] is None or abs(v['native']['per_conn']['threads'] - 1) < 0.25" "$work/l.json"
	python3 -c 'import json, sys; v = json.load(open(sys.argv[1]))
t = {m: "%.2f" % v[m]["per_conn"]["threads"] if v[m]["per_conn"] else "none" for m in ("native", "goshim")}
print("     (held in 4 MiB: native %d, goshim %d; OS threads per connection: native %s, goshim %s)" % (v["native"]["held"], v["goshim"]["held"], t["native"], t["goshim"]))' "$work/l.json"
	left=$(find "$cg_parent" -maxdepth 1 -name 'goshim-*' | head -n 3)
	if [[ -z $left ]]; then ok "stress --mem-limit: its cgroups are removed afterwards"; else fail "stress --mem-limit left cgroups: $left"; fi
fi
if awk -v p="$(printf ':%04X' "$port")" '$2 ~ p"$" && $4 == "0A" { found = 1 } END { exit !found }' /proc/net/tcp; then
	fail "stress --mem-limit: the server still listens on $port afterwards"
fi

echo "== goshim install"
prefix=$work/prefix
bounded 60 "$goshim" install "$prefix" >/dev/null
out=$(bounded 60 "$prefix/bin/goshim" run -- printenv LD_PRELOAD)
if [[ $out == "$prefix/lib/goshim/libgoshim.so" && -f $prefix/share/man/man1/goshim.1 ]]; then
	ok "install: run finds the library in the prefix; man page there"
else
	fail "install: run gave LD_PRELOAD='$out'"
fi
bounded 300 "$prefix/bin/goshim" compare --json -- "$hold" 5 1 10 >"$work/i.json"
check "installed compare: native peak threads 6" "v['native']['peak_threads'] == 6" "$work/i.json"

echo "== bad usage: exit 2 and a message"
bad() {
	local st=0
	bounded 60 "$goshim" "$@" >/dev/null 2>"$work/err" || st=$?
	if [[ $st -eq 2 ]] && grep -q 'goshim' "$work/err"; then
		ok "goshim $* -> 2: $(tail -n 1 "$work/err")"
	else
		fail "goshim $* -> exit $st: $(head -c 200 "$work/err")"
	fi
}
bad
bad frobnicate
bad run
bad run --procs x -- true
bad run --bogus -- true
bad compare
bad compare --runs 0 -- true
bad compare --bogus -- true
bad stress --port 1
bad stress --server true --port 1 --proto ftp
bad stress --server true --port 1 --conns 10,x
bad stress --server true --port 1 --mem-limit 100K
bad stress --server true --port 1 --mem-limit lots
bad stress --server true --port 1 --mem-limit 64M --conns 10
bad stress --server true --port 1 --max-conns 10
bad install a b
bad dump
bad dump x
bad dump 1 2
bad dump --bogus 1
bad dump --timeout 0 1
for sub in run compare stress dump install; do
	st=$(status_of bounded 60 "$goshim" "$sub" --help)
	if [[ $st -eq 0 ]]; then ok "goshim $sub --help"; else fail "goshim $sub --help: exit $st"; fi
done

if [[ $fails -ne 0 ]]; then
	echo "tools-check: $fails failed"
	exit 1
fi
echo "tools-check: all passed"
