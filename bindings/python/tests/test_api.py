"""The 1.0 interface: coefficients under scikit-learn's names, named standard errors, hard
assignments and the library's own tables (families, links, estimators), and a docstring on
everything public."""
import inspect
import pickle

import numpy as np
import pytest

import moe
from moe.model import FAMILIES, LINKS


def regimes(n=2000, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 2))
    first = rng.uniform(size=n) < 1.0 / (1.0 + np.exp(-3.0 * X[:, 0]))
    y = np.where(first, 1.0 + 2.0 * X[:, 1], -1.0 - X[:, 1]) + 0.3 * rng.normal(size=n)
    return X, y


@pytest.fixture(scope="module")
def regressor():
    X, y = regimes()
    return moe.MoERegressor(n_experts=2, random_state=0, n_init=1).fit(X, y), X, y


@pytest.fixture(scope="module")
def three_classes():
    rng = np.random.default_rng(4)
    X = rng.normal(size=(800, 2))
    labels = np.array(["low", "mid", "high"])[np.digitize(X[:, 0] + 0.3 * rng.normal(size=800),
                                                          [-0.5, 0.5])]
    return moe.MoEClassifier(n_experts=2, random_state=0, n_init=1).fit(X, labels), X, labels


# ---- coefficients ----------------------------------------------------------------------------
def test_coefficients_under_scikit_learns_names(regressor):
    fit, _, _ = regressor
    experts, gate = fit.model_.experts, fit.model_.gate
    np.testing.assert_array_equal(fit.coef_, experts[:, 1:])
    np.testing.assert_array_equal(fit.intercept_, experts[:, 0])
    np.testing.assert_array_equal(fit.gate_coef_, gate[:, 1:])
    np.testing.assert_array_equal(fit.gate_intercept_, gate[:, 0])
    np.testing.assert_array_equal(fit.variances_, fit.model_.variances)
    assert fit.coef_.shape == (2, 2) and fit.intercept_.shape == (2,)
    assert np.all(fit.gate_coef_[-1] == 0) and fit.gate_intercept_[-1] == 0
    assert sorted(fit.coef_[:, 1]) == pytest.approx([-1.0, 2.0], abs=0.1)


def test_coefficients_without_an_intercept():
    X, y = regimes(800, 1)
    fit = moe.MoERegressor(n_experts=2, random_state=0, n_init=1, fit_intercept=False).fit(X, y)
    np.testing.assert_array_equal(fit.coef_, fit.model_.experts)
    np.testing.assert_array_equal(fit.intercept_, np.zeros(2))
    np.testing.assert_array_equal(fit.gate_coef_, fit.model_.gate)
    np.testing.assert_array_equal(fit.gate_intercept_, np.zeros(2))


def test_classifier_coefficients(three_classes):
    fit, X, _ = three_classes
    assert fit.coef_.shape == (2, 3, 2) and fit.intercept_.shape == (2, 3)
    np.testing.assert_array_equal(fit.coef_, fit.model_.experts[:, :, 1:])
    binary = moe.MoEClassifier(n_experts=2, random_state=0, n_init=1).fit(X, X[:, 1] > 0)
    assert binary.coef_.shape == (2, 2) and binary.intercept_.shape == (2,)
    assert not hasattr(binary, "variances_")


def test_an_unfitted_estimator_has_no_coefficients():
    for name in ("coef_", "intercept_", "gate_coef_", "gate_intercept_", "variances_"):
        assert not hasattr(moe.MoERegressor(), name)


