"""Finite mixtures fitted by coordinate-ascent variational Bayes: one loop, many families."""

from ._base import VariationalMixture
from .dmm import DirichletMultinomialMixture
from .gaussian import VariationalGaussianMixture
from .selection import ClusterSelection, select_n_clusters

__all__ = [
    "VariationalMixture",
    "DirichletMultinomialMixture",
    "VariationalGaussianMixture",
    "ClusterSelection",
    "select_n_clusters",
]
