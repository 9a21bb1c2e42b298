r"""Fit mixtures on a ``dask.distributed`` cluster: data stay on the workers, the loop on the client.

A CAVI iteration is a map and a reduce: the local step (responsibilities of every document or
point given the small global factors) is independent per row, and the global step reads only
sufficient statistics that add over rows. So:

* the data are cut into row shards (CSR or dense blocks), validated and prepared *on the
  workers*, and persisted there for the whole fit;
* every iteration the client scatters the global expectations (for documents
  :math:`E[\log\beta]`, a :math:`p\times K` array, and :math:`E[\log\lambda]`) to every
  worker once, maps the local step over the shards (each returns its statistics, cluster
  sizes and the sum of its log normalisers, and keeps its labels on its worker), sums them on
  the workers by a tree reduce (only the statistics travel) and fetches the one sum;
* the global step, the ELBO, the convergence test and the restarts run on the client, in the
  same code as the in-process fit (:class:`~mixbayes.mixture.VariationalMixture`).

The data are never gathered to the client; ``labels_`` is a dask array on the cluster.

Lost workers
------------
The shards are futures of a graph the scheduler keeps (a file reader's tasks, or the chunks
of a dask array), so a worker that dies takes no data with it: the scheduler reruns the tasks
whose results it held (reading those shards again, validating and preparing them) on the
workers left or on its replacement, and the fit ends where it would have. The globals are
scattered to every worker, so they survive as long as one worker does. (A topic model's
weights are state, not data: see below.)

That holds during the fit. Afterwards ``labels_`` (a topic model's ``doc_topic_``) is made of
futures of the last iteration on the workers, whose inputs the fit has let go: a worker lost
after the fit takes its part of them with it. Bring them home (``.compute()``) or write them
out once the fit ends, as the command line does.

How to opt in
-------------
Pass dask data to the estimator as usual, with a ``distributed.Client`` running (dask's
default client, as dask-ml and xgboost.dask use it)::

    from distributed import Client
    import mixbayes as mb
    from mixbayes.distributed import read_docword

    client = Client()                      # or Client("tcp://scheduler:8786")
    corpus = read_docword("docword.nytimes.txt")   # each worker reads its own byte range
    model = mb.DirichletMultinomialMixture(20).fit(corpus.counts)

or call :func:`fit` to name the client, to shard numpy/scipy data held on the client, or to
size the start sample. The client is not an estimator parameter: a parameter is cloned,
compared and saved with the model (``sklearn.clone``, :func:`mixbayes.save`), and a client
is neither data nor a hyperparameter but a connection. Nor is it a ``fit`` argument: the
input already says where the data live (a dask array lives on a cluster), and scikit-learn's
meta-estimators route ``fit`` arguments as per-sample data.

The start
---------
The start (k-means++ on tf-idf, the screen of ``n_init`` starts, the warm-up Gibbs sweeps)
is sequential over documents and runs on the client, on ``start_sample`` evenly spaced
documents (all of them when the corpus is no larger): the first global step is taken from that
sample's start, the CAVI iterations from then on use every document. A corpus of at most
``start_sample`` documents therefore gets exactly the in-process fit (labels identical, ELBO
equal up to the order of floating-point sums).

The Gaussian mixture's priors are scaled by the data (mean, variances, covariance): those
come from column moments about the sample's mean, summed over the shards on the workers
(:class:`~mixbayes.families.gaussian.PointMoments`), so they are the whole data set's, not
the sample's.

The topic model
---------------
:class:`~mixbayes.TopicModel` fits the same way (``model.fit(dask_array)`` or :func:`fit`),
and :func:`select_n_topics` chooses K on the cluster (``mixbayes.select_n_topics`` hands dask
input to it). Its iterations carry per-document weights from one to the next, so every shard's
documents stay on their worker as a block with their weights, and the MAP loop on the client
calls the block functions the in-process fit calls on its one block
(:mod:`mixbayes.topics._blocks`), summing their shares on the workers; the Laplace evidence's
document blocks and word-block Gram matrices are summed the same way. ``doc_topic_`` is then a
dask array. A lost worker takes weights with it, the product of every iteration so far; but
each iteration starts by solving every document's weights under the current topics, so the
blocks it held are rebuilt from their counts (read again) and the latest topics, the
iteration's steps replayed on them, and the fit goes on to the same joint MAP (up to the
weight solver's tolerance, not bit for bit; see ``_topics.ShardedDocuments``).

On the command line, ``mixbayes cluster ... --scheduler ADDRESS`` (and ``mixbayes topics``)
fits on a running cluster and ``--workers N`` on one started for the run. A UCI docword or
Matrix Market input is read by these readers, each worker its own rows, and stays there: the
term filters, the empty documents left out, the mixture's probabilities, the topics' coherence
(:func:`mixbayes.metrics.coherence` takes a dask array) and the report's sample of documents
are computed on the shards, so the client holds at most ``START_SAMPLE`` documents' counts at
once and writes what the in-process run writes (:mod:`mixbayes.cli._sharded`). Other inputs
(text, CSV) are read by the command, then sent to the workers.

Supported: :class:`~mixbayes.DirichletMultinomialMixture` with ``inference="vb"``,
:class:`~mixbayes.VariationalGaussianMixture` and :class:`~mixbayes.TopicModel`; sharded
readers of UCI ``docword`` (:func:`read_docword`) and Matrix Market coordinate files
(:func:`read_matrix_market`, which reads a file not sorted by row too, at the cost of every
shard reading the whole file).
Importing this package does not import dask; using it needs
``pip install "mixbayes[distributed]"``.
"""

from .._engines import START_SAMPLE
from ._engine import engine, fit, fit_predict  # registers the Dask engine (dask not imported)
from ._readers import NotSortedError, ShardedCorpus, read_docword, read_matrix_market
from ._topics import select_n_topics

__all__ = ["START_SAMPLE", "NotSortedError", "ShardedCorpus", "engine", "fit", "fit_predict",
           "read_docword", "read_matrix_market", "select_n_topics"]
