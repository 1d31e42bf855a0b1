# sluice - build, test, demo, install.
#
#   make                 build build/sluice (names missing dependencies: make deps)
#   make deps            install missing dependencies (make test and make demo do too)
#   make test            build and run both test layers; lists skipped cases and ends
#                        with "N passed, N failed, N skipped"
#   make demo            run the bundled example campaign end to end
#   make fuzz            build the libFuzzer harnesses (tests/fuzz/, clang) and run
#                        each for FUZZ_SECONDS (default 30); crashes land in
#                        build/fuzz/crash/NAME/ (FUZZ_ONLY=glob,diff runs only those)
#   make install         PREFIX=/usr/local DESTDIR=
#   DEVELOPER=1          warnings are errors (CI sets it)
#   SANITIZE=address,undefined
#
# Everything is built out of tree under build/.  Grammar sources come from the
# pinned npm packages in node_modules/ (package-lock.json) and are compiled
# here; they are never committed.

CC ?= cc
# compile on every core unless the command line says otherwise (-jN)
ifeq ($(filter -j%,$(MAKEFLAGS)),)
MAKEFLAGS += -j$(shell nproc 2>/dev/null || echo 1)
endif
PREFIX ?= /usr/local
BUILD := build
PKGS := libgit2 tree-sitter libcurl jansson sqlite3 yaml-0.1 libseccomp libxml-2.0 libmicrohttpd
# grammar source dirs under node_modules/tree-sitter-*/ ; those with an external scanner
GRAMMARS := bash c cpp go java javascript json python rust typescript/typescript typescript/tsx
SCANNERS := bash cpp javascript python rust typescript/typescript typescript/tsx

ifeq ($(CI),true)
DEVELOPER ?= 1
endif

CFLAGS ?= -O2 -g
BASE_CFLAGS := -std=c11 -D_GNU_SOURCE -Wall -Wextra -Wshadow -Wno-unused-parameter \
	-I. -MMD -MP
# git's developer warnings (config.mak.dev) that this code keeps
ifeq ($(DEVELOPER),1)
BASE_CFLAGS += -Werror -Wdeclaration-after-statement -Wformat-security -Wold-style-definition \
	-Wpointer-arith -Wstrict-prototypes -Wvla -Wmissing-prototypes -fno-common
endif
ifneq ($(SANITIZE),)
BASE_CFLAGS += -fsanitize=$(SANITIZE) -fno-omit-frame-pointer
LDFLAGS += -fsanitize=$(SANITIZE)
endif

DEPS_STAMP := $(BUILD)/.deps-ok
PKG_CFLAGS = $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS = $(shell pkg-config --libs $(PKGS) 2>/dev/null)
ALL_CFLAGS = $(BASE_CFLAGS) $(PKG_CFLAGS) $(CFLAGS)

CLI_SRC := $(wildcard pipeline/cli/*.c)
# the library: every folder but the command-line program (pipeline/cli/)
LIB_SRC := $(wildcard common/*.c scoping/*.c storage/*.c validators/*.c pipeline/*.c) \
	$(filter-out pipeline/cli/%,$(wildcard pipeline/*/*.c))
LIB_OBJ := $(LIB_SRC:%.c=$(BUILD)/%.o)
CLI_OBJ := $(CLI_SRC:%.c=$(BUILD)/%.o)

GRAMMAR_SRC := $(foreach g,$(GRAMMARS),node_modules/tree-sitter-$(g)/src/parser.c) \
	$(foreach g,$(SCANNERS),node_modules/tree-sitter-$(g)/src/scanner.c)
