#' Nonnegative matrix factorization
#'
#' Factorises a nonnegative matrix `x` (features in rows, samples in columns)
#' as `x ~ W H` with `W` (features x `rank`) and `H` (`rank` x samples)
#' nonnegative, minimising the Frobenius loss `||x - W H||^2 / 2`.
#'
#' `method = "auto"` (the default) picks the solver measured fastest to a
#' given error for the kind of data (see `bench/README.md`), by its share of
#' nonzero entries and never by its storage (a matrix and its `dgCMatrix`
#' copy give the same fit): `"anls"` from 25 % nonzero up and accelerated
#' `"hals"` (run on the sparse form of the data) below, its passes over
#' each factor chosen by Gillis and Glineur's (2012) cost rule (a pass
#' over a factor is repeated while it costs less than half of the product
#' and Gram matrix it reuses: 2 passes over `W` and 5 over `H` on the
#' benchmark's 20000 x 5000 matrix at rank 20) unless `control$inner` is
#' given; the fit records the solver it ran in `$method`
#' and the settings in `$control`. `method = "hals"` runs cyclic coordinate descent on the
#' Gram systems (hierarchical alternating least squares, the algorithm of
#' scikit-learn's `solver = "cd"`), `control$inner` passes over `W` then over
#' `H` per iteration, one component across all rows at a time;
#' `method = "mu"` runs Lee and Seung's multiplicative updates, and
#' `method = "anls"` alternating nonnegative least squares: each factor is
#' solved exactly given the other, by block principal pivoting (Kim and Park
#' 2011) warm-started from the previous iterate. `control$extrapolate`
#' adds Ang and Gillis's (2019) extrapolation between iterations, with its
#' restart rule (the loss never rises). All stop when the projected-gradient
#' violation falls to `control$tol` times its first value, or after
#' `control$max_iter` iterations.
#'
#' Starting points: `"auto"` (the default) is `"random"` for `"anls"` and for
#' `method = "auto"`, and `"nndsvda"` for a named `"hals"` or `"mu"`, so
#' dense and sparse storage of the same data give the same fit for a named
#' method. (ANLS from a random start measured 2-3 times fewer iterations
#' than from NNDSVDa; on the sparse benchmark the randomized SVD behind
#' NNDSVDa cost more than half of the whole fit, and HALS from a random start
#' reached the same error in 5 iterations instead of 3, in 0.26 s instead of
#' 0.55 s.) `"nndsvda"` is NNDSVD from a randomized
#' truncated SVD with zeros (entries below `1e-6 * sqrt(mean(x) / rank)`)
#' filled by `sqrt(mean(x) / rank)`, the typical size of a factor entry
#' (`rank` products of it make `mean(x)`); `"nndsvd"` keeps the zeros;
#' `"nndsvdar"` fills them with small uniform values (up to a hundredth of
#' that); `"random"` draws uniformly from `[0, sqrt(mean(x) / rank))`. Every
#' start scales like the factors, so `nmf(c * x)` runs the same iterations as
#' `nmf(x)` and returns `sqrt(c)` times its factors (scikit-learn fills with
#' `mean(x)`, which makes its fits depend on the scale of the data). All draws use R's RNG, so
#' `set.seed()` reproduces a fit, and any number of threads gives the same
#' result.
#'
#' Sparse input (`dgCMatrix`) stays sparse: no dense copy is made.
#' All-zero rows or columns are allowed: they are left out of the fit (which
#' then runs on the smaller matrix) and their rows of `W` or columns of `H`
#' come out exactly zero.
#'
#' @section Losses for counts: KL, Itakura-Saito and the beta family:
#' `loss = "kl"` fits the generalised Kullback-Leibler divergence
#' `sum(x * log(x / WH) - x + WH)` (Poisson maximum likelihood: the model of
#' word counts, UMI counts and mutation counts; the CRAN NMF package's
#' `"brunet"` and fastTopics' Poisson NMF); `loss = "is"` the Itakura-Saito
#' divergence (needs positive data); a number `beta` the beta-divergence of
#' Févotte and Idier (2011) (`2` is `"frobenius"`, `1` `"kl"`, `0`
#' `"is"`). Under KL, `method = "cd"` (the default through `"auto"`) is
#' coordinate descent with one safeguarded Newton step per coordinate (Hsieh
#' and Dhillon 2011; the sequential coordinate descent of Lin and Boutros
#' 2020), `control$inner` passes per factor; `"mu"` the multiplicative
#' updates, for every beta, with Févotte and Idier's exponent so that the
#' loss never rises. Zero entries enter KL only through the column and row
#' sums of the factors, so a sparse pass costs O(nnz k) and no `m x n`
#' buffer is made (other betas form one column of `W H` at a time).
#' `control$extrapolate` applies Ang and Gillis's extrapolation as for the
#' Frobenius loss; an extrapolated point never falls below a tenth of the
#' plain iterate, entrywise, so `W H` stays positive wherever it was.
#' The trace `loss` is `D(x | W H) / D(x | r c' / T)`, the divergence
#' relative to the rank-one independence model (row sums times column sums
#' over the total, KL's best rank-one fit); `$divergence` is `D(x | W H)`
#' and `$baseline` the reference. A start must give `W H > 0` wherever
#' `x > 0` (the divergence is infinite otherwise): `"random"` (the default
#' under these losses) and `"nndsvda"` always do; `"nndsvd"` or a user's
#' factors that do not are an error. Every step is scale-free, so fitting
#' `c * x` takes the same iterations and returns `sqrt(c)` times the
#' factors.
#'
#' @section Data larger than memory:
#' A `DelayedMatrix` (from the DelayedArray package: an
#' `HDF5Array::HDF5Matrix`, a sparse `HDF5Array::TENxMatrix`, or any
#' delayed operation such as `log1p(x)` on top of one) is read in blocks of
#' columns and never realised whole. One read checks it (finite,
#' nonnegative) and finds its zero lines; then each iteration reads every
#' block once: the block's columns of `H` are solved given `W` and the
#' block's terms of `W`'s update (`X_J H_J'`, `H_J H_J'`) are added up, so
#' the fit holds one block and `O((m + n) rank)` numbers. It is the
#' in-memory fit, iteration for iteration (the same methods, extrapolation,
#' penalties and fixed components; equal to about `1e-10`, the order of
#' the sums differing), and the same on any number of threads. Blocks are
#' whole chunks of the `H` update (about `n / 64` columns) and as many as
#' fit in `control$block_size` bytes (default
#' [DelayedArray::getAutoBlockSize()], 100 MB). The start is `"random"`
#' (NNDSVD would need the data in memory); masks, weights and `NA` need the
#' data in memory. Under `loss = "kl"`, `"is"` or a beta, the block's
#' columns of `H` are updated as in memory, and `W`, whose coordinate
#' descent would need whole rows of the data at once, takes one step per
#' read from sums over the blocks: with `method = "mu"` the in-memory
#' multiplicative update (the in-memory fit, iteration for iteration), with
#' KL's `"cd"` a safeguarded Newton step for all of `W` at once, which
#' reaches the in-memory fit's optimum (to about `1e-8` in divergence) in
#' more iterations. Under a `future::plan()`
#' other than `sequential`, each pass runs one future per block: the
#' worker reads its block itself (a file-backed matrix travels as its path)
#' and returns its `H` columns and sums (`k x m` and `k x k` or `k`), which are
#' added in block order, so every plan gives the same bits. See
#' [write_tenx()] to put a `dgCMatrix` on disk, and
#' the article "Data larger than memory".
#'
#' `method = "online"` is online NMF for data too large to read many times
#' (Mairal et al. 2010, with mini-batches as scikit-learn's
#' `MiniBatchNMF`): each iteration is one pass over mini-batches of
#' `control$batch_size` columns (default about `n / 64`); each batch's `H`
#' is solved given `W`, then `W` is updated from the batches' statistics
#' `A = sum(H_J H_J')` and `B = sum(X_J H_J')`, of which each pass keeps
#' the weight `control$forget` (default `0.01`). `loss` has one entry per
#' pass (the batches' errors as they were solved) and a last one, the exact
#' error of the result after a final pass that solves every column of `H`
#' given the final `W`. It works on data in memory and read in blocks
#' alike (the same mini-batches, the same fit), and gives the same fit for
#' a matrix and its `dgCMatrix` copy (the batches are read sparse below
#' 25 % nonzero entries, whatever the storage).
#'
#' @section Penalties and fixed components:
#' `penalty = c(l1_W = , l1_H = , l2_W = , l2_H = )` (or `l1 =`, `l2 =`
#' for both factors) adds `s1 * l1 * sum(Z) + s2 * l2 * sum(Z^2) / 2` for
#' each penalised factor `Z` to the loss. The weights are relative to the
#' data: `s1 = len * r^(p - 1/2)` and `s2 = len * r^(p - 1)` with `r` the
#' root mean square of `x`, `p` the loss's power (2 for Frobenius, `beta`
#' otherwise) and `len` the number of rows of `x` for `H` and of columns for
#' `W` (as scikit-learn scales its `alpha_W`, `alpha_H`), so a weight means
#' the same on data of any scale and size, weight 1 is as strong as the
#' data's own pull, and fits stay equivariant. A penalty so strong that the
#' fit ends no better than the rank-one baseline (Frobenius: than `W H =
#' 0`) warns (`nmfkit_warning_penalty`). L1 favours zeros (sparser parts); L2 shrinks.
#' Under KL an L1 weight on `H` adds to `colSums(W)` in its gradient, like a
#' heavier basis: it shrinks `H` more than it zeroes it (a zero needs `W H >
#' 0` without the entry); sparse parts come from L1 under the Frobenius
#' loss. Since
#' `W H = (W D)(D^-1 H)` for any positive diagonal `D`, penalising one factor
#' only shrinks it while the other grows: a one-sided penalty warns
#' (`nmfkit_warning_penalty`) unless the other factor is fixed.
#' `fixed = list(W = M)` keeps the first `ncol(M)` columns of `W` equal to
#' `M` (known signatures, marker programs) and learns the other
#' `rank - ncol(M)`; `fixed = list(H = M)` likewise fixes the first rows of
#' `H`. Fixed entries come out bit-identical; with every column of `W` fixed
#' the fit is [predict()]. Fits with fixed components keep all-zero lines
#' in the fit.
#'
#' @section Containers and text:
#' `x` may be a `SummarizedExperiment` or `SingleCellExperiment` (its assay
#' `assay`: genes are the features, cells the samples), a `Seurat` object
#' (the layer `assay` of its default assay), a quanteda `dfm` (documents
#' are its rows: it is transposed, terms x documents) or a tidytext count
#' table with columns `document`, `term` and `n` (terms x documents). The
#' fit is that of the matrix they hold, with its dimnames.
#' [add_nmf()] fits and stores the result in the container. See
#' [nmfkit-containers].
#'
#' @section Missing entries, masks and weights:
#' With `na = "omit"`, `weights` or `mask`, the loss is
#' `sum(a * (x - W H)^2) / 2` with entry weights `a` (0 for a missing or
#' masked entry) and `loss` traces `sqrt(sum(a * (x - WH)^2) / sum(a * x^2))`.
#' Each row of `W` and column of `H` then solves its own nonnegative least
#' squares problem, whose Gram matrix is the unmasked one corrected by one
#' outer product per masked (or reweighted) entry of that row or column, so
#' a few missing entries cost little. When missing entries outnumber four
#' times the stored entries per component (30 % of a sparse matrix), or are
#' at most 10 % of every row and column (the held-out entries of
#' [nmf_rank()]'s folds), they are instead filled in with the
#' current prediction at each update (the EM step for missing data, which
#' still lowers the masked loss every iteration but may need more
#' iterations; HALS and ANLS then run the unmasked engine's update, at the
#' cost of an unmasked fit). Every method (`"hals"`, `"mu"`,
#' `"anls"`) works. Starting points are computed from `x` with missing
#' entries set to 0. `fitted()` returns `W H` everywhere, so it fills in
#' (imputes) the missing entries; `residuals()` is `NA` there. Every row and
#' column must keep an observed entry of positive weight. With no `NA`, no
#' mask and unit (or no) weights, the fit is exactly the unmasked one.
#' Sparse data stay sparse with `NA` entries and masks, and with sparse
#' weights (whose unstored entries weigh 0: only the stored entries enter
#' the fit, and neither the data nor the weights are densified); dense
#' weights are used as a dense matrix.
#'
#' @param x A nonnegative numeric matrix, numeric data frame, `dgCMatrix` or
#'   `DelayedMatrix` (read in blocks: see "Data larger than memory"), with
#'   samples as columns; or data in its container (see "Containers and
#'   text"): a `SummarizedExperiment` or `SingleCellExperiment` (genes x
#'   cells), a `Seurat` object, a quanteda `dfm` or a tidytext count table.
#' @param rank Number of components, from 1 to `min(dim(x))`; `"auto"` to
#'   find it by an adaptive held-out search ([auto_rank()]), `c(lo, hi)` to
#'   search that range, or [auto_rank()] for the search's folds. With `ard`,
#'   the largest rank `K` the fit may use.
#' @param method `"auto"`, `"hals"`, `"mu"`, `"anls"`, `"cd"`
#'   (coordinate descent under the loss: `"hals"` for Frobenius, Newton
#'   coordinate descent for KL) or `"online"` (mini-batches, Frobenius
#'   only; see "Data larger than memory"). Under KL `"cd"` and `"mu"`, under
#'   other betas `"mu"`.
#' @param init `"auto"`, `"nndsvda"`, `"nndsvd"`, `"nndsvdar"`, `"random"`,
#'   or a list
#'   `list(W = , H = )` of starting factors.
#' @param control Solver settings from [nmf_control()].
#' @param nrun Number of fits to run; the one with the lowest final loss is
#'   kept. Runs after the first start from `"random"`. All starts are drawn
#'   first, in order, from R's RNG; the runs then go through `future.apply`,
#'   so `future::plan()` chooses where they run and never changes the
#'   result. They report progress through `progressr` (wrap the call in
#'   [progressr::with_progress()] to see it).
#' @param keep_data Keep a reference to `x` in the model (no copy is made), so
#'   that `fitted()` and `residuals()` work without passing the data again.
#' @param na `"fail"` (the default): an `NA` in `x` is an error; `"omit"`:
#'   `NA` entries (stored ones, for a `dgCMatrix`) are left out of the loss.
#' @param weights `NULL`, or a nonnegative matrix the shape of `x` (dense or
#'   sparse; a sparse one's unstored entries weigh 0) weighting the squared
#'   error entrywise. Weight 2 counts an entry twice; weight 0 leaves it out.
#' @param mask `NULL`; `"zeros"`, leaving out every unstored entry of a
#'   sparse `x` (every zero of a dense one), as recommender data need; or a
#'   logical matrix (base or `lgCMatrix`) whose `TRUE` entries are left out.
#'   See "Missing entries, masks and weights".
#' @param loss `"frobenius"` (the default), `"kl"` (Poisson), `"is"`
#'   (Itakura-Saito), or a number, the beta of the beta-divergence. See
#'   "Losses for counts".
#' @param penalty `NULL`, or named nonnegative L1/L2 weights `l1_W`, `l1_H`,
#'   `l2_W`, `l2_H` (`l1`, `l2` for both factors), relative to the data's
#'   scale. See "Penalties and fixed components".
#' @param fixed `NULL`, or `list(W = , H = )` (either or both): a
#'   nonnegative matrix of known columns of `W` (features x a) or rows of `H`
#'   (b x samples), kept fixed as the first components.
#' @param ard `NULL`, or automatic relevance determination (Tan and
#'   Févotte 2013): `"l1"`, `"l2"` or [ard_prior()]. The fit starts at
#'   `rank` components and prunes those the data do not need; its `rank` is
#'   the effective rank and `$ard` holds the relevance trace.
#' @param assay For `x` in a `SummarizedExperiment` or
#'   `SingleCellExperiment`: the assay to factorise, by name or index
#'   (`"counts"` by default); for a `Seurat` object, the layer (slot) of its
#'   default assay. Other data have no assays: it is not used for them
#'   (but must still be a name or an index). See [nmfkit-containers].
#' @param ... Must be empty: an unknown or misspelt argument is an error
#'   naming it.
#' @return An object of class `c("nmfkit_nmf", "nmfkit")`: a list with `W`,
#'   `H`, `loss` (the relative error `||x - WH|| / ||x||` after each
#'   iteration, computed from the Gram matrices `W'W` and `HH'` without
#'   forming the residual: below about `1e-8` it is rounding, and an exact
#'   fit may show `1e-8` rather than 0), `iterations`, `status` (`"converged"`, `"max_iter"`,
#'   `"interrupted"`, `"numerical_error"` or `"degenerate"`: `W H` is zero,
#'   with a `nmfkit_warning_degenerate`), `call`, `control`, `rank`,
#'   `dimnames` and `method` (the solver that ran: `"auto"` is resolved).
#'   Row names of `x` name the rows of `W`, column
#'   names of `x` the columns of `H`; components are named `nmf1`, `nmf2`, ...
#' @seealso [predict.nmfkit()], [plot.nmfkit()], [summary.nmfkit()],
#'   [nmf_distance()].
#'   Under a divergence also `loss_function` (`"kl"`, `"is"`, `"beta"`),
#'   `beta`, `divergence`, `objective` (with penalties) and `baseline`; with
#'   penalties `penalty`, with fixed components `fixed` (their counts).
#' @examples
#' x <- swimmer()
#' set.seed(1)
#' fit <- nmf(x, rank = 17, nrun = 3)  # best of 3 starts
#' fit
#' plot(fit, type = "basis")
#'
#' # counts: Poisson NMF (KL divergence)
#' set.seed(2)
#' counts <- matrix(rpois(200 * 60, 2), 200, 60)
#' kl <- nmf(counts, rank = 4, loss = "kl")
#' kl
#' # projection of new counts under the same loss
#' predict(kl, counts[, 1:3])
#' @export
nmf <- function(x, rank,
                method = c("auto", "hals", "mu", "anls", "cd", "online"),
                loss = "frobenius", penalty = NULL, fixed = NULL,
                na = c("fail", "omit"), weights = NULL, mask = NULL,
                ard = NULL, init = "auto", control = nmf_control(),
                nrun = 1L, keep_data = TRUE, assay = "counts", ...) {
  moved <- old_positions(c("x", "rank", "method", "init", "control", "nrun",
                           "keep_data", "na", "weights", "mask", "loss",
                           "penalty", "fixed", "assay"), 3L, "nmf")
  if (!is.null(moved)) return(eval(moved, parent.frame()))
  check_dots_empty()
  call <- match.call()
  original <- if (!missing(x)) x  # input_matrix() reports a missing x
  search <- if (!missing(rank)) as_auto_rank(rank)
  if (!is.null(search)) {
    return(nmf_auto_rank(x, search, list(
      method = method, init = init, control = control, nrun = nrun, na = na,
      weights = weights, mask = mask, loss = loss, penalty = penalty,
      fixed = fixed, ard = ard), keep_data, assay, call))
  }
  x <- input_matrix(x, assay)
  na <- check_choice(na)
  control <- check_control(control, fn = "nmf")
  # (a DelayedMatrix's first scan holds what a pass of the fit holds)
  checked <- check_data(x, allow_na = na == "omit", with_scan = TRUE,
                        budget = control$block_size)
  data <- x  # what the model keeps: a DelayedMatrix by reference
  x <- checked$x
  masked <- masked_setup(x, weights, mask)
  rank <- check_rank(rank, min(dim(x)), why = rank_bound(x, original, assay))
  method <- check_choice(method)
  loss <- check_loss(loss)
  nrun <- check_count(nrun, min = 1)
  check_flag(keep_data)
  penalty <- check_penalty(penalty)
  fixed <- check_fixed(fixed, nrow(x), ncol(x), rank)
  warn_one_sided(penalty, fixed)
  ard <- check_ard(ard)
  streamed <- is_streamed(x)
  check_ard_use(ard, masked, penalty, fixed, streamed, method)
  if (streamed && !loss$streams) {
    abort_nmfkit(c("A fit read in blocks supports {.code loss = \"frobenius\"} only.",
                   "x" = "{.arg loss} is {.val {loss$name}} and {.arg x} is a {.cls {class(x$src)[1]}}."),
                 "streamed", call = call)
  }
  check_positive_for_loss(x, loss, masked, call = rlang::current_env())
  # a masked fit runs on its data with missing entries set to 0
  xfit <- if (is.null(masked)) x else masked$x
  if (loss$core == "divergence") {
    method <- resolve_loss_method(method, loss)
    if (identical(init, "auto")) init <- "random"
    spec <- list(method = method, engine = control, masked = masked,
                 image_dim = attr(x, "image_dim"), loss = loss,
                 penalty = penalty, fixed = fixed)
    fit <- fit_variant("nmf", xfit, rank, init, control, nrun, keep_data,
                       spec, call, data = if (streamed) data else x,
                       scan = if (is.null(masked)) checked$scan,
                       dimnames = dimnames(x))
    if (!is.null(ard)) fit <- ard_refine(fit, x, ard, loss, control, call)
    return(fit)
  }
  method <- resolve_loss_method(method, loss)
  chosen <- method == "auto"
  method <- resolve_method(method, xfit,
                           share = observed_share(masked, dim(x)),
                           scan = if (is.null(masked)) checked$scan)
  if (method == "online") {
    if (!is.null(masked)) {
      abort_nmfkit(c("{.code method = \"online\"} fits data without missing entries, masks or weights.",
                     "i" = "Use another method for {.arg na}, {.arg weights} or {.arg mask}."),
                   "method", call = call, value = method)
    }
    # mini-batches of the data in memory are read as blocks too
    if (!streamed) xfit <- memory_blocks(xfit)
    # in the form the data's share of nonzeros chooses (as method "auto"),
    # never their storage: the passes' cost rule counts the blocks' stored
    # entries, so a matrix and its dgCMatrix copy give the same fit
    xfit$sparse <- nonzero_share(xfit) < 0.25
  }
  # what the core runs: with method "auto" on sparse data (by the share of
  # nonzeros, not the storage), accelerated HALS with the passes over each
  # factor chosen by Gillis and Glineur's cost rule (inner = "auto", which
  # the glue maps to InnerPasses::automatic; the model's control keeps the
  # user's settings)
  engine <- control
  if (chosen && is.null(control$inner) && method == "hals") {
    engine$inner <- "auto"
    # the cost rule counts stored entries: run it on the sparse form, so a
    # matrix and its dgCMatrix copy give the same fit (and sparse products)
    # (a masked fit's data too: its entries' weights are one encoding for
    # both storages)
    if (is.matrix(xfit)) xfit <- dense_as_dgc(xfit)
    if (streamed) xfit$sparse <- TRUE
  }
  if (identical(init, "auto")) {
    init <- if (method == "anls" || chosen || is_streamed(xfit))
      "random" else "nndsvda"
  }
  spec <- list(method = method, engine = engine, masked = masked,
               image_dim = attr(x, "image_dim"), loss = loss,
               penalty = penalty, fixed = fixed)
  # the checks' read of x tells the scale and zero lines of the unmasked
  # data only
  fit <- fit_variant("nmf", xfit, rank, init, control, nrun, keep_data, spec,
                     call, data = if (streamed) data else x,
                     scan = if (is.null(masked)) checked$scan,
                     dimnames = dimnames(x))
  if (!is.null(ard)) fit <- ard_refine(fit, x, ard, loss, control, call)
  fit
}

