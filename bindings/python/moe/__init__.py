"""libmoe for Python: softmax-gated mixtures of experts through the installed libmoe.so.1.

    import moe
    regressor = moe.MoERegressor(n_experts=2, random_state=0).fit(X, y)
    regressor.predict(X); regressor.coef_; regressor.summary(X, y); regressor.model_.vcov(X, y)

Fitted on a pandas DataFrame (or anything whose `columns` are strings), an estimator keeps
the names in feature_names_in_ and refuses data whose columns are other or in another order.
"""
from ._lib import MoeError, MoeNumericalError, MoeValueError, lib
from .estimators import GateSeparationWarning, MoEClassifier, MoERegressor
from .model import Model, Summary

__all__ = ["Model", "MoERegressor", "MoEClassifier", "Summary", "MoeError", "MoeValueError",
           "MoeNumericalError", "GateSeparationWarning", "available_estimators",
           "library_version"]
__version__ = "0.1.0"


def library_version():
    """The version of the libmoe this package loaded."""
    return lib.moe_version_string().decode()


def available_estimators():
    """name -> one-line description of every estimator the loaded libmoe has, in its order
    (moe_estimator_name, moe_estimator_description): the values of `estimator`. (Named so
    that it does not hide the module moe.estimators.)"""
    return {lib.moe_estimator_name(index).decode(): lib.moe_estimator_description(index).decode()
            for index in range(lib.moe_estimator_count())}
