# SPDX-License-Identifier: MIT
#
# ion: build, guest tests, demo, lint.  See README.md.
#
#   make            install deps, build ion.ko, test modules, library, tools
#   make check      ... and run every test in a QEMU guest (TESTS=pattern)
#   make demo       ... and boot the guest for a narrated session
#   make shell      ... and boot the guest interactively
#   make check-rig  prove the harness fails on a failing test and on a splat
#   make lint       checkpatch, kernel-doc, sparse, cppcheck, lintian
#   make deb        Debian packages: ion-dkms, libion1, libion-dev, ion-tools
#   make check-deb  install them in a Debian 12 guest and check what a user sees
#
# Nothing here loads anything into the host kernel.

ARCH ?= x86_64
# The kernel series (scripts/deps.sh): 6.12 (default), 6.12-rt, 6.1, 7.3.
KSERIES ?= 6.12
export KSERIES
ifeq ($(ARCH),arm64)
# make ARCH=arm64: everything for an aarch64 guest (Documentation/arm64.md),
# in its own build directory; the module sources are copied to
# $(BUILD)/src so the x86_64 objects in the tree are left alone.
BUILD ?= $(CURDIR)/build/arm64$(if $(filter-out 6.12,$(KSERIES)),-$(KSERIES))
# The cross gcc lives in scripts/deps.sh's cache (it conflicts with
# gcc-multilib); Debian's arm64 headers call it aarch64-linux-gnu-gcc-12.
export PATH := $(shell ARCH=arm64 KSERIES=$(KSERIES) scripts/deps.sh --cross-bin):$(PATH)
# Its as and ld need their own libbfd and libopcodes, unpacked beside them
# (not installed: nothing in the system's library path).
export LD_LIBRARY_PATH := $(shell ARCH=arm64 KSERIES=$(KSERIES) scripts/deps.sh --cross-lib)$(if $(LD_LIBRARY_PATH),:$(LD_LIBRARY_PATH))
CROSS_COMPILE ?= aarch64-linux-gnu-
# 6.12's arm64 headers set it themselves; 6.1's take it from the caller.
export CROSS_COMPILE
MODSRC := $(BUILD)/src
KDIR ?= $(shell ARCH=arm64 KSERIES=$(KSERIES) scripts/deps.sh --kdir 2>/dev/null)
ifeq ($(origin CC),default)
CC := $(CROSS_COMPILE)gcc
endif
ifeq ($(origin AR),default)
AR := $(CROSS_COMPILE)ar
endif
endif
ifneq ($(KSERIES),6.12)
# Another series builds in its own directory, from a copy of the module
# sources, as arm64 does.
BUILD ?= $(CURDIR)/build/k$(KSERIES)
MODSRC ?= $(BUILD)/src
endif
BUILD ?= $(CURDIR)/build
MODSRC ?= $(CURDIR)
DEPS_DONE := $(BUILD)/.deps-done
export ARCH BUILD

# Resolved after scripts/deps.sh ran (a fresh machine has no kernel yet).
KVER ?= $(shell KSERIES=$(KSERIES) scripts/deps.sh --kver 2>/dev/null)
# A series whose headers need another Debian's toolchain (7.3: trixie's
# gcc-14 and glibc) is built inside the build root scripts/deps.sh made,
# with $(BUILD) (which holds the module sources' copy) mounted at its own
# path there: scripts/kbuild-root.sh.
KBUILD_ROOT := $(if $(filter x86_64,$(ARCH)),$(shell KSERIES=$(KSERIES) scripts/deps.sh --kbuild-root 2>/dev/null))
ifneq ($(KBUILD_ROOT),)
KDIR ?= /usr/src/linux-headers-$(KVER)
KMAKE = scripts/kbuild-root.sh $(KBUILD_ROOT) $(BUILD) $(MAKE)
endif
KDIR ?= /lib/modules/$(KVER)/build
KMAKE ?= $(MAKE)

CC ?= gcc
USER_CFLAGS := -O2 -g -Wall -Wextra -Wno-unused-parameter -std=gnu11 \
	-D_GNU_SOURCE -D_FILE_OFFSET_BITS=64 -I$(CURDIR)/include/uapi \
	-I$(CURDIR)/lib
USER_LDFLAGS := -static

