"""dask, imported only when a distributed fit or read is asked for."""

INSTALL = 'pip install "mixbayes[distributed]"'


def require():
    """Return ``(dask, dask.array, distributed)``, or raise an ImportError saying how to
    install them."""
    try:
        import dask
        import dask.array
        import distributed
    except ImportError as exc:
        raise ImportError(
            f"mixbayes.distributed needs dask and dask.distributed ({exc}); install them with "
            f"{INSTALL}."
        ) from None
    return dask, dask.array, distributed


def get_client(client):
    """``client`` itself, or the running default client, or a ValueError saying how to start one."""
    distributed = require()[2]
    if client is not None:
        # a closed client fails later, deep in dask (KeyError: 'workers'), or waits forever
        if getattr(client, "status", "running") in ("closing", "closed"):
            raise ValueError("client: the dask client is closed; pass a running one (or start "
                             "a new distributed.Client).")
        return client
    try:
        return distributed.default_client()
    except ValueError:
        raise ValueError(
            "this runs on a dask cluster (dask data, a sharded read, mixbayes.distributed.fit or "
            "engine), but no dask client is running: start one first "
            "(distributed.Client() for a cluster on this machine, "
            "distributed.Client('tcp://HOST:8786') for a running scheduler), or pass client= "
            "to mixbayes.distributed.fit."
        ) from None


class Homes:
    """A worker for every shard, round robin, that each task on the shard is asked of.

    Left to itself the scheduler puts a task where it sees room at the moment, and where a
    shard's data lie it stays: a fit's eight shards ended five on one worker and three on the
    other, and every iteration waited for the five. So every task on shard ``i`` is asked of
    ``of[i]``, loosely (``allow_other_workers``): a shard whose home is gone (a lost worker, as
    dask recomputes it) runs elsewhere.
    """

    def __init__(self, client, n):
        workers = sorted(client.scheduler_info()["workers"])
        self.client = client
        self.of = [workers[i % len(workers)] if workers else None for i in range(n)]

    def _where(self, i):
        home = self.of[i]
        return {} if home is None else dict(workers=[home], allow_other_workers=True)

    def submit(self, i, function, *args, **kwargs):
        """``client.submit(function, *args)`` at shard ``i``'s home."""
        return self.client.submit(function, *args, **kwargs, **self._where(i))

    def compute(self, blocks):
        """Futures of the dask objects ``blocks``, block ``i`` computed at shard ``i``'s home."""
        return [self.client.compute(block, **self._where(i)) for i, block in enumerate(blocks)]

    def subset(self, keep):
        """The homes of the shards ``keep`` (booleans), in order."""
        twin = Homes.__new__(Homes)
        twin.client, twin.of = self.client, [home for home, k in zip(self.of, keep) if k]
        return twin


def spread(client, blocks):
    """Futures of the dask objects ``blocks`` (shards), computed on the workers in turn
    (see :class:`Homes`)."""
    return Homes(client, len(blocks)).compute(blocks)


FAN_IN = 8  # parts summed per reduce task


def tree_reduce(client, parts, add, first=None):
    """The future of ``add(*parts)`` computed by a tree of tasks on the workers (``FAN_IN`` parts
    each), after at least one round (so that a lone part passes through it too).

    ``first``, when given, is applied to every part alone before the sum, as a task of its
    own, which dask runs on the worker holding the part: only what it returns (statistics)
    travels to the reduce, not the part (a shard's labels, or its documents and weights).
    """
    if first is not None:
        parts = [client.submit(first, part, pure=False) for part in parts]
    while True:
        parts = [client.submit(add, *parts[i:i + FAN_IN], pure=False)
                 for i in range(0, len(parts), FAN_IN)]
        if len(parts) == 1:
            return parts[0]


def total(*parts):
    """The sum of ``parts`` by their ``+`` (statistics, arrays, numbers)."""
    result = parts[0]
    for part in parts[1:]:
        result = result + part
    return result


def scatter(client, value):
    """``value`` sent once to every worker, as a future (in a list: scatter would split a
    bare tuple; ``hash=False``: equal values of two iterations must not share a key that the
    earlier one's release may drop)."""
    return client.scatter([value], broadcast=True, hash=False)[0]
