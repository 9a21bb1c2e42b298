"""The command line as a new user meets it: raw files, wrong files, options that do not apply,
reused output folders, pipes. Run in-process through ``main`` (one subprocess for the pipe)."""

import json
import os
import subprocess
import sys
import warnings

import numpy as np
import pytest

import mixbayes as mb
from mixbayes.cli import build_parser, main
from mixbayes.cli._outputs import print_groups

TEXTS = [
    "The patient's heart and the blood pressure, of the heart: measured twice!",
    "Blood cells and the heart of the patient; the cells were counted.",
    "Heart rate of patients, blood flow and the pressure in the heart.",
    "The aircraft wing and the flow of air over the wing, at high speed.",
    "Wing design: the lift of an aircraft, and the drag of the air flow.",
    "Air speed over the wing of the aircraft and the lift it gives.",
] * 5


def _cli(capsys, *args):
    status = main(list(args))
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def _one_line_error(status, err, *fragments):
    assert status == 1, err
    assert err.startswith("mixbayes: error: ") and err.count("\n") == 1, err
    assert "Traceback" not in err
    for fragment in fragments:
        assert fragment in err, (fragment, err)


@pytest.fixture
def raw_text(tmp_path):
    path = tmp_path / "docs.txt"
    path.write_text("\n".join(TEXTS) + "\n", encoding="utf-8")
    return path


def test_version_and_every_option_documented(capsys):
    with pytest.raises(SystemExit) as stop:
        main(["--version"])
    assert stop.value.code == 0 and capsys.readouterr().out.strip() == f"mixbayes {mb.__version__}"
    parser = build_parser()
    assert "points" in parser.description
    commands = parser._subparsers._group_actions[0].choices
    for name, sub in commands.items():
        for action in sub._actions:
            if action.option_strings and action.dest != "help":
                assert action.help, (name, action.dest)
                takes_value = action.nargs != 0
                if takes_value and action.dest not in ("labels", "groups", "select",
                                                       "n_components"):
                    assert "default" in action.help, (name, action.dest, action.help)
    topics = commands["topics"]
    assert {"seed", "labels", "stop_words", "min_df"} <= {a.dest for a in topics._actions}


@pytest.mark.parametrize("args,flag", [
    (("--model", "gmm", "--inference", "gibbs"), "--inference applies to --model dmm"),
    (("--model", "dmm", "--covariance-type", "diag"), "--covariance-type applies to --model gmm"),
    (("--model", "dmm", "--n-iter", "5"), "--n-iter applies to --model hdp"),
    (("--model", "gmm", "--stop-words", "none"), "--stop-words is for documents"),
    (("--model", "hdp", "-k", "3"), "-k applies to --model dmm or gmm"),
    (("--model", "gmm", "--select", "2:5"), "--select applies to --model dmm"),
])
def test_options_that_do_not_apply_are_refused(tmp_path, capsys, raw_text, args, flag):
    status, out, err = _cli(capsys, "cluster", str(raw_text), *args, "--out",
                            str(tmp_path / "o"), "-q")
    _one_line_error(status, err, flag)
    assert not (tmp_path / "o").exists()


def test_errors_speak_cli_words(tmp_path, capsys, raw_text):
    status, _, err = _cli(capsys, "cluster", str(raw_text), "-k", "31", "--out",
                          str(tmp_path / "o"), "-q")
    _one_line_error(status, err, "-k must")
    assert "n_components" not in err


@pytest.mark.parametrize("content", ["", "a,b,c\n", "\n\n# only a comment\n"])
def test_empty_or_header_only_csv(tmp_path, capsys, content):
    (tmp_path / "empty.csv").write_text(content)
    status, _, err = _cli(capsys, "cluster", str(tmp_path / "empty.csv"), "--model", "gmm",
                          "--out", str(tmp_path / "o"), "-q")
    _one_line_error(status, err, "holds no points", "empty.csv")


@pytest.mark.parametrize("payload", [bytes(range(256)) * 4, b"ab\x00cd\n" * 10,
                                     "caf\u00e9 au lait\n".encode("latin-1") * 10])
@pytest.mark.parametrize("command", [("cluster", "--model", "dmm"), ("cluster", "--model", "gmm"),
                                     ("cluster", "--model", "hdp"), ("topics", "-k", "2")])
def test_binary_or_undecodable_files_are_refused(tmp_path, capsys, payload, command):
    path = tmp_path / "notes.txt"
    path.write_bytes(payload)
    status, _, err = _cli(capsys, command[0], str(path), *command[1:], "--out",
                          str(tmp_path / "o"), "-q")
    _one_line_error(status, err, "notes.txt")
    assert "not a text file" in err or "not UTF-8 text" in err
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize("row,expected", [
    ("1.0,,3.0", "line 3, column 2 ('b'): a missing value"),
    ("1.0,nan,3.0", "line 3, column 2 ('b'): a missing value ('nan')"),
    ("1.0,1e999,3.0", "line 3, column 2 ('b'): '1e999' is not a finite number"),
    ("1.0,2.0,inf", "line 3, column 3 ('c'): 'inf' is not a finite number"),
    ("1.0,2.0", "line 3 has 2 values; expected 3"),
])
def test_points_with_missing_or_infinite_values_name_line_and_column(tmp_path, capsys, row,
                                                                      expected):
    (tmp_path / "p.csv").write_text(f"a,b,c\n0,1,2\n{row}\n4,5,6\n")
    status, _, err = _cli(capsys, "cluster", str(tmp_path / "p.csv"), "--model", "gmm", "--out",
                          str(tmp_path / "o"), "-q")
    _one_line_error(status, err, expected)


