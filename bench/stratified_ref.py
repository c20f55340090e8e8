"""The authors' Stratified-NMF algorithm in numpy, written from
specs/stratified.md section 1.3 (the reference code's order: Jacobi W/H
update, v updated M times first, loss recorded before each iteration).
Samples are rows, as in the paper.

Usage: python3 stratified_ref.py DIR ITERS
DIR holds A_<i>.txt (m_i x n), W_<i>.txt (m_i x r), H.txt (r x n),
V.txt (s x n) as whitespace-separated text. Prints the CPU and elapsed seconds
spent in the iterations and writes DIR/loss.txt and the final factors.
"""
import sys
import time

import numpy as np


def loss(A, V, W, H):
    return np.sqrt(sum(np.linalg.norm(A[i] - np.outer(np.ones(A[i].shape[0]),
                                                       V[i]) - W[i] @ H) ** 2
                       for i in range(len(A))))


def run(A, V, W, H, iters, M=2, tol=1e-9):
    s = len(A)
    colsum = [a.T @ np.ones(a.shape[0]) for a in A]
    losses = np.zeros(iters)
    for k in range(iters):
        losses[k] = loss(A, V, W, H)
        for _ in range(M):
            for i in range(s):
                m = A[i].shape[0]
                V[i] = V[i] * colsum[i] / (V[i] * m + H.T @ (W[i].T @ np.ones(m))
                                           + tol)
        hht = H @ H.T
        W_new = [W[i] * (A[i] @ H.T) /
                 (W[i] @ hht + np.outer(np.ones(A[i].shape[0]), H @ V[i]) + tol)
                 for i in range(s)]
        num = sum(W[i].T @ A[i] for i in range(s))
        den = sum(np.outer(W[i].T @ np.ones(A[i].shape[0]), V[i]) +
                  W[i].T @ W[i] @ H for i in range(s))
        H = H * num / (den + tol)
        W = W_new
    return V, W, H, losses


def main():
    d, iters = sys.argv[1], int(sys.argv[2])
    V = np.loadtxt(f"{d}/V.txt", ndmin=2)
    s = V.shape[0]
    A = [np.loadtxt(f"{d}/A_{i}.txt", ndmin=2) for i in range(s)]
    W = [np.loadtxt(f"{d}/W_{i}.txt", ndmin=2) for i in range(s)]
    H = np.loadtxt(f"{d}/H.txt", ndmin=2)
    t0, c0 = time.perf_counter(), time.process_time()
    V, W, H, losses = run(A, V, W, H, iters)
    print(time.process_time() - c0)
    print(time.perf_counter() - t0)
    np.savetxt(f"{d}/loss.txt", losses)
    np.savetxt(f"{d}/V_out.txt", V)


if __name__ == "__main__":
    main()
