#!/usr/bin/env bash
# tests/bench/bench.sh BUILD_DIR [FAMILY...]: `make bench`, the one driver of
# the benchmarks in this directory.
#
# Why: goshim's claims are ratios against native pthreads and against Go,
# measured on shared machines whose load comes and goes. One driver gives
# every figure the same treatment (interleaved repetitions, medians, a
# killing timeout, the load it ran beside) and one table to read them in.
#
# What: builds the C programs here (cc -O2 -pthread; run natively and under
# LD_PRELOAD=BUILD_DIR/libgoshim.so) and their Go counterparts (GO111MODULE=off
# go build) into BUILD_DIR/bench, runs each measurement BENCH_REPS times
# interleaved (native, goshim, Go, native, goshim, Go, ...), every run under
# `timeout -k 5` and tests/tools/threadpeak (peak OS threads), and prints one
# table of medians, goshim's ratios against Go and native, the spread, and
# the issue's goals (printed, never asserted), then the machine and the
# background load. The table also goes to BUILD_DIR/bench/results.tsv, the
# machine to BUILD_DIR/bench/machine.txt, each run's output to
# BUILD_DIR/bench/logs. FAMILY (or BENCH_ONLY=a,b) picks rows:
#
#   create   create_join: pthread_create+join pairs, serial and 100 at a time
#   sync     sync_bench: condvar ping-pong, lock+unlock with one and with two
#            threads alive, 64 threads incrementing under one mutex
#   sleep    sync_sleep: N threads each sleep 1 ms SLEEPS times, wall time
#   mem      mem_blocked: memory per thread blocked on a condvar, RSS and
#            the total (user + kernel, each run alone in a memory cgroup of
#            its own: memcg_run.py), the time to create them; natively only
#            up to 20k (pid_max stops it near 32k)
#   million  mem_blocked with BENCH_MILLION threads, goshim and Go only
#   net      net_server: thread-per-connection echo servers (goroutines in
#            Go) under scripts/tools/net_load, one request in flight each
#   pool     pool_server: an epoll loop that hands each request to four
#            pool threads and answers when they write its eventfd (Node.js
#            on libuv's pool), under net_load; pool_batch: pbzip2 -p8's
#            shape, a reader, eight workers and an in-order writer
#   sysmon   sysmon_stall: a 1 ms ticker's stalls while others fsync, spin
#            or block in a raw read, and the syscall() wrapper's cost
#
# Environment (defaults, then BENCH_QUICK=1's): BENCH_REPS (3),
# BENCH_N create+join pairs (100000, 10000), BENCH_THREADS and BENCH_SLEEPS
# (10000 and 100, 1000 and 20), BENCH_MEM blocked counts ("10000 100000",
# "1000 10000"), BENCH_MILLION (1000000, 20000; 0 leaves it out, it needs
# about 13 GiB under goshim), BENCH_CONNS ("100 1000 10000", "100 1000"),
# BENCH_WARMUP_MS and BENCH_MEASURE_MS per net run (500 and 3000, 200 and
# 1000), BENCH_TIMEOUT seconds per run (default per family: 120, million
# 600, sysmon 30), BENCH_POOL_CONNS (100) and BENCH_BLOCKS (4000, 1000) for
# pool. sync's loop counts are a tenth under BENCH_QUICK=1.
# GOMAXPROCS from the environment applies to goshim and Go alike.
#
# Nothing fails on time. A run that fails or times out is noted and shows
# as '-', and makes the exit status 1; the table is printed all the same.
# Go's raw sysmon mode hangs (its sysmon cannot see a RawSyscall): a Go run
# of it that outlives 5 s shows as "hung" and is not repeated.
# shellcheck disable=SC2317 # fam_* are called by name, on_interrupt by the trap
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
families=(create sync sleep mem million net pool sysmon)

