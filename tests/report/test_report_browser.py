"""The report in a real browser: headless Chromium driven through the DevTools protocol
(tools/cdp.py, standard library only). Skipped, with the reason, where no Chromium is found
(Debian: ``apt-get install chromium``; .ci/run installs it) -- except in CI (``CI=true``),
where a missing browser fails the run: the page's own maths (the relevance slider) is tested
nowhere else."""

import io
import json
import os
import shutil
import subprocess
import warnings
from pathlib import Path

import numpy as np
import pytest

from cdp import Browser, find_chromium
from mixbayes.report import write_report

MISSING = ("no chromium binary on PATH (Debian: apt-get install chromium), so the report "
           "cannot be opened in a browser")


def _chromium_or_stop(path, environ):
    """``path``, or a skip where it is None -- a failure in CI (``CI=true``, as GitHub Actions,
    GitLab and most CI services set it), where the browser test must not quietly vanish."""
    if path is not None:
        return path
    if environ.get("CI", "").strip().lower() in ("true", "1", "yes"):
        pytest.fail(f"CI=true but {MISSING}; .ci/run installs it (apt-get install chromium)",
                    pytrace=False)
    pytest.skip(MISSING)


@pytest.fixture(scope="module")
def chromium():
    return _chromium_or_stop(find_chromium(), os.environ)


def test_a_missing_browser_skips_here_and_fails_in_ci():
    assert _chromium_or_stop("/usr/bin/chromium", {"CI": "true"}) == "/usr/bin/chromium"
    for environ in ({}, {"CI": "false"}, {"CI": ""}):
        with pytest.raises(pytest.skip.Exception, match="no chromium"):
            _chromium_or_stop(None, environ)
    for value in ("true", "TRUE", "1"):
        with pytest.raises(pytest.fail.Exception, match="CI=true but no chromium"):
            _chromium_or_stop(None, {"CI": value})


def _fake_bin(folder, **scripts):
    """A PATH of its own: ``dirname`` and ``id`` as they are, and fake commands."""
    folder.mkdir()
    for name in ("dirname", "id"):
        (folder / name).symlink_to(shutil.which(name, path="/usr/bin:/bin"))
    for name, body in scripts.items():
        (folder / name).write_text("#!/bin/bash\n" + body + "\n")
        (folder / name).chmod(0o755)
    return folder


@pytest.mark.parametrize("ci", [True, False], ids=["CI=true", "not CI"])
def test_ci_run_fails_when_chromium_cannot_be_installed_in_ci(tmp_path, ci):
    """.ci/run without chromium and with an apt-get that fails: in CI it stops before the tests
    with one line naming chromium; elsewhere it notes it and runs them (make test)."""
    script = Path(__file__).resolve().parents[2] / ".ci" / "run"
    folder = _fake_bin(tmp_path / "bin", **{"apt-get": "exit 100", "sudo": 'exec "$@"',
                                            "make": 'echo "make $*"'})
    environ = {"PATH": str(folder), "HOME": str(tmp_path)}
    if ci:
        environ["CI"] = "true"
    run = subprocess.run(["/bin/bash", str(script)], env=environ, capture_output=True,
                         text=True, timeout=30)
    assert "chromium" in run.stderr
    if ci:
        assert run.returncode != 0 and "make test" not in run.stdout
        assert "CI=true" in run.stderr
    else:
        assert run.returncode == 0 and run.stdout.strip() == "make test"
        assert "note:" in run.stderr

TERMS = "Array.from(document.querySelectorAll('#terms .term')).map(g => g.dataset.term)"


def _centre(browser, selector):
    """The centre of an element on the page, as a user would aim at it."""
    return browser.evaluate(f"""(() => {{
        const r = document.querySelector({json.dumps(selector)}).getBoundingClientRect();
        return [r.left + r.width / 2, r.top + r.height / 2, r.width, r.height]; }})()""")


