"""Fixtures shared by several test modules."""

import warnings

import numpy as np
import pytest

import mixbayes as mb


def pytest_collection_modifyitems(items):
    """The ``slow`` tests first, the rest in their order: with two xdist workers a long test
    collected late runs alone at the end while the other worker idles (longest first is the
    classic fix for that)."""
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)


@pytest.fixture(scope="session")
def saved(tmp_path_factory):
    """One small saved model of every kind, and the corpus the count models were fitted on;
    the folder also holds that corpus (data/counts.mtx with its vocab.txt) and the points the
    Gaussian and tree models were fitted on (points.npy)."""
    folder = tmp_path_factory.mktemp("models")
    corpus, _ = mb.datasets.make_topic_corpus(60, 30, 3, 40, random_state=0)
    points, _ = mb.datasets.make_gaussian_mixture(90, 3, 2, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        models = dict(
            dmm=mb.DirichletMultinomialMixture(3, n_init=1, random_state=0).fit(corpus.counts),
            gmm=mb.VariationalGaussianMixture(3, n_init=1, random_state=0).fit(points),
            topics=mb.TopicModel(3, random_state=0).fit(corpus.counts),
            hdp=mb.HDPMixture(kernel="categorical", n_iter=6, random_state=0).fit(
                corpus.counts),
            tree=mb.HierarchicalMixture(2, n_iter=6, burn_in=2, random_state=0).fit(points),
        )
    paths = {kind: mb.save(model, folder / f"{kind}.npz") for kind, model in models.items()}
    (folder / "vocab.txt").write_text("\n".join(corpus.vocabulary) + "\n")
    corpus.write(folder / "data", format="mtx")
    np.save(folder / "points.npy", points)
    return paths, models, corpus, folder