# The solver behind method = "auto", chosen by the density of x (its share
# of nonzero entries), never by its storage, so a matrix and its dgCMatrix
# copy run the same solver and give the same fit: accelerated HALS below
# `sparse_below`, exact ANLS (block principal pivoting) otherwise. At 25
# iterations on 3000 x 1500 at rank 20, HALS (cost-rule passes) took
# 0.04-0.49 s against ANLS's 0.45-0.86 s at densities 0.5-20 % (sparse
# storage; 0.8-1.0 against 1.2-1.3 s dense), and ANLS needs fewer
# iterations to a tolerance on dense data (bench/README.md: 9 against 16
# on the 2000 x 1000 benchmark); at 50 % dense ANLS is faster
# (1.4 against 2.0 s). Both benchmark problems (100 % and 0.5 %) keep their
# solver.
# A masked fit (missing entries, masks, weights) is chosen by the share of
# entries it observes (`share`, of positive weight): its data's zeros are
# data there, and HALS from a random start stalled where ANLS did not
# (Swimmer, 11.8 % nonzero, 10 % of entries held out, rank 17, 200
# iterations: held-out relative error 9.8 for HALS against 1e-4 for ANLS
# in 24 iterations; the density rule chose HALS).
resolve_method <- function(method, x, sparse_below = 0.25, share = NULL,
                           scan = NULL) {
  if (method != "auto") return(method)
  if (is.null(share)) {
    # check_data()'s scan of x counted its nonzeros (`nnz`) already: no
    # second read (a dense matrix's columns copied a million entries at a
    # time)
    share <- if (is.numeric(scan$nnz)) {
      scan$nnz / (as.double(nrow(x)) * ncol(x))
    } else {
      nonzero_share(x, sparse_below)
    }
  }
  if (share < sparse_below) "hals" else "anls"
}

