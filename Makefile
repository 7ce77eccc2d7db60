# Makefile for the "Why √d_k" site, in the sphinx-quickstart tradition.
#
# A fresh machine needs only Python 3.11+ and make: the first target that
# needs tools creates .venv and installs them from constraints.txt.

PYTHON     ?= python3
VENV       ?= .venv
BIN        := $(VENV)/bin
SOURCEDIR  := docs
BUILDDIR   := _build
BOOK       := $(BUILDDIR)/pdf/why-sqrt-dk.pdf
STUDENT_BOOK := $(BUILDDIR)/pdf/why-sqrt-dk-student.pdf
# make serve PORT=8001 when 8000 is taken.
PORT       ?= 8000
# make bench REPEAT=1 measures each case once instead of taking a median of 3;
# BENCH_ARGS="--no-check" skips make check,
# BENCH_ARGS="--html _build/html" measures the pages of a built site only,
# BENCH_ARGS="--loads 1" loads each derivation page once per browser profile (default 5).
REPEAT     ?= 3
BENCH_ARGS ?=
# Strict: warnings are errors (all of them reported), nitpicky references.
SPHINXOPTS ?= -W --keep-going -n
SPHINXBUILD = $(BIN)/sphinx-build -c . $(SPHINXOPTS)
# Processes for the doctests, make check and make test (pytest-xdist): "auto"
# is one per CPU. The tests go out by whole files (--dist loadfile), so that a
# module fixture is computed once; the tests that read make test's two shared
# builds are in one file (tests/conftest.py checks it), so that each is built once.
# Not --dist loadgroup: with pytest 9.2 and xdist 3.8 its xdist_group marks are
# silently ignored and every test goes out alone (pytest-xdist issue 1386), so
# each worker would build the shared builds for itself.
TEST_JOBS ?= auto
# Extra pytest arguments for check and test: make check PYTEST_ARGS="-x -k softmax".
PYTEST_ARGS ?=
PIP_INSTALL = $(BIN)/python -m pip install --progress-bar off --disable-pip-version-check -c constraints.txt
PACKAGE_SOURCES := $(shell find src -name '*.py')
# Matplotlib's font cache lists absolute paths into the environment that wrote
# it; a cache shared across environments (the default, ~/.cache/matplotlib)
# goes stale when one is deleted, and figures silently change font. Each
# environment keeps its own.
export MPLCONFIGDIR := $(abspath $(VENV))/matplotlib
# Python keeps compiled modules (and pytest its assertion-rewritten tests) in
# __pycache__ unless told not to; a machine that sets PYTHONDONTWRITEBYTECODE
# makes each test process rewrite every test module again (about 6 s of the
# 11 s that collecting make check's tests took on the 2-core machine).
unexport PYTHONDONTWRITEBYTECODE

.DEFAULT_GOAL := help
.PHONY: help html pdf check test torch doctest linkcheck livehtml serve bench page lock clean FORCE

