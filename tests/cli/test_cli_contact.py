"""First contact, round two (issue 23): what a new user met on real files, run in-process
through ``main``."""

import csv
import json
import os

import numpy as np
import pytest

import mixbayes as mb
from mixbayes.cli import main

from test_cli_first_contact import TEXTS, _cli, _one_line_error  # noqa: F401


@pytest.fixture
def raw_text(tmp_path):
    path = tmp_path / "docs.txt"
    path.write_text("\n".join(TEXTS) + "\n", encoding="utf-8")
    return path


@pytest.fixture
def default_field_limit():
    """The csv module's default field limit (131,072), as a fresh process has it."""
    before = csv.field_size_limit()
    csv.field_size_limit(131072)
    yield
    csv.field_size_limit(before)


def test_csv_with_a_text_field_over_the_csv_modules_limit(tmp_path, capsys,
                                                          default_field_limit):
    long = " ".join(["heart blood pressure"] * 8000)  # 167,999 characters, as 20 Newsgroups
    assert len(long) > 131072
    path = tmp_path / "news.csv"
    with open(path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["text", "label"])
        writer.writerows([[t, i % 2] for i, t in enumerate(TEXTS)] + [[long, 0]])
    corpus = mb.read_corpus(path, label_column="label")
    assert corpus.n_documents == len(TEXTS) + 1
    assert corpus.counts[-1].sum() == 3 * 8000
    status, out, err = _cli(capsys, "cluster", str(path), "-k", "2", "--n-init", "1",
                            "--out", str(tmp_path / "o"), "-q")
    assert status == 0, err
    assert "outputs written" in out


def _strict_json(path):
    """``path`` parsed as strict JSON: a bare NaN or Infinity fails."""
    def refuse(name):
        raise AssertionError(f"{path.name} holds a bare {name}")

    return json.loads(path.read_text(encoding="utf-8"), parse_constant=refuse)


def test_json_outputs_write_null_for_nan(tmp_path, capsys):
    from mixbayes.cli._outputs import write_json

    write_json(tmp_path / "x.json", dict(rhat={"rcdll": float("nan")}, ess=np.array([np.nan, 2.0]),
                                         top=np.float32(np.inf), n=np.int64(3), ok=np.bool_(1),
                                         k=range(2, 4)))
    assert _strict_json(tmp_path / "x.json") == dict(rhat={"rcdll": None}, ess=[None, 2.0],
                                                     top=None, n=3, ok=True, k=[2, 3])
    X, _ = mb.datasets.make_gaussian_mixture(24, 2, 2, random_state=0)
    np.save(tmp_path / "p.npy", X)
    status, _, err = _cli(capsys, "cluster", str(tmp_path / "p.npy"), "--model", "tree",
                          "--n-iter", "2", "--out", str(tmp_path / "o"), "-q")
    assert status == 0, err
    for name in os.listdir(tmp_path / "o"):
        if name.endswith(".json"):
            _strict_json(tmp_path / "o" / name)


def _partial_or_lock(folder):
    return [p for p in os.listdir(folder) if p.startswith((".mixbayes-partial", ".mixbayes-lock"))]


def test_two_runs_into_one_out_folder_the_second_is_refused(tmp_path, capsys, raw_text):
    from mixbayes.cli._outputs import OutputFolder

    out = tmp_path / "o"
    # a run still going holds --out: a second run into it, --force or not, cluster or topics,
    # is refused at its start
    with OutputFolder(out) as first:
        for command in (("cluster", "-k", "2"), ("topics", "-k", "2")):
            for force in ((), ("--force",)):
                status, _, err = _cli(capsys, *command[:1], str(raw_text), *command[1:],
                                      "--out", str(out), "-q", *force)
                _one_line_error(status, err, "--out", "another mixbayes run is writing to")
        with open(first.file("summary.json"), "w") as handle:
            handle.write("{}")
    assert os.listdir(out) == ["summary.json"] and not _partial_or_lock(tmp_path)
    # a run that finds --out filled by the time it ends (by a run without the lock) refuses,
    # and says where its own files are
    with pytest.raises(ValueError, match="received files from elsewhere during this run") as e:
        with OutputFolder(tmp_path / "p") as second:
            open(second.file("summary.json"), "w").close()
            (tmp_path / "p").mkdir()
            (tmp_path / "p" / "summary.json").write_text("the other run's")
    assert (tmp_path / "p" / "summary.json").read_text() == "the other run's"
    assert os.listdir(second.path) == ["summary.json"] and second.path in str(e.value)
    # the lock is released: runs one after the other work as before
    status, _, err = _cli(capsys, "cluster", str(raw_text), "-k", "2", "--n-init", "1",
                          "--out", str(out), "--force", "-q")
    assert status == 0, err
    assert not [p for p in _partial_or_lock(tmp_path) if "lock" in p]