declare_variant(
  "nmf", fn = "nmf", label = "NMF",
  settings = list(
    inner = setting_inner,
    extrapolate = setting(TRUE, function(x, arg, call) {
      check_flag(x, arg = arg, call = call, what = "control")
    }),
    block_size = setting(NULL, function(x, arg, call) {
      check_number(x, min = 1, arg = arg, call = call, what = "control")
    }),
    batch_size = setting(NULL, function(x, arg, call) {
      check_count(x, min = 1, arg = arg, call = call, what = "control")
    }),
    forget = setting(0.01, function(x, arg, call) {
      check_number(x, min = 0, max = 1, strict = TRUE, arg = arg,
                   call = call, what = "control")
    }),
    # the violation `tol` is relative to (default: the fit's own first
    # iteration's), e.g. the `first_violation` of the fit a warm start
    # comes from
    tol_reference = setting(NULL, function(x, arg, call) {
      check_number(x, min = 0, strict = TRUE, arg = arg, call = call,
                   what = "control")
    })
  ),
  # a masked fit keeps every line: its masks and weights are indexed by
  # them; so does a fit with fixed components (given for every line) and a
  # penalised one (its weights are relative to the whole data's size)
  drop_lines = function(spec) {
    is.null(spec$masked) && is.null(spec$fixed) && !any(spec$penalty > 0)
  },
  start = function(x, rank, init, spec, control, full) {
    start <- init_factors(x, rank, init, control$threads, call = spec$call)
    # a named start is at the scale of x / 2^e; a user's list is scaled
    # after this (start_on_lines())
    s <- if (is.character(init)) 2^(-(spec$exponent %||% 0) / 2) else 1
    start <- apply_fixed(start, spec$fixed, s)
    if (spec$loss$core == "divergence") {
      check_divergence_start(x, start, init, spec)
    }
    start
  },
  run = function(x, start, spec, control) {
    if (spec$loss$core == "divergence") {
      return(run_divergence(x, start, spec, control))
    }
    run_nmf(x, start, spec$method, spec$engine, spec$masked, spec$exponent,
            spec$penalty, fixed_counts(spec$fixed))
  },
  post = function(fit, x, spec, control) {
    # a penalty so strong that the fit is worse than the rank-one baseline
    # (or, for Frobenius, than W H = 0) has squeezed the factors to
    # nothing useful: say so
    final <- final_loss(fit$loss)
    if (any(spec$penalty > 0) && is.finite(final) && final >= 1) {
      warn_nmfkit(c("The penalty dominates the fit: its {fit$loss_name %||% 'relative error'} is {format(final, digits = 3)}, no better than {spec$loss$baseline_name}.",
                    "i" = "Lower {.arg penalty}."),
                  "penalty", call = spec$call)
    }
    # fixed components exactly as given (a fit of x / 2^e scaled back)
    apply_fixed(fit, spec$fixed)
  },
  model = function(fit, spec) {
    out <- list(method = spec$method, image_dim = spec$image_dim,
                loss_function = spec$loss$name, beta = spec$loss$beta,
                first_violation = fit$first_violation)
    out[spec$loss$fit_fields] <- fit[spec$loss$fit_fields]
    if (any(spec$penalty > 0)) out$penalty <- spec$penalty
    if (!is.null(spec$fixed)) out$fixed <- fixed_counts(spec$fixed)
    if (!is.null(spec$masked)) {
      out$entry_weights <- spec$masked[c("base", "i", "j", "delta")]
    }
    out
  }
)