usage() {
	echo "usage: $0 BUILD_DIR [FAMILY...]   FAMILY: ${families[*]}" >&2
	echo "       (or BENCH_ONLY=FAMILY,FAMILY)" >&2
	exit 2
}
[[ $# -ge 1 ]] || usage
B=$1
shift
out=$B/bench
logs=$out/logs
mkdir -p "$logs"

# ---- sizes ------------------------------------------------------------------
quick=${BENCH_QUICK:-0}
pick() { # DEFAULT QUICK: the size for this run
	if [[ $quick == 1 ]]; then echo "$2"; else echo "$1"; fi
}
reps=${BENCH_REPS:-3}
[[ $reps =~ ^[1-9][0-9]*$ ]] || usage
n_create=${BENCH_N:-$(pick 100000 10000)}
threads=${BENCH_THREADS:-$(pick 10000 1000)}
sleeps=${BENCH_SLEEPS:-$(pick 100 20)}
mem_counts=${BENCH_MEM:-$(pick "10000 100000" "1000 10000")}
million=${BENCH_MILLION:-$(pick 1000000 20000)}
conns=${BENCH_CONNS:-$(pick "100 1000 10000" "100 1000")}
pool_conns=${BENCH_POOL_CONNS:-100}
blocks=${BENCH_BLOCKS:-$(pick 4000 1000)}
warm_ms=${BENCH_WARMUP_MS:-$(pick 500 200)}
measure_ms=${BENCH_MEASURE_MS:-$(pick 3000 1000)}
sync_div=$(pick 1 10)
native_max=20000 # natively pthread_create fails near 32k threads (pid_max)
hang_s=5

# ---- which families ---------------------------------------------------------
declare -A want=()
select_families() { # FAMILY...: fills want; none means all
	local f
	for f in "$@"; do
		[[ " ${families[*]} " == *" $f "* ]] || usage
		want[$f]=1
	done
	if [[ ${#want[@]} -eq 0 ]]; then
		for f in "${families[@]}"; do want[$f]=1; done
	fi
}
IFS=', ' read -r -a only <<<"${BENCH_ONLY:-}"
select_families "$@" "${only[@]}"

status=0
notes=()
note() {
	notes+=("$*")
	echo "note: $*" >&2
}

# ---- jobs and rows ----------------------------------------------------------
# A job is one measurement: PROG ARGS run as each of its kinds (native and
# goshim run BUILD_DIR/bench/PROG, go runs PROG_go), REPS times. A row is a
# line of the table: one "NAME VALUE" figure of a job (NAME "peak" is the
# run's peak OS thread count).
jobs=()
declare -A job_fam=() job_kinds=() job_cmd=()
job() { # FAMILY TAG KINDS PROG ARGS...  (kind "go:hung": see the top)
	local fam=$1 tag=$2 kinds=$3
	shift 3
	jobs+=("$tag")
	job_fam[$tag]=$fam
	job_kinds[$tag]=$kinds
	job_cmd[$tag]="$*"
}
rows=()
# row LABEL UNIT BETTER GOAL TAG NAME [SCALE [GO_TAG:GO_NAME]]: BETTER is
# lower or higher; SCALE divides the figure; GO_TAG:GO_NAME is where the Go
# column reads when it is not TAG NAME. A label starting with two spaces is
# a detail of the row above.
row() {
	local IFS=$'\x1f'
	rows+=("$*")
}
all="native goshim go"

human() { # N -> 10k, 1M, ...
	awk -v n="$1" 'BEGIN {
		if (n >= 1000000 && n % 1000000 == 0) print n / 1000000 "M"
		else if (n >= 1000 && n % 1000 == 0) print n / 1000 "k"
		else print n }'
}

fam_create() {
	job create cj "$all" create_join "$n_create"
	row "create+join, serial, $(human "$n_create")" ns/pair lower "vs Go <= 1.0" cj serial
	row "create+join, 100 at a time" ns/pair lower "vs Go <= 1.0" cj batch100
}

fam_sync() {
	job sync pingpong "$all" sync_bench pingpong $((100000 / sync_div))
	job sync lock "$all" sync_bench lock $((20000000 / sync_div))
	job sync contend "$all" sync_bench contend $((32000000 / sync_div))
	row "condvar ping-pong" "ns/round trip" lower "vs Go <= 1.0" pingpong cond_pingpong
	row "  Go: unbuffered channels" "ns/round trip" lower "" pingpong - 1 pingpong:chan_pingpong
	row "lock+unlock, 1 thread" ns/pair lower "vs native <= 1.0" lock lock_uncontended
	row "lock+unlock, 2nd thread alive (a)" ns/pair lower "vs native <= 1.0" \
		lock lock_uncontended_mt 1 lock:lock_uncontended
	row "64 threads on one mutex" Mops/s higher "vs Go, native <= 1.0" \
		contend mutex_contended64 1000000
}

fam_sleep() {
	job sleep sleep "$all" sync_sleep "$threads" "$sleeps"
	row "$(human "$threads") threads x $sleeps sleeps of 1 ms" "wall ms" lower "vs Go <= 1.2" \
		sleep sleep_wall_ms
	row "  peak OS threads" threads lower "" sleep peak
}

fam_mem() {
	local n kinds goal
	for n in $mem_counts; do
		kinds=$all goal="vs native <= 0.333"
		[[ $n -le $native_max ]] || kinds="goshim go" goal=
		job mem "mem$n" "$kinds" mem_blocked "$n"
		row "memory per idle thread (total), $(human "$n")" KiB lower "$goal" \
			"mem$n" total_kib_per_blocked
		row "  of it kernel" KiB lower "" "mem$n" kernel_kib_per_blocked
		row "  RSS" KiB lower "" "mem$n" rss_kib_per_blocked
		row "  time to create them all" ms lower "" "mem$n" create_all_ms
		row "  peak OS threads" threads lower "" "mem$n" peak
	done
}

fam_million() {
	if [[ $million -eq 0 ]]; then
		note "million: left out (BENCH_MILLION=0)"
		return 0
	fi
	job million mem1m "goshim go" mem_blocked "$million"
	row "$(human "$million") blocked on a condvar: create" ms lower "vs Go <= 1.5" mem1m create_all_ms
	row "  memory per idle thread (total)" KiB lower "" mem1m total_kib_per_blocked
	row "  memory per idle thread (RSS)" KiB lower "" mem1m rss_kib_per_blocked
	row "  peak OS threads" threads lower "" mem1m peak
}

fam_net() {
	local n goal
	# the servers and the load generator hold one fd per connection each
	ulimit -Sn "$(ulimit -Hn)"
	for n in $conns; do
		goal=
		[[ $n -ne 10000 ]] || goal="vs Go <= 1.0"
		job net "net$n" "$all" net_server "$n"
		row "echo, $(human "$n") connections: req/s" req/s higher "$goal" "net$n" reqs_per_s
		row "  p50 latency" ms lower "" "net$n" p50_us 1000
		row "  p99 latency" ms lower "$goal" "net$n" p99_us 1000
		row "  server CPU per request" us lower "" "net$n" cpu_us_per_req
		row "  context switches per request" switches lower "" "net$n" cswitch_per_req
		row "  peak OS threads" threads lower "" "net$n" peak
		row "  peak RSS" MiB lower "" "net$n" rss_peak_kib 1024
	done
}

fam_pool() {
	ulimit -Sn "$(ulimit -Hn)"
	job pool pool-server "$all" pool_server "$pool_conns"
	row "pool server, $(human "$pool_conns") connections: req/s" req/s higher \
		"vs native <= 1.0" pool-server reqs_per_s
	row "  p99 latency" ms lower "" pool-server p99_us 1000
	row "  server CPU per request" us lower "" pool-server cpu_us_per_req
	row "  peak OS threads" threads lower "" pool-server peak
	job pool pool-batch "$all" pool_batch "$blocks"
	row "batch pool, 8 workers, $(human "$blocks") blocks" blocks/s higher \
		"vs native <= 1.0" pool-batch blocks_per_s
	row "  peak OS threads" threads lower "" pool-batch peak
}

fam_sysmon() {
	local m kinds
	for m in none fsync spin raw; do
		kinds=$all
		[[ $m != raw ]] || kinds="native goshim go:hung"
		job sysmon "stall-$m" "$kinds" sysmon_stall "$m"
		row "ticker stall max, others: $m" us lower "" "stall-$m" stall_max_us
		row "  p99" us lower "" "stall-$m" stall_p99_us
	done
	job sysmon pair "$all" sysmon_stall pair
	row "syscall(SYS_getppid) (b)" ns/call lower "" pair syscall_ns
	row "  Go: RawSyscall (no pair)" ns/call lower "" pair - 1 pair:rawsyscall_ns
}

for f in "${families[@]}"; do
	[[ -z ${want[$f]:-} ]] || "fam_$f"
done

# ---- building ---------------------------------------------------------------
build_c() { # NAME SOURCE: BUILD_DIR/bench/NAME unless newer than SOURCE
	[[ $out/$1 -nt $2 ]] ||
		${CC:-cc} -O2 -Wall -Wextra -Werror -std=gnu11 -pthread -o "$out/$1" "$2"
}

have_go=
build_go() { # PROG: BUILD_DIR/bench/PROG_go; a failure is a note
	[[ -n $have_go ]] || return 0
	GO111MODULE=off go build -o "$out/$1_go" "$here/$1.go" ||
		note "go build of $1.go failed: no Go column for it"
}

build_all() {
	local tag prog
	declare -A progs=()
	for tag in "${jobs[@]}"; do
		prog=${job_cmd[$tag]%% *}
		progs[$prog]=1
	done
	if command -v go >/dev/null 2>&1; then
		have_go=1
		# a cache of our own: HOME may be unset or read-only (CI)
		export GOCACHE=${GOCACHE:-$(realpath "$out")/go-cache}
		export GOPATH=${GOPATH:-$(realpath "$out")/go-path}
	else
		note "'go' not found: no Go column"
	fi
	build_c threadpeak "$here/../tools/threadpeak.c"
	[[ -z ${progs[net_server]:-}${progs[pool_server]:-} ]] ||
		build_c net_load "$here/../../scripts/tools/net_load.c"
	for prog in "${!progs[@]}"; do
		build_c "$prog" "$here/$prog.c"
		build_go "$prog"
	done
}

lib=
if [[ -f $B/libgoshim.so ]]; then
	lib=$(realpath "$B/libgoshim.so")
else
	note "$B/libgoshim.so not found: no goshim column"
fi
build_all

# ---- running ----------------------------------------------------------------
declare -A val=()    # val[KIND,TAG,NAME,REP]: the figures of each run
declare -A failed=() # failed[KIND,TAG]: a run of it failed
declare -A hung=()   # hung[KIND,TAG]: a "go:hung" run hung
running=
on_interrupt() {
	[[ -z $running ]] || kill -TERM "$running" 2>/dev/null || true
	echo "bench: interrupted" >&2
	exit 130
}
trap on_interrupt INT TERM

# The memory families' runs each go into a memory cgroup of their own
# (memcg_run.py), when one can be made here.
memcg=()
if [[ -n ${want[mem]:-}${want[million]:-} ]]; then
	if why=$(python3 "$here/memcg_run.py" --check 2>&1); then
		memcg=(python3 "$here/memcg_run.py")
	else
		note "no memory cgroup can be made (${why//$'\n'/; }): the total memory rows show -"
	fi
fi

launch() { # LOG LIMIT CMD...: CMD under timeout and threadpeak, in the background
	# (and in the caller's wrap, when it has one: memcg_run.py)
	local p=$1 limit=$2
	shift 2
	rm -f "$p".*
	THREADPEAK_OUT=$p.peak timeout -k 5 "$limit" ${wrap[@]+"${wrap[@]}"} "$out/threadpeak" "$@" \
		>"$p.out" 2>"$p.err" </dev/null &
	running=$!
}

finish() { # -> the exit status of what launch started
	local st=0
	wait "$running" 2>/dev/null || st=$?
	running=
	return "$st"
}

why_failed() { # LOG LIMIT STATUS: a few words on how a run ended
	local p=$1 limit=$2 st=$3
	# timeout -k kills threadpeak too, so then it wrote no peak file
	if [[ $st -eq 124 || ($st -eq 137 && ! -s $p.peak) ]]; then
		echo "timed out after ${limit}s"
	elif [[ $st -gt 128 && $st -lt 160 ]]; then
		echo "killed by SIG$(kill -l $((st - 128)) 2>/dev/null || echo $((st - 128)))"
	else
		echo "exit status $st"
	fi
}

drive_load() { # LOG CONNS LIMIT: net_load against the server's port; a failure says why
	local p=$1 n=$2 limit=$3 port='' i
	for ((i = 0; i < 200; i++)); do
		# (the server may not have made the file yet)
		port=$(awk '$1 == "port" { print $2 }' "$p.out" 2>/dev/null || true)
		[[ -z $port ]] || break
		kill -0 "$running" 2>/dev/null || break
		sleep 0.05
	done
	if [[ -z $port ]]; then
		echo "the server printed no port"
	elif ! timeout -k 5 "$limit" env -u LD_PRELOAD "$out/net_load" "$port" "$n" \
		"$warm_ms" "$measure_ms" >"$p.load" 2>>"$p.err" </dev/null; then
		echo "the load generator failed"
	fi
}

limit_of() { # TAG: seconds a run of it may take
	local fam=${job_fam[$1]}
	if [[ -n ${BENCH_TIMEOUT:-} ]]; then
		echo "$BENCH_TIMEOUT"
	elif [[ $fam == million ]]; then
		echo 600
	elif [[ $fam == sysmon ]]; then
		echo 30
	else
		echo 120
	fi
}

run_one() { # KIND[:hung] TAG REP: one run; its figures into val
	local kind=${1%:*} tag=$2 rep=$3
	local -a cmd
	read -r -a cmd <<<"${job_cmd[$tag]}"
	local p=$logs/$kind-$tag-$rep limit why='' st=0 prog=$out/${cmd[0]}
	local -a wrap=()
	limit=$(limit_of "$tag")
	[[ $1 != *:hung ]] || limit=$hang_s
	case ${job_fam[$tag]} in
	mem | million) [[ ${#memcg[@]} -eq 0 ]] || wrap=("${memcg[@]}" "$kind-$tag-$rep") ;;
	esac
	case $kind in
	native) launch "$p" "$limit" env -u LD_PRELOAD "$prog" "${cmd[@]:1}" ;;
	goshim) launch "$p" "$limit" env LD_PRELOAD="$lib" "$prog" "${cmd[@]:1}" ;;
	go) launch "$p" "$limit" env -u LD_PRELOAD "${prog}_go" "${cmd[@]:1}" ;;
	esac
	if [[ ${cmd[0]} == net_server || ${cmd[0]} == pool_server ]]; then
		why=$(drive_load "$p" "${cmd[1]}" "$limit")
		[[ -z $why ]] || kill -TERM "$running" 2>/dev/null || true
	fi
	finish || st=$?
	if [[ -n $why && $st -eq 124 ]]; then
		why="$why; the server timed out after ${limit}s"
	elif [[ -z $why && $st -ne 0 ]]; then
		why=$(why_failed "$p" "$limit" "$st")
		if [[ $1 == *:hung && $why == timed* ]]; then
			hung[$kind,$tag]=1
			return 0
		fi
	fi
	if [[ -n $why ]]; then
		local last
		last=$(tail -n 1 "$p.err" 2>/dev/null || true)
		note "$kind $tag run $rep (${job_cmd[$tag]}): $why${last:+; stderr: $last}"
		failed[$kind,$tag]=1
		status=1
		return 0
	fi
	local name v f
	for f in "$p.out" "$p.load"; do
		[[ -f $f ]] || continue
		while read -r name v _; do
			[[ -z $name ]] || val[$kind,$tag,$name,$rep]=$v
		done <"$f"
	done
	if read -r v _ <"$p.peak" 2>/dev/null; then
		val[$kind,$tag,peak,$rep]=$v
	fi
}

can_run() { # KIND TAG: whether this kind of this job has what it needs
	case ${1%:*} in
	goshim) [[ -n $lib ]] ;;
	go) [[ -n $have_go && -x $out/${job_cmd[$2]%% *}_go ]] ;;
	*) true ;;
	esac
}

