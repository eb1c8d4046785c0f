#!/usr/bin/env bash
# tests/bench/run_sysmon.sh BUILD_DIR: the sysmon benchmark.
# Builds tests/bench/sysmon_stall.c (cc -O2 -pthread into BUILD_DIR/bench)
# and sysmon_stall.go (GO111MODULE=off go build; no Go column without go),
# runs each mode natively, under goshim (LD_PRELOAD=BUILD_DIR/libgoshim.so)
# and as Go, and prints one table:
#
#   stall, MODE       how late a thread sleeping to each 1 ms boundary woke
#                     (max and p99 over 1 s) while others: fsync 4 KiB in a
#                     loop (4 threads), spin with no calls (4), block in a
#                     raw read no library call can see (2), or nothing
#   syscall()         ns per syscall(SYS_getppid): natively the call, under
#                     goshim entersyscall + the call + exitsyscall; Go's
#                     syscall.Syscall and RawSyscall the same pair
#
# The cost of an entersyscall/exitsyscall pair is the difference of the
# two syscall() rows. Numbers are informational: nothing fails on time; a
# run that fails or times out (SYSMON_BENCH_TIMEOUT seconds, default 30)
# shows as '-' with a note and makes the exit status 1 (Go's raw mode
# shows "hung": its sysmon cannot see a RawSyscall). GOMAXPROCS from the environment
# applies to the goshim and Go runs alike.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
if [[ $# -ne 1 ]]; then
	echo "usage: $0 BUILD_DIR" >&2
	exit 2
fi
B=$1
out=$B/bench
mkdir -p "$out/sysmon-logs"
tmo=${SYSMON_BENCH_TIMEOUT:-30}
status=0

${CC:-cc} -O2 -Wall -Wextra -Werror -std=gnu11 -pthread \
	-o "$out/sysmon_stall" "$here/sysmon_stall.c"
have_go=
if command -v go >/dev/null 2>&1; then
	export GOCACHE=${GOCACHE:-$(realpath "$out")/go-cache}
	export GOPATH=${GOPATH:-$(realpath "$out")/go-path}
	if GO111MODULE=off go build -o "$out/sysmon_stall_go" "$here/sysmon_stall.go"; then
		have_go=1
	else
		echo "note: go build of sysmon_stall.go failed; no Go column"
	fi
else
	echo "note: 'go' not found; no Go column"
fi
lib=
if [[ -f $B/libgoshim.so ]]; then
	lib=$(realpath "$B/libgoshim.so")
else
	echo "note: $B/libgoshim.so not found; no goshim column"
fi

declare -A val=() # val[KIND,MODE,NAME] from the "NAME VALUE" lines
# run KIND MODE CMD...
run() {
	local kind=$1 mode=$2 st=0
	shift 2
	local p=$out/sysmon-logs/$kind-$mode
	timeout -k 5 "$tmo" "$@" "$mode" >"$p.out" 2>"$p.err" </dev/null || st=$?
	if [[ $st -ne 0 ]]; then
		local why="exit status $st"
		[[ $st -eq 124 || $st -eq 137 ]] && why="timed out after ${tmo}s"
		echo "note: $kind $mode: $why"
		status=1
		return 0
	fi
	local name v
	while read -r name v; do
		[[ -n $name ]] && val[$kind,$mode,$name]=$v
	done <"$p.out"
}

for m in none fsync spin raw pair; do
	run native "$m" env -u LD_PRELOAD "$out/sysmon_stall"
	if [[ -n $lib ]]; then run goshim "$m" env LD_PRELOAD="$lib" "$out/sysmon_stall"; fi
	if [[ -n $have_go && $m != raw ]]; then run go "$m" "$out/sysmon_stall_go"; fi
done
# Go's sysmon cannot see a RawSyscall: at GOMAXPROCS <= 2 the ticker never
# runs again. Shown as "hung" when it has not finished in 5 s.
if [[ -n $have_go ]]; then
	st=0
	timeout -k 2 5 "$out/sysmon_stall_go" raw >"$out/sysmon-logs/go-raw.out" 2>&1 </dev/null || st=$?
	if [[ $st -eq 124 || $st -eq 137 ]]; then
		val[go,raw,stall_max_us]=hung
		val[go,raw,stall_p99_us]=hung
	else
		while read -r name v; do
			[[ -n $name ]] && val[go,raw,$name]=$v
		done <"$out/sysmon-logs/go-raw.out"
	fi
fi

get() { echo "${val[$1,$2,$3]:--}"; }
line() { printf '%-32s %-6s %10s %10s %10s\n' "$@"; }
echo
echo "sysmon: stalls and the syscall wrapper; GOMAXPROCS=${GOMAXPROCS:-$(nproc)} ($(nproc) CPUs), $(uname -r)"
line what unit native goshim Go
for m in none fsync spin raw; do
	line "stall max, others: $m" us "$(get native $m stall_max_us)" \
		"$(get goshim $m stall_max_us)" "$(get go $m stall_max_us)"
	line "stall p99, others: $m" us "$(get native $m stall_p99_us)" \
		"$(get goshim $m stall_p99_us)" "$(get go $m stall_p99_us)"
done
line "syscall(SYS_getppid)" ns "$(get native pair syscall_ns)" \
	"$(get goshim pair syscall_ns)" "$(get go pair syscall_ns)"
line "  Go: RawSyscall (no pair)" ns - - "$(get go pair rawsyscall_ns)"
echo "entersyscall+exitsyscall = the goshim (Go) syscall row minus native (RawSyscall)"
echo "logs: $out/sysmon-logs"
exit "$status"
