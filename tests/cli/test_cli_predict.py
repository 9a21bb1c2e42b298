"""``mixbayes predict``, and the vocabulary every fitting command saves (which ``inspect`` and
``report`` read): a saved model applied to new documents or points equals the model in
process; what cannot be predicted is one clear error."""

import csv
import io
import json
import warnings

import numpy as np
import pytest

import mixbayes as mb
from mixbayes.corpus import raw_text_options
from _support.cli import run

TRAIN = [
    "The heart pumps blood; patients with heart disease and blood pressure.",
    "Blood pressure and heart rate of patients in the clinic.",
    "Patients: blood flow, heart valves and the pressure of the blood.",
    "The aircraft wing and the flow of air over the wing, at high speed.",
    "Wing design: the lift of an aircraft, and the drag of the air flow.",
    "Air speed over the wing of the aircraft and the lift it gives.",
] * 4
NEW = ["A zebra's heart and its blood pressure, zebra zebra", "The wing of a glider: lift, drag",
       "quux"]


def _rows(text):
    return list(csv.DictReader(io.StringIO(text)))


def _one_line_error(result, *fragments):
    assert result.returncode == 1, result
    assert result.stderr.startswith("mixbayes: error: ") and result.stderr.count("\n") == 1
    for fragment in fragments:
        assert fragment in result.stderr, (fragment, result.stderr)


@pytest.fixture(scope="module")
def fitted(tmp_path_factory):
    """A DMM and a topic model fitted by the command on raw text, with their folders."""
    folder = tmp_path_factory.mktemp("predict")
    (folder / "train.txt").write_text("\n".join(TRAIN) + "\n", encoding="utf-8")
    (folder / "new.txt").write_text("\n".join(NEW) + "\n", encoding="utf-8")
    for args in (["cluster", "train.txt", "-k", "2", "--out", "dmm", "-q", "--seed", "1"],
                 ["topics", "train.txt", "-k", "2", "--out", "topics", "-q"]):
        result = run(*args, cwd=folder)
        assert result.returncode == 0, result.stderr
    return folder


def _train_counts():
    """The training documents' counts as the fit read them, in process (the CLI's raw-text
    reading: English stop words and a document-frequency ceiling of one half)."""
    corpus = mb.Corpus.from_texts(TRAIN, **raw_text_options())
    return corpus.drop_terms(stop_words="english", max_df=0.5)


def test_predict_on_the_training_documents_equals_the_model_in_process(fitted):
    result = run("predict", "dmm/model.npz", "train.txt", "-o", "-", cwd=fitted)
    assert result.returncode == 0, result.stderr
    rows = _rows(result.stdout)
    model = mb.load(fitted / "dmm" / "model.npz")
    corpus = _train_counts()
    proba = model.predict_proba(corpus.counts)
    assert [int(r["cluster"]) for r in rows] == list(model.labels_) == list(proba.argmax(1))
    got = np.array([[float(r[f"p_cluster{k}"]) for k in range(2)] for r in rows])
    np.testing.assert_allclose(got, proba, atol=1e-6)
    np.testing.assert_array_equal([int(r["words"]) for r in rows],
                                  np.asarray(corpus.counts.sum(axis=1)).ravel())
    assert [r["id"] for r in rows] == [str(i) for i in range(len(TRAIN))]
    assert "predictions written to standard output" in result.stderr


