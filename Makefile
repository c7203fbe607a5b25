# Two commands on a fresh machine:
#   make reproduce   install, then execute every notebook with papermill into figures/ (offline default)
#   make test        install, then run the test suite (unit, comparison, integration, nbval on copies of
#                    the notebooks in a temporary directory: figures/ and runs/ are left alone)
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
	$(PY) -m pip install --quiet -e '.[notebooks,test,llm,metrics,ray,faiss]'
	$(PY) -m ipykernel install --sys-prefix --name python3 --display-name "Python 3 (lcrag)" >/dev/null
	touch $(STAMP)

install: $(STAMP)

reproduce: install
	$(VENV)/bin/lcrag reproduce --params $(PARAMS)

# nbval executes copies of the notebooks in a temporary directory, so their default outputs
# (../figures, ../runs) land there and never overwrite what `make reproduce` wrote.
test: install
	@tmp=$$(mktemp -d) && cp -R notebooks "$$tmp/notebooks" && \
	$(PY) -m pytest tests "$$tmp/notebooks" --nbval --nbval-sanitize-with tests/nbval_sanitize.cfg -p no:cacheprovider \
	  --rootdir=. -c pyproject.toml; rc=$$?; rm -rf "$$tmp"; exit $$rc

bench: install
	$(PY) benchmarks/run_all.py

clean:
	rm -rf figures/*.png figures/*.pdf figures/*.csv figures/*.md figures/*.tex figures/*.ipynb runs .lcrag-cache