# A start under a divergence must fit every positive entry with W H > 0
# (the divergence is infinite otherwise and no update can leave it):
# "nndsvd" keeps zeros, and a user's factors may have them.
check_divergence_start <- function(x, start, init, spec) {
  bad <- zero_fits(x, start$W, start$H)
  if (bad == 0) return(invisible())
  what <- if (is.character(init)) sprintf("init = \"%s\"", init) else
    "the starting factors in init"
  abort_nmfkit(c("{.code {what}} gives {.code W H = 0} at {bad} positive entr{?y/ies} of {.arg x}: the {spec$loss$label} loss is infinite there.",
                 "i" = "Use {.code init = \"random\"} or {.code \"nndsvda\"}, or starting factors whose product is positive wherever {.arg x} is."),
               "init", call = spec$call, value = bad)
}

# One run of the core solver from the starting factors `start`. `masked`
# (from masked_setup()) selects the masked and weighted solver; its data
# values are scaled like x (by 2^-e). `penalty` is c(l1_W, l1_H, l2_W,
# l2_H), weights relative to the data: the objective is
# ||x - WH||^2 / 2 + r^1.5 (n l1_W |W|_1 + m l1_H |H|_1) +
# r (n l2_W ||W||^2 + m l2_H ||H||^2) / 2 with r = sqrt(sum(x^2) /
# length(x)) of the m x n data the core sees, so fits stay
# scale-equivariant; `fixed` is
# c(fixed_w, fixed_h): the first fixed_w columns of W and fixed_h rows of H
# keep their starting values. The run's `objective` is the final penalised
# objective at the core's scale (x / 2^e: it scales as 2^(2e)); `loss`
# stays the relative error.
run_nmf <- function(x, start, method, control, masked = NULL, e = 0,
                    penalty = c(0, 0, 0, 0), fixed = c(0L, 0L)) {
  penalty <- as.double(penalty)
  fixed <- as.integer(fixed)
  control <- violation_at_core(control, e, 2)
  with_violation(run_nmf_core(x, start, method, control, masked, e, penalty,
                              fixed), e, 2)
}

