# Two commands on a fresh machine:
#   make reproduce   install, then execute every notebook with papermill into figures/ (offline default)
#   make test        install, then run the test suite (unit, comparison, integration, nbval)
VENV   ?= .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.install-stamp
PARAMS ?= params/offline.yaml
export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1
export CMAKE_ARGS ?= -DLLAVA_BUILD=OFF

.PHONY: install reproduce test bench clean

$(PY):
	python3 -m venv $(VENV)

$(STAMP): pyproject.toml | $(PY)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[notebooks,test,llm,metrics]'
	$(PY) -m ipykernel install --sys-prefix --name python3 --display-name "Python 3 (lcrag)" >/dev/null
	touch $(STAMP)

install: $(STAMP)

reproduce: install
	$(VENV)/bin/lcrag reproduce --params $(PARAMS)

test: install
	$(PY) -m pytest tests notebooks --nbval --nbval-sanitize-with tests/nbval_sanitize.cfg -p no:cacheprovider

bench: install
	$(PY) -m pip install --quiet -e '.[onnx]'  # the opt-in int8 embedding backend is benchmarked too
	$(PY) benchmarks/run_all.py

clean:
	rm -rf figures/*.png figures/*.pdf figures/*.csv figures/*.md figures/*.tex figures/*.ipynb runs .lcrag-cache
