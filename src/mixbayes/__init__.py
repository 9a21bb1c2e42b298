"""mixbayes: Bayesian mixture-model clustering of documents and points."""

__version__ = "0.1.0"

from . import datasets, diagnostics, distributed, metrics, partition
from .corpus import Corpus, read_corpus
from .exceptions import ConvergenceWarning
from .hdp import HDPMixture
from .mixture import DirichletMultinomialMixture, VariationalGaussianMixture, select_n_clusters
from .persist import load, save
from .topics import TopicModel, select_n_topics
from .tree import HierarchicalMixture

__all__ = [
    "Corpus",
    "ConvergenceWarning",
    "DirichletMultinomialMixture",
    "HDPMixture",
    "HierarchicalMixture",
    "datasets",
    "diagnostics",
    "distributed",
    "load",
    "metrics",
    "partition",
    "read_corpus",
    "save",
    "select_n_clusters",
    "select_n_topics",
    "TopicModel",
    "VariationalGaussianMixture",
]
