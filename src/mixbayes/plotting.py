"""Matplotlib figures for fitted models; matplotlib is imported only when a figure is drawn."""

import numpy as np

from ._validation import plural

__all__ = ["plot_elbo_trace", "plot_top_words", "plot_selection", "plot_gaussian_clusters",
           "plot_topic_selection", "plot_hdp_trace", "plot_tree", "plot_similarity_blocks",
           "plot_dendrogram", "plot_tree_trace"]


def _pyplot():
    """``matplotlib.pyplot``, on Agg where the configured GUI backend cannot start."""
    import matplotlib

    if matplotlib.get_backend().lower() not in ("agg", "pdf", "svg", "cairo"):
        try:
            import matplotlib.pyplot  # noqa: F401  (a GUI backend that cannot start)
        except ImportError:  # pragma: no cover
            matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _axes(ax, figsize=(6, 4)):
    if ax is not None:
        return ax.figure, ax
    fig, ax = _pyplot().subplots(figsize=figsize)
    return fig, ax


def _listed(numbers, most=4):
    """'2, 3 and 5', or the first ``most`` and how many more."""
    numbers = [str(int(n)) for n in numbers]
    if len(numbers) > most:
        return f"{', '.join(numbers[:most])} and {len(numbers) - most} more"
    return numbers[0] if len(numbers) == 1 else f"{', '.join(numbers[:-1])} and {numbers[-1]}"


def plot_elbo_trace(model, ax=None):
    """Plot the ELBO after every CAVI iteration (and the Gibbs log joint when present).

    Without ``ax``, a CAVI trace gets a second panel: each iteration's gain in ELBO on a log
    scale, where a fit that stopped after two or three iterations still shows how far it
    moved (on the ELBO's own scale such a trace is two dots a fraction of a nat apart)."""
    trace = getattr(model, "log_joint_trace_", None)
    title, label, step = "log joint per Gibbs sweep", "log p(y, z) (nats)", "sweep"
    gains = None
    if trace is None:
        trace = np.asarray(model.elbo_trace_, dtype=float)
        title, label, step = "ELBO per CAVI iteration", "ELBO (nats)", "iteration"
        gains = np.diff(trace) if ax is None and trace.size > 1 else None
    if gains is None:
        fig, ax = _axes(ax)
        trace_axis = ax
    else:
        fig, (trace_axis, gain_axis) = _pyplot().subplots(1, 2, figsize=(9, 3.6))
    trace_axis.plot(np.arange(1, len(trace) + 1), trace, marker=".", lw=1)
    trace_axis.set_xlabel(step)
    trace_axis.set_ylabel(label)
    trace_axis.set_title(title)
    _integer_ticks(trace_axis)
    trace_axis.grid(alpha=0.3)
    if gains is not None:
        iterations = np.arange(2, len(trace) + 1)
        rising, falling = gains > 0, gains < 0
        gain_axis.semilogy(iterations[rising], gains[rising], marker=".", lw=1,
                           label="gain")
        if falling.any():  # a numerical drop of the bound: shown, not hidden
            gain_axis.semilogy(iterations[falling], -gains[falling], "x", color="tab:red",
                               label="drop")
            gain_axis.legend(fontsize=8)
        if not (rising | falling).all():  # a gain of exactly 0 has no place on a log axis
            flat = iterations[~(rising | falling)]
            gain_axis.text(0.5, 0.04, f"no change at {step} {_listed(flat)}",
                           transform=gain_axis.transAxes, ha="center", fontsize=8,
                           color="0.35")
            if not (rising | falling).any():  # nothing on the axis: no scale to read
                gain_axis.set_yticks([], minor=True)
                gain_axis.set_yticks([])
        gain_axis.set_xlabel(step)
        gain_axis.set_ylabel("ELBO gain over the iteration before (nats)")
        gain_axis.set_title(f"gain per iteration ({plural(len(trace), 'iteration')})")
        from matplotlib.ticker import MaxNLocator

        gain_axis.set_xlim(1.5, len(trace) + 0.5)
        if len(trace) <= 10:  # whole iterations only, even on a span of one
            gain_axis.set_xticks(iterations)
        else:
            gain_axis.xaxis.set_major_locator(MaxNLocator(integer=True))
        gain_axis.grid(alpha=0.3, which="both")
    fig.tight_layout()
    return fig