@pytest.mark.parametrize("array,expected", [
    (np.array([1 + 1j, 2, 3]), "holds complex128 values; points must be real numbers"),
    (np.array([[0.0, 1.0], [np.nan, 2.0], [3.0, 4.0]]),
     "row 2, column 1: nan is not a finite number (1 such value in all)"),
])
def test_npy_points_that_are_not_finite_real_numbers_are_named(tmp_path, capsys, array,
                                                                expected):
    np.save(tmp_path / "p.npy", array)
    status, _, err = _cli(capsys, "cluster", str(tmp_path / "p.npy"), "--model", "gmm", "--out",
                          str(tmp_path / "o"), "-q")
    _one_line_error(status, err, expected)


@pytest.mark.parametrize("name", ["P.CSV", "P.NPY", "p.Tsv"])
def test_points_files_with_upper_case_extensions_are_read(tmp_path, capsys, name):
    """Windows and Excel write .CSV: the extension is matched whatever its case."""
    X, _ = mb.datasets.make_gaussian_mixture(20, 2, 2, random_state=0)
    if name.lower().endswith(".npy"):
        with open(tmp_path / name, "wb") as handle:
            np.save(handle, X)
    else:
        np.savetxt(tmp_path / name, X, delimiter="," if "csv" in name.lower() else "\t")
    status, out, err = _cli(capsys, "cluster", str(tmp_path / name), "--model", "gmm", "-k", "2",
                            "--out", str(tmp_path / "o"), "-q")
    assert status == 0, err
    assert "20 points x 2 features" in out


@pytest.mark.parametrize("name", ["DOCS.TXT", "Docs.Csv"])
def test_document_files_with_upper_case_extensions_are_read(tmp_path, capsys, name):
    """As for points: `mixbayes cluster up.CSV --model dmm` said 'cannot tell the format'."""
    lines = ["the cat sat on the mat", "the dog ate the bone", "cats and dogs play",
             "a mat and a bone"]
    text = ("text\n" if "csv" in name.lower() else "") + "\n".join(lines) + "\n"
    (tmp_path / name).write_text(text)
    status, out, err = _cli(capsys, "cluster", str(tmp_path / name), "--model", "dmm", "-k", "2",
                            "--out", str(tmp_path / "o"), "-q")
    assert status == 0, err
    assert out.startswith("4 documents x ")
    assert mb.read_corpus(str(tmp_path / name)).n_documents == 4


def test_numeric_tables_given_to_document_models_suggest_gmm(tmp_path, capsys):
    X, _ = mb.datasets.make_gaussian_mixture(40, 2, 2, random_state=0)
    np.savetxt(tmp_path / "p.csv", X, delimiter=",", header="x,y", comments="")
    np.save(tmp_path / "p.npy", X)
    for name in ("p.csv", "p.npy"):
        for model in ("dmm", "hdp"):
            status, _, err = _cli(capsys, "cluster", str(tmp_path / name), "--model", model,
                                  "--out", str(tmp_path / "o"), "-q")
            _one_line_error(status, err, "--model gmm", "--groups")


def test_stop_words_dropped_from_raw_text_by_default(tmp_path, capsys, raw_text):
    status, out, err = _cli(capsys, "cluster", str(raw_text), "-k", "2", "--n-init", "1",
                            "--out", str(tmp_path / "a"), "-q")
    assert status == 0, err
    clusters = json.loads((tmp_path / "a" / "clusters.json").read_text())
    words = {w for c in clusters for w in c["top_words"]}
    assert {"heart", "wing"} <= words and not words & {"the", "and", "of"}
    summary = json.loads((tmp_path / "a" / "summary.json").read_text())
    assert summary["settings"]["stop_words"] == "english"
    # every setting the run used is recorded
    assert {"inference", "n_init", "min_df", "text_column", "seed", "n_components"} <= set(
        summary["settings"])
    assert "covariance_type" not in summary["settings"]
    # none keeps them (but for those in more than half the documents, --max-df's default
    # for raw text; 1.0 keeps those too); a file of words drops just those; --min-df drops
    # rare terms
    status, out, err = _cli(capsys, "cluster", str(raw_text), "-k", "2", "--n-init", "1",
                            "--stop-words", "none", "--out", str(tmp_path / "b"), "-q")
    assert status == 0, err
    ceiling = json.loads((tmp_path / "b" / "summary.json").read_text())
    assert "the" not in out.split() and ceiling["n_terms"] > summary["n_terms"]
    status, out, err = _cli(capsys, "cluster", str(raw_text), "-k", "2", "--n-init", "1",
                            "--stop-words", "none", "--max-df", "1.0", "--out",
                            str(tmp_path / "b2"), "-q")
    assert status == 0, err
    kept = json.loads((tmp_path / "b2" / "summary.json").read_text())
    assert "the" in out.split() and kept["n_terms"] > ceiling["n_terms"]
    assert kept["settings"]["max_df"] == 1.0
    (tmp_path / "stop.txt").write_text("the\nand\nof\nheart\n")
    status, out, err = _cli(capsys, "cluster", str(raw_text), "-k", "2", "--n-init", "1",
                            "--stop-words", str(tmp_path / "stop.txt"), "--min-df", "6",
                            "--out", str(tmp_path / "c"), "-q")
    assert status == 0, err
    custom = json.loads((tmp_path / "c" / "clusters.json").read_text())
    words = {w for c in custom for w in c["top_words"]}
    assert words and not words & {"the", "and", "of", "heart", "twice", "counted"}
    assert "blood" in words  # not in the file, in 15 of the 30 documents


