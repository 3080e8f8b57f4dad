"""offset= and trials= as arguments of fit and predict (issue 42), not columns of X: a
transformer of a Pipeline cannot rescale them; bic and aic on the estimators."""
import math

import numpy as np
import pytest

import moe

pipeline = pytest.importorskip("sklearn.pipeline")
preprocessing = pytest.importorskip("sklearn.preprocessing")

TRUTH_INTERCEPTS = (1.0, -1.0)
TRUTH_SLOPES = (2.0, -1.0)


def offset_regimes(n, seed):
    """x in [-1, 3] (neither centred nor of unit scale: a scaler changes it), an offset in
    [0, 4] (of mean 2: centred by a scaler, it would move the intercepts by 2), the gate P(expert 1 | x) = logistic(3 (x - 1)), experts 1 + 2x + offset
    and -1 - x + offset with noise 0.3."""
    rng = np.random.default_rng(seed)
    x = rng.uniform(-1.0, 3.0, n)
    offset = rng.uniform(0.0, 4.0, n)
    first = rng.uniform(size=n) < 1.0 / (1.0 + np.exp(-3.0 * (x - 1.0)))
    mean = np.where(first, TRUTH_INTERCEPTS[0] + TRUTH_SLOPES[0] * x,
                    TRUTH_INTERCEPTS[1] + TRUTH_SLOPES[1] * x)
    y = mean + offset + rng.normal(scale=0.3, size=n)
    return x.reshape(-1, 1), offset, y


def by_slope(intercepts, slopes):
    """(intercept, slope) of each expert, the expert of the larger slope first."""
    order = np.argsort(-slopes)
    return intercepts[order], slopes[order]


def test_a_scaler_in_a_pipeline_leaves_the_offset_alone():
    X, offset, y = offset_regimes(2000, 3)
    piped = pipeline.make_pipeline(preprocessing.StandardScaler(),
                                   moe.MoERegressor(random_state=0))
    piped.fit(X, y, moeregressor__offset=offset)
    # The same fit by hand on the standardized X, the offset as it is.
    scaler = preprocessing.StandardScaler().fit(X)
    direct = moe.MoERegressor(random_state=0).fit(scaler.transform(X), y, offset=offset)
    fitted = piped[-1]
    np.testing.assert_allclose(fitted.model_.experts, direct.model_.experts, rtol=1e-12)
    np.testing.assert_allclose(fitted.model_.gate, direct.model_.gate, rtol=1e-12)
    np.testing.assert_allclose(piped.predict(X, offset=offset),
                               direct.predict(scaler.transform(X), offset=offset), rtol=1e-12)
    # Back in x's units the truth comes out: slope_x = slope_z / sd, and the intercept
    # loses slope_x * mean.
    slopes = fitted.coef_[:, 0] / scaler.scale_[0]
    intercepts = fitted.intercept_ - slopes * scaler.mean_[0]
    intercepts, slopes = by_slope(intercepts, slopes)
    assert intercepts == pytest.approx(TRUTH_INTERCEPTS, abs=0.1)
    assert slopes == pytest.approx(TRUTH_SLOPES, abs=0.1)
    # Without the scaler, the same truth in x's units directly.
    plain = moe.MoERegressor(random_state=0).fit(X, y, offset=offset)
    intercepts, slopes = by_slope(plain.intercept_, plain.coef_[:, 0])
    assert intercepts == pytest.approx(TRUTH_INTERCEPTS, abs=0.1)
    assert slopes == pytest.approx(TRUTH_SLOPES, abs=0.1)
    assert plain.coef_.shape == (2, 1) and plain.n_features_in_ == 1
    # The offset's coefficient is held at 1 in the model, after X's columns.
    assert np.all(plain.model_.experts[:, 2] == 1.0) and plain.model_.offset == 1
    assert plain.model_.gate_features == [0]


def test_the_deprecated_offset_column_is_what_a_scaler_rescales():
    # What issue 42 reported: the column form in a Pipeline fits another model.
    X, offset, y = offset_regimes(2000, 3)
    design = np.column_stack([X, offset])
    piped = pipeline.make_pipeline(preprocessing.StandardScaler(),
                                   moe.MoERegressor(random_state=0, offset=1))
    with pytest.warns(DeprecationWarning, match=r"offset=column\) is deprecated"):
        piped.fit(design, y)
    scaler = piped[0]
    slopes = piped[-1].coef_[:, 0] / scaler.scale_[0]
    intercepts = piped[-1].intercept_ - slopes * scaler.mean_[0]
    intercepts, _ = by_slope(intercepts, slopes)
    assert not np.allclose(intercepts, TRUTH_INTERCEPTS, atol=0.1)


