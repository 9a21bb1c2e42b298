"""select_n_topics with warm_start=True (the scan before issue 25's change) against the default
own starts, in one process, on a sample of 20 Newsgroups' train split (seed 0), beside one K = 20
fit: per K the iterations, seconds, log posterior per word, log BF, dispersion and NPMI.

    python bench/select_warm_vs_own.py 2000 5:26:5 own,warm
"""
import sys, time, warnings, os
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import numpy as np
import mixbayes as mb
from _real_corpora import load, completion
n = int(sys.argv[1]); a, b, c = map(int, sys.argv[2].split(":"))
corpus, split = load("twenty_newsgroups")
train = completion(corpus.counts, split)[0]
if n < train.shape[0]:
    rows = np.random.default_rng(0).choice(train.shape[0], n, replace=False)
    train = train[np.sort(rows)]
    train = train[:, np.flatnonzero(np.asarray(train.sum(0)).ravel() > 0)]
words = train.sum()
warnings.simplefilter("ignore")
mb.TopicModel(5, max_iter=3).fit(train)  # compile
t = time.perf_counter(); one = mb.TopicModel(20).fit(train); one_s = time.perf_counter() - t
print(f"{train.shape} one K=20 fit {one_s:.1f} s {one.n_iter_} it", flush=True)
for warm in sys.argv[3].split(","):
    warm = warm == "warm"  # "own": the default
    t = time.perf_counter()
    sel = mb.select_n_topics(train, range(a, b, c), scan_all=True, verbose=0, coherence="npmi", warm_start=warm)
    total = time.perf_counter() - t
    for r in sel.table:
        print(f"  warm={warm} K={r['k']:3d} it={r['n_iter']:4d} s={r['seconds']:6.1f} L/word={r['log_posterior']/words:.6f} logBF={r['log_bayes_factor']:.1f} disp={r['dispersion']:.4f} npmi={r['coherence']:.4f}", flush=True)
    print(f"warm={warm}: total {total:.1f} s = {total/one_s:.1f} x one K=20 fit; best K {sel.best_k}; load {os.getloadavg()[0]:.1f}", flush=True)
