"""scikit-learn's KL multiplicative updates for bench/kl.R.

    python3 kl_sklearn_run.py X.mtx W.csv H.csv ITERS [--trace TARGET BUDGET]

X (samples x features, Matrix Market, read with scipy.io.mmread as CSR),
starting W (samples x k) and H (k x features) as CSV. Runs
NMF(init="custom", solver="mu", beta_loss="kullback-leibler", tol=0,
max_iter=ITERS) and prints
    RESULT <seconds of fit_transform> <iterations> <KL divergence> <peak RSS MB>
With --trace it runs one iteration per fit_transform call instead (each
iteration depends on W and H only, so the chain is the same run), prints
    TRACE <iteration> <KL divergence> <cumulative seconds of the fits>
after each, and stops at the first iteration at or below TARGET, at ITERS,
or when the fits have taken BUDGET seconds. The divergence is sklearn's
_beta_divergence(X, W, H, 1), evaluated outside the timed calls.
"""

import resource
import sys
import time
import warnings

import numpy as np
import scipy.io
from sklearn.decomposition import NMF
from sklearn.decomposition._nmf import _beta_divergence


def fit(x, w, h, iters):
    model = NMF(n_components=w.shape[1], init="custom", solver="mu",
                beta_loss="kullback-leibler", max_iter=iters, tol=0.0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # ConvergenceWarning at max_iter
        t0 = time.perf_counter()
        w = model.fit_transform(x, W=w, H=h)
        t = time.perf_counter() - t0
    return w, model.components_, t


def main(argv):
    x = scipy.io.mmread(argv[0]).tocsr().astype(np.float64)
    w = np.loadtxt(argv[1], delimiter=",", ndmin=2)
    h = np.loadtxt(argv[2], delimiter=",", ndmin=2)
    iters = int(argv[3])
    if len(argv) > 4 and argv[4] == "--trace":
        target, budget = float(argv[5]), float(argv[6])
        spent, n = 0.0, 0
        while n < iters:
            w, h, t = fit(x, w, h, 1)
            spent += t
            n += 1
            d = _beta_divergence(x, w, h, 1)
            print("TRACE %d %.17g %.6f" % (n, d, spent), flush=True)
            if d <= target or spent > budget:
                break
    else:
        w, h, spent = fit(x, w, h, iters)
        n = iters
    d = _beta_divergence(x, w, h, 1)
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
    print("RESULT %.6f %d %.17g %.1f" % (spent, n, d, rss))


if __name__ == "__main__":
    main(sys.argv[1:])