help:
	@echo "Targets:"
	@echo "  html       build the site into $(BUILDDIR)/html (the package's doctests run first)"
	@echo "  pdf        the whole site as one book, $(BOOK), and the student's edition without the"
	@echo "             solutions, $(STUDENT_BOOK); both also into $(BUILDDIR)/html/book/, where the site"
	@echo "             links them (builds the site first; needs Chromium)"
	@echo "  check      the edit loop: unit and Hypothesis tests and the doctests; no Sphinx build"
	@echo "             and no test marked slow (PYTEST_ARGS=\"-x -k NAME\" narrows it)"
	@echo "  test       everything: check, plus full builds of the site in temporary copies and"
	@echo "             the tests of the built site (run make html first: its cache seeds the copies);"
	@echo "             installs axe-core for the browser tests with npm (Node.js) the first time"
	@echo "  torch      install PyTorch (CPU), transformers and JAX, so that the PyTorch cross-check and the"
	@echo "             released-models ledger checks run"
	@echo "  doctest    run the examples in the package's docstrings"
	@echo "  linkcheck  check every link; external ones only with ONLINE=1"
	@echo "  serve      serve the built site on http://127.0.0.1:$(PORT) (PORT=... to change)"
	@echo "  livehtml   serve the site and rebuild it on every change"
	@echo "  bench      each target of issue 17 with its value and a verdict: cold build / render floor,"
	@echo "             no-op rebuild, prove, make check (make test with BENCH_ARGS=--make-test), derivation"
	@echo "             pages' weight, layout shift (desktop, mobile) and blocking time (mobile) in Chromium,"
	@echo "             Lighthouse's mobile score and blocking time (needs Node.js and npm);"
	@echo "             also incremental builds and page execution (in a temporary copy; REPEAT=$(REPEAT) runs"
	@echo "             each, BENCH_ARGS=... more options; writes $(BUILDDIR)/bench/bench.json)"
	@echo "  page       a new chapter: make page NAME=my-chapter TITLE=\"My chapter\" writes its page,"
	@echo "             support module and tests, and appends it to the contents (see Contributing)"
	@echo "  lock       re-resolve the dependencies and rewrite constraints.txt"
	@echo "  clean      remove $(BUILDDIR) (the virtual environment stays)"

# -- Environment ---------------------------------------------------------------
# A stamp file per extra; it is older than the lock or pyproject.toml when
# either changed, and then the install runs again.

$(BIN)/python:
	@echo "==> Creating $(VENV) with $(PYTHON)"
	$(PYTHON) -m venv $(VENV)

$(VENV)/.docs-installed: constraints.txt pyproject.toml | $(BIN)/python
	@echo "==> Installing attention-scaling[docs] into $(VENV), pinned by constraints.txt"
	$(PIP_INSTALL) pip setuptools wheel
	$(PIP_INSTALL) --no-build-isolation -e '.[docs]'
	@touch $@

$(VENV)/.test-installed: $(VENV)/.docs-installed
	@echo "==> Installing attention-scaling[test] into $(VENV), pinned by constraints.txt"
	$(PIP_INSTALL) --no-build-isolation -e '.[docs,test]'
	@touch $@

# Optional: without it tests/test_pytorch.py and tests/test_released_models.py skip, saying why.
$(VENV)/.torch-installed: $(VENV)/.test-installed
	@echo "==> Installing attention-scaling[torch] into $(VENV), pinned by constraints.txt"
	$(PIP_INSTALL) --no-build-isolation -e '.[docs,test,torch]'
	@touch $@

torch: $(VENV)/.torch-installed

# axe-core, the accessibility checker that tests/test_browser.py injects into
# each page, comes from npm (4.14 checks colour contrast about five times
# faster than the 4.12 that PyPI's packages ship), pinned with its integrity
# hash by tests/axe/package-lock.json and installed into $(VENV)/axe with npm ci.
AXE_HOME := $(VENV)/axe
AXE_JS   := $(abspath $(AXE_HOME))/node_modules/axe-core/axe.min.js

$(AXE_HOME)/.installed: tests/axe/package.json tests/axe/package-lock.json
	@command -v npm >/dev/null || { echo "make test needs npm, to install axe-core for the browser tests (Debian: apt-get install nodejs npm)" >&2; exit 1; }
	@echo "==> Installing axe-core into $(AXE_HOME), pinned by tests/axe/package-lock.json"
	@rm -rf $(AXE_HOME) && mkdir -p $(AXE_HOME) && cp tests/axe/package.json tests/axe/package-lock.json $(AXE_HOME)/
	cd $(AXE_HOME) && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error
	@touch $@

# `make pdf` prints the site with the system Chromium and binds it with pypdf.
$(VENV)/.pdf-installed: $(VENV)/.docs-installed
	@echo "==> Installing attention-scaling[pdf] into $(VENV), pinned by constraints.txt"
	$(PIP_INSTALL) --no-build-isolation -e '.[docs,pdf]'
	@touch $@

