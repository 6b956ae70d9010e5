# muster - build, test, demo, bench and fuzz.
#
#   make            release build of build/muster
#   make demo       simulate the bundled example and write an HTML report
#   make demo-ui    a simulated cluster with `muster up` and `muster scheduler`
#                   and a workload that keeps arriving; prints the live UI's
#                   address (http://127.0.0.1:10259/ui/#token=...)
#   make test       ASan+UBSan build, then every test (unit, scenario,
#                   bad input, fuzz corpus replay, end to end)
#   make test-oracle  the reclaim/fair-share oracle over 5,000 seeds
#                   (make test runs 300)
#   make bench      benchmarks, printing figures
#   make fuzz       run every libFuzzer target for FUZZ_SECONDS each (clang)
#   make soak       the chaos soak for an hour (SOAK_SECONDS, SOAK_SEED, SOAK_DISPATCH)
#   make fidelity   the FGD paper's six policies against its results: ten
#                   seeds, every shared and synthetic openb variant (make
#                   test runs one seed on four)
#
# Missing Debian packages are installed (as root) or named by
# scripts/install-deps.sh before anything is built.

CC      ?= cc
OPT     ?= -O2 -g
WARN    = -std=c11 -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes
CPPFLAGS_ALL = -D_POSIX_C_SOURCE=200809L -Iinclude -Isrc
LIBS    = -lyaml -lm -ljansson -lsqlite3 -lmicrohttpd -lgnutls -lcurl -lssl -lcrypto -lpthread
# The release builds (build/muster, the benches) run on jemalloc: glibc's
# malloc and free were the largest user-space cost of a bind in both the
# server and the scheduler, and jemalloc cut the CPU per bind by about a
# quarter (docs/evaluation.md, "The bind path, round 11").  The sanitizer
# and fuzz builds keep glibc's malloc, which the sanitizers replace.
REL_LIBS = $(LIBS) -ljemalloc
B       = build
SAN     = -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
FUZZ_SECONDS ?= 60

