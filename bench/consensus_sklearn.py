# scikit-learn NMF the way cNMF runs it (cnmf.py: NMF(init="random",
# solver="mu", beta_loss="frobenius", tol=1e-4, max_iter=1000,
# random_state=seed), one fit per seed) on bench/consensus.R's matrix
# (cells as rows); times `runs` seeds per rank and prints RESULT
# {"per_run": [mean seconds per run for each rank], "rss_mb"}.
import json
import resource
import sys
import time

import numpy as np
from sklearn.decomposition import NMF

path, n, m, runs, ranks = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), \
    int(sys.argv[4]), [int(r) for r in sys.argv[5].split(",")]
x = np.fromfile(path, dtype=np.float64).reshape(n, m)  # cells x genes
per_run = []
for k in ranks:
    start = time.perf_counter()
    for seed in range(runs):
        NMF(n_components=k, init="random", solver="mu", beta_loss="frobenius",
            tol=1e-4, max_iter=1000, random_state=seed).fit_transform(x)
    per_run.append((time.perf_counter() - start) / runs)
rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print("RESULT", json.dumps({"per_run": per_run, "rss_mb": rss}))
