#!/usr/bin/env bash
# tests/ptree/run.sh BUILD_DIR [NAME...]: `make ptree`, part of `make check`
# and of every `make stress` round.
#
# LD_PRELOAD is inherited: under goshim every shell, every coreutil, every
# child a script starts runs under goshim too. Each case here is real
# shell-heavy work (pipelines, background jobs and wait, trap handlers,
# kill between processes, nested shells, python's subprocess, a Debian
# program that is a shell script, make -j2) run twice: natively, and with
# LD_PRELOAD=libgoshim.so exported so that every process of the tree has
# it. Both runs must print the same and exit the same. Every run is
# bounded by tests/run/watchdog.py: one that hangs is reported (goroutine
# dumps of the processes under goshim, the threads of the others), killed,
# and fails the case.
#
# PTREE_SELF=1 (the default) adds a case that builds this project itself
# with make -j2 and compares the libraries' exported symbols; `make stress`
# sets it to 0 (a minute a round). PTREE_BOUND=S bounds each run (120).
set -euo pipefail

if [[ $# -lt 1 ]]; then
	echo "usage: $0 BUILD_DIR [NAME...]" >&2
	exit 2
fi
B=$(readlink -f "$1")
shift
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
lib=$B/libgoshim.so
hold=$B/tools/hold
watchdog=$here/tests/run/watchdog.py
bound=${PTREE_BOUND:-120}
self=${PTREE_SELF:-1}
for f in "$lib" "$hold"; do
	[[ -x $f || -f $f ]] || { echo "ptree: $f missing: run make all tools first" >&2; exit 2; }
done
work=$(mktemp -d "${TMPDIR:-/tmp}/ptree.XXXXXX")
hog=
cleanup() {
	[[ -n $hog ]] && kill "$hog" 2>/dev/null
	rm -rf "$work"
}
trap cleanup EXIT
export hold work here
# The cases' make runs are the program under test, not part of the make
# that started this script (make check's MAKEFLAGS would change what they
# print).
unset MAKEFLAGS MFLAGS MAKELEVEL MAKEOVERRIDES

# ---- the cases: each prints what it saw on stdout ---------------------------

case_pipeline() {
	sh -c 'seq 1 50000 | sort -rn | head -3; printf "a\nb\nc\n" | tr a-z A-Z | wc -l'
}

# Threaded programs as background jobs of dash and bash, and wait for
# them, next to a busy CPU (the hog): a wait must not depend on timing.
case_jobs_wait() {
	for i in 1 2 3 4 5; do
		sh -c '$hold 10 1 50 >/dev/null & $hold 20 1 50; wait; echo "dash: waited $?"'
	done
	bash -c '$hold 3 1 40 >/dev/null & a=$!; (exit 4) & b=$!; wait $b; echo "bash: b $?"; wait $a; echo "bash: a $?"'
	bash -c 'sleep 0.3 & $hold 2 1 10 >/dev/null & wait -n; echo "bash: wait -n $?"; wait'
}

case_trap() {
	sh -c 'trap "echo caught USR1" USR1; kill -USR1 $$; echo after USR1
trap "echo caught TERM; kill \$pid; wait \$pid; exit 3" TERM
$hold 4 1 5000 >/dev/null & pid=$!
kill -TERM $$
echo not reached' || echo "sh exited $?"
	bash -c 'trap "echo EXIT trap" EXIT; trap "echo INT trap" INT; kill -INT $$; $hold 2 1 10'
}

case_kill() {
	bash -c 'sleep 30 & p=$!; kill $p; wait $p; echo "sleep ended $?"
$hold 3 1 30000 >/dev/null & p=$!; sleep 0.2; kill -TERM $p; wait $p; echo "hold ended $?"
$hold 3 1 30000 >/dev/null & p=$!; sleep 0.2; kill -KILL $p; wait $p; echo "hold killed $?"'
}

case_nested() {
	sh -c 'bash -c "sh -c \"$hold 2 1 10\" | cat; echo inner \$?"; echo outer $?' | sed 's/^/| /'
	sh -c 'x=$(sh -c "$hold 3 1 10"); echo "captured: $x"'
}

case_python() {
	python3 - <<'EOF'
import concurrent.futures, os, subprocess
hold = os.environ["hold"]
r = subprocess.run([hold, "4", "1", "10"], capture_output=True, text=True)
print("run:", r.returncode, r.stdout.strip())
print("shell pipe:", subprocess.check_output("echo hi | tr h H", shell=True, text=True).strip())
def one(n):
    return subprocess.check_output(["sh", "-c", 'echo "job $0"; exec ' + hold + ' 2 1 5', str(n)], text=True).split("\n")[0]
with concurrent.futures.ThreadPoolExecutor(4) as ex:
    print("pool:", sorted(ex.map(one, range(8))))
p = subprocess.Popen(["sleep", "30"])
p.terminate()
print("terminated:", p.wait())
EOF
}

# zgrep and gunzip are shell scripts around gzip in Debian.
case_wrapper() {
	printf 'alpha\nbeta\ngamma\n' | gzip >"$work/f.gz"
	zgrep -c a "$work/f.gz"
	gunzip -c "$work/f.gz" | wc -l
	zgrep -h gamma "$work/f.gz"
}

case_make() {
	local d
	d=$(mktemp -d "$work/make.XXXXXX")
	for i in 1 2 3 4 5 6; do
		printf 'int f%d(void) { return %d; }\n' "$i" "$i" >"$d/f$i.c"
	done
	cat >"$d/main.c" <<'EOF'
#include <stdio.h>
int f1(void), f2(void), f3(void), f4(void), f5(void), f6(void);
int main(void) { printf("sum %d\n", f1() + f2() + f3() + f4() + f5() + f6()); return 0; }
EOF
	printf 'OBJS := main.o f1.o f2.o f3.o f4.o f5.o f6.o\nprog: $(OBJS)\n\t$(CC) -o $@ $(OBJS)\n%%.o: %%.c\n\t$(CC) -c -o $@ $<\n' >"$d/Makefile"
	make -s -j2 --no-print-directory -C "$d" && "$d/prog"
}

# This project, built with make -j2 under goshim: the same library.
case_self() {
	local d
	d=$(mktemp -d "$work/self.XXXXXX")
	make -s -j2 --no-print-directory -C "$here" B="$d" "$d/libgoshim.so" >/dev/null
	nm -D --defined-only "$d/libgoshim.so" | awk '{ print $NF }' | sort | md5sum | cut -c1-32
}

cases=(pipeline jobs_wait trap kill nested python wrapper make)
[[ $self == 1 ]] && cases+=(self)
[[ $# -gt 0 ]] && cases=("$@")

# A busy CPU beside every run, as the machine of a user who hit a hang had.
sh -c 'while :; do :; done' &
hog=$!

fails=0 passed=0
for c in "${cases[@]}"; do
	declare -F "case_$c" >/dev/null || { echo "ptree: no case $c" >&2; exit 2; }
	for side in native goshim; do
		st=0
		if [[ $side == native ]]; then
			"$watchdog" --label "ptree $c (native)" "$bound" \
				env -u LD_PRELOAD bash -o pipefail -c "$(declare -f "case_$c"); case_$c" \
				>"$work/$c.$side.out" 2>"$work/$c.$side.err" || st=$?
		else
			"$watchdog" --label "ptree $c (goshim)" "$bound" \
				env LD_PRELOAD="$lib" bash -o pipefail -c "$(declare -f "case_$c"); case_$c" \
				>"$work/$c.$side.out" 2>"$work/$c.$side.err" || st=$?
		fi
		echo "$st" >"$work/$c.$side.status"
	done
	ns=$(cat "$work/$c.native.status") gs=$(cat "$work/$c.goshim.status")
	if [[ $gs -eq 124 ]]; then
		echo "FAIL $c: goshim run hung (killed after ${bound}s):"
		sed 's/^/    /' "$work/$c.goshim.err" | tail -80
		fails=$((fails + 1))
	elif [[ $ns -ne $gs ]] || ! cmp -s "$work/$c.native.out" "$work/$c.goshim.out"; then
		echo "FAIL $c: native exit $ns, goshim exit $gs"
		diff -u "$work/$c.native.out" "$work/$c.goshim.out" | sed 's/^/    /' | head -40
		sed 's/^/    goshim stderr: /' "$work/$c.goshim.err" | tail -20
		fails=$((fails + 1))
	else
		echo "PASS $c  ($(wc -l <"$work/$c.goshim.out") lines, exit $gs)"
		passed=$((passed + 1))
	fi
done
echo "ptree: $passed passed, $fails failed"
[[ $fails -eq 0 ]]
