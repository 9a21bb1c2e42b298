"""Tree-shaped clustering: Bayesian hierarchical mixture clustering with max-margin posterior
regularisation (document 5)."""

from ._tree import Tree
from .model import HierarchicalMixture

__all__ = ["HierarchicalMixture", "Tree"]
