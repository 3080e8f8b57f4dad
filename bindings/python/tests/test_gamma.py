"""Gamma experts (libmoe 1.2) through MoERegressor(family="gamma")."""
import numpy as np
import pytest
from scipy.special import expit
from scipy.stats import gamma as gamma_distribution

import moe


def positive(n=2000, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.uniform(-2.0, 2.0, size=n)
    first = rng.uniform(size=n) < expit(2.5 * x)
    mean = np.exp(np.where(first, 1.0 + 0.6 * x, 2.5 - 0.4 * x))
    shape = np.where(first, 4.0, 10.0)
    return x[:, None], rng.gamma(shape, mean / shape)


def test_gamma_regressor_recovers_experts_and_shapes():
    X, y = positive()
    fit = moe.MoERegressor(n_experts=2, family="gamma", random_state=1).fit(X, y)
    assert fit.model_.family == "gamma"
    assert fit.variances_ is None
    order = np.argsort(fit.model_.experts[:, 1])
    assert fit.model_.experts[order].tolist()[0] == pytest.approx([2.5, -0.4], abs=0.15)
    assert fit.model_.experts[order].tolist()[1] == pytest.approx([1.0, 0.6], abs=0.15)
    assert fit.degrees_[order] == pytest.approx([10.0, 4.0], rel=0.25)
    # the log-likelihood is scipy's density's, the prediction the mixture's mean
    gate = fit.model_.gate_proba(X)
    design = np.column_stack([np.ones(len(X)), X[:, 0]])
    shapes = fit.degrees_
    rows = sum(gate[:, k] * gamma_distribution.pdf(
        y, shapes[k], scale=np.exp(design @ fit.model_.experts[k]) / shapes[k])
        for k in range(2))
    assert fit.model_.loglik(X, y) == pytest.approx(np.log(rows).sum(), rel=1e-10)
    means = sum(gate[:, k] * np.exp(design @ fit.model_.experts[k]) for k in range(2))
    assert fit.predict(X) == pytest.approx(means, rel=1e-12)


def test_gamma_refuses_responses_that_are_not_positive():
    X, y = positive(200, 1)
    y[4] = 0.0
    with pytest.raises(moe.MoeError, match=r"^row 4 \(counting from 0\), response: 0 is not "
                                           r"positive"):
        moe.MoERegressor(family="gamma", random_state=1).fit(X, y)