run_job() { # TAG: REPS rounds of its kinds, interleaved
	local tag=$1 rep kind
	echo "bench: $tag: ${job_cmd[$tag]} (${job_kinds[$tag]}) x $reps" >&2
	for ((rep = 1; rep <= reps; rep++)); do
		for kind in ${job_kinds[$tag]}; do
			can_run "$kind" "$tag" || continue
			[[ -z ${hung[${kind%:*},$tag]:-} ]] || continue
			run_one "$kind" "$tag" "$rep"
		done
	done
}

# ---- the machine and its load -------------------------------------------------
snap() { # NAME: /proc/stat's jiffies and this shell's `times` into BUILD_DIR/bench/NAME.snap
	# (no subshell: a forked shell counts no children of ours)
	{
		awk '$1 == "cpu" { t = 0; for (i = 2; i <= 9; i++) t += $i
			print t, t - $5 - $6; exit }' /proc/stat
		times
	} >"$out/$1.snap"
}

describe_load() { # LOADAVG_BEFORE: the machine and what else kept it busy
	echo "machine: $(nproc) CPUs, $(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo)"
	echo "kernel:  $(uname -r); $(if [[ -n $have_go ]]; then go version; else echo "no go"; fi)"
	echo "GOMAXPROCS=${GOMAXPROCS:-unset (goshim and Go use the CPUs they may run on)}; BENCH_REPS=$reps$([[ $quick != 1 ]] || echo "; BENCH_QUICK=1")"
	echo "loadavg: before $1; after $(cut -d' ' -f1-3 /proc/loadavg)"
	# /proc/stat's busy jiffies over the runs, less the CPU the runs
	# themselves used (the children's line of `times`): the background
	cat "$out/start.snap" "$out/end.snap" | awk -v hz="$(getconf CLK_TCK)" -v n="$(nproc)" '
	function secs(s, p) { split(s, p, "m"); return p[1] * 60 + p[2] }
	NR % 3 == 1 { t[NR] = $1; busy[NR] = $2 }
	NR % 3 == 0 { ours[NR] = secs($1) + secs($2) }
	END {
		dt = t[4] - t[1]; if (dt <= 0) exit
		b = busy[4] - busy[1]; o = (ours[6] - ours[3]) * hz
		bg = b - o; if (bg < 0) bg = 0
		printf "busy:    %.0f%% of %d CPUs over the %.0f s of runs: these runs %.0f%%, the rest (background) %.0f%%\n",
			100 * b / dt, n, dt / hz / n, 100 * o / dt, 100 * bg / dt }'
}

