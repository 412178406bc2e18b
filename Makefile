# The README's two commands: `make demo` and `make test`. Both set themselves up.
PYTHON        ?= python3
VENV          ?= .venv
TORCH_VERSION ?= 2.13.0
# An older PyTorch for the cross-version tests, cached outside the repository.
OLD_TORCH     ?= 2.4.1
CACHE_HOME    ?= $(HOME)/.cache/compilegate
OLD_VENV      ?= $(CACHE_HOME)/torch-$(OLD_TORCH)
BIN           := $(VENV)/bin

.PHONY: demo test test-fast lint venv old-torch-env gpu-check bench clean

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

test: venv old-torch-env
	COMPILEGATE_OLD_PYTHON=$(OLD_VENV)/bin/python bash scripts/run-tests.sh $(BIN)/python

test-fast: venv
	bash scripts/run-tests.sh $(BIN)/python -m "not compile and not old_torch"

lint: venv
	$(BIN)/python -m ruff check runner tests bench examples

gpu-check: venv
	$(BIN)/python bench/gpu_check.py

bench: venv
	$(BIN)/python bench/overhead.py

clean:
	rm -rf $(VENV) out
