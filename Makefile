# SPDX-License-Identifier: MIT
#
# ion: build, guest tests, demo, lint.  See README.md.
#
#   make            install deps, build ion.ko, test modules, library, tools
#   make check      ... and run every test in a QEMU guest (TESTS=pattern)
#   make demo       ... and boot the guest for a narrated session
#   make shell      ... and boot the guest interactively
#   make check-rig  prove the harness fails on a failing test and on a splat
#   make lint       checkpatch, kernel-doc, sparse, cppcheck
#
# Nothing here loads anything into the host kernel.

ARCH ?= x86_64
BUILD ?= $(CURDIR)/build
DEPS_DONE := $(BUILD)/.deps-done
export ARCH BUILD

# Resolved after scripts/deps.sh ran (a fresh machine has no kernel yet).
KVER ?= $(shell scripts/deps.sh --kver 2>/dev/null)
KDIR ?= /lib/modules/$(KVER)/build

CC ?= gcc
USER_CFLAGS := -O2 -g -Wall -Wextra -Wno-unused-parameter -std=gnu11 \
	-D_GNU_SOURCE -I$(CURDIR)/include/uapi -I$(CURDIR)/lib
USER_LDFLAGS := -static

LIB_SRCS := $(wildcard lib/*.c)
LIB_OBJS := $(LIB_SRCS:lib/%.c=$(BUILD)/lib/%.o)
LIBION_A := $(BUILD)/lib/libion.a

TOOL_SRCS := $(wildcard tools/*.c)
TOOLS := $(TOOL_SRCS:tools/%.c=$(BUILD)/bin/%)

GUEST_C := $(wildcard tests/guest/*.c)
GUEST_SH := $(wildcard tests/guest/*.sh)
GUEST_M32 := $(wildcard tests/guest/compat/*.c)
GUEST_BINS := $(GUEST_C:tests/guest/%.c=$(BUILD)/guest/tests/%) \
	$(GUEST_SH:tests/guest/%.sh=$(BUILD)/guest/tests/%) \
	$(GUEST_M32:tests/guest/compat/%.c=$(BUILD)/guest/tests/%-m32)
RIG_SH := $(wildcard tests/rig/*.sh)
RIG_BINS := $(RIG_SH:tests/rig/%.sh=$(BUILD)/guest/rig/%)

.PHONY: all deps modules user check check-rig demo shell lint clean

all: deps
	$(MAKE) modules user KVER=$$(scripts/deps.sh --kver)

deps: $(DEPS_DONE)
$(DEPS_DONE): scripts/deps.sh
	scripts/deps.sh
	@mkdir -p $(BUILD) && touch $@

modules:
	@[ -n "$(KVER)" ] || { echo "no kernel headers: run make deps"; exit 1; }
	$(MAKE) -C $(KDIR) M=$(CURDIR)/kernel W=1 modules
	@if [ -f tests/kmod/Kbuild ]; then \
		$(MAKE) -C $(KDIR) M=$(CURDIR)/tests/kmod W=1 \
			KBUILD_EXTRA_SYMBOLS=$(CURDIR)/kernel/Module.symvers modules; \
	fi

user: $(LIBION_A) $(TOOLS) $(GUEST_BINS) $(RIG_BINS)

$(BUILD)/lib/%.o: lib/%.c $(wildcard lib/*.h) include/uapi/linux/ion.h
	@mkdir -p $(@D)
	$(CC) $(USER_CFLAGS) -c -o $@ $<

$(LIBION_A): $(LIB_OBJS)
	@mkdir -p $(@D)
	rm -f $@ && ar rcs $@ $^

$(BUILD)/bin/%: tools/%.c $(LIBION_A)
	@mkdir -p $(@D)
	$(CC) $(USER_CFLAGS) $(USER_LDFLAGS) -o $@ $< $(LIBION_A) -lpthread

$(BUILD)/guest/tests/%: tests/guest/%.c tests/guest/tap.h $(LIBION_A)
	@mkdir -p $(@D)
	$(CC) $(USER_CFLAGS) -Itests/guest $(USER_LDFLAGS) -o $@ $< \
		$(LIBION_A) -lpthread

$(BUILD)/guest/tests/%-m32: tests/guest/compat/%.c tests/guest/tap.h
	@mkdir -p $(@D)
	$(CC) -m32 $(USER_CFLAGS) -Itests/guest $(USER_LDFLAGS) -o $@ $<

$(BUILD)/guest/tests/%: tests/guest/%.sh
	@mkdir -p $(@D)
	install -m 0755 $< $@

$(BUILD)/guest/rig/%: tests/rig/%.sh
	@mkdir -p $(@D)
	install -m 0755 $< $@

check: all
	scripts/guest-run.sh check

check-rig: all
	scripts/check-rig.sh

demo: all
	scripts/guest-run.sh demo

shell: all
	scripts/guest-run.sh shell

lint: deps
	scripts/lint.sh

clean:
	-$(MAKE) -C $(KDIR) M=$(CURDIR)/kernel clean
	-[ -f tests/kmod/Kbuild ] && $(MAKE) -C $(KDIR) M=$(CURDIR)/tests/kmod clean
	rm -rf $(BUILD)
