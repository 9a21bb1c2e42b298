"""The embedded classic3 corpus and simulators that return the truth behind their data."""

from ._embedded import load_classic3
from ._simulate import DMMTruth, make_dmm_corpus

__all__ = ["load_classic3", "make_dmm_corpus", "DMMTruth"]
