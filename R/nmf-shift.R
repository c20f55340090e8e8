#' Shift-invariant (permutation) NMF
#'
#' Standard NMF cannot find a part that moves from image to image.
#' Permutation NMF (Barbarino 2016) keeps, for every image `j` and atom `t`,
#' one nonnegative coefficient `H[t, j]` and one cyclic shift, and minimises
#' \deqn{\sum_j \| x_j - \sum_t H_{tj} S_{g_{tj}} w_t \|^2,}{sum_j || x_j -
#' sum_t H[t, j] S_g[t, j] w_t ||^2,}
#' so it recovers the moving parts (the atoms, columns of `W`) and where they
#' sit in each image.
#'
#' Images are the columns of `x`, pixels in column-major order (as
#' `matrix(x[, j], image_dim[1], image_dim[2])` shows them).
#'
#' * `shift = "torus2d"` (default) shifts images as a torus: a shift
#'   `(row, col)` moves the atom's content `row` pixels down and `col` pixels
#'   right, wrapping around the edges. `"circular1d"` is the paper's shift of
#'   the vectorised image, whose rows wrap into the adjacent column.
#' * Each outer iteration runs, for every image, `inner` sweeps of block
#'   coordinate descent over the atoms (MultPermNNLS), each block solved
#'   exactly by an FFT cross-correlation; then `inner` passes of the W step:
#'   `"hals"` minimises over one atom at a time exactly, `"pg"` takes
#'   projected gradient steps `1/L` with `L = 2 lambda_max(R'R)`, the exact
#'   Lipschitz constant (`R` = the coefficients). Atoms are then rescaled to
#'   unit norm. Both steps never increase the objective.
#' * The fit stops when the relative error changes by less than
#'   `control$tol` between outer iterations, when the shifts cycle without
#'   progress, or after `control$max_iter` iterations. The problem is not
#'   convex: `nrun` random starts are run (atoms uniform on `[0, 1)`,
#'   coefficients uniform on `[0, sqrt(mean(colSums(x^2)) / rank))`, in the
#'   units of the data, shifts uniform) and the best fit is kept. Fitting
#'   `c * x` takes the same iterations and gives `c` times the coefficients
#'   (the atoms have unit norm). All draws
#'   use R's RNG, and any number of threads gives the same result.
#' * With `instances = K`, the paper's two-stage method finds parts that
#'   occur several times in one image: a first fit with `K` atoms (one per
#'   object instance), whose atoms with a total coefficient below
#'   `control$keep` (default 0.05) times the largest are dropped; a second fit
#'   of those atoms, as images, with their median (the background they
#'   absorb) removed, with `rank` atoms (from `3 * nrun` starts, each
#'   made of `rank` of the atoms); the two are composed, so
#'   each image and shape get one term per instance. [instances()] lists the
#'   terms of each first-stage atom with its strongest shape whose
#'   coefficient exceeds `control$instance_threshold` (default 0.5) times the
#'   median of the significant ones (those above a tenth of the largest).
#'   `fitted()` of such a fit sums all composed terms: the objects, without
#'   the background that stage 2 takes off. Stage 1 converges slowly: on
#'   the paper's second experiment `nmf_control(max_iter = 60)` gets the
#'   counts right more often than the default 30.
#'
#' Settings read from `control` (see [nmf_control()]): `max_iter` (default
#' 30), `tol`, `threads`, `verbose`, and the extras `h_start` (`"random"`,
#' the paper's start, or `"zero"`, where the first sweep matches each atom
#' greedily), `fft_planner`, `keep` and `instance_threshold`.
#' `fft_planner = "estimate"` (default) plans the FFTs without timing them,
#' so a fit is reproducible bit for bit; `"measure"` lets FFTW time its
#' algorithms once per image size (up to 2.7 times faster FFTs for some
#' sizes, such as 30 x 30), but FFTW keeps that choice for the rest of the R
#' session, also for later `"estimate"` plans of that size, and a different
#' algorithm can change the last bits of a fit.
#'
#' @param x A nonnegative numeric matrix (pixels x images) or numeric data
#'   frame; no image may be all zero.
#' @param rank Number of atoms (distinct shapes), from 1 to the number of
#'   pixels.
#' @param image_dim Image size `c(rows, columns)`; by default the
#'   `image_dim` attribute of `x`.
#' @param shift Shift group: `"torus2d"` or `"circular1d"`.
#' @param w_step W update: `"hals"` (exact per atom) or `"pg"` (projected
#'   gradient with step `1/L`).
#' @param inner Sweeps of the coefficient and W updates per outer iteration
#'   (when not given, `control$inner` if set, else 10).
#' @param nrun Number of random starts; the fit with the lowest final
#'   error is kept (as in [nmf()]: all starts drawn first from R's RNG, the
#'   runs through `future.apply`). With `instances`, each stage keeps the
#'   best of its starts, the second stage of `3 * nrun`. The default is 3,
#'   where the other fitters' is 1: the shifts are discrete, so one start
#'   often stops in a wrong placement. On the paper's first experiment one
#'   start recovers both shapes in 16 of 20 draws, the best of 3 in 20 of
#'   20 (`bench/shift.R`, `bench/history.md`); the paper's protocol is also
#'   the best of 3.
#' @param restarts Deprecated: the old name of `nrun`.
#' @param instances `NULL`, or the number `K >= rank` of object instances
#'   (with multiplicity) for the two-stage method.
#' @param init The start: `"random"` (atoms uniform on `[0, 1)`, coefficients
#'   and shifts as described above; the further starts of `nrun` are always
#'   random), or a list `list(W = , H = )` of nonnegative atoms (pixels x
#'   `rank`, or x `instances` with the two-stage method) and coefficients,
#'   every shift starting at 0.
#' @param control Settings from [nmf_control()].
#' @param keep_data Keep a reference to `x` for `fitted()`, `residuals()`
#'   and `plot(type = "placements")`.
#' @param ... Must be empty: an unknown or misspelt argument is an error
#'   naming it.
#' @return An object of class `c("nmfkit_shift", "nmfkit")` with `W` (atoms
#'   as columns, unit norm), `H` (coefficients, rank x images), `shifts` (a
#'   list of two rank x images integer matrices `row` and `col`: the offsets
#'   of each atom in each image), `g` (the shift as a 0-based index
#'   `row + rows * col`), `image_dim`, `shift`, `w_step`, `loss` (relative
#'   error after each outer iteration), `restart_loss`, `stop` (why the fit
#'   stopped) and, for the two-stage method, `stages` and `terms` (every
#'   composed term) with `H` and `shifts` holding each atom's strongest term.
#' @references Barbarino, G. (2016). Permutation NMF. arXiv:1608.01372.
#' @seealso [shifted_shapes()], [instances()], [predict.nmfkit_shift()],
#'   [plot.nmfkit_shift()].
#' @examples
#' set.seed(1)
#' sim <- shifted_shapes(10)
#' fit <- nmf_shift(sim$x, rank = 2)
#' fit
#' plot(fit, type = "basis")
#' head(instances(fit))
#' @export
nmf_shift <- function(x, rank, image_dim = attr(x, "image_dim"),
                      shift = c("torus2d", "circular1d"),
                      w_step = c("hals", "pg"), inner = 10L, instances = NULL,
                      init = "random", control = nmf_control(max_iter = 30L),
                      nrun = 3L,
                      keep_data = TRUE, restarts, ...) {
  moved <- old_positions(c("x", "rank", "image_dim", "shift", "w_step",
                           "inner", "nrun", "instances", "control",
                           "keep_data", "restarts"), 6L, "nmf_shift")
  if (!is.null(moved)) return(eval(moved, parent.frame()))
  check_dots_empty()
  call <- match.call()
  if (!missing(restarts)) {
    deprecate_renamed("restarts", "nrun", "nmf_shift", both = !missing(nrun))
    nrun <- restarts
  }
  x <- check_images(x)
  image_dim <- check_shift_image_dim(image_dim, nrow(x))
  rank <- check_rank(rank, nrow(x), why = "the number of pixels")
  shift <- check_choice(shift)
  w_step <- check_choice(w_step)
  nrun <- check_count(nrun, min = 1, arg = if (missing(restarts)) "nrun"
                      else "restarts")
  if (!is.null(instances)) {
    instances <- check_instances(instances, rank, nrow(x))
  }
  init <- check_shift_init(init, nrow(x), instances %||% rank, ncol(x))
  control <- check_control(control, fn = "nmf_shift")
  # nmf_control(inner = ) is the package-wide knob; the argument wins
  if (missing(inner) && !is.null(control$inner)) inner <- control$inner
  inner <- check_count(inner, min = 1)
  check_flag(keep_data)
  spec <- list(image_dim = image_dim, shift = shift, w_step = w_step,
               inner = inner, nrun = nrun, rank = rank,
               instances = instances, samples = colnames(x))
  # with instances, the pipeline fits the instance atoms and the second
  # stage runs in the variant's post step
  fit_variant("shift", x, instances %||% rank, init, control, nrun,
              keep_data, spec, call)
}

