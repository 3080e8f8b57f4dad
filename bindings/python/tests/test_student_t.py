"""Student-t experts (libmoe 1.1) through MoERegressor(family="t") and Model.degrees."""
import numpy as np
import pytest

import moe


def regimes_with_outliers(n=1000, seed=0):
    """y = -2.5 x or 2.5 x by a soft gate on x, noise sd 0.3, then 5% gross outliers."""
    rng = np.random.default_rng(seed)
    x = rng.uniform(-2.0, 2.0, size=n)
    rising = rng.uniform(size=n) < 1.0 / (1.0 + np.exp(-6.0 * x))
    y = np.where(rising, 2.5, -2.5) * x + 0.3 * rng.standard_normal(n)
    outliers = np.arange(n) % 20 == 7
    y[outliers] = rng.choice([-1.0, 1.0], outliers.sum()) * rng.uniform(20, 40, outliers.sum())
    return x[:, None], y


def test_t_regressor_recovers_the_slopes_through_outliers():
    X, y = regimes_with_outliers()
    fit = moe.MoERegressor(n_experts=2, family="t", random_state=1).fit(X, y)
    assert fit.model_.family == "t"
    slopes = sorted(fit.coef_.ravel())
    assert slopes == pytest.approx([-2.5, 2.5], abs=0.2)
    assert fit.degrees_.shape == (2,)
    assert (fit.variances_ > 0).all()
    gaussian = moe.MoERegressor(n_experts=2, random_state=1).fit(X, y)
    assert gaussian.degrees_ is None
    assert max(abs(s - t) for s, t in zip(sorted(gaussian.coef_.ravel()), [-2.5, 2.5])) > 0.4


def test_degrees_are_held_with_update_degrees_0_and_checked():
    X, y = regimes_with_outliers(300, 2)
    model = moe.Model.create(2, 1, family="t")
    assert model.degrees.tolist() == [4.0, 4.0]
    model.set_degrees([7.0, 30.0])
    with pytest.raises(moe.MoeError, match="degrees of freedom"):
        model.set_degrees([7.0, 0.01])
    assert model.degrees.tolist() == [7.0, 30.0]
    assert moe.Model.create(2, 1).degrees is None
    fit = moe.MoERegressor(family="t", random_state=1, update_degrees=0).fit(X, y)
    assert fit.degrees_.tolist() == [4.0, 4.0]
    again = moe.Model.from_bytes(fit.model_.to_bytes())
    assert again.degrees.tolist() == fit.degrees_.tolist()
