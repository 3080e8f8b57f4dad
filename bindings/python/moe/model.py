"""A fitted (or hand-made) mixture of experts: parameters as numpy arrays, prediction,
posteriors, likelihood, criteria, standard errors, saving and pickling."""
import ctypes

import numpy as np

from ._checks import SIZE_MAX, file_name, per_row, whole_number
from ._lib import Criteria, ModelSpec, check, lib

FAMILIES = {"gaussian": 1, "logistic": 2, "multinomial": 3}
FAMILY_NAMES = {value: name for name, value in FAMILIES.items()}
LINKS = {"identity": 0, "sigmoid": 1, "relu": 2}


def in_place(X):
    """True when libmoe can read X where it is: float64 rows, each contiguous, at a fixed
    positive stride (a C-contiguous array, or a column slice of one)."""
    if X.dtype != np.float64 or X.ndim != 2 or not X.flags.aligned:
        return False
    n, d = X.shape
    if d > 1 and X.strides[1] != 8:
        return False
    return n <= 1 or (X.strides[0] % 8 == 0 and X.strides[0] >= 8 * max(d, 1))


def leading(X):
    """The ldx of an array that passed in_place: its row stride in doubles."""
    return X.strides[0] // 8 if X.shape[0] > 1 else X.shape[1]


def as_rows(X, n_features):
    """X as float64 rows libmoe reads in place: no copy when it already is one (ldx from the
    strides), else one copy. n_features None takes X's own."""
    X = np.asarray(X, dtype=np.float64)
    if X.ndim == 1:
        X = X.reshape(-1, 1) if n_features == 1 else X.reshape(1, -1)
    if X.ndim != 2:
        raise ValueError(f"X must be 2-dimensional, got {X.ndim} dimensions")
    if n_features is not None and X.shape[1] != n_features:
        raise ValueError(f"X has {X.shape[1]} features, the model {n_features}")
    return X if in_place(X) else np.ascontiguousarray(X)


def checked_rows(X, n_features, y, sample_weight=None):
    """X as rows (n_features columns; None: any) with y and sample_weight as one double a
    row. Every method that hands libmoe a response or weights goes through here: libmoe takes
    their length from X's rows alone and would read past a shorter array."""
    X = as_rows(X, n_features)
    if y is None:
        raise ValueError("y is required: one response value per row of X")
    y = per_row("y", y, X.shape[0])
    w = None if sample_weight is None else per_row("sample_weight", sample_weight, X.shape[0])
    return X, y, w


def pointer(array):
    return array.ctypes.data_as(ctypes.POINTER(ctypes.c_double)) if array is not None else None