declare_variant(
  "shift", fn = "nmf_shift", label = "Shift-invariant NMF",
  settings = list(
    inner = setting_inner,
    h_start = setting("random", function(x, arg, call) {
      check_choice(x, c("random", "zero"), arg = arg, call = call,
                   what = "control")
    }),
    fft_planner = setting("estimate", function(x, arg, call) {
      check_choice(x, c("estimate", "measure"), arg = arg, call = call,
                   what = "control")
    }),
    keep = setting(0.05, function(x, arg, call) {
      check_number(x, min = 0, max = 1, arg = arg, call = call,
                   what = "control")
    }),
    instance_threshold = setting(0.5, function(x, arg, call) {
      check_number(x, min = 0, arg = arg, call = call, what = "control")
    })
  ),
  defaults = list(max_iter = 30L),
  # the atoms have unit norm: only the coefficients scale with the data
  scale = c(H = 1),
  start = function(x, rank, init, spec, control, full) {
    # a user's atoms and coefficients (checked by nmf_shift()), every shift 0
    if (is.list(init)) {
      return(list(W = init$W, H = init$H,
                  G = matrix(0L, rank, ncol(x))))
    }
    # coefficients start in the units of the data: with unit-norm atoms,
    # rank coefficients of size sqrt(mean ||x_j||^2 / rank) make an image's
    # norm
    start <- shift_start(nrow(x), ncol(x), rank, control$h_start,
                         scale = sqrt(mean(colSums(x^2)) / rank))
    # the second stage, whose data are atoms, starts from `rank` of them
    if (isTRUE(spec$seed_atoms)) {
      start$W <- x[, sample.int(ncol(x), rank), drop = FALSE]
    }
    start
  },
  run = function(x, start, spec, control) {
    # a user's start names the coefficients H, as the fit does (and is
    # scaled with the data as H); the core calls them rho
    if (!is.null(start$H)) {
      start$rho <- start$H
      start$H <- NULL
    }
    fit <- r_nmf_shift(x, spec$image_dim, spec$shift, spec$w_step,
                       spec$inner, list(start), control,
                       progress_callback(control))
    storage.mode(fit$G) <- "integer"
    fit
  },
  post = function(fit, x, spec, control) {
    fit <- centre_atoms(fit, spec$image_dim, spec$shift)
    if (is.null(spec$instances)) return(fit)
    shift_second_stage(fit, spec, control)
  },
  model = function(fit, spec) {
    dn <- list(paste0("nmf", seq_len(ncol(fit$W))), spec$samples)
    g <- fit$G
    dimnames(g) <- dn
    list(image_dim = spec$image_dim, shift = spec$shift,
         w_step = spec$w_step, inner = spec$inner, nrun = spec$nrun, g = g,
         restart_loss = fit$run_loss, stop = fit$stop, stages = fit$stages,
         terms = fit$terms, instance_threshold = fit$instance_threshold,
         shifts = shift_offsets(g, spec$image_dim, dn))
  }
)

