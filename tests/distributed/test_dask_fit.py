"""Distributed fits on a dask cluster equal the in-process fit, shard by shard.

The cluster is conftest's ``client``: threads of this process, so the travelling objects are
pickled here directly.
"""

import gzip
import io
import pickle

import numpy as np
import pytest
import scipy.sparse as sp

da = pytest.importorskip("dask.array", reason='needs dask: pip install "mixbayes[distributed]"')
distributed = pytest.importorskip("distributed", reason='needs pip install "mixbayes[distributed]"')

import mixbayes as mb  # noqa: E402
from mixbayes.datasets import make_dmm_corpus  # noqa: E402
from mixbayes.distributed import _cavi, fit, read_docword, read_matrix_market  # noqa: E402


@pytest.fixture(scope="module")
def counts():
    # short documents from overlapping clusters: CAVI moves documents for a dozen iterations
    corpus, _ = make_dmm_corpus(150, 60, 4, mean_length=6, word_concentration=0.5,
                                random_state=1)
    return sp.csr_matrix(corpus.counts)


def _model(**params):
    return mb.DirichletMultinomialMixture(**{
        "n_components": 4, "n_init": 3, "tol": 1e-6, "random_state": 0, **params})


def _assert_same_fit(local, remote):
    assert isinstance(remote.labels_, da.Array)
    np.testing.assert_array_equal(remote.labels_.compute(), local.labels_)
    assert remote.n_iter_ == local.n_iter_ and remote.converged_ == local.converged_
    np.testing.assert_allclose(remote.elbo_trace_, local.elbo_trace_, rtol=1e-9, atol=0)
    assert abs(remote.elbo_ - local.elbo_) <= 1e-9 * abs(local.elbo_)
    # the ELBO is stationary at the fixed point, so once summation orders differ the factors
    # agree less closely than it does: 3e-9 seen for the words' posterior, and 1e-6 for the
    # weights' when the weight prior is fitted (the ELBO is flat in alpha)
    np.testing.assert_allclose(remote.word_concentration_, local.word_concentration_,
                               rtol=1e-7)
    np.testing.assert_allclose(remote.weight_concentration_, local.weight_concentration_,
                               rtol=1e-5)
    np.testing.assert_array_equal(remote.start_elbos_, local.start_elbos_)
    assert remote.word_prior_ == pytest.approx(local.word_prior_, rel=1e-7)


@pytest.fixture(scope="module")
def local(counts):
    """The in-process fits to compare with, once each."""
    fits = {}

    def fitted(**params):
        key = tuple(sorted(params.items()))
        if key not in fits:
            fits[key] = _model(**params).fit(counts)
            assert fits[key].n_iter_ > 5  # the comparison follows a real trajectory
        return fits[key]

    return fitted


# 19 shards, uneven, four empty and two of one row: more than the reduce's fan-in (FAN_IN = 8
# parts summed per task), so the sum takes two rounds and a part left out of one shows here
MANY = (0, 1, 20, 3, 0, 9, 14, 2, 11, 0, 7, 5, 13, 1, 18, 6, 0, 25, 15)


@pytest.mark.parametrize("rows", [(150,), (75, 75), (0, 1, 149), MANY],
                         ids=["1 shard", "2 shards", "3 shards: empty, one row",
                              "19 shards: uneven, empty ones, over the fan-in"])
def test_same_fit_as_in_process(client, counts, local, rows):
    X = da.from_array(counts, chunks=(rows, (60,)), asarray=False)
    remote = _model().fit(X)
    _assert_same_fit(local(), remote)
    assert remote.labels_.chunks == (tuple(size for size in rows if size),)


@pytest.mark.parametrize("first", [None, lambda part: 10 * part])
def test_tree_reduce_sums_every_part(client, first):
    """Every part enters the sum once, whatever their number against the fan-in: a lone part,
    exactly FAN_IN, one over, three rounds (65), and futures."""
    from mixbayes.distributed._dask import FAN_IN, total, tree_reduce

    assert FAN_IN == 8  # the counts below straddle it
    scale = 1 if first is None else 10
    for n in (1, 8, 9, 65):
        parts = [2 ** i for i in range(n)]  # a part dropped or counted twice changes a bit
        assert tree_reduce(client, parts, total, first).result() == scale * (2 ** n - 1), n
    futures = client.scatter(list(range(1, 21)))
    assert tree_reduce(client, futures, total).result() == 210


