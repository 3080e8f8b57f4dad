"""libmoe for Python: softmax-gated mixtures of experts through the installed libmoe.so.1.

    import moe
    regressor = moe.MoERegressor(n_experts=2, random_state=0).fit(X, y)
    regressor.predict(X); regressor.model_.gate; regressor.model_.vcov(X, y)
"""
from ._lib import MoeError, MoeNumericalError, MoeValueError, lib
from .estimators import GateSeparationWarning, MoEClassifier, MoERegressor
from .model import Model

__all__ = ["Model", "MoERegressor", "MoEClassifier", "MoeError", "MoeValueError",
           "MoeNumericalError", "GateSeparationWarning", "library_version"]
__version__ = "0.1.0"


def library_version():
    """The version of the libmoe this package loaded."""
    return lib.moe_version_string().decode()