def test_top_words_printed_the_same_way_for_clusters_and_topics(tmp_path, capsys, raw_text):
    status, out, err = _cli(capsys, "cluster", str(raw_text), "-k", "2", "--n-init", "1",
                            "--top", "4", "--out", str(tmp_path / "c"), "-q")
    assert status == 0, err
    clusters = json.loads((tmp_path / "c" / "clusters.json").read_text())
    for c in clusters:
        assert f"): {' '.join(c['top_words'])}" in out
    status, out, err = _cli(capsys, "topics", str(raw_text), "-k", "2", "--top", "4",
                            "--seed", "3", "--labels", str(_labels(tmp_path)), "--out",
                            str(tmp_path / "t"), "-q")
    assert status == 0, err
    topics = json.loads((tmp_path / "t" / "topics.json").read_text())
    for t in topics["topics"]:
        assert f"): {' '.join(t['top_words'])}" in out  # by probability, as for clusters
    assert topics["settings"]["seed"] == 3 and topics["scores"]["nmi"] > 0.9
    assert "against known labels" in out


def _labels(tmp_path):
    path = tmp_path / "labels.txt"
    path.write_text("\n".join(["med", "med", "med", "air", "air", "air"] * 5) + "\n")
    return path


def test_print_groups_says_how_many_are_not_shown(capsys):
    entries = [dict(cluster=k, sort=100 - k, top_words=[f"w{k}"]) for k in range(25)]
    entries += [dict(cluster=k, sort=0, top_words=[]) for k in range(25, 28)]
    print_groups(entries, "cluster", lambda e: f"{e['sort']} docs", sys.stdout, "clusters.json")
    out = capsys.readouterr().out
    assert out.count("\n") == 22 and "cluster  19" in out and "cluster  20" not in out
    assert "and 5 smaller clusters not shown (all are in clusters.json)" in out
    assert out.splitlines()[-1] == "  (3 empty clusters: 25, 26, 27)"  # one line, not three


def test_reused_out_folder_is_refused_or_replaced_whole(tmp_path, capsys, raw_text):
    out = tmp_path / "o"
    out.mkdir()
    (out / "scatter.png").write_bytes(b"an earlier gmm run's figure")
    (out / "mine.txt").write_text("the user's own file")
    status, _, err = _cli(capsys, "cluster", str(raw_text), "-k", "2", "--out", str(out), "-q")
    _one_line_error(status, err, "already holds files", "--force")
    status, _, err = _cli(capsys, "cluster", str(raw_text), "-k", "2", "--n-init", "1",
                          "--out", str(out), "--force", "-q")
    assert status == 0, err
    names = set(os.listdir(out))
    assert "scatter.png" not in names and {"assignments.csv", "summary.json"} <= names
    assert (out / "mine.txt").read_text() == "the user's own file"
    before = {name: (out / name).read_bytes() for name in names}
    # a run that fails half-way leaves the folder as it was, and no staging folder behind
    (tmp_path / "bad.txt").write_bytes(b"\x00\x01")
    status, _, err = _cli(capsys, "cluster", str(tmp_path / "bad.txt"), "--out", str(out),
                          "--force", "-q")
    assert status == 1
    assert {name: (out / name).read_bytes() for name in os.listdir(out)} == before
    assert not [p for p in os.listdir(tmp_path) if p.startswith(".mixbayes-partial")]


def test_closed_pipe_ends_quietly(tmp_path, raw_text):
    read, write = os.pipe()
    os.close(read)  # nobody reads: the first write fails with EPIPE, as after `| head` exits
    try:
        result = subprocess.run(
            [sys.executable, "-m", "mixbayes.cli", "cluster", str(raw_text), "-k", "2",
             "--n-init", "1", "--out", str(tmp_path / "o"), "-q"],
            stdout=write, stderr=subprocess.PIPE, text=True, timeout=300)
    finally:
        os.close(write)
    assert result.returncode == 0 and result.stderr == ""
    assert (tmp_path / "o" / "summary.json").exists()


def test_selection_prints_a_table_and_notes_still_rising(capsys):
    corpus, _ = mb.datasets.make_dmm_corpus(120, 40, 3, mean_length=40, random_state=2)
    sel = mb.select_n_clusters(corpus.counts, [1, 2], verbose=0)
    text = str(sel)
    assert "np.float64" not in text and text.splitlines()[0].split()[:3] == ["k", "elbo", "score"]
    # a range that stops below the truth: both curves still climb, and the notes say so
    assert any("still rising" in note for note in sel.notes) or any(
        "top of the range" in note for note in sel.notes)
    sel = mb.select_n_clusters(corpus.counts, range(1, 7), verbose=0)
    assert sel.best_k == 3 and sel.best_k_heldout == 3
    assert not any("rising" in note or "top of the range" in note for note in sel.notes)


