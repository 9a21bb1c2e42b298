"""Matplotlib figures for fitted models; matplotlib is imported only when a figure is drawn."""

import numpy as np

__all__ = ["plot_elbo_trace", "plot_top_words", "plot_selection", "plot_gaussian_clusters",
           "plot_topic_selection", "plot_hdp_trace"]


def _axes(ax, figsize=(6, 4)):
    import matplotlib

    if ax is not None:
        return ax.figure, ax
    if matplotlib.get_backend().lower() not in ("agg", "pdf", "svg", "cairo"):
        try:
            import matplotlib.pyplot as plt
        except ImportError:  # pragma: no cover
            matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=figsize)
    return fig, ax


def plot_elbo_trace(model, ax=None):
    """Plot the ELBO after every CAVI iteration (and the Gibbs log joint when present)."""
    fig, ax = _axes(ax)
    trace = getattr(model, "log_joint_trace_", None)
    label = "log p(y, z) per Gibbs sweep"
    if trace is None:
        trace, label = model.elbo_trace_, "ELBO per CAVI iteration"
    ax.plot(np.arange(1, len(trace) + 1), trace, marker=".", lw=1)
    ax.set_xlabel("iteration")
    ax.set_ylabel("nats")
    ax.set_title(label)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    return fig


def plot_top_words(model, vocabulary, n=10, ax=None):
    """A grid of horizontal bar charts: each cluster's ``n`` most probable words."""
    import matplotlib.pyplot as plt

    K = model.components_.shape[0]
    cols = min(K, 4)
    rows = int(np.ceil(K / cols))
    fig, axes = plt.subplots(rows, cols, figsize=(3.2 * cols, 0.28 * n * rows + 1.2), squeeze=False)
    words = model.top_words(vocabulary, n=n)
    order = np.argsort(-model.components_, axis=1)[:, :n]
    sizes = np.bincount(model.labels_, minlength=K)
    for k, axis in enumerate(axes.ravel()):
        if k >= K:
            axis.axis("off")
            continue
        probs = model.components_[k, order[k, : len(words[k])]]
        axis.barh(np.arange(len(probs))[::-1], probs, color="C0")
        axis.set_yticks(np.arange(len(probs))[::-1], words[k], fontsize=8)
        axis.set_title(f"cluster {k} ({sizes[k]} docs)", fontsize=9)
        axis.tick_params(axis="x", labelsize=7)
    fig.tight_layout()
    return fig


def plot_selection(selection, ax=None):
    """Plot ELBO + log K! against K, marking the chosen K."""
    fig, ax = _axes(ax)
    ks = [row["k"] for row in selection.table]
    scores = [row["score"] for row in selection.table]
    ax.plot(ks, scores, marker="o")
    ax.axvline(selection.best_k, color="C3", ls="--", label=f"chosen K = {selection.best_k}")
    ax.set_xlabel("number of clusters K")
    ax.set_ylabel("ELBO + log K!")
    ax.legend()
    ax.grid(alpha=0.3)
    fig.tight_layout()
    return fig


def plot_gaussian_clusters(model, X, ax=None):
    """Scatter the points coloured by cluster, with each used component's 2-sigma ellipse.

    With more than two features the points, means and covariances are projected on the first
    two principal components of ``X``.
    """
    from matplotlib.patches import Ellipse

    fig, ax = _axes(ax, figsize=(6, 5))
    X = np.asarray(X, dtype=float)
    X = X[:, None] if X.ndim == 1 else X
    d = X.shape[1]
    centre = X.mean(axis=0)
    if d == 1:
        basis = np.eye(1)
    elif d == 2:
        basis = np.eye(2)
    else:
        _, _, vt = np.linalg.svd(X - centre, full_matrices=False)
        basis = vt[:2].T
    Y = (X - centre) @ basis
    if Y.shape[1] == 1:
        Y = np.column_stack([Y[:, 0], np.zeros(len(Y))])
    labels = model.predict(X)
    ax.scatter(Y[:, 0], Y[:, 1], c=labels, cmap="tab10", s=8, alpha=0.7)
    for k in np.flatnonzero(model.weights_ > 0.01):
        mean = (model.means_[k] - centre) @ basis
        cov2 = basis.T @ model.covariance_matrix(k) @ basis
        if cov2.shape == (1, 1):
            cov2 = np.diag([cov2[0, 0], 1e-12])
            mean = np.array([mean[0], 0.0])
        vals, vecs = np.linalg.eigh(cov2)
        angle = np.degrees(np.arctan2(vecs[1, -1], vecs[0, -1]))
        ax.add_patch(Ellipse(mean, 4 * np.sqrt(vals[-1]), 4 * np.sqrt(max(vals[0], 0)),
                             angle=angle, fill=False, lw=1.5, color="black"))
        ax.plot(*mean, "k+", ms=10)
    ax.set_xlabel("x1" if d <= 2 else "principal component 1")
    ax.set_ylabel("x2" if d == 2 else ("principal component 2" if d > 2 else ""))
    ax.set_title(f"{model.n_effective_components_} effective components (2-sigma ellipses)")
    fig.tight_layout()
    return fig


def plot_topic_selection(selection, ax=None):
    """Log Bayes factor (points, left axis) and dispersion (dashed, right axis) against K,
    as document 3's Figure 3."""
    fig, ax = _axes(ax)
    ks = selection.column("k")
    ax.plot(ks, selection.column("log_bayes_factor"), "o-", color="C0")
    ax.axvline(selection.best_k, color="0.7", lw=1, zorder=0)
    ax.set_xlabel("number of topics K")
    ax.set_ylabel("log Bayes factor vs K = 1", color="C0")
    right = ax.twinx()
    right.plot(ks, selection.column("dispersion"), "--", color="C3")
    right.axhline(1.0, color="C3", lw=0.5, ls=":")
    right.set_ylabel("dispersion", color="C3")
    ax.set_title(f"choice of K: {selection.best_k}")
    return fig


def plot_hdp_trace(model, nmi=None):
    """Per-sweep trace of an :class:`~mixbayes.HDPMixture` (every chain): NMI against known
    labels when ``nmi`` (chains x sweeps) is given, the number of clusters (dishes) in use,
    the log joint density of the data and the seating, and each concentration that was
    resampled (one with a prior)."""
    import matplotlib.pyplot as plt

    panels = [("clusters in use", model.trace_["n_dishes"]),
              ("log p(y, seating)", model.trace_["log_joint"])]
    for field, symbol, prior in (("top_concentration", "γ0", model.top_concentration_prior),
                                 ("group_concentration", "α0", model.group_concentration_prior)):
        if prior is not None:
            panels.append((f"{symbol} (resampled)", model.trace_[field]))
    if nmi is not None:
        panels.insert(0, ("NMI against labels", np.atleast_2d(nmi)))
    fig, axes = plt.subplots(1, len(panels), figsize=(4.2 * len(panels), 3.4), squeeze=False)
    for axis, (title, values) in zip(axes.ravel(), panels):
        for chain, row in enumerate(values):
            axis.plot(np.arange(1, len(row) + 1), row, lw=1, label=f"chain {chain + 1}")
        axis.set_xlabel("sweep")
        axis.set_title(title, fontsize=10)
        axis.grid(alpha=0.3)
    if len(model.trace_) > 1:
        axes.ravel()[0].legend(fontsize=8)
    fig.tight_layout()
    return fig