def test_an_uncreatable_out_folder_is_named(tmp_path, capsys, raw_text):
    (tmp_path / "a-file").write_text("x")
    targets = [tmp_path / "a-file" / "out"] + (
        [os.path.join("/proc", "forbidden")] if os.path.isdir("/proc/self") else [])
    for target in targets:
        status, _, err = _cli(capsys, "cluster", str(raw_text), "-k", "2", "--out",
                              str(target), "-q")
        _one_line_error(status, err, f"--out: cannot create {str(target)!r}")


def test_sigterm_cleans_up_as_an_interrupt(tmp_path, capsys, raw_text, monkeypatch):
    import signal

    from mixbayes.cli.cluster import dmm as cluster  # the document mixture's run

    class Unhandled(Exception):
        pass

    def unhandled(number, frame):  # stands in for the default action, which ends the tests
        raise Unhandled

    reader = cluster.read_documents

    def read_then_terminated(args):
        os.kill(os.getpid(), signal.SIGTERM)  # as `timeout` sends it, mid-run
        return reader(args)

    monkeypatch.setattr(cluster, "read_documents", read_then_terminated)
    previous = signal.signal(signal.SIGTERM, unhandled)
    try:
        status, out, err = _cli(capsys, "cluster", str(raw_text), "-k", "2", "--out",
                                str(tmp_path / "o"), "-q")
        assert signal.getsignal(signal.SIGTERM) is unhandled  # the handler is put back
    finally:
        signal.signal(signal.SIGTERM, previous)
    assert (status, out, err) == (143, "", "mixbayes: terminated\n")
    assert os.listdir(tmp_path) == ["docs.txt"]  # no .mixbayes-partial-*, no lock, no --out


def test_output_modes_follow_the_umask(tmp_path, capsys, raw_text):
    import stat

    def mode(path):
        return stat.S_IMODE(os.stat(path).st_mode)

    previous = os.umask(0o027)
    try:
        status, _, err = _cli(capsys, "cluster", str(raw_text), "-k", "2", "--n-init", "1",
                              "--out", str(tmp_path / "o"), "--report", "-q")
        (tmp_path / "plain").mkdir()
        (tmp_path / "plain.txt").write_text("x")
    finally:
        os.umask(previous)
    assert status == 0, err
    assert mode(tmp_path / "o") == mode(tmp_path / "plain") == 0o750
    for name in ("model.npz", "report.html", "summary.json", "assignments.csv"):
        assert mode(tmp_path / "o" / name) == mode(tmp_path / "plain.txt") == 0o640, name


@pytest.fixture
def vehicle(tmp_path):
    """A table as R and UCI ship them (Vehicle.csv): numbers, then a text class column."""
    X, truth = mb.datasets.make_gaussian_mixture(40, 3, 2, random_state=0)
    classes = [["van", "saab"][k] for k in truth.labels]
    path = tmp_path / "vehicle.csv"
    rows = [f"{a:.4f},{b:.4f},{c:.4f},{k}" for (a, b, c), k in zip(X, classes)]
    path.write_text("Comp,Circ,D.Circ,Class\n" + "\n".join(rows) + "\n")
    bare = tmp_path / "bare.csv"  # no header: the first row is a point, not names
    bare.write_text("\n".join(rows) + "\n")
    return path, bare, classes


