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
