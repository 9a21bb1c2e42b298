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
    sizes = np.bincount(model.labels_, minlength=3)
    for axis, k in zip(panels, np.argsort(-sizes, kind="stable")):  # largest first
        assert axis.get_title() == f"cluster {k} ({sizes[k]} docs)"
        labels = [t.get_text() for t in axis.get_yticklabels()]
        assert labels == model.top_words(corpus.vocabulary, n=5)[k]
        assert axis.get_xlabel() == "word probability"


def test_top_words_figure_of_a_topic_model_orders_topics_by_their_weight():
    """A topic model has weights, not clusters (no ``labels_``): its panels are its topics,
    the most used first, titled by their mean weight (an AttributeError before)."""
    corpus, _ = mb.datasets.make_dmm_corpus(120, 40, 3, random_state=0)
    model = mb.TopicModel(3, random_state=0).fit(corpus.counts)
    fig = plotting.plot_top_words(model, corpus.vocabulary, n=5)
    panels = [ax for ax in fig.axes if ax.axison]
    order = np.argsort(-model.usage_, kind="stable")
    assert [ax.get_title() for ax in panels] == [
        f"topic {k} (mean weight {model.usage_[k]:.0%})" for k in order]
    assert [t.get_text() for t in panels[0].get_yticklabels()] == model.top_words(
        corpus.vocabulary, n=5)[order[0]]
    assert fig._suptitle.get_text() == "top words of 3 topics"


def test_top_words_figure_at_high_k_shows_the_largest_and_says_so():
    corpus, _ = mb.datasets.make_dmm_corpus(200, 60, 8, random_state=1)
    model = mb.DirichletMultinomialMixture(20, n_init=1).fit(corpus.counts)
    sizes = np.bincount(model.labels_, minlength=20)
    used = int((sizes > 0).sum())
    assert 4 < used < 20
    fig = plotting.plot_top_words(model, corpus.vocabulary, n=5, max_panels=4)
    panels = [ax for ax in fig.axes if ax.axison]
    assert len(panels) == 4
    shown = [int(ax.get_title().split()[1]) for ax in panels]
    assert sorted(sizes[shown]) == sorted(np.sort(sizes)[-4:])
    assert fig._suptitle.get_text() == (f"top words of the 4 largest of {used} clusters "
                                        f"({20 - used} empty left out)")
    assert fig.get_size_inches()[1] < 6  # not a tower of empty panels