GRAMMAR_OBJ := $(patsubst node_modules/tree-sitter-%.c,$(BUILD)/grammars/%.o,$(GRAMMAR_SRC))
# scoping's keyword table (scoping/keywords.h), generated from each grammar.json
# as LANG=PATH (sluice's language names: typescript/tsx are "typescript", "tsx")
KEYWORD_ARGS := $(foreach g,$(GRAMMARS),$(lastword $(subst /, ,$(g)))=node_modules/tree-sitter-$(g)/src/grammar.json)
KEYWORDS_OBJ := $(BUILD)/gen/keywords.o
GRAMMAR_JSON := $(foreach g,$(GRAMMARS),node_modules/tree-sitter-$(g)/src/grammar.json)

UNIT_SRC := $(wildcard tests/unit/test_*.c)
UNIT_BIN := $(UNIT_SRC:%.c=$(BUILD)/%)
HELPER_SRC := $(wildcard tests/helper/*.c)
HELPER_BIN := $(HELPER_SRC:%.c=$(BUILD)/%)

LIBSLUICE := $(BUILD)/libsluice.a

.PHONY: all deps test unit-test shell-test demo install clean distclean fuzz fuzz-deps
all: $(BUILD)/sluice

# `make deps`, `make test`, `make demo` and `make fuzz` install what is
# missing (ci/install-deps.sh); any other build only checks and names it.
ifneq ($(filter deps test demo fuzz,$(MAKECMDGOALS)),)
INSTALL_DEPS := 1
endif

deps: $(DEPS_STAMP)
$(DEPS_STAMP): ci/install-deps.sh package.json package-lock.json
ifeq ($(INSTALL_DEPS),1)
	@sh ci/install-deps.sh
else
	@sh ci/install-deps.sh --check || \
		{ echo "sluice: build dependencies are missing: run 'make deps'" >&2; exit 2; }
endif
	@mkdir -p $(@D) && touch $@

$(GRAMMAR_SRC): | $(DEPS_STAMP)
	@test -f $@ || { echo "missing $@: run sh ci/install-deps.sh" >&2; exit 2; }

$(BUILD)/grammars/%.o: node_modules/tree-sitter-%.c | $(DEPS_STAMP)
	@mkdir -p $(@D)
	$(CC) -std=c11 -O2 -w -fPIC -I$(dir $<) -c $< -o $@

$(BUILD)/%.o: %.c | $(DEPS_STAMP)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -c $< -o $@

$(BUILD)/gen/gen-keywords: ci/gen-keywords.c | $(DEPS_STAMP)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -o $@ $< $(LDFLAGS) -ljansson

# in a fresh clone node_modules appears with the dependencies (npm ci)
$(GRAMMAR_JSON): | $(DEPS_STAMP)
	@test -f $@ || { echo "missing $@: run sh ci/install-deps.sh" >&2; exit 2; }

$(BUILD)/gen/keywords.c: $(BUILD)/gen/gen-keywords $(GRAMMAR_JSON)
	$(BUILD)/gen/gen-keywords $(KEYWORD_ARGS) >$@.tmp && mv $@.tmp $@

$(KEYWORDS_OBJ): $(BUILD)/gen/keywords.c
	$(CC) $(ALL_CFLAGS) -c $< -o $@

$(LIBSLUICE): $(LIB_OBJ) $(GRAMMAR_OBJ) $(KEYWORDS_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(BUILD)/sluice: $(CLI_OBJ) $(LIBSLUICE)
	$(CC) $(LDFLAGS) -o $@ $(CLI_OBJ) $(LIBSLUICE) $(filter-out -lcurl -lxml2 -lmicrohttpd,$(PKG_LIBS)) -lpthread

$(BUILD)/tests/unit/%: tests/unit/%.c $(LIBSLUICE) | $(DEPS_STAMP)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -Itests/unit -o $@ $< $(LIBSLUICE) $(LDFLAGS) $(PKG_LIBS) -lpthread

# threat runs inside the jail, whose address-space limit leaves no room for
# a sanitizer's shadow memory: it is always built plain, and needs no library.
$(BUILD)/tests/helper/threat: tests/helper/threat.c | $(DEPS_STAMP)
	@mkdir -p $(@D)
	$(CC) $(filter-out -fsanitize=% -fno-omit-frame-pointer,$(ALL_CFLAGS)) -o $@ $<

# png-probe decodes what a headless browser rendered; it needs only zlib.
$(BUILD)/tests/helper/png-probe: tests/helper/png-probe.c | $(DEPS_STAMP)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -o $@ $< $(LDFLAGS) -lz

$(BUILD)/tests/helper/%: tests/helper/%.c $(LIBSLUICE) | $(DEPS_STAMP)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -o $@ $< $(LIBSLUICE) $(LDFLAGS) $(PKG_LIBS) -lpthread

test: $(BUILD)/sluice $(UNIT_BIN) $(HELPER_BIN)
	@sh tests/run-tests.sh $(BUILD)

# Fuzzing: the library again, built by clang with the fuzzer's coverage and
# the sanitizers, linked into one binary per harness.  Only `make fuzz`
# needs clang (ci/install-deps.sh installs it when WITH_CLANG=1 is set).
FUZZ_CC ?= clang
FUZZ_SECONDS ?= 30
FUZZ_BUILD := $(BUILD)/fuzz
FUZZ_SAN := -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer
FUZZ_CFLAGS = $(filter-out -Werror,$(BASE_CFLAGS)) $(PKG_CFLAGS) -g -O1 $(FUZZ_SAN) \
	-Werror=implicit-function-declaration -Werror=int-conversion
FUZZ_SRC := $(wildcard tests/fuzz/fuzz_*.c)
FUZZ_BIN := $(FUZZ_SRC:tests/fuzz/%.c=$(FUZZ_BUILD)/%)
FUZZ_LIB_OBJ := $(LIB_SRC:%.c=$(FUZZ_BUILD)/obj/%.o)

fuzz-deps: | $(DEPS_STAMP)
	@command -v $(FUZZ_CC) >/dev/null 2>&1 || WITH_CLANG=1 sh ci/install-deps.sh

$(FUZZ_BUILD)/obj/%.o: %.c | $(DEPS_STAMP) fuzz-deps
	@mkdir -p $(@D)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link -c $< -o $@

$(FUZZ_BUILD)/libsluice.a: $(FUZZ_LIB_OBJ) $(GRAMMAR_OBJ) $(KEYWORDS_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(FUZZ_BUILD)/fuzz_%: tests/fuzz/fuzz_%.c tests/fuzz/fuzz.h $(FUZZ_BUILD)/libsluice.a | fuzz-deps
	$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer -o $@ $< $(FUZZ_BUILD)/libsluice.a \
		$(PKG_LIBS) -lpthread

fuzz: $(FUZZ_BIN)
	@sh tests/fuzz/run-fuzz.sh $(FUZZ_BUILD) $(FUZZ_SECONDS) $(subst $(comma), ,$(FUZZ_ONLY))

comma := ,

demo: $(BUILD)/sluice
	@sh examples/run-demo.sh $(BUILD)

install: $(BUILD)/sluice
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/man/man1 \
		$(DESTDIR)$(PREFIX)/share/man/man5
	install -m 0755 $(BUILD)/sluice $(DESTDIR)$(PREFIX)/bin/sluice
	install -m 0644 docs/sluice.1 $(DESTDIR)$(PREFIX)/share/man/man1/sluice.1
	install -m 0644 docs/sluice-campaign.5 $(DESTDIR)$(PREFIX)/share/man/man5/sluice-campaign.5

clean:
	rm -rf $(BUILD)/common $(BUILD)/scoping $(BUILD)/pipeline $(BUILD)/validators \
		$(BUILD)/storage $(BUILD)/tests $(BUILD)/gen $(BUILD)/sluice $(LIBSLUICE)

distclean:
	rm -rf $(BUILD) node_modules

# (not the tests' trash directories: their files may end in .d too)
-include $(shell find $(BUILD) -path '$(BUILD)/tests/trash.*' -prune -o -name '*.d' -print 2>/dev/null)
