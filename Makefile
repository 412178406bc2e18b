# The README's two commands: `make demo` and `make test`. Both set themselves up.
PYTHON        ?= python3
VENV          ?= .venv
TORCH_VERSION ?= 2.13.0
# An older PyTorch for the cross-version tests, cached outside the repository.
OLD_TORCH     ?= 2.4.1
CACHE_HOME    ?= $(HOME)/.cache/compilegate
OLD_VENV      ?= $(CACHE_HOME)/torch-$(OLD_TORCH)
BIN           := $(VENV)/bin
# The container tests: a Docker engine and a locally made base image (scripts/docker-setup.sh).
# REQUIRE_DOCKER=1 turns "no engine" from a loud skip into a failure (CI sets it);
# SECOND_TORCH adds a second real version to the matrix test (a 6 GB CUDA image).
REQUIRE_DOCKER ?= 0
SECOND_TORCH  ?=
# The browser tests of the PR comment need Chromium and Mermaid's bundle (scripts/browser-setup.sh
# installs both); REQUIRE_BROWSER=1 turns "not there" from a loud skip into a failure (CI sets it).
REQUIRE_BROWSER ?= 0
# LANES=2: the container tests in a pytest process of their own beside the rest (scripts/run-tests.sh).
LANES ?= 1

.PHONY: demo test test-fast lint docs venv old-torch-env docker-env browser-env gpu-check bench clean

venv: $(VENV)/.installed

# --system-site-packages: use the host's torch when it has one (a GPU host's CUDA build);
# otherwise install the pinned CPU-capable torch.
$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv --system-site-packages $(VENV)
	$(BIN)/python -c "import torch" 2>/dev/null || $(BIN)/pip install -q "torch==$(TORCH_VERSION)"
	$(BIN)/pip install -q -e ".[test]"
	touch $@

demo: venv
	$(BIN)/compilegate run --config examples/compilegate.yml --out out/demo-result.json

old-torch-env: $(OLD_VENV)/.installed

$(OLD_VENV)/.installed:
	$(PYTHON) -m venv $(OLD_VENV)
	$(OLD_VENV)/bin/pip install -q "torch==$(OLD_TORCH)" "numpy<2"
	touch $@

# Without root or a Docker engine the container tests skip, loudly, unless REQUIRE_DOCKER=1.
docker-env:
	bash scripts/docker-setup.sh || [ "$(REQUIRE_DOCKER)" != "1" ]

browser-env:
	bash scripts/browser-setup.sh || [ "$(REQUIRE_BROWSER)" != "1" ]

# --durations=40: the log ends with the 40 slowest tests, where CI's time goes.
test: venv old-torch-env docker-env browser-env
	COMPILEGATE_OLD_PYTHON=$(OLD_VENV)/bin/python \
	COMPILEGATE_REQUIRE_DOCKER=$(REQUIRE_DOCKER) \
	REQUIRE_BROWSER=$(REQUIRE_BROWSER) \
	COMPILEGATE_DOCKER_SECOND_TORCH=$(SECOND_TORCH) \
	TEST_LANES=$(LANES) \
	bash scripts/run-tests.sh $(BIN)/python --durations=40

# The fast loop: tests/unit, where no test starts a process (tests/unit/conftest.py refuses one)
# or compiles; CONTRIBUTING.md gives its measured time. `make test` runs everything.
test-fast: venv
	bash scripts/run-tests.sh $(BIN)/python tests/unit -m "not compile and not old_torch and not docker"

# The docs in docs/ (mkdocs.yml): the generated reference pages must be current, and a broken
# link, a missing anchor or a link mkdocs cannot resolve fails the build (strict).
docs: venv
	$(BIN)/python scripts/gen_reference.py --check
	$(BIN)/python -m mkdocs build --strict

# ruff, then mypy: strict, zero errors ([tool.mypy] in pyproject.toml). CI runs it (.ci/run).
lint: venv
	$(BIN)/python -m ruff check runner tests bench examples
	$(BIN)/python -m mypy

gpu-check: venv
	$(BIN)/python bench/gpu_check.py

bench: venv
	$(BIN)/python bench/overhead.py

clean:
	rm -rf $(VENV) out
