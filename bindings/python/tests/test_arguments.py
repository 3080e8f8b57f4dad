"""Arguments the binding must refuse before they reach libmoe (lengths, counts, NULs),
pickled streams that go on, and fits cut short by Ctrl-C."""
import _thread
import pickle
import threading

import numpy as np
import pytest

import moe


def regimes(n=600, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 2))
    first = rng.uniform(size=n) < 1.0 / (1.0 + np.exp(-3.0 * X[:, 0]))
    y = np.where(first, 1.0 + 2.0 * X[:, 1], -1.0 - X[:, 1]) + 0.3 * rng.normal(size=n)
    return X, y


@pytest.fixture(scope="module")
def fitted():
    X, y = regimes(400, 1)
    return moe.MoERegressor(n_experts=2, random_state=0, n_init=1).fit(X, y), X, y


# ---- 16: every per-row array has one value per row of X -------------------------------------
MODEL_METHODS = {
    "loglik": lambda model, X, y, w: model.loglik(X, y, w),
    "criteria": lambda model, X, y, w: model.criteria(X, y, w),
    "vcov": lambda model, X, y, w: model.vcov(X, y, w),
    "posterior": lambda model, X, y, w: model.posterior(X, y),
}


WRONG_LENGTH = r"{} has (\d+ values?|shape \(\d+, \d+\)) for 400 rows of X"


@pytest.mark.parametrize("method", sorted(MODEL_METHODS))
def test_a_short_or_long_response_is_refused(fitted, method):
    fit, X, y = fitted
    call = MODEL_METHODS[method]
    for wrong in (y[:-1], y[:10], np.append(y, 0.0), y.reshape(-1, 2), y[:1]):
        with pytest.raises(ValueError, match=WRONG_LENGTH.format("y")):
            call(fit.model_, X, wrong, None)


@pytest.mark.parametrize("method", ["loglik", "criteria", "vcov"])
def test_short_or_long_weights_are_refused(fitted, method):
    fit, X, y = fitted
    call = MODEL_METHODS[method]
    for wrong in (np.ones(399), np.ones(5), np.ones(401), np.ones((200, 2)), 1.0):
        with pytest.raises(ValueError, match=WRONG_LENGTH.format("sample_weight")):
            call(fit.model_, X, y, wrong)
    assert call(fit.model_, X, y, np.ones(400)) is not None


def test_the_estimators_check_lengths_too(fitted):
    fit, X, y = fitted
    with pytest.raises(ValueError, match="y has 399 values for 400 rows"):
        fit.loglik(X, y[:-1])
    with pytest.raises(ValueError, match="sample_weight has 3 values for 400 rows"):
        fit.loglik(X, y, np.ones(3))
    assert fit.loglik(X, y, np.ones(400)) == fit.loglik(X, y)
    rng = np.random.default_rng(3)
    labels = (X[:, 0] > 0).astype(int)
    classifier = moe.MoEClassifier(n_experts=2, random_state=0, n_init=1).fit(X, labels)
    with pytest.raises(ValueError, match="y has 399 values for 400 rows"):
        classifier.loglik(X, labels[:-1])
    with pytest.raises(ValueError, match="sample_weight has 2 values for 400 rows"):
        classifier.loglik(X, labels, rng.uniform(size=2))


def test_the_column_count_is_the_models(fitted):
    fit, X, y = fitted
    for method in ("loglik", "criteria", "vcov", "posterior"):
        with pytest.raises(ValueError, match="X has 3 features, the model 2"):
            MODEL_METHODS[method](fit.model_, np.zeros((400, 3)), y, None)
    with pytest.raises(ValueError, match="X has 1 features, the model 2"):
        fit.model_.predict(X[:, :1])


def test_fit_checks_weights_without_scikit_learn(monkeypatch):
    from moe import estimators
    monkeypatch.setattr(estimators, "HAVE_SKLEARN", False)
    X, y = regimes(300, 2)
    with pytest.raises(ValueError, match="sample_weight has 299 values for 300 rows"):
        moe.MoERegressor(n_init=1).fit(X, y, np.ones(299))
    with pytest.raises(ValueError, match="y has 299 values for 300 rows"):
        moe.MoERegressor(n_init=1).fit(X, y[:-1])
    labels = (X[:, 0] > 0).astype(int)
    with pytest.raises(ValueError, match="sample_weight has 299 values for 300 rows"):
        moe.MoEClassifier(n_init=1).fit(X, labels, np.ones(299))


# ---- 17: a pickled stream goes on where it stopped -------------------------------------------
def test_a_pickled_stream_continues_bit_for_bit():
    X, y = regimes(3000, 4)
    batches = [(X[i:i + 300], y[i:i + 300]) for i in range(0, 3000, 300)]
    stream = moe.MoERegressor(n_experts=2, estimator="ismm", random_state=3,
                              options={"batch_size": 50})
    for Xb, yb in batches[:4]:
        stream.partial_fit(Xb, yb)
    copy = pickle.loads(pickle.dumps(stream))
    for Xb, yb in batches[4:]:
        stream.partial_fit(Xb, yb)
        copy.partial_fit(Xb, yb)
        assert copy.model_.to_bytes() == stream.model_.to_bytes()
    assert np.array_equal(copy.predict(X), stream.predict(X))
    # A pickle of the copy also keeps its options: the same stream once more.
    again = pickle.loads(pickle.dumps(copy))
    copy.partial_fit(*batches[0])
    again.partial_fit(*batches[0])
    assert again.model_.to_bytes() == copy.model_.to_bytes()