def test_gmm_fits_a_table_with_duplicated_and_constant_columns(tmp_path, capsys):
    """The table shape that raised numpy's LinAlgError: a duplicated column and a constant
    one. It fits, and --reg-covar reaches the model."""
    X, truth = mb.datasets.make_gaussian_mixture(150, 2, 3, random_state=5)
    table = np.column_stack([X, X[:, 0], np.full(len(X), 2.5)])
    np.savetxt(tmp_path / "t.csv", table, delimiter=",", header="a,b,a_again,const",
               comments="")
    np.savetxt(tmp_path / "gold.txt", truth.labels, fmt="%d")
    status, out, err = _cli(capsys, "cluster", str(tmp_path / "t.csv"), "--model", "gmm",
                            "-k", "6", "--reg-covar", "1e-4", "--labels",
                            str(tmp_path / "gold.txt"), "--out", str(tmp_path / "o"), "-q")
    assert status == 0, err
    summary = json.loads((tmp_path / "o" / "summary.json").read_text())
    assert summary["settings"]["reg_covar"] == 1e-4 and summary["scores"]["ari"] > 0.9
    model = mb.load(tmp_path / "o" / "model.npz")
    assert model.reg_covar == 1e-4


def test_gmm_merge_moves_reach_the_model_and_join_a_split_cluster(tmp_path, capsys):
    """Three clusters that the default's start leaves as five components; --merge-moves
    (gmm only) joins them to three."""
    X, truth = mb.datasets.make_gaussian_mixture(150, 3, 3, random_state=10)
    np.savetxt(tmp_path / "p.csv", X, delimiter=",", header="a,b,c", comments="")
    counts = {}
    for flags in ([], ["--merge-moves"]):
        out = tmp_path / ("merged" if flags else "plain")
        status, _, err = _cli(capsys, "cluster", str(tmp_path / "p.csv"), "--model", "gmm",
                              *flags, "--out", str(out), "-q")
        assert status == 0, err
        model = mb.load(out / "model.npz")
        assert model.merge_moves == bool(flags)
        counts[bool(flags)] = model.n_effective_components_
    assert counts == {False: 5, True: 3}
    status, _, err = _cli(capsys, "cluster", str(tmp_path / "p.csv"), "--model", "tree",
                          "--merge-moves", "--out", str(tmp_path / "t"), "-q")
    assert status != 0 and "--merge-moves applies to --model gmm" in err


_FLAG_VALUES = {
    "--model": ["dmm", "gmm", "hdp", "lda"], "-k": ["0", "1", "2", "3", "-1", "x", "1e3"],
    "--select": ["1:3", "2:2", "3:1", "2:4:0", "a:b", "2:3:1"], "--n-init": ["1", "0", "two"],
    "--inference": ["vb", "gibbs", "em"], "--covariance-type": ["diag", "tied"],
    "--reg-covar": ["0", "1e-3", "-1", "nan"], "--n-iter": ["3", "0"], "--gamma0": ["1", "-2"],
    "--alpha0": ["0.5", "inf"], "--stop-words": ["none", "english", "nofile.txt"],
    "--min-df": ["1", "2", "0", "0.5", "1.5"], "--top": ["3", "0"], "--seed": ["1", "x"],
    "--text-column": ["text", "body"], "--labels": ["labels.txt", "missing.txt"],
    "--groups": ["labels.txt"],
}


def test_cli_arguments_fuzzed_never_raise(tmp_path_factory):
    """Random command lines over every flag (good and bad values, in any order) end in exit
    status 0, 1 or 2, with one error line for 1 - never an exception out of ``main``."""
    from contextlib import redirect_stderr, redirect_stdout
    from io import StringIO

    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st

    folder = tmp_path_factory.mktemp("fuzz")
    (folder / "docs.txt").write_text("\n".join(TEXTS[:12]) + "\n")
    (folder / "labels.txt").write_text("\n".join(["a", "b"] * 6) + "\n")
    np.savetxt(folder / "points.csv", np.random.default_rng(0).normal(size=(12, 2)),
               delimiter=",")
    flags = st.sampled_from(sorted(_FLAG_VALUES)).flatmap(
        lambda flag: st.tuples(st.just(flag), st.sampled_from(_FLAG_VALUES[flag])))

    @settings(max_examples=40, deadline=None, derandomize=True, database=None,
              suppress_health_check=list(HealthCheck))
    @given(command=st.sampled_from(["cluster", "topics"]),
           source=st.sampled_from(["docs.txt", "points.csv", "missing.mtx"]),
           options=st.lists(flags, max_size=4), run=st.integers(0, 10**9))
    def check(command, source, options, run):
        argv = [command, str(folder / source), "--out", str(folder / f"out{run}"), "-q"]
        for flag, value in options:
            value = str(folder / value) if value.endswith(".txt") else value
            argv += [flag, value]
        err = StringIO()
        with redirect_stdout(StringIO()), redirect_stderr(err), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                status = main(argv)
            except SystemExit as stop:  # argparse: usage errors
                status = stop.code
        assert status in (0, 1, 2), (argv, status)
        if status == 1:
            text = err.getvalue()
            assert text.startswith("mixbayes: error: ") and text.count("\n") == 1, (argv, text)

    check()


def test_counts_and_nouns_agree_in_summaries_and_messages(tmp_path, capsys, raw_text):
    """One feature, one cluster, one component: no "1 features" in what a user reads."""
    from mixbayes._validation import plural

    assert [plural(1, "feature"), plural(0, "feature"), plural(2, "feature")] == [
        "1 feature", "0 features", "2 features"]
    assert plural(1, "doc", spec=">5") == "    1 doc"
    (tmp_path / "x.csv").write_text("x\n" + "".join(f"{v}\n" for v in range(20)))
    status, out, err = _cli(capsys, "cluster", str(tmp_path / "x.csv"), "--model", "gmm", "-k",
                            "1", "--out", str(tmp_path / "g"), "-q")
    assert status == 0, err
    assert out.startswith("20 points x 1 feature -> 1 effective component of 1 in "), out
    status, out, err = _cli(capsys, "cluster", str(raw_text), "-k", "1", "--n-init", "1",
                            "--out", str(tmp_path / "d"), "-q")
    assert status == 0, err
    assert " -> 1 cluster in " in out and " iteration" in out, out
    with pytest.raises(TypeError, match="cannot save an object of type object"):
        mb.save(object(), tmp_path / "m.npz")


