"""Poisson experts (libmoe 1.1) through MoERegressor(family="poisson")."""
import numpy as np
import pytest

import moe


def counts(n=2000, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.uniform(-2.0, 2.0, size=n)
    first = rng.uniform(size=n) < 1.0 / (1.0 + np.exp(-2.5 * x))
    eta = np.where(first, 1.0 + 0.8 * x, 2.0 - 0.5 * x)
    return x[:, None], rng.poisson(np.exp(eta)).astype(float)


def test_poisson_regressor_recovers_the_experts():
    X, y = counts()
    fit = moe.MoERegressor(n_experts=2, family="poisson", random_state=1).fit(X, y)
    assert fit.model_.family == "poisson"
    assert fit.variances_ is None
    experts = sorted(fit.model_.experts.tolist(), key=lambda row: row[1])
    assert experts[0] == pytest.approx([2.0, -0.5], abs=0.25)
    assert experts[1] == pytest.approx([1.0, 0.8], abs=0.25)
    # predict is the mixture's mean count: positive, and near the counts' mean overall
    predicted = fit.predict(X)
    assert (predicted > 0).all()
    assert predicted.mean() == pytest.approx(y.mean(), rel=0.02)
    assert fit.get_params()["family"] == "poisson"


def test_poisson_refuses_what_is_not_a_count():
    X, y = counts(200, 1)
    y[3] = 1.5
    # The row as numpy indexes it, saying so (issue 38).
    with pytest.raises(moe.MoeError,
                       match=r"^row 3 \(counting from 0\), response: 1.5 is not a count"):
        moe.MoERegressor(family="poisson", random_state=1).fit(X, y)
    y[3] = -1.0
    with pytest.raises(moe.MoeError,
                       match=r"^row 3 \(counting from 0\), response: -1 is not a count"):
        moe.MoERegressor(family="poisson", random_state=1).fit(X, y)
    with pytest.raises(ValueError, match="family"):  # a family of class labels
        moe.MoERegressor(family="logistic").fit(X, np.abs(y))
