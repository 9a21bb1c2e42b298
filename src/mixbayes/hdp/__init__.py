"""HDP mixtures fitted by an exact slice sampler (document 4)."""

from .model import HDPMixture

__all__ = ["HDPMixture"]