def test_python_dash_m_mixbayes_runs_the_command(monkeypatch, capsys):
    """``python -m mixbayes`` works where the ``mixbayes`` script is not on PATH."""
    import runpy

    monkeypatch.setattr(sys, "argv", ["mixbayes", "--version"])
    with pytest.raises(SystemExit) as stop:
        runpy.run_module("mixbayes", run_name="__main__")
    assert stop.value.code == 0 and capsys.readouterr().out.strip() == f"mixbayes {mb.__version__}"


def test_semicolon_csv_and_labels_with_a_header(tmp_path, capsys):
    """European Excel writes ``;``-separated files; labels files often carry a header row."""
    texts = [t.replace('"', "") for t in TEXTS]
    (tmp_path / "d.csv").write_text("id;text\n" + "".join(
        f'{i};"{t}"\n' for i, t in enumerate(texts)), encoding="utf-8")
    gold = ["med", "med", "med", "air", "air", "air"] * 5
    (tmp_path / "gold.csv").write_text("id,label\n" + "".join(
        f"{i},{g}\n" for i, g in enumerate(gold)))
    (tmp_path / "gold.txt").write_text("label\n" + "\n".join(gold) + "\n")
    for labels in ("gold.csv", "gold.txt"):
        status, out, err = _cli(capsys, "cluster", str(tmp_path / "d.csv"), "-k", "2",
                                "--n-init", "1", "--labels", str(tmp_path / labels), "--out",
                                str(tmp_path / labels[-3:]), "-q")
        assert status == 0, err
        summary = json.loads((tmp_path / labels[-3:] / "summary.json").read_text())
        assert summary["n_documents"] == 30 and summary["scores"]["nmi"] > 0.99
    (tmp_path / "short.txt").write_text("\n".join(gold[:29]) + "\n")
    status, _, err = _cli(capsys, "topics", str(tmp_path / "d.csv"), "-k", "2", "--labels",
                          str(tmp_path / "short.txt"), "--out", str(tmp_path / "t"), "-q")
    _one_line_error(status, err, "--labels: ", "short.txt' holds 29 entries but the input has "
                    "30 documents")


def test_points_tables_any_delimiter_and_features_named_by_the_header(tmp_path, capsys):
    X, truth = mb.datasets.make_gaussian_mixture(60, 2, 2, random_state=1)
    rows = [f"{a:.4f};{b:.4f}".replace(".", ",") for a, b in X]  # decimal commas
    (tmp_path / "semi.csv").write_text("height;weight\n" + "\n".join(rows) + "\n")
    (tmp_path / "pipe.csv").write_text("\n".join(f"{a}|{b}" for a, b in X) + "\n")
    np.savetxt(tmp_path / "gold.txt", truth.labels, fmt="%d", header="label", comments="")
    for name, features in (("semi.csv", ["height", "weight"]), ("pipe.csv", ["x1", "x2"])):
        status, out, err = _cli(capsys, "cluster", str(tmp_path / name), "--model", "gmm", "-k",
                                "4", "--n-init", "1", "--labels", str(tmp_path / "gold.txt"),
                                "--out", str(tmp_path / name[:4]), "-q")
        assert status == 0, err
        summary = json.loads((tmp_path / name[:4] / "summary.json").read_text())
        clusters = json.loads((tmp_path / name[:4] / "clusters.json").read_text())
        assert summary["features"] == features and summary["scores"]["ari"] > 0.9
        used = max(clusters, key=lambda c: c["size"])
        assert list(used["mean"]) == features
        assert f"mean ({features[0]} " in out
    # the same table given to a document model is pointed to --model gmm
    status, _, err = _cli(capsys, "cluster", str(tmp_path / "semi.csv"), "--out",
                          str(tmp_path / "o"), "-q")
    _one_line_error(status, err, "table of numbers", "--model gmm")
    # and so is a table of numbers with a text class column (iris as R and UCI ship it)
    (tmp_path / "iris.csv").write_text("sepal,petal,width,species\n5.1,3.5,1.4,setosa\n"
                                       "6.3,3.3,6.0,virginica\n")
    status, _, err = _cli(capsys, "cluster", str(tmp_path / "iris.csv"), "--out",
                          str(tmp_path / "o"), "-q")
    _one_line_error(status, err, "table of numbers", "--model gmm or --model tree",
                    "--label-column")