def test_a_text_class_column_is_named_and_can_be_the_labels(tmp_path, capsys, vehicle):
    path, bare, classes = vehicle
    run = ("cluster", "--model", "gmm", "-k", "2", "--n-init", "1", "-q")
    status, _, err = _cli(capsys, *run, str(path), "--out", str(tmp_path / "a"))
    _one_line_error(status, err, f"line 2, column 4 ('Class'): {classes[0]!r} is not a number",
                    "--label-column Class", "--drop-column Class")
    assert "--model dmm" not in err
    status, _, err = _cli(capsys, *run, str(bare), "--out", str(tmp_path / "a"))
    _one_line_error(status, err, f"line 1, column 4: {classes[0]!r}", "--label-column 4")

    status, out, err = _cli(capsys, *run, str(path), "--label-column", "Class",
                            "--out", str(tmp_path / "b"))
    assert status == 0, err
    summary = json.loads((tmp_path / "b" / "summary.json").read_text())
    assert summary["features"] == ["Comp", "Circ", "D.Circ"] and summary["n_samples"] == 40
    assert summary["scores"]["ari"] > 0.9 and "against known labels" in out
    assert summary["settings"]["label_column"] == "Class"
    labels = [row.split(",")[-1] for row in
              (tmp_path / "b" / "assignments.csv").read_text().splitlines()[1:]]
    assert labels == list(classes)

    status, _, err = _cli(capsys, *run, str(bare), "--label-column", "4", "--drop-column",
                          "Circ", "--drop-column", "1", "--out", str(tmp_path / "c"))
    _one_line_error(status, err, "--drop-column: 'Circ' is not a column of",
                    "no header row: give a column number from 1 to 4")
    status, _, err = _cli(capsys, *run, str(path), "--drop-column", "Class", "--drop-column",
                          "Circ", "--out", str(tmp_path / "c"))
    assert status == 0, err
    summary = json.loads((tmp_path / "c" / "summary.json").read_text())
    assert summary["features"] == ["Comp", "D.Circ"] and "scores" not in summary


def test_label_column_of_a_documents_csv_and_misplaced_column_flags(tmp_path, capsys,
                                                                    raw_text, vehicle):
    docs = tmp_path / "docs.csv"
    with open(docs, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["text", "topic"])
        writer.writerows([t, "heart" if "heart" in t.lower() or "blood" in t.lower() else "air"]
                         for t in TEXTS)
    status, out, err = _cli(capsys, "cluster", str(docs), "--label-column", "topic", "-k", "2",
                            "--n-init", "1", "--out", str(tmp_path / "d"), "-q")
    assert status == 0, err
    assert "scores" in json.loads((tmp_path / "d" / "summary.json").read_text())
    for args, fragment in [
        ((str(docs), "--label-column", "Topic"), "--label-column='Topic' is not a column"),
        ((str(raw_text), "--label-column", "topic"), "--label-column names a column of a CSV"),
        ((str(docs), "--drop-column", "topic"), "--drop-column is for points"),
        ((str(vehicle[0]), "--model", "gmm", "--label-column", "Class", "--labels",
          str(raw_text)), "--labels and --label-column both give the labels"),
        ((str(vehicle[0]), "--model", "gmm", "--label-column", "Class", "--drop-column",
          "Class"), "--drop-column 'Class' is the --label-column"),
    ]:
        status, _, err = _cli(capsys, "cluster", *args, "--out", str(tmp_path / "e"), "-q")
        _one_line_error(status, err, fragment)


