# tessera: `make` builds build/tessera and build/libtessera.a; `make demo`, `make test`,
# `make bench`. CUDA kernels are built when nvcc is found (CUDA=0 forces a CPU-only build).

CC      ?= cc
CXX     ?= c++
PYTHON  ?= $(shell [ -x /usr/bin/python3 ] && echo /usr/bin/python3 || echo python3)
BUILD   ?= build
OPT     ?= -O3
CFLAGS  ?= $(OPT) -g
WARN    := -Wall -Wextra -Wno-unused-parameter
ALLCFLAGS = -std=c11 -D_GNU_SOURCE -fPIC -Iinclude $(WARN) $(CFLAGS) $(EXTRA_CFLAGS)
LDLIBS  := -lpng -ljpeg -lz -lpthread -lm

NVCC    ?= $(shell command -v nvcc 2>/dev/null || ls /usr/local/cuda/bin/nvcc 2>/dev/null)
CUDA    ?= $(if $(NVCC),1,0)
CUDA_HOME ?= $(patsubst %/bin/nvcc,%,$(NVCC))
# Turing through Hopper as machine code, and PTX for newer GPUs to compile at load time.
CUDA_ARCHS ?= 75 80 86 89 90
NVFLAGS ?= -O3 -std=c++17 -Iinclude --expt-relaxed-constexpr -Xcompiler -fPIC,-Wall \
           $(foreach a,$(CUDA_ARCHS),-gencode arch=compute_$(a),code=sm_$(a)) \
           -gencode arch=compute_90,code=compute_90 $(EXTRA_NVFLAGS)

CORE_SRC := $(filter-out src/core/nocuda.c,$(wildcard src/core/*.c)) $(wildcard src/ops/*.c) \
            $(wildcard src/cpu/*.c) $(wildcard src/io/*.c)
CLI_SRC  := $(wildcard src/cli/*.c)
TEST_SRC := $(wildcard tests/*.c)
BENCH_SRC := $(wildcard bench/*.c)
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
HEADERS  := $(wildcard include/*.h src/*/*.h src/*/*.cuh)

.PHONY: all deps demo test test-fast bench clean

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
all: $(BUILD)/tessera $(BUILD)/libtessera.a

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

$(BUILD)/tessera: $(CLI_SRC:%.c=$(BUILD)/obj/%.o) $(BUILD)/libtessera.a
	$(LINK) -o $@ $^ $(LDLIBS) $(LDFLAGS)

$(BUILD)/tessera-tests: $(TEST_SRC:%.c=$(BUILD)/obj/%.o) $(BUILD)/libtessera.a
	$(LINK) -o $@ $^ $(LDLIBS) $(LDFLAGS)

$(BUILD)/tessera-bench: $(BENCH_SRC:%.c=$(BUILD)/obj/%.o) $(BUILD)/libtessera.a
	$(LINK) -o $@ $^ $(LDLIBS) $(LDFLAGS)

deps:
	@bash scripts/deps.sh test

demo: all
	@bash scripts/demo.sh

test: all $(BUILD)/tessera-tests
	@bash scripts/deps.sh test
	@PYTHON=$(PYTHON) bash tests/run.sh

bench: all $(BUILD)/tessera-bench
	@bash scripts/deps.sh test
	@PYTHON=$(PYTHON) bash bench/run.sh

clean:
	rm -rf $(BUILD) demo-out
