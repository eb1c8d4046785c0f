#!/usr/bin/env bash
# scripts/deps.sh [--compat]: install what building and testing goshim
# needs on a Debian machine, if it is missing. Run by `make check`, `make
# demo` and CI; does nothing when everything is there. --compat adds the
# real programs of the compatibility suite (`make compat`) and the headers
# its own clients build against.
set -euo pipefail

compat=0
case ${1:-} in
--compat) compat=1 ;;
"") ;;
*) echo "usage: deps.sh [--compat]" >&2; exit 2 ;;
esac

need=()
have_cmd() { command -v "$1" >/dev/null 2>&1; }
have_pkg() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q 'install ok installed'; }

have_cmd cc || need+=(gcc)
have_cmd c++ || need+=(g++)
have_cmd make || need+=(make)
have_cmd pkg-config || need+=(pkg-config)
# goshim compare and stress format with python3; tools-check parses with it.
have_cmd python3 || need+=(python3)
have_pkg check || need+=(check)
# libunwind: goroutine dump backtraces (dlopen'ed libunwind.so.8 at run
# time; the -dev package for its header at build time).
have_pkg libunwind-dev || need+=(libunwind-dev)
have_pkg libunwind8 || need+=(libunwind8)
have_cmd python3 || need+=(python3) # tests/run/diag-check.py
# make fuzz (CI runs it): clang with libFuzzer and the sanitizer runtimes.
have_cmd clang || need+=(clang)
have_pkg libclang-rt-dev || need+=(libclang-rt-dev)
# Optional: the aarch64 cross build of arch/ and the Go benchmark column.
if [[ ${GOSHIM_DEPS_OPTIONAL:-1} == 1 ]]; then
	have_cmd aarch64-linux-gnu-gcc || need+=(gcc-aarch64-linux-gnu)
	# Its C library headers are only a recommendation of the compiler's,
	# which --no-install-recommends leaves out.
	have_pkg libc6-dev-arm64-cross || need+=(libc6-dev-arm64-cross)
	have_cmd qemu-aarch64 || need+=(qemu-user)
	have_cmd go || need+=(golang-go)
fi
if [[ $compat == 1 ]]; then
	# GNU sort and sha256sum are coreutils, which Debian always has.
	have_cmd pigz || need+=(pigz)
	have_cmd sysbench || need+=(sysbench)
	have_cmd memcached || need+=(memcached)
	have_cmd zstd || need+=(zstd)
	have_pkg libcurl4-openssl-dev || need+=(libcurl4-openssl-dev)
	have_pkg libssl-dev || need+=(libssl-dev)
	# Rust's std threads (tests/compat/rust_threads.rs).
	have_cmd rustc || need+=(rustc)
	# The JVM case: Debian's OpenJDK, the JVM and javac.
	{ have_cmd java && have_cmd javac; } || need+=(default-jdk-headless)
	# stress-ng's pthread stressor, and CPython's own test_threading
	# (the test package of Debian's python3, named by its version).
	have_cmd stress-ng || need+=(stress-ng)
	if [[ -x /usr/bin/python3 ]]; then
		pyver=$(/usr/bin/python3 -c 'import sys; print("%d.%d" % sys.version_info[:2])')
		have_pkg "libpython$pyver-testsuite" || need+=("libpython$pyver-testsuite")
	fi
fi

[[ ${#need[@]} -eq 0 ]] && exit 0

if ! have_cmd apt-get; then
	echo "deps: missing ${need[*]} and no apt-get here: install them by hand" >&2
	exit 1
fi
sudo=
if [[ $(id -u) -ne 0 ]]; then
	if have_cmd sudo; then sudo=sudo; else
		echo "deps: missing ${need[*]}: run as root or install them" >&2
		exit 1
	fi
fi
echo "deps: installing ${need[*]}"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
# CPython's test package is named by the version of the python3 just
# installed: a machine that had none learns it only now.
if [[ $compat == 1 && -x /usr/bin/python3 ]]; then
	pyver=$(/usr/bin/python3 -c 'import sys; print("%d.%d" % sys.version_info[:2])')
	have_pkg "libpython$pyver-testsuite" ||
		$sudo apt-get install -y -qq --no-install-recommends "libpython$pyver-testsuite" >/dev/null
fi
