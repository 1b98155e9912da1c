# swapsim: one hand-written Makefile (see README.md for the targets).
#
#   make deps            install missing Debian packages (no-op when present)
#   make / make all      build bin/swapsim (and the CUDA backend where nvcc is present)
#   make cuda            only the CUDA backend and profiler (libswapsim_cuda.so)
#   make test            deps, build, run the TAP tests with prove
#   make check           the same, the fast tier: all but the sweeps (docs/testing.md)
#   make test SANITIZE=1 the same under AddressSanitizer + UBSan (CC=clang: built by
#                        clang, whose UBSan also traps arithmetic on a null pointer)
#   make bench           performance figures, one "bench: NAME VALUE UNIT" line each
#   make demo            a one-minute demonstration: generate, plan, verify, simulate, trace
#   make experiments     the main job: every experiment (quick mode; FULL=1 for the
#                        paper's budgets), the plots, paper_results.md (out/)
#   make plots           redraw the plots from out/*.csv
#   make paper_results.md regenerate paper_results.md from out/*.csv
#   make experiments MPI=N  the same with each experiment's cells spread over N MPI
#                        ranks (mpirun; docs/cluster.md)
#   make fig11           the paper's Figure 11 on the CPU backend (out/fig11/); BACKEND=cuda:
#                        on a GPU, the paper's design (experiments/fig11.sh says which settings)
#   make lib             build/pic/libswapsim.so: the library with its JSON C API (api/)
#   make python          the Python package (python/, over libswapsim.so) into the user's site
#                        (PYTHON=/usr/bin/python3 by default; docs/python.md)
#   make install PREFIX=/usr/local
#   make clean

CC      ?= cc
PREFIX  ?= /usr/local
SANITIZE ?= 0
DATA    ?= data
WERROR  ?= 1

WARN    := -Wall -Wextra -Wshadow -Wconversion -Wmissing-prototypes -Wstrict-prototypes
CSTD    := -std=c11 -D_POSIX_C_SOURCE=200809L -D_DEFAULT_SOURCE
OPT     := -O2 -g
# COIN-OR CBC (milp/cbc.c, the optimal planners): Debian coinor-libcbc-dev; GLPK
# (milp/glpk.c, their --set solver=glpk): libglpk-dev
CBC_CFLAGS ?= $(patsubst -I%,-isystem %,$(shell pkg-config --cflags cbc 2>/dev/null || echo -I/usr/include/coin))
CBC_LIBS   ?= $(shell pkg-config --libs cbc 2>/dev/null || echo -lCbcSolver -lCbc -lCgl -lOsiClp -lClp -lOsi -lCoinUtils)
LIBS    := -lgsl -lgslcblas -lhwloc $(CBC_LIBS) -lglpk -lz -lm -lpthread

ifeq ($(WERROR),1)
WARN    += -Werror
endif

ifeq ($(FUZZ),1)
# AFL++'s instrumenting compiler, for `make fuzz` (its own build directory)
CC      := afl-cc
BUILD   := build/fuzz
OPT     := -O1 -g
LDSAN   :=
else ifeq ($(SANITIZE),1)
# a build directory per compiler: clang's objects and gcc's do not mix
BUILD   := build/san$(if $(findstring clang,$(notdir $(CC))),-clang)
OPT     := -O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=undefined
LDSAN   := -fsanitize=address,undefined
else
BUILD   := build/rel
# position-independent, so that build/pic/libswapsim.so links the same
# objects (the library is compiled once); -fno-semantic-interposition keeps
# calls within the library direct and inlinable, as in an executable
OPT     += -fPIC -fno-semantic-interposition
LDSAN   :=
endif

CFLAGS_ALL := $(CSTD) $(WARN) $(OPT) $(CFLAGS)
LDFLAGS_ALL := $(LDSAN) $(LDFLAGS)