def test_the_argument_fits_the_model_of_the_deprecated_column():
    rng = np.random.default_rng(7)
    n = 2000
    x = rng.uniform(-1.0, 1.0, n)
    exposure = rng.uniform(0.5, 5.0, n)
    first = rng.uniform(size=n) < 1.0 / (1.0 + np.exp(-3.0 * x))
    y = rng.poisson(exposure * np.exp(np.where(first, 1.0 + 0.5 * x, -0.5 - 0.5 * x)))
    X = x.reshape(-1, 1)
    new = moe.MoERegressor(family="poisson", random_state=1).fit(X, y, offset=np.log(exposure))
    with pytest.warns(DeprecationWarning):
        old = moe.MoERegressor(family="poisson", random_state=1, offset=1).fit(
            np.column_stack([x, np.log(exposure)]), y)
    np.testing.assert_allclose(new.model_.experts, old.model_.experts, rtol=1e-10)
    np.testing.assert_allclose(new.model_.gate, old.model_.gate, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(new.predict(X, offset=np.log(exposure)),
                               old.predict(np.column_stack([x, np.log(exposure)])), rtol=1e-10)
    assert len(new.summary(X, y, offset=np.log(exposure))) == new.model_.n_free_params == 6
    assert "offset" not in " ".join(new.summary(X, y, offset=np.log(exposure)).names)


def test_binomial_trials_as_an_argument():
    rng = np.random.default_rng(5)
    n = 1500
    x = rng.uniform(-2.0, 2.0, n)
    trials = rng.integers(0, 16, size=n)
    first = rng.uniform(size=n) < 1.0 / (1.0 + np.exp(-2.0 * x))
    p = 1.0 / (1.0 + np.exp(-np.where(first, 1.0 + 2.0 * x, -1.0 - x)))
    y = rng.binomial(trials, p).astype(float)
    X = x.reshape(-1, 1)
    new = moe.MoERegressor(family="binomial", random_state=1).fit(X, y, trials=trials)
    with pytest.warns(DeprecationWarning, match="trials"):
        old = moe.MoERegressor(family="binomial", random_state=1, trials=1).fit(
            np.column_stack([x, trials]), y)
    np.testing.assert_allclose(new.model_.experts, old.model_.experts, rtol=1e-10)
    # The success probability needs no trials; the likelihood does.
    np.testing.assert_allclose(new.predict(X), old.predict(np.column_stack([x, trials])),
                               rtol=1e-10)
    assert new.loglik(X, y, trials=trials) == pytest.approx(
        old.loglik(np.column_stack([x, trials]), y), rel=1e-12)
    with pytest.raises(moe.MoeValueError, match="trials"):
        new.loglik(X, y)
    # A scaler cannot reach the trials either.
    piped = pipeline.make_pipeline(preprocessing.StandardScaler(),
                                   moe.MoERegressor(family="binomial", random_state=1))
    piped.fit(X, y, moeregressor__trials=trials)
    assert np.all(piped[-1].model_.experts[:, 2] == 0.0)  # trials: held, not a covariate


def test_the_offset_must_come_with_every_call_or_none():
    X, offset, y = offset_regimes(400, 4)
    with_offset = moe.MoERegressor(random_state=0).fit(X, y, offset=offset)
    without = moe.MoERegressor(random_state=0).fit(X, y)
    with pytest.raises(moe.MoeValueError, match="the fit had offset="):
        with_offset.predict(X)
    with pytest.raises(moe.MoeValueError, match="offset= was not given to fit"):
        without.predict(X, offset=offset)
    with pytest.raises(moe.MoeValueError, match="one value per row"):
        with_offset.predict(X, offset=offset[:10])
    with pytest.raises(moe.MoeValueError, match="given twice"):
        with pytest.warns(DeprecationWarning):
            moe.MoERegressor(offset=0).fit(np.column_stack([X, offset]), y, offset=offset)
    # score uses the offset: the mixture's mean moves with it.
    assert with_offset.score(X, y, offset=offset) > 0.7
    assert with_offset.score(X, y, offset=offset + 5.0) < 0.3


def test_classifier_offset_argument():
    rng = np.random.default_rng(11)
    n = 2000
    x = rng.uniform(-2.0, 2.0, n)
    offset = rng.normal(scale=2.0, size=n)
    first = rng.uniform(size=n) < 1.0 / (1.0 + np.exp(-3.0 * x))
    logit = np.where(first, 1.0 + 2.0 * x, -1.0 - 2.0 * x) + offset
    labels = np.where(rng.uniform(size=n) < 1.0 / (1.0 + np.exp(-logit)), "yes", "no")
    X = x.reshape(-1, 1)
    fit = moe.MoEClassifier(random_state=0).fit(X, labels, offset=offset)
    assert fit.coef_.shape == (2, 1)
    assert fit.score(X, labels, offset=offset) > 0.75
    proba = fit.predict_proba(X, offset=offset)
    assert proba.shape == (n, 2)
    np.testing.assert_array_equal(fit.predict(X, offset=offset),
                                  fit.classes_[(proba[:, 1] > 0.5).astype(int)])
    with pytest.raises(moe.MoeValueError, match="offset"):
        fit.predict(X)


def gaussian_loglik(fit, X, y, offset):
    """The log-likelihood of the fitted Gaussian mixture, computed here from its parameters
    (softmax gate, normal experts), not by libmoe."""
    x = X[:, 0]
    gate = fit.gate_intercept_[None, :] + np.outer(x, fit.gate_coef_[:, 0])
    gate = np.exp(gate - gate.max(axis=1, keepdims=True))
    gate /= gate.sum(axis=1, keepdims=True)
    mean = fit.intercept_[None, :] + np.outer(x, fit.coef_[:, 0]) + offset[:, None]
    variance = fit.variances_[None, :]
    density = np.exp(-0.5 * (y[:, None] - mean) ** 2 / variance) / np.sqrt(2 * np.pi * variance)
    return float(np.sum(np.log(np.sum(gate * density, axis=1))))


def test_bic_and_aic_of_the_estimator():
    X, offset, y = offset_regimes(1000, 8)
    train, test = slice(0, 700), slice(700, None)
    fit = moe.MoERegressor(random_state=0).fit(X[train], y[train], offset=offset[train])
    # 2 experts, 1 feature: gate 1 x 2, experts 2 x 2, 2 variances (the offset is held).
    k = 1 * 2 + 2 * 2 + 2
    for rows in (train, test):
        n = len(y[rows])
        loglik = gaussian_loglik(fit, X[rows], y[rows], offset[rows])
        assert fit.loglik(X[rows], y[rows], offset=offset[rows]) == pytest.approx(loglik,
                                                                                   rel=1e-9)
        assert fit.bic(X[rows], y[rows], offset=offset[rows]) == pytest.approx(
            -2 * loglik + k * math.log(n), rel=1e-9)
        assert fit.aic(X[rows], y[rows], offset=offset[rows]) == pytest.approx(
            -2 * loglik + 2 * k, rel=1e-9)
    with pytest.raises(moe.MoeValueError, match="offset"):
        fit.bic(X[test], y[test])


def test_bic_of_the_classifier_takes_labels():
    rng = np.random.default_rng(12)
    n = 800
    x = rng.uniform(-2.0, 2.0, n)
    first = rng.uniform(size=n) < 1.0 / (1.0 + np.exp(-3.0 * x))
    p = 1.0 / (1.0 + np.exp(-np.where(first, 1.0 + 3.0 * x, -2.0 * x)))
    labels = np.where(rng.uniform(size=n) < p, "b", "a")
    X = x.reshape(-1, 1)
    fit = moe.MoEClassifier(random_state=0).fit(X, labels)
    gate = fit.gate_intercept_[None, :] + np.outer(x, fit.gate_coef_[:, 0])
    gate = np.exp(gate - gate.max(axis=1, keepdims=True))
    gate /= gate.sum(axis=1, keepdims=True)
    # The logistic function as tanh: no overflow where an expert's slope is steep.
    success = 0.5 * (1.0 + np.tanh(0.5 * (fit.intercept_[None, :] + np.outer(x, fit.coef_[:, 0]))))
    is_b = (labels == "b")[:, None]
    loglik = np.sum(np.log(np.sum(gate * np.where(is_b, success, 1.0 - success), axis=1)))
    k = 1 * 2 + 2 * 2  # gate 1 x 2, experts 2 x 2
    assert fit.bic(X, labels) == pytest.approx(-2 * loglik + k * math.log(n), rel=1e-9)
    assert fit.aic(X, labels) == pytest.approx(-2 * loglik + 2 * k, rel=1e-9)
