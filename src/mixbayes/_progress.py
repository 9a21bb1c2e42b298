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

    Nothing is printed unless ``verbose`` is truthy; the bar goes to stderr.
    """
    if not verbose:
        yield _Silent()
        return
    from tqdm.auto import tqdm

    bar = tqdm(total=total, desc=desc, leave=False, dynamic_ncols=True)
    try:
        yield bar
    finally:
        bar.close()
