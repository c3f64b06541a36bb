# gacc: `make run` (set-up, build, train the MLP on Fashion-MNIST) and
# `make test` (set-up, build, every test).
BUILD ?= build
LLVM_DIR ?= /usr/lib/llvm-22
EPOCHS ?= 3
JOBS ?= $(shell nproc)

.PHONY: all setup build run test docs clean

all: build

setup:
	@bash scripts/setup.sh

$(BUILD)/build.ninja:
	cmake -G Ninja -S . -B $(BUILD) \
	  -DCMAKE_BUILD_TYPE=Release \
	  -DMLIR_DIR=$(LLVM_DIR)/lib/cmake/mlir \
	  -DLLVM_EXTERNAL_LIT=$(LLVM_DIR)/bin/lit

build: setup $(BUILD)/build.ninja
	ninja -C $(BUILD) -j $(JOBS)

run: build
	$(BUILD)/bin/gacc-run examples/fashion_mlp.mlir --epochs $(EPOCHS) \
	  --metrics $(BUILD)/fashion_mlp.metrics.jsonl

test: build
	bash scripts/run-tests.sh $(BUILD)

docs: build
	ninja -C $(BUILD) gacc-doc

clean:
	rm -rf $(BUILD)
