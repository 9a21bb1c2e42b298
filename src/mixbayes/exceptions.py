"""Typed warnings and errors raised by mixbayes."""

from sklearn.exceptions import ConvergenceWarning as _SklearnConvergenceWarning


class ConvergenceWarning(_SklearnConvergenceWarning):
    """An iterative fit stopped at ``max_iter`` before meeting its tolerance.

    Subclasses scikit-learn's warning, so filters written for either catch it. The fitted
    model is still usable; its ``converged_`` attribute is ``False``.
    """
