# The losses nmf() knows and nmf()'s `loss` argument resolved to one of
# them (the loss objects: loss.R; each loss in its own file).

# The losses nmf() knows: a name to its constructor, the names it also
# answers to and the beta it is (a number given as `loss` picks the loss of
# that beta; "beta" takes any other number and no name). A new loss is its
# own file with its constructor and one line here.
loss_registry <- function() {
  list(
    frobenius = list(make = frobenius_loss, beta = 2, aliases = "euclidean"),
    kl = list(make = kl_loss, beta = 1,
              aliases = c("kullback-leibler", "poisson")),
    is = list(make = is_loss, beta = 0, aliases = "itakura-saito"),
    beta = list(make = beta_loss, numeric = TRUE)
  )
}

# nmf()'s `loss` as a loss object: a name of loss_registry() or an alias
# ("frobenius", "kl", "is", ...), or a finite number, the beta of a
# beta-divergence (2, 1 and 0 are the named losses).
check_loss <- function(loss, arg = rlang::caller_arg(loss),
                       call = rlang::caller_env()) {
  if (inherits(loss, "nmfkit_loss")) return(loss)
  reg <- loss_registry()
  if (is.character(loss) && length(loss) == 1L && !is.na(loss)) {
    key <- tolower(loss)
    for (nm in names(reg)) if (key %in% reg[[nm]]$aliases) key <- nm
    if (key %in% names(reg) && !isTRUE(reg[[key]]$numeric)) {
      return(reg[[key]]$make())
    }
  }
  if (is.numeric(loss) && length(loss) == 1L && !is.na(loss)) {
    if (!is.finite(loss)) {
      abort_nmfkit(c("{.arg {arg}} must be a finite number (the beta of the beta-divergence) or a loss name.",
                     "x" = "It is {describe_value(loss)}."),
                   "loss", call = call, value = loss)
    }
    for (nm in names(reg)) {
      if (identical(reg[[nm]]$beta, as.double(loss))) return(reg[[nm]]$make())
    }
    return(reg$beta$make(loss))
  }
  named <- names(reg)[!vapply(reg, function(r) isTRUE(r$numeric), logical(1))]
  check_choice(loss, named, arg = arg, call = call, what = "loss")
}

# The loss object of a fit (or of a cross-validation result) from what it
# stores: its `beta`, or for a loss outside the beta family its
# `loss_function`; fits stored before either are Frobenius fits.
fit_loss <- function(object) {
  if (!is.null(object[["beta"]])) return(check_loss(object[["beta"]]))
  check_loss(object[["loss_function"]] %||% "frobenius")
}

# nmf()'s method under a loss: one the loss allows, with its aliases
# ("cd" is HALS under Frobenius, Newton coordinate descent under KL;
# "auto" the fastest measured, bench/README.md) resolved.
resolve_loss_method <- function(method, loss, call = rlang::caller_env()) {
  if (!method %in% loss$methods) {
    valid <- loss$methods
    abort_nmfkit(c("{.arg method} {.val {method}} does not fit the {loss$label} loss.",
                   "i" = "Under this loss use {.or {.val {valid}}}."),
                 "method", call = call, value = method)
  }
  if (method %in% names(loss$solver)) loss$solver[[method]] else method
}

