# Thin wrapper over CMake so the two everyday commands are one word each:
#   make bench   builds and runs the benchmark (GPU if present, else CPU backend)
#   make test    builds and runs every test, C and Python (GPU tests report skipped
#                without a GPU)
BUILD ?= build
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
CMAKE_ARGS ?=
BENCH_ARGS ?= --kernel all
PREFIX ?= /usr/local
PYTHON ?= python3
VENV = $(BUILD)/venv

.PHONY: build bench test python-test sanitize-test install gpu-check clean

build:
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release $(CMAKE_ARGS)
	cmake --build $(BUILD) -j $(JOBS)

bench: build
	$(BUILD)/tools/esmm bench $(BENCH_ARGS)

test: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)
	$(MAKE) python-test
	$(MAKE) sanitize-test

# The Python package, installed with pip from this tree (it builds libesmm
# again, in $(BUILD)/wheel, through scikit-build-core) into a venv, and its
# tests; the GPU ones skip without a GPU, PyTorch or CuPy.
python-test:
	$(PYTHON) -m venv $(VENV)
	$(VENV)/bin/pip install -q --config-settings=build-dir=$(BUILD)/wheel '.[test]'
	$(VENV)/bin/python -m pytest -q python/tests

# The host code and the tests again, built with AddressSanitizer (and its
# LeakSanitizer) and UBSan, in $(BUILD)-asan; any report fails the test. The
# installed-package and fuzz tests are left to the plain build. Allocations
# too large to satisfy must come back NULL (the library reports them), not
# abort.
SANITIZE = -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
sanitize-test:
	cmake -S . -B $(BUILD)-asan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_C_FLAGS="$(SANITIZE)" \
	  -DCMAKE_EXE_LINKER_FLAGS="$(SANITIZE)" -DCMAKE_SHARED_LINKER_FLAGS="$(SANITIZE)" $(CMAKE_ARGS)
	cmake --build $(BUILD)-asan -j $(JOBS)
	cd $(BUILD)-asan && ASAN_OPTIONS=allocator_may_return_null=1:detect_leaks=1 \
	  UBSAN_OPTIONS=print_stacktrace=1 ctest --output-on-failure -j $(JOBS) -E "install_consumer|fuzz_"

install: build
	cmake --install $(BUILD) --prefix $(PREFIX)

# Build, full test suite and the ladder benchmark on a GPU machine; logs and
# JSON go to $$OUT (default: gpu-check-out/).
gpu-check:
	scripts/gpu-check.sh

clean:
	rm -rf $(BUILD)
