"""CAVI for the Dirichlet–multinomial mixture: monotone ELBO, coordinate maxima, a true bound."""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from _support.helpers import enumerate_posterior, log_dm_predictive
from scipy.special import digamma, gammaln, logsumexp
from scipy.stats import dirichlet

import mixbayes as mb
from mixbayes.families.dirichlet import dirichlet_expected_log
from mixbayes.families.multinomial import MultinomialFamily
from mixbayes.mixture._base import MixtureState


def _fit_quiet(model, X):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", mb.ConvergenceWarning)
        return model.fit(X)


@pytest.mark.parametrize("fit_priors", [False, True])
@pytest.mark.parametrize("K", [1, 2, 4, 8])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_elbo_never_decreases(seed, K, fit_priors):
    corpus, _ = mb.datasets.make_dmm_corpus(200, 80, 4, mean_length=30, random_state=seed)
    model = _fit_quiet(
        mb.DirichletMultinomialMixture(
            K, n_init=1, init="random", tol=0.0, max_iter=60, fit_priors=fit_priors,
            random_state=seed,
        ),
        corpus.counts,
    )
    trace = model.elbo_trace_
    assert len(trace) >= 2
    steps = np.diff(trace)
    assert np.all(steps >= -1e-9 * np.abs(trace[1:])), steps.min()
    assert np.isfinite(trace).all()


def _state_from(weight_conc, word_conc_KP, alpha, family):
    posterior = family.posterior_from_concentration(word_conc_KP)
    return MixtureState(
        weight_conc, posterior, dirichlet_expected_log(weight_conc),
        family.expectations(posterior), alpha, family.concentration,
    )


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_each_block_update_is_a_coordinate_maximum(seed):
    """Perturbing any block away from its CAVI update lowers the ELBO."""
    rng = np.random.default_rng(seed)
    corpus, _ = mb.datasets.make_dmm_corpus(60, 30, 3, mean_length=20, random_state=seed)
    K, alpha, theta = 3, 1.3, 0.2
    model = mb.DirichletMultinomialMixture(K, weight_concentration_prior=alpha,
                                           word_concentration_prior=theta)
    family = MultinomialFamily(theta)
    data = family.prepare(corpus.counts)
    resp = rng.dirichlet(np.ones(K), size=corpus.n_documents)

    # global block: eta = alpha + N, phi = theta + stats is the maximiser given resp
    state = model._global_step(data, resp, family, alpha)
    best = model._elbo(data, resp, state, family)
    for _ in range(20):
        eta = state.weight_concentration * np.exp(0.05 * rng.standard_normal(K))
        phi_best = family.concentration_of(state.family_posterior)
        assert model._elbo(data, resp, _state_from(eta, phi_best, alpha, family), family) < best
        phi = family.concentration_of(state.family_posterior)
        phi = phi * np.exp(0.05 * rng.standard_normal(phi.shape))
        assert model._elbo(data, resp, _state_from(state.weight_concentration, phi, alpha, family),
                           family) < best

    # local block: resp = softmax(L) is the maximiser given the global factors
    L = model._joint_log_evidence(data, state, family)
    opt = np.exp(L - L.max(axis=1, keepdims=True))
    opt /= opt.sum(axis=1, keepdims=True)
    best_local = model._elbo(data, opt, state, family)
    for _ in range(20):
        other = opt * np.exp(0.1 * rng.standard_normal(opt.shape))
        other /= other.sum(axis=1, keepdims=True)
        assert model._elbo(data, other, state, family) < best_local


def _expected_logs(concentration):
    """E[log pi] of Dirichlet rows, written plainly (not the package's helper)."""
    concentration = np.atleast_2d(concentration)
    return digamma(concentration) - digamma(concentration.sum(axis=1, keepdims=True))


def test_final_elbo_matches_the_bound_written_from_its_definition():
    """The trace's last ELBO (a logsumexp shortcut plus the package's closed-form KL terms)
    against E_q[log p(y, z, lambda, beta)] + H[q] written term by term: expected log
    densities of the priors plus scipy's Dirichlet entropies, the responsibilities as the
    softmax of the expected log joint, the multinomial coefficient of every document."""
    corpus, _ = mb.datasets.make_dmm_corpus(80, 40, 3, mean_length=25, random_state=5)
    alpha, theta = 0.7, 0.2
    model = mb.DirichletMultinomialMixture(3, n_init=1, weight_concentration_prior=alpha,
                                           word_concentration_prior=theta,
                                           random_state=0).fit(corpus.counts)
    assert model.converged_  # so the last ELBO is that of the kept state
    Y = corpus.counts.toarray().astype(float)
    eta, phi = model.weight_concentration_, model.word_concentration_
    K, p = phi.shape
    log_lambda, log_beta = _expected_logs(eta)[0], _expected_logs(phi)
    log_coef = gammaln(Y.sum(axis=1) + 1) - gammaln(Y + 1).sum(axis=1)
    joint = log_lambda + Y @ log_beta.T  # E[log lambda_k] + E[log p(y_i | beta_k)] - coef
    resp = np.exp(joint - joint.max(axis=1, keepdims=True))
    resp /= resp.sum(axis=1, keepdims=True)
    expected_log_likelihood = np.sum(resp * joint) + log_coef.sum()
    entropy_z = -np.sum(resp * np.log(resp))
    log_prior_lambda = gammaln(K * alpha) - K * gammaln(alpha) + (alpha - 1) * log_lambda.sum()
    log_prior_beta = K * (gammaln(p * theta) - p * gammaln(theta)) + (theta - 1) * log_beta.sum()
    entropy_lambda = dirichlet(eta).entropy()
    entropy_beta = sum(dirichlet(row).entropy() for row in phi)
    elbo = (expected_log_likelihood + entropy_z + log_prior_lambda + entropy_lambda
            + log_prior_beta + entropy_beta)
    assert model.elbo_trace_[-1] == pytest.approx(elbo, rel=1e-10)
    np.testing.assert_allclose(model.predict_proba(corpus.counts), resp, rtol=1e-8, atol=1e-12)