def plot_top_words(model, vocabulary, n=10, max_panels=12):
    """A grid of horizontal bar charts: the ``n`` most probable words of each cluster that
    holds documents (of each topic of a :class:`~mixbayes.TopicModel`, which has weights,
    not clusters: ``usage_``), the largest first; with more than ``max_panels`` of them only
    the largest are drawn, and the title says how many were left out."""
    import matplotlib.pyplot as plt
    from matplotlib.ticker import MaxNLocator

    K = model.components_.shape[0]
    topics = not hasattr(model, "labels_") and hasattr(model, "usage_")
    kind = "topic" if topics else "cluster"
    sizes = model.usage_ if topics else np.bincount(model.labels_, minlength=K)
    words = model.top_words(vocabulary, n=n)
    used = [k for k in np.argsort(-sizes, kind="stable") if sizes[k] > 0 and words[k]]
    shown = used[:max_panels]
    cols = max(1, min(len(shown), 4))
    rows = max(1, int(np.ceil(len(shown) / cols)))
    fig, axes = plt.subplots(rows, cols, figsize=(3.3 * cols, 0.26 * n * rows + 1.0 * rows + 0.6),
                             squeeze=False)
    column_of = {term: j for j, term in enumerate(np.asarray(vocabulary, dtype=str))}
    for panel, axis in enumerate(axes.ravel()):
        if panel >= len(shown):
            axis.axis("off")
            continue
        k = shown[panel]
        probs = model.components_[k, [column_of[w] for w in words[k]]]
        axis.barh(np.arange(len(probs))[::-1], probs, color="C0")
        axis.set_yticks(np.arange(len(probs))[::-1], words[k], fontsize=8)
        axis.set_title(f"topic {k} (mean weight {sizes[k]:.0%})" if topics
                       else f"cluster {k} ({plural(sizes[k], 'doc')})", fontsize=9)
        axis.set_xlabel("word probability", fontsize=8)
        axis.tick_params(axis="x", labelsize=7)
        axis.xaxis.set_major_locator(MaxNLocator(3))  # a few short ticks: labels never collide
    left_out = len(used) - len(shown)
    empty = K - len(used)
    heading = (f"top words of the {len(shown)} largest of {len(used)} {kind}s" if left_out
               else f"top words of {plural(len(used), kind)}")
    if empty:
        heading += f" ({empty} {'unused' if topics else 'empty'} left out)"
    fig.suptitle(heading, fontsize=10)
    fig.tight_layout()
    return fig


def _integer_ticks(axis):
    """Whole-number ticks on the x axis (numbers of clusters, sweeps) and plain numbers on the
    y axis: no offset or scientific notation on log-likelihood scales."""
    from matplotlib.ticker import MaxNLocator, ScalarFormatter

    axis.xaxis.set_major_locator(MaxNLocator(integer=True))
    formatter = ScalarFormatter(useOffset=False)
    formatter.set_scientific(False)
    axis.yaxis.set_major_formatter(formatter)


def _candidate_ticks(axis, ks, most=12):
    """Put the x ticks of a choice-of-K figure on the candidate K values: every candidate gets
    a minor tick, and at most ``most`` of them a label - all when they fit, else the round
    ones (multiples of 2, 5, 10, 20, ... grid steps), else every s-th."""
    from matplotlib.ticker import FixedLocator, FormatStrFormatter

    ks = np.unique(np.asarray(ks, dtype=int))
    labelled = ks
    if ks.size > most:
        grid = int(np.gcd.reduce(np.diff(ks)))
        labelled = ks[::int(np.ceil(ks.size / most))]
        for nice in (2, 5, 10, 20, 25, 50, 100, 200, 250, 500, 1000):
            multiples = ks[ks % (nice * grid) == 0]
            if 4 <= multiples.size <= most:
                labelled = multiples
                break
    axis.xaxis.set_major_locator(FixedLocator(labelled))
    axis.xaxis.set_minor_locator(FixedLocator(ks))
    axis.xaxis.set_major_formatter(FormatStrFormatter("%d"))


def _legend_below(ax, handles, labels):
    """The legend under the x axis, where it covers no curve of either y axis."""
    ax.legend(handles, labels, fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.16),
              ncol=2, frameon=False)


