"""The HTML report: its maths (distances, MDS, relevance), what each kind of model ships to the
page, that the page is self-contained, and the errors on bad input (API and command line).
The page in a real browser: test_report_browser.py."""

import json
import re
import shutil

import numpy as np
import pytest
import scipy.sparse as sp

import mixbayes as mb
from mixbayes.report import build_report, _extract, _geometry, _term_page, _tree_page
from _support.cli import run as _run


def _payload(page):
    """The JSON the page carries."""
    raw = re.search(r'<script type="application/json" id="report-data">(.*?)</script>', page,
                    re.S).group(1)
    return json.loads(raw)


def _assert_self_contained(page):
    """Nothing the browser would fetch: no URL, no src or href attribute, no @import."""
    assert "http://" not in page and "https://" not in page
    assert not re.search(r"""\b(src|href)\s*=""", page, re.I)
    assert not re.search(r"""["'(]//[\w.-]""", page)  # protocol-relative URLs
    assert "@import" not in page and "url(" not in page


# --------------------------------------------------------------------------- maths
def test_js_distances_match_scipy():
    from scipy.spatial.distance import jensenshannon

    rng = np.random.default_rng(0)
    P = rng.dirichlet(np.full(12, 0.3), size=5)
    P[0, :6] = 0  # zeros: 0 log 0 = 0
    P[0] /= P[0].sum()
    D = _geometry.js_distances(P)
    for i in range(5):
        for j in range(5):
            assert D[i, j] == pytest.approx(jensenshannon(P[i], P[j], base=2), abs=1e-12)
    disjoint = np.array([[0.5, 0.5, 0, 0], [0, 0, 0.5, 0.5]])
    assert _geometry.js_distances(disjoint)[0, 1] == pytest.approx(1.0)


def test_classical_mds_recovers_planar_configurations():
    rng = np.random.default_rng(1)
    Y = rng.normal(size=(7, 2))
    D = np.sqrt(((Y[:, None] - Y[None]) ** 2).sum(-1))
    Z = _geometry.classical_mds(D)
    np.testing.assert_allclose(np.sqrt(((Z[:, None] - Z[None]) ** 2).sum(-1)), D, atol=1e-10)
    assert np.all(_geometry.classical_mds(np.zeros((1, 1))) == 0)  # one component: the centre
    two = _geometry.classical_mds(np.array([[0.0, 0.4], [0.4, 0.0]]))
    assert abs(two[0, 0] - two[1, 0]) == pytest.approx(0.4) and np.all(two[:, 1] == 0)


def test_stress_majorization_never_raises_the_stress_and_keeps_a_planar_map():
    rng = np.random.default_rng(2)
    P = rng.dirichlet(np.full(200, 0.05), size=30)  # about equally far apart, as K = 50 DMMs
    D = _geometry.js_distances(P)
    start = _geometry.classical_mds(D)
    refined, before, after = _geometry.refine_mds(D, start)
    assert before == pytest.approx(_geometry.stress(D, start)) and after < 0.5 * before
    Y = rng.normal(size=(6, 2))
    planar = np.sqrt(((Y[:, None] - Y[None]) ** 2).sum(-1))
    Z = _geometry.map_coordinates(planar)
    assert _geometry.stress(planar, Z) < 1e-12


def test_hellinger_distance_closed_form_in_one_dimension():
    means, variances = np.array([[0.0], [1.5]]), np.array([1.0, 2.0])
    D = _geometry.hellinger_distances(means, variances[:, None, None])
    s1, s2 = variances
    bc = np.sqrt(2 * np.sqrt(s1 * s2) / (s1 + s2)) * np.exp(-1.5 ** 2 / (4 * (s1 + s2)))
    assert D[0, 1] == pytest.approx(np.sqrt(1 - bc), rel=1e-12)
    assert D[0, 0] == 0


