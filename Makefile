# tessera: `make` builds build/tessera and build/libtessera.a; `make demo`, `make test`,
# `make bench`. CUDA kernels are built when nvcc is found (CUDA=0 forces a CPU-only build).

CC      ?= cc
CXX     ?= c++
# The first Python that has OpenCV (Debian's python3-opencv lives under /usr/bin/python3).
PYTHON  ?= $(shell for p in /usr/bin/python3 python3; do $$p -c 'import cv2, numpy' >/dev/null 2>&1 && { echo $$p; exit; }; done; echo /usr/bin/python3)
BUILD   ?= build
OPT     ?= -O3
CFLAGS  ?= $(OPT) -g
WARN    := -Wall -Wextra -Wno-unused-parameter
# Contraction stays off: bit-exact results depend on separate float multiplies and adds.
ALLCFLAGS = -std=c11 -D_GNU_SOURCE -fPIC -ffp-contract=off -Iinclude $(WARN) $(CFLAGS) $(EXTRA_CFLAGS)
LDLIBS  := -lpng -ljpeg -lz -lpthread -lm

NVCC    ?= $(shell command -v nvcc 2>/dev/null || ls /usr/local/cuda/bin/nvcc 2>/dev/null)
CUDA    ?= $(if $(NVCC),1,0)
CUDA_HOME ?= $(patsubst %/bin/nvcc,%,$(NVCC))
# Turing through Hopper as machine code, and PTX for newer GPUs to compile at load time.
CUDA_ARCHS ?= 75 80 86 89 90
NVFLAGS ?= -O3 -std=c++17 -Iinclude -fmad=false --expt-relaxed-constexpr -Xcompiler -fPIC,-Wall \
           $(foreach a,$(CUDA_ARCHS),-gencode arch=compute_$(a),code=sm_$(a)) \
           -gencode arch=compute_90,code=compute_90 $(EXTRA_NVFLAGS)

