"""The Table I pipeline of the joint-NMF paper written with scikit-learn, as
the paper's code runs it (re-implemented from specs/joint.md, not copied):
unit-norm columns with the 5% rule, NMF(n_components=k) with sklearn's
defaults (CD solver, NNDSVDa, tol 1e-4, max_iter 200), Monte Carlo p-bar with
K = 1000 Python random.uniform draws per component, and the per-row Chamfer
distance in float32 (chamferdist 1.0.0's computation, done here in numpy
because torch is not installed).

Usage: python3 joint_sklearn.py swimmer.csv trials seed
Prints: seconds, then the mean of each of the 6 + 6 columns.
"""
import random
import sys
import time
import warnings

import numpy as np
from sklearn.decomposition import NMF

warnings.filterwarnings("ignore")


def normalize(x):
    nu = np.linalg.norm(x, axis=0)
    avg = nu.mean()
    out = np.zeros_like(x, dtype=float)
    keep = nu >= 0.05 * avg
    out[:, keep] = x[:, keep] / nu[keep]
    return out


def sim(x1, x2, k=10, K=1000):
    y = np.hstack([normalize(x1), normalize(x2)])
    model = NMF(n_components=k)
    model.fit_transform(y)
    s = model.components_
    n1 = x1.shape[1]
    s1, s2 = s[:, :n1], s[:, n1:]
    p = np.zeros(k)
    for i in range(k):
        si = max(s1[i].max(), s2[i].max())
        acc = 0.0
        for _ in range(K):
            t = random.uniform(0, si)
            acc += np.mean(s1[i] > t) - np.mean(s2[i] > t)
        p[i] = acc / K
    return np.abs(p).sum()


def chamfer_code(x1, x2):
    a = normalize(x1).astype(np.float32)
    b = normalize(x2).astype(np.float32)
    d = (a[:, :, None] - b[:, None, :]) ** 2  # m x n1 x n2
    return float((d.min(axis=2).sum(axis=1) + d.min(axis=1).sum(axis=1)).mean())


def main():
    x = np.loadtxt(sys.argv[1], delimiter=",")
    trials = int(sys.argv[2])
    rng = np.random.default_rng(int(sys.argv[3]))
    random.seed(int(sys.argv[3]))
    res = []
    t0 = time.time()
    for _ in range(trials):
        lam = rng.choice([0.1, 1, 10, 100])
        perm = rng.permutation(x.shape[1])
        sub = np.delete(x, rng.choice(x.shape[1], 26, replace=False), axis=1)
        noise = rng.random(x.shape)
        others = [x, x[:, perm], lam * x, sub, x + noise, noise]
        res.append([sim(x, o) for o in others] +
                   [chamfer_code(x, o) for o in others])
    secs = time.time() - t0
    print(secs)
    print(" ".join("%.4f" % v for v in np.mean(res, axis=0)))


if __name__ == "__main__":
    main()