def test_slider_ranking_from_the_shipped_terms_is_the_full_vocabulary_ranking(saved):
    """The page ranks only the candidates shipped; at every lambda its top terms must score
    as the top terms over the whole vocabulary (those the model's top_words lists)."""
    models = saved[1]
    for kind in ("dmm", "topics", "hdp"):
        model = models[kind]
        P = model.topics_ if kind == "topics" else model.components_
        V = P.shape[1]
        names = [f"t{j}" for j in range(V)]
        f = (_term_page.term_totals(model) / _term_page.term_totals(model).sum() if kind == "dmm"
             else model.term_frequency_)
        listed = model.top_words(names, n=V)  # the terms each component has evidence for
        payload = _term_page.term_payload(model, vocabulary=names)
        for c in payload["components"]:
            k = c["id"]
            usable = [int(t[1:]) for t in listed[k] if P[k, int(t[1:])] > 0]
            shipped = {int(payload["vocabulary"][i][1:]): p for i, p in c["terms"]}
            assert set(shipped) <= set(usable)
            for lam in (0.0, 0.13, 0.5, 0.77, 1.0):
                def relevance(j, p):
                    return lam * np.log(p) + (1 - lam) * np.log(p / f[j])

                page = sorted((relevance(j, p) for j, p in shipped.items()), reverse=True)
                full = sorted((relevance(j, P[k, j]) for j in usable), reverse=True)
                n = min(_term_page.SHOWN_TERMS, len(full))
                np.testing.assert_allclose(page[:n], full[:n], rtol=1e-4, atol=1e-3,
                                           err_msg=f"{kind} {k} lambda={lam}")  # p: 5 digits


def _dendrogram_is_the_top_of_linkage(shown, Z):
    """The page's dendrogram is the top of linkage_: its last merges, at their heights, each
    centred over its sides, over clusters that partition the points."""
    from scipy.cluster.hierarchy import dendrogram

    n = Z.shape[0] + 1
    links, clusters = shown["links"], shown["clusters"]
    from mixbayes.plotting import dendrogram_clusters

    assert len(clusters) == len(links) + 1 == dendrogram_clusters(Z, 40) <= 40
    assert sum(c["size"] for c in clusters) == n
    np.testing.assert_allclose(sorted(link[4] for link in links), Z[n - len(clusters):, 2],
                               atol=1e-3)
    assert sorted(link[5] for link in links) == sorted(Z[n - len(clusters):, 3].astype(int))
    for xa, xb, ya, yb, y, _, _ in links:
        assert xa < xb and ya <= y + 1e-9 and yb <= y + 1e-9
    # scipy's own layout of the same top clusters: the same sizes left to right
    reference = dendrogram(Z, truncate_mode="lastp", p=len(clusters), no_plot=True)
    sizes = [int(label.strip("()")) if label.startswith("(") else 1 for label in reference["ivl"]]
    assert [c["size"] for c in clusters] == sizes


# --------------------------------------------------------------------------- every kind
@pytest.mark.parametrize("kind", ["dmm", "topics", "hdp", "gmm", "tree"])
def test_each_kind_makes_a_self_contained_page(saved, kind):
    paths, models, corpus, folder = saved
    model = models[kind]
    data = corpus if kind in ("dmm", "topics", "hdp") else np.load(folder / "points.npy")
    page = build_report(model, data)
    _assert_self_contained(page)
    payload = _payload(page)
    assert payload["traces"] and all(t["series"] for t in payload["traces"])
    if kind in ("dmm", "topics", "gmm"):  # the last point is the last iteration
        assert payload["traces"][0]["series"][0]["x"][-1] == model.n_iter_
    if kind == "tree":
        nodes = payload["nodes"]
        assert len(nodes) == model.tree_.n_nodes and nodes[0]["parent"] == -1
        assert len(payload["points"]) == 90 and len(payload["points"][0]) == 2 + model.depth
        # the tied default: one shared covariance, so every component's ellipse is alike
        ellipses = payload["ellipses"]
        assert len(ellipses) == model.n_components_ and all(e == ellipses[0] for e in ellipses)
        _dendrogram_is_the_top_of_linkage(payload["dendrogram"], model.linkage_)
        return
    components = payload["components"]
    assert components and 0.9 < sum(c["share"] for c in components) <= 1 + 1e-6  # used ones
    if kind == "gmm":
        assert payload["kind"] == "gaussian" and len(payload["points"]) == 90
        assert all(len(c["ellipse"]) == 3 for c in components)
        return
    assert payload["kind"] == "terms"
    assert set(payload["vocabulary"]) <= set(corpus.vocabulary)
    labels = {"dmm": lambda m: m.labels_, "hdp": lambda m: m.group_labels_,
              "topics": lambda m: m.doc_topic_.argmax(axis=1)}[kind](model)
    for c in components:
        for example in payload["examples"][str(c["id"])]:
            i = int(example["id"])
            if kind != "topics":  # a topic's examples: its highest weights, wherever
                assert labels[i] == c["id"]


