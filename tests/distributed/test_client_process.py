"""The client's process, alone in a subprocess: it loads no dask on import, says how to
install dask when it is missing, and holds a sample of an out-of-core corpus, not the corpus.

One subprocess for the three (this session has imported dask already, and a process start
costs seconds). The memory check connects to a cluster run here (threads of this process, so
the workers' memory is not the subprocess's) over TCP, and needs dask.
"""

import json
import subprocess
import sys
import warnings

import numpy as np
import scipy.sparse as sp

CLIENT = """
import json, sys, tracemalloc, warnings
import mixbayes as mb
loaded = sorted(m for m in sys.modules if m.split(".")[0] in ("dask", "distributed"))
assert not loaded, loaded
sys.modules["dask"] = None  # as if dask were not installed
try:
    mb.distributed.read_docword("docword.any.txt")
except ImportError as exc:
    print(exc)
del sys.modules["dask"]
if len(sys.argv) > 1:
    from distributed import Client
    from mixbayes.distributed import fit, read_docword
    small, large, address = sys.argv[1:]
    client = Client(address)
    model = mb.DirichletMultinomialMixture(5, n_init=1, random_state=0)
    # one-offs kept out of the measure: the kernels' first load, dask's lazy imports
    model.fit(mb.read_corpus(small).counts)
    client.gather(client.compute(list(read_docword(small, n_shards=2).counts.to_delayed().flat)))
    client.gather(client.scatter([model.weights_], broadcast=True))
    tracemalloc.start()
    # 5 iterations: the shards are read and held in the first (29 to converge cost 2 s more)
    warnings.simplefilter("ignore")
    fit(model.set_params(max_iter=5), read_docword(large, n_shards=8), start_sample=200)
    print(json.dumps({"peak": tracemalloc.get_traced_memory()[1], "elbo": model.elbo_}))
"""


def _write_docword(path, counts):
    X = sp.coo_matrix(counts)
    order = np.lexsort((X.col, X.row))
    body = np.column_stack([X.row[order] + 1, X.col[order] + 1, X.data[order]]).ravel()
    path.write_text(f"{X.shape[0]}\n{X.shape[1]}\n{X.nnz}\n" + ("%d %d %d\n" * X.nnz) % tuple(body))
    (path.parent / path.name.replace("docword", "vocab")).write_text(
        "\n".join(f"w{j}" for j in range(X.shape[1])))
    return str(path)


def test_client_loads_no_dask_names_the_extra_and_holds_no_corpus(tmp_path):
    try:
        import distributed
    except ImportError:
        distributed = None
    args = []
    if distributed is not None:
        rng = np.random.default_rng(0)  # the memory test needs size, not structure
        counts = sp.random(20_000, 500, density=0.08, format="csr", random_state=rng,
                           data_rvs=lambda size: rng.integers(1, 4, size))
        large = _write_docword(tmp_path / "docword.large.txt", counts)
        small = _write_docword(tmp_path / "docword.small.txt", counts[:300])
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1,
                                               processes=False, protocol="tcp://",
                                               dashboard_address=None)
        args = [small, large, cluster.scheduler_address]
    try:
        result = subprocess.run([sys.executable, "-c", CLIENT, *args], capture_output=True,
                                text=True, timeout=300)
    finally:
        if args:
            cluster.close()
    assert result.returncode == 0, result.stderr
    assert 'install them with pip install "mixbayes[distributed]"' in result.stdout
    if args:
        measured = json.loads(result.stdout.splitlines()[-1])
        # a shard's worth: its CSR arrays as the workers hold them (float64 values, int32
        # indices); the corpus is 8 shards (9.6 MB), the client peaks at about 1.3 MB (the
        # 200-document start sample, the K x p globals, dask's messages)
        counts = counts.astype(np.float64)
        shard = (counts.data.nbytes + counts.indices.nbytes + counts.indptr.nbytes) / 8
        assert measured["peak"] < 2 * shard, (measured["peak"], shard)
        assert np.isfinite(measured["elbo"])
