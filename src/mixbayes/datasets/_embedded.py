"""The classic3 corpus, shipped inside the package so that ``make demo`` works offline."""

from importlib import resources

from .._formats import read_list
from ..corpus import Corpus, read_mtx


def load_classic3():
    """Load classic3: 3,891 abstracts x 4,303 terms, labelled MEDLINE / CISI / CRANFIELD.

    The SMART collections (MEDLINE, CISI, CRANFIELD abstracts) as word counts, distributed by
    the ``coclust`` project; freely distributed for information-retrieval research.

    Returns
    -------
    Corpus
        Counts, vocabulary and the three class labels (1,033 / 1,460 / 1,398 documents).
    """
    data = resources.files(__package__) / "data"
    with resources.as_file(data / "classic3_counts.mtx.gz") as counts_path, \
            resources.as_file(data / "classic3_vocab.txt.gz") as vocab_path, \
            resources.as_file(data / "classic3_labels.txt.gz") as labels_path:
        counts = read_mtx(counts_path).counts
        return Corpus(counts, read_list(vocab_path), labels=read_list(labels_path))
