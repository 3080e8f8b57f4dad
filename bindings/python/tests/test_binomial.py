"""Binomial experts with trials (libmoe 1.2) through MoERegressor(family="binomial")."""
import numpy as np
import pytest
from scipy.special import expit
from scipy.stats import binom

import moe


def successes(n=2000, seed=0):
    """x, trials (0..15) and successes from two logistic experts gated on x."""
    rng = np.random.default_rng(seed)
    x = rng.uniform(-2.0, 2.0, size=n)
    first = rng.uniform(size=n) < expit(2.5 * x)
    p = expit(np.where(first, -1.0 + 1.2 * x, 1.5 - 0.8 * x))
    trials = rng.integers(0, 16, size=n).astype(float)
    return np.column_stack([x, trials]), rng.binomial(trials.astype(int), p).astype(float)


def test_binomial_regressor_recovers_the_experts():
    X, y = successes()
    fit = moe.MoERegressor(n_experts=2, family="binomial", trials=1, random_state=1).fit(X, y)
    assert fit.model_.family == "binomial"
    experts = sorted(fit.model_.experts[:, :2].tolist(), key=lambda row: row[1])
    assert experts[0] == pytest.approx([1.5, -0.8], abs=0.25)
    assert experts[1] == pytest.approx([-1.0, 1.2], abs=0.25)
    assert (fit.model_.experts[:, 2] == 0).all()  # the trials' coefficients are held
    # predict is the mixture's success probability; the log-likelihood is dbinom's
    probability = fit.predict(X)
    assert ((probability > 0) & (probability < 1)).all()
    gate = fit.model_.gate_proba(X)
    design = np.column_stack([np.ones(len(X)), X[:, 0]])
    rows = sum(gate[:, k] * binom.pmf(y, X[:, 1], expit(design @ fit.model_.experts[k, :2]))
               for k in range(2))
    assert fit.model_.loglik(X, y) == pytest.approx(np.log(rows).sum(), rel=1e-10)
    assert fit.get_params()["trials"] == 1


def test_binomial_trials_by_column_name():
    pandas = pytest.importorskip("pandas")
    X, y = successes(600, 3)
    frame = pandas.DataFrame({"dose": X[:, 0], "n": X[:, 1]})
    by_name = moe.MoERegressor(family="binomial", trials="n", random_state=2).fit(frame, y)
    by_index = moe.MoERegressor(family="binomial", trials=1, random_state=2).fit(X, y)
    assert by_name.model_.loglik(X, y) == by_index.model_.loglik(X, y)


def test_binomial_refuses_more_successes_than_trials():
    X, y = successes(200, 1)
    y[5] = X[5, 1] + 1.0
    with pytest.raises(moe.MoeError, match=r"^row 5 \(counting from 0\), response: .* trial"):
        moe.MoERegressor(family="binomial", trials=1, random_state=1).fit(X, y)
    X[5, 1] = 2.5
    with pytest.raises(moe.MoeError, match=r"row 5.*not a count"):
        moe.MoERegressor(family="binomial", trials=1, random_state=1).fit(X, y)
