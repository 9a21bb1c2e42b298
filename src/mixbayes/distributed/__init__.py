"""The Dask engine: fits, predictions and readers of data that live on a ``dask.distributed``
cluster (the user guide's "Larger than one machine" says what runs where).

Importing this package registers the engine (:mod:`mixbayes._engines`) without importing dask:
a dask array or a :class:`ShardedCorpus` given to :class:`~mixbayes.DirichletMultinomialMixture`
(``inference="vb"``), :class:`~mixbayes.VariationalGaussianMixture` or
:class:`~mixbayes.TopicModel` is then fitted on the running client, by the model's own loop
over the shards (:mod:`._cavi`, :mod:`._topics`), and ``predict``/``transform``/``score`` map
over the row chunks where they lie (:mod:`._blockwise`). ``with engine(client=...): model.fit(X)``
sends data held here to a cluster; :func:`fit` is that. Readers: :func:`read_docword`,
:func:`read_matrix_market` (each worker reads its own rows) give a :class:`ShardedCorpus`, which
filters as :class:`mixbayes.Corpus` does, on the workers. Using it needs
``pip install "mixbayes[distributed]"``.
"""

from .._engines import START_SAMPLE
from ._corpus import ShardedCorpus, WorkerReadError, predict_proba_of
from ._dask import require
from ._engine import engine, fit, fit_predict  # registers the Dask engine (dask not imported)
from ._readers import NotSortedError, entries_mismatch, read_docword, read_matrix_market
from ._topics import select_n_topics

__all__ = ["START_SAMPLE", "NotSortedError", "ShardedCorpus", "engine", "entries_mismatch", "fit",
           "fit_predict", "predict_proba_of", "read_docword", "read_matrix_market", "require",
           "select_n_topics", "WorkerReadError"]
