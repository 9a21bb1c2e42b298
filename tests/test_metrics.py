"""Clustering metrics against hand-computed values."""

import numpy as np
import pytest

from mixbayes import metrics


def test_perfect_and_permuted_labels():
    truth = ["a", "a", "b", "b", "c", "c"]
    pred = [2, 2, 0, 0, 1, 1]
    for fn in (metrics.nmi, metrics.ari, metrics.purity, metrics.matched_accuracy):
        assert fn(truth, pred) == pytest.approx(1.0)


def test_hand_computed_values():
    truth = [0, 0, 0, 1, 1, 1]
    pred = [0, 0, 1, 1, 1, 1]
    # contingency [[2, 1], [0, 3]]: purity = (2 + 3) / 6, matched accuracy the same
    assert metrics.purity(truth, pred) == pytest.approx(5 / 6)
    assert metrics.matched_accuracy(truth, pred) == pytest.approx(5 / 6)
    # NMI by hand: H(U) = log 2, H(V) = H(2/6, 4/6), I from the contingency table
    p = np.array([[2, 1], [0, 3]]) / 6
    pu, pv = p.sum(1), p.sum(0)
    mi = sum(p[i, j] * np.log(p[i, j] / (pu[i] * pv[j])) for i in range(2) for j in range(2) if p[i, j] > 0)
    hu, hv = -np.sum(pu * np.log(pu)), -np.sum(pv * np.log(pv))
    assert metrics.nmi(truth, pred) == pytest.approx(mi / ((hu + hv) / 2))
    assert metrics.nmi(truth, pred, "geometric") == pytest.approx(mi / np.sqrt(hu * hv))


def test_matched_accuracy_is_one_to_one():
    # purity lets two clusters map to one class; matched accuracy does not
    truth = [0, 0, 1, 1]
    pred = [0, 1, 2, 3]
    assert metrics.purity(truth, pred) == 1.0
    assert metrics.matched_accuracy(truth, pred) == 0.5


def test_length_mismatch():
    with pytest.raises(ValueError, match="same length; got 3 and 2"):
        metrics.nmi([0, 1, 1], [0, 1])


def test_report_keys():
    report = metrics.clustering_report([0, 1, 1, 0], [1, 0, 0, 1])
    assert set(report) == {"nmi", "nmi_geometric", "ari", "purity", "accuracy"}
    assert all(v == pytest.approx(1.0) for v in report.values())
