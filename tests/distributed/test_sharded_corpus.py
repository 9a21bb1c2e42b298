"""``ShardedCorpus``, the one corpus on a cluster: its filters and views give what
:class:`mixbayes.Corpus`'s give in process, computed on the shards where they lie."""

import numpy as np
import pytest
import scipy.sparse as sp

pytest.importorskip("distributed", reason='needs pip install "mixbayes[distributed]"')

import mixbayes as mb  # noqa: E402
from mixbayes.distributed import ShardedCorpus, predict_proba_of, read_matrix_market  # noqa: E402


@pytest.fixture(scope="module")
def corpus():
    """60 labelled documents of 3 clusters; documents 0, 31 and 59 empty, document 12 holding
    only the two stop words (so emptied by dropping them), and a term no document uses."""
    corpus, _ = mb.datasets.make_dmm_corpus(60, 30, 3, mean_length=15, random_state=1)
    counts = corpus.counts.tolil()
    counts[[0, 31, 59], :] = 0
    counts[12, :] = 0
    counts[12, 0], counts[12, 1] = 3, 1
    counts[:, 29] = 0
    vocabulary = ["the", "and"] + list(corpus.vocabulary[2:])
    return mb.Corpus(sp.csr_matrix(counts), vocabulary, [f"d{i}" for i in range(60)],
                     corpus.labels)


def _same(sharded, here):
    assert isinstance(sharded, ShardedCorpus)
    assert (sharded.counts.compute() != here.counts).nnz == 0
    assert sharded.counts.dtype == np.int64
    np.testing.assert_array_equal(sharded.vocabulary, here.vocabulary)
    np.testing.assert_array_equal(sharded.document_ids(), here.doc_ids)
    np.testing.assert_array_equal(sharded.labels, here.labels)
    assert sharded.preprocessing == here.preprocessing


def test_the_filters_give_what_the_corpus_gives_in_process(client, corpus, tmp_path):
    corpus.write(tmp_path / "data", format="mtx")
    here = mb.read_corpus(str(tmp_path / "data"))
    sharded = read_matrix_market(str(tmp_path / "data"), n_shards=4).persist(client)
    assert len(sharded.shards) == 4 and "kept on the workers" in repr(sharded)
    _same(sharded, here)
    shuffled = np.random.default_rng(0).permutation(corpus.labels)
    options = dict(stop_words=["The", "AND"], min_df=2, max_df=0.9, max_features=20)
    sharded = sharded.with_labels(shuffled).drop_terms(**options)
    here = here.with_labels(shuffled).drop_terms(**options)
    _same(sharded, here)
    assert sharded.n_terms == 20 and "the" not in sharded.vocabulary
    dropped, left = sharded.drop_empty_documents(), here.drop_empty_documents()
    _same(dropped, left)
    assert dropped.n_documents == left.n_documents == 56  # 0, 12, 31, 59 left out
    assert dropped.drop_empty_documents() is dropped  # nothing more to drop
    # a sample and a map over the documents, as the command line's report and probabilities
    sample, rows = dropped.sample(10)
    assert rows.size == 10 and np.all(np.diff(rows) > 0) and rows[-1] - rows[0] > 40
    assert (sample.counts != left.counts[rows]).nnz == 0
    np.testing.assert_array_equal(sample.doc_ids, left.doc_ids[rows])
    model = mb.DirichletMultinomialMixture(3, n_init=1, random_state=0).fit(left.counts)
    del model.labels_
    mapped = np.vstack(list(dropped.map(predict_proba_of, model)))
    np.testing.assert_allclose(mapped, model.predict_proba(left.counts), rtol=1e-12)


def test_a_corpus_of_empty_documents_and_a_bad_shard(client, tmp_path):
    path = tmp_path / "empty.mtx"
    path.write_text("%%MatrixMarket matrix coordinate integer general\n3 2 0\n")
    sharded = read_matrix_market(str(path), n_shards=2)
    assert sharded.doc_ids is None  # numbered when asked, not held on the client
    assert sharded.drop_empty_documents() is None
    assert mb.read_corpus(str(path)).drop_empty_documents() is None
    path.write_text("%%MatrixMarket matrix coordinate integer general\n3 2 2\n1 1 2\n3 2 -1\n")
    with pytest.raises(ValueError, match=r"empty\.mtx'.*negative"):
        read_matrix_market(str(path), n_shards=2).persist(client)
    with pytest.raises(ValueError, match="labels has 2 entries but the corpus has 3"):
        read_matrix_market(str(path), n_shards=2).with_labels(["a", "b"])


def _unreadable(*args):
    raise FileNotFoundError(2, "No such file or directory")


def test_a_file_the_workers_cannot_read_is_named_with_what_to_do(client, corpus, tmp_path,
                                                                  monkeypatch):
    from mixbayes.cli._sharded import read_sharded
    from mixbayes.distributed import WorkerReadError, _readers

    corpus.write(tmp_path / "data", format="mtx")
    path = str(tmp_path / "data" / "counts.mtx")
    monkeypatch.setattr(_readers, "_read_shard", _unreadable)  # as a worker elsewhere finds it
    with pytest.raises(WorkerReadError, match=r"a dask worker cannot read .*counts\.mtx'.*"
                                              r"No such file.*shared file system"):
        read_matrix_market(path, n_shards=2).persist(client)

    class Args:  # what the command line's options give read_sharded
        pass

    args = Args()
    args.client = client
    with pytest.raises(OSError, match=r"^input: a dask worker cannot read .*leave out "
                                      r"--scheduler to fit in this process\.$"):
        read_sharded(args, (path, "mtx"))
