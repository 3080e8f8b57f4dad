"""libmoe for Python: softmax-gated mixtures of experts through the installed libmoe.so.1.

    import moe
    regressor = moe.MoERegressor(n_experts=2, random_state=0).fit(X, y)
    regressor.predict(X); regressor.coef_; regressor.summary(X, y); regressor.model_.vcov(X, y)

Fitted on a pandas DataFrame (or anything whose `columns` are strings), an estimator keeps
the names in feature_names_in_ and refuses data whose columns are other or in another order.
"""
from ._checks import option_table
from ._lib import MoeError, MoeNumericalError, MoeValueError, lib
from .estimators import GateSeparationWarning, MoEClassifier, MoERegressor
from .model import Model, Summary

__all__ = ["Model", "MoERegressor", "MoEClassifier", "Summary", "MoeError", "MoeValueError",
           "MoeNumericalError", "GateSeparationWarning", "available_estimators",
           "estimator_options",
           "library_version"]
__version__ = "1.2.0"


def library_version():
    """The version of the libmoe this package loaded."""
    return lib.moe_version_string().decode()


def available_estimators():
    """name -> one-line description of every estimator the loaded libmoe has, in its order
    (moe_estimator_name, moe_estimator_description): the values of `estimator`. (Named so
    that it does not hide the module moe.estimators.)"""
    return {lib.moe_estimator_name(index).decode(): lib.moe_estimator_description(index).decode()
            for index in range(lib.moe_estimator_count())}


def estimator_options(estimator):
    """name -> description of every option the estimator takes, as the loaded libmoe lists
    them (moe_fitter_option_info): the pinned options it reads, then its own (the ones
    `options=` passes). Each description is a dict: type ("integer", "real" or "keyword"),
    default (a keyword's name for keyword options), lower and upper bounds (lower_open and
    upper_open say whether a bound is excluded), keywords (a list, or None), description
    (one line) and pinned (whether the library pins it for every estimator)."""
    return option_table(estimator)
