"""Figures show the fitted quantities; progress appears only when asked for."""

import matplotlib

matplotlib.use("Agg")

import numpy as np
import pytest

import mixbayes as mb
from mixbayes import plotting


@pytest.fixture(scope="module")
def fitted():
    corpus, _ = mb.datasets.make_dmm_corpus(120, 40, 3, random_state=0)
    return corpus, mb.DirichletMultinomialMixture(3, n_init=1, init="random", init_sweeps=0).fit(
        corpus.counts
    )


def test_elbo_figure_plots_the_trace(fitted):
    _, model = fitted
    fig = plotting.plot_elbo_trace(model)
    (line,) = fig.axes[0].get_lines()
    np.testing.assert_array_equal(line.get_ydata(), model.elbo_trace_)
    assert "ELBO" in fig.axes[0].get_title()


def test_top_words_figure_has_one_panel_per_cluster(fitted):
    corpus, model = fitted
    fig = plotting.plot_top_words(model, corpus.vocabulary, n=5)
    panels = [ax for ax in fig.axes if ax.axison]
    assert len(panels) == 3
    labels = [t.get_text() for t in panels[0].get_yticklabels()]
    assert labels == model.top_words(corpus.vocabulary, n=5)[0]


def test_selection_figure_marks_best_k():
    corpus, _ = mb.datasets.make_dmm_corpus(100, 40, 2, random_state=3)
    sel = mb.select_n_clusters(corpus.counts, [1, 2, 3])
    fig = sel.plot()
    x = fig.axes[0].get_lines()[0].get_xdata()
    assert list(x) == [1, 2, 3]
    assert f"K = {sel.best_k}" in fig.axes[0].get_legend().get_texts()[0].get_text()


def test_progress_only_when_verbose(capsys):
    corpus, _ = mb.datasets.make_dmm_corpus(60, 20, 2, random_state=1)
    mb.DirichletMultinomialMixture(2, n_init=1).fit(corpus.counts)
    quiet = capsys.readouterr()
    assert quiet.out == "" and quiet.err == ""
    mb.DirichletMultinomialMixture(2, n_init=1, verbose=1).fit(corpus.counts)
    brief = capsys.readouterr()
    assert brief.out == "" and brief.err == ""  # verbose=1: no bar for a fit this quick
    mb.DirichletMultinomialMixture(2, n_init=1, verbose=2).fit(corpus.counts)
    loud = capsys.readouterr()
    assert "CAVI run 1/1" in loud.err and loud.out == ""
    mb.DirichletMultinomialMixture(2, n_init=1, inference="gibbs", n_sweeps=3, verbose=2).fit(
        corpus.counts
    )
    assert "Gibbs chain 1" in capsys.readouterr().err