def plot_selection(selection, ax=None):
    """Both criteria of :func:`~mixbayes.select_n_clusters` against K, each in its own panel
    on the same K axis (one curve never hides the other): ELBO + log K! above and, when
    documents were held out, their log predictive likelihood below, each with its chosen K
    marked. ``ax`` holds the upper panel; the lower one is added beneath it."""
    heldout = selection.best_k_heldout is not None
    fig, ax = _axes(ax, figsize=(9, 6.4) if heldout else (9, 4.2))
    ks = selection.column("k")
    panels = [(ax, "score", selection.best_k, "C0", "o-", "--", "ELBO + log K!",
               "ELBO + log K! (nats)", "ELBO + log K!")]
    if heldout:
        from mpl_toolkits.axes_grid1 import make_axes_locatable

        lower = make_axes_locatable(ax).append_axes("bottom", size="100%", pad=0.3, sharex=ax)
        ax.tick_params(labelbottom=False)
        panels.append((lower, "heldout_log_likelihood", selection.best_k_heldout, "C3", "s-",
                       ":", f"held-out log likelihood ({plural(selection.n_heldout, 'document')})",
                       "held-out log\nlikelihood (nats)", "held-out"))
    for axis, column, best, colour, style, chosen, label, ylabel, short in panels:
        axis.plot(ks, selection.column(column), style, color=colour, ms=4, label=label)
        axis.axvline(best, color=colour, ls=chosen, lw=1.5, label=f"chosen K = {best} ({short})")
        axis.set_ylabel(ylabel, color=colour)
        axis.grid(alpha=0.3)
        axis.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0),
                    frameon=False)  # beside the panel, over no curve
        _integer_ticks(axis)
    bottom = panels[-1][0]
    bottom.set_xlabel("number of clusters K")
    _candidate_ticks(bottom, ks)  # last: _integer_ticks set the shared x locator too
    ax.set_title("choice of the number of clusters")
    fig.tight_layout()
    return fig


def _principal_plane(X):
    """The centre and the 2-D basis of a scatter of ``X``: the features themselves for one or
    two, else the first two principal axes, each signed so that its largest loading is
    positive -- the convention of the report's page (:func:`mixbayes.report.principal_plane`),
    so that ``scatter.png`` and the page are never mirror images of one another."""
    from .report import principal_plane

    return principal_plane(X)


def plot_gaussian_clusters(model, X, ax=None, feature_names=None):
    """Scatter the points coloured by cluster, with each used component's 2-sigma ellipse.

    With more than two features the points, means and covariances are projected on the first
    two principal components of ``X``. ``feature_names`` (the columns' names) label the axes
    of one or two features (default: x1, x2).
    """
    from matplotlib.patches import Ellipse

    if not all(hasattr(model, name) for name in ("predict", "means_", "weights_")):
        raise TypeError(f"plot_gaussian_clusters draws a VariationalGaussianMixture (components "
                        f"with means, covariances and weights); got a "
                        f"{type(model).__name__}: use plot_hdp_trace or plot_tree for it.")
    fig, ax = _axes(ax, figsize=(6, 5))
    X = np.asarray(X, dtype=float)
    X = X[:, None] if X.ndim == 1 else X
    d = X.shape[1]
    names = list(feature_names) if feature_names is not None else [f"x{j + 1}" for j in range(d)]
    if d == 1:
        return _plot_gaussian_1d(model, X[:, 0], fig, ax, names[0])
    # one or two features are drawn as they are (the axes are named by them); more, on the
    # principal components of the centred points, signed as the report's page signs them
    centre, basis = _principal_plane(X)
    Y = (X - centre) @ basis
    labels = model.predict(X)
    used = np.unique(labels)
    colours = {k: f"C{i % 10}" for i, k in enumerate(used)}
    for k in used:
        mine = labels == k
        ax.scatter(Y[mine, 0], Y[mine, 1], color=colours[k], s=8, alpha=0.7,
                   label=f"cluster {k} ({plural(mine.sum(), 'point')})")
    for k in np.flatnonzero(model.weights_ > 0.01):
        colour = colours.get(k, "black")  # the ellipse in its points' colour
        mean = (model.means_[k] - centre) @ basis
        cov2 = basis.T @ model.covariance_matrix(k) @ basis
        vals, vecs = np.linalg.eigh(cov2)
        angle = np.degrees(np.arctan2(vecs[1, -1], vecs[0, -1]))
        ax.add_patch(Ellipse(mean, 4 * np.sqrt(vals[-1]), 4 * np.sqrt(max(vals[0], 0)),
                             angle=angle, fill=False, lw=1.5, color=colour))
        ax.plot(*mean, "+", color=colour, ms=10, mew=2)
    ax.set_xlabel(names[0] if d == 2 else "principal component 1")
    ax.set_ylabel(names[1] if d == 2 else "principal component 2")
    ax.set_title(f"{plural(model.n_effective_components_, 'effective component')} "
                 "(2-sigma ellipses)")
    _integer_ticks(ax)
    from matplotlib.ticker import AutoLocator

    ax.xaxis.set_major_locator(AutoLocator())  # coordinates, not counts
    if used.size <= 12:
        ax.legend(fontsize=7, markerscale=2, loc="best")
    fig.tight_layout()
    return fig


def _histogram_bins(x):
    """Bin edges of the one-feature figures: the square root of the points, 10 to 40."""
    return np.histogram_bin_edges(x, bins=int(np.clip(np.sqrt(x.size), 10, 40)))