#' Object instances found by a shift-invariant fit
#'
#' One row per placement of an atom in an image. For a one-stage fit these
#' are the (image, atom) pairs with a coefficient above `threshold` (by
#' default every positive one). For the two-stage method (`instances = K` in
#' [nmf_shift()]) they are the composed terms of each first-stage atom with
#' its strongest shape, above the fit's threshold, so an atom can appear
#' several times in one image.
#'
#' @param object A fit from [nmf_shift()].
#' @param threshold Smallest coefficient reported; `NULL` for the default.
#' @param ... Unused; an argument given here is an error (a misspelling).
#' @return A data frame with columns `image`, `atom` (integers from 1),
#'   `row`, `col` (the atom's offset in pixels: its content moved `row` down
#'   and `col` right, cyclically) and `coefficient`, ordered by image, atom
#'   and decreasing coefficient.
#' @examples
#' set.seed(2)
#' sim <- shifted_shapes(6)
#' fit <- nmf_shift(sim$x, rank = 2, nrun = 1)
#' instances(fit)
#' @export
instances <- function(object, ...) UseMethod("instances")

#' @rdname instances
#' @export
instances.default <- function(object, ...) {
  abort_not_fit(object, "instances", "a fit from `nmf_shift()`")
}

#' @rdname instances
#' @export
instances.nmfkit_shift <- function(object, threshold = NULL, ...) {
  check_dots_empty()
  terms <- shift_terms(object)
  if (is.null(threshold)) {
    threshold <- if (is.null(object$instance_threshold)) 0
                 else object$instance_threshold
    keep <- terms$coefficient > threshold
  } else {
    threshold <- check_number(threshold, min = 0)
    keep <- terms$coefficient >= threshold & terms$coefficient > 0
  }
  if (!is.null(terms$assigned)) keep <- keep & terms$assigned
  t <- terms[keep, , drop = FALSE]
  t <- t[order(t$image, t$atom, -t$coefficient), , drop = FALSE]
  r <- object$image_dim[1]
  data.frame(image = as.integer(t$image), atom = as.integer(t$atom),
             row = as.integer(t$g %% r), col = as.integer(t$g %/% r),
             coefficient = t$coefficient, row.names = NULL)
}

