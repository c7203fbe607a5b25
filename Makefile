# Two commands on a fresh machine:
#   make reproduce   install, then execute every notebook with papermill into figures/ (offline default)
#   make test        install, then run the whole test suite (unit, comparison, integration, the ONNX backend,
#                    nbval on copies of the notebooks in a temporary directory: figures/ and runs/ are left alone)
#   make docs        the documentation site into site/ (docs/ plus the executed notebooks of figures/)
# and for the edit-test loop:
#   make check       the fast tier: every module's unit and comparison tests, neither `slow` (notebooks, kernels,
#                    the local model server, end-to-end reproduce, Ray, ONNX export, wheel) nor `integration`
#                    (commands, study runs and reports end to end; processes and endpoints acting on each other)
#   make check-integration   the `integration` tests that are not `slow`; see tests/README.md
# both on every core (pytest-xdist; JOBS=1 for one worker, JOBS=0 for no xdist), printing their slowest tests
VENV   ?= .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.install-stamp
PARAMS ?= params/offline.yaml
export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1
# llama.cpp (the local model's server) is compiled for named x86-64 instruction sets, not with -march=native: a
# native build may use AMX tiles, which crash in virtual machines that do not grant them. AVX2/FMA always; AVX-512
# (F/BW/VL, with VNNI, BF16 and VBMI where listed) only when this machine's /proc/cpuinfo lists it: on a 2-core
# AMD EPYC (Zen 4) it cut a 3,000-token prompt of the local model from 8.8 s to 7.5-7.8 s
# (benchmarks/bench_local_model.py). Float sums then run in another order, so a greedy reply of the local model can
# differ in a token between machines with and without AVX-512. The wheel is built once per flag set into a
# wheelhouse outside the checkout and reused.
CPUFLAGS    := $(shell grep -m1 '^flags' /proc/cpuinfo 2>/dev/null)
AVX512      := $(if $(and $(filter avx512f,$(CPUFLAGS)),$(filter avx512bw,$(CPUFLAGS)),$(filter avx512vl,$(CPUFLAGS))),-DGGML_AVX512=ON $(if $(filter avx512_vnni,$(CPUFLAGS)),-DGGML_AVX512_VNNI=ON) $(if $(filter avx512_bf16,$(CPUFLAGS)),-DGGML_AVX512_BF16=ON) $(if $(filter avx512vbmi,$(CPUFLAGS)),-DGGML_AVX512_VBMI=ON))
LLAMA_CMAKE ?= -DLLAVA_BUILD=OFF -DGGML_NATIVE=OFF $(if $(filter x86_64,$(shell uname -m)),-DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON $(AVX512))
LLAMA_PIN   := llama-cpp-python==0.3.36
WHEELHOUSE  ?= $(HOME)/.cache/lcrag/wheels/$(shell printf '%s %s' '$(LLAMA_PIN)' '$(LLAMA_CMAKE)' | sha1sum | cut -c1-12)

.PHONY: install reproduce test check check-integration tier browser bench bench-tests clean docs

$(PY):
	python3 -m venv $(VENV)

$(STAMP): pyproject.toml | $(PY)
	$(PY) -m pip install --quiet --upgrade pip
	@ls $(WHEELHOUSE)/llama_cpp_python-*.whl >/dev/null 2>&1 || { \
	  echo "building llama-cpp-python for $(shell uname -m) ($(LLAMA_CMAKE)); a few minutes on 2 cores"; \
	  CMAKE_ARGS="$(LLAMA_CMAKE)" $(PY) -m pip wheel --quiet --no-deps --no-cache-dir -w $(WHEELHOUSE) '$(LLAMA_PIN)'; }
	$(PY) -m pip install --quiet --find-links $(WHEELHOUSE) -e '.[notebooks,test,llm,metrics,ray,faiss,onnx,docs]'
	$(PY) -m ipykernel install --sys-prefix --name python3 --display-name "Python 3 (lcrag)" >/dev/null
	$(PY) -c "from lcrag.llm.server import default_model; default_model()"  # the local model's F32 copy, once per machine (~5 s)
	touch $(STAMP)

install: $(STAMP)

reproduce: install
	$(VENV)/bin/lcrag reproduce --params $(PARAMS)
	$(PY) scripts/headline_figures.py figures docs/img

# the documentation site, offline, into site/ (not tracked): docs/ and the executed notebooks of figures/ when
# `make reproduce` wrote them (docs/docs_site.md)
docs: install
	$(VENV)/bin/mkdocs build --quiet --strict --site-dir site

