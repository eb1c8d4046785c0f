#!/usr/bin/env bash
# tests/run/run-progs.sh BUILD_DIR PROG...
#
# Runs each test program natively and then with LD_PRELOAD=BUILD_DIR/libgoshim.so
# and compares: same stdout, same exit status, and the per-program thread-count
# bounds. Expectations come from header lines in the program's source
# (tests/progs/NAME.c or NAME.cc):
#
#   // goshim-test: shim-max-threads=GOMAXPROCS+2   peak OS threads under goshim
#   // goshim-test: shim-min-threads=N
#   // goshim-test: native-min-threads=1001         peak OS threads natively
#   // goshim-test: native-max-threads=N
#   // goshim-test: timeout=60                      seconds per run (default 120)
#   // goshim-test: env=GOMAXPROCS=1                extra env, both runs (repeatable)
#   // goshim-test: shim-env=GOSHIM_DEBUG=...       extra env, goshim run only
#   // goshim-test: args=1000                       command-line arguments
#   // goshim-test: exit=0                          expected exit status (default 0)
#   // goshim-test: shim-only=1                     no native run (natively it
#                                                   would hang or cannot run);
#                                                   stdout must equal NAME.expected
#                                                   next to the source, if present
#   // goshim-test: shim-stderr=REGEX               goshim's stderr must match (grep -E)
#   // goshim-test: no-chaos=REASON                 the goshim run drops chaos from
#                                                   the caller's GOSHIM_DEBUG (for a
#                                                   latency bar that chaos's added
#                                                   yields would miss)
#
# GOMAXPROCS in a bound = the GOMAXPROCS that run gets (header env, else the
# caller's environment, else `nproc`). GOSHIM_TEST_FILTER=REGEX (grep -E)
# selects programs by name.
#
# Checked runs of an instrumented library (make asan, make valgrind) change
# only the goshim run: GOSHIM_TEST_PRELOAD=LIBS goes before goshim in
# LD_PRELOAD (ASan's runtime must be the first library), GOSHIM_TEST_WRAP=CMD
# runs the program under CMD (valgrind ...), GOSHIM_TEST_SLOW=N multiplies
# every timeout, GOSHIM_TEST_EXCLUDE=FILE names programs that are not
# run, one "NAME  reason" a line (# comments), each reported SKIP with its
# reason, and GOSHIM_TEST_SHIM_BOUNDS=0 drops the shim-*-threads bounds: a
# checker's own locks block Ms out of goshim's sight, and sysmon rightly
# starts other Ms for their Ps. Peak thread counts are sampled every ~1 ms by
# tests/tools/threadpeak.c, which this script compiles into BUILD_DIR/tools.
#
# GOSHIM_TEST_NATIVE_CACHE=DIR keeps each passing program's native run
# (stdout, stderr, status, peak threads) in DIR and reuses it instead of
# running the program natively again: `make stress` loops goshim, and the
# native side, which goshim cannot change, needs running only once.
#
# The caller's GOSHIM_DEBUG (chaos=1 in `make stress`) reaches every goshim
# run, added to a program's own shim-env GOSHIM_DEBUG; a failing run's
# chaos seed is shown with the failure. Under chaos shim-max-threads is not
# checked: the peak counts what is blocked at one moment (wired goroutines,
# Ms in system calls, glibc's timer threads waiting for a lock), which is
# timing, and chaos's timing is not the one a bound was measured for; the
# rounds without chaos check it. Everything else is checked as always.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