def test_text_column_of_an_input_that_is_not_a_csv_is_refused(tmp_path, capsys, raw_text):
    """`--text-column body` on a .txt file was silently ignored by cluster, topics, predict and
    report (found by the new-user tryout), as --label-column is not."""
    corpus = mb.Corpus.from_texts(TEXTS)
    model = mb.DirichletMultinomialMixture(2, n_init=1, random_state=0).fit(corpus.counts)
    path = mb.save(model, tmp_path / "model.npz", vocabulary=corpus)
    fragment = f"--text-column names the text column of a CSV file; {str(raw_text)!r} is not one"
    for args in [("cluster", str(raw_text), "-k", "2", "--out", str(tmp_path / "a")),
                 ("topics", str(raw_text), "-k", "2", "--out", str(tmp_path / "b")),
                 ("predict", str(path), str(raw_text), "-o", str(tmp_path / "p.csv")),
                 ("report", str(path), "--corpus", str(raw_text), "--out",
                  str(tmp_path / "r.html"))]:
        status, _, err = _cli(capsys, *args, "--text-column", "body")
        _one_line_error(status, err, fragment)
    assert not any(p.name != "docs.txt" and p.name != "model.npz" for p in tmp_path.iterdir())


def test_report_corpus_whose_empty_documents_were_left_out_says_so(tmp_path, capsys):
    """A model fitted in Python to documents with an empty one, reported with --corpus: 'the
    corpus has 4 documents' of a 5-row .mtx, without why (found by the new-user tryout)."""
    corpus = mb.Corpus.from_texts(["cat dog", "cat fish dog", "", "stock fell", "stock rose"])
    model = mb.DirichletMultinomialMixture(2, n_init=1, random_state=0).fit(corpus.counts)
    path = mb.save(model, tmp_path / "model.npz")
    corpus.write(tmp_path / "data", format="mtx")
    status, _, err = _cli(capsys, "report", str(path), "--corpus",
                          str(tmp_path / "data" / "counts.mtx"), "--out", str(tmp_path / "r.html"))
    _one_line_error(status, err, "--corpus: the corpus has 4 documents (after leaving out its 1 "
                    "empty one, as cluster and topics do) but the model was fitted to 5")


def test_no_terms_left_names_the_flag_that_keeps_them(tmp_path, capsys):
    """One document: every term is in more than half of them; the error said 'max_df 0.5',
    the Python name, not the flag to change (found by the new-user tryout)."""
    (tmp_path / "one.txt").write_text("just one document about foxes and dogs\n")
    status, _, err = _cli(capsys, "cluster", str(tmp_path / "one.txt"), "-k", "1",
                          "--out", str(tmp_path / "o"))
    _one_line_error(status, err, "more than 0 of the 1 document (--max-df 0.5; 1.0 keeps them)")


def test_report_corpus_of_the_wrong_kind_says_what_the_model_was_fitted_to(tmp_path, capsys,
                                                                           saved, raw_text):
    paths, models, corpus, folder = saved
    np.savetxt(tmp_path / "points.csv", np.load(folder / "points.npy"), delimiter=",",
               header="a,b", comments="")
    for kind, data, fragment in [
        ("dmm", tmp_path / "points.csv",
         "a DirichletMultinomialMixture was fitted to documents: give the documents it was"),
        ("gmm", raw_text,
         "a VariationalGaussianMixture was fitted to points: give the points it was fitted to"),
    ]:
        status, _, err = _cli(capsys, "report", str(paths[kind]), "--corpus", str(data),
                              "--out", str(tmp_path / "r.html"))
        _one_line_error(status, err, f"--corpus: {str(data)!r}", fragment)
        assert "--model" not in err and "fit topics" not in err