# Both tiers run on every core with pytest-xdist (JOBS workers, `--dist loadgroup`: the groups in tests/conftest.py
# keep the local model server, signal and run-lock tests and each notebook's cells in one worker); the controller
# checks at the end that no test wrote into the checkout. JOBS=0 runs in one process (the repository check is then
# the last test). Both print their slowest tests and pytest's wall time.
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
XDIST = $(if $(filter 0,$(JOBS)),-p no:xdist,-n $(JOBS) --dist loadgroup)
# pytest's rewritten test modules and lcrag's bytecode are kept in PYCACHE, outside the checkout, also where the
# environment sets PYTHONDONTWRITEBYTECODE: otherwise every pytest-xdist worker rewrites the asserts of every test
# module and compiles lcrag again on every run (collection: 14 s -> 6 s a worker). PYCACHE= leaves the environment alone.
PYCACHE ?= $(HOME)/.cache/lcrag/pycache
PYENV = $(if $(PYCACHE),env -u PYTHONDONTWRITEBYTECODE PYTHONPYCACHEPREFIX=$(PYCACHE))

# nbval executes copies of the notebooks in a temporary directory, so their default outputs
# (../figures, ../runs) land there and never overwrite what `make reproduce` wrote. The run's fresh cache starts
# with the local MiniLM vectors of earlier runs (TEST_EMBEDDINGS, outside the checkout; scripts/embedding_store.py),
# and its own are kept there at the end: the notebooks' haystacks are not embedded again on every run. A cache of
# your own (LCRAG_CACHE_DIR set) is used as it is.
TEST_EMBEDDINGS ?= $(HOME)/.cache/lcrag/test-embeddings.sqlite
test: install browser
	@tmp=$$(mktemp -d) && cp -R notebooks "$$tmp/notebooks" && cache="$${LCRAG_CACHE_DIR:-$$tmp/cache}" && \
	{ [ -n "$$LCRAG_CACHE_DIR" ] || $(PY) scripts/embedding_store.py seed "$(TEST_EMBEDDINGS)" "$$cache"; } && t0=$$(date +%s) && \
	LCRAG_CACHE_DIR="$$cache" $(PYENV) $(PY) -m pytest tests "$$tmp/notebooks" --nbval --nbval-sanitize-with tests/nbval_sanitize.cfg -p no:cacheprovider \
	  --rootdir=. -c pyproject.toml $(XDIST) --durations=30; rc=$$?; \
	echo "make test: pytest took $$(( $$(date +%s) - t0 )) s ($(JOBS) workers), exit $$rc"; \
	[ -n "$$LCRAG_CACHE_DIR" ] || $(PY) scripts/embedding_store.py save "$$cache" "$(TEST_EMBEDDINGS)"; rm -rf "$$tmp"; exit $$rc

# the fast tier for the edit-test loop: every module's unit and comparison tests, neither `slow` nor `integration`
# (tests/README.md); aim: 90 s of pytest on 2 cores. `make check-integration` runs the integration tests that are not
# slow (before a merge; `make test` runs everything). Both start their fresh cache with the kept local MiniLM vectors
# (TEST_EMBEDDINGS, as `make test`), and keep their own.
check: install
	@$(MAKE) --no-print-directory tier TIER="not slow and not integration" NAME="fast tier" DURATIONS=15

check-integration: install
	@$(MAKE) --no-print-directory tier TIER="integration and not slow" NAME="integration tier" DURATIONS=30

tier:
	@tmp=$$(mktemp -d) && cache="$${LCRAG_CACHE_DIR:-$$tmp/cache}" && \
	{ [ -n "$$LCRAG_CACHE_DIR" ] || $(PY) scripts/embedding_store.py seed "$(TEST_EMBEDDINGS)" "$$cache"; } && t0=$$(date +%s) && \
	LCRAG_CACHE_DIR="$$cache" $(PYENV) $(PY) -m pytest tests -m "$(TIER)" -q \
	  -p no:cacheprovider --rootdir=. -c pyproject.toml $(XDIST) --durations=$(DURATIONS); rc=$$?; \
	echo "make: the $(NAME) took $$(( $$(date +%s) - t0 )) s of pytest ($(JOBS) workers), exit $$rc"; \
	[ -n "$$LCRAG_CACHE_DIR" ] || $(PY) scripts/embedding_store.py save "$$cache" "$(TEST_EMBEDDINGS)"; rm -rf "$$tmp"; exit $$rc

# headless Chromium for the test that opens the HTML report (Debian's package; skipped with a reason elsewhere)
browser:
	@command -v chromium >/dev/null 2>&1 || { if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	  echo "installing Debian's chromium (HTML report test)"; apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; \
	  else echo "chromium not found: the HTML report's browser test will be skipped"; fi; }

bench: install
	$(PY) benchmarks/run_all.py

# both test tiers timed on a clean clone of HEAD (sharing this venv); the figures go into docs/benchmarks.md
bench-tests: install
	$(PY) benchmarks/bench_tests.py

clean:
	rm -rf figures/*.png figures/*.pdf figures/*.csv figures/*.md figures/*.tex figures/*.ipynb figures/index.html runs .lcrag-cache