LIB_DIRS := common profiles sim milp planners planners/lib ga sharing experiments validate api
LIB_SRC  := $(foreach d,$(LIB_DIRS),$(wildcard $(d)/*.c))
LIB_OBJ  := $(patsubst %.c,$(BUILD)/%.o,$(LIB_SRC))
LIB      := $(BUILD)/libswapsim.a

CLI_SRC  := $(wildcard cli/*.c)
CLI_OBJ  := $(patsubst %.c,$(BUILD)/%.o,$(CLI_SRC))

TEST_SRC := $(wildcard tests/test_*.c)
TEST_BIN := $(patsubst tests/%.c,$(BUILD)/tests/%,$(TEST_SRC))
BENCH_SRC := $(wildcard tests/bench_*.c)
BENCH_BIN := $(patsubst tests/%.c,$(BUILD)/tests/%,$(BENCH_SRC))

# Optional part: the CUDA replay backend and CUPTI profiler (validate/cuda/*.cu),
# a shared object bin/swapsim loads with dlopen only for --backend cuda and
# 'swapsim profile', so the binary runs on machines without CUDA. Skipped,
# with a message, where nvcc is missing. CUDA 13 compiles for Turing and
# newer (all-major); set CUDA_ARCH for others.
NVCC      ?= $(shell command -v nvcc 2>/dev/null || { test -x /usr/local/cuda/bin/nvcc && echo /usr/local/cuda/bin/nvcc; })
CUDA_HOME ?= $(patsubst %/bin/nvcc,%,$(NVCC))
CUDA_ARCH ?= -arch=all-major
CU_SRC    := $(wildcard validate/cuda/*.cu)
# (one CUDA object for every build: SANITIZE=1's tests load build/rel's,
# through SWAPSIM_CUDA_LIB, instead of compiling it again)
CU_OBJ    := $(patsubst %.cu,build/rel/%.o,$(CU_SRC))
CUDA_SO   := build/rel/libswapsim_cuda.so
NVFLAGS   := -std=c++17 -O2 $(CUDA_ARCH) -Xcompiler -fPIC,-Wall,-Wextra
CUDA_LIBS := -L$(CUDA_HOME)/lib64 -lcublas -lcupti -Xlinker -rpath,$(CUDA_HOME)/lib64
ifeq ($(WERROR),1)
NVFLAGS   += -Werror all-warnings
endif
ifeq ($(wildcard $(CUDA_HOME)/include/cudnn.h),)
NVFLAGS   += -DSWAPSIM_NO_CUDNN
CUDNN_SAY := without cuDNN (no $(CUDA_HOME)/include/cudnn.h: convolutions, batch norm, pooling and softmax run as touch kernels)
else
CUDA_LIBS += -lcudnn
CUDNN_SAY := with cuDNN ($(CUDA_HOME)/include/cudnn.h)
endif

# Optional part: MPI (experiments/mpi.c, the only file that includes mpi.h),
# for `mpirun -np N swapsim experiment` and island searches across ranks
# (docs/cluster.md). Built where OpenMPI's mpicc is found (Debian:
# libopenmpi-dev); without it swapsim builds as before and says so when
# started by mpirun. MPICC= builds without MPI where it is installed.
MPICC     ?= $(shell command -v mpicc 2>/dev/null)
ifneq ($(MPICC),)
MPI_INC   := $(shell $(MPICC) --showme:compile 2>/dev/null)
MPI_LIBS  := $(shell $(MPICC) --showme:link 2>/dev/null)
endif
ifneq ($(MPI_LIBS),)
# -isystem: OpenMPI's headers are not held to our warning flags
MPI_CFLAGS := -DSWAPSIM_MPI $(patsubst -I%,-isystem %,$(MPI_INC))
endif
MPIRUN       ?= mpirun
MPIRUN_FLAGS ?= $(if $(filter 0,$(shell id -u)),--allow-run-as-root)

ifeq ($(SANITIZE),1)
SWAPSIM := $(BUILD)/bin/swapsim
else
SWAPSIM := bin/swapsim
endif

DEB_PKGS := gcc make libc6-dev libgsl-dev libhwloc-dev zlib1g-dev gnuplot-nox perl pkg-config coinor-libcbc-dev libglpk-dev

.PHONY: all deps test check bench demo clean install check-warnings cuda fig11 experiments scripts plots \
        paper_results.md docs-check fuzz FORCE
.DEFAULT_GOAL := all

all: $(SWAPSIM) cuda

ifeq ($(NVCC),)
cuda:
	@echo "cuda: nvcc not found: the CUDA backend and profiler are not built (set NVCC=/path/to/nvcc)"
else
cuda: $(CUDA_SO)
	@echo "cuda: $(CUDA_SO): $(notdir $(NVCC)) $(shell $(NVCC) --version 2>/dev/null | sed -n 's/.*release \([0-9.]*\).*/\1/p'), cuBLAS, $(CUDNN_SAY)"

build/rel/validate/cuda/%.o: validate/cuda/%.cu validate/backend.h
	@mkdir -p $(dir $@)
	$(NVCC) $(NVFLAGS) -c $< -o $@

$(CUDA_SO): $(CU_OBJ)
	$(NVCC) -shared -o $@ $^ $(CUDA_LIBS)
endif

deps:
	@missing=""; \
	for p in $(DEB_PKGS); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "install ok installed" || missing="$$missing $$p"; \
	done; \
	if [ -z "$$missing" ]; then echo "deps: all present"; else \
	  echo "deps: installing$$missing"; \
	  if [ "$$(id -u)" -eq 0 ]; then SUDO=; else SUDO=sudo; fi; \
	  $$SUDO apt-get update -qq && \
	  $$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $$missing; \
	fi

# The recorded data's default location (sw_data_dir): this tree's data/.
$(BUILD)/common/sw.o: CFLAGS_ALL += -DSW_DATA_DIR='"$(abspath data)"'

$(BUILD)/%.o: %.c $(BUILD)/cflags
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -MMD -MP -c $< -o $@

# the compiler's flags: every object is rebuilt when they change (build/rel's
# objects became position-independent on 2026-11-28; an older tree's are not)
$(BUILD)/cflags: FORCE
	@mkdir -p $(dir $@)
	@echo '$(CC) $(CFLAGS_ALL)' | cmp -s - $@ || echo '$(CC) $(CFLAGS_ALL)' > $@

# with or without MPI: mpi.o and the binary are rebuilt when that changes
$(BUILD)/experiments/mpi.o: CFLAGS_ALL += $(MPI_CFLAGS)
# the only file that includes CBC's header
$(BUILD)/milp/cbc.o: CFLAGS_ALL += $(CBC_CFLAGS)
$(BUILD)/experiments/mpi.o $(SWAPSIM): $(BUILD)/mpi.flags
$(BUILD)/mpi.flags: FORCE
	@mkdir -p $(dir $@)
	@echo '$(MPI_CFLAGS) $(MPI_LIBS)' | cmp -s - $@ || echo '$(MPI_CFLAGS) $(MPI_LIBS)' > $@
FORCE:

$(LIB): $(LIB_OBJ)
	@mkdir -p $(dir $@)
	rm -f $@
	ar rcs $@ $^

$(SWAPSIM): $(CLI_OBJ) $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS_ALL) -o $@ $(CLI_OBJ) $(LIB) $(LIBS) $(MPI_LIBS)

$(BUILD)/tests/%: tests/%.c tests/tap.h $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -MMD -MP $< -o $@ $(LIB) $(LDFLAGS_ALL) $(LIBS)

# the parser's own test links the command line's parser (cli/opts.c)
$(BUILD)/tests/test_opts: tests/test_opts.c tests/tap.h $(BUILD)/cli/opts.o $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -MMD -MP $< -o $@ $(BUILD)/cli/opts.o $(LIB) $(LDFLAGS_ALL) $(LIBS)

# prove runs TEST_JOBS test programs at once (2: CI's cores); each works in
# its own scratch directory (/tmp/swapsim-NAME-PID, mkstemp), so they can run
# side by side. The slowest (CPU seconds: docs/testing.md) are started first,
# so that none of them is left running alone at the end. TEST_ALONE time real
# replays against the simulator (a neighbour busy on the same cores would
# slow them): they run afterwards, the two of them side by side (each mostly
# waits on its replay's copies, so they do not slow each other).
#
# Test groups: named tests of one program that run as a prove job of their
# own (a wrapper script, build/rel/tests/PROG.GROUP), so that one slow
# program does not set the run's wall time alone; PROG.rest runs every other
# test of PROG (tap.h: -NAME leaves NAME out, so a test added later lands
# there). The groups are the sweeps: the exact solvers' (integer programs
# stopped by node limits) and every planner on every recording (the
# round trip), together three quarters of the suite's CPU time; `make
# check`, the fast tier, leaves them out: every program, every other test.
# `make test` runs them all. test_optimal_swap's random_graphs and
# schedule_set share one cache of solves: one group.
TEST_JOBS ?= 2
TEST_GROUPS := test_bound.exact test_optimal_swap.sets test_roundtrip.sweep \
               test_optimal_swap.chains test_bound.exact_pcie
TEST_GROUP_test_bound.exact := exact_on_tiny_dags
TEST_GROUP_test_bound.exact_pcie := exact_where_pcie_binds
TEST_GROUP_test_optimal_swap.sets := random_graphs schedule_set
TEST_GROUP_test_optimal_swap.chains := chain_lstm stopped_early solver_abort
TEST_GROUP_test_roundtrip.sweep := every_planner_every_recording
TEST_SPLIT := $(sort $(basename $(TEST_GROUPS)))
TEST_SLOW := $(TEST_GROUPS) test_record_pytorch test_apply_plan test_optimal_remat \
             test_conformance test_optimal_swap.rest test_bound.rest test_roundtrip.rest
TEST_ALONE := test_validate test_replay_cli
TEST_GROUP_BIN := $(patsubst %,$(BUILD)/tests/%,$(TEST_GROUPS))
TEST_REST_BIN := $(patsubst %,$(BUILD)/tests/%.rest,$(TEST_SPLIT))
TEST_WHOLE := $(filter-out $(patsubst %,$(BUILD)/tests/%,$(TEST_SPLIT) $(TEST_ALONE)),$(TEST_BIN))
# slowest first, then the rest
test_order = $(foreach t,$(TEST_SLOW),$(filter $(BUILD)/tests/$(t),$(1))) \
             $(filter-out $(patsubst %,$(BUILD)/tests/%,$(TEST_SLOW)),$(1))
TEST_ORDER := $(call test_order,$(TEST_WHOLE) $(TEST_GROUP_BIN) $(TEST_REST_BIN))
CHECK_ORDER := $(call test_order,$(TEST_WHOLE) $(TEST_REST_BIN))
TEST_SOLO  := $(filter $(patsubst %,$(BUILD)/tests/%,$(TEST_ALONE)),$(TEST_BIN))

define test_group_rule
$(BUILD)/tests/$(1): $(BUILD)/tests/$(basename $(1)) Makefile
	printf '#!/bin/sh\nexec "%s" %s\n' '$$(abspath $$<)' '$(TEST_GROUP_$(1))' > $$@ && chmod +x $$@
endef
$(foreach g,$(TEST_GROUPS),$(eval $(call test_group_rule,$(g))))
test_rest_args = $(addprefix -,$(foreach g,$(filter $(1).%,$(TEST_GROUPS)),$(TEST_GROUP_$(g))))
$(BUILD)/tests/%.rest: $(BUILD)/tests/% Makefile
	printf '#!/bin/sh\nexec "%s" %s\n' '$(abspath $<)' '$(call test_rest_args,$*)' > $@ && chmod +x $@

# tests/test_record_pytorch needs PyTorch (CPU is enough): installed when it
# can be; where it cannot, that test skips with one line.
TEST_PY_PKGS := python3-torch python3-torchvision
# tests/test_mpi needs OpenMPI (mpicc at build time, mpirun to run): the same.
TEST_MPI_PKGS := libopenmpi-dev openmpi-bin

# The tests' cache of integer-program solves (milp/cache.c): a program
# solved once, by `make test` or `make check`, as built or under SANITIZE=1,
# is read back the next time instead of solved again (CBC's search stopped
# by a node limit is deterministic); salted by milp/'s sources and the
# solvers' versions. MILP_CACHE= turns it off; make clean empties it.
MILP_CACHE ?= $(abspath build/milp-cache)
MILP_SALT = $(shell cat milp/*.c milp/*.h | cksum | cut -d' ' -f1)-$(shell dpkg-query -W -f='$${Version},' coinor-libcbc-dev libglpk-dev 2>/dev/null)

# make test: every test; make check: the fast tier (above), which does not
# build the CUDA object either (nvcc for every major architecture: a sixth
# of the build; test_validate's cuda test loads one built earlier, or skips
# saying it is not built). Both install what the tests need, build, and run
# prove (TEST_RUN_ORDER: the programs and groups of the tier).
test: TEST_RUN_ORDER = $(TEST_ORDER)
check: TEST_RUN_ORDER = $(CHECK_ORDER)
test check: deps
	@$(MAKE) --no-print-directory deps DEB_PKGS="$(TEST_PY_PKGS)" || \
	  echo "$@: could not install $(TEST_PY_PKGS): tests/test_record_pytorch will skip"
	@$(MAKE) --no-print-directory deps DEB_PKGS="$(TEST_MPI_PKGS)" || \
	  echo "$@: could not install $(TEST_MPI_PKGS): tests/test_mpi will skip"
	$(MAKE) --no-print-directory $(SWAPSIM) $(TEST_BIN) $(TEST_RUN_ORDER) $(if $(filter test,$@),cuda) lib
	@export SWAPSIM_BIN=$(abspath $(SWAPSIM)) SWAPSIM_DATA=$(abspath $(DATA)) \
	  LSAN_OPTIONS=suppressions=$(abspath tests/lsan.supp); \
	if [ -f $(CUDA_SO) ]; then export SWAPSIM_CUDA_LIB=$(abspath $(CUDA_SO)); fi; \
	if [ -n "$(MILP_CACHE)" ]; then mkdir -p $(MILP_CACHE) && \
	  export SWAPSIM_MILP_CACHE=$(MILP_CACHE) SWAPSIM_MILP_CACHE_SALT='$(MILP_SALT)'; fi; \
	echo "$@: prove -j$(TEST_JOBS) $(words $(TEST_RUN_ORDER)) jobs, then $(words $(TEST_SOLO)) side by side$(if $(filter check,$@), (the fast tier: not $(TEST_GROUPS)))"; \
	prove -j$(TEST_JOBS) --timer --exec '' $(TEST_RUN_ORDER); par=$$?; \
	prove -j$(TEST_JOBS) --timer --exec '' $(TEST_SOLO); solo=$$?; \
	test $$par = 0 && test $$solo = 0

bench: deps
	$(MAKE) --no-print-directory SANITIZE=0 bin/swapsim $(patsubst tests/%.c,build/rel/tests/%,$(BENCH_SRC))
	@for b in $(patsubst tests/%.c,build/rel/tests/%,$(BENCH_SRC)); do \
	  SWAPSIM_BIN=$(abspath bin/swapsim) SWAPSIM_DATA=$(abspath $(DATA)) $$b || exit 1; done

demo: deps $(SWAPSIM)
	./experiments/demo.sh $(SWAPSIM)

fig11: deps $(SWAPSIM) $(if $(filter cuda,$(BACKEND)),cuda)
	rm -f $(OUT)/fig11/.made-by
	OUT=$(OUT)/fig11 BACKEND=$(or $(BACKEND),cpu) ./experiments/fig11.sh $(SWAPSIM)

fig8: deps $(SWAPSIM)
	rm -f $(OUT)/fig8/.made-by
	OUT=$(OUT)/fig8 ./experiments/fig8.sh $(SWAPSIM)

zico: deps $(SWAPSIM)
	rm -f $(OUT)/zico/.made-by
	OUT=$(OUT)/zico DATA=$(DATA) ./experiments/zico.sh $(SWAPSIM)

megengine: deps $(SWAPSIM)
	rm -f $(OUT)/megengine/.made-by
	OUT=$(OUT)/megengine ./experiments/megengine.sh $(SWAPSIM)

# The four scripts of `make experiments` (`make scripts` alone), each into
# $(OUT)/NAME/. Like a grid's cells, a script's output is reused when
# $(OUT)/NAME/.made-by names the same swapsim binary, the same script and
# the same settings (the environment variables the script reads, but OUT);
# `make fig11` and the other single targets remove it. fig11's replays
# take minutes of wall time on a loaded machine.
SCRIPTS := fig11 fig8 zico megengine
RUN_SCRIPTS = reused=; for s in $(SCRIPTS); do \
	  vars=$$(grep -o '$${[A-Z_]*' experiments/$$s.sh | tr -d '$${' | grep -vx 'OUT' | sort -u | paste -sd'|'); \
	  st="$$(cat $(SWAPSIM) experiments/$$s.sh | cksum) $$(DATA=$(DATA) env | grep -E "^($$vars)=" | sort | paste -sd' ')"; \
	  if [ -f $(OUT)/$$s/.made-by ] && [ "$$(cat $(OUT)/$$s/.made-by)" = "$$st" ]; then \
	    echo "[$$s] reused $(OUT)/$$s/ (the same binary, script and settings: $(OUT)/$$s/.made-by)"; reused="$$reused $$s"; \
	  else rm -f $(OUT)/$$s/.made-by; \
	    OUT=$(OUT)/$$s DATA=$(DATA) ./experiments/$$s.sh $(SWAPSIM) || exit 1; \
	    echo "$$st" > $(OUT)/$$s/.made-by; fi; \
	done

scripts: deps $(SWAPSIM)
	@$(RUN_SCRIPTS)

optimality: deps $(SWAPSIM)
	$(SWAPSIM) experiment experiments/optimality.json $(if $(FULL),--full) --data $(DATA) --out $(OUT) --progress
	$(SWAPSIM) experiment experiments/optimality-schedules.json $(if $(FULL),--full) --data $(DATA) --out $(OUT) --progress

# The main job: every experiment grid in quick mode (FULL=1: the paper's
# budgets), the DTR parity table, Figure 11 on the CPU backend, the plots,
# and paper_results.md regenerated from the CSVs. Results go to $(OUT)/;
# cells already run with the same inputs and binary are reused.
OUT ?= out
EXPERIMENTS := table1 fig6 table1-variants fig6-inception-relu fig6-brnn-concat fig7 table2 fig9 fig9-dataflow fig10 fig10-dataflow ablation tuning defaults mutation first-allocation planners \
               planners-recorded dtr dtr-megengine hybrid hybrid-dtr optimality optimality-schedules \
               paper-readings today-planners

# MPI=N: each experiment's cells spread over N ranks ($(MPIRUN) -np N
# $(MPIRUN_FLAGS); under Slurm, see docs/cluster.md).
EXP_LAUNCH := $(if $(MPI),$(MPIRUN) -np $(MPI) $(MPIRUN_FLAGS))
# the CPU seconds of the commands a recipe ran (user + system), from the
# shell's `times` (its second line, written to a file: a subshell's is
# empty): the time a run takes on idle cores is
# about this over the number of cores, whatever the load
EXP_CPU := awk '{ s = 0; for (i = 1; i <= 2; i++) { split($$i, a, "m"); s += a[1] * 60 + a[2] } printf "%d", s }'
, := ,

experiments: deps $(SWAPSIM)
	@echo "experiments: $(if $(FULL),full mode: the paper's search budgets as evaluations (hours),quick mode: searches budgeted by evaluations$(,) sized by CPU time for 30 minutes on 2 idle cores (docs/experiments.md: the quick mode's size); FULL=1 for the paper's budgets)$(if $(MPI),; cells over $(MPI) MPI ranks)"
	@$(if $(MPI),command -v $(MPIRUN) > /dev/null || { echo "experiments: MPI=$(MPI) needs $(MPIRUN) (Debian: openmpi-bin) and a swapsim built with MPI (libopenmpi-dev; docs/cluster.md)"; exit 1; })
	@start=$$(date +%s); cells=0; cached=0; mkdir -p $(OUT); rm -f $(OUT)/.failed; \
	for e in $(EXPERIMENTS); do \
	  t1=$$(date +%s); \
	  { $(EXP_LAUNCH) $(SWAPSIM) experiment experiments/$$e.json $(if $(FULL),--full) --data $(DATA) \
	    --out $(OUT) --progress 2>&1 || touch $(OUT)/.failed; } | tee $(OUT)/.progress; \
	  if [ -f $(OUT)/.failed ]; then rm -f $(OUT)/.failed; exit 1; fi; \
	  n=$$(sed -n 's|.* [0-9]*/\([0-9]*\) cells (\([0-9]*\) cached).*|\1 \2|p' $(OUT)/.progress | tail -1); \
	  cells=$$(( cells + $${n%% *}0 / 10 )); cached=$$(( cached + $${n##* }0 / 10 )); \
	  times > $(OUT)/.cpu; \
	  echo "[$$e] $$(( $$(date +%s) - t1 )) s wall; $$(tail -1 $(OUT)/.cpu | $(EXP_CPU)) s of CPU so far"; \
	done; \
	if [ -d $(DATA)/dtr-logs ]; then \
	  $(SWAPSIM) dtr-parity --data $(DATA) -o $(OUT)/dtr-parity > /dev/null && \
	  echo "[dtr-parity] wrote $(OUT)/dtr-parity.csv and .md"; \
	else echo "[dtr-parity] skipped: $(DATA)/dtr-logs is absent"; fi; \
	$(RUN_SCRIPTS); \
	times > $(OUT)/.cpu; \
	echo "These figures come from \`make experiments$(if $(FULL), FULL=1)\` in $(if $(FULL),full mode (the paper's 30-minute searches as 6$(,)500 generations: 416$(,)032 evaluations per GA run$(,) what 30 minutes of one core give RNN-8-8K here),quick mode (searches budgeted by evaluations instead of the paper's 30 minutes: 50 generations per GA run on the paper's five models (3$(,)232 evaluations)$(,) 100 in the planners grids and 300 in Table 2; 10-300 generations in the ablations$(,) the tuning and the readings (each file's title says how many); three seeds for the ablation$(,) the tuning$(,) the defaults$(,) the mutation ablation and the readings; the integer programs and their set of schedules at 0.7x of the ideal peak only: docs/experiments.md: the quick mode's size)); every search is budgeted by evaluations or solver nodes$(,) so the figures do not depend on the machine's load. The run took $$(( $$(date +%s) - start )) s of wall time and $$(tail -1 $(OUT)/.cpu | $(EXP_CPU)) s of CPU (user and system) on $$(nproc) cores on $$(date -u +%Y-%m-%d)$$(if [ $$cached -gt 0 ]; then echo "; $$cached of the grids' $$cells cells were reused from $(OUT)/cache (run earlier with the same binary and command lines)$(,) so their CPU time is not in that figure"; fi)$$(if [ -n "$$reused" ]; then echo "; the output of$$reused was reused from an earlier run of the same binary and scripts (its .made-by)$(,) so not counted either"; fi)." > $(OUT)/run-mode.txt; \
	$(MAKE) --no-print-directory plots paper_results.md SWAPSIM=$(SWAPSIM) OUT=$(OUT) || exit 1; \
	echo "experiments: done in $$(( $$(date +%s) - start )) s$(if $(FULL),, (quick mode))"

plots: $(SWAPSIM)
	@for p in plots/*.gp; do \
	  case $$p in */common.gp|*/fig11.gp|*/fig8.gp|*/zico.gp) continue;; esac; \
	  gnuplot -e "data='$(OUT)'; swapsim='$(SWAPSIM)'" $$p 2>&1 | grep -v "^$$" | \
	    sed "s|^|$$p: |"; \
	done; echo "plots: PNG and SVG in $(OUT)/"