# The projected-gradient violation scales as c^(beta - 1/2) with the data
# (the factors as c^(1/2), the divergence as c^beta): the reference a user
# gives (control$tol_reference) and the first violation a run reports are
# at the data's scale, the core's at x / 2^e.
violation_at_core <- function(control, e, beta) {
  e <- e %||% 0
  if (!is.null(control$tol_reference)) {
    control$tol_reference <- control$tol_reference * 2^(-e * (beta - 0.5))
  }
  control
}
with_violation <- function(fit, e, beta) {
  if (is.null(fit$first_violation)) return(fit)
  fit$first_violation <- fit$first_violation * 2^((e %||% 0) * (beta - 0.5))
  fit
}

run_nmf_core <- function(x, start, method, control, masked, e, penalty,
                         fixed) {
  if (is_streamed(x)) {
    # the stored entries the passes' cost rule counts: those of the sparse
    # form (as the in-memory fit, which runs sparse data, or dense data
    # made sparse by method = "auto"), else every entry
    stored <- if (x$sparse) x$nnz else as.double(nrow(x)) * ncol(x)
    if (method == "online") {
      return(run_online(x, start, control, penalty, fixed, stored))
    }
    return(run_streamed(x, start, method, control, penalty, fixed, stored))
  }
  if (!is.null(masked)) masked$value <- scale_data(masked$value, e)
  core_fit(x, start$W, start$H,
           core_params(method, control, callback = progress_callback(control),
                       penalty = penalty, fixed = fixed, masked = masked))
}