def test_an_unfitted_or_fully_fitted_estimator_still_pickles():
    X, y = regimes(400, 5)
    assert pickle.loads(pickle.dumps(moe.MoERegressor(n_experts=3))).n_experts == 3
    fit = moe.MoERegressor(n_experts=2, random_state=0, n_init=1).fit(X, y)
    again = pickle.loads(pickle.dumps(fit))
    assert np.array_equal(again.predict(X), fit.predict(X))


# ---- 18: NUL bytes are refused, not truncated ------------------------------------------------
@pytest.mark.parametrize("options", [{"tol\0x": 1}, {"tol": "1e-3\0junk"}, {"\0": 1},
                                     {"init": "kmeans\0"}])
def test_nul_in_an_option_is_refused(options):
    X, y = regimes(300, 6)
    with pytest.raises(ValueError, match="NUL"):
        moe.MoERegressor(n_init=1, options=options).fit(X, y)


def test_nul_in_an_estimator_or_a_path_is_refused(fitted, tmp_path):
    fit, X, y = fitted
    with pytest.raises(ValueError, match="NUL"):
        moe.MoERegressor(estimator="em\0junk", n_init=1).fit(X, y)
    with pytest.raises(ValueError, match="NUL"):
        moe.MoERegressor(init="kmeans\0junk", n_init=1).fit(X, y)
    target = tmp_path / "model.moe"
    with pytest.raises(ValueError, match="NUL"):
        fit.model_.save(str(target) + "\0.txt")
    assert not target.exists()
    with pytest.raises(ValueError, match="NUL"):
        moe.Model.load(str(target) + "\0.txt")


# ---- 19: counts are whole positive numbers, values are single and not NaN --------------------
@pytest.mark.parametrize("n_experts", [-1, 0, 2.7, np.nan, "2", True, [2, 3], 2**70])
def test_a_bad_number_of_experts_is_refused(n_experts):
    X, y = regimes(300, 7)
    with pytest.raises(ValueError, match="n_experts (must be a whole number|takes one value)") \
            as error:
        moe.MoERegressor(n_experts=n_experts, n_init=1).fit(X, y)
    assert "18446744073709551" not in str(error.value)


def test_model_create_checks_its_sizes():
    for name in ("n_experts", "n_features", "n_classes"):
        arguments = {"n_experts": 2, "n_features": 2, name: -1}
        with pytest.raises(ValueError, match=f"{name} must be a whole number") as error:
            moe.Model.create(**arguments)
        assert "18446744073709551" not in str(error.value)


@pytest.mark.parametrize("keyword, value, message", [
    ("max_iter", 0, r"max_iter must be a whole number in \[1, "),
    ("max_iter", -5, r"max_iter must be a whole number in \[1, "),
    ("max_iter", 2.5, "max_iter must be a whole number"),
    ("max_iter", np.nan, "max_iter must be a whole number"),
    ("max_iter", [10, 20], "max_iter takes one value"),
    ("n_init", 0, "n_init must be a whole number"),
    ("threads", -1, "threads must be a whole number"),
    ("tol", np.nan, r"tol must be a number in \[0, 1\]"),
    ("tol", float("inf"), "tol must be a number"),
    ("tol", -1e-3, "tol must be a number"),
    ("tol", np.array([1e-3, 1e-4]), "tol takes one value"),
    ("batch_size", -10, "batch_size must be a whole number"),
    ("gate_l2", None, None),
])
def test_bad_option_values_are_refused_up_front(keyword, value, message):
    X, y = regimes(300, 8)
    estimator = moe.MoERegressor(**{"n_init": 1, keyword: value})
    if message is None:
        estimator.fit(X, y)
        return
    with pytest.raises(ValueError, match=message):
        estimator.fit(X, y)


def test_bad_seeds_and_estimator_options_are_refused():
    X, y = regimes(300, 9)
    with pytest.raises(ValueError, match="random_state must be a whole number"):
        moe.MoERegressor(random_state=-1, n_init=1).fit(X, y)
    with pytest.raises(ValueError, match="random_state must be a whole number"):
        moe.MoERegressor(random_state=1.5, n_init=1).fit(X, y)
    # Options of one estimator: checked against the bounds the library lists for them.
    with pytest.raises(ValueError, match="step_scale takes one value"):
        moe.MoERegressor(estimator="ismm", options={"step_scale": [0.5, 0.6]}).fit(X, y)
    with pytest.raises(ValueError, match=r"step_scale must be a number in \(0, 1\], got nan"):
        moe.MoERegressor(estimator="ismm", options={"step_scale": np.nan}).fit(X, y)
    # A name no estimator has: one finite value, then the library's own refusal.
    with pytest.raises(ValueError, match="no_such must be a finite number"):
        moe.MoERegressor(estimator="ismm", options={"no_such": np.inf}).fit(X, y)
    with pytest.raises(ValueError, match="option step_scale takes a number, a bool or a string"):
        moe.MoERegressor(estimator="ismm", options={"step_scale": {1: 2}}).fit(X, y)