def test_topic_search_that_stops_early_says_so_and_names_scan_all(tmp_path, capsys, saved,
                                                                  monkeypatch):
    from mixbayes.cli import topics
    from mixbayes.topics.selection import TopicSelection

    _, models, corpus, folder = saved

    def rows(bf):
        return [dict(k=k, log_bayes_factor=v, log_marginal_likelihood=v, dispersion=1.0, df=9,
                     p_value=0.01, log_posterior=-1.0, n_iter=5, seconds=0.1)
                for k, v in zip(range(2, 2 + len(bf)), bf)]

    # as scan() leaves it: K = 2..8 of 2:12 fitted, the last two lower than the one before
    stopped = TopicSelection(rows([10, 30, 50, 60, 70, 65, 61]), 6, models["topics"],
                             candidates=list(range(2, 13)), stop_after=2)
    note = ("the search stopped at K = 8, after 2 decreases in a row of the log Bayes factor; "
            "K = 9..12 of the range were not fitted (a later rise is possible: scan_all=True "
            "fits every K)")
    assert note in stopped.notes
    every = TopicSelection(rows([10, 30, 50]), 4, models["topics"], candidates=[2, 3, 4])
    assert not any("stopped" in n for n in every.notes)
    for candidates, text in [([2, 3, 4, 10, 16, 22], "K = 10..22 (every 6) of the range"),
                             ([2, 3, 4, 9, 12], "K = 9, 12 of the range")]:
        assert text in TopicSelection(rows([1, 3, 2]), 3, None, candidates=candidates,
                                      stop_after=1).notes[0]

    monkeypatch.setattr(topics, "select_n_topics", lambda *a, **k: TopicSelection(
        rows([10, 30, 25, 20]), 3, models["topics"], candidates=list(range(2, 13))))
    status, out, err = _cli(capsys, "topics", str(folder / "data" / "counts.mtx"), "--select",
                            "2:12", "--out", str(tmp_path / "t"), "-q")
    assert status == 0, err
    summary = json.loads((tmp_path / "t" / "summary.json").read_text())
    note = ("the search stopped at K = 5, after 2 decreases in a row of the log Bayes factor; "
            "K = 6..12 of the range were not fitted (a later rise is possible: --scan-all fits "
            "every K)")
    assert note in summary["notes"] and f"note: {note}" in out
    assert (tmp_path / "t" / "doc_topics.csv").read_text().startswith("id,topic0,")


@pytest.mark.parametrize("model,estimator,names", [
    ("dmm", mb.DirichletMultinomialMixture, ("n_init",)),
    ("gmm", mb.VariationalGaussianMixture, ("n_init", "reg_covar", "covariance_type")),
    ("hdp", mb.HDPMixture, ("n_iter",)),
    ("tree", mb.HierarchicalMixture, ("n_iter", "depth", "margin_weight")),
])
def test_cli_defaults_are_the_python_defaults(model, estimator, names):
    from mixbayes.cli import build_parser
    from mixbayes.cli._settings import read_settings

    settings = read_settings(build_parser().parse_args(["cluster", "x.csv", "--model",
                                                        model])).summary
    python = estimator().get_params()
    assert {name: settings[name] for name in names} == {name: python[name] for name in names}


def test_defaults_left_to_none_are_recorded_as_used_and_inspect_takes_the_folder(
        tmp_path, capsys, saved):
    # summary.json said burn_in: null and word_prior: null, inspect burn_in=None, and
    # `mixbayes inspect OUT` (the folder cluster had just written) was refused
    from mixbayes.hdp.model import word_prior_value

    _, _, corpus, folder = saved
    out = tmp_path / "h"
    status, _, err = _cli(capsys, "cluster", str(folder / "data" / "counts.mtx"), "--model",
                          "hdp", "--n-iter", "6", "--out", str(out), "-q")
    assert status == 0, err
    settings = json.loads((out / "summary.json").read_text())["settings"]
    assert (settings["burn_in"], settings["word_prior"]) == (3, word_prior_value(None))
    status, printed, err = _cli(capsys, "inspect", str(out))
    assert status == 0, err
    assert printed.startswith(f"{out / 'model.npz'}: HDPMixture")
    assert "burn_in=None (3)," in printed
    assert f"word_prior=None ({word_prior_value(None):g})" in printed


