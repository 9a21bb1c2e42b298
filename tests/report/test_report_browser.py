"""The report in a real browser: headless Chromium driven through the DevTools protocol
(tests/_support/cdp.py, standard library only). Skipped, with the reason, where no Chromium is found
(Debian: ``apt-get install chromium``; .ci/run installs it) -- except in CI (``CI=true``),
where a missing browser fails the run: the page's own maths (the relevance slider) is tested
nowhere else."""

import io
import json
import os
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from _support.cdp import Browser, find_chromium
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
