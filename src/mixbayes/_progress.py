"""The one place progress is reported: a tqdm bar when ``verbose`` is set, silence otherwise."""

from contextlib import contextmanager


class _Silent:
    def update(self, n=1):
        pass

    def set_postfix_str(self, s, refresh=True):
        pass


@contextmanager
def progress(total, verbose, desc):
    """Yield an object with ``update(n)`` and ``set_postfix_str(text)``.

    ``verbose=0`` prints nothing; ``verbose=1`` shows a bar (on stderr) only once a loop has run
    for a second, so quick fits stay quiet; ``verbose>=2`` shows it from the start.
    """
    if not verbose:
        yield _Silent()
        return
    from tqdm.auto import tqdm

    bar = tqdm(total=total, desc=desc, leave=False, dynamic_ncols=True,
               delay=1.0 if verbose == 1 else 0.0)
    try:
        yield bar
    finally:
        bar.close()
