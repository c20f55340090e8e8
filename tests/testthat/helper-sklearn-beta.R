# scikit-learn's multiplicative updates under the beta-divergences on one
# 30 x 20 problem (fixtures/sklearn-beta, made by bench/kl_sklearn.py, whose
# header says what was checked in sklearn). sklearn ran on x as it is, so its
# W (30 x 3) is our W and its H (3 x 20) our H, each iteration updating W
# then H, as nmfkit does.
sklearn_beta_fixture <- function(tag) {
  dir <- test_path("fixtures", "sklearn-beta")
  read <- function(name) {
    unname(as.matrix(utils::read.csv(file.path(dir, paste0(name, ".csv")),
                                     header = FALSE)))
  }
  div <- utils::read.csv(file.path(dir, "divergence.csv"))
  list(x = read("x"), W0 = read("W0"), H0 = read("H0"),
       W = read(paste0("W_", tag)), H = read(paste0("H_", tag)),
       beta = div$beta[div$tag == tag],
       divergence = div$divergence[div$tag == tag])
}

# The Fevotte-Idier multiplicative update (W, then H) written out in R, and
# the beta-divergence sum d_beta(x | WH): the fixture's own check.
mu_beta_reference <- function(x, W, H, beta, iterations) {
  gamma <- if (beta < 1) 1 / (2 - beta) else if (beta > 2) 1 / (beta - 1) else 1
  for (i in seq_len(iterations)) {
    V <- W %*% H
    W <- W * (((x * V^(beta - 2)) %*% t(H)) / (V^(beta - 1) %*% t(H)))^gamma
    V <- W %*% H
    H <- H * ((t(W) %*% (x * V^(beta - 2))) / (t(W) %*% V^(beta - 1)))^gamma
  }
  list(W = W, H = H)
}

beta_divergence_reference <- function(x, V, beta) {
  if (beta == 1) return(sum(x * log(x / V) - x + V))
  if (beta == 0) return(sum(x / V - log(x / V) - 1))
  sum((x^beta + (beta - 1) * V^beta - beta * x * V^(beta - 1)) /
        (beta * (beta - 1)))
}
