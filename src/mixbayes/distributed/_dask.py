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
        return client
    try:
        return distributed.default_client()
    except ValueError:
        raise ValueError(
            "X is dask data but no dask client is running: start one first "
            "(distributed.Client() for a cluster on this machine, "
            "distributed.Client('tcp://HOST:8786') for a running scheduler), or pass client= "
            "to mixbayes.distributed.fit."
        ) from None


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