def _signed_principal_axes(points):
    """The first two principal axes of ``points`` (by SVD of the centred points), each signed
    so that its largest coordinate is positive (the report's rule, so the picture never flips)."""
    centre = points.mean(axis=0)
    basis = np.linalg.svd(points - centre, full_matrices=False)[2][:2].T.copy()
    for axis in range(2):
        basis[:, axis] *= np.sign(basis[np.argmax(np.abs(basis[:, axis])), axis])
    return centre, basis


def _assert_gaussian_geometry(payload, model, points, centre, basis):
    """Every point, centre and 2-sigma ellipse on the page is the model's projected on
    ``basis``: an ellipse (semi-axes a >= b, angle t of a) rebuilt as the covariance
    R(t) diag((a/2)^2, (b/2)^2) R(t)^T is the component's covariance projected, B^T S B."""
    shown = np.array(payload["points"])
    np.testing.assert_allclose(shown[:, :2], (points - centre) @ basis, rtol=1e-4, atol=1e-4)
    np.testing.assert_array_equal(shown[:, 2], model.labels_)
    components = payload["components"]
    assert [c["id"] for c in components] == list(np.flatnonzero(np.bincount(
        model.labels_, minlength=model.n_components)))
    for c in components:
        k = c["id"]
        np.testing.assert_allclose(c["mean"], model.means_[k], rtol=1e-4)
        np.testing.assert_allclose(c["centre"], (model.means_[k] - centre) @ basis, rtol=1e-4,
                                   atol=1e-4)
        a, b, angle = c["ellipse"]
        assert a >= b > 0
        t = np.radians(angle)
        R = np.array([[np.cos(t), -np.sin(t)], [np.sin(t), np.cos(t)]])
        rebuilt = R @ np.diag([(a / 2) ** 2, (b / 2) ** 2]) @ R.T
        projected = basis.T @ model.covariance_matrix(k) @ basis
        np.testing.assert_allclose(rebuilt, projected, rtol=1e-3,
                                   atol=1e-4 * np.abs(projected).max(), err_msg=f"component {k}")
        # and directly: the semi-axes are twice the square roots of its eigenvalues
        np.testing.assert_allclose([b, a], 2 * np.sqrt(np.linalg.eigvalsh(projected)), rtol=1e-4)


def test_gaussian_points_centres_and_ellipses_are_the_model_projected(saved):
    # three features: the points' principal plane
    model, points = saved[1]["gmm"], np.load(saved[3] / "points.npy")
    assert points.shape[1] == 3
    payload = _payload(build_report(model, points))
    _assert_gaussian_geometry(payload, model, points, *_signed_principal_axes(points))
    # two: the picture is the features themselves, uncentred
    points, _ = mb.datasets.make_gaussian_mixture(100, 2, 3, random_state=1)
    model = mb.VariationalGaussianMixture(3, n_init=1, random_state=0).fit(points)
    payload = _payload(build_report(model, points))
    _assert_gaussian_geometry(payload, model, points, np.zeros(2), np.eye(2))