def test_whole_numbers_of_any_type_are_counts():
    X, y = regimes(500, 10)
    reference = moe.MoERegressor(n_experts=2, max_iter=3, n_init=1, random_state=0).fit(X, y)
    for count, seed in ((np.int64(3), np.int32(0)), (3.0, 0.0), (np.float64(3.0), 0)):
        fit = moe.MoERegressor(n_experts=np.int64(2), max_iter=count, n_init=1.0,
                               random_state=seed).fit(X, y)
        assert fit.n_iter_ == reference.n_iter_
        assert fit.model_.to_bytes() == reference.model_.to_bytes()


# ---- 20: Ctrl-C leaves the estimator as it was -----------------------------------------------
def interrupted_fit(estimator, X, y, delay=0.3):
    """fit() with a simulated Ctrl-C after `delay` seconds; the KeyboardInterrupt it raised."""
    timer = threading.Timer(delay, _thread.interrupt_main)
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt) as error:
            estimator.fit(X, y)
    finally:
        timer.cancel()
    return error.value


def endless(n_experts=3, **keywords):
    """A fit that runs far longer than the interrupt's delay. tol = 0 alone does not make a
    fit endless: an exactly unchanged log-likelihood stops it, and on 20000 rows of
    regimes() that came after 0.8 s, close enough to the 0.3 s delay for a loaded machine
    to finish first; callers give it enough rows."""
    return moe.MoERegressor(n_experts=n_experts, max_iter=10**9, tol=0, n_init=1,
                            random_state=0, **keywords)


def test_an_interrupted_first_fit_leaves_nothing_fitted():
    X, y = regimes(200000, 11)
    estimator = endless()
    error = interrupted_fit(estimator, X, y)
    assert "cancelled" in str(error)
    fitted_attributes = [name for name in vars(estimator) if name.endswith("_")
                         and not name.startswith("__")]
    assert fitted_attributes == []
    assert not hasattr(estimator, "model_") and not hasattr(estimator, "_fitter")
    with pytest.raises((AttributeError, ValueError)):  # scikit-learn's NotFittedError
        estimator.predict(X)


def test_an_interrupted_refit_keeps_the_previous_fit():
    X, y = regimes(600, 12)
    estimator = endless()
    estimator.set_params(max_iter=5).fit(X, y)
    before = {name: getattr(estimator, name) for name in ("n_features_in_", "n_iter_",
                                                           "converged_")}
    model_bytes = estimator.model_.to_bytes()
    wide = np.column_stack([regimes(20000, 13)[0], np.ones(20000)])
    error = interrupted_fit(estimator.set_params(max_iter=10**9), wide, regimes(20000, 13)[1])
    assert "cancelled" in str(error)
    assert estimator.model_.to_bytes() == model_bytes
    assert {name: getattr(estimator, name) for name in before} == before
    assert estimator.predict(X).shape == (600,)


def test_an_interrupted_classifier_keeps_its_classes():
    rng = np.random.default_rng(14)
    X = rng.normal(size=(600, 2))
    labels = np.where(X[:, 0] > 0, "b", "a")
    classifier = moe.MoEClassifier(n_experts=2, n_init=1, random_state=0).fit(X, labels)
    model_bytes = classifier.model_.to_bytes()
    big = rng.normal(size=(30000, 2))
    three = np.digitize(big[:, 0], [-0.5, 0.5])
    classifier.set_params(max_iter=10**9, tol=0, n_experts=3)
    timer = threading.Timer(0.3, _thread.interrupt_main)
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt, match="cancelled"):
            classifier.fit(big, three)
    finally:
        timer.cancel()
    assert list(classifier.classes_) == ["a", "b"]
    assert classifier.model_.to_bytes() == model_bytes
    assert set(classifier.predict(X)) <= {"a", "b"}


def test_an_interrupted_partial_fit_keeps_the_stream():
    X, y = regimes(4000, 15)
    options = {"batch_size": 20}
    stream = moe.MoERegressor(n_experts=2, estimator="ismm", random_state=1, options=options)
    twin = moe.MoERegressor(n_experts=2, estimator="ismm", random_state=1, options=options)
    for model in (stream, twin):
        model.partial_fit(X[:400], y[:400])
    # Cancel through the callback as Ctrl-C does, at the first iteration of the next batch.
    stream._fitter._interrupted = True
    with pytest.raises(KeyboardInterrupt, match="cancelled"):
        stream.partial_fit(X[400:4000], y[400:4000])
    assert stream.model_.to_bytes() == twin.model_.to_bytes()
    stream._fitter._interrupted = False
    stream.partial_fit(X[400:800], y[400:800])
    twin.partial_fit(X[400:800], y[400:800])
    assert stream.model_.to_bytes() == twin.model_.to_bytes()