def test_new_raw_text_with_unseen_words(fitted):
    result = run("predict", "dmm/model.npz", "new.txt", "--out", "pred", cwd=fitted)
    assert result.returncode == 0, result.stderr
    vocabulary = mb.persist.load_vocabulary(fitted / "dmm" / "model.npz")
    column = {term: j for j, term in enumerate(vocabulary.terms)}
    counts = np.zeros((3, len(vocabulary)), dtype=int)
    for word in ("heart", "blood", "pressure"):
        counts[0, column[word]] = 1
    for word in ("wing", "lift", "drag"):
        counts[1, column[word]] = 1
    expected = mb.load(fitted / "dmm" / "model.npz").predict_proba(counts)
    rows = _rows((fitted / "pred" / "predictions.csv").read_text())
    assert [int(r["words"]) for r in rows] == [3, 3, 0]
    assert [int(r["cluster"]) for r in rows] == list(expected.argmax(axis=1))
    np.testing.assert_allclose([float(r["probability"]) for r in rows], expected.max(axis=1),
                               atol=1e-6)
    # zebra x3 ("zebra's" is zebra), glider and quux are unknown; and, its, the, of are stop
    # words ("a" is no word: one letter)
    summary = json.loads((fitted / "pred" / "summary.json").read_text())
    assert (summary["known"], summary["stop"], summary["unknown"]) == (6, 4, 5)
    assert summary["unknown_terms"][0] == "zebra" and set(summary["unknown_terms"]) == {
        "zebra", "glider", "quux"}
    assert summary["empty"] == 1 and summary["model_class"] == "DirichletMultinomialMixture"
    assert ("dropped 4 stop words and 5 words outside it (zebra, glider, quux)"
            in result.stdout), result.stdout
    assert "1 document without a word of the vocabulary" in result.stdout


def test_topic_weights_equal_transform(fitted):
    result = run("predict", "topics/model.npz", "train.txt", "-o", "weights.csv", cwd=fitted)
    assert result.returncode == 0, result.stderr
    rows = _rows((fitted / "weights.csv").read_text())
    weights = mb.load(fitted / "topics" / "model.npz").transform(_train_counts().counts)
    got = np.array([[float(r["topic0"]), float(r["topic1"])] for r in rows])
    np.testing.assert_allclose(got, weights, atol=1e-5)
    assert [int(r["main_topic"]) for r in rows] == list(weights.argmax(axis=1))
    # the file exists now: refused without --force, replaced with it
    _one_line_error(run("predict", "topics/model.npz", "new.txt", "-o", "weights.csv",
                        cwd=fitted), "-o: 'weights.csv' already exists", "--force")
    assert run("predict", "topics/model.npz", "new.txt", "-o", "weights.csv", "--force",
               cwd=fitted).returncode == 0
    assert len(_rows((fitted / "weights.csv").read_text())) == 3


def test_a_document_without_known_words_has_no_main_topic(fitted):
    """Its weights are the prior's, all equal: argmax would call it topic 0."""
    result = run("predict", "topics/model.npz", "new.txt", "--out", "pred-topics", cwd=fitted)
    assert result.returncode == 0, result.stderr
    rows = _rows((fitted / "pred-topics" / "predictions.csv").read_text())
    assert [r["words"] for r in rows] == ["3", "3", "0"]
    assert float(rows[2]["topic0"]) == float(rows[2]["topic1"]) == 0.5
    assert rows[2]["main_topic"] == ""
    assert {rows[0]["main_topic"], rows[1]["main_topic"]} == {"0", "1"}
    assert ("1 document without a word of the vocabulary (given the prior's equal topic "
            "weights, no main topic" in result.stdout), result.stdout
    assert "none: 1" in result.stdout


def test_inspect_and_report_name_the_terms_without_a_vocabulary_flag(fitted):
    model = mb.load(fitted / "dmm" / "model.npz")
    words = model.top_words(_train_counts().vocabulary, n=4)
    result = run("inspect", "dmm/model.npz", "--top", "4", cwd=fitted)
    assert result.returncode == 0, result.stderr
    for k in range(2):
        assert f"(weight {model.weights_[k]:.3f}): {' '.join(words[k])}" in result.stdout
    assert "column numbers" not in result.stdout
    assert "vocabulary: " in result.stdout and "stop words english" in result.stdout
    result = run("report", "dmm/model.npz", "--out", "page.html", cwd=fitted)
    assert result.returncode == 0 and result.stderr == "", result.stderr
    page = (fitted / "page.html").read_text(encoding="utf-8")
    assert '"heart"' in page and '"term 0"' not in page and "no vocabulary" not in page
    # --corpus is read as the model file says (no --stop-words/--max-df repeated)
    result = run("report", "dmm/model.npz", "--corpus", "train.txt", "--out", "page2.html",
                 cwd=fitted)
    assert result.returncode == 0, result.stderr