def test_short_documents_get_the_hdp_short_text_defaults(tmp_path, capsys):
    """Documents under 20 tokens on average: summary.json records the values the fit used
    (gamma0 fixed at the square root of the number of documents, alpha0 from 0.1 under its
    prior, word prior 0.05) and inspect says what "auto" became; a flag given wins."""
    corpus, _ = mb.datasets.make_dmm_corpus(100, 200, 5, mean_length=6.0, random_state=0)
    corpus.write(str(tmp_path / "short"))
    runs = {"auto": [], "given": ["--gamma0-prior", "1", "0.1", "--word-prior", "0.2"]}
    for name, flags in runs.items():
        status, _, err = _cli(capsys, "cluster", str(tmp_path / "short" / "counts.mtx"),
                              "--model", "hdp", "--n-iter", "4", "--out", str(tmp_path / name),
                              "-q", *flags)
        assert status == 0, err
    settings = json.loads((tmp_path / "auto" / "summary.json").read_text())["settings"]
    assert (settings["gamma0"], settings["gamma0_prior"], settings["alpha0"],
            settings["alpha0_prior"], settings["word_prior"]) == (10.0, None, 0.1, [1.0, 1.0],
                                                                  0.05)
    assert "gamma0_posterior_mean" not in settings and "alpha0_posterior_mean" in settings
    given = json.loads((tmp_path / "given" / "summary.json").read_text())["settings"]
    assert (given["gamma0"], given["gamma0_prior"], given["word_prior"]) == (10.0, [1.0, 0.1],
                                                                              0.2)
    assert "gamma0_posterior_mean" in given
    status, printed, err = _cli(capsys, "inspect", str(tmp_path / "auto"))
    assert status == 0, err
    for text in ("top_concentration=auto (10)", "top_concentration_prior=auto (fixed)",
                 "group_concentration=auto (0.1)", "word_prior=None (0.05)",
                 "(short: under 20 tokens a document on average"):
        assert text in printed


def test_sampler_chains_burn_in_and_word_prior_from_the_command_line(tmp_path, capsys,
                                                                    saved, monkeypatch):
    _, _, corpus, folder = saved
    status, _, err = _cli(capsys, "cluster", str(folder / "data" / "counts.mtx"), "--model",
                          "hdp", "--n-iter", "6", "--burn-in", "2", "--n-chains", "2",
                          "--word-prior", "0.5", "--out", str(tmp_path / "h"), "-q")
    assert status == 0, err
    model = mb.load(tmp_path / "h" / "model.npz")
    assert (model.n_iter, model.burn_in, model.n_chains, model.word_prior) == (6, 2, 2, 0.5)
    settings = json.loads((tmp_path / "h" / "summary.json").read_text())["settings"]
    assert (settings["burn_in"], settings["n_chains"], settings["word_prior"]) == (2, 2, 0.5)
    chains = {row.split(",")[0] for row in
              (tmp_path / "h" / "trace.csv").read_text().splitlines()[1:]}
    assert chains == {"0", "1"}
    given = {}

    def fit(self, X):  # the tree's settings are what is tested: no fit needed
        given.update(self.get_params())
        raise ValueError("stopped")

    monkeypatch.setattr(mb.HierarchicalMixture, "fit", fit)
    status, _, err = _cli(capsys, "cluster", str(folder / "points.npy"), "--model", "tree",
                          "--n-iter", "4", "--burn-in", "1", "--n-chains", "2",
                          "--out", str(tmp_path / "t"), "-q")
    _one_line_error(status, err, "stopped")
    assert (given["n_iter"], given["burn_in"], given["n_chains"]) == (4, 1, 2)
    data = str(folder / "data" / "counts.mtx")
    for args, fragment in [
        ((data, "--model", "hdp", "--n-iter", "5", "--burn-in", "5"),
         "--burn-in must be below --n-iter=5; got 5"),
        ((str(folder / "points.npy"), "--model", "gmm", "--n-chains", "2"),
         "--n-chains applies to --model hdp or tree, not --model gmm"),
        ((str(folder / "points.npy"), "--model", "tree", "--word-prior", "1"),
         "--word-prior applies to --model hdp"),
        ((str(folder / "points.npy"), "--model", "hdp", "--groups", data, "--word-prior", "1"),
         "--word-prior is for documents"),
    ]:
        status, _, err = _cli(capsys, "cluster", *args, "--out", str(tmp_path / "e"), "-q")
        _one_line_error(status, err, fragment)
    with pytest.raises(SystemExit):
        main(["cluster", data, "--model", "hdp", "--word-prior", "0"])
    assert "--word-prior: must be a finite number > 0" in capsys.readouterr().err