def _not_blank(png):
    """The screenshot holds a picture: many colours, and far from one flat background."""
    import matplotlib.image

    image = matplotlib.image.imread(io.BytesIO(png), format="png")[..., :3]
    rgb = (image * 255).astype(np.uint32).reshape(-1, 3)
    colours = np.unique(rgb[:, 0] << 16 | rgb[:, 1] << 8 | rgb[:, 2]).size
    background = np.median(image.reshape(-1, 3), axis=0)
    inked = np.mean(np.abs(image - background).sum(axis=-1) > 0.1)
    return colours > 50 and inked > 0.03


def test_report_works_in_chromium(chromium, saved, tmp_path):
    paths, models, corpus, folder = saved
    model = models["topics"]
    page = write_report(model, tmp_path / "report.html", corpus,
                        selection=[dict(k=k, log_bayes_factor=k, dispersion=1 / k)
                                   for k in (2, 3, 4)])
    payload = json.loads(page and (tmp_path / "report.html").read_text().split(
        'id="report-data">')[1].split("</script>")[0])
    with Browser(chromium, width=1200, height=1000) as browser:
        browser.open(page)
        assert browser.evaluate("document.body.dataset.ready") == "1"
        assert browser.errors == []
        # the map, the term panel, the sizes, the choice of K and the trace are drawn
        bubbles = browser.evaluate("document.querySelectorAll('#map circle.bubble').length")
        assert bubbles == len(payload["components"]) == 3
        before = browser.evaluate(TERMS)
        assert len(before) == min(20, corpus.n_terms) and len(set(before)) == len(before)
        for selector in ("#map", "#terms", "#sizes", "#selection", ".trace"):
            width, height = _centre(browser, selector)[2:]
            assert width > 100 and height > 50, selector
        assert browser.evaluate("document.querySelectorAll('#examples li').length") > 0
        assert _not_blank(browser.screenshot())
        # moving the slider (a click near its left end, as a user's) re-ranks the terms
        title = browser.evaluate("document.getElementById('panel-title').textContent")
        x, y, width, _ = _centre(browser, "#lambda")
        browser.click(x - width / 2 + 3, y)
        lam = float(browser.evaluate("document.getElementById('lambda').value"))
        assert lam < 0.1
        after = browser.evaluate(TERMS)
        assert after != before
        assert browser.evaluate("document.getElementById('lambda-value').textContent") == \
            f"{lam:.2f}"
        selected = int(title.split()[-1])
        assert after == _ranked(payload, selected, lam)
        _assert_model_ranking(after, model, corpus.vocabulary, selected, lam)
        # and at a second lambda, near the right end (mostly by probability)
        browser.click(x - width / 2 + 0.8 * width, y)
        lam_high = float(browser.evaluate("document.getElementById('lambda').value"))
        assert 0.7 < lam_high < 0.9
        high = browser.evaluate(TERMS)
        assert high != after and high == _ranked(payload, selected, lam_high)
        _assert_model_ranking(high, model, corpus.vocabulary, selected, lam_high)
        browser.click(x - width / 2 + 3, y)  # back to the first lambda
        assert float(browser.evaluate("document.getElementById('lambda').value")) == lam
        # clicking another topic on the map changes the panel
        target = browser.evaluate("""(() => {
            for (const c of document.querySelectorAll('#map circle.bubble:not(.selected)')) {
                const r = c.getBoundingClientRect(), x = r.left + r.width / 2,
                      y = r.top + r.height / 2;
                if (document.elementFromPoint(x, y) === c) return [x, y, +c.dataset.id];
            }
            return null; })()""")
        assert target is not None, "every other topic is hidden under another"
        browser.click(target[0], target[1])
        assert browser.evaluate("document.getElementById('panel-title').textContent") == \
            f"Top terms of topic {target[2]}"
        assert browser.evaluate(TERMS) == _ranked(payload, target[2], lam)
        assert browser.evaluate(
            "document.querySelector('#map circle.bubble.selected').dataset.id") == \
            str(target[2])
        assert browser.errors == []


