"""Finite mixtures fitted by coordinate-ascent variational Bayes: one loop, many families."""

from ._base import VariationalMixture
from .dmm import DirichletMultinomialMixture
from .selection import ClusterSelection, select_n_clusters

__all__ = [
    "VariationalMixture",
    "DirichletMultinomialMixture",
    "ClusterSelection",
    "select_n_clusters",
]
