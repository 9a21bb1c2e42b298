"""The one place progress is reported: a tqdm bar when ``verbose`` is set, silence otherwise."""

import sys
import time
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
    for two seconds, and only when stderr is a terminal (a log file would fill with redrawn
    bars); ``verbose>=2`` shows it from the start, wherever stderr goes.

    The time estimate leaves out the first step, which on a first run also compiles the
    kernels (seconds against milliseconds): counted in, it would promise an hour for a minute.

    ``upper_bound=True`` says ``total`` is only a cap (``max_iter`` of a loop that stops when it
    converges): the bar then counts up without a time estimate, which would extrapolate to the
    cap and overstate the wait many times over.
    """
    if not verbose or (verbose == 1 and not _is_terminal(sys.stderr)):
        yield _Silent()
        return
    from tqdm.auto import tqdm

    options = dict(desc=desc, leave=False, dynamic_ncols=True, smoothing=0,
                   delay=DELAY if verbose == 1 else 0.0)
    if upper_bound:
        options["bar_format"] = "{desc}: {n_fmt} iterations (at most {total_fmt}) [{elapsed}{postfix}]"
    bar = _AfterFirstStep(tqdm(total=total, **options))
    try:
        yield bar
    finally:
        bar.close()


def _is_terminal(stream):
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


class _AfterFirstStep:
    """A tqdm bar whose rate (so its time estimate) counts from the end of the first step: with
    ``smoothing=0`` tqdm's rate is ``(n - initial) / (now - start_t)``."""

    def __init__(self, bar):
        self._bar, self._first = bar, True

    def update(self, n=1):
        self._bar.update(n)
        if self._first:
            self._first = False
            self._bar.initial = self._bar.n
            self._bar.start_t = time.time()

    def __getattr__(self, name):
        return getattr(self._bar, name)