def _plot_gaussian_1d(model, x, fig, ax, name):
    """One feature: a histogram of the points stacked by cluster, and each used component's
    density (weight x normal with the fitted mean and variance) scaled to counts."""
    labels = model.predict(x[:, None])
    used = np.unique(labels)
    bins = _histogram_bins(x)
    ax.hist([x[labels == k] for k in used], bins=bins, stacked=True, alpha=0.6,
            color=[f"C{i % 10}" for i in range(used.size)],
            label=[f"cluster {k} ({plural(np.sum(labels == k), 'point')})" for k in used])
    grid = np.linspace(x.min() - 0.1 * np.ptp(x), x.max() + 0.1 * np.ptp(x), 400)
    width = bins[1] - bins[0] if bins.size > 1 else 1.0
    for i, k in enumerate(used):
        variance = float(np.ravel(model.covariance_matrix(k))[0])
        density = np.exp(-0.5 * (grid - model.means_[k, 0]) ** 2 / variance) / np.sqrt(
            2 * np.pi * variance)
        ax.plot(grid, x.size * width * model.weights_[k] * density, color=f"C{i % 10}", lw=2)
    ax.set_xlabel(name)
    ax.set_ylabel("points per bin")
    ax.set_title(f"{plural(model.n_effective_components_, 'effective component')} "
                 "(fitted densities)")
    ax.legend(fontsize=7, loc="best")
    fig.tight_layout()
    return fig


def plot_topic_selection(selection, ax=None):
    """Log Bayes factor (points, left axis) and dispersion (dashed, right axis) against K,
    as Figure 3 of Taddy (2012)."""
    fig, ax = _axes(ax)
    ks = selection.column("k")
    ax.plot(ks, selection.column("log_bayes_factor"), "o-", color="C0",
            label="log Bayes factor vs K = 1")
    ax.axvline(selection.best_k, color="0.5", lw=1, ls="--", zorder=0,
               label=f"chosen K = {selection.best_k}")
    ax.set_xlabel("number of topics K")
    ax.set_ylabel("log Bayes factor vs K = 1 (nats)", color="C0")
    _integer_ticks(ax)
    _candidate_ticks(ax, ks)
    ax.grid(alpha=0.3)
    right = ax.twinx()
    right.plot(ks, selection.column("dispersion"), "--", color="C3", label="residual dispersion")
    right.axhline(1.0, color="C3", lw=0.5, ls=":", label="dispersion 1 (a fit as good as the "
                  "multinomial allows)")
    right.set_ylabel("residual dispersion", color="C3")
    handles, labels = ax.get_legend_handles_labels()
    more = right.get_legend_handles_labels()
    _legend_below(ax, handles + more[0], labels + more[1])
    ax.set_title(f"choice of K: {selection.best_k}")
    fig.tight_layout()
    return fig