LIB_SRCS := $(wildcard lib/*.c)
LIB_OBJS := $(LIB_SRCS:lib/%.c=$(BUILD)/lib/%.o)
LIB_PICOBJS := $(LIB_SRCS:lib/%.c=$(BUILD)/lib/pic/%.o)
LIBION_A := $(BUILD)/lib/libion.a
LIBION_VERSION := 1.0.0
LIBION_SO := $(BUILD)/lib/libion.so.$(LIBION_VERSION)
LIB_CFLAGS := -fvisibility=hidden
# The library and the tools also take a packager's CPPFLAGS, CFLAGS and
# LDFLAGS (debian/rules passes dpkg-buildflags' hardening flags); the
# test programs do not.
DIST_CFLAGS = $(USER_CFLAGS) $(CPPFLAGS) $(CFLAGS)
# TOOLS_STATIC=0: the tools link libc dynamically (the Debian packages do;
# make install's tools are static).  libion always comes from libion.a:
# the tools use its private debugfs reader, which libion.so keeps hidden.
ifeq ($(TOOLS_STATIC),0)
TOOL_LINK = $(LDFLAGS) $(LIBION_A)
else
TOOL_LINK = $(USER_LDFLAGS) $(LDFLAGS) $(LIBION_A)
endif

PREFIX ?= /usr/local
LIBDIR ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
BINDIR ?= $(PREFIX)/bin
MANDIR ?= $(PREFIX)/share/man
# udev rules granting access to /dev/ion and its nodes (udev/60-ion.rules)
UDEVRULESDIR ?= /etc/udev/rules.d
# The kernel API for other modules (make install-kapi): include/ and
# Module.symvers, as Documentation/ion.rst says how to build against them.
KAPIDIR ?= $(PREFIX)/src/ion
# The test modules build against a staged install-kapi, which shows it is
# all a module of another tree needs.
KAPI_STAGE := $(BUILD)/kapi

# Tool NAME is tools/NAME.c, plus every tools/NAME/*.c when that
# directory exists (ionctl: one file per group of commands).
TOOL_SRCS := $(wildcard tools/*.c)
TOOLS := $(TOOL_SRCS:tools/%.c=$(BUILD)/bin/%)
tool_srcs = tools/$(1).c $(wildcard tools/$(1)/*.c)

# Guest test programs (tests/README.md).  Program NAME is
# tests/guest/NAME.c, plus every tests/guest/NAME/*.c when that directory
# exists; tests/guest/compat/NAME.c (plus compat/NAME/*.c) is built with
# -m32 as NAME-m32.  Every program links the test library tests/guest/lib/,
# compiled once per ABI into libiontest.a.
GUEST_C := $(wildcard tests/guest/*.c)
GUEST_SH := $(wildcard tests/guest/*.sh)
GUEST_M32 := $(if $(filter x86_64,$(ARCH)),$(wildcard tests/guest/compat/*.c))
GUEST_BINS := $(GUEST_C:tests/guest/%.c=$(BUILD)/guest/tests/%) \
	$(GUEST_SH:tests/guest/%.sh=$(BUILD)/guest/tests/%) \
	$(GUEST_M32:tests/guest/compat/%.c=$(BUILD)/guest/tests/%-m32)
GUEST_OBJ := $(BUILD)/guest/obj
GUEST_OBJ32 := $(BUILD)/guest/obj32
TLIB_SRCS := $(wildcard tests/guest/lib/*.c)
TLIB_A := $(GUEST_OBJ)/lib/libiontest.a
TLIB_A32 := $(GUEST_OBJ32)/lib/libiontest.a
# The sources of program $(1) (a path below tests/guest/, without .c).
guest_srcs = tests/guest/$(1).c $(wildcard tests/guest/$(1)/*.c)
# Programs written against AOSP libion's installed headers (tests/aosp/).
AOSP_C := $(wildcard tests/aosp/*.c)
AOSP_BINS := $(AOSP_C:tests/aosp/%.c=$(BUILD)/guest/tests/%)
AOSP_ROOT := $(BUILD)/aosp-root
# make soak's program (tests/soak/): in the guest only in soak mode.
SOAK_SRCS := $(wildcard tests/soak/*.c)
SOAK_BIN := $(BUILD)/guest/soak/soak
RIG_SH := $(wildcard tests/rig/*.sh)
RIG_BINS := $(RIG_SH:tests/rig/%.sh=$(BUILD)/guest/rig/%)

.PHONY: all deps modules user dist check check-rig check-debug soak soak-debug demo shell lint clean \
	install install-dev install-kapi bench deb check-deb

all: deps
	$(MAKE) modules user KVER=$$(scripts/deps.sh --kver)

deps: $(DEPS_DONE)
$(DEPS_DONE): scripts/deps.sh
	scripts/deps.sh
	@mkdir -p $(BUILD) && touch $@

modules:
	@[ -n "$(KVER)" ] || { echo "no kernel headers: run make deps"; exit 1; }
ifneq ($(MODSRC),$(CURDIR))
	@mkdir -p $(MODSRC)/tests
	@# Not the *.mod.c that kbuild generated in the tree for 6.12: the
	@# copy's own are for its kernel.
	rsync -a --delete --exclude='*.mod.c' --include='*/' --include='*.[ch]' \
		--include=Kbuild --exclude='*' kernel include $(MODSRC)/
	rsync -a --delete --exclude='*.mod.c' --include='*/' --include='*.[ch]' \
		--include=Kbuild --exclude='*' tests/kmod $(MODSRC)/tests/
endif
	$(KMAKE) -C $(KDIR) M=$(MODSRC)/kernel W=1 modules
	@$(MAKE) --no-print-directory install-kapi DESTDIR=$(KAPI_STAGE) \
		KAPIDIR=
	@# The test modules link against ion.ko's symbol versions: rebuild
	@# them whenever those change, which kbuild does not track.
	@if [ -f tests/kmod/Kbuild ]; then \
		if ! cmp -s $(MODSRC)/kernel/Module.symvers \
			$(MODSRC)/tests/kmod/.ion.symvers; then \
			$(KMAKE) -C $(KDIR) M=$(MODSRC)/tests/kmod clean; \
			cp $(MODSRC)/kernel/Module.symvers \
				$(MODSRC)/tests/kmod/.ion.symvers; \
		fi; \
		$(KMAKE) -C $(KDIR) M=$(MODSRC)/tests/kmod W=1 \
			ION_KAPI=$(KAPI_STAGE) \
			KBUILD_EXTRA_SYMBOLS=$(KAPI_STAGE)/Module.symvers modules; \
	fi

# ARCH=arm64 builds for the guest, whose programs are static: no
# libion.so (linking one needs the cross libc installed, whose linker
# scripts name absolute paths; the cross tree is only unpacked).
LIBION_SHARED := $(if $(filter x86_64,$(ARCH)),$(LIBION_SO))
user: $(LIBION_A) $(LIBION_SHARED) $(TOOLS) $(GUEST_BINS) $(AOSP_BINS) \
	$(RIG_BINS) $(SOAK_BIN)

# The ABI: <linux/ion.h> and AOSP's <linux/ion_4.12.h>, <linux/ion_4.19.h>
# beside it (Documentation/abi-compat.rst, "Headers").
UAPI_HDRS := $(wildcard include/uapi/linux/*.h)
LIB_DEPS := $(wildcard lib/*.h lib/ion/*.h) $(UAPI_HDRS)
$(BUILD)/lib/%.o: lib/%.c $(LIB_DEPS)
	@mkdir -p $(@D)
	$(CC) $(DIST_CFLAGS) $(LIB_CFLAGS) -c -o $@ $<

$(BUILD)/lib/pic/%.o: lib/%.c $(LIB_DEPS)
	@mkdir -p $(@D)
	$(CC) $(DIST_CFLAGS) $(LIB_CFLAGS) -fPIC -c -o $@ $<

$(LIBION_A): $(LIB_OBJS)
	@mkdir -p $(@D)
	rm -f $@ && $(AR) rcs $@ $^

$(LIBION_SO): $(LIB_PICOBJS) lib/libion.map
	$(CC) -shared -Wl,-soname,libion.so.1 $(LDFLAGS) \
		-Wl,--version-script=lib/libion.map -o $@ $(LIB_PICOBJS)
	ln -sf $(notdir $@) $(BUILD)/lib/libion.so.1
	ln -sf $(notdir $@) $(BUILD)/lib/libion.so

# What make install and the Debian packages ship: no kernel headers needed.
dist: $(LIBION_A) $(LIBION_SHARED) $(TOOLS)

# User-space parts only: the library with its headers and pkg-config file
# (install-dev: what a -dev package holds; the headers are AOSP libion's
# set, <ion/ion.h> with <linux/ion.h>, <linux/ion_4.12.h> and
# <linux/ion_4.19.h> beside it), the tools, man pages and udev rules.
install: dist install-dev
	install -d $(DESTDIR)$(BINDIR)
	install -m 0755 $(TOOLS) $(DESTDIR)$(BINDIR)/
	install -d $(DESTDIR)$(MANDIR)/man3 $(DESTDIR)$(MANDIR)/man8
	install -m 0644 Documentation/man/*.3 $(DESTDIR)$(MANDIR)/man3/
	install -m 0644 Documentation/man/*.8 $(DESTDIR)$(MANDIR)/man8/
	install -d $(DESTDIR)$(UDEVRULESDIR)
	install -m 0644 udev/60-ion.rules $(DESTDIR)$(UDEVRULESDIR)/
# Into the running system: the loader's cache learns the library, and
# nodes that exist already (ion loaded) get the rules' group and mode.
ifeq ($(DESTDIR),)
	-ldconfig
	-udevadm control --reload && udevadm trigger --action=change \
		--subsystem-match=misc --subsystem-match=ion_dma_heap
endif

# ion.pc is written from PREFIX and LIBDIR at install time, never reused
# from an install with other paths.
install-dev: $(LIBION_A) $(LIBION_SHARED) lib/ion.pc.in
	install -d $(DESTDIR)$(LIBDIR)/pkgconfig $(DESTDIR)$(INCLUDEDIR)/ion \
		$(DESTDIR)$(INCLUDEDIR)/linux
	install -m 0644 $(LIBION_A) $(DESTDIR)$(LIBDIR)/
ifneq ($(LIBION_SHARED),)
	install -m 0755 $(LIBION_SO) $(DESTDIR)$(LIBDIR)/
	ln -sf $(notdir $(LIBION_SO)) $(DESTDIR)$(LIBDIR)/libion.so.1
	ln -sf $(notdir $(LIBION_SO)) $(DESTDIR)$(LIBDIR)/libion.so
endif
	install -m 0644 lib/ion/ion.h $(DESTDIR)$(INCLUDEDIR)/ion/
	install -m 0644 $(UAPI_HDRS) $(DESTDIR)$(INCLUDEDIR)/linux/
	sed -e 's|@PREFIX@|$(PREFIX)|; s|@LIBDIR@|$(LIBDIR)|' \
	    -e 's|@INCLUDEDIR@|$(INCLUDEDIR)|; s|@VERSION@|$(LIBION_VERSION)|' \
	    lib/ion.pc.in > $(DESTDIR)$(LIBDIR)/pkgconfig/ion.pc
	chmod 0644 $(DESTDIR)$(LIBDIR)/pkgconfig/ion.pc

# The kernel API: headers and ion.ko's symbol versions (needs make modules).
install-kapi:
	install -d $(DESTDIR)$(KAPIDIR)/include/linux \
		$(DESTDIR)$(KAPIDIR)/include/uapi/linux
	install -m 0644 include/linux/ion.h include/linux/ion_heap.h \
		$(DESTDIR)$(KAPIDIR)/include/linux/
	install -m 0644 $(UAPI_HDRS) $(DESTDIR)$(KAPIDIR)/include/uapi/linux/
	install -m 0644 $(MODSRC)/kernel/Module.symvers $(DESTDIR)$(KAPIDIR)/

# $(1): tool name.
define tool_prog
$(BUILD)/bin/$(1): $(call tool_srcs,$(1)) $(wildcard tools/$(1)/*.h) \
		$(LIB_DEPS) $(LIBION_A)
	@mkdir -p $$(@D)
	$$(CC) $$(DIST_CFLAGS) -o $$@ $(call tool_srcs,$(1)) $$(TOOL_LINK) \
		-lpthread
endef
$(foreach t,$(TOOL_SRCS:tools/%.c=%),$(eval $(call tool_prog,$(t))))

# Guest programs: every object has a compiler-written dependency file
# (-MMD -MP), so editing any header rebuilds exactly the objects that
# include it.
GUEST_CFLAGS := $(USER_CFLAGS) -Itests/guest/lib -MMD -MP

$(GUEST_OBJ)/%.o: tests/guest/%.c
	@mkdir -p $(@D)
	$(CC) $(GUEST_CFLAGS) -c -o $@ $<

$(GUEST_OBJ32)/%.o: tests/guest/%.c
	@mkdir -p $(@D)
	$(CC) -m32 $(GUEST_CFLAGS) -c -o $@ $<

$(TLIB_A): $(TLIB_SRCS:tests/guest/%.c=$(GUEST_OBJ)/%.o)
	rm -f $@ && $(AR) rcs $@ $^

$(TLIB_A32): $(TLIB_SRCS:tests/guest/%.c=$(GUEST_OBJ32)/%.o)
	rm -f $@ && $(AR) rcs $@ $^

# $(1): program name, $(2): its objects.
define guest_prog
$(BUILD)/guest/tests/$(1): $(2) $(TLIB_A) $(LIBION_A)
	@mkdir -p $$(@D)
	$$(CC) $(USER_LDFLAGS) -o $$@ $(2) $(TLIB_A) $(LIBION_A) -lpthread
GUEST_OBJS += $(2)
endef

define guest_prog_m32
$(BUILD)/guest/tests/$(1)-m32: $(2) $(TLIB_A32)
	@mkdir -p $$(@D)
	$$(CC) -m32 $(USER_LDFLAGS) -o $$@ $(2) $(TLIB_A32)
GUEST_OBJS += $(2)
endef

$(foreach t,$(GUEST_C:tests/guest/%.c=%),$(eval $(call guest_prog,$(t),\
	$(patsubst tests/guest/%.c,$(GUEST_OBJ)/%.o,$(call guest_srcs,$(t))))))
$(foreach t,$(GUEST_M32:tests/guest/compat/%.c=%),$(eval $(call guest_prog_m32,$(t),\
	$(patsubst tests/guest/%.c,$(GUEST_OBJ32)/%.o,$(call guest_srcs,compat/$(t))))))
GUEST_OBJS += $(TLIB_SRCS:tests/guest/%.c=$(GUEST_OBJ)/%.o) \
	$(if $(GUEST_M32),$(TLIB_SRCS:tests/guest/%.c=$(GUEST_OBJ32)/%.o))
-include $(GUEST_OBJS:.o=.d)

# Programs written against AOSP libion's headers (tests/aosp/): built
# against what install-dev put in a scratch DESTDIR, with nothing of the
# tree on the include path, and run in the guest as tests/guest/ programs.
AOSP_CFLAGS := -O2 -Wall -Wextra -Werror -I$(AOSP_ROOT)/usr/include

$(AOSP_ROOT)/.installed: $(LIBION_A) $(LIBION_SHARED) $(UAPI_HDRS) \
		lib/ion/ion.h Makefile
	rm -rf $(AOSP_ROOT)
	$(MAKE) install-dev PREFIX=/usr DESTDIR=$(AOSP_ROOT)
	touch $@

# They print TAP with the guest tests' tap.c, included by a path relative
# to their own file (it names no ion header).
$(AOSP_BINS): $(BUILD)/guest/tests/%: tests/aosp/%.c tests/guest/lib/tap.c \
		tests/guest/lib/tap.h $(AOSP_ROOT)/.installed
	@mkdir -p $(@D)
	$(CC) $(AOSP_CFLAGS) $(USER_LDFLAGS) -o $@ $< tests/guest/lib/tap.c \
		-L$(AOSP_ROOT)/usr/lib -lion

$(SOAK_BIN): $(SOAK_SRCS) tests/soak/soak.h $(TLIB_A) $(LIBION_A)
	@mkdir -p $(@D)
	$(CC) $(USER_CFLAGS) -Itests/guest/lib $(USER_LDFLAGS) -o $@ \
		$(SOAK_SRCS) $(TLIB_A) $(LIBION_A) -lpthread

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

check-debug: all
	scripts/check-debug.sh

demo: all
	scripts/guest-run.sh demo

shell: all
	scripts/guest-run.sh shell

bench: all
	scripts/bench.sh

soak: all
	scripts/soak.sh

soak-debug: all
	SOAK_DEBUG=1 scripts/soak.sh

lint: deps
	scripts/lint.sh

# Debian packages from debian/ (scripts/make-deb.sh); in $(BUILD)/deb.
deb:
	scripts/deps.sh --deb
	scripts/make-deb.sh

# Those packages installed into a Debian 12 system booted in QEMU.
check-deb: deps deb
	scripts/check-deb.sh

clean:
	-$(MAKE) -C $(KDIR) M=$(CURDIR)/kernel clean
	-[ -f tests/kmod/Kbuild ] && $(MAKE) -C $(KDIR) M=$(CURDIR)/tests/kmod clean
	rm -rf $(BUILD)