# Moves each atom to the middle of its frame (an exact reparametrisation:
# w -> S_c w, g -> g - c), so that atoms do not show split across the edges.
# c puts the atom's support (pixels >= half its maximum) centred, the
# largest empty run of rows and of columns (of pixels, for circular1d)
# straddling the edges.
centre_atoms <- function(fit, image_dim, shift) {
  r <- image_dim[1]
  s <- image_dim[2]
  n <- r * s
  for (t in seq_len(ncol(fit$W))) {
    w <- fit$W[, t]
    if (!any(w > 0)) next
    mask <- w >= 0.5 * max(w)
    c <- if (shift == "circular1d") {
      centring_offset(mask, n)
    } else {
      m <- matrix(mask, r, s)
      centring_offset(rowSums(m) > 0, r) +
        r * centring_offset(colSums(m) > 0, s)
    }
    if (c == 0L) next
    fit$W[, t] <- r_shift_reconstruct(cbind(w), image_dim, shift, 0L, 0L, 1,
                                      as.integer(c), 1L)
    fit$G[t, ] <- compose_shifts(fit$G[t, ], inverse_shift(c, image_dim, shift),
                                 image_dim, shift)
  }
  fit
}

# Cyclic offset that centres the occupied positions of `on` (length len).
centring_offset <- function(on, len) {
  idx <- which(on) - 1L
  if (!length(idx) || length(idx) == len) return(0L)
  gaps <- c(diff(idx), idx[1] + len - idx[length(idx)]) - 1L
  k <- which.max(gaps)
  start <- idx[k %% length(idx) + 1L]
  extent <- len - gaps[k]
  as.integer(((len - extent) %/% 2L - start) %% len)
}