@pytest.mark.parametrize("fit_priors", [False, True])
@pytest.mark.parametrize("n,K", [(4, 2), (5, 3), (6, 2), (6, 3)])
def test_elbo_bounds_exact_log_marginal(n, K, fit_priors):
    """On tiny corpora the ELBO is below log p(y), computed by enumerating all K**n assignments."""
    rng = np.random.default_rng(n * 10 + K)
    X = rng.poisson(2.0, size=(n, 4))
    X[0, :] = 0  # an empty document, legitimately part of the model
    X[1, 0] = 7
    model = _fit_quiet(
        mb.DirichletMultinomialMixture(K, n_init=3, fit_priors=fit_priors, tol=1e-10,
                                       weight_concentration_prior=0.7,
                                       word_concentration_prior=0.5), X)
    _, _, log_evidence = enumerate_posterior(X, K, model.weight_prior_, model.word_prior_)
    assert model.elbo_ <= log_evidence + 1e-9
    # and the bound is not vacuous: within a few nats on such small problems
    assert model.elbo_ > log_evidence - 5.0


def test_recovers_well_separated_clusters():
    corpus, truth = mb.datasets.make_dmm_corpus(400, 300, 5, mean_length=40, random_state=3)
    model = mb.DirichletMultinomialMixture(5, random_state=0).fit(corpus.counts)
    assert mb.metrics.nmi(truth.labels, model.labels_) >= 0.95
    # matched cluster weights and word distributions are close to the truth
    from scipy.optimize import linear_sum_assignment

    cost = -np.log(model.components_) @ truth.components.T
    rows, cols = linear_sum_assignment(cost.T)
    assert np.abs(model.weights_[cols] - truth.weights[rows]).max() < 0.06
    l1 = np.abs(model.components_[cols] - truth.components[rows]).sum(axis=1)
    assert l1.max() < 0.35


def test_kmeans_plus_plus_start_beats_random_start_on_average():
    """Mean final ELBO over 12 single-start fits: our start beats a flat-random one."""
    corpus, _ = mb.datasets.make_dmm_corpus(600, 400, 10, mean_length=12, random_state=11,
                                            word_concentration=0.05)
    elbo = {}
    settings = dict(ours=dict(), kmeans_only=dict(init_sweeps=0),
                    random=dict(init="random", init_sweeps=0))
    for name, kw in settings.items():
        elbo[name] = np.mean([
            _fit_quiet(mb.DirichletMultinomialMixture(10, n_init=1, random_state=s, **kw),
                       corpus.counts).elbo_
            for s in range(12)
        ])
    assert elbo["kmeans_only"] > elbo["random"]
    assert elbo["ours"] > elbo["kmeans_only"]


def test_n_init_keeps_the_best_run():
    """Every restart run on its own, from the generator the fit hands it: the fit keeps the
    run with the highest final ELBO (here neither the first nor the last), its trace and its
    labels."""
    corpus, _ = mb.datasets.make_dmm_corpus(150, 60, 5, mean_length=10, random_state=2)
    settings = dict(n_components=5, n_init=4, n_keep=None, init="random", init_sweeps=0,
                    random_state=16)
    multi = _fit_quiet(mb.DirichletMultinomialMixture(**settings), corpus.counts)
    probe = mb.DirichletMultinomialMixture(**settings)
    X, rngs = probe._begin_fit(corpus.counts)
    family = probe._make_family(X)
    data = family.prepare(X)
    runs = [probe._fit_single(X, data, rng, run, resp)
            for run, (rng, resp) in enumerate(zip(rngs, probe._starts(X, family, rngs)))]
    finals = np.array([run["elbo"] for run in runs])
    best = int(np.argmax(finals))
    assert 0 < best < len(runs) - 1  # keeping the first or the last run would fail below
    assert np.sort(finals)[-1] - np.sort(finals)[-2] > 1.0  # and the best is clearly best
    assert multi.elbo_ == finals[best]
    np.testing.assert_array_equal(multi.elbo_trace_, runs[best]["trace"])
    np.testing.assert_array_equal(multi.labels_, runs[best]["labels"])


def _runs_of(model, X):
    """Fit ``model`` and return it with the final ELBO of every run it took to convergence."""
    from mixbayes.mixture._base import VariationalMixture

    runs = {}
    original = VariationalMixture._fit_single

    def recording(self, X, data, rng, run, resp, **where):  # where: the rows, the family
        result = original(self, X, data, rng, run, resp, **where)
        runs[run] = result["elbo"]
        return result

    VariationalMixture._fit_single = recording
    try:
        return _fit_quiet(model, X), runs
    finally:
        VariationalMixture._fit_single = original


