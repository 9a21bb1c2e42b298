"""Issue 25 check: does select_n_topics recover K on a 20NG-sized simulated corpus?

.venv/bin/python bench/select_sim_check.py [n_docs] [vocab] [true_K] [Ks...]
TOPIC_PRIOR=<alpha or unset> NUMBA_NUM_THREADS=1 .venv/bin/python -W ignore bench/select_sim_check.py ...
Topics ~ Dir(0.05) over p words, weights ~ Dir(1/K0), lengths ~ Poisson(130), seed 0.
Prints the library's log Bayes factor per K (logBF) and its parts: L (log posterior kernel),
wdet / ddet (-1/2 sum of floored log|-H| of the word / document blocks), twopi, topicnorm
(Dir(alpha+1) normalisers), docnorm (Dir(1/K+1) normalisers). Experimental columns, not the
library's: nefML_minus_null (topics' Laplace in softmax coordinates, Dir(alpha) normaliser),
corr (sum over topic-word cells of the 1-D Gamma-marginal Laplace error, s = xhat + alpha),
simplex+corr and nef+corr (logBF and the softmax version with that correction).
"""
import os, sys, time
import numpy as np
import scipy.sparse as sp
from scipy.special import gammaln
import mixbayes as mb
from mixbayes.topics import evidence, TopicModel
from mixbayes.topics.selection import SELECTION_TOL

n = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
p = int(sys.argv[2]) if len(sys.argv) > 2 else 5000
K0 = int(sys.argv[3]) if len(sys.argv) > 3 else 15
Ks = [int(k) for k in sys.argv[4:]] or [5, 10, 15, 20, 25]
rng = np.random.default_rng(0)
theta = rng.dirichlet(np.full(p, 0.05), size=K0)  # sparse topics
omega = rng.dirichlet(np.full(K0, 1.0 / K0), size=n)
m = rng.poisson(130, size=n)
rows = [rng.multinomial(m[i], omega[i] @ theta) for i in range(n)]
X = sp.csr_matrix(np.array(rows))
tp = os.environ.get("TOPIC_PRIOR")  # the fits' topic_prior; unset: TopicModel's 1/(Kp)
print(f"n={n} p={p} true K={K0} tokens={X.sum()} topic_prior={tp or '1/(Kp)'}", flush=True)

def parts(model, X):
    counts, th, om = evidence._training_problem(model, X)
    c = 1.0 / model.n_components
    a = model.topic_prior_
    words, docs = evidence.block_log_determinants(counts, th, om, a, c)
    share = evidence.document_share(counts, th, om, c)
    P, K = th.shape
    L = share[0] + a * np.log(th).sum()
    # NEF (softmax) coordinates for the topics: |-H_eta| = |J|^2 |-H_theta| per word block,
    # J = diag(theta) less the constraint's rank one (-log lambda_k per topic), and the prior
    # normaliser of Dir(alpha) (its kernel alpha*log theta, Jacobian included, is already in L)
    words_nef = words + 2 * np.log(th).sum(1)
    # lambda_k = t_k + p alpha, t_k the topic's expected token count
    q = evidence._word_probabilities(counts, th, om)
    docs_of = np.repeat(np.arange(counts.shape[0]), np.diff(counts.indptr))
    r = counts.data / q
    t_k = (om[docs_of] * th[counts.indices] * r[:, None]).sum(0)
    lam_k = t_k + P * a
    nef = (L - 0.5 * (np.maximum(words_nef, -10).sum() - np.log(lam_k).sum())
           + 0.5 * (K * (P - 1) + share[3]) * np.log(2 * np.pi)
           + K * (gammaln(P * a) - P * gammaln(a))
           - 0.5 * share[1] + share[2] * (gammaln(K + 1) - K * gammaln(1 + 1 / K)))
    # per-cell Laplace error of a Gamma-shaped marginal (shape s = xhat + alpha):
    # log(exact / Laplace) = lgamma(s+1) - (s+1/2) log s + s - 1/2 log 2pi  (-> -1/2 log(2 pi s), s -> 0)
    R = sp.csr_matrix((r, counts.indices, counts.indptr), shape=(counts.shape[0], P))
    xhat = th * (R.T @ om)
    s_ = xhat + a
    corr = float((gammaln(s_ + 1) - (s_ + 0.5) * np.log(s_) + s_ - 0.5 * np.log(2 * np.pi)).sum())
    return dict(corr=corr, nefML_minus_null=nef - evidence.log_null(np.bincount(counts.indices, weights=counts.data, minlength=P), counts.shape[0]),
                L=L, wdet=-0.5 * np.maximum(words, -10).sum(), ddet=-0.5 * share[1],
                twopi=0.5 * (K * P + share[3]) * np.log(2 * np.pi),
                topicnorm=K * (gammaln(P * (a + 1)) - P * gammaln(a + 1)),
                docnorm=share[2] * (gammaln(K + 1) - K * gammaln(1 + 1 / K)))

for K in Ks:
    t = time.perf_counter()
    model = TopicModel(K, tol=SELECTION_TOL, random_state=0,
                       topic_prior=float(tp) if tp else None).fit(X)
    ev = evidence.topic_evidence(model, X)
    pr = parts(model, X)
    pr["simplex+corr"] = ev.log_bayes_factor + pr["corr"]
    pr["nef+corr"] = pr["nefML_minus_null"] + pr["corr"]
    print(f"K={K:3d} logBF={ev.log_bayes_factor:12.1f} disp={ev.dispersion:.4f} p={ev.p_value:.3g} "
          f"iter={model.n_iter_} {time.perf_counter() - t:.0f}s | "
          + " ".join(f"{k}={v:.0f}" for k, v in pr.items()), flush=True)
