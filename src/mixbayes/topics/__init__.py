"""Topic models by joint MAP, and choosing the number of topics (Taddy 2012)."""

from .evaluation import completion_log_likelihood, completion_split
from .evidence import TopicEvidence, topic_evidence
from .model import TopicModel, main_topics
from .selection import TopicSelection, select_n_topics

__all__ = ["TopicModel", "TopicEvidence", "TopicSelection", "completion_log_likelihood",
           "completion_split", "main_topics", "select_n_topics", "topic_evidence"]