def test_tree_nodes_carry_the_tree_weights_sizes_and_means(saved):
    model, points = saved[1]["tree"], np.load(saved[3] / "points.npy")
    tree = model.tree_
    payload = _payload(build_report(model, points))
    nodes = payload["nodes"]
    assert [node["id"] for node in nodes] == list(range(tree.n_nodes))
    for z, node in enumerate(nodes):
        assert node["parent"] == tree.parent[z] and node["level"] == tree.level[z]
        assert node["share"] == pytest.approx(tree.size[z] / tree.size[0])
        w = tree.weights[z]
        top = [c for c in sorted(range(w.size), key=lambda c: (-w[c], c))
               if w[c] >= _tree_page.MAIN_WEIGHT][:5]  # main components only (not 1e-30)
        assert [entry["component"] for entry in node["components"]] == top, z
        np.testing.assert_allclose([entry["weight"] for entry in node["components"]], w[top],
                                   rtol=1e-4, err_msg=f"node {z}")
    assert sum(len(node["components"]) for node in nodes) > tree.n_nodes  # weights spread
    # the components' means and the points on the points' principal plane, with their paths
    centre, basis = _signed_principal_axes(points)
    np.testing.assert_allclose(payload["component_means"], tree.means, rtol=1e-4)
    np.testing.assert_allclose(payload["means"], (tree.means - centre) @ basis, rtol=1e-4,
                               atol=1e-4)
    shown = np.array(payload["points"])
    np.testing.assert_allclose(shown[:, :2], (points - centre) @ basis, rtol=1e-4, atol=1e-4)
    np.testing.assert_array_equal(shown[:, 2:], model.paths_)


@pytest.mark.filterwarnings("ignore::mixbayes.ConvergenceWarning")  # 4 sweeps: a picture only
def test_points_are_subsampled_and_the_gaussian_hdp_drawn():
    points, _ = mb.datasets.make_gaussian_mixture(4000, 3, 2, random_state=0)
    model = mb.VariationalGaussianMixture(3, n_init=1, random_state=0).fit(points)
    payload = _payload(build_report(model, points, feature_names=["a", "b", "c"]))
    assert len(payload["points"]) == _extract.MAX_POINTS and payload["features"] == ["a", "b", "c"]
    assert "3,000 of 4,000 points" in payload["points_note"]
    line = points[:200, :1]  # one feature: its own values across, jitter up and down
    one = mb.VariationalGaussianMixture(2, n_init=1, random_state=0).fit(line)
    payload = _payload(build_report(one, line))
    np.testing.assert_allclose([p[0] for p in payload["points"]], line[:, 0], rtol=1e-4)
    assert payload["axes"] == ["x1", "(random jitter)"]
    few = points[:60]
    groups = np.repeat(np.arange(3), 20)
    hdp = mb.HDPMixture(kernel="gaussian", n_iter=4, random_state=0).fit(few, groups=groups)
    payload = _payload(build_report(hdp, few))
    assert payload["kind"] == "gaussian" and len(payload["points"]) == 60
    assert all(len(c["ellipse"]) == 3 for c in payload["components"])  # tau from the points
    assert "ellipse" not in _payload(build_report(hdp))["components"][0]  # unknown without


def test_selection_curve_and_titles(saved):
    model = saved[1]["topics"]
    rows = [dict(k=k, log_bayes_factor=10.0 * k, dispersion=2.0 / k) for k in (2, 3, 4)]
    payload = _payload(build_report(model, selection=rows, title="a <b> title"))
    assert payload["selection"]["chosen"] == 3 and payload["selection"]["x"] == [2, 3, 4]
    assert [s["axis"] for s in payload["selection"]["series"]] == ["left", "right"]
    page = build_report(model, selection=rows, title="a <b> title")
    assert "<title>a &lt;b&gt; title</title>" in page
    with pytest.raises(ValueError, match="selection: .* the model has K = 3"):
        build_report(model, selection=[dict(k=5, score=1.0)])


def test_data_is_escaped_inside_the_script():
    corpus = mb.Corpus(sp.csr_matrix(np.array([[3, 1, 0], [0, 2, 4]])),
                       ["</script>", "<!--", "a&b"])
    model = mb.DirichletMultinomialMixture(2, n_init=1, random_state=0).fit(corpus.counts)
    page = build_report(model, corpus)
    assert page.count("</script>") == 2  # the two elements' own ends
    assert "</script>" in _payload(page)["vocabulary"]


