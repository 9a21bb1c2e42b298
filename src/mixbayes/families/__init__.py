"""Likelihood and conjugate-prior maths shared by the engines.

A *family* turns data into per-component evidence and back into additive sufficient
statistics; it never imports a model.
"""

from .dirichlet import dirichlet_expected_log, dirichlet_neg_kl
from .gaussian import GaussianFamily
from .multinomial import MultinomialFamily

__all__ = [
    "dirichlet_expected_log", "dirichlet_neg_kl", "GaussianFamily", "MultinomialFamily",
]
