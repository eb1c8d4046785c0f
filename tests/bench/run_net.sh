#!/usr/bin/env bash
# tests/bench/run_net.sh BUILD_DIR: the netpoller at scale. Builds the
# echo servers (net_server.c with cc -O2 -pthread, net_server.go with
# GO111MODULE=off go build) and the load generator
# (scripts/tools/net_load.c) into BUILD_DIR/bench, then for 100, 1,000 and 10,000 connections runs the
# thread-per-connection server natively, under goshim
# (LD_PRELOAD=BUILD_DIR/libgoshim.so) and the goroutine-per-connection Go
# server, each driven by the same native single-threaded epoll load
# generator (closed loop, one 64-byte request in flight per connection),
# and prints one table: requests/s, p50 and p99 latency, the server's CPU
# time and context switches per request (start-up included; less disturbed
# than requests/s by other load on the machine), peak OS threads
# (tests/tools/threadpeak) and peak RSS (its VmHWM), with ratios.
#
# Environment: NET_BENCH_CONNS (default "100 1000 10000"),
# NET_BENCH_WARMUP_MS (500), NET_BENCH_MEASURE_MS (3000),
# NET_BENCH_TIMEOUT (seconds per run, 120). GOMAXPROCS from the
# environment applies to the goshim and Go servers alike. Numbers are
# informational: nothing here fails on time; a run that fails is noted,
# shows as '-', and makes the exit status 1.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
if [[ $# -ne 1 ]]; then
	echo "usage: $0 BUILD_DIR" >&2
	exit 2
fi
B=$1
out=$B/bench
logs=$out/net-logs
mkdir -p "$logs"
conns_list=${NET_BENCH_CONNS:-100 1000 10000}
warm=${NET_BENCH_WARMUP_MS:-500}
measure=${NET_BENCH_MEASURE_MS:-3000}
tmo=${NET_BENCH_TIMEOUT:-120}
status=0

# The servers and the generator hold one fd per connection each.
ulimit -Sn "$(ulimit -Hn)"

cflags=(-O2 -Wall -Wextra -Werror -std=gnu11 -pthread)
${CC:-cc} "${cflags[@]}" -o "$out/net_server" "$here/net_server.c"
${CC:-cc} "${cflags[@]}" -o "$out/net_load" "$here/../../scripts/tools/net_load.c"
tp=$out/threadpeak
if [[ ! -x $tp || $here/../tools/threadpeak.c -nt $tp ]]; then
	${CC:-cc} -O2 -Wall -Wextra -Werror -std=gnu11 -o "$tp" "$here/../tools/threadpeak.c"
fi

have_go=
if command -v go >/dev/null 2>&1; then
	# a cache of our own: HOME may be unset or read-only (CI)
	export GOCACHE=${GOCACHE:-$(realpath "$out")/go-cache}
	export GOPATH=${GOPATH:-$(realpath "$out")/go-path}
	if GO111MODULE=off go build -o "$out/net_server_go" "$here/net_server.go"; then
		have_go=1
	else
		echo "note: go build of net_server.go failed; no Go column"
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

# ---- running ----------------------------------------------------------------
declare -A val=() # val[KIND,CONNS,NAME]: load generator's and server's "NAME VALUE" lines, and peak
server=
# shellcheck disable=SC2317 # reached through the trap
on_interrupt() {
	if [[ -n $server ]]; then
		kill -TERM -- "-$server" 2>/dev/null || kill -TERM "$server" 2>/dev/null || true
	fi
	echo "run_net: interrupted" >&2
	exit 130
}
trap on_interrupt INT TERM

# run KIND CONNS CMD...: the server CMD CONNS under timeout and threadpeak,
# the load generator against it; logs in $logs/KIND-CONNS.{out,err,peak,load}
run() {
	local kind=$1 n=$2
	shift 2
	local p=$logs/$kind-$n st=0 port= why=
	rm -f "$p.peak" "$p.out" "$p.load"
	THREADPEAK_OUT=$p.peak timeout -k 5 "$tmo" "$tp" "$@" "$n" >"$p.out" 2>"$p.err" </dev/null &
	server=$!
	for _ in $(seq 200); do
		# (the server may not have made the file yet)
		port=$(awk '$1 == "port" { print $2 }' "$p.out" 2>/dev/null || true)
		[[ -n $port ]] && break
		kill -0 "$server" 2>/dev/null || break
		sleep 0.05
	done
	if [[ -z $port ]]; then
		why="the server printed no port"
	elif ! timeout "$tmo" env -u LD_PRELOAD "$out/net_load" "$port" "$n" "$warm" "$measure" \
		>"$p.load" 2>>"$p.err" </dev/null; then
		why="the load generator failed"
	fi
	if [[ -n $why ]]; then
		kill -TERM -- "-$server" 2>/dev/null || true
	fi
	wait "$server" 2>/dev/null || st=$?
	server=
	if [[ -z $why && $st -ne 0 ]]; then
		why="server exit status $st"
	fi
	if [[ -n $why ]]; then
		local last
		last=$(tail -n 1 "$p.err" 2>/dev/null || true)
		echo "note: $kind, $n connections: $why${last:+; stderr: $last}"
		status=1
		return 0
	fi
	local name v
	while read -r name v; do
		[[ -n $name ]] && val[$kind,$n,$name]=$v
	done < <(cat "$p.load" "$p.out")
	if read -r v _ <"$p.peak" 2>/dev/null; then
		val[$kind,$n,peak]=$v
	fi
}

for n in $conns_list; do
	run native "$n" env -u LD_PRELOAD "$out/net_server"
	if [[ -n $lib ]]; then
		run goshim "$n" env LD_PRELOAD="$lib" "$out/net_server"
	fi
	if [[ -n $have_go ]]; then
		run go "$n" "$out/net_server_go"
	fi
done

# ---- the table --------------------------------------------------------------
ratio() { # A B -> A/B, or - when either is missing
	if [[ -n $1 && -n $2 ]]; then
		awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.3gx", a / b; else print "-" }'
	else
		echo -
	fi
}
# get KIND CONNS NAME [SCALE]: the value (divided by SCALE), or empty
get() {
	local v=${val[$1,$2,$3]:-}
	if [[ -n $v && -n ${4:-} ]]; then
		v=$(awk -v a="$v" -v s="$4" 'BEGIN { printf "%.1f", a / s }')
	fi
	echo "$v"
}
line() { printf '%-7s %-18s %11s %11s %11s %14s %10s  %s\n' "$@"; }
# row CONNS LABEL NAME [SCALE] [TARGET]
row() {
	local n=$1 label=$2 name=$3 scale=${4:-} target=${5:-}
	local nat gs g
	nat=$(get native "$n" "$name" "$scale")
	gs=$(get goshim "$n" "$name" "$scale")
	g=$(get go "$n" "$name" "$scale")
	line "$n" "$label" "${nat:--}" "${gs:--}" "${g:--}" \
		"$(ratio "$gs" "$nat")" "$(ratio "$gs" "$g")" "$target"
}

echo
echo "echo server, one 64-byte request in flight per connection (closed loop),"
echo "${measure} ms measured after ${warm} ms; one native epoll load generator for all;"
echo "GOMAXPROCS=${GOMAXPROCS:-$(nproc)} ($(nproc) CPUs, shared with the load generator), $(uname -r)"
echo "targets at 10,000 (not asserted): goshim req/s >= native, RSS <= native/4, p99 <= native"
line conns what native goshim Go goshim/native goshim/Go target
for n in $conns_list; do
	t1= t2= t3=
	if [[ $n == 10000 ]]; then
		t1=">= 1x" t2="<= 1x" t3="<= 0.25x"
	fi
	row "$n" "requests/s" reqs_per_s "" "$t1"
	row "$n" "p50 latency, us" p50_us
	row "$n" "p99 latency, us" p99_us "" "$t2"
	row "$n" "server CPU/req, us" cpu_us_per_req
	row "$n" "ctx switches/req" cswitch_per_req
	row "$n" "peak OS threads" peak
	row "$n" "peak RSS, MiB" rss_peak_kib 1024 "$t3"
done
echo "logs: $logs"
exit "$status"
