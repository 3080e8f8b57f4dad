"""Column names: feature_names_in_ from a fit on a data frame, and predict, score and the rest
refusing columns other than the fit's (reordered, missing or extra), as scikit-learn does.

pandas is optional: every test runs with Frame, a minimal stand-in (string column names and
an __array__), and again with pandas.DataFrame when pandas is installed."""
import re
import warnings

import numpy as np
import pytest

import moe
from frames import Frame


def pandas_frame(values, columns):
    pandas = pytest.importorskip("pandas")
    return pandas.DataFrame(np.asarray(values), columns=list(columns))


@pytest.fixture(params=[Frame, pandas_frame], ids=["stand-in", "pandas"])
def make_frame(request):
    return request.param


def data(n=600, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    first = rng.uniform(size=n) < 1.0 / (1.0 + np.exp(-3.0 * X[:, 0]))
    y = np.where(first, 1.0 + 2.0 * X[:, 1], -1.0 - X[:, 2]) + 0.3 * rng.normal(size=n)
    return X, y


NAMES = ["a", "b", "c"]


@pytest.fixture
def regressor(make_frame):
    X, y = data()
    return moe.MoERegressor(n_experts=2, random_state=0, n_init=1).fit(make_frame(X, NAMES),
                                                                      y), X, y


@pytest.fixture
def classifier(make_frame):
    X, _ = data()
    labels = np.where(X[:, 0] + X[:, 1] > 0, "up", "down")
    return moe.MoEClassifier(n_experts=2, random_state=0, n_init=1).fit(make_frame(X, NAMES),
                                                                       labels), X, labels


def test_reordered_columns_do_not_give_other_answers_silently(regressor, make_frame):
    # The same data with two columns swapped, names and all: before feature_names_in_, predict
    # read the columns by position and answered for other data without a word.
    fit, X, _ = regressor
    swapped = make_frame(X[:, [1, 0, 2]], ["b", "a", "c"])
    try:
        answer = fit.predict(swapped)
    except ValueError:
        return
    np.testing.assert_array_equal(answer, fit.predict(make_frame(X, NAMES)))


def test_a_fit_on_a_frame_records_its_columns(regressor, classifier):
    for fit, _, _ in (regressor, classifier):
        assert list(fit.feature_names_in_) == NAMES
        assert fit.feature_names_in_.dtype == object
        assert fit.n_features_in_ == 3


def test_a_fit_on_an_array_has_no_feature_names():
    X, y = data(300)
    fit = moe.MoERegressor(n_experts=2, random_state=0, n_init=1).fit(X, y)
    assert fit.n_features_in_ == 3
    assert not hasattr(fit, "feature_names_in_")


def test_the_same_columns_give_the_arrays_answers(regressor, make_frame):
    fit, X, y = regressor
    plain = moe.MoERegressor(n_experts=2, random_state=0, n_init=1).fit(X, y)
    frame = make_frame(X, NAMES)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert fit.model_.to_bytes() == plain.model_.to_bytes()
        np.testing.assert_array_equal(fit.predict(frame), plain.predict(X))
        assert fit.score(frame, y) == plain.score(X, y)
        assert fit.loglik(frame, y) == plain.loglik(X, y)


# scikit-learn's message, which its check_dataframe_column_names_consistency matches (a check
# that runs only where pandas is installed), then the remedy.
HEADING = "The feature names should match those that were passed during fit.\n"
REORDERED = re.escape(HEADING + "Feature names must be in the same order as they were in fit.\n"
                      "Select the fit's columns in its order with X[estimator.feature_names_in_].")


def test_reordered_columns_are_refused_by_every_method(regressor, classifier, make_frame):
    swapped = make_frame(data()[0][:, [1, 0, 2]], ["b", "a", "c"])
    fit, _, y = regressor
    calls = [lambda: fit.predict(swapped), lambda: fit.score(swapped, y),
             lambda: fit.loglik(swapped, y), lambda: fit.predict_cluster(swapped),
             lambda: fit.predict_cluster(swapped, y), lambda: fit.summary(swapped, y)]
    fit, _, labels = classifier
    calls += [lambda: fit.predict(swapped), lambda: fit.predict_proba(swapped),
              lambda: fit.score(swapped, labels), lambda: fit.loglik(swapped, labels)]
    for call in calls:
        with pytest.raises(ValueError, match=REORDERED):
            call()


def test_missing_or_extra_columns_are_refused(regressor, make_frame):
    fit, X, y = regressor
    with pytest.raises(ValueError, match=re.escape(
            HEADING + "Feature names seen at fit time, yet now missing:\n- c\n")):
        fit.predict(make_frame(X[:, :2], ["a", "b"]))
    with pytest.raises(ValueError, match=re.escape(
            HEADING + "Feature names unseen at fit time:\n- d\n"
            "Feature names seen at fit time, yet now missing:\n- c\n")):
        fit.predict(make_frame(X, ["a", "b", "d"]))
    wide = np.column_stack([X, X[:, 0]])
    with pytest.raises(ValueError, match=re.escape(HEADING + "Feature names unseen at fit "
                                                   "time:\n- d\n")):
        fit.predict(make_frame(wide, ["a", "b", "c", "d"]))
    with pytest.raises(ValueError, match="each as often"):
        fit.predict(make_frame(wide, ["a", "b", "c", "a"]))


def test_a_long_list_of_other_columns_is_cut():
    X, y = data(300, 5)
    wide = np.column_stack([X] * 4)
    fit = moe.MoERegressor(n_experts=1, n_init=1).fit(Frame(wide, [f"f{i:02}" for i in
                                                                   range(12)]), y)
    with pytest.raises(ValueError, match=re.escape(
            "unseen at fit time:\n- g00\n- g01\n- g02\n- g03\n- g04\n- ...\n")):
        fit.predict(Frame(wide, [f"g{i:02}" for i in range(12)]))


def test_an_array_after_a_frame_is_taken_with_a_warning(regressor):
    fit, X, _ = regressor
    with pytest.warns(UserWarning, match="X does not have valid feature names, but "
                                         "MoERegressor was fitted with feature names"):
        answer = fit.predict(X)
    np.testing.assert_array_equal(answer, fit.model_.predict(X))


def test_a_frame_after_an_array_is_taken_with_a_warning(make_frame):
    X, y = data(400)
    fit = moe.MoERegressor(n_experts=2, random_state=0, n_init=1).fit(X, y)
    with pytest.warns(UserWarning, match="X has feature names, but MoERegressor was fitted "
                                         "without feature names"):
        fit.predict(make_frame(X, NAMES))


def test_a_refit_on_an_array_forgets_the_names(regressor):
    fit, X, y = regressor
    fit.fit(X, y)
    assert not hasattr(fit, "feature_names_in_")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        fit.predict(X)


def test_a_stream_keeps_the_columns_of_its_first_batch(make_frame):
    X, y = data(1200, 3)
    stream = moe.MoERegressor(n_experts=2, estimator="ismm", random_state=0,
                              options={"batch_size": 50})
    stream.partial_fit(make_frame(X[:600], NAMES), y[:600])
    assert list(stream.feature_names_in_) == NAMES
    before = stream.model_.to_bytes()
    with pytest.raises(ValueError, match=REORDERED):
        stream.partial_fit(make_frame(X[600:, [2, 1, 0]], ["c", "b", "a"]), y[600:])
    assert stream.model_.to_bytes() == before
    stream.partial_fit(make_frame(X[600:], NAMES), y[600:])


def test_names_that_are_not_all_strings():
    X, y = data(300)
    numbered = moe.MoERegressor(n_experts=2, random_state=0, n_init=1).fit(Frame(X, [0, 1, 2]),
                                                                           y)
    assert not hasattr(numbered, "feature_names_in_")
    with pytest.raises(TypeError, match="all strings"):
        moe.MoERegressor(n_init=1).fit(Frame(X, ["a", 1, "c"]), y)


def test_columns_are_checked_without_scikit_learn(monkeypatch):
    from moe import estimators
    monkeypatch.setattr(estimators, "HAVE_SKLEARN", False)
    X, y = data(400, 4)
    fit = moe.MoERegressor(n_experts=2, random_state=0, n_init=1).fit(Frame(X, NAMES), y)
    assert list(fit.feature_names_in_) == NAMES
    with pytest.raises(ValueError, match=REORDERED):
        fit.predict(Frame(X[:, [1, 0, 2]], ["b", "a", "c"]))
    with pytest.warns(UserWarning, match="X does not have valid feature names"):
        fit.predict(X)


class StandInPandas:
    """Just enough of pandas for scikit-learn's check_dataframe_column_names_consistency:
    DataFrame(values, columns), and DataFrame(frame, columns) selecting columns by name
    (a name the frame lacks gives NaN, as pandas' reindexing)."""

    class DataFrame(Frame):
        def __init__(self, data, columns):
            if isinstance(data, Frame):
                by_name = dict(zip(data.columns, data.values.T))
                missing = np.full(data.values.shape[0], np.nan)
                data = np.column_stack([by_name.get(name, missing) for name in columns])
            super().__init__(data, columns)


@pytest.mark.parametrize("make", [
    lambda: moe.MoERegressor(random_state=0, n_init=1),
    lambda: moe.MoERegressor(random_state=0, estimator="ismm"),  # and partial_fit's check
    lambda: moe.MoEClassifier(random_state=0, n_init=1)])
def test_scikit_learns_column_names_check(make, monkeypatch):
    # The check skips itself without pandas: run it here with the stand-in, so that it holds
    # where pandas is installed too.
    checks = pytest.importorskip("sklearn.utils.estimator_checks")
    import sys
    monkeypatch.setitem(sys.modules, "pandas", StandInPandas)
    estimator = make()
    checks.check_dataframe_column_names_consistency(type(estimator).__name__, estimator)
