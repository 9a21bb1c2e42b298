"""First contact, round two (issue 23): what a new user met on real files, run in-process
through ``main``."""

import csv
import json
import os

import numpy as np
import pytest

import mixbayes as mb
from mixbayes.cli import main

TEXTS = [
    "The patient's heart and the blood pressure, of the heart: measured twice!",
    "Blood cells and the heart of the patient; the cells were counted.",
    "Heart rate of patients, blood flow and the pressure in the heart.",
    "The aircraft wing and the flow of air over the wing, at high speed.",
    "Wing design: the lift of an aircraft, and the drag of the air flow.",
    "Air speed over the wing of the aircraft and the lift it gives.",
] * 3


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