inverse_shift <- function(g, image_dim, shift) {
  r <- image_dim[1]
  s <- image_dim[2]
  if (shift == "circular1d") return(as.integer((r * s - g) %% (r * s)))
  as.integer((r - g %% r) %% r + r * ((s - g %/% r) %% s))
}

# Random atoms, coefficients and shifts of one start (zero coefficients and
# shifts with h_start = "zero").
# `init` of nmf_shift(): "random" (the paper's start, drawn by
# shift_start()) or a list(W = pixels x atoms, H = atoms x images).
check_shift_init <- function(init, n_pixels, rank, n_images,
                             call = rlang::caller_env()) {
  if (is.list(init)) {
    return(check_init_list(init, list(W = c(n_pixels, rank),
                                      H = c(rank, n_images)), call = call))
  }
  check_choice(init, "random", arg = "init", call = call, what = "init")
}

shift_start <- function(n, m, rank, h_start, scale = 1) {
  W <- matrix(stats::runif(n * rank), n, rank)
  if (identical(h_start, "zero")) {
    rho <- matrix(0, rank, m)
    G <- matrix(0L, rank, m)
  } else {
    rho <- matrix(stats::runif(rank * m), rank, m) * scale
    G <- matrix(sample.int(n, rank * m, replace = TRUE) - 1L, rank, m)
  }
  list(W = W, rho = rho, G = G)
}

# The paper's section 3.4: `instances` atoms (the pipeline's fit `s1`, with
# the weak ones dropped) fitted by `rank` atoms, the two composed.
shift_second_stage <- function(s1, spec, control) {
  rank <- spec$rank
  image_dim <- spec$image_dim
  shift <- spec$shift
  mass <- rowSums(s1$H)
  kept <- which(mass >= control$keep * max(mass))
  if (length(kept) < rank) kept <- sort(order(mass, decreasing = TRUE)[
    seq_len(rank)])
  # a shift-invariant atom absorbs the constant background of the images;
  # take it (the atom's median) off so that stage 2 matches the objects
  atoms <- apply(s1$W[, kept, drop = FALSE], 2, function(w) {
    fg <- pmax(w - stats::median(w), 0)
    if (any(fg > 0)) fg else w
  })
  # stage 2 is cheap (its data are the few atoms) but has bad local minima
  # when two starting atoms are copies of one shape: more starts, each from
  # `rank` of the atoms
  spec2 <- spec
  spec2$instances <- NULL
  spec2$seed_atoms <- TRUE
  s2 <- run_pipeline(variant_of("shift"), atoms, rank, "random", control,
                     nrun = 3L * spec$nrun, spec = spec2)
  m <- ncol(s1$H)
  nk <- length(kept)
  # term (image j, stage-1 atom l, shape t): [rho1 rho2, g1 o g2]
  grid <- expand.grid(t = seq_len(rank), l = seq_len(nk), j = seq_len(m))
  coef <- s1$H[cbind(kept[grid$l], grid$j)] * s2$H[cbind(grid$t, grid$l)]
  g <- compose_shifts(s1$G[cbind(kept[grid$l], grid$j)],
                      s2$G[cbind(grid$t, grid$l)], image_dim, shift)
  # each stage-1 atom is an instance of its strongest shape
  assigned <- grid$t == apply(s2$H, 2, which.max)[grid$l]
  terms <- data.frame(image = grid$j, atom = grid$t, stage1_atom = kept[grid$l],
                      coefficient = coef, g = g, assigned = assigned)
  ca <- coef[assigned]
  significant <- ca[ca >= 0.1 * max(ca)]
  threshold <- control$instance_threshold * stats::median(significant)
  # H and G: each (atom, image)'s strongest term
  best <- terms[order(terms$image, terms$atom, -terms$coefficient), ]
  best <- best[!duplicated(best[c("image", "atom")]), ]
  H <- matrix(0, rank, m)
  G <- matrix(0L, rank, m)
  H[cbind(best$atom, best$image)] <- best$coefficient
  G[cbind(best$atom, best$image)] <- as.integer(best$g)
  stage <- function(s, data_cols) {
    list(W = s$W, H = s$H, g = s$G, loss = s$loss, iterations = s$iterations,
         status = s$status, stop = s$stop, restart_loss = s$run_loss,
         kept = data_cols)
  }
  status <- if (s1$status == "numerical_error" ||
                s2$status == "numerical_error") "numerical_error"
            else s1$status
  list(W = s2$W, H = H, G = G, loss = s1$loss, iterations = s1$iterations,
       status = status, run_loss = s1$run_loss, stop = s1$stop,
       stages = list(stage(s1, kept), stage(s2, NULL)), terms = terms,
       instance_threshold = threshold)
}

