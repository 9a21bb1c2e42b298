"""The report's pictures against the figures and the fit (issue 23, first contact round two):
scatter.png and the page in one orientation, the fit's convergence warnings on the page.
The page's drawing itself (ellipses inside their panel, tick labels): test_report_browser.py."""

import re
import json
import warnings

import matplotlib
import numpy as np
import pytest

import mixbayes as mb
from mixbayes.report import build_report

matplotlib.use("Agg")


def _payload(page):
    raw = re.search(r'<script type="application/json" id="report-data">(.*?)</script>', page,
                    re.S).group(1)
    return json.loads(raw)


def _drawn_points(fig):
    """Every scattered point of a figure's first axes, rows sorted."""
    ax = fig.axes[0]
    xy = np.vstack([c.get_offsets() for c in ax.collections if len(c.get_offsets())])
    return xy[np.lexsort(xy.T[::-1])]


def _rows(xy):
    xy = np.asarray(xy, dtype=float)
    return xy[np.lexsort(xy.T[::-1])]


@pytest.mark.parametrize("kind", ["gmm", "tree"])
def test_scatter_png_and_the_page_show_the_same_projection(kind):
    """The points of scatter.png's figures (Gaussian clusters; the tree's points) are at the
    page's coordinates, not their mirror image: both sign the principal axes so that the
    largest loading is positive. The data are chosen so that the SVD's own signs are
    negative on both axes (the figures used to take them as they came)."""
    from mixbayes.plotting import plot_gaussian_clusters, plot_tree

    X, _ = mb.datasets.make_gaussian_mixture(90, 3, 2, random_state=1)
    vt = np.linalg.svd(X - X.mean(axis=0), full_matrices=False)[2][:2]
    assert all(v[np.argmax(np.abs(v))] < 0 for v in vt)  # raw SVD: both axes mirrored
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if kind == "gmm":
            model = mb.VariationalGaussianMixture(2, n_init=1, random_state=0).fit(X)
            fig = plot_gaussian_clusters(model, X)
        else:
            model = mb.HierarchicalMixture(2, n_iter=6, burn_in=2, random_state=0).fit(X)
            fig = plot_tree(model, X)
    page = np.array(_payload(build_report(model, X))["points"])[:, :2]
    drawn = _drawn_points(fig) if kind == "gmm" else _rows(
        np.vstack([c.get_offsets() for c in fig.axes[-1].collections]))
    np.testing.assert_allclose(drawn, _rows(page), atol=1e-3)
    # and the page's first axis is the signed first principal axis
    centre = X.mean(axis=0)
    np.testing.assert_allclose(np.sort(page[:, 0]), np.sort((X - centre) @ -vt[0]), atol=1e-3)
    np.testing.assert_allclose(np.sort(page[:, 1]), np.sort((X - centre) @ -vt[1]), atol=1e-3)
    import matplotlib.pyplot as plt

    plt.close(fig)


def test_the_fit_s_convergence_warnings_are_on_the_page():
    """The warnings the CLI prints go into the page's header: the HDP's own list (its chain
    still trending, too few sweeps to tell), the tree's unsettled chain (split R-hat of the
    RCDLL above 1.1, with its value as printed), a Gibbs chain or a variational fit that did
    not converge; a settled fit has none."""
    corpus, _ = mb.datasets.make_dmm_corpus(40, 20, 2, mean_length=10, random_state=0)
    X, _ = mb.datasets.make_gaussian_mixture(60, 2, 2, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        hdp = mb.HDPMixture(n_iter=6, random_state=0).fit(corpus.counts)
        tree = mb.HierarchicalMixture(2, n_iter=6, burn_in=2, random_state=0).fit(X)
        gibbs = mb.DirichletMultinomialMixture(2, inference="gibbs", n_sweeps=4,
                                               n_init=1).fit(corpus.counts)
        vb = mb.VariationalGaussianMixture(2, n_init=1, max_iter=2).fit(X)
        settled = mb.VariationalGaussianMixture(2, n_init=1).fit(X)
    assert hdp.convergence_warnings_
    assert _payload(build_report(hdp, corpus))["warnings"] == hdp.convergence_warnings_
    tree.rhat_ = dict(tree.rhat_, rcdll=1.234)
    assert _payload(build_report(tree, X))["warnings"] == [
        "the chain has not settled (split R-hat 1.23 > 1.1 of the regularised complete-data "
        "log-likelihood, rcdll); raise n_iter "
        "(--n-iter)"]
    tree.rhat_["rcdll"] = 1.104  # printed as 1.10: not "1.10 > 1.1"
    assert _payload(build_report(tree, X))["warnings"] == []
    assert not gibbs.converged_
    assert _payload(build_report(gibbs, corpus))["warnings"] == [
        "the kept Gibbs chain did not settle in 4 sweeps (its log joint's split R-hat over "
        "the second half above 1.1); raise n_sweeps"]
    assert not vb.converged_
    assert _payload(build_report(vb, X))["warnings"] == [
        "the fit did not converge in 2 iterations (the change of its objective stayed above "
        "tol); raise max_iter"]
    assert settled.converged_ and _payload(build_report(settled, X))["warnings"] == []


def test_a_trace_keeps_the_digits_of_its_own_span():
    """A trace near -929,100 moving by 57 nats ships its values to a hundredth of a nat or
    better (five significant digits of the values drew a staircase of tens); a trace of
    span near its values keeps about six significant digits."""
    from mixbayes.report import _extract

    values = -929100.0 + np.linspace(-57.0, 0.0, 30)
    shipped = _extract._trace("t", "x", "y", [("a", values)])["series"][0]["y"]
    np.testing.assert_allclose(shipped, values, atol=0.01)
    assert len(set(shipped)) == 30
    small = _extract._trace("t", "x", "y", [("a", [0.123456789, 1.0, np.nan])])["series"][0]
    assert small["y"] == [0.123457, 1.0, None]  # six: the span is a little below the top