LIB_SRC  = $(sort $(wildcard src/util/*.c src/engine/*.c src/load/*.c src/sim/*.c src/report/*.c src/eval/*.c src/bench/*.c src/apiserver/*.c src/agent/*.c src/kube/*.c src/web/*.c src/fleet/*.c src/dispatch/*.c))
# The live UI's assets, embedded as a generated C file (no network loads).
WEB_ASSETS = $(sort $(wildcard src/web/assets/*))
GEN_SRC  = $(B)/gen/web_assets.c
CLI_SRC  = $(sort $(wildcard src/cli/*.c))
UNIT_SRC = $(sort $(wildcard tests/unit/test_*.c))
FUZZ_SRC = $(sort $(wildcard fuzz/fuzz_*.c))
BENCH_SRC = $(sort $(wildcard bench/bench_*.c))

REL_LIB_OBJ  = $(LIB_SRC:%.c=$(B)/rel/%.o) $(B)/rel/gen/web_assets.o
REL_CLI_OBJ  = $(CLI_SRC:%.c=$(B)/rel/%.o)
ASAN_LIB_OBJ = $(LIB_SRC:%.c=$(B)/asan/%.o) $(B)/asan/gen/web_assets.o
ASAN_CLI_OBJ = $(CLI_SRC:%.c=$(B)/asan/%.o)
UNIT_BIN     = $(UNIT_SRC:tests/unit/%.c=$(B)/asan/tests/%)
REPLAY_BIN   = $(FUZZ_SRC:fuzz/%.c=$(B)/asan/replay/%)
FUZZ_BIN     = $(FUZZ_SRC:fuzz/%.c=$(B)/fuzz/%)
BENCH_BIN    = $(BENCH_SRC:bench/%.c=$(B)/rel/bench/%)
ASAN_BENCH_BIN = $(BENCH_SRC:bench/%.c=$(B)/asan/bench/%)

.PHONY: all deps demo demo-ui test test-build test-oracle bench fuzz soak fidelity clean
all: $(B)/muster

deps:
	@sh scripts/install-deps.sh

# --- generated sources -----------------------------------------------------
$(GEN_SRC): $(WEB_ASSETS) scripts/embed-assets.sh
	@mkdir -p $(@D)
	sh scripts/embed-assets.sh $@ $(WEB_ASSETS)
$(B)/rel/gen/web_assets.o: $(GEN_SRC)
	@mkdir -p $(@D)
	$(CC) $(WARN) $(OPT) $(CPPFLAGS_ALL) -c $< -o $@
$(B)/asan/gen/web_assets.o: $(GEN_SRC)
	@mkdir -p $(@D)
	$(CC) $(WARN) -O1 -g $(SAN) $(CPPFLAGS_ALL) -c $< -o $@

# --- release build -------------------------------------------------------
$(B)/rel/%.o: %.c
	@mkdir -p $(@D)
	$(CC) $(WARN) $(OPT) $(CPPFLAGS_ALL) -MMD -MP -c $< -o $@
$(B)/rel/libmuster.a: $(REL_LIB_OBJ)
	@rm -f $@
	ar rcs $@ $^
$(B)/muster: $(REL_CLI_OBJ) $(B)/rel/libmuster.a
	$(CC) $(OPT) -o $@ $^ $(REL_LIBS)

# --- sanitizer build for tests -------------------------------------------
$(B)/asan/%.o: %.c
	@mkdir -p $(@D)
	$(CC) $(WARN) -O1 -g $(SAN) $(CPPFLAGS_ALL) -MMD -MP -c $< -o $@
$(B)/asan/libmuster.a: $(ASAN_LIB_OBJ)
	@rm -f $@
	ar rcs $@ $^
$(B)/asan/muster: $(ASAN_CLI_OBJ) $(B)/asan/libmuster.a
	$(CC) $(SAN) -o $@ $^ $(LIBS)
$(B)/asan/tests/%: tests/unit/%.c $(wildcard tests/unit/*.h) $(B)/asan/libmuster.a
	@mkdir -p $(@D)
	$(CC) $(WARN) -O1 -g $(SAN) $(CPPFLAGS_ALL) -Itests/unit -o $@ $< $(B)/asan/libmuster.a $(LIBS)
$(B)/asan/replay/%: fuzz/%.c fuzz/replay_main.c $(B)/asan/libmuster.a
	@mkdir -p $(@D)
	$(CC) $(WARN) -O1 -g $(SAN) $(CPPFLAGS_ALL) -o $@ $< fuzz/replay_main.c $(B)/asan/libmuster.a $(LIBS)
$(B)/asan/bench/%: bench/%.c $(B)/asan/libmuster.a
	@mkdir -p $(@D)
	$(CC) $(WARN) -O1 -g $(SAN) $(CPPFLAGS_ALL) -o $@ $< $(B)/asan/libmuster.a $(LIBS)

test-build: $(B)/asan/muster $(UNIT_BIN) $(REPLAY_BIN) $(ASAN_BENCH_BIN)

test: deps
	@$(MAKE) --no-print-directory test-build
	@sh tests/run.sh $(B)/asan

test-oracle: deps
	@$(MAKE) --no-print-directory $(B)/asan/tests/test_oracle
	MUSTER_ORACLE_SEEDS=5000 $(B)/asan/tests/test_oracle

# --- the chaos soak for an hour (a shorter one runs in make test) --------
soak: deps
	@$(MAKE) --no-print-directory test-build
	SOAK_SECONDS=$${SOAK_SECONDS:-3600} SOAK_SEED=$${SOAK_SEED:-random} SOAK_DISPATCH=$${SOAK_DISPATCH:-3} SOAK_OUT=$(B)/soak \
	    sh tests/e2e/soak.sh $(B)/asan/muster

# --- the openb fidelity check in full (make test runs a short one) --------
fidelity: deps
	@$(MAKE) --no-print-directory $(B)/muster
	OPENB_SEEDS=42-51 OPENB_ALL=1 sh tests/e2e/eval_openb_fidelity.sh $(B)/muster

# --- demo ----------------------------------------------------------------
demo: deps
	@$(MAKE) --no-print-directory $(B)/muster
	@mkdir -p $(B)/demo
	./$(B)/muster simulate --cluster examples/demo/cluster.yaml \
	    --workload examples/demo/workload.yaml --workload examples/demo/jobs.csv \
	    --seed 1 --json $(B)/demo/result.json --report $(B)/demo/report.html
	@echo "For the live web UI on a running simulated cluster: make demo-ui"

DEMO_PORT ?= 10259
demo-ui: deps
	@$(MAKE) --no-print-directory $(B)/muster
	@sh scripts/demo-ui.sh ./$(B)/muster $(DEMO_PORT)

# --- benchmarks ----------------------------------------------------------
$(B)/rel/bench/%: bench/%.c $(B)/rel/libmuster.a
	@mkdir -p $(@D)
	$(CC) $(WARN) $(OPT) $(CPPFLAGS_ALL) -o $@ $< $(B)/rel/libmuster.a $(REL_LIBS)
bench: deps
	@$(MAKE) --no-print-directory $(B)/muster $(BENCH_BIN)
	@sh bench/run.sh $(B)

# --- fuzzing (clang + libFuzzer) ------------------------------------------
# The library is compiled once with coverage for libFuzzer (fuzzer-no-link)
# and linked into each target: compiling all of it again for each of the
# targets took longer than the fuzzing itself.
FUZZ_CFLAGS = $(WARN) -O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer $(CPPFLAGS_ALL)
FUZZ_LIB_OBJ = $(LIB_SRC:%.c=$(B)/fuzz/obj/%.o) $(B)/fuzz/obj/gen/web_assets.o
$(B)/fuzz/obj/%.o: %.c
	@mkdir -p $(@D)
	clang $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link -MMD -MP -c $< -o $@
$(B)/fuzz/obj/gen/web_assets.o: $(GEN_SRC)
	@mkdir -p $(@D)
	clang $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link -c $< -o $@
$(B)/fuzz/libmuster.a: $(FUZZ_LIB_OBJ)
	@rm -f $@
	ar rcs $@ $^
$(B)/fuzz/%: fuzz/%.c $(B)/fuzz/libmuster.a
	@mkdir -p $(@D)
	clang $(FUZZ_CFLAGS) -fsanitize=fuzzer -DMU_FUZZING -o $@ $< $(B)/fuzz/libmuster.a $(LIBS)
fuzz: deps
	@$(MAKE) --no-print-directory $(FUZZ_BIN)
	@for f in $(FUZZ_BIN); do n=$$(basename $$f); mkdir -p fuzz/corpus/$$n; \
	  echo "== $$n ($(FUZZ_SECONDS)s)"; \
	  $$f -max_total_time=$(FUZZ_SECONDS) -max_len=65536 fuzz/corpus/$$n || exit 1; done

clean:
	rm -rf $(B)

-include $(shell find $(B) -name '*.d' 2>/dev/null)