class Model:
    """A libmoe model (moe_model_t). Create one with Model.create or get it from a fit."""

    def __init__(self, handle):
        self._handle = ctypes.c_void_p(handle)

    @classmethod
    def create(cls, n_experts, n_features, family="gaussian", intercept=True, n_classes=0,
               link="identity"):
        if family not in FAMILIES:
            raise ValueError(f"family must be one of {', '.join(FAMILIES)}, got {family!r}")
        if link not in LINKS:
            raise ValueError(f"link must be one of {', '.join(LINKS)}, got {link!r}")
        # Checked here: ctypes would store -1 in a size_t as 2^64 - 1.
        n_experts = whole_number("n_experts", n_experts, 1, SIZE_MAX)
        n_features = whole_number("n_features", n_features, 0, SIZE_MAX)
        n_classes = whole_number("n_classes", n_classes, 0, SIZE_MAX)
        spec = ModelSpec()
        check(lib.moe_model_spec_init(ctypes.byref(spec), 1))
        spec.family = FAMILIES[family]
        spec.n_experts = n_experts
        spec.n_features = n_features
        spec.intercept = 1 if intercept else 0
        spec.n_classes = n_classes
        spec.link = LINKS[link]
        handle = ctypes.c_void_p()
        check(lib.moe_model_create(ctypes.byref(handle), ctypes.byref(spec)))
        return cls(handle.value)

    def __del__(self):
        if getattr(self, "_handle", None) is not None and self._handle.value:
            lib.moe_model_free(self._handle)
            self._handle = ctypes.c_void_p()

    def _message(self):
        return lib.moe_model_last_error(self._handle)

    # ---- structure and parameters ------------------------------------------------------
    @property
    def n_experts(self):
        return lib.moe_model_n_experts(self._handle)

    @property
    def n_features(self):
        return lib.moe_model_n_features(self._handle)

    @property
    def n_classes(self):
        return lib.moe_model_n_classes(self._handle)

    @property
    def family(self):
        return FAMILY_NAMES[lib.moe_model_family(self._handle)]

    @property
    def intercept(self):
        return bool(lib.moe_model_has_intercept(self._handle))

    @property
    def n_free_params(self):
        return lib.moe_model_n_free_params(self._handle)

    @property
    def gate(self):
        """K x p gate rows (intercept first; the last row is the zero reference)."""
        K, p = self.n_experts, lib.moe_model_n_inputs(self._handle)
        out = np.empty((K, p))
        check(lib.moe_model_get_gate(self._handle, pointer(out), out.size), self._message)
        return out

    @property
    def experts(self):
        """K x rows x p expert coefficients (rows: 1, or classes for multinomial experts)."""
        K, p = self.n_experts, lib.moe_model_n_inputs(self._handle)
        rows = lib.moe_model_expert_rows(self._handle)
        out = np.empty((K, rows, p))
        check(lib.moe_model_get_experts(self._handle, pointer(out), out.size), self._message)
        return out if rows > 1 else out[:, 0, :]

    @property
    def variances(self):
        if self.family != "gaussian":
            return None
        out = np.empty(self.n_experts)
        check(lib.moe_model_get_variances(self._handle, pointer(out), out.size), self._message)
        return out

    # ---- evaluation ------------------------------------------------------------------
    def _rows(self, X):
        return as_rows(X, self.n_features)

    def _data(self, X, y, sample_weight=None):
        return checked_rows(X, self.n_features, y, sample_weight)

    def predict(self, X):
        X = self._rows(X)
        width = self.n_classes if self.family == "multinomial" else 1
        out = np.empty((X.shape[0], width))
        check(lib.moe_model_predict(self._handle, X.shape[0], pointer(X), leading(X), pointer(out),
                                    out.size), self._message)
        return out if width > 1 else out[:, 0]

    def gate_proba(self, X):
        X = self._rows(X)
        out = np.empty((X.shape[0], self.n_experts))
        check(lib.moe_model_gate_proba(self._handle, X.shape[0], pointer(X), leading(X),
                                       pointer(out), out.size), self._message)
        return out

    def posterior(self, X, y):
        X, y, _ = self._data(X, y)
        out = np.empty((X.shape[0], self.n_experts))
        check(lib.moe_model_posterior(self._handle, X.shape[0], pointer(X), leading(X), pointer(y),
                                      pointer(out), out.size), self._message)
        return out

    def loglik(self, X, y, sample_weight=None):
        X, y, w = self._data(X, y, sample_weight)
        value = ctypes.c_double()
        check(lib.moe_model_loglik(self._handle, X.shape[0], pointer(X), leading(X), pointer(y),
                                   pointer(w), ctypes.byref(value)), self._message)
        return value.value

    def criteria(self, X, y, sample_weight=None):
        """A dict of loglik, n_params, n_obs, aic, bic, icl and entropy."""
        X, y, w = self._data(X, y, sample_weight)
        result = Criteria()
        result.version = 1
        check(lib.moe_model_criteria(self._handle, X.shape[0], pointer(X), leading(X), pointer(y),
                                     pointer(w), ctypes.byref(result)), self._message)
        return {name: getattr(result, name) for name, _ in Criteria._fields_ if name != "version"}

    def aic(self, X, y):
        return self.criteria(X, y)["aic"]

    def bic(self, X, y):
        return self.criteria(X, y)["bic"]

    def icl(self, X, y):
        return self.criteria(X, y)["icl"]

    def vcov(self, X, y, sample_weight=None, gate_l2=0.0, expert_ridge=0.0):
        """The covariance of the free parameters (moe_model_vcov's order).

        For a model fitted with gate_l2 or expert_ridge, pass the same values: the
        covariance is then the inverse of the penalised objective's information
        (moe_model_vcov_penalized); zero penalties give moe_model_vcov's result exactly.
        """
        X, y, w = self._data(X, y, sample_weight)
        P = self.n_free_params
        out = np.empty((P, P))
        check(lib.moe_model_vcov_penalized(self._handle, X.shape[0], pointer(X), leading(X),
                                           pointer(y), pointer(w), float(gate_l2),
                                           float(expert_ridge), pointer(out), out.size))
        return out

    # ---- persistence ------------------------------------------------------------------
    def to_bytes(self):
        size = ctypes.c_size_t()
        check(lib.moe_model_save_buffer(self._handle, None, 0, ctypes.byref(size)), self._message)
        buffer = ctypes.create_string_buffer(size.value)
        check(lib.moe_model_save_buffer(self._handle, buffer, size.value, ctypes.byref(size)),
              self._message)
        return buffer.raw[:size.value]

    @classmethod
    def from_bytes(cls, data):
        handle = ctypes.c_void_p()
        buffer = ctypes.create_string_buffer(bytes(data), len(data))
        check(lib.moe_model_load_buffer(ctypes.byref(handle), buffer, len(data)))
        return cls(handle.value)

    def save(self, path):
        check(lib.moe_model_save(self._handle, file_name("path", path)), self._message)

    @classmethod
    def load(cls, path):
        handle = ctypes.c_void_p()
        check(lib.moe_model_load(ctypes.byref(handle), file_name("path", path)))
        return cls(handle.value)

    def copy(self):
        handle = ctypes.c_void_p()
        check(lib.moe_model_clone(ctypes.byref(handle), self._handle))
        return Model(handle.value)

    def __reduce__(self):
        return (Model.from_bytes, (self.to_bytes(),))

    def __repr__(self):
        return (f"Model({self.family}, n_experts={self.n_experts}, "
                f"n_features={self.n_features})")