def test_same_fit_with_fitted_priors(client, counts, local):
    X = da.from_array(counts, chunks=((70, 1, 0, 79), (60,)), asarray=False)
    _assert_same_fit(local(fit_priors=True), _model(fit_priors=True).fit(X))


def test_dense_chunks_and_column_chunks(client, counts, local):
    dense = da.from_array(counts.toarray(), chunks=(50, 25))  # three row and three column chunks
    _assert_same_fit(local(), _model().fit(dense))


def test_client_data_sharded_per_worker(client, counts, local, tmp_path):
    remote = fit(_model(), counts, client=client)
    assert remote.labels_.numblocks == (2,)  # one shard per worker
    _assert_same_fit(local(), remote)
    # new data on the cluster, in CSR chunks (an empty one too), are predicted where they lie,
    # as numpy data are here
    X = da.from_array(counts, chunks=((0, 75, 75), (60,)), asarray=False)
    predicted = remote.predict(X)
    assert isinstance(predicted, da.Array) and predicted.chunks == ((0, 75, 75),)
    np.testing.assert_array_equal(predicted.compute(), local().predict(counts))
    np.testing.assert_allclose(remote.predict_proba(X).compute(), local().predict_proba(counts))
    assert remote.score(X) == pytest.approx(local().score(counts), rel=1e-12)
    # a model fitted on a cluster saves its labels, brought home
    loaded = mb.load(mb.save(remote, tmp_path / "model.npz"))
    np.testing.assert_array_equal(loaded.labels_, local().labels_)
    assert isinstance(remote.labels_, da.Array)  # the fitted model is left as it was


def test_start_on_a_sample(client):
    # larger than the start sample: the start runs on 60 documents, the iterations on all 400
    corpus, truth = make_dmm_corpus(400, 80, 3, mean_length=30, word_concentration=0.1,
                                    random_state=2)
    X = da.from_array(sp.csr_matrix(corpus.counts), chunks=((150, 150, 100), (80,)),
                      asarray=False)
    remote = fit(_model(n_components=3, n_init=2), X, start_sample=60)
    labels = remote.labels_.compute()
    local = _model(n_components=3, n_init=2).fit(corpus.counts)
    assert mb.metrics.adjusted_rand_score(labels, local.labels_) == 1.0
    assert np.all(np.diff(remote.elbo_trace_) >= -1e-9 * abs(remote.elbo_))
    assert remote.elbo_ == pytest.approx(local.elbo_, rel=1e-6)


def test_travelling_objects_pickle(client, counts):
    # processes=False moves objects by reference; these are what a real cluster pickles
    model = _model().fit(counts)
    state, family = model._restore_state()
    data = family.prepare(counts[:10])
    local = _cavi._local_step(data, (family, state.family_expectations,
                                     state.expected_log_weights))
    for thing in (_model(), family, data, local, _cavi._add(local, local)):
        pickle.loads(pickle.dumps(thing))


def test_refusals(client, counts, monkeypatch):
    X = da.from_array(counts, chunks=(75, 60), asarray=False)
    with pytest.raises(ValueError, match="inference: a distributed fit runs variational Bayes"):
        _model(inference="gibbs").fit(X)
    with pytest.raises(TypeError, match="VariationalGaussianMixture or a TopicModel; got HDP"):
        fit(mb.HDPMixture(), X)
    # a model with no cluster path fits here, and says that it gathers the data
    with pytest.warns(UserWarning, match="X is dask data of 150 rows, used here in this process"):
        mb.HDPMixture(n_iter=2, burn_in=0, n_chains=1).fit(X)
    points = da.from_array(np.random.default_rng(0).random((30, 2)), chunks=(10, 2))
    with pytest.warns(UserWarning, match="X is dask data of 30 rows, used here in this process"):
        tree = mb.HierarchicalMixture(n_iter=3).fit(points)  # the tree said nothing
    np.testing.assert_array_equal(
        tree.labels_, mb.HierarchicalMixture(n_iter=3).fit(points.compute()).labels_)
    with pytest.warns(UserWarning, match="X is dask data of 30 rows, used here in this process"):
        hdp = mb.HDPMixture("gaussian", n_iter=2, burn_in=0, n_chains=1, random_state=0).fit(
            points, groups=np.arange(30) % 3)  # the Gaussian HDP said nothing
    np.testing.assert_array_equal(hdp.labels_, mb.HDPMixture(
        "gaussian", n_iter=2, burn_in=0, n_chains=1, random_state=0).fit(
            points.compute(), groups=np.arange(30) % 3).labels_)
    bad = counts.copy()
    bad.data[-1] = -1.0
    with pytest.raises(ValueError, match="negative counts"):
        _model().fit(da.from_array(bad, chunks=(75, 60), asarray=False))
    with pytest.raises(ValueError, match=r"n_components must be an integer in \[1, 150\]"):
        _model().set_params(n_components=200).fit(X)
    with pytest.raises(ValueError, match=r"X has no rows \(a dask array of shape \(0, 60\)\)"):
        _model().fit(X[:0])

    def no_client():
        raise ValueError("No clients found")

    monkeypatch.setattr(distributed, "default_client", no_client)
    with pytest.raises(ValueError, match="no dask client is running: start one first"):
        _model().fit(X)
    with pytest.raises(ValueError, match="no dask client is running") as refused:
        fit(_model(), counts)  # numpy data sent to a cluster: not "X is dask data"
    assert "X is dask data" not in str(refused.value)
    closed = distributed.Client(client.scheduler.address, set_as_default=False)
    closed.close()
    with pytest.raises(ValueError, match="client: the dask client is closed"):
        fit(_model(), counts, client=closed)


