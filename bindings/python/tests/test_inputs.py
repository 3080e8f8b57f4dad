"""The gate and the experts on their own columns, and an experts' offset (libmoe 1.1, model
spec version 2): gate_features=, expert_features= and offset= of the estimators and of
Model.create, with the free parameters (vcov, summary) over what each part estimates."""
import pickle

import numpy as np
import pytest

import moe
from frames import Frame


def gated_by_z(n=3000, seed=0):
    """Experts y = 2 + 1.5 x and y = -1 - x (sd 0.3), chosen by a gate on z alone:
    P(expert 1) = sigmoid(0.5 + 2 z). x and z are independent."""
    rng = np.random.default_rng(seed)
    x = rng.uniform(-2.0, 2.0, n)
    z = rng.normal(size=n)
    first = rng.uniform(size=n) < 1.0 / (1.0 + np.exp(-(0.5 + 2.0 * z)))
    y = np.where(first, 2.0 + 1.5 * x, -1.0 - x) + 0.3 * rng.normal(size=n)
    return np.column_stack([x, z]), y


def by_slope(regressor):
    """The expert whose slope on x is larger first (the truth's expert 1)."""
    return np.argsort(-regressor.model_.experts[:, 1])


def test_gate_on_its_own_column_recovers_the_truth():
    X, y = gated_by_z()
    fit = moe.MoERegressor(n_experts=2, random_state=1, gate_features=[1],
                           expert_features=[0]).fit(X, y)
    model = fit.model_
    assert model.gate_features == [1] and model.expert_features == [0]
    # Held coefficients are exactly zero: the gate's on x, the experts' on z.
    assert np.all(model.gate[:, 1] == 0.0)
    assert np.all(model.experts[:, 2] == 0.0)
    order = by_slope(fit)
    experts = model.experts[order]
    assert experts[0] == pytest.approx([2.0, 1.5, 0.0], abs=0.08)
    assert experts[1] == pytest.approx([-1.0, -1.0, 0.0], abs=0.08)
    # The gate row of expert 1 against expert 2 (the reference after the ordering).
    gate = model.gate[order[0]] - model.gate[order[1]]
    assert gate == pytest.approx([0.5, 0.0, 2.0], abs=0.25)
    # Free parameters: gate 1 x (intercept, z), experts 2 x (intercept, x), 2 variances.
    assert model.n_free_params == 8
    summary = fit.summary(X, y)
    assert len(summary) == 8
    assert summary.names[:2] == ["gate[1].intercept", "gate[1].x2"]
    assert "gate[1].x1" not in summary.names and "expert[1].x2" not in summary.names
    assert np.all(np.isfinite(summary.standard_errors))
    assert summary.covariance.shape == (8, 8)


def test_the_restricted_fit_beats_or_matches_the_full_model_restricted_by_hand():
    """The likelihood with the gate on z alone is at most the full model's."""
    X, y = gated_by_z(1500, 3)
    restricted = moe.MoERegressor(random_state=2, gate_features=[1], expert_features=[0]).fit(X, y)
    full = moe.MoERegressor(random_state=2).fit(X, y)
    assert restricted.loglik(X, y) <= full.loglik(X, y) + 1e-6
    assert restricted.loglik(X, y) > full.loglik(X, y) - 10.0


def test_names_of_a_frame_select_the_columns():
    X, y = gated_by_z(1500, 4)
    frame = Frame(X, ["dose", "age"])
    fit = moe.MoERegressor(random_state=1, gate_features=["age"],
                           expert_features=["dose"]).fit(frame, y)
    assert fit.model_.gate_features == [1]
    names = fit.summary(frame, y).names
    assert "gate[1].age" in names and "expert[1].dose" in names
    assert "gate[1].dose" not in names and "expert[2].age" not in names
    assert fit.get_params()["gate_features"] == ["age"]


def test_experts_of_the_intercept_alone():
    X, y = gated_by_z(1500, 5)
    fit = moe.MoERegressor(random_state=1, gate_features=[1], expert_features=[]).fit(X, y)
    assert np.all(fit.coef_ == 0.0)
    # gate (intercept, z), 2 expert intercepts, 2 variances
    assert fit.model_.n_free_params == 6
    assert len(fit.summary(X, y)) == 6