# --------------------------------------------------------------------------- bad input
def test_bad_input_is_one_clear_error(saved):
    paths, models, corpus, folder = saved
    dmm = models["dmm"]
    with pytest.raises(ValueError, match="the corpus has 29 terms but the model was fitted to "
                                         "30 terms: its vocabulary does not match"):
        build_report(dmm, corpus.counts[:, :29])
    shuffled = corpus.counts[:, np.r_[1, 0, 2:30]]
    for kind in ("dmm", "topics", "hdp"):
        if corpus.counts[:, 0].sum() == corpus.counts[:, 1].sum():
            continue  # pragma: no cover - the two columns would look alike
        with pytest.raises(ValueError, match="vocabulary does not match the model's: term "
                                             "column 0 occurs"):
            build_report(models[kind], shuffled)
    with pytest.raises(ValueError, match="the corpus has 59 documents but the model was "
                                         "fitted to 60"):
        build_report(dmm, corpus.counts[:59])
    with pytest.raises(ValueError, match="vocabulary: it has 2 terms"):
        build_report(dmm, vocabulary=["a", "b"])
    with pytest.raises(ValueError, match="fitted to points, not documents"):
        build_report(models["gmm"], corpus)
    with pytest.raises(ValueError, match=r"the points have shape \(90, 2\) but the model was "
                                         "fitted to 3 features"):
        build_report(models["tree"], np.load(folder / "points.npy")[:, :2])
    with pytest.raises(TypeError, match="model: a report shows a fitted"):
        build_report(object())
    from sklearn.exceptions import NotFittedError

    with pytest.raises(NotFittedError, match="not fitted yet"):
        build_report(mb.TopicModel(3))


def test_a_sample_of_the_documents_gives_the_examples_and_says_so(saved):
    """rows=: the example documents of a sample (a corpus kept on a cluster) are the whole
    corpus's examples found in it, with their scores; the page names the sample."""
    _, models, corpus, _ = saved
    rows = np.arange(0, 60, 3)
    sample = mb.Corpus(corpus.counts[rows], corpus.vocabulary, corpus.doc_ids[rows])
    for kind in ("dmm", "topics"):
        whole = _payload(build_report(models[kind], corpus))["examples"]
        part = _payload(build_report(models[kind], sample, rows=rows))
        assert part["note"] == "example documents drawn from a sample of 20 of the 60 documents"
        for k, examples in part["examples"].items():
            kept = [e for e in whole[k] if int(e["id"]) % 3 == 0]
            assert examples[:len(kept)] == kept, kind  # the whole's best that are sampled
            assert {int(e["id"]) % 3 for e in examples} <= {0}
    for bad, message in ((rows[:-1], "one row number per document of data"),
                         (rows[::-1], "must increase within 0..59"),
                         (rows + 3, "must increase within 0..59")):
        with pytest.raises(ValueError, match=f"rows: .*{message}"):
            build_report(models["dmm"], sample, rows=bad)
    with pytest.raises(ValueError, match="rows: the HDP's example documents"):
        build_report(models["hdp"], sample, rows=rows)
    with pytest.raises(ValueError, match="rows: a sample of the documents is for a model of "
                                         "words"):
        build_report(models["gmm"], rows=rows)


