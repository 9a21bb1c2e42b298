"""The embedded classic3 corpus and simulators that return the truth behind their data."""

from ._embedded import load_classic3
from ._simulate import (
    DMMTruth,
    GaussianMixtureTruth,
    HDPTruth,
    TopicTruth,
    TreeTruth,
    make_dmm_corpus,
    make_gaussian_mixture,
    make_hdp_data,
    make_topic_corpus,
    make_tree_data,
)

__all__ = [
    "load_classic3", "make_dmm_corpus", "DMMTruth", "make_gaussian_mixture", "GaussianMixtureTruth",
    "make_topic_corpus", "TopicTruth", "make_hdp_data", "HDPTruth",
    "make_tree_data", "TreeTruth",
]
