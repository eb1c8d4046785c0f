#!/usr/bin/env bash
# scripts/demo.sh BUILD_DIR: the before/after demo. Runs bundled thread-heavy
# programs natively and under goshim and prints wall time and peak OS
# threads side by side.
set -euo pipefail
B=${1:-build}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
tp=$B/tools/threadpeak
mkdir -p "$B/tools"
[[ -x $tp ]] || ${CC:-cc} -O2 -std=gnu11 -o "$tp" "$here/tests/tools/threadpeak.c"
lib=$(readlink -f "$B/libgoshim.so")

printf '%-14s %14s %14s %12s %12s\n' program "native threads" "goshim threads" "native s" "goshim s"
for prog in net_echo pipe_pairs cpu_bound spawn_tree create_join; do
	bin=$B/tests/progs/$prog
	out=$(mktemp)
	THREADPEAK_OUT=$out "$tp" "$bin" >/dev/null
	read -r npeak nsec <"$out"
	THREADPEAK_OUT=$out "$tp" env LD_PRELOAD="$lib" "$bin" >/dev/null
	read -r gpeak gsec <"$out"
	rm -f "$out"
	printf '%-14s %14s %14s %12s %12s\n' "$prog" "$npeak" "$gpeak" "$nsec" "$gsec"
done
