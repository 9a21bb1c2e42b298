"""scikit-learn's estimator checks.

The checks generate real-valued random data, while a Dirichlet–multinomial mixture models
counts and rejects fractional or negative values by design (its likelihood is undefined there).
So every check runs twice:

* on the estimator itself, where the checks that feed non-count data are expected to fail with
  our ``ValueError`` (and we assert that they do, so a silent change is noticed);
* on ``CountsFromReals``, a test-only subclass that maps the checks' real data to counts
 (``round(10 |x|)``) before the estimator's own validation; there every check must pass.

Every expected failure is a strict xfail naming the exception it expects and a pattern its
message (or the error it was raised from) must match: a check that starts passing, or fails with
another exception or for another reason, fails the test.
"""

import re
from typing import NamedTuple

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.utils.estimator_checks import (
    _check_name,
    _get_check_estimator_ids,
    estimator_checks_generator,
)

from mixbayes import DirichletMultinomialMixture, VariationalGaussianMixture

class Failure(NamedTuple):
    """An expected failure: the exception, a regular expression searched in its message and in
    the messages of the errors it was raised from, and why."""

    raises: type
    match: str
    reason: str


# checks that feed fractional or negative values: our estimator must refuse them (scikit-learn
# turns our ValueError into an AssertionError in five of them; the ValueError is its cause)
_FRACTIONAL = "feeds fractional/negative values; counts are required, so a ValueError is correct"
_WRAPPED = {"check_estimator_sparse_tag", "check_estimator_sparse_array",
            "check_estimator_sparse_matrix", "check_fit2d_1sample", "check_fit2d_1feature"}
NON_COUNT_CHECKS = {
    name: Failure(AssertionError if name in _WRAPPED else ValueError,
                  "fractional counts|negative counts", _FRACTIONAL)
    for name in [
        "check_estimators_dtypes", "check_fit_score_takes_y", "check_estimators_fit_returns_self",
        "check_pipeline_consistency", "check_estimators_overwrite_params",
        "check_estimator_sparse_array", "check_estimator_sparse_matrix", "check_estimators_pickle",
        "check_f_contiguous_array_estimator", "check_clustering",
        "check_non_transformer_estimators_n_iter", "check_methods_sample_order_invariance",
        "check_methods_subset_invariance", "check_fit2d_1sample", "check_fit2d_1feature",
        "check_dict_unchanged", "check_dont_overwrite_parameters", "check_fit_idempotent",
        "check_fit_check_is_fitted", "check_n_features_in", "check_fit2d_predict1d",
        "check_readonly_memmap_input", "check_estimator_sparse_tag",
        "check_dtype_object", "check_estimators_nan_inf",
        "check_n_features_in_after_fitting",
    ]
}


class CountsFromReals(DirichletMultinomialMixture):
    """Test adapter: turns the checks' real-valued data into counts, then behaves as the parent."""

    def _check_X(self, X, reset):
        if sp.issparse(X):
            X = sp.csr_matrix(X, copy=True)
            if X.dtype.kind == "f":
                X.data = np.round(10 * np.abs(X.data))
        else:
            arr = np.asarray(X)
            if arr.dtype == object:
                arr = arr.astype(float)  # the check's dict entry raises the TypeError it expects
            if arr.dtype.kind == "f" and arr.ndim == 2:
                X = np.round(10 * np.abs(arr))
        return super()._check_X(X, reset)


ADAPTER_CHECKS = {
    # the adapter takes |x| so that check_clustering's negative blobs become counts; the
    # estimator itself passes this check (negative counts raise "Negative values in data")
    "check_positive_only_tag_during_fit": Failure(
        AssertionError, "Did not raise", "the adapter maps negatives to counts on purpose"),
    # scikit-learn 1.9 reads classifier_tags.multi_class whenever predict_proba exists, which is
    # None for a clusterer; sparse input is covered by tests/mixture/test_dmm_vb.py
    "check_estimator_sparse_array": Failure(
        AssertionError, "multi_class", "scikit-learn assumes predict_proba means a classifier"),
    "check_estimator_sparse_matrix": Failure(
        AssertionError, "multi_class", "scikit-learn assumes predict_proba means a classifier"),
}


GAUSSIAN_CHECKS = {
    # a 1-D array is read as one feature on purpose: univariate data are a main use (so fitting
    # one does not raise, and predicting one is refused for its width, not its dimensions)
    "check_fit1d": Failure(AssertionError, "Did not raise", "1-D input is one feature by design"),
    "check_fit2d_predict1d": Failure(AssertionError, "X has 1 features, but",
                                     "1-D input is one feature by design"),
    # unneeded components switch off, so the labels in use need not be 0..m; renumbering them
    # would break the link between labels_ and weights_/means_ (scikit-learn's own Bayesian
    # mixture is not a clusterer and skips this check); a bare assert, hence no message to
    # match (both the plain and the read-only-memmap variants carry this name)
    "check_clustering": Failure(AssertionError, "",
                                "labels of switched-off components are absent on purpose"),
}


def _expected_failures(estimator):
    if type(estimator) is DirichletMultinomialMixture:
        return NON_COUNT_CHECKS
    if type(estimator) is VariationalGaussianMixture:
        return GAUSSIAN_CHECKS
    return ADAPTER_CHECKS


ESTIMATORS = [DirichletMultinomialMixture(3, n_init=1), CountsFromReals(3, n_init=1),
              VariationalGaussianMixture(3, max_iter=50)]


def _cases():
    """Every check of every estimator; the expected failures as strict xfails that name their
    exception."""
    for estimator in ESTIMATORS:
        expected = _expected_failures(estimator)
        for instance, check in estimator_checks_generator(estimator, mark=None):
            failure = expected.get(_check_name(check))
            marks = () if failure is None else pytest.mark.xfail(
                strict=True, raises=failure.raises, reason=failure.reason)
            yield pytest.param(instance, check, failure, marks=marks,
                               id=f"{_get_check_estimator_ids(instance)}-"
                                  f"{_get_check_estimator_ids(check)}")


def _messages(error):
    while error is not None:
        yield str(error)
        error = error.__cause__ or error.__context__


@pytest.mark.parametrize("estimator, check, failure", list(_cases()))
def test_sklearn_estimator_checks(estimator, check, failure):
    try:
        check(estimator)
    except Exception as error:
        if failure is not None and not any(re.search(failure.match, message)
                                           for message in _messages(error)):
            pytest.fail(f"expected a failure matching {failure.match!r}; got {error!r}")
        raise


def test_every_expected_failure_names_a_check_that_runs():
    """A renamed or removed check would leave its entry behind, silently excusing nothing."""
    for estimator in ESTIMATORS:
        names = {_check_name(check) for _, check in estimator_checks_generator(estimator)}
        assert set(_expected_failures(estimator)) <= names


def test_fractional_checks_fail_for_the_documented_reason():
    """The excluded checks fail because of counts validation, not for some other reason."""
    rng = np.random.RandomState(0)
    X = rng.uniform(size=(20, 5))
    with pytest.raises(ValueError, match="fractional counts"):
        DirichletMultinomialMixture(2).fit(X)
    with pytest.raises(ValueError, match="negative counts"):
        DirichletMultinomialMixture(2).fit(-np.ones((20, 5)))