def test_points_by_column_count_and_by_name(tmp_path):
    points, _ = mb.datasets.make_gaussian_mixture(40, 3, 2, random_state=0)
    names = ["a", "b", "c"]
    np.savetxt(tmp_path / "fit.csv", points, delimiter=",", header=",".join(names), comments="")
    assert run("cluster", "fit.csv", "--model", "gmm", "-k", "2", "--out", "g", "-q",
               cwd=tmp_path).returncode == 0
    model = mb.load(tmp_path / "g" / "model.npz")
    # the columns reordered, with a class column beside: taken by name
    table = np.column_stack([points[:, 2], points[:, 0], np.arange(40) % 2, points[:, 1]])
    np.savetxt(tmp_path / "new.csv", table, delimiter=",", header="c,a,class,b", comments="")
    result = run("predict", "g/model.npz", "new.csv", "-o", "-", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    got = np.array([[float(r["p_cluster0"]), float(r["p_cluster1"])]
                    for r in _rows(result.stdout)])
    np.testing.assert_allclose(got, model.predict_proba(points), atol=1e-6)
    assert "left out: 'class'" in result.stderr
    np.savetxt(tmp_path / "two.csv", points[:, :2], delimiter=",")
    _one_line_error(run("predict", "g/model.npz", "two.csv", cwd=tmp_path),
                    "input: 'two.csv' has 2 columns of numbers but the "
                    "VariationalGaussianMixture was fitted to 3 features ('a', 'b', 'c')")
    np.savetxt(tmp_path / "ab.csv", points[:, :2], delimiter=",", header="a,b", comments="")
    _one_line_error(run("predict", "g/model.npz", "ab.csv", cwd=tmp_path),
                    "lacks the column(s) 'c'")
    # whose columns are whose: "(its columns: 'a', 'b', 'c')" read as the file's own
    np.savetxt(tmp_path / "uv.csv", points, delimiter=",", header="u,v,w", comments="")
    _one_line_error(run("predict", "g/model.npz", "uv.csv", cwd=tmp_path),
                    "input: 'uv.csv' lacks the column(s) 'a', 'b', 'c' that the "
                    "VariationalGaussianMixture was fitted to (the model's columns: 'a', 'b', "
                    "'c'; the file's: 'u', 'v', 'w').")
    np.savetxt(tmp_path / "one.csv", points[:1], delimiter=",")  # one point is predicted
    result = run("predict", "g/model.npz", "one.csv", "-o", "-", cwd=tmp_path)
    assert result.returncode == 0 and len(_rows(result.stdout)) == 1


def test_a_npy_of_the_wrong_width_is_told_its_shape_not_drop_column(tmp_path):
    """--drop-column does not apply to an array: the error gives the shape to save instead,
    and says that a 1-D array (a single point saved as shape (p,)) is one column."""
    points, _ = mb.datasets.make_gaussian_mixture(40, 2, 2, random_state=0)
    mb.save(mb.VariationalGaussianMixture(2, random_state=0).fit(points), tmp_path / "g.npz")
    np.save(tmp_path / "point.npy", points[0])
    result = run("predict", "g.npz", "point.npy", "-o", "-", cwd=tmp_path)
    _one_line_error(result, "give an array of shape (n_points, 2)",
                    "save a single point as shape (1, 2)")
    assert "--drop-column" not in result.stderr


def test_what_cannot_be_predicted_is_one_clear_error(saved, fitted, tmp_path):
    paths, models, corpus, folder = saved
    (tmp_path / "notes.npz").write_text("not a model\n")
    _one_line_error(run("predict", "notes.npz", fitted / "new.txt", cwd=tmp_path),
                    "model file: 'notes.npz' is not a model saved by mixbayes")
    _one_line_error(run("predict", paths["hdp"], fitted / "new.txt", cwd=tmp_path),
                    "the HDPMixture has no prediction for new data")
    _one_line_error(run("predict", fitted / "dmm" / "model.npz", folder / "points.npy",
                        cwd=tmp_path), "holds an array of points", "fitted to documents")
    _one_line_error(run("predict", paths["gmm"], fitted / "new.txt", cwd=tmp_path),
                    "the VariationalGaussianMixture was fitted to points: give points")


def test_an_old_file_without_vocabulary(saved, fitted, tmp_path):
    """The conftest's models are saved without a vocabulary (as before format 2)."""
    paths, models, corpus, folder = saved
    assert mb.persist.load_vocabulary(paths["dmm"]) is None
    _one_line_error(run("predict", paths["dmm"], fitted / "new.txt", cwd=tmp_path),
                    "holds no vocabulary", "cannot be matched")
    # counts in the model's columns are taken in order, with a note
    result = run("predict", paths["dmm"], folder / "data" / "counts.mtx", "-o", "-",
                 cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert [int(r["cluster"]) for r in _rows(result.stdout)] == list(models["dmm"].labels_)
    assert "holds no vocabulary: the input's 30 columns are taken as the model's" in (
        result.stderr)
    # inspect says column numbers; report warns, on stderr and on the page
    assert "column numbers: the file stores no vocabulary" in run(
        "inspect", paths["dmm"], cwd=tmp_path).stdout
    result = run("report", paths["dmm"], "--out", "page.html", cwd=tmp_path)
    assert result.returncode == 0
    assert result.stderr.startswith("warning: no vocabulary: the terms are shown by their "
                                    "column numbers") and "--corpus INPUT" in result.stderr
    assert "no vocabulary: the terms are shown" in (tmp_path / "page.html").read_text()


def test_a_saved_vocabulary_maps_count_files_by_term(saved, tmp_path):
    """A model saved with its vocabulary reads a count file of another column order."""
    paths, models, corpus, folder = saved
    path = mb.save(models["dmm"], tmp_path / "with.npz", vocabulary=corpus)
    reversed_corpus = mb.Corpus(corpus.counts[:, ::-1], corpus.vocabulary[::-1])
    reversed_corpus.write(tmp_path / "rev", format="mtx")
    result = run("predict", path, tmp_path / "rev" / "counts.mtx", "-o", "-", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert [int(r["cluster"]) for r in _rows(result.stdout)] == list(models["dmm"].labels_)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        inspect = run("inspect", path, "--top", "3", cwd=tmp_path).stdout
    words = models["dmm"].top_words(corpus.vocabulary, n=3)
    assert " ".join(words[0]) in inspect and "how they were read is not known" in inspect


def test_points_of_the_fitted_table_are_predicted_and_reported_as_they_were_read(tmp_path):
    """The table a model of points was fitted to, with its id and class columns (left out of
    the fit by --drop-column and --label-column), is taken by the model's column names by
    predict and by report --corpus: the columns the model does not name are left out."""
    points, truth = mb.datasets.make_gaussian_mixture(30, 2, 2, random_state=0)
    labels = truth.labels
    rows = [f"{i + 1},{x:.6f},{y:.6f},{'ab'[c]}" for i, ((x, y), c) in
            enumerate(zip(points, labels))]
    (tmp_path / "t.csv").write_text("id,x,y,kind\n" + "\n".join(rows) + "\n")
    assert run("cluster", "t.csv", "--model", "gmm", "-k", "2", "--label-column", "kind",
               "--drop-column", "id", "--out", "g", "-q", cwd=tmp_path).returncode == 0
    result = run("predict", "g/model.npz", "t.csv", "-o", "-", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    fitted = [r["cluster"] for r in _rows((tmp_path / "g" / "assignments.csv").read_text())]
    assert [r["cluster"] for r in _rows(result.stdout)] == fitted
    assert "left out: 'id', 'kind'" in result.stderr
    result = run("report", "g/model.npz", "--corpus", "t.csv", "--out", "r.html", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