# docs/long-runs/ holds the committed CSVs of full-mode runs (hours each);
# they are copied beside the quick-mode CSVs for the report.
paper_results.md: $(SWAPSIM)
	mkdir -p $(OUT)/long-runs && cp docs/long-runs/*.csv $(OUT)/long-runs/
	$(SWAPSIM) report paper_results.md.in --data $(OUT) -o paper_results.md

# Generated documents must not go stale: regenerate each into a temporary
# directory and fail on any difference from the committed copy (the parity
# CSV's two planning-time columns, seconds and arena_seconds, are measured
# and left out of the comparison).
docs-check: deps $(SWAPSIM)
	@tmp=$$(mktemp -d) && trap 'rm -rf "$$tmp"' EXIT && fail=0 && \
	$(SWAPSIM) table1 -o $$tmp/table1.md && \
	$(SWAPSIM) calibrate --data $(DATA) -o $$tmp/calibration.md && \
	$(SWAPSIM) dtr-parity --data $(DATA) -o $$tmp/dtr-parity > /dev/null && \
	for f in table1.md calibration.md dtr-parity.md dtr-parity.csv; do \
	  if [ $$f = dtr-parity.csv ]; then \
	    cut -d, -f1-14,16-20 docs/$$f > $$tmp/old.$$f; cut -d, -f1-14,16-20 $$tmp/$$f > $$tmp/new.$$f; \
	  else cp docs/$$f $$tmp/old.$$f; cp $$tmp/$$f $$tmp/new.$$f; fi; \
	  if ! diff -u $$tmp/old.$$f $$tmp/new.$$f > $$tmp/$$f.diff; then \
	    echo "docs-check: docs/$$f is stale (regenerate it; the difference:)"; \
	    head -20 $$tmp/$$f.diff; fail=1; fi; \
	done; \
	$(SWAPSIM) report paper_results.md.in --check --data $(OUT) \
	  > $$tmp/check.txt 2>&1 || fail=1; tail -20 $$tmp/check.txt; \
	if [ $$fail = 0 ]; then echo "docs-check: every generated document is current"; fi; \
	exit $$fail

# Fuzzing (AFL++): one harness, fuzz/fuzz_parse.c, per parser; each runs
# FUZZ_S seconds from its seed corpus (fuzz/corpus/PARSER/), FUZZ_JOBS of
# them at once (one afl-fuzz per core: 2, CI's cores), and the target
# fails if AFL++ saved any crash or hang. Findings stay in $(FUZZ_OUT)/.
FUZZ_S ?= 60
FUZZ_JOBS ?= 2
FUZZ_OUT ?= out/fuzz
FUZZ_PARSERS := profile plan dtr pipedream pytorch experiment workload

$(BUILD)/fuzz/fuzz_parse: fuzz/fuzz_parse.c $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) $< -o $@ $(LIB) $(LDFLAGS_ALL) $(LIBS)

.PHONY: $(addprefix fuzz-run-,$(FUZZ_PARSERS))
fuzz: deps
	@command -v afl-fuzz >/dev/null 2>&1 || $(MAKE) --no-print-directory deps DEB_PKGS="afl++ clang"
	AFL_USE_ASAN=1 AFL_USE_UBSAN=1 $(MAKE) --no-print-directory FUZZ=1 WERROR=0 build/fuzz/fuzz/fuzz_parse
	@printf '%s\n' $(FUZZ_PARSERS) | MAKEFLAGS= xargs -P $(FUZZ_JOBS) -I{} $(MAKE) --no-print-directory -s fuzz-run-{}

# one parser's run (FUZZ=1's harness, built by fuzz above)
$(addprefix fuzz-run-,$(FUZZ_PARSERS)): fuzz-run-%:
	@p=$*; rm -rf $(FUZZ_OUT)/$$p; mkdir -p $(FUZZ_OUT); \
	AFL_SKIP_CPUFREQ=1 AFL_I_DONT_CARE_ABOUT_MISSING_CRASHES=1 AFL_NO_AFFINITY=1 \
	AFL_NO_UI=1 AFL_QUIET=1 AFL_SKIP_CRASHES=1 \
	  timeout $$(( $(FUZZ_S) + 60 )) afl-fuzz -V $(FUZZ_S) -t 2000 -m none \
	  -i fuzz/corpus/$$p -o $(FUZZ_OUT)/$$p -- build/fuzz/fuzz/fuzz_parse $$p @@ \
	  > $(FUZZ_OUT)/$$p.log 2>&1; \
	st=$(FUZZ_OUT)/$$p/default/fuzzer_stats; \
	execs=$$(awk '/^execs_done/ {print $$3}' $$st 2>/dev/null); \
	crashes=$$(ls $(FUZZ_OUT)/$$p/default/crashes 2>/dev/null | grep -c '^id:'); \
	hangs=$$(ls $(FUZZ_OUT)/$$p/default/hangs 2>/dev/null | grep -c '^id:'); \
	echo "fuzz: $$p: $${execs:-0} executions in $(FUZZ_S) s, $$crashes crashes, $$hangs hangs"; \
	if [ -z "$$execs" ]; then echo "fuzz: $$p: afl-fuzz did not run (see $(FUZZ_OUT)/$$p.log)"; \
	  tail -5 $(FUZZ_OUT)/$$p.log; exit 1; fi; \
	test "$$crashes" = 0 && test "$$hangs" = 0

# The shared library the Python package loads (ctypes): build/rel's objects
# (compiled position-independent, above), but experiments/mpi.o, which is
# compiled here again without MPI.
PIC_DIR := build/pic
PIC_OBJ := $(filter-out build/rel/experiments/mpi.o,$(patsubst %.c,build/rel/%.o,$(LIB_SRC))) \
           $(PIC_DIR)/experiments/mpi.o
PIC_SO  := $(PIC_DIR)/libswapsim.so
PYTHON  ?= /usr/bin/python3

$(PIC_DIR)/experiments/mpi.o: experiments/mpi.c
	@mkdir -p $(dir $@)
	$(CC) $(CSTD) $(WARN) -O2 -g -fPIC -fno-semantic-interposition $(CFLAGS) -MMD -MP -c $< -o $@

ifeq ($(BUILD),build/rel)
$(PIC_SO): $(PIC_OBJ)
	$(CC) -shared -o $@ $^ $(LDFLAGS) $(LIBS)
else
# (SANITIZE=1, FUZZ=1: the library is build/rel's, built by a make of its own)
$(PIC_SO): FORCE
	@$(MAKE) --no-print-directory SANITIZE=0 FUZZ=0 $@
endif

.PHONY: lib python
lib: $(PIC_SO)

# pip and setuptools for Debian's python (the build runs offline: no build isolation)
PYTHON_PKGS := python3 python3-pip python3-setuptools

python: $(PIC_SO)
	@$(MAKE) --no-print-directory deps DEB_PKGS="$(PYTHON_PKGS)"
	cp $(PIC_SO) python/swapsim/libswapsim.so
	@where=$$($(PYTHON) -c 'import sys; print("" if sys.prefix != sys.base_prefix else "--user --break-system-packages")'); \
	$(PYTHON) -m pip install --no-build-isolation $$where ./python || \
	  $(PYTHON) -m pip install $$where ./python
	@rm -rf python/build python/swapsim.egg-info
	@echo "python: installed for $(PYTHON) (import swapsim; docs/python.md)"

install: $(SWAPSIM)
	install -d $(DESTDIR)$(PREFIX)/bin
	install -m 755 $(SWAPSIM) $(DESTDIR)$(PREFIX)/bin/swapsim
	if [ -f $(CUDA_SO) ]; then install -d $(DESTDIR)$(PREFIX)/lib/swapsim && \
	  install -m 755 $(CUDA_SO) $(DESTDIR)$(PREFIX)/lib/swapsim/; fi

clean:
	rm -rf build bin

-include $(PIC_DIR)/experiments/mpi.d
-include $(LIB_OBJ:.o=.d) $(CLI_OBJ:.o=.d) $(TEST_BIN:=.d) $(BENCH_BIN:=.d)