# -- Build -----------------------------------------------------------------------

# The doctests run again only when the package changes, on every core. pytest's --doctest-modules
# never collects a __main__.py: the test that runs its examples is named beside them, and
# tests/conftest.py is not loaded (it needs the test extra, which make html does not install).
MAIN_EXAMPLES := tests/test_cli.py::test_the_examples_of_the_command_line_hold
# A value in single quotes for the shell, whatever quotes it holds itself.
shell_quote     = '$(subst ','\'',$(1))'
# The target takes what the recipe wrote to $@.new only if it differs, so that
# its date (and what depends on it) moves only when its content changes.
keep_if_unchanged = if cmp -s $@.new $@; then rm $@.new; else mv $@.new $@; fi

# The list of the package's files, rewritten only when it changes: a deleted
# module runs the doctests again, although every other file is older than the stamp.
PACKAGE_LIST := $(BUILDDIR)/package.files
$(PACKAGE_LIST): FORCE
	@mkdir -p $(BUILDDIR)
	@echo $(call shell_quote,$(sort $(PACKAGE_SOURCES))) > $@.new
	@$(keep_if_unchanged)

$(BUILDDIR)/doctest.passed: $(VENV)/.docs-installed $(PACKAGE_SOURCES) $(PACKAGE_LIST)
	@echo "==> Running the package's doctests"
	$(BIN)/python -m pytest --doctest-modules src $(MAIN_EXAMPLES) --noconftest -q -p no:cacheprovider -n $(TEST_JOBS) $(DOCTEST_ARGS)
	@mkdir -p $(BUILDDIR) && touch $@

doctest: $(BUILDDIR)/doctest.passed
	@echo "==> The doctests passed on these sources ($(BUILDDIR)/doctest.passed)"

# The wheel the site publishes in dist/: a downloaded notebook installs it when
# the package is missing (docs/_ext/notebooks.py), on Colab or Binder with no
# release on the package index. It is built from a copy of the package's files,
# since setuptools writes egg-info and a build tree where it builds, and with
# the last commit's date in its entries, so that one commit gives the same bytes.
WHEEL_DIR   := $(BUILDDIR)/wheel
WHEEL_STAMP := $(WHEEL_DIR)/.built
$(WHEEL_STAMP): $(PACKAGE_SOURCES) $(PACKAGE_LIST) pyproject.toml setup.py README.md LICENSE $(VENV)/.docs-installed
	@echo "==> Building the package's wheel, which the site publishes"
	@rm -rf $(WHEEL_DIR) && mkdir -p $(WHEEL_DIR)/copy
	tar cf - --exclude=__pycache__ --exclude='*.egg-info' src pyproject.toml setup.py README.md LICENSE | tar xf - -C $(WHEEL_DIR)/copy
	SOURCE_DATE_EPOCH=$$(git log -1 --format=%ct 2>/dev/null || echo 315532800) $(BIN)/python -m pip wheel --no-deps \
	  --no-build-isolation --disable-pip-version-check --quiet --wheel-dir $(WHEEL_DIR)/dist $(WHEEL_DIR)/copy
	@rm -rf $(WHEEL_DIR)/copy
	@touch $@

# The site is built again when a file it is built from is newer than the last
# build that succeeded, or when the settings file below changed: make's own
# up-to-date check, so that a no-op `make html` does not even start Sphinx
# (which takes seconds to load). Sphinx's environment then decides which pages
# to read again, and the execution cache which of those to execute.
HTML_BUILD   = $(SPHINXBUILD) -b html -d $(BUILDDIR)/doctrees $(SOURCEDIR) $(BUILDDIR)/html
SITE_SOURCES := conf.py constraints.txt pyproject.toml \
                $(shell find $(SOURCEDIR) src -type f -not -path '*/__pycache__/*' -not -path '*.egg-info/*')
