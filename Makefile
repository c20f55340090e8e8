# nmfkit: the two commands a new machine needs are `make demo` and `make test`.
R ?= R
RSCRIPT ?= Rscript
PKG_FILES := DESCRIPTION NAMESPACE configure $(wildcard R/*.R) \
  $(wildcard src/*.cpp src/*.h src/Makevars.in) \
  $(wildcard inst/include/*.hpp inst/include/nmfkit/*.hpp) $(wildcard data/*)

.PHONY: all deps deps-bench deps-check deps-site install demo test check bench site \
  document clean

all: install

deps:
	@sh tools/install-deps.sh test

deps-bench:
	@sh tools/install-deps.sh bench

# Reinstalls only when a package file changed since the last install; the
# translation units compile in parallel, one per core.
.make/installed: $(PKG_FILES)
	@mkdir -p .make
	MAKEFLAGS="-j$$(nproc 2>/dev/null || echo 2)" \
	  $(R) CMD INSTALL --preclean --no-test-load . > .make/install.log 2>&1 || \
	  (tail -n 40 .make/install.log; exit 1)
	@sh ./cleanup
	@touch $@
	@echo "nmfkit installed"

install: deps .make/installed

demo: install
	$(RSCRIPT) demo/tour.R

test: install
	@sh tools/run-tests.sh

deps-check:
	@sh tools/install-deps.sh check

check: deps-check
	@mkdir -p check
	cd check && export MAKEFLAGS="-j$$(nproc 2>/dev/null || echo 2)" && \
	  $(R) CMD build --no-manual .. && \
	  _R_CHECK_FORCE_SUGGESTS_=false _R_CHECK_CRAN_INCOMING_REMOTE_=false \
	  $(R) CMD check --as-cran --no-manual \
	  nmfkit_*.tar.gz

bench: deps-bench install
	for f in bench/*.R; do echo "== $$f"; $(RSCRIPT) $$f || exit 1; done

deps-site:
	@sh tools/install-deps.sh site

# The pkgdown site in docs/ (home, reference, articles, changelog), then a
# check: broken links, missing images, R errors, and headless Chromium
# screenshots of three pages in docs/shots/.
site: deps-site install
	$(RSCRIPT) tools/site.R

# Regenerates RcppExports, NAMESPACE and man/ (developers only).
document:
	$(RSCRIPT) tools/document.R

clean:
	rm -rf .make check cpp/build* demo-output docs
	@sh ./cleanup
