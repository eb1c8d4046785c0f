# Cross-build the aarch64 arch layer (arch/aarch64) and its unit test
# (tests/unit/check_switch.c), then run the test under qemu-user if it is
# installed. From the repository root:
#
#	make -f tests/cross/aarch64.mk B=build
#
# Needs gcc-aarch64-linux-gnu (which brings the /usr/aarch64-linux-gnu
# sysroot); running needs qemu-user. There is no check library for the
# target, so the test is built with -DNO_CHECK and its own small runner.

B       ?= build
CROSS   ?= aarch64-linux-gnu-
XCC     := $(CROSS)gcc
SYSROOT ?= /usr/aarch64-linux-gnu
QEMU    ?= qemu-aarch64

# The library's warning and code flags (see the main Makefile).
XFLAGS  := -O2 -g -Wall -Wextra -Werror -std=gnu11 -D_GNU_SOURCE -fPIC

O         := $(B)/cross/aarch64
ARCH_SRCS := $(wildcard arch/aarch64/*.c) $(wildcard arch/aarch64/*.S)
ARCH_OBJS := $(patsubst %,$(O)/obj/%.o,$(ARCH_SRCS))
TEST      := $(O)/check_switch

all: run

$(O)/obj/%.c.o: %.c arch/arch.h
	@mkdir -p $(dir $@)
	$(XCC) $(XFLAGS) -c $< -o $@

$(O)/obj/%.S.o: %.S
	@mkdir -p $(dir $@)
	$(XCC) $(XFLAGS) -c $< -o $@

# Linked dynamically against the cross sysroot's glibc: the same libc the
# library will run under, found by qemu through -L.
$(TEST): tests/unit/check_switch.c $(ARCH_OBJS) arch/arch.h
	@mkdir -p $(dir $@)
	$(XCC) $(XFLAGS) -DNO_CHECK $< $(ARCH_OBJS) -o $@ -lm

run: $(TEST)
	@if command -v $(QEMU) >/dev/null 2>&1; then \
		echo "$(QEMU) -L $(SYSROOT) $(TEST)"; \
		$(QEMU) -L $(SYSROOT) $(TEST); \
	else \
		echo "qemu-aarch64 not found: compiled only"; \
	fi

clean:
	rm -rf $(O)

.PHONY: all run clean
