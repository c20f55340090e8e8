# The combination matrix (issue 35; ARCHITECTURE.md, "The combination
# matrix"): loss x source x weighting x verb. Every cell gives the answer of
# the same data as a dense matrix in memory (same method, same start: equal
# to 1e-10 relative, the same iterations) or is refused with the classed
# error its rule in combo_expected() (helper-combinations.R) names.

combo_check_verbs <- function(verbs) {
  skip_if_not_installed("HDF5Array")
  skip_if_not_installed("SingleCellExperiment")
  dir <- withr::local_tempdir()
  d <- combo_data(dir)
  cells <- expand.grid(loss = combo_losses, source = combo_sources,
                       weighting = combo_weightings, verb = verbs,
                       stringsAsFactors = FALSE)
  for (r in seq_len(nrow(cells))) {
    cell <- cells[r, ]
    want <- combo_expected(cell$loss, cell$source, cell$weighting, cell$verb)
    if (want == "n/a") next
    got <- combo_outcome(d, cell$loss, cell$source, cell$weighting,
                         cell$verb)
    expect_identical(got, want,
                     label = paste(unlist(cell), collapse = " x "))
  }
}

test_that("nmf() and method = \"online\": every cell", {
  combo_check_verbs(c("nmf", "online"))
})

test_that("predict() and the fit's methods: every cell", {
  combo_check_verbs(c("predict", "methods"))
})

test_that("nmf_rank() and nmf_tune(): every cell", {
  combo_check_verbs(c("nmf_rank", "nmf_tune"))
})

test_that("nmf_bootstrap(), nmf_consensus() and add_nmf(): every cell", {
  combo_check_verbs(c("nmf_bootstrap", "nmf_consensus", "add_nmf"))
})

test_that("the expected table covers every cell with equal, n/a or a class", {
  cells <- expand.grid(loss = combo_losses, source = combo_sources,
                       weighting = combo_weightings, verb = combo_verbs,
                       stringsAsFactors = FALSE)
  want <- mapply(combo_expected, cells$loss, cells$source, cells$weighting,
                 cells$verb)
  expect_true(all(want %in% c("equal", "n/a") |
                    grepl("^nmfkit_error_", want)))
  # the streamed divergences give the in-memory answer
  streamed_div <- cells$source %in% c("hdf5", "tenx", "delayed_op") &
    cells$loss != "frobenius" & cells$weighting == "plain" &
    cells$verb %in% c("nmf", "predict", "nmf_bootstrap", "add_nmf",
                      "methods")
  expect_true(all(want[streamed_div] == "equal"))
})

test_that("held-out verbs refuse data read in blocks and say why", {
  skip_if_not_installed("DelayedArray")
  x <- matrix(as.double(withr::with_seed(1, stats::rpois(30 * 20, 5))), 30)
  dx <- DelayedArray::DelayedArray(x) * 1
  calls <- list(
    quote(nmf_rank(dx, 1:2)),
    quote(nmf_tune(dx, rank = 1:2)),
    quote(nmf(dx, rank = "auto")),
    quote(nmf_consensus(dx, rank = "auto", nrun = 2)),
    quote(nmf_signatures(dx, rank = "auto", nrun = 2)))
  for (cl in calls) {
    err <- expect_error(eval(cl), class = "nmfkit_error_streamed",
                        label = deparse(cl))
    # the reason: held-out entries make one system per column
    expect_match(conditionMessage(err), "Gram matrix", label = deparse(cl))
  }
})