def _write_docword(folder, counts, gz=False):
    coo = sp.coo_matrix(counts)
    order = np.lexsort((coo.col, coo.row))
    lines = [f"{counts.shape[0]}", f"{counts.shape[1]}", f"{coo.nnz}"] + [
        f"{r + 1} {c + 1} {v}" for r, c, v in zip(coo.row[order], coo.col[order],
                                                 coo.data[order])]
    path = folder / ("docword.test.txt" + (".gz" if gz else ""))
    text = ("\n".join(lines) + "\n").encode()
    path.write_bytes(gzip.compress(text) if gz else text)
    (folder / "vocab.test.txt").write_text("\n".join(f"w{j}" for j in range(counts.shape[1])))
    return path


def test_docword_fit(client, counts, local, tmp_path):
    corpus = read_docword(str(_write_docword(tmp_path, counts)), n_shards=3)
    assert corpus.counts.numblocks == (3, 1)
    _assert_same_fit(local(), _model().fit(corpus))


def test_docword_refuses_unsorted_and_out_of_range(client, tmp_path):
    (tmp_path / "vocab.bad.txt").write_text("a\nb\n")
    path = tmp_path / "docword.bad.txt"
    path.write_text("3\n2\n4\n1 1 2\n3 2 1\n2 1 1\n3 1 1\n")
    corpus = read_docword(str(path), n_shards=2)
    with pytest.raises(ValueError, match="is not sorted by document"):
        corpus.counts.compute()
    path.write_text("2\n2\n2\n1 1 2\n2 3 1\n")
    with pytest.raises(ValueError, match=r"word number outside 1\.\.2"):
        read_docword(str(path)).counts.compute()
    path.write_text("2\n2\n3\n1 1 2\n2 2 1\n3 1 1\n")  # a document the header left out
    with pytest.raises(ValueError, match="holds document 3, beyond the 2 its header announces"):
        read_docword(str(path), n_shards=2).counts.compute()
    path.write_text("4\n2\n9\n1 1 2\n2 2 1\n3 1 1\n4 2 3\n")  # cut short: 4 of 9 entries
    with pytest.warns(UserWarning, match="announces 9 entries but its shards hold 4"):
        mb.DirichletMultinomialMixture(2, n_init=1).fit(read_docword(str(path), n_shards=2))
    named_gz = tmp_path / "docword.bad.txt.gz"
    named_gz.write_text("2\n2\n1\n1 1 2\n")
    with pytest.raises(ValueError, match="is not gzipped, though its name ends in .gz"):
        read_docword(str(named_gz))


def _write_mtx(folder, counts, gz=False, order="csr"):
    import scipy.io

    buffer = io.BytesIO()
    scipy.io.mmwrite(buffer, counts.tocsr() if order == "csr" else counts.tocsc(),
                     field="integer")
    path = folder / ("counts.mtx" + (".gz" if gz else ""))
    path.write_bytes(gzip.compress(buffer.getvalue()) if gz else buffer.getvalue())
    (folder / "vocab.txt").write_text("\n".join(f"w{j}" for j in range(counts.shape[1])))
    (folder / "labels.txt").write_text("\n".join(str(i % 3) for i in range(counts.shape[0])))
    return path


