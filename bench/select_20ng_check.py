"""Issue 25 check: select_n_topics' log Bayes factor per K on a 20 Newsgroups train subsample.

TOPIC_PRIOR=<alpha or empty> .venv/bin/python -W ignore bench/select_20ng_check.py [n_docs] [Ks...]
"""
import os, sys, time
import numpy as np
import scipy.io
from mixbayes.topics import evidence, TopicModel
from mixbayes.topics.selection import SELECTION_TOL

root = os.path.join(os.path.dirname(__file__), "..", "..", "shared", "data", "twenty_newsgroups")
n = int(sys.argv[1]) if len(sys.argv) > 1 else 3000
Ks = [int(k) for k in sys.argv[2:]] or [5, 10, 15, 20, 30]
X = scipy.io.mmread(os.path.join(root, "counts.mtx.gz")).tocsr()
split = np.array(open(os.path.join(root, "split.txt")).read().split())
X = X[np.flatnonzero(split == "train")]
X = X[np.diff(X.indptr) > 0]
X = X[np.sort(np.random.default_rng(0).choice(X.shape[0], n, replace=False))]
X = X[:, np.asarray(X.sum(0)).ravel() > 0]
tp = os.environ.get("TOPIC_PRIOR")
print(f"20NG train sample: {X.shape[0]} docs x {X.shape[1]} terms, {int(X.sum())} tokens, "
      f"topic_prior={tp or '1/(Kp)'}", flush=True)
for K in Ks:
    t = time.perf_counter()
    model = TopicModel(K, tol=SELECTION_TOL, random_state=0,
                       topic_prior=float(tp) if tp else None).fit(X)
    ev = evidence.topic_evidence(model, X)
    print(f"K={K:3d} logBF={ev.log_bayes_factor:12.1f} logpost={model.log_posterior_:12.1f} "
          f"disp={ev.dispersion:.4f} iter={model.n_iter_} {time.perf_counter() - t:.0f}s", flush=True)
