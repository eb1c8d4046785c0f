#!/usr/bin/env bash
# scripts/demo.sh BUILD_DIR: the before/after demo (`make demo`, which
# builds what it needs first).
#
# 1. `goshim stress` on the bundled thread-per-connection HTTP server
#    (tests/servers/legacy_httpd.c) at 100, 1,000 and 10,000 keep-alive
#    connections, natively and under goshim, and a check of the main claim:
#    at 10,000 connections goshim runs it on at most GOMAXPROCS + 4 OS
#    threads where native needs 10,000+.
# 2. `goshim stress --mem-limit` on the same server: how many idle
#    keep-alive connections it holds in a memory cgroup limited to
#    DEMO_MEM_LIMIT (default 128M, user + kernel) natively and under goshim,
#    and what each connection costs (the program's own pages, the kernel's
#    per-thread memory, socket buffers). Skipped, with the reason, where no
#    memory cgroup can be made.
# 3. Bundled thread-heavy programs natively and under goshim: wall time and
#    peak OS threads side by side.
#
# Each connection needs an fd in the server and one in the load generator:
# the soft RLIMIT_NOFILE is raised to the hard one here, as a server's
# start-up script would (the library itself never changes limits).
# Environment: DEMO_CONNS (default 100,1000,10000), DEMO_DURATION (seconds
# per level, default 3), DEMO_MEM_LIMIT (default 128M), DEMO_PORT (default: a
# free one). Exits 1 if the claim does not hold or a run failed.
set -euo pipefail
B=${1:-build}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
conns=${DEMO_CONNS:-100,1000,10000}
# a port free now (the kernel's pick), unless one is given
port=${DEMO_PORT:-$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')}
ulimit -Sn "$(ulimit -Hn)"
procs=${GOMAXPROCS:-$(nproc)}
work=$(mktemp -d "${TMPDIR:-/tmp}/goshim-demo.XXXXXX")
trap 'rm -rf "$work"' EXIT

echo "== goshim stress: the bundled thread-per-connection HTTP/1.1 server"
status=0
"$here/scripts/goshim" stress --server "$B/tests/servers/legacy_httpd $port" \
	--port "$port" --proto http --conns "$conns" --hits /hits \
	--duration "${DEMO_DURATION:-3}" --json-file "$work/stress.json" || status=1

# The claim, at the largest connection count.
python3 - "$work/stress.json" "$procs" <<'PY' || status=1
import json, sys
doc = json.load(open(sys.argv[1]))
procs = int(sys.argv[2])
top = max(doc["levels"], key=lambda l: l["conns"])
n, lim = top["conns"], procs + 4
nat = top.get("native", {}).get("peak_threads")
gs = top.get("goshim", {}).get("peak_threads")
ok = nat is not None and gs is not None and gs <= lim and nat >= n
print(f"\nat {n:,} connections: native {nat} OS threads (wants >= {n:,}), "
      f"goshim {gs} (wants <= GOMAXPROCS + 4 = {lim}): {'OK' if ok else 'NOT MET'}")
sys.exit(0 if ok else 1)
PY

echo
echo "== goshim stress --mem-limit: connections held in ${DEMO_MEM_LIMIT:-128M} of memory"
st=0
"$here/scripts/goshim" stress --server "$B/tests/servers/legacy_httpd $port" \
	--port "$port" --proto http --mem-limit "${DEMO_MEM_LIMIT:-128M}" 2>"$work/limit.err" || st=$?
if [[ $st -ne 0 ]]; then
	if grep -q 'no memory cgroup to run in: ' "$work/limit.err"; then
		echo "skipped: $(tail -n 1 "$work/limit.err")"
	else
		cat "$work/limit.err" >&2
		status=1
	fi
fi

echo
echo "== bundled thread-heavy programs"
tp=$B/tools/threadpeak
mkdir -p "$B/tools"
if [[ ! -x $tp || $here/tests/tools/threadpeak.c -nt $tp ]]; then
	${CC:-cc} -O2 -std=gnu11 -o "$tp" "$here/tests/tools/threadpeak.c"
fi
lib=$(readlink -f "$B/libgoshim.so")
printf '%-14s %14s %14s %12s %12s\n' program "native threads" "goshim threads" "native s" "goshim s"
for prog in net_echo pipe_pairs cpu_bound spawn_tree create_join; do
	bin=$B/tests/progs/$prog
	out=$work/peak
	THREADPEAK_OUT=$out "$tp" "$bin" >/dev/null
	read -r npeak nsec <"$out"
	THREADPEAK_OUT=$out "$tp" env LD_PRELOAD="$lib" "$bin" >/dev/null
	read -r gpeak gsec <"$out"
	printf '%-14s %14s %14s %12s %12s\n' "$prog" "$npeak" "$gpeak" "$nsec" "$gsec"
done
exit "$status"