CORE_SRC := $(filter-out src/core/nocuda.c,$(wildcard src/core/*.c)) $(wildcard src/ops/*.c) \
            $(wildcard src/cpu/*.c) $(wildcard src/io/*.c)
CLI_SRC  := $(wildcard src/cli/*.c)
TEST_SRC := $(wildcard tests/*.c)
ifeq ($(CUDA),1)
CU_SRC   := $(wildcard src/cuda/*.cu)
CU_OBJ   := $(CU_SRC:%.cu=$(BUILD)/obj/%.o)
ALLCFLAGS += -DTSR_HAVE_CUDA=1 -I$(CUDA_HOME)/include
LINK     := $(CXX)
LDLIBS   += -L$(CUDA_HOME)/lib64 -L$(CUDA_HOME)/targets/x86_64-linux/lib -lcudart_static -ldl -lrt
else
CORE_SRC += src/core/nocuda.c
LINK     := $(CC)
endif
CORE_OBJ := $(CORE_SRC:%.c=$(BUILD)/obj/%.o) $(CU_OBJ)

# The viewer ('tessera view', src/view) needs OpenGL and EGL headers and libraries (windows also
# X11). It is linked into build/tessera and the tests only, and left out (VIEW=0) where they are
# missing; without X11 (VIEW_X11=0) it renders off screen only.
tsr_links = $(shell printf '$(foreach h,$(1),\043include <$(h)>\n)int main(void){return 0;}\n' | \
              $(CC) $(EXTRA_CFLAGS) -x c - -x none -o /dev/null $(LDFLAGS) $(2) >/dev/null 2>&1 && echo 1 || echo 0)
ifeq ($(origin VIEW),undefined)
VIEW     := $(call tsr_links,GL/gl.h EGL/egl.h,-lOpenGL -lEGL)
endif
ifeq ($(VIEW),1)
ifeq ($(origin VIEW_X11),undefined)
VIEW_X11 := $(call tsr_links,X11/Xlib.h,-lX11)
endif
VIEW_OBJ := $(patsubst %.c,$(BUILD)/obj/%.o,$(wildcard src/view/*.c)) \
            $(if $(CU_OBJ),$(patsubst %.cu,$(BUILD)/obj/%.o,$(wildcard src/view/*.cu)))
VIEW_LIBS := -lOpenGL -lEGL $(if $(filter 1,$(VIEW_X11)),-lX11)
ALLCFLAGS += -DTSR_HAVE_VIEW=1 $(if $(filter 1,$(VIEW_X11)),-DTSR_VIEW_X11=1)
endif
HEADERS  := $(wildcard include/*.h src/*/*.h src/*/*.cuh)

.PHONY: all deps demo test bench clean
all: $(BUILD)/tessera $(BUILD)/libtessera.a $(BUILD)/libtessera.so

# Files that test TSR_HAVE_VIEW or TSR_VIEW_X11 are rebuilt when VIEW or VIEW_X11 change.
$(BUILD)/obj/src/cli/cmd_view.o $(BUILD)/obj/tests/test_view.o $(patsubst %.c,$(BUILD)/obj/%.o,$(wildcard src/view/*.c)): \
    $(BUILD)/.view-$(VIEW)$(VIEW_X11)
$(BUILD)/.view-$(VIEW)$(VIEW_X11):
	@mkdir -p $(BUILD) && rm -f $(BUILD)/.view-* && touch $@

# The GPU benchmark (CUDA builds only). NPP, the peer it measures against, is linked only when
# its header is present (NPP=0 leaves it out).
ifeq ($(CUDA),1)
NPP ?= $(if $(wildcard $(CUDA_HOME)/include/nppi.h),1,0)
ifeq ($(NPP),1)
BENCH_NVFLAGS := -DTSR_HAVE_NPP=1
BENCH_LIBS    ?= -L$(CUDA_HOME)/lib64 -lnppif -lnppial -lnppist -lnppidei -lnppicc -lnppig -lnppc
endif
$(BUILD)/obj/bench/cuda_bench.o: bench/cuda_bench.cu $(HEADERS) | $(BUILD)/.deps-build
	@mkdir -p $(dir $@)
	$(NVCC) $(NVFLAGS) $(BENCH_NVFLAGS) -DTSR_HAVE_CUDA=1 -c $< -o $@

$(BUILD)/tessera-bench-cuda: $(BUILD)/obj/bench/cuda_bench.o $(BUILD)/libtessera.a
	$(LINK) -o $@ $^ $(LDLIBS) $(BENCH_LIBS) $(LDFLAGS)
endif

$(BUILD)/.deps-build: scripts/deps.sh
	@bash scripts/deps.sh build
	@mkdir -p $(BUILD) && touch $@

$(BUILD)/obj/%.o: %.c $(HEADERS) | $(BUILD)/.deps-build
	@mkdir -p $(dir $@)
	$(CC) $(ALLCFLAGS) -c $< -o $@

$(BUILD)/obj/%.o: %.cu $(HEADERS) | $(BUILD)/.deps-build
	@mkdir -p $(dir $@)
	$(NVCC) $(NVFLAGS) -DTSR_HAVE_CUDA=1 -c $< -o $@

$(BUILD)/libtessera.a: $(CORE_OBJ)
	@rm -f $@
	ar rcs $@ $^

# The shared library serves other languages (the conformance tests drive it from Python).
$(BUILD)/libtessera.so: $(CORE_OBJ)
	$(LINK) -shared -o $@ $^ $(LDLIBS) $(LDFLAGS)

$(BUILD)/tessera: $(CLI_SRC:%.c=$(BUILD)/obj/%.o) $(VIEW_OBJ) $(BUILD)/libtessera.a
	$(LINK) -o $@ $^ $(LDLIBS) $(VIEW_LIBS) $(LDFLAGS)

# args.o: tests/test_fuzz_regressions.c replays the CLI option parser's fuzz inputs, through the
# fuzz targets' sources, which it includes.
$(BUILD)/obj/tests/test_fuzz_regressions.o: tests/fuzz/fuzz_decode.h tests/fuzz/fuzz_cli_args.c tests/fuzz/fuzz_y4m.c \
                                            tests/fuzz/fuzz_puzzle_json.c
$(BUILD)/tessera-tests: $(TEST_SRC:%.c=$(BUILD)/obj/%.o) $(BUILD)/obj/src/cli/args.o $(VIEW_OBJ) $(BUILD)/libtessera.a
	$(LINK) -o $@ $^ $(LDLIBS) $(VIEW_LIBS) $(LDFLAGS)

deps:
	@PYTHON=$(PYTHON) bash scripts/deps.sh test

demo: all
	@bash scripts/demo.sh

test: all $(BUILD)/tessera-tests
	@PYTHON=$(PYTHON) bash scripts/deps.sh test
	@PYTHON=$(PYTHON) BUILD=$(BUILD) bash tests/run.sh

bench: all $(if $(filter 1,$(CUDA)),$(BUILD)/tessera-bench-cuda)
	@PYTHON=$(PYTHON) bash scripts/deps.sh test
	@PYTHON=$(PYTHON) BUILD=$(BUILD) bash bench/run.sh

clean:
	rm -rf $(BUILD) demo-out

# ---------------------------------------------------------------- fuzzing
# `make fuzz` builds the libFuzzer targets tests/fuzz/fuzz_*.c into $(FUZZ_BUILD) with clang and
# -fsanitize=fuzzer,address,undefined: the library (CPU-only) and the CLI's option parser are
# compiled again with coverage and sanitizers. tests/fuzz/run.sh builds and runs them.
FUZZ_CC     ?= clang
FUZZ_BUILD  ?= build-fuzz
FUZZ_SAN    := -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer
FUZZ_CFLAGS := -std=c11 -D_GNU_SOURCE -ffp-contract=off -Iinclude $(WARN) -O1 -g $(FUZZ_SAN)
FUZZ_LIB_SRC := $(filter-out src/core/nocuda.c,$(wildcard src/core/*.c)) src/core/nocuda.c $(wildcard src/ops/*.c) \
                $(wildcard src/cpu/*.c) $(wildcard src/io/*.c) src/cli/args.c
FUZZ_LIB_OBJ := $(FUZZ_LIB_SRC:%.c=$(FUZZ_BUILD)/obj/%.o)
FUZZ_TARGETS := $(patsubst tests/fuzz/%.c,$(FUZZ_BUILD)/%,$(wildcard tests/fuzz/fuzz_*.c))

.PHONY: fuzz
fuzz: $(FUZZ_TARGETS)
# Keep the objects between builds (make would delete them as intermediates of the pattern rule).
.SECONDARY: $(FUZZ_LIB_OBJ)

$(FUZZ_BUILD)/obj/%.o: %.c $(HEADERS)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link -c $< -o $@

$(FUZZ_BUILD)/fuzz_%: tests/fuzz/fuzz_%.c tests/fuzz/fuzz_decode.h $(FUZZ_LIB_OBJ) $(HEADERS)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer -o $@ $< $(FUZZ_LIB_OBJ) -lpng -ljpeg -lz -lpthread -lm
