#!/usr/bin/env bash
# tests/fuzz/run.sh BUILD_DIR SECONDS NAME...
#
# Runs each libFuzzer harness BUILD_DIR/fuzz/fuzz_NAME for SECONDS,
# starting from the seeds in tests/fuzz/corpus/NAME (never written) and
# what earlier runs kept in BUILD_DIR/fuzz/corpus/NAME (new inputs go
# there), with tests/fuzz/NAME.dict when present. Every seed is run
# first, so a crash found once and added to the seeds fails at once.
# Stops at the first crash, leak or broken property: the input is left
# in BUILD_DIR/fuzz/ and the way to rerun it printed.
set -euo pipefail

if [[ $# -lt 3 ]]; then
	echo "usage: $0 BUILD_DIR SECONDS NAME..." >&2
	exit 2
fi
B=$1
secs=$2
shift 2
src=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

for name in "$@"; do
	bin=$B/fuzz/fuzz_$name
	work=$B/fuzz/corpus/$name
	mkdir -p "$work"
	opts=(-max_total_time="$secs" -print_final_stats=1
	      -artifact_prefix="$B/fuzz/$name-" -max_len=16384)
	[[ -f $src/$name.dict ]] && opts+=(-dict="$src/$name.dict")
	# parse_debug names every bad item on stderr.
	[[ $name == debug ]] && opts+=(-close_fd_mask=2)
	echo "== fuzz_$name: ${secs}s"
	log=$B/fuzz/$name.log
	if ! "$bin" "${opts[@]}" "$work" "$src/corpus/$name" >"$log" 2>&1; then
		tail -n 40 "$log"
		input=$(sed -n 's/.*Test unit written to //p' "$log" | tail -n 1)
		echo "fuzz: fuzz_$name failed; rerun it with: $bin $input" >&2
		exit 1
	fi
	grep -E '^stat::(number_of_executed_units|new_units_added)|cov:' \
		"$log" | tail -n 3
done
echo "fuzz: no failure (harnesses: $*; ${secs}s each)"