# ---- named standard errors -------------------------------------------------------------------
def test_parameter_names_follow_the_covariance(regressor):
    fit, X, y = regressor
    names = ["gate[1].intercept", "gate[1].x1", "gate[1].x2",
             "expert[1].intercept", "expert[1].x1", "expert[1].x2",
             "expert[2].intercept", "expert[2].x1", "expert[2].x2", "variance[1]", "variance[2]"]
    assert fit.model_.parameter_names() == names
    summary = fit.summary(X, y)
    assert summary.names == names and len(summary) == fit.model_.n_free_params
    covariance = fit.model_.vcov(X, y)
    np.testing.assert_array_equal(summary.covariance, covariance)
    np.testing.assert_array_equal(summary.standard_errors, np.sqrt(np.diag(covariance)))
    estimates = dict(zip(summary.names, summary.estimates))
    assert estimates["gate[1].x1"] == fit.gate_coef_[0, 0]
    assert estimates["expert[2].intercept"] == fit.intercept_[1]
    assert estimates["expert[1].x2"] == fit.coef_[0, 1]
    assert estimates["variance[2]"] == fit.variances_[1]
    errors = fit.standard_errors(X, y)
    assert list(errors) == names and errors["variance[1]"] == summary.standard_errors[-2]
    table = str(summary)
    assert "expert[2].intercept" in table and "std. error" in table
    assert summary.to_dict()["gate[1].x1"]["standard_error"] == errors["gate[1].x1"]


def test_summary_takes_the_fits_penalties():
    X, y = regimes(1500, 2)
    fit = moe.MoERegressor(n_experts=2, random_state=0, n_init=1, gate_l2=0.1,
                           options={"expert_ridge": 0.05}).fit(X, y)
    penalised = fit.model_.vcov(X, y, gate_l2=0.1, expert_ridge=0.05)
    fit.set_params(gate_l2=None, options=None)  # the fit is what counts, not the parameters now
    np.testing.assert_array_equal(fit.summary(X, y).covariance, penalised)
    again = pickle.loads(pickle.dumps(fit))
    np.testing.assert_array_equal(again.summary(X, y).covariance, penalised)


def test_names_from_the_columns_and_the_classes(three_classes):
    from test_columns import Frame
    X, y = regimes(1500, 3)
    fit = moe.MoERegressor(n_experts=2, random_state=0, n_init=1).fit(Frame(X, ["age", "dose"]),
                                                                      y)
    assert fit.summary(Frame(X, ["age", "dose"]), y).names[:3] == \
        ["gate[1].intercept", "gate[1].age", "gate[1].dose"]
    classifier, _, _ = three_classes
    # Multinomial experts: every class but the last (the reference) of classes_.
    names = classifier.model_.parameter_names(classes=classifier.classes_)
    assert names[3:6] == ["expert[1].class[high].intercept", "expert[1].class[high].x1",
                          "expert[1].class[high].x2"]
    assert names[6] == "expert[1].class[low].intercept"
    assert len(names) == classifier.model_.n_free_params
    assert not any("class[mid]" in name for name in names)
    with pytest.raises(ValueError, match="feature_names has 1 names for 2 features"):
        classifier.model_.parameter_names(feature_names=["a"])


# ---- hard assignments ------------------------------------------------------------------------
def test_classes_come_from_the_library(three_classes):
    fit, X, labels = three_classes
    codes = fit.model_.classify(X)
    assert codes.dtype == np.intp
    np.testing.assert_array_equal(fit.predict(X), fit.classes_[codes])
    np.testing.assert_array_equal(codes, np.argmax(fit.predict_proba(X), axis=1))
    binary = moe.MoEClassifier(n_experts=2, random_state=0, n_init=1).fit(X, X[:, 1] > 0)
    np.testing.assert_array_equal(binary.predict(X), binary.predict_proba(X)[:, 1] > 0.5)
    with pytest.raises(moe.MoeError, match="classes need a classification family"):
        moe.Model.create(2, 2).classify(X)


def test_clusters(regressor, three_classes):
    fit, X, y = regressor
    np.testing.assert_array_equal(fit.predict_cluster(X), np.argmax(fit.model_.gate_proba(X), 1))
    np.testing.assert_array_equal(fit.predict_cluster(X, y),
                                  np.argmax(fit.model_.posterior(X, y), axis=1))
    with pytest.raises(ValueError, match="y has 3 values for 2000 rows"):
        fit.predict_cluster(X, y[:3])
    classifier, X, labels = three_classes
    codes = np.searchsorted(classifier.classes_, labels).astype(float)
    np.testing.assert_array_equal(classifier.predict_cluster(X, labels),
                                  np.argmax(classifier.model_.posterior(X, codes), axis=1))


