"""mixbayes: Bayesian mixture-model clustering of documents and points."""

__version__ = "0.1.0"

# before any kernel module: numba looks for its cache folder when a kernel is defined
from ._numba_cache import ensure_cache_location

ensure_cache_location()

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


def __getattr__(name):
    """``mb.plotting`` on first use (matplotlib is not imported with the package: a plotting
    call in the guide failed with AttributeError until ``import mixbayes.plotting``)."""
    if name == "plotting":
        import importlib

        return importlib.import_module(".plotting", __name__)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
