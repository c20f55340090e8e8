# scikit-learn's MiniBatchNMF on bench/ooc.R's 100,000-column slice:
# samples as rows (the slice's compressed columns are the CSR rows of its
# transpose), rank 20, `passes` passes over the data, random start; prints
# RESULT {"passes", "seconds", "error"} with the relative Frobenius error of
# the W, H it returns (from Gram matrices: the dense product would be 3e9
# entries).
import json
import resource
import sys
import time

import numpy as np
import scipy.sparse as sp
from sklearn.decomposition import MiniBatchNMF

raw, passes = sys.argv[1], int(float(sys.argv[2]))
m, n = (int(v) for v in open(f"{raw}/dim.txt").read().split())
indptr = np.fromfile(f"{raw}/indptr.bin", dtype=np.int32)
indices = np.fromfile(f"{raw}/indices.bin", dtype=np.int32)
data = np.fromfile(f"{raw}/data.bin", dtype=np.float64)
x = sp.csr_matrix((data, indices, indptr), shape=(n, m))  # samples x features

model = MiniBatchNMF(n_components=20, init="random", random_state=1,
                     max_iter=passes, tol=0, max_no_improvement=None)
start = time.perf_counter()
h = model.fit_transform(x)  # n x k (our H')
seconds = time.perf_counter() - start
w = model.components_  # k x m (our W')
x2 = x.multiply(x).sum()
cross = np.sum((x @ w.T) * h)
gram = np.sum((h.T @ h) * (w @ w.T))
error = np.sqrt(max(x2 - 2 * cross + gram, 0) / x2)
rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print("RESULT", json.dumps({"passes": passes, "seconds": seconds,
                            "error": float(error), "rss_mb": rss}))
