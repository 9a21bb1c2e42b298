"""bench_text_real.run_selection's measurement (one K = 20 fit, then select_n_topics over K = 5..50,
step 5, scan_all, NPMI) with a line per K as it is fitted (iterations, seconds of the fit and start
and of the evidence), so that a run cut short still says where its time went.

    python bench/select_live.py [warm]
"""
import sys, time, os, warnings
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import numpy as np
import mixbayes as mb
from mixbayes.topics import model as tm
from _real_corpora import load, completion
mb.TopicModel(3).fit(mb.datasets.load_classic3().counts[:200])  # compile, as the bench does
corpus, split = load("twenty_newsgroups")
train = completion(corpus.counts, split)[0]
words = train.sum()
orig = tm.OneCorpus.evidence
t_last = [None]
def hook(self, model, docs):
    t = time.perf_counter(); r = orig(self, model, docs)
    print(f"  K={model.n_components:3d} it={model.n_iter_:4d} conv={model.converged_} fit+start {t - t_last[0]:6.1f} s evidence {time.perf_counter() - t:5.1f} s L/word={model.log_posterior_/words:.6f} logBF={r.log_bayes_factor:.1f} disp={r.dispersion:.4f}  load {os.getloadavg()[0]:.1f}", flush=True)
    t_last[0] = time.perf_counter()
    return r
tm.OneCorpus.evidence = hook
warm = len(sys.argv) > 1 and sys.argv[1] == "warm"
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    start = time.perf_counter()
    one_model = mb.TopicModel(20).fit(train)
    one = time.perf_counter() - start
    print(f"{train.shape}: one K=20 fit {one:.1f} s, {one_model.n_iter_} it; load {os.getloadavg()[0]:.1f}", flush=True)
    start = time.perf_counter(); t_last[0] = start
    selection = mb.select_n_topics(train, range(5, 51, 5), scan_all=True, verbose=0,
                                   coherence="npmi", warm_start=warm)
    total = time.perf_counter() - start
print(selection)
for r in selection.table:
    print(f"  K={r['k']} coherence {r['coherence']:.4f} dispersion {r['dispersion']:.4f} seconds {r['seconds']:.1f}")
print(f"select_n_topics K=5..50: {total:.0f} s = {total / one:.1f} x one K = 20 fit "
      f"({one:.0f} s); load {os.getloadavg()[0]:.1f}", flush=True)