la0=$(cut -d' ' -f1-3 /proc/loadavg)
snap start
for tag in "${jobs[@]}"; do
	run_job "$tag"
done
snap end
machine=$(describe_load "$la0")

# ---- the table ----------------------------------------------------------------
# cell KIND TAG NAME SCALE -> "MEDIAN MIN MAX" over the reps, "hung" or "-"
cell() {
	local kind=$1 tag=$2 name=$3 scale=$4 rep v vs=()
	if [[ -n ${hung[$kind,$tag]:-} ]]; then
		echo hung
		return 0
	fi
	for ((rep = 1; rep <= reps; rep++)); do
		v=${val[$kind,$tag,$name,$rep]:-}
		if [[ -z $v || -n ${failed[$kind,$tag]:-} ]]; then
			echo -
			return 0
		fi
		vs+=("$v")
	done
	printf '%s\n' "${vs[@]}" | sort -g | awk -v s="$scale" '{ a[NR] = $1 / s }
		END { m = NR % 2 ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2
			print m, a[1], a[NR] }'
}

tsv=$out/results.tsv
fmt_line='%-38s %-13s %-6s %9s %9s %9s %7s %9s %6s  %s\n'
print_header() {
	# shellcheck disable=SC2059 # the one format of every line
	printf "$fmt_line" row unit better native goshim Go "vs Go" "vs native" spread goal
	printf 'family\trow\tunit\tbetter\tnative\tgoshim\tgo\tvs_go\tvs_native\tspread\tgoal' >"$tsv"
	printf '\tnative_min\tnative_max\tgoshim_min\tgoshim_max\tgo_min\tgo_max\n' >>"$tsv"
}