def _assert_model_ranking(shown, model, vocabulary, topic, lam):
    """The page's ranking is Python's: the terms shown, scored by the model's own topic and
    term frequencies, are the top relevances over the whole vocabulary, in order (as values:
    the page's probabilities carry 5 digits, so near-ties may swap)."""
    P, f = model.topics_[topic], model.term_frequency_
    index = {term: j for j, term in enumerate(vocabulary)}

    def relevance(j):
        return lam * np.log(P[j]) + (1 - lam) * np.log(P[j] / f[j])

    full = sorted((relevance(j) for j in np.flatnonzero(P > 0)), reverse=True)
    np.testing.assert_allclose([relevance(index[term]) for term in shown], full[:len(shown)],
                               rtol=1e-4, atol=1e-3, err_msg=f"topic {topic}, lambda {lam}")


def _ranked(payload, topic, lam):
    """The page's ranking recomputed here: relevance over the shipped candidates."""
    component = next(c for c in payload["components"] if c["id"] == topic)
    rows = []
    for index, p in component["terms"]:
        f = payload["frequency"][index]
        rows.append((-(lam * np.log(p) + (1 - lam) * np.log(p / f)),
                     payload["vocabulary"][index]))
    return [term for _, term in sorted(rows)][:payload["shown_terms"]]


def test_tree_node_names_do_not_overlap(chromium, tmp_path):
    # with some 35 leaves their names ran into one another ("n7n8n9n10...")
    import mixbayes as mb

    X, _ = mb.datasets.make_gaussian_mixture(300, 8, 40, random_state=0)
    tree = mb.HierarchicalMixture(depth=2, n_iter=2).fit(X)
    assert (tree.node_level_ == 2).sum() > 25
    page = write_report(tree, tmp_path / "tree.html", X)
    with Browser(chromium, width=1200, height=1000) as browser:
        browser.open(page)
        boxes = browser.evaluate("""Array.from(document.querySelectorAll('#map text')).map(t => {
            const r = t.getBoundingClientRect(); return [r.left, r.right, r.top]; })""")
    assert len(boxes) >= 2
    for i, a in enumerate(boxes):
        for b in boxes[i + 1:]:
            assert abs(a[2] - b[2]) > 1 or a[1] <= b[0] or b[1] <= a[0], (a, b)


