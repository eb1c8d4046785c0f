# goshim: `make` builds build/libgoshim.so and what scripts/goshim runs
# beside it (procsample, net_load, the bundled servers); `make check` builds and runs
# every test (unit tests with check, then each program in tests/progs
# natively and under the library).

ARCH    ?= $(shell uname -m)
CC      ?= cc
CXX     ?= c++
B       := build

WARN    := -Wall -Wextra -Werror
CFLAGS  ?= -O2 -g
LIBCFLAGS := $(CFLAGS) $(WARN) -std=gnu11 -D_GNU_SOURCE -fPIC \
	-fvisibility=hidden -ftls-model=initial-exec -fno-omit-frame-pointer \
	-fexceptions
LIBLDFLAGS := -shared -Wl,-z,now -Wl,--no-undefined -Wl,-z,noexecstack

# SAN=undefined builds the library and the unit tests with UBSan (make
# B=build-ubsan SAN=undefined check); `make asan` below builds them with
# SAN=address,undefined.
ifneq ($(SAN),)
SANFLAGS := -fsanitize=$(SAN) -fno-sanitize-recover=all
LIBCFLAGS += $(SANFLAGS)
LIBLDFLAGS += $(SANFLAGS)
endif

CORE_SRCS := $(wildcard core/*.c) $(wildcard arch/$(ARCH)/*.c) \
	$(wildcard arch/$(ARCH)/*.S)
SHIM_SRCS := $(wildcard shim/*.c)
CORE_OBJS := $(patsubst %,$(B)/obj/%.o,$(CORE_SRCS))
SHIM_OBJS := $(patsubst %,$(B)/obj/%.o,$(SHIM_SRCS))

all: $(B)/libgoshim.so

$(B)/obj/%.c.o: %.c $(wildcard core/*.h shim/*.h arch/*.h)
	@mkdir -p $(dir $@)
	$(CC) $(LIBCFLAGS) -c $< -o $@

$(B)/obj/%.S.o: %.S
	@mkdir -p $(dir $@)
	$(CC) $(LIBCFLAGS) -c $< -o $@

$(B)/libgoshim.so: $(CORE_OBJS) $(SHIM_OBJS)
	$(CC) $(LIBLDFLAGS) -o $@ $(CORE_OBJS) $(SHIM_OBJS) -ldl -pthread

# Core pieces linked straight into unit tests.
$(B)/libgoshim_core.a: $(CORE_OBJS)
	rm -f $@; ar rcs $@ $^

# ---- tests -----------------------------------------------------------------
CHECK_CFLAGS := $(shell pkg-config --cflags check 2>/dev/null)
CHECK_LIBS   := $(shell pkg-config --libs check 2>/dev/null)
UNIT_SRCS := $(wildcard tests/unit/check_*.c)
UNIT_BINS := $(patsubst tests/unit/%.c,$(B)/tests/unit/%,$(UNIT_SRCS))

$(B)/tests/unit/%: tests/unit/%.c $(B)/libgoshim_core.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(WARN) -std=gnu11 -D_GNU_SOURCE $(CHECK_CFLAGS) \
		$(SANFLAGS) $< $(B)/libgoshim_core.a -o $@ $(CHECK_LIBS) -ldl \
		-pthread

PROG_C   := $(wildcard tests/progs/*.c)
PROG_CXX := $(wildcard tests/progs/*.cc)
PROG_BINS := $(patsubst tests/progs/%.c,$(B)/tests/progs/%,$(PROG_C)) \
	$(patsubst tests/progs/%.cc,$(B)/tests/progs/%,$(PROG_CXX))

# Test programs are plain pthreads programs: they know nothing of goshim.
$(B)/tests/progs/%: tests/progs/%.c $(wildcard tests/progs/*.h)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(WARN) -std=gnu11 -D_GNU_SOURCE $< -o $@ -pthread

# A program linked against a library whose constructor runs before the
# preloaded goshim's.
$(B)/tests/progs/early_ctor: tests/progs/early_ctor.c \
		$(B)/tests/progs/mods/early_ctor_lib.so
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(WARN) -std=gnu11 -D_GNU_SOURCE $< -o $@ -pthread \
		$(B)/tests/progs/mods/early_ctor_lib.so -Wl,-rpath,'$$ORIGIN/mods'

# A program that is another one run differently includes its source.
$(B)/tests/progs/fd_splice_2p: tests/progs/fd_splice.c

$(B)/tests/progs/%: tests/progs/%.cc
	@mkdir -p $(dir $@)
	$(CXX) $(CFLAGS) $(WARN) -std=gnu++17 $< -o $@ -pthread

# std::atomic<T>::wait and std::counting_semaphore are C++20's.
$(B)/tests/progs/atomic_wait: tests/progs/atomic_wait.cc
	@mkdir -p $(dir $@)
	$(CXX) $(CFLAGS) $(WARN) -std=gnu++20 $< -o $@ -pthread

# Shared modules that test programs dlopen() from <program dir>/mods/.
MOD_SRCS := $(wildcard tests/progs/mods/*.c)
MOD_SOS  := $(patsubst tests/progs/mods/%.c,$(B)/tests/progs/mods/%.so,$(MOD_SRCS))

$(B)/tests/progs/mods/%.so: tests/progs/mods/%.c $(wildcard tests/progs/mods/*.h)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(WARN) -std=gnu11 -D_GNU_SOURCE -fPIC -shared $< -o $@

# What `goshim compare` and `goshim stress` run (native, never preloaded),
# and the bundled legacy servers.
TOOL_BINS := $(B)/tools/procsample $(B)/tools/net_load \
	$(B)/tests/servers/legacy_httpd $(B)/tests/servers/legacy_echod

$(B)/tools/%: scripts/tools/%.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(WARN) -std=gnu11 $< -o $@ -pthread

# Test-only tools (hold, parked): what tools-check and diag measure.
$(B)/tools/%: tests/tools/%.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(WARN) -std=gnu11 $< -o $@ -pthread

$(B)/tests/servers/%: tests/servers/%.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(WARN) -std=gnu11 $< -o $@ -pthread

tools: $(B)/libgoshim.so $(TOOL_BINS)
all: tools

# Every test program runs under tests/run/watchdog.py: past its bound (sized
# for a slow, loaded 2-CPU machine) it says what hung, is killed, and the
# step fails with status 124.
WATCHDOG := tests/run/watchdog.py --kill-after 10
UNIT_TIMEOUT ?= 600

unit: $(UNIT_BINS)
	@set -e; for t in $(UNIT_BINS); do echo "== $$t"; \
		$(WATCHDOG) --label $$t $(UNIT_TIMEOUT) $$t; done

progs: $(B)/libgoshim.so $(PROG_BINS) $(MOD_SOS)
	tests/run/run-progs.sh $(B) $(PROG_BINS)

# GOSHIM_DEBUG and GOSHIM_TRACE output checked whole (dumps, SCHED lines,
# trace JSON).
diag: $(B)/libgoshim.so $(PROG_BINS) $(B)/tools/hold
	tests/run/diag-check.py $(B)

# The compatibility suite: real multi-threaded programs from Debian and
# small clients of real libraries, natively and under goshim
# (tests/compat/run.sh says what each checks). Installs what is missing
# first, then builds the suite's own programs (they need libcurl's and
# OpenSSL's headers).
COMPAT_BINS := $(B)/tests/compat/gendata $(B)/tests/compat/cxx_threads \
	$(B)/tests/compat/curl_fetch $(B)/tests/compat/mc_client \
	$(B)/tests/compat/ssl_digest $(B)/tests/compat/rust_threads

$(B)/tests/compat/%: tests/compat/%.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(WARN) -std=gnu11 -D_GNU_SOURCE $< -o $@ -pthread

$(B)/tests/compat/curl_fetch: tests/compat/curl_fetch.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(WARN) -std=gnu11 -D_GNU_SOURCE $< -o $@ -pthread -lcurl

$(B)/tests/compat/ssl_digest: tests/compat/ssl_digest.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(WARN) -std=gnu11 -D_GNU_SOURCE $< -o $@ -pthread -lcrypto

$(B)/tests/compat/%: tests/compat/%.cc
	@mkdir -p $(dir $@)
	$(CXX) $(CFLAGS) $(WARN) -std=gnu++17 $< -o $@ -pthread

# Rust's std threads (Debian's rustc; edition 2018, which its 1.63 has).
$(B)/tests/compat/rust_threads: tests/compat/rust_threads.rs
	@mkdir -p $(dir $@)
	rustc --edition 2018 -O -o $@ $<

# The JVM case's Java programs, compiled by Debian's javac.
COMPAT_JAVA := $(patsubst tests/compat/%.java,$(B)/tests/compat/java/%.class,\
	$(wildcard tests/compat/*.java))

$(B)/tests/compat/java/%.class: tests/compat/%.java
	@mkdir -p $(dir $@)
	javac -Xlint:all -Werror -d $(dir $@) $<

compat:
	scripts/deps.sh --compat
	$(MAKE) tools $(COMPAT_BINS) $(COMPAT_JAVA)
	tests/compat/run.sh $(B)

# Installs missing Debian packages first (scripts/deps.sh), then builds and
# runs every test.
check:
	scripts/deps.sh
	$(MAKE) all
	$(MAKE) layering
	$(MAKE) unit
	$(MAKE) progs
	$(MAKE) tools-check
	$(MAKE) diag
	$(MAKE) ptree

# The layers: no upward include, no core call of an exported name, shim's
# reach into scheduler internals never growing (tests/layering/check.py).
layering: all
	python3 tests/layering/check.py $(B)

# Process trees with goshim inherited by every process (shells, pipelines,
# jobs, traps, kill, python subprocess, a Debian wrapper script, make -j2,
# this project's own build), native vs goshim.
ptree: $(B)/libgoshim.so $(B)/tools/hold
	tests/ptree/run.sh $(B)

# Each goshim subcommand against /proc readings of its own.
tools-check: tools $(B)/tools/hold $(B)/tools/parked
	tests/run/tools-check.sh $(B)

# The before/after demo: `goshim stress` on the bundled legacy server at
# 100, 1,000 and 10,000 connections, then bundled programs' peak OS threads
# and times.
demo:
	scripts/deps.sh
	$(MAKE) tools $(PROG_BINS)
	scripts/demo.sh $(B)

# The whole suite, many times in a row: scheduler bugs that show once in a
# thousand runs are bugs. Every second round runs the programs under
# GOSHIM_DEBUG=chaos=1 (random yields, steals and spills: interleavings the
# usual timing almost never gives; a failure shows the seed); the rounds
# between keep the scheduler's own timing and choices, whose bugs chaos
# could hide. Each program runs natively once, in the first round that it
# passes; later rounds compare against that run (GOSHIM_TEST_NATIVE_CACHE).
STRESS_ROUNDS ?= 20
stress: all $(UNIT_BINS) $(PROG_BINS) $(MOD_SOS) $(B)/tools/hold
	@set -e; rm -rf $(B)/stress-native; \
	export GOSHIM_TEST_NATIVE_CACHE=$(CURDIR)/$(B)/stress-native; \
	for i in $$(seq 1 $(STRESS_ROUNDS)); do \
		dbg=$${GOSHIM_DEBUG:-}; \
		if [ $$((i % 2)) -eq 0 ]; then dbg=$${dbg:+$$dbg,}chaos=1; fi; \
		echo "==== stress round $$i/$(STRESS_ROUNDS)$${dbg:+ GOSHIM_DEBUG=$$dbg}"; \
		GOSHIM_DEBUG=$$dbg \
		$(MAKE) --no-print-directory unit progs >$(B)/stress.log 2>&1 && \
		PTREE_SELF=0 tests/ptree/run.sh $(B) >>$(B)/stress.log 2>&1 || \
			{ cat $(B)/stress.log; echo "stress: round $$i failed"; exit 1; }; \
	done; echo "stress: $(STRESS_ROUNDS) rounds passed"

# ---- checked runs: ASan+UBSan, valgrind --------------------------------------
# ASan sees each goroutine as a thread of its own: its pthread_create
# interceptor starts on the goroutine, which has its own TLS and so its own
# ASan thread state and stack bounds; no fiber annotations are needed (they
# would pair a start on one goroutine's state with a finish on another's).
# The test programs stay plain, as always; the goshim run preloads ASan's
# runtime first. Programs that cannot run so, each with its reason:
# tests/san/asan.exclude. A sanitizer report exits 86.
ASAN_RT  := $(shell $(CC) -print-file-name=libasan.so)
SAN_EXIT := 86
ASAN_ENV := ASAN_OPTIONS=detect_leaks=0:use_sigaltstack=0:exitcode=$(SAN_EXIT) \
	UBSAN_OPTIONS=print_stacktrace=1:exitcode=$(SAN_EXIT)
asan:
	$(MAKE) B=build-asan SAN=address,undefined all
	$(ASAN_ENV) $(MAKE) B=build-asan SAN=address,undefined unit
	$(ASAN_ENV) GOSHIM_TEST_PRELOAD=$(ASAN_RT) GOSHIM_TEST_SLOW=3 \
		GOSHIM_TEST_EXCLUDE=tests/san/asan.exclude GOSHIM_TEST_SHIM_BOUNDS=0 \
		$(MAKE) B=build-asan SAN=address,undefined progs

# Memcheck on the unit tests and, with the plain library preloaded, on the
# programs listed in tests/san/valgrind.progs: valgrind runs one thread at
# a time, so the 10,000-thread programs would take hours. check_switch is
# left out: valgrind does not model x87/SSE rounding modes (test_fenv
# fails), and its contexts' small neighbouring stacks read as one stack
# unless registered. A report exits 87.
VG := valgrind --tool=memcheck --error-exitcode=87 -q
VG_PROGS := $(addprefix $(B)/tests/progs/,$(shell sed 's/\#.*//' \
	tests/san/valgrind.progs))
VG_UNIT := $(filter-out %/check_switch,$(UNIT_BINS))
valgrind: all $(VG_UNIT) $(VG_PROGS)
	@set -e; for t in $(VG_UNIT); do echo "== $$t"; \
		$(WATCHDOG) --label "valgrind $$t" $$(($(UNIT_TIMEOUT) * 10)) $(VG) $$t; done
	GOSHIM_TEST_WRAP="$(VG)" GOSHIM_TEST_SLOW=10 GOSHIM_TEST_SHIM_BOUNDS=0 \
		tests/run/run-progs.sh $(B) $(VG_PROGS)

# ---- benchmarks (print numbers; never pass/fail on time) --------------------
# One table, native vs goshim vs Go, medians of interleaved runs
# (tests/bench/bench.sh). BENCH_ONLY=create,sync,sleep,mem,million,net,sysmon
# picks rows; BENCH_QUICK=1 takes small sizes; tests/README.md has the rest.
bench: all
	tests/bench/bench.sh $(B)

# ---- fuzzing: every parser of outside text (tests/fuzz) --------------------
# Each harness is built with clang's libFuzzer, ASan and UBSan, from the
# library sources it exercises (FUZZ_SRCS_<name>, so coverage guides the
# search) and the rest of core uninstrumented from libgoshim_core.a.
# `make fuzz` runs each for FUZZ_SECONDS from tests/fuzz/corpus/<name>;
# new inputs go to $(B)/fuzz/corpus/<name>, a crash to $(B)/fuzz/.
FUZZ_CC      ?= clang
FUZZ_SECONDS ?= 20
FUZZ_CFLAGS  := -g -O1 $(WARN) -std=gnu11 -D_GNU_SOURCE \
	-fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all
FUZZ_NAMES := $(patsubst tests/fuzz/fuzz_%.c,%,$(wildcard tests/fuzz/fuzz_*.c))
FUZZ_BINS  := $(patsubst %,$(B)/fuzz/fuzz_%,$(FUZZ_NAMES))
FUZZ_SRCS_cgroup    := core/gomaxprocs.c
FUZZ_SRCS_mountinfo := core/gomaxprocs.c
FUZZ_SRCS_quota     := core/gomaxprocs.c core/number.c
FUZZ_SRCS_proc      := core/procparse.c core/number.c
FUZZ_SRCS_env       := core/gomaxprocs.c core/stack.c core/threadlimit.c \
	core/number.c
FUZZ_SRCS_debug     := core/debug.c core/number.c
FUZZ_SRCS_walk      := core/gomaxprocs.c core/number.c

.SECONDEXPANSION:
$(B)/fuzz/fuzz_%: tests/fuzz/fuzz_%.c tests/fuzz/fuzz.h $$(FUZZ_SRCS_$$*) \
		$(B)/libgoshim_core.a $(wildcard core/*.h arch/*.h)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) $< $(FUZZ_SRCS_$*) $(B)/libgoshim_core.a \
		-o $@ -ldl -pthread

fuzz-build: $(FUZZ_BINS)

fuzz:
	scripts/deps.sh
	$(MAKE) fuzz-build
	tests/fuzz/run.sh $(B) $(FUZZ_SECONDS) $(FUZZ_NAMES)

.PHONY: fuzz-build fuzz

# ---- aarch64: the arch layer must keep compiling ---------------------------
cross-aarch64:
	$(MAKE) -f tests/cross/aarch64.mk B=$(B)

clean:
	rm -rf $(B)

.PHONY: all tools unit progs diag check compat tools-check ptree layering demo stress asan \
	valgrind bench cross-aarch64 clean
.SECONDARY:
