# Fixtures for test-nmf-stratified.R.

# The authors' synthetic problem (datasets.get_synthetic_data, transposed):
# s strata of m samples over n features, one shared basis, shifts
# v_i ~ U[i - 1, i).
stratified_synthetic <- function(s = 4, m = 100, n = 100, r = 5) {
  basis <- matrix(stats::runif(n * r), n, r)
  x <- lapply(seq_len(s), function(i) {
    basis %*% matrix(stats::runif(r * m), r, m) + (stats::runif(n) + (i - 1))
  })
  names(x) <- paste0("s", seq_len(s))
  x
}

# A small problem with zeros (for the sparse path) and named dims.
stratified_small <- function(n = 12, m = c(a = 8, b = 10, c = 6), r = 2,
                             zeros = 0.3) {
  basis <- matrix(stats::runif(n * r), n, r)
  x <- lapply(seq_along(m), function(i) {
    xi <- basis %*% matrix(stats::runif(r * m[i]), r, m[i]) +
      i * (seq_len(n) %% 3 == i - 1)
    xi[stats::runif(length(xi)) < zeros] <- 0
    dimnames(xi) <- list(paste0("f", seq_len(n)),
                         paste0(names(m)[i], seq_len(m[i])))
    xi
  })
  names(x) <- names(m)
  x
}

# ||X_i - v_i 1' - W H_i|| summed over strata, from dense residuals.
stratified_direct_loss <- function(fit, x) {
  r <- as.matrix(x) - fit$W %*% fit$H - fit$V[, fit$strata]
  sqrt(sum(r^2))
}

# The paper's California housing strata (datasets.get_california_housing_
# dataset) rebuilt from MMAC's block groups: the six variables as features,
# strata on median income (low < 1.5, 4.5 < medium < 5, high > 10).
california_strata <- function() {
  env <- new.env()
  utils::data("CaliforniaHousing", package = "MMAC", envir = env)
  ch <- env$CaliforniaHousing
  d <- data.frame(MedInc = ch$MedianIncome, HouseAge = ch$Age,
                  AveRooms = ch$Rooms / ch$Households,
                  AveBedrms = ch$Bedrooms / ch$Households,
                  Population = ch$Population,
                  AveOccup = ch$Population / ch$Households)
  inc <- d$MedInc
  g <- ifelse(inc < 1.5, "low",
              ifelse(inc > 4.5 & inc < 5, "medium",
                     ifelse(inc > 10, "high", NA)))
  keep <- !is.na(g)
  list(x = t(as.matrix(d[keep, ])),
       strata = factor(g[keep], levels = c("low", "medium", "high")))
}
