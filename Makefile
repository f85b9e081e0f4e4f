# cfx build. Sources are found by wildcard: a new .c file in a layer directory is part of
# libcfx, a new .c file under tests/ is part of the test binary. Static objects are built
# without -fPIC (thread-locals then use the fast initial-exec model), shared ones with it.

# `make` with no target builds the library and the driver.
.DEFAULT_GOAL := all

CC      ?= cc
PREFIX  ?= /usr/local
BUILD   ?= build
CSTD     = -std=c11 -D_POSIX_C_SOURCE=200809L
WARN     = -Wall -Wextra -Werror -Wno-missing-field-initializers
# RELEASE=1 is the configuration `make bench` measures and a production build should use:
# assertions off, and link-time optimization, so the small functions one layer exports to the
# next (a tensor's retain and release, the error status, a scope's end) are inlined across
# files as the compiler would inline them within one. The objects are fat (they carry machine
# code too), so libcfx.a still links into a program built without -flto. Objects do not record
# the flags they were built with: switch a build directory's configuration after `make clean`
# (`make bench` has its own, build-bench). The C code generator's test runs `make install` in
# the build directory of the suite that runs it and relies on finding everything up to date.
OPT     ?= $(if $(RELEASE),-O2 -g -DNDEBUG -flto=auto -ffat-lto-objects,-O2 -g)
LTO_LINK = $(filter -flto%,$(OPT))
PKGS     = libffi libcjson openblas
DEPS_MISSING := $(shell pkg-config --exists $(PKGS) criterion 2>/dev/null || echo yes)

CFLAGS_ALL = $(CSTD) $(WARN) $(OPT) -I. -I$(BUILD)/gen $(shell pkg-config --cflags $(PKGS) 2>/dev/null) $(CFLAGS)
LIBS       = $(shell pkg-config --libs $(PKGS) 2>/dev/null) -lpthread -lm
TEST_LIBS  = $(shell pkg-config --libs criterion 2>/dev/null)