# g1 o g2: the shift by g2 followed by g1 (addition in the group).
compose_shifts <- function(g1, g2, image_dim, shift) {
  r <- image_dim[1]
  s <- image_dim[2]
  if (shift == "circular1d") return(as.integer((g1 + g2) %% (r * s)))
  as.integer((g1 %% r + g2 %% r) %% r + r * ((g1 %/% r + g2 %/% r) %% s))
}

# 0-based shift indices -> list(row = , col = ) offset matrices.
shift_offsets <- function(g, image_dim, dimnames = NULL) {
  row <- g %% image_dim[1]
  col <- g %/% image_dim[1]
  storage.mode(row) <- storage.mode(col) <- "integer"
  dimnames(row) <- dimnames(col) <- dimnames
  list(row = row, col = col)
}

# Validation ------------------------------------------------------------------

# A dense nonnegative image matrix with no all-zero image.
check_images <- function(x, arg = rlang::caller_arg(x),
                         call = rlang::caller_env()) {
  x <- check_data(x, arg = arg, call = call)
  if (inherits(x, "dgCMatrix")) x <- as.matrix(x)
  zero <- which(colSums(x != 0) == 0)
  if (length(zero)) {
    abort_nmfkit(c("Every image (column) of {.arg {arg}} must have a nonzero pixel.",
                   "x" = "{length(zero)} image{?s} {?is/are} all zero: column{?s} {utils::head(zero, 5)}{if (length(zero) > 5) ', ...'}.",
                   "i" = "An all-zero image has no shift to find; drop it."),
                 "zero", call = call)
  }
  x
}

check_shift_image_dim <- function(image_dim, n_pixels,
                                  arg = rlang::caller_arg(image_dim),
                                  call = rlang::caller_env()) {
  if (is.null(image_dim)) {
    abort_nmfkit(c("{.arg {arg}} must give the image size c(rows, columns).",
                   "x" = "It is missing and {.arg x} has no {.field image_dim} attribute."),
                 "image_dim", call = call)
  }
  check_image_dim(image_dim, n_pixels, arg = arg, call = call)
}

check_instances <- function(instances, rank, n_pixels,
                            arg = rlang::caller_arg(instances),
                            call = rlang::caller_env()) {
  if (is_number(instances) && instances == round(instances) &&
      instances >= 1 && instances < rank) {
    abort_nmfkit(c("{.arg {arg}} must be at least {.arg rank} ({rank}): it counts object instances, shapes with multiplicity.",
                   "x" = "It is {instances}."),
                 "instances", call = call)
  }
  check_count(instances, min = rank, max = n_pixels, arg = arg, call = call,
              what = "instances")
}

# One row per (image, atom) term of a fit: image, atom, coefficient and shift
# index g; two-stage fits store their composed terms instead.
shift_terms <- function(object) {
  if (!is.null(object$terms)) return(object$terms)
  data.frame(image = rep(seq_len(ncol(object$H)), each = object$rank),
             atom = rep(seq_len(object$rank), ncol(object$H)),
             coefficient = as.vector(object$H), g = as.vector(object$g))
}