def test_map_numbers_do_not_print_over_one_another(chromium, tmp_path):
    """A map of many small clusters: the numbers are drawn only where they do not overlap (the
    HDP's report printed 26, 28 and 38 over each other), the selected cluster's among them;
    every bubble is still drawn."""
    import mixbayes as mb

    # 150 clusters of a document or two over 30 terms: their word distributions are alike,
    # and the map packs them together
    corpus, _ = mb.datasets.make_dmm_corpus(300, 30, 150, mean_length=6, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", mb.ConvergenceWarning)
        model = mb.DirichletMultinomialMixture(150, n_init=1, init="random", init_sweeps=0,
                                               max_iter=3, random_state=0).fit(corpus.counts)
    page = write_report(model, tmp_path / "many.html", corpus)
    with Browser(chromium, width=1200, height=1000) as browser:
        browser.open(page)
        assert browser.errors == []
        boxes = browser.evaluate("""Array.from(document.querySelectorAll('#map text.bubble-label'))
            .map(t => { const r = t.getBoundingClientRect();
                        return [r.left, r.right, r.top, r.bottom, t.textContent]; })""")
        bubbles = browser.evaluate("document.querySelectorAll('#map circle.bubble').length")
        chosen = browser.evaluate(
            "document.querySelector('#map circle.bubble.selected').dataset.id")
    for i, a in enumerate(boxes):
        for b in boxes[i + 1:]:
            assert a[1] <= b[0] + 0.5 or b[1] <= a[0] + 0.5 or a[3] <= b[2] + 0.5 \
                or b[3] <= a[2] + 0.5, (a, b)
    assert bubbles > len(boxes) >= 2  # some numbers left out, the bubbles all there
    assert chosen in [b[4] for b in boxes]


# ------------------------------------------------------------------ issue 23: the pictures
PROJECTION = """(() => {
    const svg = document.getElementById('projection');
    const screen = (m, x, y) => { const p = svg.createSVGPoint(); p.x = x; p.y = y;
                                  const q = p.matrixTransform(m); return [q.x, q.y]; };
    const M = svg.getScreenCTM();
    const texts = Array.from(svg.querySelectorAll('g.axis text'));
    const xt = texts
      .filter(t => t.getAttribute('text-anchor') === 'middle' && !t.getAttribute('transform'))
      .filter(t => !isNaN(parseFloat(t.textContent)))
      .map(t => [parseFloat(t.textContent), screen(M, +t.getAttribute('x'), 0)[0]]);
    const yt = texts.filter(t => t.getAttribute('text-anchor') === 'end')
      .map(t => [parseFloat(t.textContent), screen(M, 0, +t.getAttribute('y') - 3)[1]]);
    const box = [screen(M, 42, 42), screen(M, 520 - 42, 400 - 42)];
    const ellipses = Array.from(svg.querySelectorAll('ellipse')).map(e => {
      const L = e.getTotalLength(), E = e.getScreenCTM(), out = [];
      for (let i = 0; i < 72; i++) { const p = e.getPointAtLength(L * i / 72);
                                     out.push(screen(E, p.x, p.y)); }
      return out; });
    const clipped = Array.from(svg.querySelectorAll('ellipse')).every(
      e => e.parentNode.classList.contains('plot-area') &&
           e.parentNode.getAttribute('overflow') === 'hidden');
    return {xt, yt, box, ellipses, clipped}; })()"""


def test_ellipses_are_the_projected_covariances_inside_their_panel(chromium, tmp_path):
    """On axes of very different scales (x spread 30 times y's) every drawn 2-sigma ellipse,
    read back from the page in screen pixels and mapped to data units by the tick labels,
    is the component's ellipse: (p - m)' S^-1 (p - m) = 4 at every point of its outline
    (a pixel ellipse made of the data semi-axes times each axis's scale, then rotated, is
    not: it crossed the panel's edge); every outline lies inside the axes' rectangle, and is
    drawn in a nested viewport clipped to it."""
    import mixbayes as mb

    rng = np.random.default_rng(0)
    tilt = np.array([[30.0, 0.0], [1.0, 0.4]])
    X = np.vstack([rng.standard_normal((150, 2)) @ tilt + [0, 0],
                   rng.standard_normal((150, 2)) @ tilt * [0.5, 1] + [200, 4]])
    model = mb.VariationalGaussianMixture(2, n_init=1, random_state=0).fit(X)
    page = write_report(model, tmp_path / "g.html", X)
    payload = json.loads((tmp_path / "g.html").read_text().split(
        'id="report-data">')[1].split("</script>")[0])
    with Browser(chromium, width=1200, height=1000) as browser:
        browser.open(page)
        assert browser.errors == []
        got = browser.evaluate(PROJECTION)
    assert got["clipped"] and len(got["ellipses"]) == len(payload["components"]) == 2
    # screen -> data, one linear map per axis fitted on the tick labels
    xt, yt = np.array(got["xt"]), np.array(got["yt"])
    ax_, bx_ = np.polyfit(xt[:, 1], xt[:, 0], 1)
    ay_, by_ = np.polyfit(yt[:, 1], yt[:, 0], 1)
    assert abs(ax_ / ay_) > 1.5  # the two axes' scales differ (and y points down)
    (left, top), (right, bottom) = got["box"]
    for outline in got["ellipses"]:
        pixels = np.array(outline)
        assert np.all((pixels[:, 0] >= left - 0.5) & (pixels[:, 0] <= right + 0.5))
        assert np.all((pixels[:, 1] >= top - 0.5) & (pixels[:, 1] <= bottom + 0.5))
        data = np.column_stack([ax_ * pixels[:, 0] + bx_, ay_ * pixels[:, 1] + by_])
        centre = data.mean(axis=0)
        c = min(payload["components"], key=lambda c: np.linalg.norm(np.subtract(c["centre"],
                                                                                centre)))
        k = c["id"]
        S = model.covariance_matrix(k)
        d = data - model.means_[k]
        form = np.einsum("ni,ij,nj->n", d, np.linalg.inv(S), d)
        np.testing.assert_allclose(form, 4.0, rtol=0.03)


def test_a_trace_axis_never_repeats_a_tick_label(chromium, saved, tmp_path):
    """An ELBO trace from -929,160 to -929,100: every tick label of the trace's value
    axis distinct, and the ticks' own values (four significant digits read -929,120 and
    -929,140 both as -929100)."""
    import copy

    model = copy.deepcopy(saved[1]["dmm"])
    model.elbo_trace_ = -929100.0 + np.linspace(-60.0, 0.0, 30)
    page = write_report(model, tmp_path / "t.html", saved[2])
    with Browser(chromium, width=1200, height=1000) as browser:
        browser.open(page)
        assert browser.errors == []
        labels = browser.evaluate("""Array.from(document.querySelectorAll('#traces svg'))[0]
            .querySelectorAll('g.axis text[text-anchor="end"]').length ? Array.from(
            Array.from(document.querySelectorAll('#traces svg'))[0].querySelectorAll(
            'g.axis text[text-anchor="end"]')).map(t => t.textContent) : []""")
    assert labels == ["-929160", "-929140", "-929120", "-929100"]


def test_the_fit_s_warnings_are_in_the_page_s_header(chromium, saved, tmp_path):
    model = saved[1]["hdp"]
    assert model.convergence_warnings_
    page = write_report(model, tmp_path / "h.html", saved[2])
    with Browser(chromium, width=1200, height=1000) as browser:
        browser.open(page)
        shown = browser.evaluate("""[!document.getElementById('warnings').hidden,
            Array.from(document.querySelectorAll('#warnings li')).map(li => li.textContent)]""")
    assert shown == [True, model.convergence_warnings_]


def test_a_trace_s_long_tick_labels_leave_its_axis_title_clear(chromium, saved, tmp_path):
    """An ELBO that moves by 0.01 around -1.0755e6 (the demo's) needs ten-digit tick labels
    ("-1.075505160e+6"), which a fixed 64-pixel margin laid over the axis title: the left
    margin now holds the longest label, and no label's box meets the title's."""
    import copy

    model = copy.deepcopy(saved[1]["dmm"])
    model.elbo_trace_ = np.array([-1075505.168, -1075505.155])
    page = write_report(model, tmp_path / "t.html", saved[2])
    with Browser(chromium, width=1200, height=1000) as browser:
        browser.open(page)
        assert browser.errors == []
        boxes = browser.evaluate("""(() => {
            const svg = document.querySelectorAll('#traces svg')[0];
            const box = t => { const r = t.getBoundingClientRect();
                               return [r.left, r.right, r.top, r.bottom, t.textContent]; };
            return {labels: Array.from(svg.querySelectorAll('g.axis text[text-anchor="end"]'))
                        .map(box),
                    title: box(Array.from(svg.querySelectorAll('g.axis text'))
                        .find(t => t.getAttribute('transform')))};
        })()""")
    title = boxes["title"]
    assert title[4] and len(boxes["labels"]) >= 2
    assert max(len(label[4]) for label in boxes["labels"]) >= 12  # the long labels this is about
    for label in boxes["labels"]:
        assert label[0] >= title[1], (label, title)  # each label right of the rotated title


def _crosses(segment, box):
    """Whether the segment (x1, y1, x2, y2) meets the box (left, right, top, bottom)."""
    (x1, y1, x2, y2), (left, right, top, bottom) = segment, box
    for t in np.linspace(0.0, 1.0, 200):
        x, y = x1 + t * (x2 - x1), y1 + t * (y2 - y1)
        if left <= x <= right and top <= y <= bottom:
            return True
    return False


@pytest.mark.parametrize("scores", [[100, 900, 905, 910, 915], [100, 900, 890, 880, 870]],
                         ids=["flat after the chosen K", "falling after it"])
def test_the_chosen_k_label_sits_clear_of_the_curves(chromium, saved, tmp_path, scores):
    """The choice of K's 'chosen K = k' label was drawn at the top of the chart, where the
    curve it marks has its best value: a Bayes factor still rising at the top of the range
    (mixbayes topics --select 2:6 on a small corpus) ran straight through it (a new user's
    tryout); so did a curve flat or falling after the chosen K (the model's, 3 here). It now
    sits where no curve passes, beside its dashed line."""
    page = write_report(saved[1]["topics"], tmp_path / "k.html", saved[2],
                        selection=[dict(k=k, log_bayes_factor=v, dispersion=1 / k)
                                   for k, v in zip(range(2, 7), scores)])
    with Browser(chromium, width=1200, height=1000) as browser:
        browser.open(page)
        assert browser.errors == []
        found = browser.evaluate("""(() => {
            const svg = document.getElementById('selection');
            const label = Array.from(svg.querySelectorAll('text'))
                .find(t => t.textContent.startsWith('chosen K ='));
            const b = label.getBBox();
            const paths = Array.from(svg.querySelectorAll('path'))
                .filter(p => p.getAttribute('stroke') && p.getAttribute('fill') === 'none')
                .map(p => p.getAttribute('d'));
            return {text: label.textContent, box: [b.x, b.x + b.width, b.y, b.y + b.height],
                    paths: paths};
        })()""")
    assert found["text"] == "chosen K = 3"
    assert len(found["paths"]) == 2  # the Bayes factor and the dispersion
    for d in found["paths"]:
        points = [tuple(map(float, p.split(","))) for p in d.replace("M", " ").replace(
            "L", " ").split()]
        for (x1, y1), (x2, y2) in zip(points, points[1:]):
            assert not _crosses((x1, y1, x2, y2), found["box"]), (d, found["box"])


def test_long_terms_stay_inside_the_term_panel(chromium, saved, tmp_path):
    """The term labels had a fixed 120-pixel column: congress109's phrase
    "congressional.black.caucu" ran out of the panel to the left (a new user's tryout). The
    column now fits the longest term up to 220 pixels, and a longer term is cut with an
    ellipsis, whole in its tooltip."""
    import mixbayes as mb

    model, corpus = saved[1]["topics"], saved[2]
    # every other term a congress109 phrase, the others longer than any column
    vocabulary = [f"congressional.black.cau{j:02d}" if j % 2 else
                  f"a.phrase.far.too.long.for.any.column.of.term.labels.in.the.panel.{j:02d}"
                  for j in range(corpus.n_terms)]
    page = write_report(model, tmp_path / "long.html", mb.Corpus(corpus.counts, vocabulary))
    with Browser(chromium, width=1200, height=1000) as browser:
        browser.open(page)
        assert browser.errors == []
        found = browser.evaluate("""(() => {
            const svg = document.getElementById('terms').getBoundingClientRect();
            return Array.from(document.querySelectorAll('#terms g.term')).map(g => {
                const t = g.querySelector('text.term-label'), r = t.getBoundingClientRect();
                return [g.dataset.term, t.textContent, r.left - svg.left,
                        g.querySelector('title').textContent];
            });
        })()""")
    assert {len(term) for term, *_ in found} == {25, 67}  # both kinds shown
    for term, label, left, tip in found:
        assert left >= 0, (term, label, left)  # inside the panel's drawing
        assert tip.startswith(term + ":")
        if len(term) == 25:
            assert label == term  # whole: it fits
        else:
            assert label.endswith("\u2026") and term.startswith(label[:-1]), label