def test_inspect_says_how_many_components_it_left_out(tmp_path, capsys):
    from mixbayes.cli._outputs import SHOWN

    # many points, every component in use after two iterations (the listing leaves the
    # switched-off components to one line of their own)
    points = np.random.default_rng(0).uniform(size=(2000, 2))
    model = mb.VariationalGaussianMixture(SHOWN + 3, n_init=1, max_iter=2, random_state=0)
    with pytest.warns(mb.ConvergenceWarning):
        model.fit(points)
    assert model.n_effective_components_ == SHOWN + 3
    mb.save(model, tmp_path / "gmm.npz")
    status, out, err = _cli(capsys, "inspect", str(tmp_path / "gmm.npz"))
    assert status == 0, err
    listed = [line for line in out.splitlines() if line.startswith("component ")]
    assert len(listed) == SHOWN and out.splitlines()[-1] == "... and 3 components more"


def test_report_corpus_drops_the_class_column_the_fit_left_out(tmp_path, capsys, saved):
    paths, _, _, folder = saved
    points = np.load(folder / "points.npy")
    rows = [",".join(f"{v:.6f}" for v in p) + f",{'van' if p[0] > 0 else 'saab'}"
            for p in points]
    (tmp_path / "v.csv").write_text("a,b,c,Class\n" + "\n".join(rows) + "\n")
    run = ("report", str(paths["gmm"]), "--corpus", str(tmp_path / "v.csv"))
    status, _, err = _cli(capsys, *run, "--out", str(tmp_path / "r.html"))
    _one_line_error(status, err, "('Class')", "leave it out with --drop-column Class")
    assert "--label-column" not in err
    status, out, err = _cli(capsys, *run, "--drop-column", "Class", "--out",
                            str(tmp_path / "r.html"))
    assert status == 0 and "report of the VariationalGaussianMixture written" in out, err


def test_a_text_column_is_numbered_as_in_the_file_after_an_id_column(tmp_path, capsys):
    """The id column left out of the features still counts in the column's number (which
    --drop-column and --label-column take from 1, in the file)."""
    rows = [f"{i + 1},{0.1 * i:.2f},{i % 3},{'abc'[i % 3]}" for i in range(12)]
    (tmp_path / "t.csv").write_text("id,a,b,kind\n" + "\n".join(rows) + "\n")
    status, _, err = _cli(capsys, "cluster", str(tmp_path / "t.csv"), "--model", "gmm", "-q",
                          "--out", str(tmp_path / "o"))
    _one_line_error(status, err, "line 2, column 4 ('kind'): 'a' is not a number")
    status, _, err = _cli(capsys, "cluster", str(tmp_path / "t.csv"), "--model", "gmm", "-q",
                          "--drop-column", "b", "--out", str(tmp_path / "o"))
    _one_line_error(status, err, "line 2, column 4 ('kind')")


@pytest.mark.parametrize("table, field", [
    ('x,income\n0.5,"50,000"\n1.5,"61,250"\n', "50,000"),
    ('x,y\n"1,234.5",2\n"2,345.5",3\n', "1,234.5"),
    ("x;y\n1.234,5;2\n2.345,5;3\n", "1.234,5"),
])
def test_a_number_with_thousands_separators_is_named_as_such(tmp_path, capsys, table, field):
    """A spreadsheet's 50,000 is a number, not a class column: the error says to write it
    without the separators rather than pointing to --label-column."""
    (tmp_path / "t.csv").write_text(table)
    status, _, err = _cli(capsys, "cluster", str(tmp_path / "t.csv"), "--model", "gmm", "-q",
                          "--out", str(tmp_path / "o"))
    _one_line_error(status, err, f"{field!r} is a number written with thousands separators")
    assert "--label-column" not in err


