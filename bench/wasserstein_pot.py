"""Wasserstein NMF (Rolet, Cuturi & Peyre 2016) written with POT and scipy.

The peer of nmfkit::nmf_wasserstein() in bench/wasserstein.R: the same
algorithm (dictionary step then weights step, each dual solved by L-BFGS with
history 10, max |grad| <= gtol, at most maxiter iterations, warm-started G),
with the entropic semi-dual built from POT's NegEntropy.max_Omega (the
max-shifted log-sum-exp of ot.smooth) and scipy's L-BFGS-B.

Usage: python3 wasserstein_pot.py DIR   (DIR holds x.csv, cost.csv, d0.csv,
l0.csv, params.csv written by bench/wasserstein.R; writes d.csv, l.csv,
result.csv)
"""
import os
import sys
import time

import numpy as np
import ot.smooth
from scipy.optimize import minimize
from scipy.special import logsumexp, softmax


def semidual(X, G, C, regul, eps):
    """sum_i OT*_eps(x_i, g_i) and its gradient, column by column with POT."""
    val = 0.0
    grad = np.zeros_like(G)
    for i in range(X.shape[1]):
        x = X[:, i]
        pos = x > 0
        # max_Omega(g - C[:, a], x_a) = eps * LSE_b((g_b - C_ba)/eps) - eps log x_a
        v, P = regul.max_Omega(G[:, [i]] - C[:, pos], x[pos])
        val += x[pos] @ v + eps * x[pos].sum()
        grad[:, i] = P @ x[pos]
    return val, grad


def solve(f, G0, gtol, maxiter):
    shape = G0.shape

    def fun(g):
        v, gr = f(g.reshape(shape))
        return v, gr.ravel()

    res = minimize(fun, G0.ravel(), jac=True, method="L-BFGS-B",
                   options={"maxcor": 10, "gtol": gtol, "ftol": 0.0,
                            "maxiter": maxiter, "maxfun": 10 * maxiter})
    return res.x.reshape(shape), res.fun, res.nit


def wnmf(X, C, D, L, eps, rho1, rho2, outer, gtol, maxiter):
    regul = ot.smooth.NegEntropy(gamma=eps)
    Gd = np.zeros_like(X)
    Gl = np.zeros_like(X)
    iters = []
    obj = []
    for _ in range(outer):
        def fd(G):
            v, gr = semidual(X, G, C, regul, eps)
            Z = -(G @ L.T) / rho2
            v += rho2 * logsumexp(Z, axis=0).sum()
            gr -= softmax(Z, axis=0) @ L
            return v, gr
        Gd, _, nd = solve(fd, Gd, gtol, maxiter)
        D = softmax(-(Gd @ L.T) / rho2, axis=0)

        def fl(G):
            v, gr = semidual(X, G, C, regul, eps)
            Z = -(D.T @ G) / rho1
            v += rho1 * logsumexp(Z, axis=0).sum()
            gr -= D @ softmax(Z, axis=0)
            return v, gr
        Gl, fval, nl = solve(fl, Gl, gtol, maxiter)
        L = softmax(-(D.T @ Gl) / rho1, axis=0)
        iters += [nd, nl]
        obj.append(-fval + rho2 * np.sum(D * np.log(D)))
    return D, L, iters, obj


def main(folder):
    rd = lambda name: np.loadtxt(os.path.join(folder, name), delimiter=",",
                                 ndmin=2)
    X, C, D0, L0 = rd("x.csv"), rd("cost.csv"), rd("d0.csv"), rd("l0.csv")
    p = dict(np.loadtxt(os.path.join(folder, "params.csv"), delimiter=",",
                        dtype=str))
    t0 = time.perf_counter()
    c0 = time.process_time()
    D, L, iters, obj = wnmf(X, C, D0, L0, float(p["epsilon"]),
                            float(p["rho1"]), float(p["rho2"]),
                            int(float(p["outer"])), float(p["gtol"]),
                            int(float(p["maxiter"])))
    elapsed = time.perf_counter() - t0
    cpu = time.process_time() - c0
    np.savetxt(os.path.join(folder, "d.csv"), D, delimiter=",")
    np.savetxt(os.path.join(folder, "l.csv"), L, delimiter=",")
    with open(os.path.join(folder, "result.csv"), "w") as fh:
        fh.write("seconds,cpu,lbfgs_iterations,objective\n")
        fh.write(f"{elapsed},{cpu},{sum(iters)},{obj[-1]}\n")


if __name__ == "__main__":
    main(sys.argv[1])
