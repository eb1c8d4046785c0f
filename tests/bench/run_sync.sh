#!/usr/bin/env bash
# tests/bench/run_sync.sh BUILD_DIR: builds the synchronisation, sleep and
# memory benchmarks (sync_bench, sync_sleep, mem_blocked; C with cc -O2
# -pthread into BUILD_DIR/bench, Go with GO111MODULE=off go build), runs each
# natively, under goshim (LD_PRELOAD=BUILD_DIR/libgoshim.so) and as Go, every
# run under tests/tools/threadpeak (peak OS threads), and prints one table.
#
#   cond ping-pong     two threads, one mutex, two condvars: ns per round trip
#                      (Go: sync.Mutex + sync.Cond; and unbuffered channels)
#   lock+unlock        a free pthread_mutex in a loop, ns per pair, with one
#                      thread in the process and with a second one alive
#   64 on one mutex    64 threads increment one counter under one mutex
#   10k x 100 sleeps   10,000 threads each nanosleep 1 ms 100 times: wall ms
#                      and peak OS threads (Go: time.Sleep)
#   RSS per blocked    N threads blocked on one condvar, VmRSS delta / N:
#                      native at 10k (it stops near 32k threads on default
#                      sysctls), goshim at 10k and 100k, Go at 10k and 100k,
#                      and the time to create them all
#   a million blocked  goshim and Go only (natively pid_max stops it): the
#                      time to create them all, RSS, peak OS threads;
#                      BENCH_MILLION=N sets the count, 0 leaves it out (it
#                      needs about 13 GiB under goshim)
#
# Numbers are informational: nothing here fails on time. A run that fails
# or times out (SYNC_BENCH_TIMEOUT seconds, default 120) is noted, shows as
# '-', and makes the exit status 1. GOMAXPROCS from the environment applies
# to the goshim and Go runs alike.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
if [[ $# -ne 1 ]]; then
	echo "usage: $0 BUILD_DIR" >&2
	exit 2
fi
B=$1
out=$B/bench
mkdir -p "$out/sync-logs"
tmo=${SYNC_BENCH_TIMEOUT:-120}
million=${BENCH_MILLION:-1000000}
status=0

cflags=(-O2 -Wall -Wextra -Werror -std=gnu11 -pthread)
for p in sync_bench sync_sleep mem_blocked; do
	${CC:-cc} "${cflags[@]}" -o "$out/$p" "$here/$p.c"
done
# our own copy of the sampler (run-progs.sh keeps its own in BUILD_DIR/tools)
tp=$out/threadpeak
if [[ ! -x $tp || $here/../tools/threadpeak.c -nt $tp ]]; then
	${CC:-cc} -O2 -Wall -Wextra -Werror -std=gnu11 -o "$tp" "$here/../tools/threadpeak.c"
fi

have_go=
if command -v go >/dev/null 2>&1; then
	# a cache of our own: HOME may be unset or read-only (CI)
	export GOCACHE=${GOCACHE:-$(realpath "$out")/go-cache}
	export GOPATH=${GOPATH:-$(realpath "$out")/go-path}
	have_go=1
	for p in sync_bench sync_sleep mem_blocked; do
		if ! GO111MODULE=off go build -o "$out/${p}_go" "$here/$p.go"; then
			echo "note: go build of $p.go failed; no Go column"
			have_go=
			break
		fi
	done
else
	echo "note: 'go' not found; no Go column"
fi

lib=
if [[ -f $B/libgoshim.so ]]; then
	lib=$(realpath "$B/libgoshim.so")
else
	echo "note: $B/libgoshim.so not found; no goshim column"
fi

# ---- running ----------------------------------------------------------------
declare -A val=()  # val[KIND,TAG,NAME] from the "NAME VALUE" lines
declare -A peak=() # peak[KIND,TAG]: peak OS threads of that run
running=
# shellcheck disable=SC2317 # reached through the trap
on_interrupt() {
	if [[ -n $running ]]; then
		kill -TERM -- "-$running" 2>/dev/null || kill -TERM "$running" 2>/dev/null || true
	fi
	echo "run_sync: interrupted" >&2
	exit 130
}
trap on_interrupt INT TERM

# run KIND TAG CMD...: CMD under timeout and threadpeak; logs in
# $out/sync-logs/KIND-TAG.{out,err,peak}
run() {
	local kind=$1 tag=$2
	shift 2
	local p=$out/sync-logs/$kind-$tag st=0
	rm -f "$p.peak"
	THREADPEAK_OUT=$p.peak timeout -k 5 "$tmo" "$tp" "$@" >"$p.out" 2>"$p.err" </dev/null &
	running=$!
	wait "$running" 2>/dev/null || st=$?
	running=
	if [[ $st -ne 0 ]]; then
		local why="exit status $st"
		if [[ $st -eq 124 || ($st -eq 137 && ! -s $p.peak) ]]; then
			why="timed out after ${tmo}s"
		elif [[ $st -gt 128 && $st -lt 160 ]]; then
			why="killed by SIG$(kill -l $((st - 128)) 2>/dev/null || echo $((st - 128)))"
		fi
		local last
		last=$(tail -n 1 "$p.err" 2>/dev/null || true)
		echo "note: $kind $tag ($*): $why${last:+; stderr: $last}"
		status=1
		return 0
	fi
	local name v
	while read -r name v; do
		[[ -n $name ]] && val[$kind,$tag,$name]=$v
	done <"$p.out"
	local pk
	if read -r pk _ <"$p.peak" 2>/dev/null; then
		peak[$kind,$tag]=$pk
	fi
}

# the same runs for the native and goshim columns
c_runs() {
	local kind=$1
	shift
	run "$kind" pingpong "$@" "$out/sync_bench" pingpong
	run "$kind" lock "$@" "$out/sync_bench" lock
	run "$kind" contend "$@" "$out/sync_bench" contend
	run "$kind" sleep "$@" "$out/sync_sleep" 10000 100
	run "$kind" mem10k "$@" "$out/mem_blocked" 10000
}

c_runs native env -u LD_PRELOAD
if [[ -n $lib ]]; then
	c_runs goshim env LD_PRELOAD="$lib"
	run goshim mem100k env LD_PRELOAD="$lib" "$out/mem_blocked" 100000
	[[ $million -eq 0 ]] ||
		run goshim mem1m env LD_PRELOAD="$lib" "$out/mem_blocked" "$million"
fi
if [[ -n $have_go ]]; then
	run go pingpong "$out/sync_bench_go" pingpong
	run go lock "$out/sync_bench_go" lock
	run go contend "$out/sync_bench_go" contend
	run go sleep "$out/sync_sleep_go" 10000 100
	run go mem10k "$out/mem_blocked_go" 10000
	run go mem100k "$out/mem_blocked_go" 100000
	[[ $million -eq 0 ]] || run go mem1m "$out/mem_blocked_go" "$million"
fi

# ---- the table --------------------------------------------------------------
ratio() { # A B -> A/B, or - when either is missing
	if [[ -n $1 && -n $2 ]]; then
		awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.3gx", a / b; else print "-" }'
	else
		echo -
	fi
}
# get KIND TAG NAME [SCALE]: the value (divided by SCALE), or empty; NAME
# "peak" is the run's peak OS thread count
get() {
	local v
	if [[ $3 == peak ]]; then v=${peak[$1,$2]:-}; else v=${val[$1,$2,$3]:-}; fi
	if [[ -n $v && -n ${4:-} ]]; then
		v=$(awk -v a="$v" -v s="$4" 'BEGIN { printf "%.1f", a / s }')
	fi
	echo "$v"
}
line() { printf '%-34s %-14s %10s %10s %10s %13s %10s  %s\n' "$@"; }
# row LABEL UNIT TARGET TAG NAME [SCALE] [GO_TAG GO_NAME]
row() {
	local label=$1 unit=$2 target=$3 tag=$4 name=$5 scale=${6:-}
	local gtag=${7:-$tag} gname=${8:-$name}
	local nat gs g
	nat=$(get native "$tag" "$name" "$scale")
	gs=$(get goshim "$tag" "$name" "$scale")
	g=$(get go "$gtag" "$gname" "$scale")
	line "$label" "$unit" "${nat:--}" "${gs:--}" "${g:--}" \
		"$(ratio "$gs" "$nat")" "$(ratio "$gs" "$g")" "$target"
}

echo
echo "synchronisation, sleep and memory; GOMAXPROCS=${GOMAXPROCS:-$(nproc)} ($(nproc) CPUs), $(uname -r)"
echo "targets (not asserted): cond ping-pong goshim >= 10x faster than native;"
echo "  uncontended lock goshim <= 1.3x native; 64 on one mutex goshim >= native;"
echo "  RSS goshim <= 10 KiB per blocked thread"
echo "ratios are of the values as printed: for ns, ms, threads and KiB lower is"
echo "better, for Mops/s higher"
line what unit native goshim Go goshim/native goshim/Go target
row "cond ping-pong" "ns/round trip" "goshim/native <= 0.1" pingpong cond_pingpong
row "  Go: unbuffered channels" "ns/round trip" "" pingpong none "" pingpong chan_pingpong
row "lock+unlock, 1 thread" "ns" "goshim/native <= 1.3" lock lock_uncontended
row "lock+unlock, 2nd thread alive (1)" "ns" "goshim/native <= 1.3" lock lock_uncontended_mt "" lock lock_uncontended
row "64 threads, one mutex" "Mops/s" "goshim/native >= 1" contend mutex_contended64 1000000
row "10k threads x 100 sleeps of 1 ms" "wall ms" "" sleep sleep_wall_ms
row "  peak OS threads" "threads" "" sleep peak
row "10k blocked on a condvar" "KiB/thread" "goshim <= 10" mem10k rss_kib_per_blocked
row "  peak OS threads" "threads" "" mem10k peak
row "100k blocked on a condvar (2)" "KiB/thread" "goshim <= 10" mem100k rss_kib_per_blocked
row "  peak OS threads" "threads" "" mem100k peak
row "  time to create them all" "ms" "goshim/Go <= 1.5" mem100k create_all_ms
if [[ $million -ne 0 ]]; then
	row "$million blocked: time to create (3)" "ms" "goshim/Go <= 1.5" mem1m create_all_ms
	row "  RSS" "KiB/thread" "" mem1m rss_kib_per_blocked
	row "  peak OS threads" "threads" "" mem1m peak
fi
echo "(1) Go has one figure for both lock+unlock rows (a Go program always has"
echo "    several threads)."
echo "(2) no native run: natively pthread_create fails near 32k threads on"
echo "    default sysctls (pid_max 32768, vm.max_map_count 65530)."
[[ $million -eq 0 ]] || echo "(3) BENCH_MILLION=N sets the count (0 leaves the row out); about 13 GiB
    under goshim at a million (RSS and page tables), 3 GiB as Go."
echo "logs: $out/sync-logs"
exit "$status"