@pytest.mark.parametrize("init", ["kmeans++", "random"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_screen_keeps_the_highest_elbo_start(init, seed):
    """The default screen (n_init=5 starts, n_keep=1) runs exactly the start with the highest
    ELBO after one iteration, and gives what that start gives when every start is run."""
    corpus, _ = mb.datasets.make_dmm_corpus(300, 150, 8, mean_length=12, random_state=seed,
                                            word_concentration=0.05)
    X = corpus.counts
    screened, kept = _runs_of(mb.DirichletMultinomialMixture(8, init=init, random_state=seed), X)
    every, runs = _runs_of(mb.DirichletMultinomialMixture(8, init=init, n_keep=None,
                                                          random_state=seed), X)
    assert screened.start_elbos_.shape == (5,) and every.start_elbos_.shape == (0,)
    best = int(np.argmax(screened.start_elbos_))
    assert list(kept) == [best]
    assert sorted(runs) == list(range(5))
    # the same stream: the kept start ends exactly where it ends among all five runs
    assert screened.elbo_ == runs[best]
    assert every.elbo_ == max(runs.values()) >= screened.elbo_
    if screened.elbo_ == every.elbo_:
        np.testing.assert_array_equal(screened.labels_, every.labels_)


@pytest.mark.parametrize("fit_priors", [False, True])
def test_screened_start_is_the_first_iteration_of_the_kept_run(fit_priors):
    """Without warm-up sweeps the screen's score is the kept run's first ELBO, and CAVI only
    climbs from there: the final ELBO is at least every screened start's."""
    corpus, _ = mb.datasets.make_dmm_corpus(200, 80, 5, mean_length=10, random_state=4)
    model = _fit_quiet(mb.DirichletMultinomialMixture(5, n_init=6, init_sweeps=0,
                                                      fit_priors=fit_priors, random_state=1),
                       corpus.counts)
    assert model.elbo_trace_[0] == pytest.approx(model.start_elbos_.max(), rel=1e-12)
    assert model.elbo_ >= model.start_elbos_.max()


def test_n_keep_runs_that_many_and_all_means_none():
    corpus, _ = mb.datasets.make_dmm_corpus(150, 60, 4, mean_length=10, random_state=5)
    X = corpus.counts
    two, runs = _runs_of(mb.DirichletMultinomialMixture(4, n_init=4, n_keep=2), X)
    order = np.argsort(-two.start_elbos_, kind="stable")
    assert list(runs) == list(order[:2])  # best first
    assert two.elbo_ == max(runs.values())
    everything = _fit_quiet(mb.DirichletMultinomialMixture(4, n_init=4, n_keep=4), X)
    plain = _fit_quiet(mb.DirichletMultinomialMixture(4, n_init=4, n_keep=None), X)
    assert everything.elbo_ == plain.elbo_ and everything.start_elbos_.size == 0
    np.testing.assert_array_equal(everything.labels_, plain.labels_)
    with pytest.raises(ValueError, match="n_keep"):
        mb.DirichletMultinomialMixture(4, n_keep=0).fit(X)


def test_convergence_warning_and_flag():
    corpus, _ = mb.datasets.make_dmm_corpus(100, 50, 3, random_state=0)
    with pytest.warns(mb.ConvergenceWarning, match="max_iter=2"):
        model = mb.DirichletMultinomialMixture(
            3, max_iter=2, tol=0.0, n_init=1, init="random", init_sweeps=0
        ).fit(corpus.counts)
    assert model.converged_ is False and model.n_iter_ == 2
    np.testing.assert_array_equal(model.labels_, model.predict(corpus.counts))
    model = mb.DirichletMultinomialMixture(3, n_init=1).fit(corpus.counts)
    assert model.converged_ is True
    # tol is per document: the run stops at the first change below tol * n, not before
    changes = np.abs(np.diff(model.elbo_trace_)) / corpus.counts.shape[0]
    assert changes[-1] <= model.tol and np.all(changes[:-1] > model.tol)


def test_fit_predict_equals_fit_then_predict():
    corpus, _ = mb.datasets.make_dmm_corpus(120, 50, 3, random_state=4)
    labels = mb.DirichletMultinomialMixture(3, random_state=1).fit_predict(corpus.counts)
    model = mb.DirichletMultinomialMixture(3, random_state=1).fit(corpus.counts)
    np.testing.assert_array_equal(labels, model.predict(corpus.counts))
    np.testing.assert_array_equal(labels, model.labels_)
    proba = model.predict_proba(corpus.counts)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)


def test_score_samples_is_the_predictive_bound_written_out():
    """score_samples on new documents against log h(y) + logsumexp_k(E[log lambda_k] +
    sum_l y_l E[log beta_kl]) written with scipy's digamma, and score as their mean. By
    Jensen the bound lies below the log predictive density under q,
    log sum_k E[lambda_k] DirMult(y | phi_k)."""
    corpus, _ = mb.datasets.make_dmm_corpus(100, 50, 3, random_state=4)
    new, _ = mb.datasets.make_dmm_corpus(20, 50, 3, mean_length=15, random_state=7)
    model = mb.DirichletMultinomialMixture(3).fit(corpus.counts)
    Y = new.counts.toarray().astype(float)
    eta, phi = model.weight_concentration_, model.word_concentration_
    log_coef = gammaln(Y.sum(axis=1) + 1) - gammaln(Y + 1).sum(axis=1)
    expected = log_coef + logsumexp(_expected_logs(eta)[0] + Y @ _expected_logs(phi).T, axis=1)
    per_doc = model.score_samples(new.counts)
    np.testing.assert_allclose(per_doc, expected, rtol=1e-10)
    assert model.score(new.counts) == pytest.approx(expected.mean(), rel=1e-10)
    predictive = np.array([logsumexp([np.log(eta[k] / eta.sum()) + log_dm_predictive(y, phi[k])
                                      for k in range(3)]) for y in Y])
    assert np.all(per_doc <= predictive + 1e-9)


def test_empirical_bayes_raises_the_bound():
    corpus, _ = mb.datasets.make_dmm_corpus(300, 200, 4, random_state=6, word_concentration=0.02)
    fixed = mb.DirichletMultinomialMixture(4, word_concentration_prior=1.0).fit(corpus.counts)
    fitted = mb.DirichletMultinomialMixture(4, word_concentration_prior=1.0,
                                            fit_priors=True).fit(corpus.counts)
    assert fitted.elbo_ > fixed.elbo_
    assert fitted.word_prior_ < 0.2  # moves towards the sparse truth (0.02)


def _polya_log_gradient(stats, dim, a):
    """d/d(log a) of the Dirichlet-multinomial log evidence of the rows of ``stats`` (R, dim)
    under a symmetric Dir(a): a [R D psi(Da) - D sum_r psi(Da + S_r) + sum_rd (psi(a + s_rd)
    - psi(a))], written with scipy."""
    stats = np.atleast_2d(stats)
    assert stats.shape[1] == dim
    totals = stats.sum(axis=1)
    return a * (dim * (len(stats) * digamma(dim * a) - digamma(dim * a + totals).sum())
                + np.sum(digamma(a + stats) - digamma(a)))


def test_fitted_priors_are_stationary_points_of_their_polya_evidence():
    """With ``fit_priors`` the kept state's weight prior alpha maximises the Polya evidence of
    the K expected cluster sizes (one Dirichlet of dimension K), and the word prior theta that
    of the K rows of expected word counts (dimension p): the gradient in log alpha is zero
    there and far from zero 10% away, both written here with scipy's digamma. A dimension
    off by one at a call site (K + 1 for the weights) moves alpha by about 10%."""
    corpus, _ = mb.datasets.make_dmm_corpus(150, 60, 4, weight_concentration=1.0,
                                            random_state=3)
    model = mb.DirichletMultinomialMixture(4, fit_priors=True, tol=1e-10, max_iter=300,
                                           random_state=0).fit(corpus.counts)
    alpha, theta = model.weight_prior_, model.word_prior_
    sizes = model.weight_concentration_ - alpha  # expected cluster sizes
    words = model.word_concentration_ - theta  # (K, p) expected word counts
    for stats, dim, a in ((sizes[None, :], 4, alpha), (words, words.shape[1], theta)):
        assert 1e-5 < a < 1e3  # an interior maximum, not a bound
        away = min(abs(_polya_log_gradient(stats, dim, a * 1.1)),
                   abs(_polya_log_gradient(stats, dim, a / 1.1)))
        assert abs(_polya_log_gradient(stats, dim, a)) < 1e-4 * away


def test_top_words_and_lift():
    # uneven cluster weights (0.8, 0.17, 0.03), so the weighted average cluster differs from
    # the plain mean of the clusters
    corpus, _ = mb.datasets.make_dmm_corpus(200, 100, 3, weight_concentration=1.0, random_state=1)
    model = mb.DirichletMultinomialMixture(3).fit(corpus.counts)
    words = model.top_words(corpus.vocabulary, n=5)
    assert len(words) == 3 and all(len(w) == 5 for w in words)
    k = 0
    expected = corpus.vocabulary[np.argsort(-model.components_[k])[:5]]
    assert words[k] == list(expected)
    # lift: E[beta_kl] over the weight-averaged cluster's probability of the word, among the
    # words the cluster has evidence for (expected count >= 1/2), computed here by hand
    average = (model.weights_[:, None] * model.components_).sum(axis=0)
    lift = model.top_words(corpus.vocabulary, n=5, by="lift")
    differs = 0
    for k in range(3):
        used = np.flatnonzero(model.word_concentration_[k] - model.word_prior_ >= 0.5)
        ratio = model.components_[k, used] / average[used]
        by_hand = [corpus.vocabulary[used[i]] for i in sorted(range(used.size),
                                                            key=lambda i: -ratio[i])[:5]]
        assert lift[k] == by_hand
        differs += lift[k] != words[k]
    assert differs > 0  # the two rankings differ here, so a swapped 'by' is noticed
    with pytest.raises(ValueError, match="vocabulary must have one entry per feature"):
        model.top_words(corpus.vocabulary[:-1])


def test_words_of_one_topic_alone_tie_by_lift_and_go_by_probability():
    """Every word used by one component alone has the same lift, 1 / that component's share;
    the ties were ordered by rounding noise, the rarest one-off words first (a new user's
    tryout on dblp3: "estim, combin, robust, guest"). They go by probability now."""
    from mixbayes._terms import top_terms

    share = 0.37
    probability = np.array([[0.31, 0.07, 0.19, 0.23, 0.2], [0.0, 0.0, 0.0, 0.5, 0.5]])
    frequency = share * probability[0] + (1 - share) * probability[1]
    frequency[1] *= 1 - 4e-16  # the rarest one-off word's lift a rounding error above the others
    lift = probability[0] / frequency
    assert lift[1] > lift[0] == lift[2]
    words = np.array(["a", "b", "c", "d", "e"])
    assert top_terms(probability, words, 5, "lift", frequency)[0] == ["a", "c", "b", "d", "e"]
    assert top_terms(probability, words, 5, "probability", frequency)[0] == [
        "a", "d", "e", "c", "b"]


def test_top_words_never_list_unused_words():
    # columns 3 and 4: words no document uses; cluster of documents 2-3 uses only words 1-2
    X = sp.csr_matrix(np.array([[6, 0, 0, 0, 0], [5, 1, 0, 0, 0], [0, 4, 3, 0, 0],
                                [0, 3, 4, 0, 0]]))
    vocabulary = np.array(["a", "b", "c", "unused", "never"])
    model = mb.DirichletMultinomialMixture(2, n_init=3, random_state=0).fit(X)
    for by in ("probability", "lift"):
        for terms in model.top_words(vocabulary, n=5, by=by):
            assert "unused" not in terms and "never" not in terms
            assert 1 <= len(terms) <= 3


def test_extremes_one_document_one_word_k1_huge_counts():
    X = np.array([[5, 0, 3]])
    model = mb.DirichletMultinomialMixture(1).fit(X)  # one document, K=1
    assert model.labels_.tolist() == [0] and np.isfinite(model.elbo_)
    model = mb.DirichletMultinomialMixture(2).fit(np.array([[3], [1], [9]]))  # one word
    assert np.isfinite(model.elbo_)
    # one word: every document's likelihood is 1, so the ELBO is the KL terms only, and near 0
    assert model.elbo_ <= 1e-9
    huge = np.array([[10**9, 1, 0], [2, 10**8, 5], [0, 3, 10**9]])
    model = mb.DirichletMultinomialMixture(3).fit(huge)
    assert np.isfinite(model.elbo_trace_).all()
    assert len(set(model.labels_)) == 3
    # the sampler's log tables are bounded in size; beyond them it computes the logs
    gibbs = _fit_quiet(mb.DirichletMultinomialMixture(3, inference="gibbs", n_sweeps=5), huge)
    assert np.isfinite(gibbs.log_joint_trace_).all()
    assert mb.metrics.ari(model.labels_, gibbs.labels_) == 1.0


def test_empty_documents_follow_the_weights():
    corpus, _ = mb.datasets.make_dmm_corpus(100, 40, 2, random_state=0)
    X = corpus.counts.toarray()
    X[:5] = 0
    model = mb.DirichletMultinomialMixture(2).fit(X)
    proba = model.predict_proba(X[:5])
    expected = np.exp(dirichlet_expected_log(model.weight_concentration_))
    np.testing.assert_allclose(proba, np.tile(expected / expected.sum(), (5, 1)))


def test_sparse_and_dense_inputs_agree():
    corpus, _ = mb.datasets.make_dmm_corpus(100, 40, 3, random_state=1)
    a = mb.DirichletMultinomialMixture(3).fit(corpus.counts)
    b = mb.DirichletMultinomialMixture(3).fit(corpus.counts.toarray())
    np.testing.assert_array_equal(a.labels_, b.labels_)
    np.testing.assert_allclose(a.elbo_trace_, b.elbo_trace_)


def test_select_n_clusters_finds_the_true_k():
    corpus, _ = mb.datasets.make_dmm_corpus(300, 150, 4, mean_length=30, random_state=9)
    selection = mb.select_n_clusters(corpus.counts, range(1, 8))
    assert selection.best_k == 4
    assert [row["k"] for row in selection.table] == list(range(1, 8))
    row = selection.table[3]
    assert row["score"] == pytest.approx(row["elbo"] + np.log(24))
    assert selection.best_model.n_components == 4


def test_select_n_clusters_counts_the_distinct_labellings_of_a_k_with_empty_clusters():
    """Ten short documents: from some K on, clusters stay empty. Relabelling empty clusters
    among themselves gives the same posterior, so the correction is log K!/(K - K+)! (log K!
    when all are occupied), and a chosen K with empty clusters says how many the documents
    fill."""
    from scipy.special import gammaln

    corpus, _ = mb.datasets.make_dmm_corpus(10, 40, 2, mean_length=8, random_state=0)
    selection = mb.select_n_clusters(corpus.counts, range(1, 11), verbose=0)
    rows = selection.table
    assert any(row["n_occupied"] < row["k"] for row in rows)  # the case this test is about
    for row in rows:
        k, occupied = row["k"], row["n_occupied"]
        assert row["log_k_factorial"] == pytest.approx(gammaln(k + 1) - gammaln(k - occupied + 1))
        assert row["score"] == pytest.approx(row["elbo"] + row["log_k_factorial"])
    chosen = next(row for row in rows if row["k"] == selection.best_k)
    said = [note for note in selection.notes if "empty" in note]
    if chosen["n_occupied"] < chosen["k"]:
        assert said == [f"K = {chosen['k']} leaves {chosen['k'] - chosen['n_occupied']} of its "
                        f"clusters empty: the documents fill {chosen['n_occupied']}, and more "
                        f"labels for the same clusters still raise the evidence; read "
                        f"{chosen['n_occupied']} clusters"]
    else:
        assert said == []


@pytest.mark.parametrize("seed", range(3))
def test_labels_match_predict_when_max_iter_stops_the_fit(seed):
    """One iteration from a random start: the state moves a lot, and labels_ must still be
    the clusters that predict(X) gives under the kept state."""
    corpus, _ = mb.datasets.make_dmm_corpus(300, 100, 6, mean_length=8, random_state=3)
    model = _fit_quiet(mb.DirichletMultinomialMixture(
        6, max_iter=1, tol=0.0, n_init=1, init="random", init_sweeps=0, random_state=seed),
        corpus.counts)
    assert model.converged_ is False
    np.testing.assert_array_equal(model.labels_, model.predict(corpus.counts))


def test_select_n_clusters_held_out_criterion():
    """The held-out likelihood is the exact predictive density of documents the fits never
    saw: it finds the truth on data from the model, and the final model covers every
    document."""
    corpus, _ = mb.datasets.make_dmm_corpus(300, 150, 4, mean_length=30, random_state=9)
    selection = mb.select_n_clusters(corpus.counts, range(1, 8), verbose=0)
    assert selection.n_heldout == 30 and selection.best_k_heldout == 4
    assert selection.best_model.labels_.shape == (300,)
    held = selection.column("heldout_log_likelihood")
    assert held[3] > held[0] + 100  # four clusters predict far better than one
    # the standard errors are those of the per-document differences to the best K
    assert selection.table[np.argmax(held)]["heldout_standard_error"] == 0
    assert all(row["heldout_standard_error"] > 0 for i, row in enumerate(selection.table)
               if i != np.argmax(held))
    plain = mb.select_n_clusters(corpus.counts, range(3, 5), heldout=0, verbose=0)
    assert plain.best_k_heldout is None and plain.table[0]["heldout_log_likelihood"] is None
    assert not any("held out" in note for note in plain.notes)  # none was asked
    # fewer than 50 documents: none held out, and a note says why (the table's held-out
    # column was all "-" with no word of it)
    few = mb.select_n_clusters(corpus.counts[:40], range(3, 5), verbose=0)
    assert few.n_heldout == 0 and few.best_k_heldout is None
    assert any(note.startswith("no documents were held out: 40 are fewer than 50")
               for note in few.notes), few.notes
    assert "note: no documents were held out" in str(few)
    with pytest.raises(ValueError, match="heldout must be a share"):
        mb.select_n_clusters(corpus.counts, range(1, 3), heldout=0.9)


def test_log_predictive_density_matches_the_dirichlet_multinomial_mixture():
    """Against a plain evaluation: the scalar Dirichlet-multinomial pmf of every document
    under every cluster, mixed by the posterior mean weights."""
    from scipy.special import logsumexp

    from mixbayes.families.multinomial import dirichlet_multinomial_logpmf

    corpus, _ = mb.datasets.make_dmm_corpus(60, 30, 3, mean_length=15, random_state=4)
    model = mb.DirichletMultinomialMixture(3, n_init=1).fit(corpus.counts[:50])
    dense = corpus.counts[50:].toarray()
    expected = [logsumexp([np.log(model.weights_[k])
                           + dirichlet_multinomial_logpmf(row, model.word_concentration_[k])
                           for k in range(3)]) for row in dense]
    np.testing.assert_allclose(model.log_predictive_density(corpus.counts[50:]), expected,
                               rtol=1e-10)
    # a proper density over documents of one token: the probabilities of the p words add to 1
    single = np.eye(corpus.n_terms, dtype=int)
    assert np.exp(logsumexp(model.log_predictive_density(single))) == pytest.approx(1.0)
    # an empty document is certain: exactly 0 (it read 1.1e-16, the weights' rounding)
    empty = np.zeros((2, corpus.n_terms), dtype=int)
    assert model.log_predictive_density(empty).tolist() == [0.0, 0.0]


@pytest.mark.parametrize("gains, sweeps, best", [
    # three records, then a flat log joint: AUTO_PATIENCE (10) sweeps after the last record
    ([1.0, 1.0, 1.0] + [0.0] * 300, 13, 2),
    # a rise of 0.05 a sweep is under tol * n = 0.1 (1e-3 a document, 100 documents): no
    # record after the first, stop after 10 more; the best state is still the highest seen
    ([1.0] + [0.05] * 300, 11, 10),
    # a climb of 40 records, a plateau of 15 sweeps, a new record: after a long climb the
    # warm-up waits half as long as the climb took (20 sweeps; ten, the rule before, stopped
    # at sweep 50 on the plateau), and after the record at sweep 56 it waits 28
    ([1.0] * 40 + [0.0] * 15 + [5.0] + [0.0] * 300, 56 + 28, 55),
])
def test_auto_warm_up_stops_ten_sweeps_after_its_last_record_by_tol_per_document(
        monkeypatch, gains, sweeps, best):
    """The automatic warm-up's rule on a scripted log joint (the sampler replaced): a record is
    a log joint above the best so far by more than ``tol`` per document, the warm-up stops
    ``AUTO_PATIENCE`` sweeps after the last one, or half as many sweeps as the climb to it
    took when that is more (``AUTO_WAIT_SHARE``), and returns the highest state seen."""
    from mixbayes.mixture import dmm

    levels = np.cumsum(gains)

    def scripted(X, z, K, weight_prior, word_prior, n_sweeps, rng):
        for t in range(n_sweeps):
            yield np.full(X.shape[0], t % K), float(levels[t])

    monkeypatch.setattr(dmm, "gibbs_sweeps", scripted)
    model = mb.DirichletMultinomialMixture(20, init="kmeans++", tol=1e-3)  # one start's sweeps
    X = sp.csr_matrix(np.ones((100, 3)))
    resp = model._warm_up(X, np.eye(20)[np.zeros(100, dtype=int)], np.random.default_rng(0))
    assert dmm.AUTO_PATIENCE == 10 and dmm.AUTO_WAIT_SHARE == 0.5
    assert model._warm_up_sweeps == sweeps
    np.testing.assert_array_equal(resp.argmax(axis=1), np.full(100, best % 20))


def test_auto_warm_up_does_not_stall_with_few_large_clusters():
    """8 overlapping clusters of 375 seven-word documents: five warm-up sweeps (the default
    before issue 25) leave CAVI 1,960 nats below where collapsed Gibbs goes (NMI 0.70); the
    automatic warm-up sweeps until the log joint stops rising (57 sweeps here) and ends at
    least as high as 200 Gibbs sweeps from a k-means++ start (measured: 79 nats above, NMI
    0.824 against 0.827)."""
    corpus, truth = mb.datasets.make_dmm_corpus(3000, 1000, 8, mean_length=7,
                                                word_concentration=0.3, random_state=0)
    X = corpus.counts
    fit = lambda **options: _fit_quiet(mb.DirichletMultinomialMixture(8, random_state=0,
                                                                      **options), X)
    auto, five = fit(init="kmeans++"), fit(init="kmeans++", init_sweeps=5)
    gibbs = fit(inference="gibbs", n_sweeps=200, n_init=1, init_sweeps=0)
    assert auto.init_sweeps == "auto" and 20 <= auto._warm_up_sweeps < 200
    assert auto.elbo_ > five.elbo_ + 1500
    assert auto.elbo_ >= gibbs.elbo_
    assert mb.metrics.nmi(truth.labels, auto.labels_) > 0.8 > mb.metrics.nmi(truth.labels,
                                                                             five.labels_)
    assert mb.metrics.nmi(truth.labels, auto.labels_) >= mb.metrics.nmi(truth.labels,
                                                                        gibbs.labels_) - 0.01


def test_random_rival_does_not_stall_where_the_kmeans_start_does():
    """8 overlapping clusters (word concentration 0.5) of 375 seven-word documents: k-means on
    tf-idf puts most documents in one cluster, and from there the automatic warm-up and CAVI
    (the default before, ``init="kmeans++"``) end 470 nats of ELBO below 200 Gibbs sweeps from
    the same start (NMI 0.50 against 0.59). The default's uniform-random rival, warmed up the
    same way, reaches a higher collapsed log joint, is kept, and ends 700 nats above the Gibbs
    chain (measured: ELBO -116,536 against -117,242 and -117,714; NMI 0.65)."""
    corpus, truth = mb.datasets.make_dmm_corpus(3000, 1000, 8, mean_length=7,
                                                word_concentration=0.5, random_state=1)
    X = corpus.counts
    fit = lambda **options: _fit_quiet(mb.DirichletMultinomialMixture(8, random_state=0,
                                                                      **options), X)
    new, old = fit(), fit(init="kmeans++")
    gibbs = fit(inference="gibbs", init="kmeans++", n_sweeps=200, n_init=1, init_sweeps=0,
                max_samples=0)
    nmi = lambda model: mb.metrics.nmi(truth.labels, model.labels_)
    assert new.init == "auto" and new._warm_up_start == "random"
    assert old.elbo_ < gibbs.elbo_ - 200 and nmi(old) < nmi(gibbs)  # the old default stalls
    assert new.elbo_ > gibbs.elbo_ + 300 and nmi(new) >= nmi(gibbs)


def test_warm_up_waits_after_a_long_climb(monkeypatch):
    """8 overlapping clusters of 375 seven-word documents, seed 1: ten sweeps without a record
    (the rule before) stop the warm-ups mid-climb and the fit ends 360 nats of ELBO below 200
    Gibbs sweeps from the k-means++ start (NMI 0.59 against 0.65); waiting half as long as the
    climb took ends 160 nats above them (measured: -116,045 against -116,204 and -116,565;
    NMI 0.67)."""
    from mixbayes.mixture import dmm

    corpus, truth = mb.datasets.make_dmm_corpus(3000, 1000, 8, mean_length=7,
                                                word_concentration=0.5, random_state=3)
    X = corpus.counts
    fit = lambda **options: _fit_quiet(mb.DirichletMultinomialMixture(8, random_state=1,
                                                                      **options), X)
    nmi = lambda model: mb.metrics.nmi(truth.labels, model.labels_)
    gibbs = fit(inference="gibbs", init="kmeans++", n_sweeps=200, n_init=1, init_sweeps=0,
                max_samples=0)
    new = fit()
    monkeypatch.setattr(dmm, "AUTO_WAIT_SHARE", 0.0)
    old = fit()
    assert old.elbo_ < gibbs.elbo_ - 200 and nmi(old) < nmi(gibbs)
    assert new.elbo_ > gibbs.elbo_ + 100 and nmi(new) >= nmi(gibbs)
    assert new._warm_up_sweeps > old._warm_up_sweeps


def test_random_rival_keeps_the_higher_log_joint(monkeypatch):
    """``init="auto"`` sweeps the kept start and then a uniform-random assignment drawn from
    the same stream, and keeps the state of the higher log joint (scripted sampler: the
    rival's sweeps end higher, then lower)."""
    from mixbayes.mixture import dmm

    calls = []

    def scripted(X, z, K, weight_prior, word_prior, n_sweeps, rng):
        calls.append(np.array(z))
        level = levels[len(calls) - 1]
        for _ in range(3):
            yield np.full(X.shape[0], len(calls) - 1), level

    monkeypatch.setattr(dmm, "gibbs_sweeps", scripted)
    X = sp.csr_matrix(np.ones((50, 3)))
    start = np.eye(4)[np.full(50, 3)]
    for levels, kept in (([1.0, 2.0], 1), ([2.0, 1.0], 0)):
        calls.clear()
        model = mb.DirichletMultinomialMixture(4, init_sweeps=3)
        resp = model._warm_up(X, start, np.random.default_rng(5))
        assert len(calls) == 2 and model._warm_up_sweeps == 6
        np.testing.assert_array_equal(calls[0], np.full(50, 3))
        rival = np.random.default_rng(5).integers(0, 4, 50)
        np.testing.assert_array_equal(calls[1], rival)
        np.testing.assert_array_equal(resp.argmax(axis=1), np.full(50, kept))
        assert model._warm_up_start == ("random" if kept else "kmeans++")
    # with init="kmeans++", or for a Gibbs chain's start, there is no rival
    for options in (dict(init="kmeans++"), dict(inference="gibbs")):
        calls.clear()
        mb.DirichletMultinomialMixture(4, init_sweeps=3, **options)._warm_up(
            X, start, np.random.default_rng(5))
        assert len(calls) == 1


@pytest.mark.parametrize("rival_gains, rival_sweeps", [
    # below the kept start (level 100) and stalled after two records: five more sweeps, not
    # ten (on issue 13's corpus such a rival cost 12-15 sweeps, 40 % of the fit on top)
    ([10.0, 10.0] + [0.0] * 300, 2 + 5),
    # past the kept start at sweep 11, then stalled: the ordinary ten sweeps after its record
    ([10.0] * 11 + [0.0] * 300, 11 + 10),
])
def test_rival_below_the_kept_start_stops_sooner(monkeypatch, rival_gains, rival_sweeps):
    """The automatic warm-up of the random rival: while its best log joint is below the kept
    start's, ``AUTO_RIVAL_PATIENCE`` (5) sweeps without a record stop it (scripted sampler)."""
    from mixbayes.mixture import dmm

    scripts = [np.cumsum([100.0] + [0.0] * 300), np.cumsum(rival_gains)]
    counts = []

    def scripted(X, z, K, weight_prior, word_prior, n_sweeps, rng):
        levels = scripts[len(counts)]
        counts.append(0)
        for t in range(n_sweeps):
            counts[-1] += 1
            yield np.full(X.shape[0], len(counts) - 1), float(levels[t])

    monkeypatch.setattr(dmm, "gibbs_sweeps", scripted)
    model = mb.DirichletMultinomialMixture(4)
    X = sp.csr_matrix(np.ones((50, 3)))
    resp = model._warm_up(X, np.eye(4)[np.zeros(50, dtype=int)], np.random.default_rng(0))
    assert dmm.AUTO_RIVAL_PATIENCE == 5
    assert counts == [1 + 10, rival_sweeps]  # the kept start: a record, then ten flat sweeps
    kept = 1 if rival_sweeps > 10 else 0
    np.testing.assert_array_equal(resp.argmax(axis=1), np.full(50, kept))


def test_init_sweeps_rejects_other_strings():
    with pytest.raises(ValueError, match="init_sweeps"):
        mb.DirichletMultinomialMixture(3, init_sweeps="many").fit(np.ones((5, 4), dtype=int))


def test_one_standard_error_rule_on_a_table_written_by_hand():
    """Four held-out documents, best K = 3 (sum 4). K = 2 sums to -1, its differences to
    K = 3 are (3, -3, -2, -3): sample variance 24.75/3, so the standard error of the summed
    difference is sqrt(4 * 8.25) = sqrt(33) ~ 5.74 > 5, and K = 2 (not K = 1, 44 below
    with no spread) is the smallest K within one standard error of the best."""
    from mixbayes.mixture.selection import _one_standard_error_choice

    per_document = {1: np.full(4, -10.0), 2: np.array([4.0, -2.0, -1.0, -2.0]),
                    3: np.ones(4), 4: np.array([1.0, 1.0, 1.0, 0.5])}
    table = [dict(k=k, heldout_log_likelihood=float(v.sum())) for k, v in per_document.items()]
    assert _one_standard_error_choice(table, per_document) == 2
    errors = [row["heldout_standard_error"] for row in table]
    np.testing.assert_allclose(errors, [0.0, np.sqrt(33.0), 0.0, 0.5], rtol=1e-12)
