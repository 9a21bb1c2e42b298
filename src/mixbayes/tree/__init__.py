"""Tree-shaped clustering: Bayesian hierarchical mixture clustering with max-margin posterior
regularisation (Huang et al. 2021)."""

from ._tree import Tree
from .model import HierarchicalMixture

__all__ = ["HierarchicalMixture", "Tree"]
