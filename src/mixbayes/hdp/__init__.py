"""HDP mixtures fitted by an exact slice sampler (Amini et al. 2019)."""

from .model import HDPMixture

__all__ = ["HDPMixture"]