parent=
print_row() { # a rows entry: one line of the table and one of results.tsv
	local label unit better goal tag name scale goref
	IFS=$'\x1f' read -r label unit better goal tag name scale goref <<<"$1"
	local gtag=${goref%%:*} gname=${goref#*:}
	[[ -n $goref ]] || gtag=$tag gname=$name
	[[ $label == "  "* ]] || parent=$label
	local full=$label
	[[ $label != "  "* ]] || full="$parent:${label#  }"
	awk -v label="$label" -v full="$full" -v fam="${job_fam[$tag]}" -v unit="$unit" \
		-v better="$better" -v goal="$goal" -v fmt="$fmt_line" -v tsv="$tsv" \
		-v nat="$(cell native "$tag" "$name" "${scale:-1}")" \
		-v gs="$(cell goshim "$tag" "$name" "${scale:-1}")" \
		-v g="$(cell go "$gtag" "$gname" "${scale:-1}")" '
	function num(c) { return c != "-" && c != "hung" }
	function show(x) { return x >= 1000 ? sprintf("%.0f", x) : sprintf("%.3g", x) }
	function med(c, f) { if (!num(c)) return c; split(c, f, " "); return f[1] }
	function ratio(a, b) { # goshim a against b, below 1 when goshim is better
		if (!num(a) || !num(b) || a <= 0 || b <= 0) return "-"
		return sprintf("%.3g", better == "higher" ? b / a : a / b) }
	function spread(c, f) { if (!num(c)) return 0; split(c, f, " ")
		return f[1] > 0 ? (f[3] - f[2]) / f[1] : 0 }
	function mm(c, f) { if (!num(c)) return "\t"; split(c, f, " "); return f[2] "\t" f[3] }
	BEGIN {
		n = med(nat); s = med(gs); o = med(g)
		sp = spread(nat); if (spread(gs) > sp) sp = spread(gs); if (spread(g) > sp) sp = spread(g)
		sp = num(nat) || num(gs) || num(g) ? sprintf("%.0f%%", 100 * sp) : "-"
		printf fmt, label, unit, better, num(n) ? show(n) : n, num(s) ? show(s) : s,
			num(o) ? show(o) : o, ratio(s, o), ratio(s, n), sp, goal
		printf "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", fam, full, unit,
			better, n, s, o, ratio(s, o), ratio(s, n), sp, goal, mm(nat), mm(gs), mm(g) >> tsv
	}'
}

print_notes() {
	echo "medians of $reps interleaved runs; spread: the widest (max-min)/median of the row;"
	echo "vs X: goshim/X where lower is better, X/goshim where higher is: below 1.0 goshim"
	echo "is better. Goals are the issue's, printed, not asserted."
	[[ -z ${want[sync]:-} ]] ||
		echo "(a) Go has one figure for both lock+unlock rows (a Go program always has threads)."
	[[ -z ${want[sysmon]:-} ]] ||
		echo "(b) under goshim (and Go) entersyscall + the call + exitsyscall; native the call."
	[[ -z ${want[mem]:-} ]] ||
		echo "no native memory row above $(human "$native_max"): natively pthread_create fails near 32k threads."
	local n
	for n in "${notes[@]}"; do echo "note: $n"; done
	echo "logs: $logs; table: $tsv; machine: $out/machine.txt"
}

echo
print_header
for r in "${rows[@]}"; do
	print_row "$r"
done
print_notes
echo
echo "$machine" | tee "$out/machine.txt"
exit "$status"
