"""Matplotlib figures for fitted models; matplotlib is imported only when a figure is drawn."""

import numpy as np

__all__ = ["plot_elbo_trace", "plot_top_words", "plot_selection"]


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
        probs = model.components_[k, order[k]]
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