def test_figures_label_every_axis_and_use_plain_numbers(fitted):
    _, model = fitted
    fig = plotting.plot_elbo_trace(model)
    axis = fig.axes[0]
    fig.canvas.draw()
    assert axis.get_xlabel() == "iteration" and axis.get_ylabel() == "ELBO (nats)"
    assert axis.yaxis.get_offset_text().get_text() == ""  # no "+1e5" above the axis
    assert all(float(t).is_integer() for t in axis.get_xticks())
    X, truth = mb.datasets.make_gaussian_mixture(200, 3, 2, random_state=0)
    gmm = mb.VariationalGaussianMixture(5).fit(X)
    fig = plotting.plot_gaussian_clusters(gmm, X)
    legend = [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    assert len(legend) == gmm.n_effective_components_ and legend[0].startswith("cluster ")


def test_selection_figure_marks_best_k():
    corpus, _ = mb.datasets.make_dmm_corpus(100, 40, 2, random_state=3)
    sel = mb.select_n_clusters(corpus.counts, [1, 2, 3])
    fig = sel.plot()
    x = fig.axes[0].get_lines()[0].get_xdata()
    assert list(x) == [1, 2, 3]
    # one panel per criterion on the same K axis, so that neither curve hides the other
    upper, lower = fig.axes
    assert [t.get_text() for t in upper.get_legend().get_texts()] == [
        "ELBO + log K!", f"chosen K = {sel.best_k} (ELBO + log K!)"]
    assert [t.get_text() for t in lower.get_legend().get_texts()] == [
        f"held-out log likelihood ({sel.n_heldout} documents)",
        f"chosen K = {sel.best_k_heldout} (held-out)"]
    assert lower.get_ylabel() == "held-out log\nlikelihood (nats)"
    assert lower.get_xlabel() == "number of clusters K" and upper.get_xlabel() == ""
    fig.canvas.draw()
    assert upper.get_window_extent().y0 > lower.get_window_extent().y1  # stacked, not overlaid
    assert list(lower.get_lines()[0].get_ydata()) == list(sel.column("heldout_log_likelihood"))


def test_dendrogram_legend_names_every_colour_it_draws():
    X, _ = mb.datasets.make_tree_data(60, kind="nested", random_state=1)
    tree = mb.HierarchicalMixture(n_iter=8, random_state=0).fit(X)
    fig = plotting.plot_dendrogram(tree)
    axis = fig.axes[0]
    legend = axis.get_legend()
    top, _, _ = plotting.linkage_branches(tree)
    nodes, sizes = np.unique(top, return_counts=True)
    texts = [t.get_text() for t in legend.get_texts()]
    assert legend.get_title().get_text() == "top-level branch"
    assert texts == [f"node {n} ({s} points)" for n, s in zip(nodes, sizes)] + [
        "merges joining\nbranches"]
    from matplotlib.colors import to_hex

    named = {to_hex(line.get_color()) for line in legend.get_lines()}
    drawn = {to_hex(c) for collection in axis.collections for c in collection.get_colors()}
    assert drawn and drawn <= named
    # a cluster at the foot inside one branch has its label in that branch's colour (its stem
    # may be drawn in the grey of the merge above it); a label across branches stays black
    labels = {to_hex(label.get_color()) for label in axis.get_xticklabels()}
    branch_colours = named - {to_hex("0.35")}
    assert labels & branch_colours and labels <= branch_colours | {to_hex("black")}
    stems = {to_hex(line.get_color()) for line in axis.get_lines()
             if len(line.get_xdata()) == 2 and line.get_xdata()[0] == line.get_xdata()[1]}
    assert stems <= branch_colours  # (the stages' dashed lines are horizontal)


def test_a_branch_that_is_one_cluster_at_the_foot_has_its_stem_in_its_colour():
    """Iris: setosa is a top-level branch of one leaf, a cluster shown whole at the foot with
    no link of its own; scipy drew its stem in the grey of the root's merge, so its legend
    colour appeared nowhere but in its label. Its stem is drawn in its colour, from the foot
    to the merge above it."""
    from matplotlib.colors import to_hex
    from sklearn.datasets import load_iris

    tree = mb.HierarchicalMixture(random_state=0).fit(load_iris().data)
    top, _, _ = plotting.linkage_branches(tree)
    nodes, sizes = np.unique(top, return_counts=True)
    assert sizes.min() == 50  # setosa alone
    axis = plotting.plot_dendrogram(tree).axes[0]
    legend = {t.get_text(): to_hex(line.get_color()) for t, line in
              zip(axis.get_legend().get_texts(), axis.get_legend().get_lines())}
    lone = legend[f"node {nodes[sizes.argmin()]} (50 points)"]
    stems = [line for line in axis.get_lines() if to_hex(line.get_color()) == lone
             and len(line.get_xdata()) == 2]
    assert len(stems) == 1
    (x0, x1), (y0, y1) = stems[0].get_xdata(), stems[0].get_ydata()
    assert x0 == x1 and y0 == 0.0 and y1 == pytest.approx(tree.linkage_[:, 2].max())


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


def test_still_rising_and_tables():
    from mixbayes._selection import format_table, still_rising

    ks = list(range(2, 31))
    climbing = -1000.0 / np.asarray(ks, dtype=float) * 100  # keeps gaining to the end
    assert still_rising(ks, climbing)
    peaked = -((np.asarray(ks) - 10.0) ** 2) * 50.0
    assert not still_rising(ks, peaked)
    flat_top = np.minimum(np.asarray(ks, dtype=float), 12.0) * 100.0
    assert not still_rising(ks, flat_top)
    # a short range that peaks at its second-to-last K and falls at the last (the DMM search
    # 1:4 on six short texts): not "still rising", though the peak is in the top quarter
    assert not still_rising([1, 2, 3, 4], [-399.5, -300.6, -289.1, -292.1])
    assert still_rising([1, 2, 3, 4], [-399.5, -300.6, -292.1, -289.1])
    table = format_table([dict(k=2, x=np.float64(1.25)), dict(k=10, x=None)],
                         {"k": "d", "x": ".1f"})
    assert table.splitlines() == [" k    x", " 2  1.2", "10    -"]


def test_topic_selection_notes_never_ask_for_a_range_below_two():
    from mixbayes.topics.selection import TopicSelection

    def selection(ks, values):
        # overdispersed at every K (p = 0), as real text is: the Bayes factor's notes alone
        table = [dict(k=k, log_bayes_factor=v, dispersion=2.0, p_value=0.0, n_iter=3)
                 for k, v in zip(ks, values)]
        best = ks[int(np.argmax(values))]
        return TopicSelection(table, best, None)

    at_two = selection([2, 3, 4, 5], [10.0, 8.0, 5.0, 1.0])
    assert len(at_two.notes) == 1 and "smallest K the search allows" in at_two.notes[0]
    assert "widen" not in at_two.notes[0]
    at_three = selection([3, 4, 5], [10.0, 8.0, 5.0])
    assert "widen the range down to 2" in at_three.notes[0]
    inside = selection([2, 3, 4, 5, 6], [1.0, 5.0, 9.0, 6.0, 2.0])
    assert inside.notes == [] and "chosen K = 4" in str(inside)


def test_iteration_bars_give_no_time_estimate(capsys):
    from mixbayes._progress import progress

    with progress(500, 2, "CAVI run 1/1", upper_bound=True) as bar:
        bar.update(3)
        bar.refresh()  # tqdm redraws at most every 0.1 s by itself
    err = capsys.readouterr().err
    assert "3 iterations (at most 500)" in err and "<" not in err  # no "<remaining" estimate


def test_bars_stay_out_of_logs_and_estimate_after_the_first_step(capsys, monkeypatch):
    import time

    from mixbayes import _progress

    monkeypatch.setattr(_progress, "DELAY", 0.0)
    with _progress.progress(10, 1, "quiet in a log") as bar:  # stderr here is not a terminal
        bar.update()
    assert capsys.readouterr().err == ""
    with _progress.progress(100, 2, "sweeps") as bar:
        time.sleep(0.5)  # a first step that compiles
        bar.update()
        for _ in range(9):
            bar.update()
        rate = (bar.n - bar.initial) / (time.time() - bar.start_t)
    # 9 quick steps after the slow one: the rate ignores the first step's 0.5 s
    assert rate > 50


@pytest.mark.parametrize("ks", [list(range(2, 31)), list(range(20, 151, 10)), [2, 3, 4],
                                list(range(3, 100, 6))])
def test_selection_figures_tick_the_candidates_and_keep_the_legend_off_the_curves(ks):
    import matplotlib.pyplot as plt

    from mixbayes.mixture.selection import ClusterSelection
    from mixbayes.topics.selection import TopicSelection

    k = np.asarray(ks, dtype=float)
    clusters = ClusterSelection(
        [dict(k=K, score=s, heldout_log_likelihood=h) for K, s, h in
         zip(ks, 8000 * np.log(k) - 40 * k, 0.3 * np.log(k) - 0.004 * k)],
        ks[-1], None, ks[len(ks) // 2], 390)
    topics = TopicSelection([dict(k=K, log_bayes_factor=v, dispersion=d) for K, v, d in
                             zip(ks, 3000 * np.log(k) - 60 * k, 1 + 5 / k)], ks[1], None)
    for fig, ticked in ((clusters.plot(), 1), (topics.plot(), 0)):
        fig.canvas.draw()
        ax = fig.axes[ticked]  # the clusters' lower panel carries the K axis of both
        ticks = ax.get_xticks()
        assert 2 <= len(ticks) <= 12 and set(ticks) <= set(ks)
        assert len(ticks) == len(ks) or len(ks) > 12
        assert all(t.get_text() == str(int(v)) for t, v in zip(ax.get_xticklabels(), ticks))
        # every candidate marked (matplotlib drops the minor ticks under labelled ones)
        assert set(ax.xaxis.get_minorticklocs()) | set(ticks) == set(ks)
        for axis in fig.axes:
            if axis.get_legend() is not None:  # outside every panel's curves
                legend = axis.get_legend().get_window_extent()
                assert not any(legend.overlaps(a.get_window_extent()) for a in fig.axes)
        plt.close(fig)


def test_scatter_axes_are_named_by_the_features():
    X, _ = mb.datasets.make_gaussian_mixture(60, 2, 2, random_state=0)
    gmm = mb.VariationalGaussianMixture(2, n_init=1).fit(X)
    ax = plotting.plot_gaussian_clusters(gmm, X, feature_names=["height", "weight"]).axes[0]
    assert (ax.get_xlabel(), ax.get_ylabel()) == ("height", "weight")
    gmm = mb.VariationalGaussianMixture(2, n_init=1).fit(X[:, :1])
    ax = plotting.plot_gaussian_clusters(gmm, X[:, :1], feature_names=["height"]).axes[0]
    assert ax.get_xlabel() == "height"


def test_scatters_of_named_features_keep_their_values():
    # two features drawn on axes named x1, x2 were centred on their mean: a component with
    # mean x1 = 6 stood at x1 = 3 in the figure
    import matplotlib.pyplot as plt

    rng = np.random.default_rng(0)
    X = np.vstack([rng.normal(size=(20, 2)), rng.normal(size=(20, 2)) + [6, 0]]) + [100, -50]
    gmm = mb.VariationalGaussianMixture(2, n_init=1).fit(X)
    ax = plotting.plot_gaussian_clusters(gmm, X).axes[0]
    drawn = np.vstack([c.get_offsets() for c in ax.collections])
    np.testing.assert_allclose(np.sort(drawn, axis=0), np.sort(X, axis=0))
    tree = mb.HierarchicalMixture(depth=1, n_iter=5).fit(X)
    ax = plotting.plot_tree(tree, X).axes[1]
    drawn = np.vstack([c.get_offsets() for c in ax.collections])
    np.testing.assert_allclose(np.sort(drawn, axis=0), np.sort(X, axis=0))
    plt.close("all")


def test_tree_points_are_coloured_by_the_branches_the_tree_draws():
    # a single level-1 node merges into the root; the points were then all drawn as one grey
    # "branch n0" while the tree beside them had two coloured branches
    rng = np.random.default_rng(0)
    X = np.vstack([rng.normal(size=(15, 2)), rng.normal(size=(15, 2)) + [8, 0]])
    # (the per-point moves keep Ward's single level-1 node; the restructuring moves would
    # give each cluster a branch of its own, the posterior's choice)
    tree = mb.HierarchicalMixture(depth=2, n_iter=5, moves="path").fit(X)
    assert np.all(tree.paths_[:, 0] == 0) and (tree.node_parent_ == 0).sum() == 2
    legend = [t.get_text() for t in plotting.plot_tree(tree, X).axes[1].get_legend().get_texts()]
    assert legend == ["branch n1 (15 points)", "branch n2 (15 points)"]


def test_tree_components_are_drawn_as_their_covariances():
    """Each component's 2-sigma ellipse: the eigenvalues of its fitted covariance (full), a
    circle of the shared sigma (known)."""
    import matplotlib.pyplot as plt
    from matplotlib.patches import Ellipse

    rng = np.random.default_rng(1)
    X = np.vstack([rng.normal(size=(30, 2)) * [3, 0.3], rng.normal(size=(30, 2)) * [0.3, 3] + 9])
    for covariance_type in ("full", "known"):
        tree = mb.HierarchicalMixture(n_iter=6, covariance_type=covariance_type).fit(X)
        ax = plotting.plot_tree(tree, X).axes[1]
        ellipses = [p for p in ax.patches if isinstance(p, Ellipse)]
        assert len(ellipses) == tree.n_components_
        covariances = tree.covariances_
        if covariance_type == "known":
            covariances = covariances[:, None, None] * np.eye(2)
        for ellipse, covariance in zip(ellipses, covariances):
            low, high = np.linalg.eigvalsh(covariance)
            assert ellipse.width == pytest.approx(4 * np.sqrt(high))
            assert ellipse.height == pytest.approx(4 * np.sqrt(low))
        plt.close("all")


def test_one_feature_tree_points_are_a_histogram_with_each_components_interval():
    """One feature was drawn as points on a line at 0 with 2-sigma circles on an invented,
    unlabelled second axis (a new user's tryout): now the points' histogram by branch, and
    each component's mean and 2-sigma interval above it."""
    import matplotlib.pyplot as plt
    from matplotlib.patches import Ellipse

    rng = np.random.default_rng(0)
    x = np.concatenate([rng.normal(size=50), rng.normal(size=50) + 6])
    tree = mb.HierarchicalMixture(n_iter=6).fit(x[:, None])
    ax = plotting.plot_tree(tree, x[:, None]).axes[1]
    assert not [p for p in ax.patches if isinstance(p, Ellipse)]
    assert ax.get_ylabel() == "points per bin" and ax.get_xlabel() == "x1"
    bars = [p for p in ax.patches if p.get_height() > 0]
    assert sum(p.get_height() for p in bars) == 100  # every point in one bar
    centres, spreads = [], []
    for container in ax.containers:
        if hasattr(container, "has_xerr") and container.has_xerr:
            line = container.lines[0]
            centres.append(line.get_xdata()[0])
            segment = container.lines[2][0].get_segments()[0]
            spreads.append((segment[1][0] - segment[0][0]) / 4)
    order = np.argsort(tree.means_[:, 0])
    np.testing.assert_allclose(centres, tree.means_[order, 0])
    np.testing.assert_allclose(
        spreads, np.sqrt([np.ravel(tree.covariance_matrix(k))[0] for k in order]))
    plt.close("all")


@pytest.mark.parametrize("n_clusters,ylabel", [(3, "point-estimate cluster"),
                                               (30, "items, in the same order")])
def test_similarity_blocks_name_what_both_axes_count(n_clusters, ylabel):
    """Up to 20 clusters both axes are ticked by cluster; beyond, by item: the labels say so
    (the y label read "cluster" over item counts)."""
    sizes = np.arange(1, n_clusters + 1)
    fig = plotting.plot_similarity_blocks(np.eye(n_clusters), sizes)
    ax = fig.axes[0]
    assert ax.get_ylabel() == ylabel
    assert ax.get_xlabel() == f"items by point-estimate cluster ({sizes.sum():,})"
    ticks = [t.get_text() for t in ax.get_yticklabels()]
    assert (ticks == [str(k) for k in range(n_clusters)]) == (n_clusters <= 20)
    matplotlib.pyplot.close(fig)


def test_similarity_blocks_leave_tiny_clusters_unticked_where_ticks_would_overlap():
    """Clusters of 1-3 items beside ones of hundreds had their tick labels printed on top of
    each other: the widest blocks are ticked first, the others only where there is room."""
    sizes = np.array([500, 300, 1, 1, 1, 1, 100, 2, 2, 40, 3, 1, 50])
    fig = plotting.plot_similarity_blocks(np.eye(sizes.size), sizes)
    ax = fig.axes[0]
    for labels, positions in ((ax.get_xticklabels(), ax.get_xticks()),
                              (ax.get_yticklabels(), ax.get_yticks())):
        assert [t.get_text() for t in labels] == ["0", "1", "2", "6", "9", "12"]
        assert np.diff(positions).min() >= sizes.sum() / 30
    matplotlib.pyplot.close(fig)


def test_elbo_figure_shows_each_iterations_gain_on_a_log_scale(fitted):
    """A fit that stops after a few iterations is two or three dots on the ELBO's scale; the
    second panel plots each iteration's gain, on a log scale."""
    _, model = fitted
    fig = plotting.plot_elbo_trace(model)
    assert len(fig.axes) == 2
    gain_axis = fig.axes[1]
    assert gain_axis.get_yscale() == "log"
    gains = np.diff(model.elbo_trace_)
    (line, *drops) = gain_axis.get_lines()
    iterations = np.arange(2, model.elbo_trace_.size + 1)
    np.testing.assert_array_equal(line.get_xdata(), iterations[gains > 0])
    np.testing.assert_allclose(line.get_ydata(), gains[gains > 0])
    for drop in drops:  # CAVI never lowers the bound but by rounding, marked where it does
        assert np.all(drop.get_ydata() < 1e-9 * abs(model.elbo_trace_[-1]))
    assert gain_axis.get_title() == f"gain per iteration ({model.elbo_trace_.size} iterations)"


def test_hdp_trace_wraps_its_panels_three_a_row():
    """Five panels (NMI, clusters, log joint, both resampled concentrations) in two rows of at
    most three, not one strip five panels wide."""
    corpus, truth = mb.datasets.make_hdp_data(6, 10, n_words=8, random_state=0)
    # groups of 10 tokens are short (gamma0 fixed by default, no panel): its prior given
    model = mb.HDPMixture(n_iter=6, random_state=0,
                          top_concentration_prior=(1.0, 0.1)).fit(corpus.counts)
    fig = plotting.plot_hdp_trace(model, nmi=np.linspace(0, 1, 6)[None, :])
    shown = [ax for ax in fig.axes if ax.get_visible()]
    assert [ax.get_title() for ax in shown] == [
        "NMI against labels", "clusters in use", "log p(y, seating)", "γ0 (resampled)",
        "α0 (resampled)"]
    rows = sorted({round(ax.get_position().y0, 3) for ax in shown})
    assert len(rows) == 2 and fig.get_size_inches()[0] <= 4.2 * 3
    # four panels (no NMI) fill 2 x 2: no row of three beside two blanks
    fig = plotting.plot_hdp_trace(model)
    assert len(fig.axes) == 4 and all(ax.get_visible() for ax in fig.axes)
    # with the defaults γ0 is fixed on these short groups: its panel is left out
    fixed = mb.HDPMixture(n_iter=6, random_state=0).fit(corpus.counts)
    assert fixed.short_groups_
    assert [ax.get_title() for ax in plotting.plot_hdp_trace(fixed).axes if ax.get_visible()] == [
        "clusters in use", "log p(y, seating)", "α0 (resampled)"]
    assert len({round(ax.get_position().x0, 3) for ax in fig.axes}) == 2


def test_an_elbo_that_did_not_move_is_said_in_words_not_drawn_as_a_drop():
    """A fit that converged at once (the ELBO exactly equal over its two iterations; the CLI's
    demo-sized runs) has a gain of 0, which a log axis cannot show: the panel says so in
    words, draws no red drop at 1e-300, and ticks the one whole iteration it has."""
    from types import SimpleNamespace

    model = SimpleNamespace(elbo_trace_=np.array([-100.0, -100.0, -99.5, -99.5]))
    fig = plotting.plot_elbo_trace(model)
    gain_axis = fig.axes[1]
    assert [line.get_label() for line in gain_axis.get_lines()] == ["gain"]
    assert [t.get_text() for t in gain_axis.texts] == ["no change at iteration 2 and 4"]
    np.testing.assert_array_equal(gain_axis.get_xticks(), [2, 3, 4])
    two = plotting.plot_elbo_trace(SimpleNamespace(elbo_trace_=np.array([-5.0, -5.0])))
    np.testing.assert_array_equal(two.axes[1].get_xticks(), [2])


def test_dispersion_note_compares_gains_only_where_the_range_starts_below_its_k():
    """The note on a Bayes factor that overshoots the dispersion's K weighs the nats gained
    beyond it against those up to it; where the dispersion fits at the first K searched there
    is nothing up to it ('against 0 from K = 2 to 2' was printed), so that clause goes."""
    from mixbayes.topics.selection import TopicSelection

    def selection(p_values):
        table = [dict(k=k, log_bayes_factor=v, dispersion=1.0, p_value=p, n_iter=3)
                 for k, v, p in zip([2, 3, 4, 5], [0.0, 300.0, 500.0, 640.0], p_values)]
        return TopicSelection(table, 5, None)

    at_first = selection([0.5, 0.5, 0.5, 0.5]).notes[-1]
    assert "gain 640 nats. On small corpora" in at_first and "consider K = 2" in at_first
    later = selection([0.0, 0.5, 0.5, 0.5]).notes[-1]
    assert "gain 340 nats, against 300 from K = 2 to 3. On small" in later


def test_tree_trace_draws_every_level_in_its_own_dash_pattern():
    """Depth 5 (the deepest depth="auto" tries): five level lines, five patterns (level 4
    was drawn as level 1, both dashed; found by the new-user tryout)."""
    X, _ = mb.datasets.make_tree_data(40, random_state=0)
    model = mb.HierarchicalMixture(5, n_iter=4, random_state=0).fit(X)
    fig = plotting.plot_tree_trace(model)
    levels = [line for line in fig.axes[1].get_lines()
              if line.get_label().startswith("nodes at level")]
    assert len(levels) == 5
    # the dash sequence as drawn (get_linestyle names custom patterns "--" alike)
    assert len({str(line._dash_pattern) for line in levels}) == 5


def test_tree_trace_tells_every_level_apart_past_depth_five_and_its_legend_covers_no_line():
    """``--depth 7`` (the CLI takes any depth): the patterns repeated after five levels, so
    level 6 was drawn as level 1 and level 7 as level 2, all in one colour, and the legend of
    eight entries sat on the lines (a new user's tryout). Every level now has its own dash
    pattern (and, with one chain, its own colour), and the legend lies below the panel."""
    X, _ = mb.datasets.make_tree_data(40, random_state=0)
    model = mb.HierarchicalMixture(7, n_iter=4, random_state=0).fit(X)
    fig = plotting.plot_tree_trace(model)
    panel = fig.axes[1]
    levels = [line for line in panel.get_lines()
              if line.get_label().startswith("nodes at level")]
    assert len(levels) == 7
    assert len({str(line._dash_pattern) for line in levels}) == 7
    assert len({line.get_color() for line in levels}) == 7
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    legend = panel.get_legend().get_window_extent(renderer)
    assert legend.y1 <= panel.get_window_extent(renderer).y0  # wholly below the plotting area


def test_dendrogram_foot_counts_the_clusters_above_stage_one():
    """Merges at heights >= 1 join components (below 1: points within one): two points joined
    at 0.5 and a third at 1.5 are two clusters at the foot, {0, 1} and {2}; all-below-1 merges
    show every point; more clusters than max_leaves show max_leaves."""
    from mixbayes.plotting import dendrogram_clusters

    assert dendrogram_clusters(np.array([[0, 1, 0.5, 2], [2, 3, 1.5, 3]])) == 2
    assert dendrogram_clusters(np.array([[0, 1, 0.5, 2], [2, 3, 0.7, 3]])) == 3
    # five points joined one by one, every merge above 1: five clusters, more than 3
    chain = np.array([[0, 1, 1.0, 2], [5, 2, 2.0, 3], [6, 3, 3.0, 4], [7, 4, 4.0, 5]])
    assert dendrogram_clusters(chain) == 5 and dendrogram_clusters(chain, max_leaves=3) == 3


def test_plotting_is_reached_as_an_attribute_without_importing_it_up_front():
    """``mb.plotting.plot_dendrogram(tr)`` (the guide's spelling) raised AttributeError, for
    ``import mixbayes`` does not import the plotting module; it is now loaded on first use, and
    a fresh ``import mixbayes`` still leaves matplotlib alone."""
    import subprocess
    import sys

    code = ("import sys, mixbayes as mb; assert 'mixbayes.plotting' not in sys.modules; "
            "assert 'matplotlib' not in sys.modules; "
            "assert callable(mb.plotting.plot_dendrogram); "
            "assert 'mixbayes.plotting' in sys.modules")
    subprocess.run([sys.executable, "-c", code], check=True)
    import mixbayes as mb

    with pytest.raises(AttributeError, match="has no attribute 'plotter'"):
        mb.plotter


def test_gaussian_clusters_of_another_model_say_which_plot_to_use():
    """An HDP of points given to plot_gaussian_clusters raised AttributeError ('HDPMixture'
    object has no attribute 'predict'); it is a one-line TypeError naming the plots for it,
    and __all__ names every plot (the tree's, the dendrogram and the similarity blocks were
    left out)."""
    import mixbayes as mb
    from mixbayes import plotting

    X, truth = mb.datasets.make_gaussian_mixture(40, 2, 3, random_state=0)
    hdp = mb.HDPMixture(kernel="gaussian", n_iter=3).fit(X, groups=np.arange(40) % 4)
    with pytest.raises(TypeError, match="draws a VariationalGaussianMixture.*HDPMixture"):
        plotting.plot_gaussian_clusters(hdp, X)
    public = {name for name in dir(plotting) if name.startswith("plot_")}
    assert public == set(plotting.__all__)