@pytest.mark.parametrize("gz", [False, True], ids=["text", "gzip"])
@pytest.mark.parametrize("read, write", [(read_docword, _write_docword),
                                         (read_matrix_market, _write_mtx)],
                         ids=["docword", "matrix market"])
def test_shards(client, counts, tmp_path, gz, read, write):
    counts = counts[:40].tolil()
    counts[[0, 17, 39]] = 0  # empty documents at the start, inside and at the end
    path = write(tmp_path, counts.tocsr(), gz)
    whole = mb.read_corpus(str(path))
    for n_shards in (1, 2, 3, 50):  # more shards than documents: some of one row, some empty
        corpus = read(str(path), n_shards=n_shards)
        assert (corpus.counts.compute() != whole.counts).nnz == 0
        assert 1 <= corpus.counts.numblocks[0] <= n_shards  # dask drops the empty ones
    assert 1 in corpus.counts.chunks[0]
    assert list(corpus.vocabulary) == list(whole.vocabulary)
    if read is read_matrix_market:
        np.testing.assert_array_equal(corpus.labels, whole.labels)
    # a folder is read as mb.read_corpus reads it: the one count file it holds
    assert (read(str(tmp_path)).counts.compute() != whole.counts).nnz == 0


def test_matrix_market_unsorted_pattern_and_real(client, counts, tmp_path):
    counts = counts[:30]
    path = _write_mtx(tmp_path, counts, order="csc")  # sorted by column, not by row
    with pytest.raises(ValueError, match="is not sorted by row .*sorted_rows=False"):
        read_matrix_market(str(path), n_shards=3).counts.compute()
    unsorted = read_matrix_market(str(path), n_shards=3, sorted_rows=False)
    assert (unsorted.counts.compute() != counts).nnz == 0
    (tmp_path / "vocab.txt").unlink()
    path.write_text("%%MatrixMarket matrix coordinate pattern general\n% a comment\n"
                    "3 2 3\n1 1\n3 2\n3 1\n")
    pattern = read_matrix_market(str(path), n_shards=2)
    assert list(pattern.vocabulary) == ["term_0", "term_1"]  # an array, as Corpus holds it
    np.testing.assert_array_equal(pattern.counts.compute().toarray(), [[1, 0], [0, 0], [1, 1]])
    path.write_text("%%MatrixMarket matrix coordinate real general\n2 2 2\n1 2 3.0\n2 1 0.5\n")
    with pytest.raises(ValueError, match="fractional"):
        _model(n_components=1).fit(read_matrix_market(str(path)))
    path.write_text("%%MatrixMarket matrix array integer general\n2 2\n1\n2\n3\n4\n")
    with pytest.raises(ValueError, match="is a dense Matrix Market array"):
        read_matrix_market(str(path))



@pytest.mark.parametrize("model", ["dmm", "topics", "gmm"])
@pytest.mark.parametrize("declared", [(50, 60), (40, 70)], ids=["rows", "columns"])
def test_chunk_of_another_shape_refused(client, counts, model, declared):
    # a from_delayed chunk of 40 x 60 declared otherwise: one clear error, not numpy's (the
    # columns: "incompatible dimensions", "could not be broadcast") nor a fit whose labels
    # miss rows (the rows: it fitted)
    import dask

    X = counts.toarray().astype(float) if model == "gmm" else counts
    fitter = {"dmm": _model, "topics": lambda: mb.TopicModel(3, random_state=0),
              "gmm": lambda: mb.VariationalGaussianMixture(3, random_state=0)}[model]
    rows, cols = declared
    wrong = da.from_delayed(dask.delayed(lambda: X[:40])(), shape=(rows, cols), dtype=X.dtype,
                            meta=X[:0, :0])
    rest = X[40:]
    if cols != rest.shape[1]:
        pad = np.zeros((rest.shape[0], cols - rest.shape[1]))
        rest = sp.hstack([rest, pad], format="csr") if sp.issparse(rest) else np.hstack([rest, pad])
    rest = da.from_array(rest, chunks=(55, -1), asarray=False)
    with pytest.raises(ValueError, match=r"X: a chunk holds 40 x 60 values where the dask array "
                                         rf"declares {rows} x {cols}"):
        fitter().fit(da.concatenate([wrong, rest]))
