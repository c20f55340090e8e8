"""scikit-learn's multiplicative updates under the beta-divergences, as
reference numbers for tests/testthat/test-sklearn-beta.R (issue 25).

Regenerate the fixtures (needs Debian python3-sklearn, python3-numpy; the
test itself needs no Python):

    /usr/bin/python3 bench/kl_sklearn.py tests/testthat/fixtures/sklearn-beta

The fixtures were made with scikit-learn 1.2.1 (Debian bookworm); the script
records the version in fixtures/sklearn-beta/README.

The problem: x 30 x 20, strictly positive integer counts (1 + Poisson of a
rank-3 mean, numpy default_rng(25)), starts W0 30 x 3 and H0 3 x 20 with
entries in {1/8, 2/8, ..., 2}. Every input is exactly representable in a
short decimal, so R reads the very same doubles. Rank 3, max_iter = 50,
tol = 0 (exactly 50 iterations, no stopping test), no penalty, for beta =
"kullback-leibler" (1), "itakura-saito" (0) and 1.5.

What was checked in sklearn/decomposition/_nmf.py (1.2.1),
_fit_multiplicative_update():

* Order. Each iteration updates sklearn's W (all of it, one multiplicative
  step) and then sklearn's H with the new W. sklearn's X is samples x
  features and X ~ W H; nmfkit's engine updates its W (features x k) first.
  So this script hands sklearn OUR x as it is (30 features x 20 samples,
  not t(x)): sklearn's W is then our W and its H our H, and the order of
  the half steps is the same as nmfkit's. Handing it t(x) would update our
  H first; after 50 iterations that run differs from this one by far more
  than 1e-6 (the script prints the gap).
* Exponent. gamma(beta) = 1/(2 - beta) for beta < 1, 1 for 1 <= beta <= 2,
  1/(beta - 1) for beta > 2 (Fevotte & Idier 2011), applied to the whole
  ratio numerator/denominator: W <- W * (num / den)^gamma.
* Epsilons. EPSILON = float32 eps (1.19e-7) replaces exact zeros of WH
  (and of the denominators), and for beta <= 1 entries of W (beta < 1) and
  H (beta <= 1) below float64 eps (2.2e-16) are set to 0 after each update.
  With x > 0 and positive starts none of these fires: WH and the
  denominators stay positive and the smallest factor entry (printed below
  and in README) stays far above 2.2e-16. For KL, the H update's column sums
  of W are replaced by 1 when 0 (never here). _beta_divergence() drops
  entries of X <= EPSILON (none here). So the fixture is the plain
  Fevotte-Idier update, with nothing of sklearn's guards in it.

Files written (plain CSV, no header, %.17g):
  x.csv (30 x 20), W0.csv (30 x 3), H0.csv (3 x 20),
  W_<tag>.csv, H_<tag>.csv  after 50 iterations, tag = kl, is, beta1.5,
  divergence.csv            tag, beta, divergence of the result,
                            initial divergence, iterations (sklearn's
                            _beta_divergence(X, W, H, beta): sum d(x|WH)
                            with d the beta-divergence, KL unhalved)
  trace.csv                 tag, iteration, divergence after that iteration
  README                    versions, smallest entries, order gap
"""

import os
import sys
import warnings

import numpy as np
import sklearn
from sklearn.decomposition import NMF
from sklearn.decomposition._nmf import _beta_divergence

BETAS = [("kl", "kullback-leibler", 1.0), ("is", "itakura-saito", 0.0),
         ("beta1.5", 1.5, 1.5)]
RANK, MAX_ITER = 3, 50


def problem():
    rng = np.random.default_rng(25)
    m, n = 30, 20
    w_true = rng.gamma(1.0, 2.0, size=(m, RANK))
    h_true = rng.gamma(1.0, 2.0, size=(RANK, n))
    x = 1.0 + rng.poisson(w_true @ h_true).astype(np.float64)
    w0 = rng.integers(1, 17, size=(m, RANK)).astype(np.float64) / 8.0
    h0 = rng.integers(1, 17, size=(RANK, n)).astype(np.float64) / 8.0
    return x, w0, h0


def fit(x, w0, h0, loss, iters):
    model = NMF(n_components=RANK, init="custom", solver="mu",
                beta_loss=loss, max_iter=iters, tol=0.0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # ConvergenceWarning at max_iter
        w = model.fit_transform(x, W=w0.copy(), H=h0.copy())
    return w, model.components_, model.n_iter_


def write(path, a):
    np.savetxt(path, np.atleast_2d(a), fmt="%.17g", delimiter=",")


def main(out):
    os.makedirs(out, exist_ok=True)
    x, w0, h0 = problem()
    write(os.path.join(out, "x.csv"), x)
    write(os.path.join(out, "W0.csv"), w0)
    write(os.path.join(out, "H0.csv"), h0)
    div_rows, trace_rows = [], []
    notes = ["scikit-learn %s, numpy %s" % (sklearn.__version__,
                                            np.__version__),
             "x 30 x 20 in [%g, %g]; rank %d; %d iterations; tol 0"
             % (x.min(), x.max(), RANK, MAX_ITER)]
    for tag, loss, beta in BETAS:
        w, h, it = fit(x, w0, h0, loss, MAX_ITER)
        assert it == MAX_ITER
        write(os.path.join(out, "W_%s.csv" % tag), w)
        write(os.path.join(out, "H_%s.csv" % tag), h)
        d0 = _beta_divergence(x, w0, h0, beta)
        d = _beta_divergence(x, w, h, beta)
        div_rows.append("%s,%.17g,%.17g,%.17g,%d" % (tag, beta, d, d0, it))
        for i in range(1, MAX_ITER + 1):
            wi, hi, _ = fit(x, w0, h0, loss, i)
            trace_rows.append("%s,%d,%.17g" % (
                tag, i, _beta_divergence(x, wi, hi, beta)))
        # the other orientation: sklearn on t(x) updates our H first
        ht, wt, _ = fit(x.T.copy(), h0.T.copy(), w0.T.copy(), loss, MAX_ITER)
        gap = max(np.max(np.abs(wt.T - w) / np.abs(w)),
                  np.max(np.abs(ht.T - h) / np.abs(h)))
        notes.append("%s: divergence %.10g -> %.10g; smallest entry of W %.3g,"
                     " of H %.3g; run on t(x) (H first) differs by %.2g"
                     " (max relative)" % (tag, d0, d, w.min(), h.min(), gap))
        assert min(w.min(), h.min()) > 1e-10
    with open(os.path.join(out, "divergence.csv"), "w") as f:
        f.write("tag,beta,divergence,initial,iterations\n")
        f.write("\n".join(div_rows) + "\n")
    with open(os.path.join(out, "trace.csv"), "w") as f:
        f.write("tag,iteration,divergence\n")
        f.write("\n".join(trace_rows) + "\n")
    with open(os.path.join(out, "README"), "w") as f:
        f.write("Made by bench/kl_sklearn.py (see its header); do not edit.\n")
        f.write("\n".join(notes) + "\n")
    print("\n".join(notes))


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1
         else os.path.join("tests", "testthat", "fixtures", "sklearn-beta"))
