# Two commands on a fresh machine: `make demo` and `make test`.
PYTHON ?= python3
VENV   ?= .venv
BIN     = $(VENV)/bin
STAMP   = $(VENV)/.installed

.PHONY: demo test lint typecheck bench samples clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test,bench]'
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/esrp-report build samples/vmax.toml -o out

test: $(STAMP)
	bash scripts/system-packages
	$(BIN)/ruff check esrp_report esrp_synth tests benchmarks samples
	$(BIN)/ruff format --check esrp_report esrp_synth tests benchmarks samples
	$(BIN)/mypy
	$(BIN)/pytest

bench: $(STAMP)
	$(BIN)/python -m benchmarks.corpus
	$(BIN)/python -m benchmarks.run

samples: $(STAMP)
	PYTHONPATH=. $(BIN)/python samples/make_samples.py
	PYTHONPATH=. $(BIN)/python samples/make_vmax.py
	PYTHONPATH=. $(BIN)/python samples/make_trends.py
	PYTHONPATH=. $(BIN)/python samples/make_dellemc.py

clean:
	rm -rf $(VENV) out .pytest_cache .mypy_cache .ruff_cache