def _cluster_table(tmp_path, capsys, header, rows, *options):
    """``mixbayes cluster`` (gmm, quiet) of a CSV of ``header`` and ``rows`` with ``options``:
    its standard output and error, the run asserted to succeed."""
    (tmp_path / "t.csv").write_text(header + "\n" + "\n".join(rows) + "\n")
    out_dir = tmp_path / f"o{len(list(tmp_path.glob('o*')))}"
    status, out, err = _cli(capsys, "cluster", str(tmp_path / "t.csv"), "--model", "gmm", "-q",
                            *options, "--out", str(out_dir))
    assert status == 0, err
    return out, err


def test_a_class_column_of_numbers_clustered_as_a_feature_gets_a_note(tmp_path, capsys):
    """A UCI-style table whose class column holds 1, 2, 3 is all numbers, so it is clustered
    as a feature; the run says so and names --label-column (and stays quiet once given)."""
    X, truth = mb.datasets.make_gaussian_mixture(30, 2, 3, random_state=0)
    rows = [f"{a:.4f},{b:.4f},{c + 1}" for (a, b), c in zip(X, truth.labels)]
    out, _ = _cluster_table(tmp_path, capsys, "x,y,Class", rows, "-k", "3")
    assert "note: column 3 ('Class') is named as known labels" in out
    assert "--label-column Class" in out
    out, err = _cluster_table(tmp_path, capsys, "x,y,Class", rows, "-k", "3",
                              "--label-column", "Class")
    assert "named as known labels" not in out + err


def test_an_id_column_that_is_not_first_gets_a_note(tmp_path, capsys):
    """Only a first id column is left out; one further right is clustered, and said to be."""
    rows = [f"{i},{0.1 * i:.2f},{i % 3},{1000 + i}" for i in range(12)]
    out, _ = _cluster_table(tmp_path, capsys, ",a,b,point_id", rows, "-k", "2")
    assert "note: column 4 ('point_id') is named as an identifier" in out
    assert "--drop-column point_id" in out


def test_topics_that_are_one_distribution_are_noted(tmp_path, capsys):
    """Every document the same text, K = 3: three equal topics were listed with no word; a note
    says they are one distribution (printed and in summary.json), and distinct topics say
    nothing."""
    from mixbayes.cli import main
    from mixbayes.cli.topics import _same_topics

    (tmp_path / "same.txt").write_text("the cat sat on the mat with a dog\n" * 6)
    assert main(["topics", str(tmp_path / "same.txt"), "-k", "3", "--max-df", "1.0",
                 "--out", str(tmp_path / "o")]) == 0
    printed = capsys.readouterr().out
    assert ("note: topics 0, 1 and 2 are one word distribution: the documents hold about "
            "1 distinct topic, fewer than K = 3") in printed
    summary = json.loads((tmp_path / "o" / "summary.json").read_text())
    assert any(note.startswith("topics 0, 1 and 2 are one") for note in summary["notes"])
    topics = np.array([[0.5, 0.5, 0.0], [0.5, 0.5, 0.0], [0.0, 0.5, 0.5], [0.0, 0.5, 0.5]])
    assert _same_topics(topics).startswith("topics 0 and 1; 2 and 3 are one word "
                                           "distribution: the documents hold about 2 distinct")
    assert _same_topics(np.eye(3)) is None


def test_summary_records_the_document_frequency_limits_as_applied(tmp_path, capsys):
    """summary.json left out --max-df and --max-features unless given, though raw text loses
    the words of more than half its documents by default: it records them as applied."""
    from mixbayes.cli import main

    (tmp_path / "docs.txt").write_text("the cat sat on the mat\nthe dog ate the bone\n"
                                       "cats and dogs play\na mat and a bone\n")
    for extra, max_df in (([], 0.5), (["--max-df", "1.0"], 1.0)):
        out = tmp_path / f"o{max_df}"
        assert main(["cluster", str(tmp_path / "docs.txt"), "--model", "dmm", "-k", "2",
                     "--out", str(out), "-q", *extra]) == 0
        settings = json.loads((out / "summary.json").read_text())["settings"]
        assert settings["max_df"] == max_df and settings["max_features"] is None