# What else the pages show: the variables conf.py and docs/_ext read (the site's
# URL, the repository and release that hosting and launch links name, the cell
# timeout; PYTHONPATH decides which attention_scaling the pages import), the
# commit the footer names and this command. The file is rewritten only when one changes.
SITE_VARIABLES := SITE_URL READTHEDOCS_CANONICAL_URL READTHEDOCS_GIT_CLONE_URL READTHEDOCS_VERSION_TYPE \
                  GITHUB_REPOSITORY GITHUB_SERVER_URL GITHUB_REF_TYPE NB_TIMEOUT PYTHONPATH
SITE_SETTINGS  := $(BUILDDIR)/html.settings
HTML_STAMP     := $(BUILDDIR)/html.built

# The list of source files is in it too: a deleted or renamed file leaves
# every other one older than the stamp, and must still build the site again.
$(SITE_SETTINGS): FORCE
	@mkdir -p $(BUILDDIR)
	@{ echo $(call shell_quote,$(HTML_BUILD)); git rev-parse HEAD 2>/dev/null || true; \
	  $(foreach variable,$(SITE_VARIABLES),echo $(call shell_quote,$(variable)=$($(variable)));) \
	  echo $(call shell_quote,$(sort $(SITE_SOURCES))); } > $@.new
	@$(keep_if_unchanged)

# Sphinx reports a page's warnings when it writes the page, and a failed build
# has written it all the same: the next build would find that page current,
# say nothing and pass. So a failed build drops Sphinx's environment, and the
# next one reads every page again (their outputs come from the execution
# cache) and reports the same problems until they are mended.
SPHINX_ENVIRONMENT = $(BUILDDIR)/doctrees/environment.pickle

