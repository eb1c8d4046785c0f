#!/usr/bin/env bash
# tests/compat/run.sh BUILD_DIR [NAME...]: the compatibility suite behind
# `make compat`. tests/progs holds programs written for goshim's tests; this
# runs real, unmodified multi-threaded programs from Debian (pigz, sysbench,
# GNU sort, memcached, zstd, CPython, OpenJDK's JVM) and small clients of
# real libraries (libstdc++ threads, OpenSSL, libcurl, memcached's
# protocol), each natively and then with LD_PRELOAD=libgoshim.so, and
# checks what each
# program is for: the round trip's sha256, sort's output against a
# one-thread sort, every value and counter, the program's own exit
# status. Each run goes through
# procsample (the sampler of `goshim compare`) for peak OS threads and wall
# time; a program that does not make threads natively tests nothing and
# fails. One line per program, then "N passed, M failed"; exits 1 if any
# failed. NAME... picks programs (default: all). COMPAT_TIMEOUT bounds
# each run (seconds, default 180; not GOSHIM_*: goshim reports unknown
# GOSHIM_ settings). Every program runs under tests/run/watchdog.py: past its
# bound, what it was doing (goroutine dumps by `goshim dump`, else its
# threads from /proc) is printed under its line and kept in BUILD_DIR/hang/,
# and it is killed.
set -euo pipefail