def test_row_index_columns_and_utf16_tables_from_pandas_r_and_excel(tmp_path, capsys):
    """pandas' ``to_csv`` and R's ``write.csv`` write the row numbers as an unnamed first
    column, which must not become a feature; Excel's "Unicode text" is UTF-16 with tabs."""
    X, truth = mb.datasets.make_gaussian_mixture(60, 2, 2, random_state=4)
    files = {
        "pandas.csv": ",a,b\n" + "".join(f"{i},{x},{y}\n" for i, (x, y) in enumerate(X)),
        "r.csv": '"","a","b"\n' + "".join(f'"{i + 1}",{x},{y}\n' for i, (x, y) in enumerate(X)),
    }
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    (tmp_path / "excel.txt").write_text("a\tb\n" + "".join(f"{x}\t{y}\n" for x, y in X),
                                        encoding="utf-16")
    for name in ("pandas.csv", "r.csv", "excel.txt"):
        status, out, err = _cli(capsys, "cluster", str(tmp_path / name), "--model", "gmm",
                                "-k", "3", "--n-init", "1", "--out", str(tmp_path / name[:2]),
                                "-q")
        assert status == 0, err
        summary = json.loads((tmp_path / name[:2] / "summary.json").read_text())
        assert summary["features"] == ["a", "b"], name
        assert ("row index" in out) == (name != "excel.txt")
        assert len(summary["notes"]) == (name != "excel.txt")
        labels = np.loadtxt(tmp_path / name[:2] / "assignments.csv", delimiter=",", skiprows=1,
                            usecols=1)
        assert mb.metrics.ari(truth.labels, labels) > 0.9