def plot_hdp_trace(model, nmi=None):
    """Per-sweep trace of an :class:`~mixbayes.HDPMixture` (every chain): NMI against known
    labels when ``nmi`` (chains x sweeps) is given, the number of clusters (dishes) in use,
    the log joint density of the data and the seating, and each concentration that was
    resampled (one with a prior)."""
    import matplotlib.pyplot as plt

    from .hdp.model import fitted_defaults

    priors = fitted_defaults(model)  # "auto" as the fit resolved it
    panels = [("clusters in use", "clusters", model.trace_["n_dishes"]),
              ("log p(y, seating)", "nats", model.trace_["log_joint"])]
    for field, symbol in (("top_concentration", "γ0"), ("group_concentration", "α0")):
        if priors[field + "_prior"] is not None:
            panels.append((f"{symbol} (resampled)", symbol, model.trace_[field]))
    if nmi is not None:
        panels.insert(0, ("NMI against labels", "NMI", np.atleast_2d(nmi)))
    # at most three panels a row (five in one row made a strip 2,300 pixels wide), the rows
    # filled evenly: four panels are 2 x 2, not 3 + 1 beside two blanks
    rows = -(-len(panels) // 3)
    columns = -(-len(panels) // rows)
    fig, axes = plt.subplots(rows, columns, figsize=(4.2 * columns, 3.4 * rows), squeeze=False)
    for axis in axes.ravel()[len(panels):]:
        axis.set_visible(False)
    for axis, (title, unit, values) in zip(axes.ravel(), panels):
        for chain, row in enumerate(values):
            axis.plot(np.arange(1, len(row) + 1), row, lw=1, label=f"chain {chain + 1}")
        axis.set_xlabel("sweep")
        axis.set_ylabel(unit)
        axis.set_title(title, fontsize=10)
        _integer_ticks(axis)
        if unit == "clusters":
            from matplotlib.ticker import MaxNLocator

            axis.yaxis.set_major_locator(MaxNLocator(integer=True))
        axis.grid(alpha=0.3)
    if len(model.trace_) > 1:
        axes.ravel()[0].legend(fontsize=8)
    fig.tight_layout()
    return fig


def tree_layout(parent):
    """x position of every node: leaves evenly spaced in depth-first order, an inner node
    centred over its children."""
    children = [[] for _ in parent]
    for node, up in enumerate(parent):
        if up >= 0:
            children[up].append(node)
    x = np.zeros(len(parent))
    next_leaf = [0]

    def place(node):
        if not children[node]:
            x[node] = next_leaf[0]
            next_leaf[0] += 1
        else:
            for child in children[node]:
                place(child)
            x[node] = np.mean([x[c] for c in children[node]])

    place(0)
    return x, children


def plot_tree(model, X=None, feature_names=None):
    """The fitted tree of a :class:`~mixbayes.HierarchicalMixture` and, given its points, the
    points coloured by top-level branch.

    Left: nodes by level (the root at the top), disc area proportional to the points through
    the node, each labelled with its number and size. Right (when ``X`` is given): the points
    coloured by their level-1 branch, in the first two features (two principal components when
    there are more), with every used component's mean and its 2-sigma ellipse (its
    covariance projected into that plane; a circle for the known sigma^2 I).
    """
    import matplotlib.pyplot as plt

    parent, level, size = model.node_parent_, model.node_level_, model.node_size_
    x, children = tree_layout(parent)
    # a merged node keeps its level in the sampled tree; draw it at its rank among levels
    depth_of = {lv: i for i, lv in enumerate(np.unique(level))}
    y = -np.array([depth_of[lv] for lv in level], dtype=float)
    top = children[0] or [0]
    branch_colour = {node: f"C{i % 10}" for i, node in enumerate(top)}
    colour = np.empty(parent.size, dtype=object)
    for node in range(parent.size):
        up = node
        while up >= 0 and up not in branch_colour:
            up = parent[up]
        colour[node] = branch_colour.get(up, "grey")
    n_panels = 1 if X is None else 2
    fig, axes = plt.subplots(1, n_panels, figsize=(6 * n_panels, 5), squeeze=False)
    ax = axes[0, 0]
    for node in range(1, parent.size):
        ax.plot([x[parent[node]], x[node]], [y[parent[node]], y[node]], color="0.6", lw=1,
                zorder=1)
    area = np.maximum(600.0 * size / max(size.max(), 1), 12.0)  # points^2
    ax.scatter(x, y, s=area, c=list(colour), alpha=0.8, edgecolors="black", linewidths=0.5,
               zorder=2)
    many = parent.size > 40
    for node in range(parent.size):
        if not many or level[node] <= 1:  # below the disc, clear of its edge
            ax.annotate(f"n{node}\n{size[node]}", (x[node], y[node]), fontsize=7,
                        ha="center", va="top", xytext=(0, -np.sqrt(area[node]) / 2 - 2),
                        textcoords="offset points")
    ax.set_yticks(sorted(set(y)))
    ax.set_yticklabels(["root" if v == 0 else f"level {int(-v)}" for v in sorted(set(y))])
    ax.set_xticks([])
    ax.set_xlim(x.min() - 0.8, x.max() + 0.8)
    ax.set_ylim(y.min() - 0.6, 0.4)
    ax.set_title(f"{model.tree_.describe()} (disc area = points)")
    for side in ("top", "right", "bottom"):
        ax.spines[side].set_visible(False)
    if X is not None:
        _plot_tree_points(model, np.asarray(X, dtype=float), axes[0, 1], branch_colour,
                          feature_names)
    fig.tight_layout()
    return fig


def plot_similarity_blocks(blocks, sizes, max_labelled=20):
    """The posterior similarity between and within a partition's clusters (``blocks`` from
    :func:`mixbayes.partition.block_similarity`), each block as wide and tall as its cluster
    has items, so the picture is the n x n similarity matrix averaged over blocks: readable
    at any number of items."""
    import matplotlib.pyplot as plt

    edges = np.concatenate([[0], np.cumsum(sizes)])
    fig, ax = plt.subplots(figsize=(5.6, 4.8))
    mesh = ax.pcolormesh(edges, edges, blocks, cmap="viridis", vmin=0, vmax=1)
    ax.set_xlim(0, edges[-1])
    ax.set_ylim(edges[-1], 0)
    ax.set_aspect("equal")
    centres = 0.5 * (edges[:-1] + edges[1:])
    labelled = len(sizes) <= max_labelled
    if labelled:  # ticks name the clusters; beyond max_labelled they count the items
        shown = _spaced(centres, sizes, edges[-1] / 30)  # tiny clusters' ticks would overlap
        names = [str(k) for k in shown]
        ax.set_xticks(centres[shown], names, fontsize=8)
        ax.set_yticks(centres[shown], names, fontsize=8)
    ax.set_xlabel(f"items by point-estimate cluster ({int(edges[-1]):,})")
    ax.set_ylabel("point-estimate cluster" if labelled else "items, in the same order")
    ax.set_title("posterior similarity, mean per block", fontsize=10)
    fig.colorbar(mesh, ax=ax, label="P(two items share a cluster)")
    fig.tight_layout()
    return fig


def _spaced(positions, widths, gap):
    """The indices (sorted) of the ``positions`` to label when labels must be ``gap`` apart:
    the widest blocks first, each kept where it is ``gap`` from every one kept before."""
    kept = []
    for i in np.argsort(-np.asarray(widths), kind="stable"):
        if all(abs(positions[i] - positions[j]) >= gap for j in kept):
            kept.append(i)
    return np.sort(np.asarray(kept, dtype=int))


def _projected_covariances(model, basis):
    """Every component's covariance in the plane of ``basis`` (K, 2, 2); one feature is
    shown as a circle."""
    covariances = np.array([model.covariance_matrix(k) for k in range(model.n_components_)])
    shapes = np.einsum("ia,kij,jb->kab", basis, covariances, basis)
    if shapes.shape[1] == 1:
        shapes = shapes[:, 0, 0, None, None] * np.eye(2)
    return shapes


def top_branches(model):
    """Every point's top-level branch of the sampled tree: the root's child on its path (the
    root itself where a single level-1 node was merged into it)."""
    paths = model.paths_
    at_top = model.node_parent_[paths] == 0
    return np.where(at_top.any(axis=1), paths[np.arange(len(paths)), at_top.argmax(axis=1)], 0)


def linkage_branches(model):
    """``(top, branch_of, mixed)``: every point's top-level branch, and for every node of
    ``linkage_`` (points, then rows) a branch it lies in and whether it spans several."""
    Z = model.linkage_
    n = Z.shape[0] + 1
    top = top_branches(model)
    branch_of = np.concatenate([top, np.zeros(n - 1, dtype=top.dtype)])
    mixed = np.zeros(2 * n - 1, dtype=bool)
    for row, (a, b) in enumerate(Z[:, :2].astype(np.int64)):
        branch_of[n + row] = branch_of[a]
        mixed[n + row] = mixed[a] or mixed[b] or branch_of[a] != branch_of[b]
    return top, branch_of, mixed


def dendrogram_clusters(Z, max_leaves=60):
    """How many clusters a dendrogram figure of ``Z`` shows at its foot: the sampled tree's
    components (every merge from stage 1 up) when there are at most ``max_leaves`` of them
    and more than one, else the top ``max_leaves`` (all the points when there are fewer)."""
    n = Z.shape[0] + 1
    above = int(np.sum(Z[:, 2] >= 1.0))
    if 1 <= above < max_leaves:
        return above + 1
    return min(max_leaves, n)


def plot_dendrogram(model, max_leaves=60):
    """The full dendrogram (:attr:`~mixbayes.HierarchicalMixture.linkage_`) of a fitted tree:
    scipy's dendrogram, its branches coloured by the sampled tree's top-level branch, its foot
    the sampled tree's components (or the top ``max_leaves`` clusters when there are more,
    :func:`dendrogram_clusters`; a contracted leaf shows its size in brackets, a lone point its
    index). Heights are
    stages: below 1 points within a component, below 2 components within a leaf, then one
    unit per level of the sampled tree's inner nodes (dashed lines)."""
    import matplotlib.pyplot as plt
    from scipy.cluster.hierarchy import dendrogram

    Z = model.linkage_
    n = Z.shape[0] + 1
    top, branch_of, mixed = linkage_branches(model)
    colour_of = {node: f"C{i % 10}" for i, node in enumerate(np.unique(top))}
    fig, ax = plt.subplots(figsize=(10, 4.5))
    shown = dendrogram_clusters(Z, max_leaves)
    # (no contracted-merge markers: they pile up as blobs at the foot, inside a component)
    truncate = dict(truncate_mode="lastp", p=shown, show_contracted=False) if shown < n else {}
    drawn = dendrogram(Z, ax=ax, no_labels=n > 200 and not truncate, leaf_font_size=7,
                       link_color_func=lambda k: "0.35" if mixed[k] else colour_of[branch_of[k]],
                       **truncate)
    # a cluster shown whole at the foot has no link of its own: scipy draws its stem in the
    # colour of the merge above it, grey where that joins branches (iris' setosa, one leaf,
    # was then in no colour of its legend's); its stem and label carry its branch instead
    stems = {}  # foot x -> the height of the merge above it
    for xs, ys in zip(drawn["icoord"], drawn["dcoord"]):
        for leg in (0, 3):
            if ys[leg] == 0.0:
                stems[xs[leg]] = ys[1]
    for i, (label, node) in enumerate(zip(ax.get_xticklabels(), drawn["leaves"])):
        if not mixed[node]:
            colour = colour_of[branch_of[node]]
            label.set_color(colour)
            x = 5.0 + 10.0 * i  # scipy's foot positions
            if x in stems:
                ax.plot([x, x], [0.0, stems[x]], color=colour, lw=1.5, zorder=3)
    top_height = float(Z[:, 2].max()) if Z.size else 1.0
    for stage in range(1, int(np.floor(top_height)) + 1):
        ax.axhline(stage, color="0.75", lw=0.8, ls="--", zorder=0)
    ax.set_ylabel("merge stage: below 1 within a component,\n1-2 within a leaf, "
                  "above 2 between nodes", fontsize=9)
    ax.set_title(f"full dendrogram of {plural(n, 'point')}"
                 + (f" (its top {shown} clusters: (n) under a cluster of n points, a lone "
                    "point's index under it)" if shown < n else "")
                 + "\ncolour: the sampled tree's top-level branch (node numbers as printed)",
                 fontsize=10)
    from matplotlib.lines import Line2D

    nodes, sizes = np.unique(top, return_counts=True)
    handles = [Line2D([], [], color=colour_of[node], lw=2,
                      label=f"node {node} ({plural(int(size), 'point')})")
               for node, size in zip(nodes, sizes)]
    if mixed.any():
        handles.append(Line2D([], [], color="0.35", lw=2, label="merges joining\nbranches"))
    ax.legend(handles=handles, title="top-level branch", fontsize=8, title_fontsize=8,
              loc="upper left", bbox_to_anchor=(1.0, 1.0), frameon=False)
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)
    fig.tight_layout()
    return fig


def _plot_tree_points(model, X, ax, branch_colour, feature_names):
    from matplotlib.patches import Ellipse

    X = X[:, None] if X.ndim == 1 else X
    d = X.shape[1]
    names = list(feature_names) if feature_names is not None else [f"x{j + 1}" for j in range(d)]
    if d == 1:
        return _plot_tree_points_1d(model, X[:, 0], ax, branch_colour, names[0])
    # features named on the axes: as they are; more, the page's signed principal plane
    centre, basis = _principal_plane(X)
    basis = basis[:, :1] if d == 1 else basis
    Y = (X - centre) @ basis
    if Y.shape[1] == 1:
        Y = np.column_stack([Y[:, 0], np.zeros(len(Y))])
    # each point's top-level branch is the root's child on its path: not always its level-1
    # node, which is the root itself where a single level-1 node was merged into it
    top = top_branches(model)
    for node in np.unique(top):
        mine = top == node
        ax.scatter(Y[mine, 0], Y[mine, 1], s=8, alpha=0.7, color=branch_colour.get(node, "grey"),
                   label=f"branch n{node} ({plural(int(mine.sum()), 'point')})")
    means = (model.means_ - centre) @ basis
    if means.shape[1] == 1:
        means = np.column_stack([means[:, 0], np.zeros(len(means))])
    for mean, shape in zip(means, _projected_covariances(model, basis)):
        # the 2-sigma ellipse of the component's covariance in the plane shown
        values, vectors = np.linalg.eigh(shape)
        angle = np.degrees(np.arctan2(vectors[1, -1], vectors[0, -1]))
        ax.add_patch(Ellipse(mean, 4 * np.sqrt(max(values[-1], 0.0)),
                             4 * np.sqrt(max(values[0], 0.0)), angle=angle, fill=False, lw=1,
                             color="black", alpha=0.6))
        ax.plot(*mean, "+", color="black", ms=8, mew=1.5)
    ax.set_xlabel(names[0] if d <= 2 else "principal component 1")
    ax.set_ylabel(names[1] if d == 2 else ("" if d == 1 else "principal component 2"))
    ax.set_aspect("equal", adjustable="datalim")
    ax.set_title(f"points by top-level branch; {plural(model.n_components_, 'component')} "
                 "(2-sigma ellipses)")
    if np.unique(top).size <= 12:
        ax.legend(fontsize=7, markerscale=2, loc="best")


def _plot_tree_points_1d(model, x, ax, branch_colour, name):
    """One feature: a histogram of the points stacked by top-level branch, and above it each
    component's mean and 2-sigma interval (drawn as ellipses on an invented second axis, the
    points on a line at 0, the picture read as two dimensions)."""
    top = top_branches(model)
    nodes = np.unique(top)
    bins = _histogram_bins(x)
    ax.hist([x[top == node] for node in nodes], bins=bins, stacked=True, alpha=0.7,
            color=[branch_colour.get(node, "grey") for node in nodes],
            label=[f"branch n{node} ({plural(int(np.sum(top == node)), 'point')})"
                   for node in nodes])
    highest = ax.get_ylim()[1]
    spreads = np.sqrt(np.maximum([float(np.ravel(shape)[0]) for shape in
                                  _projected_covariances(model, np.ones((1, 1)))], 0.0))
    # intervals in rows above the bars, so that overlapping ones stay apart
    for row, k in enumerate(np.argsort(model.means_[:, 0], kind="stable")):
        ax.errorbar(model.means_[k, 0], highest * (1.08 + 0.08 * (row % 3)),
                    xerr=2 * spreads[k], fmt="+", color="black", ms=8, capsize=3, lw=1)
    ax.set_ylim(0, highest * 1.35)
    ax.set_xlabel(name)
    ax.set_ylabel("points per bin")
    ax.set_title(f"points by top-level branch; {plural(model.n_components_, 'component')} "
                 "(mean, 2-sigma interval)")
    if nodes.size <= 12:
        ax.legend(fontsize=7, loc="upper left")


# one dash pattern per level, up to depth="auto"'s deepest (5): dashed, dotted, dash-dot,
# dash-dot-dot, long dashes; deeper trees (--depth 6 and more) get a long dash and one dot
# more per level (_level_style), so no two levels share a pattern
_LEVEL_STYLES = ("--", ":", "-.", (0, (3, 1, 1, 1, 1, 1)), (0, (8, 2)))


def _level_style(level):
    """The dash pattern of the line of nodes at level ``level + 1``: its own at every depth."""
    if level < len(_LEVEL_STYLES):
        return _LEVEL_STYLES[level]
    return (0, (8, 2) + (1, 1.5) * (level - len(_LEVEL_STYLES) + 1))


def plot_tree_trace(model):
    """Per-sweep trace of a :class:`~mixbayes.HierarchicalMixture` (every chain): the
    regularised complete-data log-likelihood, the components and the occupied nodes per level,
    and the share of path proposals accepted; the burn-in is shaded."""
    import matplotlib.pyplot as plt

    trace = model.trace_
    burn_in = model.n_iter // 2 if model.burn_in is None else model.burn_in
    fig, axes = plt.subplots(1, 3, figsize=(13, 3.4))
    sweeps = np.arange(1, trace.shape[1] + 1)
    for chain, row in enumerate(trace):
        label = f"chain {chain + 1}" if trace.shape[0] > 1 else None
        axes[0].plot(sweeps, row["rcdll"], lw=1, label=label)
        axes[1].plot(sweeps, row["n_components"], lw=1, color=f"C{chain}",
                     label="components" if chain == 0 else None)
        for level in range(row["nodes"].shape[1]):
            # one chain: a colour per level too (the colours tell chains apart otherwise)
            colour = f"C{(level + 1) % 10}" if trace.shape[0] == 1 else f"C{chain}"
            axes[1].plot(sweeps, row["nodes"][:, level], lw=1, color=colour,
                         ls=_level_style(level),
                         label=f"nodes at level {level + 1}" if chain == 0 else None)
        axes[2].plot(sweeps, row["acceptance"], lw=1, color=f"C{chain}", label=label)
    titles = ("regularised complete-data log-lik.", "components and nodes",
              "path proposals accepted")
    for axis, title, unit in zip(axes, titles, ("nats", "count", "share")):
        axis.axvspan(0.5, burn_in + 0.5, color="0.9", zorder=0)
        axis.set_xlabel("sweep (grey: burn-in)")
        axis.set_ylabel(unit)
        axis.set_title(title, fontsize=10)
        axis.grid(alpha=0.3)
        _integer_ticks(axis)
    from matplotlib.ticker import MaxNLocator

    axes[1].yaxis.set_major_locator(MaxNLocator(integer=True))
    axes[2].set_ylim(0, 1)
    # below the panel, where it covers no line (at depth 7 its eight entries hid half of them)
    n_entries = 1 + trace[0]["nodes"].shape[1]
    axes[1].legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.2),
                   ncol=min(3, n_entries), frameon=False)
    if trace.shape[0] > 1:
        axes[0].legend(fontsize=8)
    fig.tight_layout()
    return fig