# Sphinx rewrites only the pages whose sources changed, and cannot tell that an
# extension's code did: after an edit under docs/_ext/ every page is read again
# (-E; outputs from the execution cache, 25 s), or the pages would keep what the
# old code made.
$(HTML_STAMP): $(SITE_SOURCES) $(SITE_SETTINGS) $(VENV)/.docs-installed $(BUILDDIR)/doctest.passed $(WHEEL_STAMP)
	@echo "==> Building the site (each page the execution cache lacks is executed)"
	@rm -f $@
	$(HTML_BUILD) $(if $(filter $(SOURCEDIR)/_ext/%,$?),-E) || { status=$$?; rm -f $(SPHINX_ENVIRONMENT); exit $$status; }
	@rm -rf $(BUILDDIR)/html/dist && mkdir -p $(BUILDDIR)/html/dist && cp $(WHEEL_DIR)/dist/*.whl $(BUILDDIR)/html/dist/
	@touch $@

html: $(HTML_STAMP)
	@echo "==> $(BUILDDIR)/html is up to date with what it is built from: open $(BUILDDIR)/html/index.html"

# The book is the built site as printed (tools/print_book.py says how), so the
# site is brought up to date first. The home and Cite pages link both editions
# at book/ in the site, where the hosted builds publish them; the copies make
# those links work on a local site too (make serve).
pdf: html $(VENV)/.pdf-installed
	@echo "==> Printing the site into $(BOOK) and $(STUDENT_BOOK)"
	$(BIN)/python tools/print_book.py --html $(BUILDDIR)/html --output $(BOOK) --student-output $(STUDENT_BOOK)
	@mkdir -p $(BUILDDIR)/html/book && cp $(BOOK) $(STUDENT_BOOK) $(BUILDDIR)/html/book/

# Both run the doctests of src/ as well (testpaths and --doctest-modules in
# pyproject.toml). check leaves out what needs Sphinx, the tests marked build
# (temporary copies built with make html) and site (the built _build/html),
# and the few marked slow (tests/conftest.py says which and why).
check: $(VENV)/.test-installed
	$(BIN)/python -m pytest -n $(TEST_JOBS) --dist loadfile -m "not build and not site and not slow" $(PYTEST_ARGS)

# Only make test names axe-core (make check leaves the browser tests out, and need not install it).
# axe-core is installed, with npm, only where Chromium is there to run the browser tests; without
# Chromium they are skipped, saying what to install, and npm is not needed.
CHROMIUM := $(shell command -v chromium 2>/dev/null)
test: $(VENV)/.test-installed $(if $(CHROMIUM),$(AXE_HOME)/.installed)
	$(if $(CHROMIUM),AXE_JS="$(AXE_JS)") $(BIN)/python -m pytest -n $(TEST_JOBS) --dist loadfile $(PYTEST_ARGS)

# External links cannot be reached offline, so by default they are listed as
# "ignored" in the report instead of failing; ONLINE=1 checks them too.
linkcheck: $(VENV)/.docs-installed
	$(SPHINXBUILD) -b linkcheck $(if $(ONLINE),,-D 'linkcheck_ignore=https?://.*') $(SOURCEDIR) $(BUILDDIR)/linkcheck

livehtml: $(VENV)/.docs-installed
	$(BIN)/sphinx-autobuild -c . $(SPHINXOPTS) -d $(BUILDDIR)/doctrees --watch src $(SOURCEDIR) $(BUILDDIR)/html

# Serves what the last `make html` built, as a host would; it does not build.
# Bound to 127.0.0.1 so that the site is not offered to the network.
serve:
	@test -f $(BUILDDIR)/html/index.html || { echo "No site in $(BUILDDIR)/html: run make html first"; exit 1; }
	@echo "==> Serving $(BUILDDIR)/html on http://127.0.0.1:$(PORT) (Ctrl-C stops)"
	$(PYTHON) -m http.server $(PORT) --bind 127.0.0.1 --directory $(BUILDDIR)/html

# Builds a temporary copy of the repository again and again (the user's
# $(BUILDDIR) is left alone, but for the report it writes); see benchmarks/bench.py.
# The test extra: it times make check and measures the pages with Playwright.
bench: $(VENV)/.test-installed
	$(BIN)/python benchmarks/bench.py --repeat $(REPEAT) --venv $(abspath $(VENV)) --output $(BUILDDIR)/bench/bench.json $(BENCH_ARGS)

# make page NAME=my-chapter TITLE="My chapter". Standard library only: it runs
# before anything is installed. NAME and TITLE count only when given on the
# command line (some systems set NAME in the environment), unexpanded, and
# quoted for the shell, so that a title reaches the script as typed.
page_argument = $(call shell_quote,$(if $(filter command line,$(origin $(1))),$(value $(1))))
page:
	@$(PYTHON) tools/new_page.py $(call page_argument,NAME) $(call page_argument,TITLE)

# Resolve the newest versions allowed by pyproject.toml in a scratch
# environment and pin all of them (the project itself excluded). A local
# version label is dropped: the machine's torch wheel is 2.13.0+cpu, and a pin
# ==2.13.0+cpu matches no release on PyPI, while ==2.13.0 matches both (PEP 440).
# Run it with the oldest Python the project supports (Contributing, Dependencies).
lock:
	rm -rf $(BUILDDIR)/lock-venv
	$(PYTHON) -m venv $(BUILDDIR)/lock-venv
	$(BUILDDIR)/lock-venv/bin/python -m pip install --progress-bar off --upgrade pip setuptools wheel
	$(BUILDDIR)/lock-venv/bin/python -m pip install --progress-bar off -e '.[docs,test,torch]'
	@{ echo "# Pins every package that make html and make test install. Regenerate with: make lock"; \
	  $(BUILDDIR)/lock-venv/bin/python -m pip freeze --all --exclude-editable | sed -E 's/\+[A-Za-z0-9.]+$$//' | LC_ALL=C sort -f; } > constraints.txt
	rm -rf $(BUILDDIR)/lock-venv
	@echo "==> Wrote constraints.txt"

clean:
	rm -rf $(BUILDDIR)
