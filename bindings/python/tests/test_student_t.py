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


def test_t_standard_errors_name_the_scales_and_degrees():
    X, y = regimes_with_outliers(600, 4)
    fit = moe.MoERegressor(n_experts=2, family="t", random_state=1).fit(X, y)
    names = fit.model_.parameter_names()
    assert names == ["gate[1].intercept", "gate[1].x1",
                     "expert[1].intercept", "expert[1].x1",
                     "expert[2].intercept", "expert[2].x1",
                     "scale2[1]", "scale2[2]", "nu[1]", "nu[2]"]
    assert len(names) == fit.model_.n_free_params
    summary = fit.summary(X, y)
    assert summary.names == names
    estimates = dict(zip(summary.names, summary.estimates))
    assert estimates["scale2[2]"] == fit.variances_[1]
    assert estimates["nu[1]"] == fit.degrees_[0]
    assert estimates["expert[2].x1"] == fit.coef_[1, 0]
    covariance = fit.model_.vcov(X, y)
    assert np.all(np.linalg.eigvalsh(covariance) > 0)
    errors = fit.standard_errors(X, y)
    assert all(np.isfinite(value) and value > 0 for value in errors.values())
    # through the outliers the slopes are sharp: errors of a few hundredths
    assert errors["expert[1].x1"] < 0.1 and errors["expert[2].x1"] < 0.1