def _messages(tmp_path):
    """A CSV of 40 e-mails with RFC 5322 headers: 20 about rockets, 20 about baking."""
    import csv

    rng = np.random.default_rng(0)
    topics = (["rocket", "orbit", "launch", "fuel", "engine"],
              ["flour", "oven", "bread", "butter", "dough"])
    path = tmp_path / "mail.csv"
    with open(path, "w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["text"])
        for i in range(40):
            words = " ".join(rng.choice(topics[i % 2], 12))
            writer.writerow([f"From: user{i}@university.edu (User)\nSubject: Re: note {i}\n"
                             f"Organization: University\nLines: 4\n\nIn article <{i}@host.com>, "
                             f"x@host.com writes:\n{words} 1993 see www.example.com\n"])
    return path


def test_raw_messages_lose_headers_addresses_and_common_words(tmp_path, capsys):
    path = _messages(tmp_path)
    status, out, err = _cli(capsys, "cluster", str(path), "-k", "2", "--n-init", "1",
                            "--out", str(tmp_path / "a"), "-q")
    assert status == 0, err
    clusters = json.loads((tmp_path / "a" / "clusters.json").read_text())
    words = {w for c in clusters for w in c["top_words"]}
    assert words <= {"rocket", "orbit", "launch", "fuel", "engine", "flour", "oven", "bread",
                     "butter", "dough", "note"}
    summary = json.loads((tmp_path / "a" / "summary.json").read_text())
    assert summary["n_terms"] == 10  # "note" is in every subject: above --max-df's 0.5
    # --max-features keeps the most widely used; --max-df 1.0 keeps "note"
    status, out, err = _cli(capsys, "cluster", str(path), "-k", "2", "--n-init", "1",
                            "--max-df", "1.0", "--max-features", "3", "--out",
                            str(tmp_path / "b"), "-q")
    assert status == 0, err
    capped = json.loads((tmp_path / "b" / "summary.json").read_text())
    assert capped["n_terms"] == 3 and capped["settings"]["max_features"] == 3
    assert "note" in {w for c in json.loads((tmp_path / "b" / "clusters.json").read_text())
                      for w in c["top_words"]}


@pytest.mark.parametrize("flag,value,fragment", [
    ("--max-df", "0", "--max-df"), ("--max-df", "1.5", "--max-df"),
    ("--max-features", "0", "--max-features"), ("--max-df", "half", "--max-df")])
def test_bad_word_filter_values_are_one_line_errors(tmp_path, capsys, flag, value, fragment):
    path = _messages(tmp_path)
    with pytest.raises(SystemExit) as stop:
        main(["cluster", str(path), flag, value, "--out", str(tmp_path / "o"), "-q"])
    assert stop.value.code == 2
    assert fragment in capsys.readouterr().err


def test_topics_read_the_labels_of_a_documents_csv(tmp_path, capsys):
    """``topics`` takes ``--label-column`` as ``cluster`` does (it was an unrecognised
    argument), and refuses it beside ``--labels``."""
    lines = ["text,label"] + [f"{'rocket orbit launch fuel' if i % 2 else 'flour oven bread'} "
                              f"{i},{'space' if i % 2 else 'baking'}" for i in range(30)]
    (tmp_path / "docs.csv").write_text("\n".join(lines) + "\n")
    status, out, err = _cli(capsys, "topics", str(tmp_path / "docs.csv"), "-k", "2",
                            "--label-column", "label", "--out", str(tmp_path / "t"), "-q")
    assert status == 0, err
    summary = json.loads((tmp_path / "t" / "summary.json").read_text())
    assert summary["settings"]["label_column"] == "label"
    assert summary["scores"]["nmi"] == pytest.approx(1.0)
    (tmp_path / "labels.txt").write_text("\n".join(["a"] * 30) + "\n")
    status, _, err = _cli(capsys, "topics", str(tmp_path / "docs.csv"), "-k", "2",
                          "--label-column", "label", "--labels", str(tmp_path / "labels.txt"),
                          "--out", str(tmp_path / "u"), "-q")
    _one_line_error(status, err, "--labels and --label-column")


@pytest.mark.parametrize("command", [["cluster", "--model", "dmm"], ["topics"]])
def test_labels_beside_the_input_are_announced_and_recorded(tmp_path, capsys, raw_text,
                                                            command):
    """A labels.txt beside the input is used without --labels: the run says where its
    labels came from, and summary.json records the file (it recorded null)."""
    (tmp_path / "labels.txt").write_text(
        "\n".join((["medicine"] * 3 + ["aircraft"] * 3) * 5) + "\n")
    out = tmp_path / "out"
    status, stdout, stderr = _cli(capsys, command[0], str(raw_text), *command[1:], "-k", "2",
                                  "--out", str(out))
    assert status == 0, stderr
    beside = str(tmp_path / "labels.txt")
    assert f"note: labels read from {beside}" in stdout + stderr
    assert "NMI" in stdout
    summary = json.loads((out / "summary.json").read_text())
    assert summary["settings"]["labels"] == beside


@pytest.mark.parametrize("command", [["cluster", "--model", "dmm"], ["topics"]])
def test_k_above_the_documents_speaks_cli_words(tmp_path, capsys, raw_text, command):
    status, _, err = _cli(capsys, command[0], str(raw_text), *command[1:], "-k", "100")
    _one_line_error(status, err, "-k must be an integer in [1, 30]",
                    "(at most the number of documents or points fitted, 30); got 100.")
    assert "n_samples" not in err


def test_prose_named_csv_is_read_one_document_per_line(tmp_path, capsys, raw_text):
    """A text file named .csv (commas in its prose, no header) is read by its content, as a
    gzip file under another name is, with a note; a real table keeps its column error."""
    prose = tmp_path / "notes.csv"
    prose.write_text(raw_text.read_text(encoding="utf-8"), encoding="utf-8")
    status, out, err = _cli(capsys, "cluster", str(prose), "--model", "dmm", "-k", "2",
                            "--out", str(tmp_path / "o"))
    assert status == 0, err
    assert out.splitlines()[0] == (
        "note: notes.csv does not look like a table (its lines split at ',' into 1 to 2 "
        "fields, not the same number on every line); read as one document per line")
    assert f"{len(TEXTS)} documents x " in out
    # predict reads it as cluster did: the same documents, in the clusters the fit gave them
    status, out, err = _cli(capsys, "predict", str(tmp_path / "o"), str(prose), "--out",
                            str(tmp_path / "p"))
    assert status == 0, err
    assert "notes.csv does not look like a table" in out.splitlines()[0]
    fitted = np.loadtxt(tmp_path / "o" / "assignments.csv", delimiter=",", skiprows=1,
                        usecols=1)
    predicted = np.loadtxt(tmp_path / "p" / "predictions.csv", delimiter=",", skiprows=1,
                           usecols=1)
    np.testing.assert_array_equal(predicted, fitted)
    (tmp_path / "t.csv").write_text("title,body\nheart,the blood of the heart\n"
                                    "wing,the lift of a wing\n")
    status, _, err = _cli(capsys, "cluster", str(tmp_path / "t.csv"), "--model", "dmm",
                          "--out", str(tmp_path / "o2"), "-q")
    _one_line_error(status, err, "--text-column='text' is not a column", "['title', 'body']")
    status, _, err = _cli(capsys, "predict", str(tmp_path / "o"), str(tmp_path / "t.csv"),
                          "--out", str(tmp_path / "p2"))
    _one_line_error(status, err, "is not a column", "['title', 'body']")


def test_report_corpus_of_points_for_a_model_of_documents(tmp_path, capsys, raw_text):
    assert _cli(capsys, "cluster", str(raw_text), "--model", "dmm", "-k", "2", "--out",
                str(tmp_path / "o"), "-q")[0] == 0
    np.savetxt(tmp_path / "points.csv", np.arange(12.0).reshape(6, 2), delimiter=",",
               header="x,y", comments="")
    status, _, err = _cli(capsys, "report", str(tmp_path / "o" / "model.npz"), "--corpus",
                          str(tmp_path / "points.csv"), "--out", str(tmp_path / "r.html"))
    _one_line_error(status, err, "points.csv' is a table of numbers (points); a "
                    "DirichletMultinomialMixture was fitted to documents: give the documents it "
                    "was fitted to (their text, or counts).")


@pytest.mark.parametrize("command", [("cluster", "--model", "dmm"), ("cluster", "--model", "hdp"),
                                     ("topics", "-k", "2")])
def test_single_column_numbers_given_to_document_models(tmp_path, capsys, command):
    (tmp_path / "one.csv").write_text("w\n3\n1\n4\n1\n5\n")
    status, _, err = _cli(capsys, command[0], str(tmp_path / "one.csv"), *command[1:], "--out",
                          str(tmp_path / "o"), "-q")
    _one_line_error(status, err, "is a table of numbers (1 column) with no 'text' column of "
                    "text: documents in a CSV are a column of text, and counts are read from "
                    ".mtx (with vocab.txt) or UCI docword files; cluster points with --model gmm")
    assert _cli(capsys, "cluster", str(tmp_path / "one.csv"), "--model", "gmm", "-k", "2",
                "--out", str(tmp_path / "g"), "-q")[0] == 0


def test_select_above_the_documents_fitted_says_how_many_are_held_out(tmp_path, capsys):
    docs = tmp_path / "docs.txt"
    docs.write_text("\n".join(TEXTS * 2) + "\n", encoding="utf-8")
    status, _, err = _cli(capsys, "cluster", str(docs), "--model", "dmm", "--select", "2:58",
                          "--out", str(tmp_path / "o"), "-q")
    _one_line_error(status, err, "--select must lie in [1, 54] (the documents fitted: 6 of the "
                    "60 (10%) are held out to score each K by held-out likelihood); got 2..58.")


def test_cluster_sizes_spell_out_documents_for_dmm_and_hdp(tmp_path, capsys, raw_text):
    """Both models of documents print "15 documents" (the HDP adds its tokens), never "docs"."""
    import re

    status, out, err = _cli(capsys, "cluster", str(raw_text), "--model", "dmm", "-k", "2",
                            "--out", str(tmp_path / "d"), "-q")
    assert status == 0, err
    dmm = re.findall(r"^  cluster +\d+ \((.*?)\):", out, re.M)
    assert dmm == ["   15 documents", "   15 documents"], out
    status, out, err = _cli(capsys, "cluster", str(raw_text), "--model", "hdp", "--n-iter", "30",
                            "--out", str(tmp_path / "h"), "-q")
    assert status == 0, err
    hdp = re.findall(r"^  cluster +\d+ \((.*?)\):", out, re.M)
    assert hdp and all(re.fullmatch(r" +\d+ documents?, +\d+ tokens?", h) for h in hdp), out
    assert "doc," not in out and "docs" not in out


def test_a_small_table_of_documents_keeps_its_ids_and_lowers_the_default_k(tmp_path, capsys):
    """A CSV of 7 documents (one empty) with its own id column: the default -k (10) is lowered
    to the 6 documents with words, with a note; assignments.csv carries the table's ids; the
    headline counts the clusters that hold documents; an explicit -k above them is an error
    that says one document was left out."""
    table = tmp_path / "docs.csv"
    table.write_text("id,text,label\n" + "".join(
        f"{i},{text},{label}\n" for i, (text, label) in enumerate(
            [("the cat sat on the mat", "a"), ("dogs bark at cats", "a"),
             ("stock markets fell", "b"), ("the bank raised rates", "b"), ("", "b"),
             ("cats and dogs play", "a"), ("inflation and rates", "b")], start=11)),
        encoding="utf-8")
    out = tmp_path / "o"
    status, stdout, stderr = _cli(capsys, "cluster", str(table), "--label-column", "label",
                                  "--out", str(out))
    assert status == 0, stderr
    assert ("note: -k lowered from its default 10 to the number of documents with words (6, "
            "after 1 empty document left out)") in stdout
    summary = json.loads((out / "summary.json").read_text())
    occupied = len({row.split(",")[1] for row in (out / "assignments.csv").read_text()
                    .splitlines()[1:]})
    assert summary["n_components"] == 6 and summary["notes"][0].startswith("-k lowered")
    headline = next(line for line in stdout.splitlines() if " -> " in line)
    assert headline.startswith(f"6 documents x 14 terms -> {occupied} cluster")
    assert (occupied == 6) == ("(of K = 6 fitted)" not in headline)
    ids = [row.split(",")[0] for row in (out / "assignments.csv").read_text().splitlines()[1:]]
    assert ids == ["11", "12", "13", "14", "16", "17"]  # the table's, the empty 15 left out
    for command in ("cluster", "topics"):  # the same words (topics' said nothing of it)
        status, _, err = _cli(capsys, command, str(table), "-k", "9", "--out",
                              str(tmp_path / command))
        _one_line_error(status, err, "-k must be an integer in [1, 6]",
                        "(at most the number of documents or points fitted, 6, after 1 empty "
                        "document left out); got 9.")


def test_a_folder_of_class_subfolders_is_named_and_its_subfolders_are_not_read_silently(
        tmp_path, capsys):
    """A folder per class (20 Newsgroups' layout: docs/space/*.txt, docs/food/*.txt) was
    refused as holding no documents, with no word of the subfolders, and a subfolder beside
    .txt files was skipped without a note (a new user's tryout). The error and the note now
    name them."""
    folder = tmp_path / "docs"
    for name, text in (("space", "rockets fly to orbit"), ("food", "bread and butter")):
        (folder / name).mkdir(parents=True)
        (folder / name / "a.txt").write_text(text + "\n")
    with pytest.raises(ValueError, match=r"holds no .mtx, docword.\* or .txt documents directly "
                                         r"in it; its 2 subfolders \(food, space\) are not "
                                         r"read: give one of them"):
        mb.read_corpus(folder)
    status, out, err = _cli(capsys, "cluster", str(folder), "-k", "2",
                            "--out", str(tmp_path / "o"))
    assert status == 1 and "subfolders (food, space) are not read" in err
    for i, text in enumerate(["the cat sat on the mat", "the dog ate the bone", "cats play"]):
        (folder / f"{i}.txt").write_text(text + "\n")
    status, out, err = _cli(capsys, "cluster", str(folder), "-k", "2",
                            "--out", str(tmp_path / "o2"))
    assert status == 0, err
    assert ("note: 3 documents read from the folder's .txt files; 2 subfolders not read "
            "(food, space): only .txt files directly in a folder are documents") in out + err


def test_a_folder_of_documents_reads_every_txt_and_names_what_it_left_out(tmp_path, capsys):
    """A folder's .TXT files were skipped (the glob was case-sensitive) and a .csv or .md
    beside the .txt files was left out without a word: the first are read now, the others
    named in a note."""
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "a.txt").write_text("the cat sat on the mat\n")
    (folder / "B.TXT").write_text("the dog ate the bone\n")
    (folder / "c.txt").write_text("cats and dogs play\n")
    (folder / "table.csv").write_text("x,y\n1,2\n")
    (folder / "README.md").write_text("# notes\n")
    assert mb.read_corpus(str(folder)).doc_ids.tolist() == ["B", "a", "c"]
    status, out, err = _cli(capsys, "cluster", str(folder), "--model", "dmm", "-k", "2",
                            "--out", str(tmp_path / "o"))
    assert status == 0, err
    assert ("note: 3 documents read from the folder's .txt files; 2 other files left out "
            "(README.md, table.csv)") in out + err
