"""The one place progress is reported: a tqdm bar when ``verbose`` is set, silence otherwise."""

from contextlib import contextmanager

# shown after this many seconds at verbose=1, so that quick fits stay quiet
DELAY = 2.0


class _Silent:
    def update(self, n=1):
        pass

    def set_postfix_str(self, s, refresh=True):
        pass


@contextmanager
def progress(total, verbose, desc, upper_bound=False):
    """Yield an object with ``update(n)`` and ``set_postfix_str(text)``.

    ``verbose=0`` prints nothing; ``verbose=1`` shows a bar (on stderr) only once a loop has run
    for two seconds; ``verbose>=2`` shows it from the start.

    ``upper_bound=True`` says ``total`` is only a cap (``max_iter`` of a loop that stops when it
    converges): the bar then counts up without a time estimate, which would extrapolate to the
    cap and overstate the wait many times over.
    """
    if not verbose:
        yield _Silent()
        return
    from tqdm.auto import tqdm

    options = dict(desc=desc, leave=False, dynamic_ncols=True,
                   delay=DELAY if verbose == 1 else 0.0)
    if upper_bound:
        options["bar_format"] = "{desc}: {n_fmt} iterations (at most {total_fmt}) [{elapsed}{postfix}]"
    bar = tqdm(total=total, **options)
    try:
        yield bar
    finally:
        bar.close()