LIB_SRC  := $(sort $(wildcard dispatch/*.c dispatch/kernels/*.c dispatch/kernels/*/*.c \
              ir/*.c ir/passes/*.c tracer/*.c hop/*.c codegen/*.c))
# The model zoo is linked into the driver, the tests and the benchmarks, not into libcfx.
MODEL_SRC:= $(sort $(wildcard tools/models/*.c))
TOOL_SRC := $(sort $(wildcard tools/cli/*.c)) $(MODEL_SRC)
TEST_SRC := $(sort $(wildcard tests/*.c tests/*/*.c)) $(MODEL_SRC)
BENCH_SRC:= $(sort $(wildcard tools/bench/*.c)) $(MODEL_SRC)
PARITY_SRC:= $(sort $(wildcard tools/parity/*.c)) $(MODEL_SRC)
HEADERS  := cfx.h $(wildcard dispatch/*.h dispatch/kernels/*.h ir/*.h ir/passes/*.h tracer/*.h hop/*.h codegen/*.h)
TOOL_HEADERS := $(wildcard tools/*/*.h)

# The operator API is generated from the op table (dispatch/ops.def) by tools/opgen, which is
# built from the library's own schema parser and boxing rules: the objects of the sources
# that do not include generated headers (BOOT_SRC), linked as an archive so that only what
# the generator needs is pulled in. The tests have a table of their own (tests/dispatch/
# ops_test.def) exercising what the built-in one does not (any arity, Tensor?[], ...).
GEN       = $(BUILD)/gen
GEN_BASE  = $(GEN)/dispatch/ops_gen
GEN_HDR   = $(GEN_BASE).h $(GEN_BASE)_kernels.h
GEN_C     = $(GEN_BASE).c
TGEN_BASE = $(GEN)/tests/dispatch/ops_test_gen
TGEN_HDR  = $(TGEN_BASE).h $(TGEN_BASE)_kernels.h
TGEN_C    = $(TGEN_BASE).c
GEN_USERS := $(shell grep -l -E '"dispatch/(ops|ops_table)\.h"|kernels/kernels\.h|ops_gen' $(LIB_SRC) /dev/null)
BOOT_SRC  := $(filter-out $(GEN_USERS),$(LIB_SRC))
OPGEN     = $(BUILD)/opgen
OPGEN_TEST= $(BUILD)/opgen-test
BOOTA     = $(BUILD)/libcfx-boot.a

STATIC_OBJ := $(LIB_SRC:%.c=$(BUILD)/static/%.o) $(BUILD)/static/gen/ops_gen.o
PIC_OBJ    := $(LIB_SRC:%.c=$(BUILD)/pic/%.o) $(BUILD)/pic/gen/ops_gen.o
BOOT_OBJ   := $(BOOT_SRC:%.c=$(BUILD)/static/%.o)
TOOL_OBJ   := $(TOOL_SRC:%.c=$(BUILD)/static/%.o)
TEST_OBJ   := $(TEST_SRC:%.c=$(BUILD)/static/%.o) $(BUILD)/static/gen/ops_test_gen.o

LIBA  = $(BUILD)/libcfx.a
LIBSO = $(BUILD)/libcfx.so
CFX   = $(BUILD)/cfx
TESTS = $(BUILD)/cfx-tests
BENCH = $(BUILD)/cfx-bench
# Plugin models (examples/*.c), each a shared object `cfx trace` opens; a test traces them.
EXAMPLES := $(patsubst examples/%.c,$(BUILD)/examples/%.so,$(wildcard examples/*.c))

# The sources of every target, one per line: rewritten only when the set changes, so deleting
# a source (which leaves no newer prerequisite behind) still relinks what contained it.
SRC_LIST = $(BUILD)/sources.txt
$(SRC_LIST): FORCE
	@mkdir -p $(BUILD)
	@printf '%s\n' $(LIB_SRC) $(TOOL_SRC) $(TEST_SRC) $(BENCH_SRC) | cmp -s - $@ || \
	    printf '%s\n' $(LIB_SRC) $(TOOL_SRC) $(TEST_SRC) $(BENCH_SRC) > $@
FORCE:

.PHONY: all deps test asan tsan bench goldens docs install clean examples check-torch fuzz FORCE
all: deps
	@$(MAKE) --no-print-directory $(LIBA) $(LIBSO) $(CFX)

# Installs missing Debian packages; a no-op when pkg-config finds them all.
deps:
ifeq ($(DEPS_MISSING),yes)
	sh scripts/install-deps.sh
endif

# Library objects are compiled with hidden visibility: only CFX_API declarations are exported.
LIB_CFLAGS = $(CFLAGS_ALL) -fvisibility=hidden

$(BUILD)/static/%.o: %.c $(HEADERS) $(TOOL_HEADERS)
	@mkdir -p $(dir $@)
	$(CC) $(LIB_CFLAGS) -c $< -o $@

$(BUILD)/pic/%.o: %.c $(HEADERS)
	@mkdir -p $(dir $@)
	$(CC) $(LIB_CFLAGS) -fPIC -c $< -o $@

# what includes generated headers (everything outside the boot set) waits for them
$(filter-out $(BOOT_OBJ),$(STATIC_OBJ)) $(filter-out $(BOOT_SRC:%.c=$(BUILD)/pic/%.o),$(PIC_OBJ)) \
$(TOOL_OBJ) $(TEST_OBJ) $(BENCH_SRC:%.c=$(BUILD)/static/%.o): $(GEN_HDR)
$(filter $(BUILD)/static/tests/%,$(TEST_OBJ)): $(TGEN_HDR)

$(BUILD)/static/tests/%.o: tests/%.c $(HEADERS) $(TOOL_HEADERS) $(wildcard tests/*.h tests/*/*.h)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) $(shell pkg-config --cflags criterion 2>/dev/null) -c $< -o $@

# ---- the generated operator API ----
$(BOOTA): $(BOOT_OBJ)
	@rm -f $@
	ar rcs $@ $(BOOT_OBJ)

$(OPGEN): tools/opgen/opgen.c dispatch/ops.def $(HEADERS) $(BOOTA)
	$(CC) $(CFLAGS_ALL) -o $@ tools/opgen/opgen.c $(BOOTA) $(LIBS)

$(OPGEN_TEST): tools/opgen/opgen.c tests/dispatch/ops_test.def $(HEADERS) $(BOOTA)
	$(CC) $(CFLAGS_ALL) -DCFX_OPGEN_TABLE='"tests/dispatch/ops_test.def"' -o $@ tools/opgen/opgen.c $(BOOTA) $(LIBS)

$(GEN_HDR) $(GEN_C) &: $(OPGEN)
	@mkdir -p $(dir $(GEN_BASE))
	$(OPGEN) cfx $(GEN_BASE) $(BUILD)/gen/ops.md

$(TGEN_HDR) $(TGEN_C) &: $(OPGEN_TEST)
	@mkdir -p $(dir $(TGEN_BASE))
	$(OPGEN_TEST) cfxtest $(TGEN_BASE)

# The pointwise loops compute with wrapping integer arithmetic, as PyTorch's kernels do.
$(BUILD)/static/gen/ops_gen.o: $(GEN_C) $(GEN_HDR) $(HEADERS)
	@mkdir -p $(dir $@)
	$(CC) $(LIB_CFLAGS) -fwrapv -c $< -o $@

$(BUILD)/pic/gen/ops_gen.o: $(GEN_C) $(GEN_HDR) $(HEADERS)
	@mkdir -p $(dir $@)
	$(CC) $(LIB_CFLAGS) -fwrapv -fPIC -c $< -o $@

$(BUILD)/static/gen/ops_test_gen.o: $(TGEN_C) $(TGEN_HDR) $(GEN_HDR) $(HEADERS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -c $< -o $@

# docs/ops.md is the generator's page of the built-in table; a test checks it is current.
docs: $(GEN_HDR)
	cp $(BUILD)/gen/ops.md docs/ops.md

$(LIBA): $(STATIC_OBJ) $(SRC_LIST)
	@rm -f $@
	ar rcs $@ $(STATIC_OBJ)

$(LIBSO): $(PIC_OBJ) $(SRC_LIST)
	$(CC) $(LTO_LINK) -shared -o $@ $(PIC_OBJ) $(LIBS)

# --whole-archive: built-in operators register through constructors in the archive.
# -rdynamic: the driver exports the CFX_API functions, which a plugin it dlopens calls (so
# plugin and driver share one registry instead of the plugin loading a second libcfx).
$(CFX): $(TOOL_OBJ) $(LIBA) $(SRC_LIST)
	$(CC) $(LTO_LINK) -rdynamic -o $@ $(TOOL_OBJ) -Wl,--whole-archive $(LIBA) -Wl,--no-whole-archive $(LIBS)

# A plugin is built as a user builds one: -shared -fPIC against the public headers, no libcfx.
examples: $(EXAMPLES)
$(BUILD)/examples/%.so: examples/%.c $(HEADERS) $(GEN_HDR)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -shared -fPIC -o $@ $<

# Linked without -flto even in RELEASE=1 (from the fat objects' machine code): link-time
# optimization drops the section-placed record of Criterion's report hook, and with it the
# per-test timeout (tests/test_timeout.c).
$(TESTS): $(TEST_OBJ) $(LIBA) $(SRC_LIST)
	$(CC) -o $@ $(TEST_OBJ) -Wl,--whole-archive $(LIBA) -Wl,--no-whole-archive $(TEST_LIBS) $(LIBS)

# Criterion runs each test in its own process; -j2 matches the machine. A test that runs longer
# than TEST_TIMEOUT seconds fails with its name (no run can hang).
# The API test builds a program against the public headers and libcfx.so with CFX_CC,
# CFX_USER_CFLAGS and CFX_USER_LIBS.
TEST_TIMEOUT ?= 300
TEST_ENV = CFX_TEST_TIMEOUT=$(TEST_TIMEOUT) CFX_CC="$(CC)"
test: deps
	@$(MAKE) --no-print-directory $(TESTS) $(CFX) $(LIBSO) $(EXAMPLES)
	$(TEST_ENV) CFX_USER_CFLAGS="$(OPT)" CFX_USER_LIBS="" CFX_BIN=$(CFX) $(TESTS) --jobs 2 $(TEST_ARGS)

ASAN_OPT = -O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
asan: deps
	@$(MAKE) --no-print-directory BUILD=build-asan OPT="$(ASAN_OPT)" \
	    build-asan/cfx-tests build-asan/cfx build-asan/libcfx.so $(EXAMPLES:$(BUILD)/%=build-asan/%) \
	    LIBS="$(LIBS) -fsanitize=address,undefined"
	@ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 LSAN_OPTIONS=exitcode=0 UBSAN_OPTIONS=print_stacktrace=1 \
	    $(TEST_ENV) CFX_USER_CFLAGS="$(ASAN_OPT)" CFX_USER_LIBS="-fsanitize=address,undefined" \
	    CFX_BIN=build-asan/cfx build-asan/cfx-tests --jobs 2 $(TEST_ARGS) > build-asan/tests.log 2>&1; \
	    rc=$$?; cat build-asan/tests.log; sh scripts/check-leaks.sh build-asan/tests.log && exit $$rc

# Failure injection (tests/tools/test_failalloc.c): every allocation of a full workload (each
# built-in model traced, dumped to JSON, loaded, run through dce,cse,fold,topo-sort) failed in
# turn, under ASan+UBSan; `make test` runs a sample of them.
.PHONY: failalloc
failalloc: deps
	@$(MAKE) --no-print-directory BUILD=build-asan OPT="$(ASAN_OPT)" build-asan/cfx-tests \
	    LIBS="$(LIBS) -fsanitize=address,undefined"
	CFX_FAILALLOC_STRIDE=1 CFX_TEST_TIMEOUT=7200 UBSAN_OPTIONS=print_stacktrace=1 \
	    build-asan/cfx-tests --jobs 2 --filter 'failalloc/*'

# The threaded workload under ThreadSanitizer: tests/tools/threads_zoo.c (8 threads tracing the
# zoo, custom-op registration, JSON) run by a plain program, tools/tsan/main.c, since
# Criterion's BoxFort arena cannot start under TSan (Criterion issue #274). Built into
# build-tsan; any data race or lock-order report fails the run (halt_on_error, exitcode).
TSAN_OPT = -O1 -g -fsanitize=thread -fno-omit-frame-pointer
TSAN_OBJ = build-tsan/static/tools/tsan/main.o build-tsan/static/tests/tools/threads_zoo.o \
           $(MODEL_SRC:%.c=build-tsan/static/%.o)
build-tsan/cfx-tsan: $(TSAN_OBJ) build-tsan/libcfx.a
	$(CC) -fsanitize=thread -o $@ $(TSAN_OBJ) -Wl,--whole-archive build-tsan/libcfx.a -Wl,--no-whole-archive $(LIBS)
tsan: deps
	@$(MAKE) --no-print-directory BUILD=build-tsan OPT="$(TSAN_OPT)" build-tsan/cfx-tsan
	@TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 exitcode=66" build-tsan/cfx-tsan 2> build-tsan/tsan.log; \
	    rc=$$?; grep -v '^Warning: ' build-tsan/tsan.log; exit $$rc

# libFuzzer targets (fuzz/*.c, see docs/reliability.md): the library built by clang with
# ASan+UBSan and coverage into build-fuzz, each target run for FUZZ_SECONDS on a copy of its
# seed corpus (fuzz/corpus/<name>), crashes and slow inputs written to build-fuzz/.
FUZZ_SECONDS ?= 10
# FUZZ_RUNS=N (the CI smoke): a fixed -seed=1 and N executions instead of a time, so the smoke
# is deterministic and bounded and cannot fail on a finding only a longer run reaches.
# It starts from the seed corpus alone (build-fuzz/smoke), not what long runs have grown.
FUZZ_LIMIT = $(if $(FUZZ_RUNS),-seed=1 -runs=$(FUZZ_RUNS),-max_total_time=$(FUZZ_SECONDS))
FUZZ_CORPUS = $(CURDIR)/build-fuzz/$(if $(FUZZ_RUNS),smoke,corpus)
FUZZ_CC ?= clang
FUZZ_SAN = -fsanitize=address,undefined -fno-sanitize-recover=undefined
FUZZ_OPT = -O1 -g -fno-omit-frame-pointer -fsanitize=fuzzer-no-link $(FUZZ_SAN)
FUZZ_TARGETS := $(patsubst fuzz/fuzz_%.c,%,$(wildcard fuzz/fuzz_*.c))
fuzz: deps
	@$(MAKE) --no-print-directory BUILD=build-fuzz CC=$(FUZZ_CC) OPT="$(FUZZ_OPT)" \
	    LIBS="$(LIBS) $(FUZZ_SAN)" build-fuzz/libcfx.a
	@set -e; for t in $(FUZZ_TARGETS); do \
	    $(FUZZ_CC) $(CFLAGS_ALL) -Ibuild-fuzz/gen -O1 -g -fsanitize=fuzzer $(FUZZ_SAN) -o build-fuzz/fuzz_$$t fuzz/fuzz_$$t.c \
	        $$([ $$t = cli ] && echo $(filter-out tools/cli/main.c,$(TOOL_SRC))) \
	        -Wl,--whole-archive build-fuzz/libcfx.a -Wl,--no-whole-archive $(LIBS); \
	    $(if $(FUZZ_RUNS),rm -rf $(FUZZ_CORPUS)/$$t;) mkdir -p $(FUZZ_CORPUS)/$$t; cp fuzz/corpus/$$t/* $(FUZZ_CORPUS)/$$t/; \
	    echo "fuzz $$t: $(FUZZ_LIMIT)"; \
	    build-fuzz/fuzz_$$t $(FUZZ_LIMIT) -timeout=1 -rss_limit_mb=2048 -max_len=65536 \
	        $$([ $$t = cli ] && echo -close_fd_mask=2) -artifact_prefix=$(CURDIR)/build-fuzz/$$t- -print_final_stats=1 $(FUZZ_CORPUS)/$$t \
	        >build-fuzz/$$t.log 2>&1 || { tail -n 40 build-fuzz/$$t.log; exit 1; }; \
	        grep -E 'stat::number_of_executed_units|stat::peak_rss|ERROR|SUMMARY|Slow|Done' build-fuzz/$$t.log; \
	    ! ls build-fuzz/$$t-crash-* build-fuzz/$$t-leak-* build-fuzz/$$t-timeout-* 2>/dev/null; done

$(BENCH): $(BENCH_SRC:%.c=$(BUILD)/static/%.o) $(LIBA) $(SRC_LIST)
	$(CC) $(LTO_LINK) -o $@ $(BENCH_SRC:%.c=$(BUILD)/static/%.o) -Wl,--whole-archive $(LIBA) -Wl,--no-whole-archive $(LIBS)

# Parity with PyTorch 2.13: the programs of tools/parity/programs.def and the model zoo, traced
# (real and fake) and run by cfx, against their twins in tools/interop/check_torch.py.
PARITY = $(BUILD)/cfx-parity
$(PARITY_SRC:%.c=$(BUILD)/static/%.o): $(GEN_HDR) tools/parity/programs.def
$(PARITY): $(PARITY_SRC:%.c=$(BUILD)/static/%.o) $(LIBA) $(SRC_LIST)
	$(CC) $(LTO_LINK) -o $@ $(PARITY_SRC:%.c=$(BUILD)/static/%.o) -Wl,--whole-archive $(LIBA) -Wl,--no-whole-archive $(LIBS)

check-torch: deps
	@$(MAKE) --no-print-directory $(PARITY)
	@rm -rf $(BUILD)/parity && mkdir -p $(BUILD)/parity && $(PARITY) $(BUILD)/parity
	$(PYTHON) tools/interop/check_torch.py $(BUILD)/parity

bench: deps
	@$(MAKE) --no-print-directory RELEASE=1 BUILD=build-bench build-bench/cfx-bench
	build-bench/cfx-bench

# Every golden file in tests/data comes from PyTorch 2.13 through one generator script,
# tools/interop/gen_*.py (run from the repo root with the default python3). Check that the
# committed goldens are current with: make goldens && git diff --exit-code tests/data
PYTHON ?= python3
GOLDEN_SCRIPTS := $(sort $(wildcard tools/interop/gen_*.py))
goldens:
	@set -e; for s in $(GOLDEN_SCRIPTS); do echo "$(PYTHON) $$s"; $(PYTHON) $$s; done

install: all
	install -d $(DESTDIR)$(PREFIX)/lib $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/lib/pkgconfig
	install -m 644 $(LIBA) $(DESTDIR)$(PREFIX)/lib/
	install -m 755 $(LIBSO) $(DESTDIR)$(PREFIX)/lib/
	install -m 755 $(CFX) $(DESTDIR)$(PREFIX)/bin/
	for h in $$(sh scripts/public-headers.sh $(BUILD)); do \
	    if [ -f $$h ]; then f=$$h; else f=$(BUILD)/gen/$$h; fi; \
	    install -D -m 644 $$f $(DESTDIR)$(PREFIX)/include/cfx/$$h; done
	sed -e 's|@PREFIX@|$(PREFIX)|g' cfx.pc.in > $(DESTDIR)$(PREFIX)/lib/pkgconfig/cfx.pc
	install -D -m 644 tools/cli/cfx.bash-completion $(DESTDIR)$(PREFIX)/share/bash-completion/completions/cfx

clean:
	rm -rf build build-asan build-bench build-fuzz build-tsan