# --------------------------------------------------------------------------- command line
def test_report_command_and_the_report_flag(saved, tmp_path):
    paths, models, corpus, folder = saved
    mtx = folder / "data" / "counts.mtx"
    result = _run("report", paths["topics"], "--corpus", mtx, "--out", "topics.html",
                  cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "written to topics.html" in result.stdout
    payload = _payload((tmp_path / "topics.html").read_text())
    assert payload["examples"] and set(payload["vocabulary"]) <= set(corpus.vocabulary)
    again = _run("report", paths["topics"], "--out", "topics.html", cwd=tmp_path)
    assert again.returncode == 1 and "already exists" in again.stderr
    assert _run("report", paths["topics"], "--out", "topics.html", "--force",
                cwd=tmp_path).returncode == 0
    points = tmp_path / "points.csv"
    np.savetxt(points, np.load(folder / "points.npy"), delimiter=",")
    result = _run("report", paths["tree"], "--corpus", points, "--out", "tree.html",
                  cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert len(_payload((tmp_path / "tree.html").read_text())["points"]) == 90
    # --report on a fitting run
    result = _run("cluster", mtx, "-k", "3", "--n-init", "1", "--report", "--out", "run", "-q",
                  cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert len(_payload((tmp_path / "run" / "report.html").read_text())["components"]) >= 2
    # the choice of K from the selection.csv beside a model (as --select writes it)
    chosen = tmp_path / "chosen"
    chosen.mkdir()
    shutil.copy(paths["topics"], chosen / "model.npz")
    (chosen / "selection.csv").write_text("k,log_bayes_factor,dispersion\n2,10.5,1.3\n"
                                          "3,12.25,1.01\n4,11,0.99\n")
    result = _run("report", chosen / "model.npz", "--out", "chosen.html", cwd=tmp_path)
    assert "the choice of K drawn from" in result.stdout
    drawn = _payload((tmp_path / "chosen.html").read_text())["selection"]
    assert drawn["x"] == [2, 3, 4] and drawn["chosen"] == 3
    assert [line["y"] for line in drawn["series"]] == [[10.5, 12.25, 11], [1.3, 1.01, 0.99]]
    (chosen / "selection.csv").write_text("k,score\n5,1\n6,2\n")
    result = _run("report", chosen / "model.npz", "--out", "other.html", cwd=tmp_path)
    assert "covers K = 5..6, not the model's K = 3; the choice of K is not drawn" in result.stdout
    assert "selection" not in _payload((tmp_path / "other.html").read_text())


@pytest.mark.parametrize("case, fragment", [
    ("text file", "is not a model saved by mixbayes (not an .npz archive: it holds text)"),
    ("newer", "was written by a newer mixbayes (format 99)"),
    ("fewer terms", "--corpus: the corpus has 29 terms but the model was fitted to 30 terms: "
                    "its vocabulary does not match"),
    ("other counts", "--corpus: the corpus's vocabulary does not match the model's"),
    ("documents for points", "--corpus: points are read from .csv or .npy files (or tables "),
    ("points for documents", "holds points, but a DirichletMultinomialMixture was fitted to "
                             "documents"),
    ("text option for points", "--min-df is for documents"),
])
def test_report_command_bad_input_is_one_line(saved, tmp_path, case, fragment):
    paths, models, corpus, folder = saved
    model, corpus_file, extra = paths["dmm"], folder / "data" / "counts.mtx", []
    if case == "text file":
        model = tmp_path / "notes.npz"
        model.write_text("not a model\n")
    elif case == "newer":
        with np.load(paths["dmm"]) as data:
            arrays = {k: data[k] for k in data.files}
        meta = json.loads(str(arrays["__meta__"]))
        arrays["__meta__"] = np.asarray(json.dumps({**meta, "format": 99}))
        model = tmp_path / "newer.npz"
        np.savez(model, **arrays)
    elif case in ("fewer terms", "other counts"):
        counts = corpus.counts[:, :29] if case == "fewer terms" else corpus.counts.copy()
        if case == "other counts":
            counts.data = counts.data + 1
        mb.Corpus(counts, corpus.vocabulary[:counts.shape[1]]).write(tmp_path / "c", "mtx")
        corpus_file = tmp_path / "c" / "counts.mtx"
    elif case == "documents for points":
        model = paths["gmm"]
    elif case == "points for documents":
        corpus_file = folder / "points.npy"
    else:
        model, corpus_file, extra = paths["gmm"], folder / "points.npy", ["--min-df", "2"]
    result = _run("report", model, "--corpus", corpus_file, "--out", "r.html", *extra,
                  cwd=tmp_path)
    assert result.returncode == 1 and result.stdout == ""
    assert result.stderr.startswith("mixbayes: error: ") and result.stderr.count("\n") == 1
    assert fragment in result.stderr, result.stderr
    assert not (tmp_path / "r.html").exists()


def test_tree_with_covariances_draws_each_components_ellipse():
    """A tree with full covariances gives every component its own 2-sigma ellipse (semi-axes
    and angle in the plane shown), as the Gaussian mixture's page does."""
    rng = np.random.default_rng(2)
    X = np.vstack([rng.normal(size=(25, 3)) * [3, 0.3, 1], rng.normal(size=(25, 3)) + 8])
    tree = mb.HierarchicalMixture(n_iter=4, covariance_type="full").fit(X)
    payload = _payload(build_report(tree, X))
    centre, basis = _geometry.principal_plane(X)
    assert len(payload["ellipses"]) == tree.n_components_
    for k, drawn in enumerate(payload["ellipses"]):
        expected = _geometry.ellipse(tree.covariances_[k], basis)
        np.testing.assert_allclose(drawn, expected, rtol=1e-3, atol=1e-3)


def test_a_sampler_s_page_shows_its_partition_posterior():
    """A model that keeps draws of its partition (a Gibbs-fitted DMM here) ships the least
    expected VI partition's sizes, the block similarities (between 0 and 1, as
    mb.partition.block_similarity gives them) and its least certain documents, least first; a
    variational fit ships none."""
    corpus, _ = mb.datasets.make_dmm_corpus(60, 30, 3, mean_length=6, random_state=1)
    gibbs = mb.DirichletMultinomialMixture(3, inference="gibbs", n_sweeps=30,
                                           max_samples=10).fit(corpus.counts)
    shown = _payload(build_report(gibbs, corpus))["partition"]
    summary = gibbs.partition_summary()
    assert shown["sizes"] == np.bincount(summary.estimate.labels).tolist()
    blocks, certainty = mb.partition.block_similarity(gibbs.label_samples_,
                                                      summary.estimate.labels)
    np.testing.assert_allclose(shown["blocks"], blocks, atol=1e-3)
    values = [r["certainty"] for r in shown["least_certain"]]
    assert values == sorted(values) and values[0] == pytest.approx(certainty.min(), abs=1e-3)
    assert {r["id"] for r in shown["least_certain"]} <= set(corpus.doc_ids)
    vb = mb.DirichletMultinomialMixture(3).fit(corpus.counts)
    assert "partition" not in _payload(build_report(vb, corpus))


def test_the_partition_panel_says_whose_clusters_and_its_colours():
    """The least certain items' "cluster" was the point estimate's (numbered by size), read
    beside the model's clusters (nodes) elsewhere on the page, and the matrix had no scale."""
    corpus, _ = mb.datasets.make_dmm_corpus(40, 20, 2, mean_length=6, random_state=1)
    gibbs = mb.DirichletMultinomialMixture(2, inference="gibbs", n_sweeps=10,
                                           max_samples=4).fit(corpus.counts)
    page = build_report(gibbs, corpus)
    assert "white 0, blue\n      1" in page and "not as the model's elsewhere" in page
    assert '["item", "estimate\'s cluster", "certainty"]' in page


def test_the_mixtures_subtitle_counts_the_clusters_holding_documents():
    """The subtitle read "4 clusters holding documents of 4"; it reads "4 of 4 clusters
    holding documents" now."""
    corpus, _ = mb.datasets.make_dmm_corpus(120, 50, 4, random_state=0)
    model = mb.DirichletMultinomialMixture(4, random_state=0).fit(corpus.counts)
    subtitle = _payload(build_report(model, corpus))["subtitle"]
    assert "120 documents x 50 terms, 4 of 4 clusters holding documents; " in subtitle


def test_the_subtitle_counts_the_scans_coarse_iterations_as_the_selection_table():
    """With --select the table (selection.csv, summary.json) counts the chosen K's coarse fit
    and its continuation (152), the page the continuation alone ("after 120 iterations"); the
    page now says both."""
    corpus, _ = mb.datasets.make_dmm_corpus(60, 30, 3, random_state=0)
    model = mb.TopicModel(3, random_state=0).fit(corpus.counts)
    rows = [dict(k=k, log_bayes_factor=10.0 * k, dispersion=1.0, n_iter=model.n_iter_ + 7)
            for k in (2, 3)]
    subtitle = _payload(build_report(model, corpus, selection=rows))["subtitle"]
    assert (f"after {model.n_iter_} iterations (continued from 7 iterations at the scan's "
            f"coarser tolerance: {model.n_iter_ + 7} in all") in subtitle
    rows = [dict(row, n_iter=model.n_iter_) for row in rows]
    assert "continued" not in _payload(build_report(model, corpus, selection=rows))["subtitle"]
