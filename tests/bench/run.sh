#!/usr/bin/env bash
# tests/bench/run.sh BUILD_DIR: builds the create/join benchmarks and runs
# them natively, under goshim (LD_PRELOAD=BUILD_DIR/libgoshim.so) and as Go,
# then prints one table. BENCH_N=pairs per shape (default 100000).
# Numbers are informational: nothing here fails on time; a run that crashes
# makes the exit status 1.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
if [[ $# -ne 1 ]]; then
	echo "usage: $0 BUILD_DIR" >&2
	exit 2
fi
B=$1
out=$B/bench
mkdir -p "$out"
n=${BENCH_N:-100000}
status=0

${CC:-cc} -O2 -Wall -Wextra -Werror -std=gnu11 -pthread \
	-o "$out/create_join" "$here/create_join.c"

have_go=
if command -v go >/dev/null 2>&1; then
	# a cache of our own: HOME may be unset or read-only (CI)
	export GOCACHE=${GOCACHE:-$(realpath "$out")/go-cache}
	export GOPATH=${GOPATH:-$(realpath "$out")/go-path}
	if GO111MODULE=off go build -o "$out/create_join_go" "$here/create_join.go"; then
		have_go=1
	else
		echo "note: go build failed; no Go column"
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

declare -A ns=()
# run KIND CMD...: fills ns[KIND,SHAPE] from the "SHAPE NS" lines
run() {
	local kind=$1
	shift
	local txt st=0
	txt=$(timeout -k 5 600 "$@" "$n" </dev/null) || st=$?
	if [[ $st -ne 0 ]]; then
		echo "note: $kind run failed (exit status $st)"
		status=1
		return 0
	fi
	local shape v
	while read -r shape v; do
		ns[$kind,$shape]=$v
	done <<<"$txt"
}

run native env -u LD_PRELOAD "$out/create_join"
[[ -z $lib ]] || run goshim env LD_PRELOAD="$lib" "$out/create_join"
[[ -z $have_go ]] || run go "$out/create_join_go"

ratio() { # A B -> A/B, or - when either is missing
	if [[ -n $1 && -n $2 ]]; then
		awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2fx", a / b; else print "-" }'
	else
		echo -
	fi
}

echo
echo "create+join, ns per pair, N=$n per shape, GOMAXPROCS=${GOMAXPROCS:-$(nproc)} ($(nproc) CPUs)"
echo "targets (not asserted): native/goshim >= 20x; goshim/Go <= 2x"
printf '%-10s %12s %12s %12s %14s %12s\n' shape native goshim Go native/goshim goshim/Go
for shape in serial batch100; do
	nat=${ns[native,$shape]:-}
	gs=${ns[goshim,$shape]:-}
	g=${ns[go,$shape]:-}
	printf '%-10s %12s %12s %12s %14s %12s\n' "$shape" "${nat:--}" "${gs:--}" "${g:--}" \
		"$(ratio "$nat" "$gs")" "$(ratio "$gs" "$g")"
done
exit "$status"