def test_save_load_and_pickle_keep_the_inputs(tmp_path):
    X, y = gated_by_z(1000, 6)
    model = moe.MoERegressor(random_state=1, gate_features=[1], expert_features=[0]).fit(
        X, y).model_
    path = tmp_path / "gated.moe"
    model.save(str(path))
    for copy in (moe.Model.load(str(path)), moe.Model.from_bytes(model.to_bytes()),
                 pickle.loads(pickle.dumps(model)), model.copy()):
        assert copy.gate_features == [1] and copy.expert_features == [0]
        assert copy.offset is None
        assert copy.n_free_params == model.n_free_params
        assert np.array_equal(copy.gate, model.gate)
        assert np.array_equal(copy.predict(X), model.predict(X))
        assert copy.parameter_names() == model.parameter_names()


def test_poisson_offset_is_a_log_exposure():
    rng = np.random.default_rng(7)
    n = 3000
    x = rng.uniform(-1.0, 1.0, n)
    exposure = rng.uniform(0.5, 5.0, n)
    first = rng.uniform(size=n) < 1.0 / (1.0 + np.exp(-3.0 * x))
    rate = np.exp(np.where(first, 1.0 + 0.5 * x, -0.5 - 0.5 * x))
    y = rng.poisson(exposure * rate).astype(float)
    X = np.column_stack([x, np.log(exposure)])
    fit = moe.MoERegressor(family="poisson", random_state=1, offset=1).fit(X, y)
    model = fit.model_
    assert model.offset == 1
    assert model.gate_features == [0]  # the gate does not see the offset by default
    assert model.expert_features == [0]
    assert np.all(model.experts[:, 2] == 1.0)
    assert np.all(model.gate[:, 2] == 0.0)
    experts = model.experts[np.argsort(-model.experts[:, 1])]
    assert experts[0] == pytest.approx([1.0, 0.5, 1.0], abs=0.12)
    assert experts[1] == pytest.approx([-0.5, -0.5, 1.0], abs=0.12)
    # gate 1 x 2, experts 2 x 2, no variances
    assert model.n_free_params == 6
    assert len(fit.summary(X, y)) == 6
    # The mean count follows the exposure.
    assert fit.predict(X).sum() == pytest.approx(y.sum(), rel=0.02)


def test_model_create_passes_the_spec_layout():
    model = moe.Model.create(3, 4, gate_features=[0, 3], expert_features=[1],
                             gate_intercept=False, offset=2)
    assert model.gate_features == [0, 3]
    assert model.expert_features == [1]
    assert model.offset == 2
    assert list(model.gate_inputs) == [False, True, False, False, True]
    assert list(model.expert_inputs) == [True, False, True, False, False]
    # gate 2 x 2, experts 3 x 2, variances 3
    assert model.n_free_params == 13
    assert np.all(model.experts[:, 3] == 1.0)
    unrestricted = moe.Model.create(3, 4)
    assert unrestricted.gate_features == [0, 1, 2, 3] and unrestricted.offset is None


def test_errors_are_clear():
    X, y = gated_by_z(300, 8)
    frame = Frame(X, ["dose", "age"])
    with pytest.raises(moe.MoeValueError, match="no column 'weight'"):
        moe.MoERegressor(gate_features=["weight"]).fit(frame, y)
    with pytest.raises(moe.MoeValueError, match="X has no column names"):
        moe.MoERegressor(gate_features=["age"]).fit(X, y)
    with pytest.raises(moe.MoeValueError, match="gate sees no input"):
        moe.MoERegressor(gate_features=[], fit_intercept=False).fit(X, y)
    with pytest.raises(moe.MoeValueError, match="experts see no input|experts sees no input"):
        moe.MoERegressor(expert_features=[], fit_intercept=False).fit(X, y)
    with pytest.raises(moe.MoeValueError, match="whole number"):
        moe.MoERegressor(gate_features=[5]).fit(X, y)
    with pytest.raises(moe.MoeValueError, match="the offset"):
        moe.MoERegressor(offset=1, expert_features=[0, 1]).fit(X, y)
    with pytest.raises(moe.MoeValueError, match="twice"):
        moe.Model.create(2, 2, gate_features=[1, 1])
    labels = (y > 0).astype(int)
    with pytest.raises(moe.MoeError, match="multinomial"):
        moe.MoEClassifier(offset=1).fit(X, np.where(y > 1, 2, labels))


def test_classifier_takes_the_columns_too():
    X, y = gated_by_z(2000, 9)
    labels = (y > 0.5).astype(int)
    fit = moe.MoEClassifier(random_state=1, gate_features=[1], expert_features=[0]).fit(
        X, labels)
    assert np.all(fit.gate_coef_[:, 0] == 0.0)
    assert np.all(fit.coef_[:, 1] == 0.0)
    assert len(fit.summary(X, labels)) == fit.model_.n_free_params == 2 + 4