if [[ $# -lt 1 ]]; then
	echo "usage: $0 BUILD_DIR PROG..." >&2
	exit 2
fi
B=$1
shift

if [[ ! -f $B/libgoshim.so ]]; then
	echo "run-progs: FATAL: $B/libgoshim.so does not exist (build it with 'make' first)" >&2
	exit 2
fi
if [[ ! -r $B/libgoshim.so ]]; then
	echo "run-progs: FATAL: $B/libgoshim.so is not readable" >&2
	exit 2
fi
lib=$(realpath "$B/libgoshim.so")

# The sampler.
tp=$B/tools/threadpeak
tp_src=$here/../tools/threadpeak.c
if [[ ! -x $tp || $tp_src -nt $tp ]]; then
	mkdir -p "$B/tools"
	${CC:-cc} -O2 -Wall -Wextra -Werror -std=gnu11 -o "$tp.tmp.$$" "$tp_src"
	mv -f "$tp.tmp.$$" "$tp"
fi

# Programs that hold many fds (net_echo_19k) need the soft RLIMIT_NOFILE
# raised to the hard one, as a server's start-up script would; goshim
# itself never changes limits.
ulimit -Sn "$(ulimit -Hn)"

default_gomaxprocs=${GOMAXPROCS:-$(env -u OMP_NUM_THREADS -u OMP_THREAD_LIMIT nproc)}

preload=$lib
[[ -n ${GOSHIM_TEST_PRELOAD:-} ]] && preload=$GOSHIM_TEST_PRELOAD:$lib
read -r -a wrap <<<"${GOSHIM_TEST_WRAP:-}"
slow=${GOSHIM_TEST_SLOW:-1}
shim_bounds=${GOSHIM_TEST_SHIM_BOUNDS:-1}
declare -A excluded=()
if [[ -n ${GOSHIM_TEST_EXCLUDE:-} ]]; then
	while read -r xname xwhy; do
		[[ -z $xname || $xname == \#* ]] && continue
		excluded[$xname]=${xwhy:-no reason given}
	done <"$GOSHIM_TEST_EXCLUDE"
fi
# Settings of this script, not of goshim (which reports unknown GOSHIM_
# settings): the programs do not see them.
export -n GOSHIM_TEST_FILTER GOSHIM_TEST_PRELOAD GOSHIM_TEST_WRAP \
	GOSHIM_TEST_SLOW GOSHIM_TEST_EXCLUDE GOSHIM_TEST_SHIM_BOUNDS \
	GOSHIM_TEST_NATIVE_CACHE

work=$(mktemp -d "${TMPDIR:-/tmp}/run-progs.XXXXXX")
trap 'rm -rf "$work"' EXIT

# run_timed PREFIX CMD...: CMD under the watchdog (tests/run/watchdog.py: killed
# after timeout_s, SIGKILL 5 s after SIGTERM, exit 124) and threadpeak;
# PREFIX.out, PREFIX.err, PREFIX.peak, and on a time out PREFIX.hang: what
# each process was doing (goroutine dumps, taken with `goshim dump`, or
# its threads from /proc). The watchdog puts the command in a process group
# of its own, so an interrupt of this script has to be passed on by hand.
running=
run_timed() {
	local p=$1
	shift
	rm -f "$p.hang"
	THREADPEAK_OUT=$p.peak "$here/watchdog.py" --kill-after 5 --report "$p.hang" \
		--label "$name ($(basename "$p") run)" "$timeout_s" "$tp" "$@" \
		>"$p.out" 2>"$p.err" </dev/null &
	running=$!
	local st=0
	wait "$running" 2>/dev/null || st=$?
	running=
	return "$st"
}
on_interrupt() {
	if [[ -n $running ]]; then
		kill -TERM -- "-$running" 2>/dev/null || kill -TERM "$running" 2>/dev/null || true
	fi
	echo "run-progs: interrupted" >&2
	exit 130
}
trap on_interrupt INT TERM

passed=0
failed=0
skipped=0

indent() { sed 's/^/    /'; }

# describe_status STATUS TIMEOUT PEAKFILE -> "exit status N", "killed by SIGSEGV", ...
describe_status() {
	local st=$1 tmo=$2
	if [[ $st -eq 124 ]]; then
		echo "timed out after ${tmo}s"
	elif [[ $st -eq 137 && ! -s $3 ]]; then
		# timeout -k killed threadpeak too, so it wrote no peak file
		echo "timed out after ${tmo}s, ignored SIGTERM, killed with SIGKILL"
	elif [[ $st -gt 128 && $st -lt 160 ]]; then
		echo "killed by SIG$(kill -l $((st - 128)) 2>/dev/null || echo $((st - 128)))"
	else
		echo "exit status $st"
	fi
}

# eval_bound EXPR GOMAXPROCS -> integer on stdout; nonzero status if malformed
eval_bound() {
	local e=${1//GOMAXPROCS/$2}
	e=${e// /}
	[[ $e =~ ^[0-9+*/()-]+$ ]] || return 1
	echo $((e))
}

for prog in "$@"; do
	name=$(basename "$prog")
	if [[ -n ${GOSHIM_TEST_FILTER:-} ]] && ! grep -qE -- "$GOSHIM_TEST_FILTER" <<<"$name"; then
		continue
	fi
	if [[ -n ${excluded[$name]:-} ]]; then
		echo "SKIP $name: ${excluded[$name]}"
		skipped=$((skipped + 1))
		continue
	fi

	fail() {
		echo "FAIL $name: $1"
		if [[ $# -gt 1 && -n $2 ]]; then printf '%s\n' "$2" | indent; fi
		failed=$((failed + 1))
	}

	if [[ ! -x $prog ]]; then
		fail "$prog is not an executable"
		continue
	fi
	src=
	for s in "$here/../progs/$name.c" "$here/../progs/$name.cc"; do
		[[ -f $s ]] && { src=$s; break; }
	done

	# ---- header expectations
	timeout_s=120
	exit_want=0
	args=()
	envs=()
	shim_envs=()
	shim_only=
	shim_stderr=
	no_chaos=
	declare -A bound=()
	bad_header=
	if [[ -n $src ]]; then
		while IFS= read -r line; do
			key=${line%%=*}
			val=${line#*=}
			[[ $line == *=* ]] || { bad_header="malformed header line '$line'"; break; }
			case $key in
			timeout) timeout_s=$val ;;
			exit) exit_want=$val ;;
			args) read -r -a args <<<"$val" ;;
			env) envs+=("$val") ;;
			shim-env) shim_envs+=("$val") ;;
			shim-only) shim_only=$val ;;
			shim-stderr) shim_stderr=$val ;;
			no-chaos) no_chaos=$val ;;
			native-min-threads | native-max-threads | shim-min-threads | shim-max-threads)
				bound[$key]=$val ;;
			*) bad_header="unknown goshim-test key '$key'"; break ;;
			esac
		done < <(sed -n 's|^[[:space:]]*//[[:space:]]*goshim-test:[[:space:]]*||p' "$src" | sed 's/[[:space:]]*$//')
	fi
	if [[ -n $bad_header ]]; then
		fail "$src: $bad_header"
		unset bound
		continue
	fi

	shim_debug=${GOSHIM_DEBUG:-}
	if [[ -n $no_chaos ]]; then
		shim_debug=$(tr , '\n' <<<"$shim_debug" | grep -v '^chaos' | paste -sd, || true)
	fi
	chaos_run=
	if [[ ,$shim_debug, =~ ,chaos=0*[1-9] ]]; then chaos_run=1; fi
	if [[ -n $shim_debug ]]; then
		own=
		for i in "${!shim_envs[@]}"; do
			if [[ ${shim_envs[$i]} == GOSHIM_DEBUG=* ]]; then
				shim_envs[$i]+=",$shim_debug"
				own=1
			fi
		done
		if [[ -z $own ]]; then shim_envs+=("GOSHIM_DEBUG=$shim_debug"); fi
	fi

	gmp_native=$default_gomaxprocs
	for kv in "${envs[@]}"; do
		if [[ $kv == GOMAXPROCS=* ]]; then gmp_native=${kv#GOMAXPROCS=}; fi
	done
	gmp_shim=$gmp_native
	for kv in "${shim_envs[@]}"; do
		if [[ $kv == GOMAXPROCS=* ]]; then gmp_shim=${kv#GOMAXPROCS=}; fi
	done

	# ---- the two runs
	d=$work/$name
	mkdir -p "$d"
	st_native=0
	if [[ -n $shim_only ]]; then
		# Stand-in for the native run: the expected output, if any.
		expected=${src%.*}.expected
		if [[ -f $expected ]]; then cp "$expected" "$d/native.out"; else : >"$d/native.out"; fi
		: >"$d/native.err"
		echo "0 0" >"$d/native.peak"
		st_native=$exit_want
	elif [[ -n ${GOSHIM_TEST_NATIVE_CACHE:-} && -f $GOSHIM_TEST_NATIVE_CACHE/$name/native.status ]]; then
		cp "$GOSHIM_TEST_NATIVE_CACHE/$name"/native.{out,err,peak} "$d/"
		st_native=$(<"$GOSHIM_TEST_NATIVE_CACHE/$name/native.status")
	else
		run_timed "$d/native" env -u LD_PRELOAD "${envs[@]}" "$prog" "${args[@]}" || st_native=$?
	fi
	st_shim=0
	timeout_s=$((timeout_s * slow))
	run_timed "$d/shim" env -u GOSHIM_DEBUG LD_PRELOAD="$preload" "${envs[@]}" "${shim_envs[@]}" "${wrap[@]}" "$prog" "${args[@]}" || st_shim=$?

	read -r peak_native secs_native 2>/dev/null <"$d/native.peak" || { peak_native='?'; secs_native='?'; }
	read -r peak_shim secs_shim 2>/dev/null <"$d/shim.peak" || { peak_shim='?'; secs_shim='?'; }

	# ---- verdict: first reason in the FAIL line, the evidence under it
	reason=
	detail=
	err_tail() {
		if [[ -s $2 ]]; then
			echo "$1 stderr (last 20 lines):"
			tail -n 20 "$2" || true
		else
			echo "$1 stderr: empty"
		fi
	}
	if grep -q "cannot be preloaded" "$d/shim.err"; then
		reason="ld.so did not preload $lib"
		detail=$(grep "cannot be preloaded" "$d/shim.err" | head -n 3 || true)
	elif [[ $st_native -ne $exit_want ]]; then
		reason="native run: $(describe_status "$st_native" "$timeout_s" "$d/native.peak") (expected exit status $exit_want): the test itself is broken"
		detail=$(err_tail native "$d/native.err")
	elif [[ $st_shim -ne $st_native ]]; then
		reason="goshim run: $(describe_status "$st_shim" "$timeout_s" "$d/shim.peak"), native: $(describe_status "$st_native" "$timeout_s" "$d/native.peak")"
		detail=$(err_tail goshim "$d/shim.err"
			echo "goshim stdout (last 10 lines):"
			tail -n 10 "$d/shim.out" || true)
	elif [[ -n $shim_stderr ]] && ! grep -qE -- "$shim_stderr" "$d/shim.err"; then
		reason="goshim stderr does not match /$shim_stderr/"
		detail=$(err_tail goshim "$d/shim.err")
	elif [[ -z $shim_only || -f ${src%.*}.expected ]] && ! cmp -s "$d/native.out" "$d/shim.out"; then
		reason="stdout differs (native vs goshim)"
		detail=$(diff -u --label native --label goshim "$d/native.out" "$d/shim.out" | head -n 40 || true)
	else
		for key in native-min-threads native-max-threads shim-min-threads shim-max-threads; do
			[[ -n ${bound[$key]:-} ]] || continue
			[[ -n $chaos_run && $key == shim-max-threads ]] && continue
			[[ -n $shim_only && $key == native-* ]] && continue # no native run
			[[ $shim_bounds == 0 && $key == shim-* ]] && continue
			if [[ $key == native-* ]]; then peak=$peak_native gmp=$gmp_native; else peak=$peak_shim gmp=$gmp_shim; fi
			if ! lim=$(eval_bound "${bound[$key]}" "$gmp"); then
				reason="bad bound $key=${bound[$key]}"
				break
			fi
			if [[ $peak == "?" ]]; then
				reason="no thread count sampled for the ${key%%-*} run"
				break
			fi
			if [[ $key == *-min-* && $peak -lt $lim ]] || [[ $key == *-max-* && $peak -gt $lim ]]; then
				run=${key%%-*}
				[[ $run == shim ]] && run=goshim
				reason="$run peak threads $peak violates $key=${bound[$key]} (= $lim, GOMAXPROCS=$gmp)"
				break
			fi
		done
	fi
	unset bound

	for run in native shim; do
		[[ -s $d/$run.hang ]] || continue
		# kept: the work directory goes at exit
		mkdir -p "$B/hang"
		cp "$d/$run.hang" "$B/hang/$name.$run.txt"
		detail+=$'\n'"$run run: what hung (first 80 lines; all in $B/hang/$name.$run.txt):"$'\n'$(head -n 80 "$d/$run.hang")
	done
	if [[ -n $reason ]]; then
		seed=$(grep -m1 '^goshim: chaos: seed' "$d/shim.err" || true)
		if [[ -n $seed ]]; then detail=$seed$'\n'$detail; fi
		fail "$reason" "$detail"
	else
		echo "PASS $name  native: ${secs_native}s $peak_native threads  goshim: ${secs_shim}s $peak_shim threads"
		if [[ -n ${GOSHIM_TEST_NATIVE_CACHE:-} && -z $shim_only ]]; then
			mkdir -p "$GOSHIM_TEST_NATIVE_CACHE/$name"
			cp "$d"/native.{out,err,peak} "$GOSHIM_TEST_NATIVE_CACHE/$name/"
			echo "$st_native" >"$GOSHIM_TEST_NATIVE_CACHE/$name/native.status"
		fi
		passed=$((passed + 1))
	fi
done

if [[ $skipped -gt 0 ]]; then
	echo "$passed passed, $failed failed, $skipped skipped"
else
	echo "$passed passed, $failed failed"
fi
[[ $failed -eq 0 ]]