# ---- the library's tables --------------------------------------------------------------------
def test_families_and_links_are_the_librarys():
    assert FAMILIES == {"gaussian": 1, "logistic": 2, "multinomial": 3, "poisson": 4, "t": 5,
                        "binomial": 6, "gamma": 7}
    assert LINKS == {"identity": 0, "sigmoid": 1, "relu": 2}
    for link in LINKS:
        assert moe.Model.create(2, 1, link=link).link == link
    for family, classes in (("gaussian", 0), ("logistic", 0), ("multinomial", 3),
                            ("poisson", 0), ("t", 0)):
        assert moe.Model.create(2, 1, family=family, n_classes=classes).family == family
    with pytest.raises(ValueError,
                       match="family must be one of gaussian, logistic, multinomial, poisson, t, binomial, "
                             "gamma"):
        moe.Model.create(2, 1, family="negative_binomial")
    with pytest.raises(ValueError, match="link must be one of identity, sigmoid, relu, got 'Relu'"):
        moe.Model.create(2, 1, link="Relu")
    with pytest.raises(ValueError, match="link must be one of"):
        moe.Model.create(2, 1, link=1)


def test_the_estimators_are_the_librarys():
    estimators = moe.available_estimators()
    assert list(estimators)[:6] == ["em", "gem", "gd", "cqt", "ismm", "ot"]
    assert all(description for description in estimators.values())
    from moe.estimators import _Fitter
    for name in estimators:
        assert _Fitter(name, {}).estimator == name


def test_criteria_through_the_library(regressor):
    fit, X, y = regressor
    criteria = fit.model_.criteria(X, y)
    assert criteria["loglik"] == fit.loglik(X, y)
    assert criteria["aic"] == pytest.approx(-2 * criteria["loglik"] + 2 * criteria["n_params"])


# ---- docstrings ------------------------------------------------------------------------------
def public_members():
    """(qualified name, object) of every public class, function, method and property of the
    package (not those scikit-learn's bases bring)."""
    for name in moe.__all__:
        value = getattr(moe, name)
        yield name, value
        if not inspect.isclass(value):
            continue
        for member_name, member in inspect.getmembers(value):
            if member_name.startswith("_") and member_name != "__init__":
                continue
            function = member.fget if isinstance(member, property) else member
            module = getattr(function, "__module__", None) or ""
            if module.startswith("moe") and callable(function):
                yield f"{name}.{member_name}", function


def test_everything_public_has_a_docstring():
    # Its own: a docstring inherited from a base (object.__init__'s) says nothing of moe.
    missing = [name for name, value in public_members() if not (value.__doc__ or "").strip()]
    assert missing == []


# ---- messages --------------------------------------------------------------------------------
def test_read_only_calls_carry_the_librarys_message():
    # Calls on a const model keep their message in moe_last_error, not in the model: reading
    # moe_model_last_error gave "" and the status's generic text ("numerical breakdown").
    model = moe.Model.create(2, 2)
    X, y = np.zeros((3, 2)), np.array([0.0, 1e300, 0.0])
    for call in (lambda: model.posterior(X, y), lambda: model.loglik(X, y),
                 lambda: model.criteria(X, y), lambda: model.cluster(X, y)):
        with pytest.raises(moe.MoeNumericalError,
                           match=r"^row 1 \(counting from 0\): zero, infinite or undefined "
                                 "likelihood under every expert"):
            call()
    nan = np.full((2, 2), np.nan)
    for call in (lambda: model.predict(nan), lambda: model.gate_proba(nan)):
        with pytest.raises(moe.MoeValueError,
                           match=r"^row 0, column 0 \(both counting from 0\): the value is NaN"):
            call()
    with pytest.raises(moe.MoeError, match="classification family"):
        model.classify(X)


def test_a_constant_response_is_refused_naming_it():
    # The variances would shrink to zero; before, the fit "converged" at their floor.
    X = np.linspace(0.0, 1.0, 40).reshape(-1, 1)
    with pytest.raises(moe.MoeValueError, match=r"the response y is constant"):
        moe.MoERegressor(random_state=0).fit(X, np.full(40, 2.5))