if [[ $# -lt 1 ]]; then
	echo "usage: $0 BUILD_DIR [NAME...]" >&2
	exit 2
fi
B=$1
shift
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
lib=$(realpath "$B/libgoshim.so")
ps=$B/tools/procsample
bin=$B/tests/compat
for f in "$lib" "$ps" "$bin/gendata" "$bin/cxx_threads" "$bin/curl_fetch" \
	"$bin/mc_client" "$bin/ssl_digest" "$bin/rust_threads" "$B/tests/servers/legacy_httpd"; do
	if [[ ! -x $f ]]; then
		echo "compat: $f missing: run 'make compat'" >&2
		exit 2
	fi
done
timeout_s=${COMPAT_TIMEOUT:-180}
watchdog=$here/../run/watchdog.py
export LC_ALL=C

work=$(mktemp -d "${TMPDIR:-/tmp}/compat.XXXXXX")
server=
# reap PID: end the background job PID (SIGTERM) and wait for it, 30 s at
# most: then what it is doing is shown and it is killed.
reap() {
	local n=0
	kill "$1" 2>/dev/null || true
	while kill -0 "$1" 2>/dev/null && [[ $(awk '{ print $3 }' "/proc/$1/stat" 2>/dev/null) != Z ]]; do
		if [[ $((n++)) -ge 600 ]]; then
			"$watchdog" --label "background job $1 (SIGTERM ignored)" --hung "$1" || true
			break
		fi
		sleep 0.05
	done
	wait "$1" 2>/dev/null || true
}
cleanup() {
	if [[ -n $server ]]; then
		reap "$server"
	fi
	rm -rf "$work"
}
trap cleanup EXIT

# ---- running and sampling ---------------------------------------------------

# sum_field FILE NAME: one value of a procsample summary ("?" if none: the
# run was killed before procsample could write it).
sum_field() {
	awk -v k="$2" '$1 == k { print $2; f = 1 } END { if (!f) print "?" }' \
		"$1" 2>/dev/null || echo "?"
}

# run MODE TAG CMD...: CMD natively (MODE native) or under goshim (MODE
# goshim), with a timeout, sampled. stdout in $work/TAG.MODE.out, stderr in
# .err; sets st (exit status), peak (OS threads) and wall (seconds).
run() {
	local mode=$1 tag=$2
	shift 2
	local pre=()
	[[ $mode == goshim ]] && pre=(-e "LD_PRELOAD=$lib")
	st=0
	rm -f "$work/$tag.$mode.hang"
	"$watchdog" --kill-after 5 --report "$work/$tag.$mode.hang" --label "$tag ($mode)" \
		"$timeout_s" "$ps" -i 5 -o "$work/$tag.$mode.sum" \
		"${pre[@]}" -- "$@" >"$work/$tag.$mode.out" \
		2>"$work/$tag.$mode.err" </dev/null || st=$?
	peak=$(sum_field "$work/$tag.$mode.sum" peak_threads)
	wall=$(sum_field "$work/$tag.$mode.sum" wall_s)
}

# A program's verdict is built per mode: why[MODE] empty means it worked.
declare -A why res_peak res_wall res_rate
# note MODE PROBLEM: the run in MODE failed (first problem kept).
note() { [[ -n ${why[$1]:-} ]] || why[$1]=$2; }
# check_status MODE TAG [RAN]: a non-zero exit of the last run is a failure
# of MODE, with stderr's end; RAN is the mode the run itself had, when it
# differs (a native client of a server run in MODE).
# show_hang FILE: a watchdog's report of a run that timed out, kept in
# $B/hang and its head shown.
show_hang() {
	[[ -s $1 ]] || return 0
	mkdir -p "$B/hang"
	local keep
	keep=$B/hang/compat.$(basename "$1" .hang).txt
	cp "$1" "$keep"
	echo "    what hung (first 60 lines; all in $keep):"
	head -n 60 "$1" | sed 's/^/    /'
}
check_status() {
	local err=$work/$2.${3:-$1}.err
	if [[ $st -eq 124 || $st -eq 137 ]]; then
		note "$1" "$2 timed out after ${timeout_s}s"
		show_hang "${err%.err}.hang"
	elif [[ $st -ne 0 ]]; then
		note "$1" "$2 exited $st: $(tail -c 300 "$err" | tr '\n' ' ')"
	fi
}
# account MODE: add this run's threads and time to the program's.
account() {
	local m=$1
	if [[ $peak == "?" || ${res_peak[$m]:-0} == "?" ]]; then
		res_peak[$m]="?"
	elif ((peak > ${res_peak[$m]:-0})); then
		res_peak[$m]=$peak
	fi
	res_wall[$m]=$(awk -v a="${res_wall[$m]:-0}" -v b="$wall" \
		'BEGIN { if (b == "?") print "?"; else printf "%.2f", a + b }')
}

passed=0 failed=0
# report NAME MIN_NATIVE_THREADS DETAIL: the program's line. The minimum
# is well under what the program makes: threads that end early can fall
# between two samples.
report() {
	local name=$1 min=$2 detail=$3 verdict=PASS m
	if [[ ${res_peak[native]:-0} != "?" && ${res_peak[native]:-0} -lt $min ]]; then
		note native "only ${res_peak[native]} threads natively (want >= $min): nothing tested"
	fi
	[[ -z ${why[native]:-}${why[goshim]:-} ]] || verdict=FAIL
	printf '%s %-12s' "$verdict" "$name"
	for m in native goshim; do
		printf '  %s: %s %5ss %3s thr%s' "$m" \
			"$([[ -z ${why[$m]:-} ]] && echo ok || echo FAIL)" \
			"${res_wall[$m]:-?}" "${res_peak[$m]:-?}" \
			"${res_rate[$m]:+ ${res_rate[$m]}}"
	done
	printf '  (%s)\n' "$detail"
	for m in native goshim; do
		[[ -z ${why[$m]:-} ]] || echo "    $m: ${why[$m]}"
	done
	if [[ $verdict == PASS ]]; then
		passed=$((passed + 1))
	else
		failed=$((failed + 1))
	fi
}

begin() { why=() res_peak=() res_wall=() res_rate=(); }

free_port() {
	python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# wait_listen PORT PID: until something listens on 127.0.0.1:PORT (false
# if PID exits first or 10 s pass).
wait_listen() {
	local hex i
	hex=$(printf ':%04X' "$1")
	for ((i = 0; i < 1000; i++)); do
		awk -v p="$hex" '$2 ~ p"$" && $4 == "0A" { f = 1 } END { exit !f }' \
			/proc/net/tcp && return 0
		kill -0 "$2" 2>/dev/null || return 1
		sleep 0.01
	done
	return 1
}

# ---- the programs -----------------------------------------------------------

data=$work/data.txt
data_sum=
make_data() {
	if [[ -z $data_sum ]]; then
		"$watchdog" --kill-after 5 "$timeout_s" "$bin/gendata" 200000000 1 >"$data"
		data_sum=$(sha256sum <"$data" | cut -d' ' -f1)
	fi
}

# pigz: compress 200 MB with 8 threads, decompress, same sha256.
t_pigz() {
	make_data
	local m sum
	for m in native goshim; do
		run "$m" pigz-c pigz -1 -p 8 -c "$data"
		check_status "$m" pigz-c
		account "$m"
		mv "$work/pigz-c.$m.out" "$work/data.gz"
		run "$m" pigz-d pigz -d -p 8 -c "$work/data.gz"
		check_status "$m" pigz-d
		account "$m"
		sum=$(sha256sum <"$work/pigz-d.$m.out" | cut -d' ' -f1)
		[[ $sum == "$data_sum" ]] || note "$m" "round trip sha256 $sum, want $data_sum"
		rm -f "$work/data.gz" "$work/pigz-d.$m.out"
	done
	report pigz 3 "200 MB -1 -p 8, round-trip sha256"
}

# zstd: the same with zstd's worker pool, at -3 -T8.
t_zstd() {
	make_data
	local m sum
	for m in native goshim; do
		run "$m" zstd-c zstd -q -3 -T8 -c "$data"
		check_status "$m" zstd-c
		account "$m"
		mv "$work/zstd-c.$m.out" "$work/data.zst"
		run "$m" zstd-d zstd -q -d -c "$work/data.zst"
		check_status "$m" zstd-d
		account "$m"
		sum=$(sha256sum <"$work/zstd-d.$m.out" | cut -d' ' -f1)
		[[ $sum == "$data_sum" ]] || note "$m" "round trip sha256 $sum, want $data_sum"
		rm -f "$work/data.zst" "$work/zstd-d.$m.out"
	done
	report zstd 3 "200 MB -3 -T8, round-trip sha256"
}

# sort: --parallel=8 on 80 MB must equal a one-thread sort's output.
t_sort() {
	make_data
	local m want sum
	head -c 80000000 "$data" >"$work/sort.in"
	want=$("$watchdog" --kill-after 5 "$timeout_s" sort --parallel=1 -S 512M "$work/sort.in" | sha256sum | cut -d' ' -f1)
	for m in native goshim; do
		run "$m" sort sort --parallel=8 -S 512M "$work/sort.in"
		check_status "$m" sort
		account "$m"
		sum=$(sha256sum <"$work/sort.$m.out" | cut -d' ' -f1)
		[[ $sum == "$want" ]] || note "$m" "output differs from sort --parallel=1"
		rm -f "$work/sort.$m.out"
	done
	rm -f "$work/sort.in"
	report sort 2 "80 MB --parallel=8 == --parallel=1"
}

# sysbench_field MODE TAG LABEL: a number from sysbench's report.
sysbench_field() {
	awk -v l="$3" 'index($0, l) { v = $NF } END { sub(/s$/, "", v); print v }' \
		"$work/$2.$1.out"
}

# sysbench TEST ARGS...: 64 threads; its own events/s, exit status 0.
sysbench_test() {
	local name=$1 m ev tt
	shift
	for m in native goshim; do
		run "$m" "$name" sysbench "$name" "$@" --threads=64 run
		check_status "$m" "$name"
		account "$m"
		ev=$(sysbench_field "$m" "$name" "total number of events:")
		tt=$(sysbench_field "$m" "$name" "total time:")
		if [[ -z $ev || -z $tt || $ev == 0 ]]; then
			note "$m" "no events reported"
		else
			res_rate[$m]=$(awk -v e="$ev" -v t="$tt" 'BEGIN { printf "%.0f ev/s", e / t }')
		fi
	done
	report "sb-$name" 33 "sysbench $name --threads=64 $*"
}
# --report-interval: sysbench ends its reporting thread, asleep in usleep,
# with pthread_cancel and joins it.
t_sysbench_threads() { sysbench_test threads --time=2 --thread-yields=1000 --thread-locks=8 --report-interval=1; }
t_sysbench_mutex() { sysbench_test mutex --mutex-locks=20000 --mutex-loops=2000; }

# same_output NAME TAG MIN CMD...: a program that checks itself and prints
# its exact results: both runs exit 0 and print the same.
same_output() {
	local name=$1 tag=$2 min=$3 m
	shift 3
	for m in native goshim; do
		run "$m" "$tag" "$@"
		check_status "$m" "$tag"
		account "$m"
	done
	cmp -s "$work/$tag.native.out" "$work/$tag.goshim.out" ||
		note goshim "output differs: $(diff "$work/$tag.native.out" "$work/$tag.goshim.out" | head -3 | tr '\n' ' ')"
	report "$name" "$min" "$(tail -1 "$work/$tag.native.out")"
}

# cxx_threads: libstdc++'s threads.
t_cxx() { same_output cxx_threads cxx 2 "$bin/cxx_threads"; }

# rust_threads: Rust's std threads, whose Mutex, Condvar, RwLock, park and
# channels wait on raw futex system calls, not on pthread calls.
t_rust() { same_output rust_threads rust 16 "$bin/rust_threads"; }

# python: CPython's threads and its GIL (timed condvar waits). Debian's
# own python3, not whatever a PATH shim (pyenv) would start.
t_python() { same_output python py 4 /usr/bin/python3 "$here/py_threads.py"; }

# openssl: 16 threads of EVP digests and AES-GCM against one thread's.
t_openssl() { same_output openssl ssl 4 "$bin/ssl_digest" 16 400; }

# curl: 32 libcurl threads against the bundled legacy_httpd (a fresh one,
# run natively, for each mode, so its hit count starts at 0).
t_curl() {
	local m port
	for m in native goshim; do
		port=$(free_port)
		"$B/tests/servers/legacy_httpd" "$port" 2>"$work/httpd.err" &
		server=$!
		if ! wait_listen "$port" "$server"; then
			note "$m" "legacy_httpd did not listen on $port: $(head -c 200 "$work/httpd.err")"
		else
			run "$m" curl "$bin/curl_fetch" "$port" 32 200
			check_status "$m" curl
			account "$m"
			res_rate[$m]=$(awk -v w="$wall" 'BEGIN { if (w > 0) printf "%.0f req/s", 6400 / w }')
		fi
		reap "$server"
		server=
	done
	report curl 8 "$(cat "$work/curl.native.out" 2>/dev/null)"
}

# memcached: the server is what runs natively and under goshim (4 worker
# threads, libevent); mc_client, native both times, checks every value.
# Its wall time is the client's. The SIGTERM that ends memcached goes
# through the watchdog (which kills the lot 5 s later if it is still
# there) and procsample (which exits with memcached's status).
t_memcached() {
	local m port pre sst
	for m in native goshim; do
		port=$(free_port)
		pre=()
		[[ $m == goshim ]] && pre=(-e "LD_PRELOAD=$lib")
		rm -f "$work/memcached.$m.hang"
		"$watchdog" --kill-after 5 --report "$work/memcached.$m.hang" --label "memcached ($m)" \
			"$timeout_s" "$ps" -i 5 -o "$work/memcached.$m.sum" "${pre[@]}" -- \
			memcached -u root -t 4 -l 127.0.0.1 -p "$port" -U 0 -m 256 \
			>"$work/memcached.$m.out" 2>"$work/memcached.$m.err" </dev/null &
		server=$!
		if wait_listen "$port" "$server"; then
			run native "mc-$m" "$bin/mc_client" "$port" 16 300
			check_status "$m" "mc-$m" native
			account "$m"
		else
			note "$m" "memcached did not listen on $port"
		fi
		kill "$server" 2>/dev/null || true
		sst=0
		wait "$server" || sst=$?
		server=
		if [[ $sst -eq 124 ]]; then
			note "$m" "memcached timed out after ${timeout_s}s"
			show_hang "$work/memcached.$m.hang"
		elif [[ $sst -ne 0 ]]; then
			note "$m" "memcached exited $sst: $(tail -c 300 "$work/memcached.$m.err" | tr '\n' ' ')"
		fi
		res_peak[$m]=$(sum_field "$work/memcached.$m.sum" peak_threads)
	done
	report memcached 5 "$(cat "$work/mc-native.native.out" 2>/dev/null)"
}

# ---- the JVM: Debian's OpenJDK ---------------------------------------------
# HotSpot waits with raw futex system calls (its safepoint barrier) as well
# as through pthreads, and keeps its own threads (GC, compilers, the VM
# thread) beside the program's.
jvm_classes=$B/tests/compat/java
jvm_conns=2000
# jvm_need: false (with a note for both modes) when the JVM case cannot run.
jvm_need() {
	local f
	for f in EchoServer JvmCpu; do
		if [[ ! -f $jvm_classes/$f.class ]]; then
			note native "$jvm_classes/$f.class missing: run 'make compat'"
			return 1
		fi
	done
	command -v java >/dev/null || { note native "no java: run 'make compat'"; return 1; }
}

# jvm_wait REGEX FILE PID SECS: until a line of FILE matches REGEX (grep
# -E); false if PID exits first or SECS pass. (The JVM listens on an IPv6
# socket, which wait_listen does not read.)
jvm_wait() {
	local i
	for ((i = 0; i < $4 * 100; i++)); do
		grep -Eq "$1" "$2" 2>/dev/null && return 0
		kill -0 "$3" 2>/dev/null || return 1
		sleep 0.01
	done
	return 1
}

# jvm-server: EchoServer.java, a new Thread per accepted connection (run
# both ways), holds $jvm_conns connections from net_load (native both
# times), which checks every echoed byte; its req/s is the rate shown.
# Once the server has accepted them all it gets SIGQUIT and must print
# HotSpot's full thread dump, every connection's thread in it, each with
# its own native id (nid), and go on serving. Under goshim the server may
# peak at 64 OS threads (natively it has one per connection).
t_jvm_server() {
	local m port pre sst quit nofile load i
	jvm_need || { report jvm-server 0 "not run"; return; }
	# net_load has a socket per connection; HotSpot raises its own limit.
	nofile=$(ulimit -H -n)
	if [[ $nofile != unlimited && $nofile -lt $((jvm_conns + 100)) ]]; then
		note native "hard limit of $nofile open files: $jvm_conns connections need more"
		report jvm-server 0 "not run"
		return
	fi
	for m in native goshim; do
		port=$(free_port)
		pre=()
		[[ $m == goshim ]] && pre=(-e "LD_PRELOAD=$lib")
		rm -f "$work/jvm.$m.hang"
		"$watchdog" --kill-after 5 --report "$work/jvm.$m.hang" --label "jvm-server ($m)" \
			"$timeout_s" "$ps" -i 5 -o "$work/jvm.$m.sum" "${pre[@]}" -- \
			java -cp "$jvm_classes" EchoServer "$port" "$jvm_conns" \
			>"$work/jvm.$m.out" 2>"$work/jvm.$m.err" </dev/null &
		server=$!
		# The thread dump, once every connection has its thread.
		(
			if jvm_wait "^accepted $jvm_conns " "$work/jvm.$m.out" "$server" "$timeout_s"; then
				kill -QUIT "$(awk '$1 == "pid" { print $2; exit }' "$work/jvm.$m.out")"
			fi
		) &
		quit=$!
		if jvm_wait "^pid [0-9]+ listening$" "$work/jvm.$m.out" "$server" 30; then
			run native "jvm-load-$m" bash -c 'ulimit -S -n $(($2 + 100)) && exec "$1" -P echo "$3" "$2" 1000 3000' \
				sh "$B/tools/net_load" "$jvm_conns" "$port"
			check_status "$m" "jvm-load-$m" native
			account "$m"
			load=$work/jvm-load-$m.native.out
			[[ $(awk '$1 == "conns" { print $2 }' "$load") == "$jvm_conns" ]] ||
				note "$m" "net_load connected $(awk '$1 == "conns" { print $2 }' "$load") of $jvm_conns"
			res_rate[$m]="$(awk '$1 == "reqs_per_s" { print $2 }' "$load") req/s"
		else
			note "$m" "EchoServer did not listen on $port: $(head -c 300 "$work/jvm.$m.err")"
			kill "$server" 2>/dev/null || true
		fi
		# Its connections are all gone now: it ends (else, say, a
		# client that never connected them all, it is told to).
		for ((i = 0; i < 300; i++)); do
			kill -0 "$server" 2>/dev/null &&
				[[ $(awk '{ print $3 }' "/proc/$server/stat" 2>/dev/null) != Z ]] || break
			sleep 0.1
		done
		kill "$server" 2>/dev/null || true
		sst=0
		wait "$server" || sst=$?
		server=
		wait "$quit" || true
		if [[ $sst -eq 124 ]]; then
			note "$m" "EchoServer timed out after ${timeout_s}s"
			show_hang "$work/jvm.$m.hang"
		elif [[ $sst -ne 0 ]]; then
			note "$m" "EchoServer exited $sst: $(tail -c 300 "$work/jvm.$m.err" | tr '\n' ' ')"
		fi
		grep -q "^served $jvm_conns connections, $jvm_conns at once, 0 failed$" "$work/jvm.$m.out" ||
			note "$m" "EchoServer: $(tail -1 "$work/jvm.$m.out")"
		# The dump: its head, one entry per thread, its end.
		awk -v n="$jvm_conns" '
			/^Full thread dump / { head++ }
			/^"conn-[0-9]+" / { conn++ }
			/^"/ && match($0, / nid=0x[0-9a-f]+ /) { nid[substr($0, RSTART, RLENGTH)]++; threads++ }
			/^JNI global refs: / { tail++ }
			END {
				for (k in nid) if (nid[k] > 1) dup++
				if (head != 1 || tail != 1) { print "SIGQUIT: " head + 0 " thread dumps, " tail + 0 " ends"; exit 1 }
				if (conn != n) { print "SIGQUIT: the dump lists " conn + 0 " of " n " connection threads"; exit 1 }
				if (dup) { print "SIGQUIT: " dup " native ids shared among the dump'"'"'s " threads " threads"; exit 1 }
			}' "$work/jvm.$m.out" >"$work/jvm.$m.dump" || note "$m" "$(cat "$work/jvm.$m.dump")"
		res_peak[$m]=$(sum_field "$work/jvm.$m.sum" peak_threads)
	done
	if [[ ${res_peak[goshim]} != "?" && ${res_peak[goshim]} -gt 64 ]]; then
		note goshim "peak of ${res_peak[goshim]} OS threads (want <= 64)"
	fi
	report jvm-server "$jvm_conns" "$jvm_conns connections, every echo checked; SIGQUIT thread dump"
}

# jvm-cpu: JvmCpu.java, a ForkJoinPool of 64 workers (merge sort,
# parallel streams) and 256 threads on contended monitors, in a 256 MB
# heap that the collector empties many times meanwhile; the results must
# be equal. (In 128 MB, when the 256 threads happen to be all halfway
# through their lists at once, which goroutines stopped at the end of
# their slices often are, the heap fills and G1 compacts it over and
# over: up to 15 s instead of 1.)
t_jvm_cpu() {
	jvm_need || { report jvm-cpu 0 "not run"; return; }
	same_output jvm-cpu jvm-cpu 64 java -Xmx256m -cp "$jvm_classes" JvmCpu
}

# ---- stress-ng's pthread stressor -------------------------------------------

# stress-ng --pthread: 4 workers, each making up to 256 threads at a time
# for 10 s, every thread checking its own tid (gettid, set_tid_address,
# tgkill, tkill) and robust list; --verify checks the counters. Exit status
# 0, "successful run", no "fail:" line; the rate is its bogo ops/s.
t_stress_ng() {
	local m out
	for m in native goshim; do
		run "$m" stress-ng stress-ng --pthread 4 --pthread-max 256 --verify \
			-t 10s --metrics-brief --temp-path "$work"
		check_status "$m" stress-ng
		account "$m"
		out=$(cat "$work/stress-ng.$m.out" "$work/stress-ng.$m.err")
		grep -q 'successful run completed' <<<"$out" ||
			note "$m" "no successful run: $(grep -m1 -E 'fail|error' <<<"$out")"
		! grep -q 'fail:' <<<"$out" ||
			note "$m" "$(grep -m1 'fail:' <<<"$out")"
		res_rate[$m]=$(awk '$4 == "pthread" && $5 ~ /^[0-9]+$/ { printf "%.0f ops/s", $(NF-1) }' <<<"$out")
	done
	report stress-ng 100 "--pthread 4 --pthread-max 256 --verify -t 10s"
}

# ---- CPython's own test_threading -------------------------------------------

# python -m test test_threading -v (Debian's libpythonX.Y-testsuite): every
# test's outcome ("ok", "skipped 'why'", FAIL, ERROR) must be the same
# natively and under goshim, and the suite must pass natively.
t_py_test_threading() {
	local m
	for m in native goshim; do
		run "$m" pytest-threading env -C "$work" /usr/bin/python3 -m test \
			test_threading -v --timeout 120
		check_status "$m" pytest-threading
		account "$m"
		grep -E ' \.\.\. (ok|FAIL|ERROR|skipped|expected failure|unexpected success)' \
			"$work/pytest-threading.$m.out" | sort >"$work/pytest-threading.$m.res" || true
		[[ -s $work/pytest-threading.$m.res ]] || note "$m" "no test outcomes in the output"
	done
	cmp -s "$work/pytest-threading.native.res" "$work/pytest-threading.goshim.res" ||
		note goshim "outcomes differ: $(diff "$work/pytest-threading.native.res" "$work/pytest-threading.goshim.res" | grep '^[<>]' | head -3 | tr '\n' ' ')"
	report py-threading 4 "$(wc -l <"$work/pytest-threading.native.res") tests, same outcomes"
}

all=(pigz sysbench_threads sysbench_mutex sort cxx rust python openssl curl memcached zstd jvm_server jvm_cpu)
all+=(stress_ng py_test_threading)
[[ $# -gt 0 ]] && all=("$@")
for t in "${all[@]}"; do
	if ! declare -F "t_$t" >/dev/null; then
		echo "compat: no program '$t' (have: $(declare -F | sed -n 's/^declare -f t_//p' | tr '\n' ' '))" >&2
		exit 2
	fi
done
for t in "${all[@]}"; do
	begin
	"t_$t"
done
echo "$passed passed, $failed failed"
[[ $failed -eq 0 ]]
