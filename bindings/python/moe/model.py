"""A fitted (or hand-made) mixture of experts: parameters as numpy arrays, prediction,
posteriors, hard assignments, likelihood, criteria, named standard errors, saving and
pickling."""
import ctypes
import math

import numpy as np

from ._checks import SIZE_MAX, file_name, invalid, per_row, text, whole_number
from ._lib import MODEL_SPEC_VERSION, Criteria, ModelSpec, c_size_t_p, check, lib

MOE_CRITERIA_VERSION = 1


def _library_names(name_of):
    """name -> value of every value of a libmoe enum that the library names
    (moe_family_name, moe_link_name): the library's own table, which a later libmoe.so.1
    may extend, rather than a copy of it here."""
    names = {}
    for value in range(64):
        name = name_of(value)
        if name is not None:
            names[name.decode()] = value
    return names


FAMILIES = _library_names(lib.moe_family_name)
# moe_scale_kind (moe/model.h): what a family's experts hold besides their coefficients.
_SCALE_VARIANCE, _SCALE_STUDENT, _SCALE_SHAPE = 1, 2, 3
LINKS = _library_names(lib.moe_link_name)


def _value_of(kind, name, from_name, names):
    """The enum value of a family or link name, as the library reads it
    (moe_family_from_name, moe_link_from_name); ValueError listing the names it knows."""
    value = ctypes.c_int()
    if not isinstance(name, str) or from_name(text(kind, name), ctypes.byref(value)) != 0:
        raise invalid(f"{kind} must be one of {', '.join(names)}, got {name!r}")
    return value.value


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
    """A double* to a float64 array, or NULL for None."""
    return array.ctypes.data_as(ctypes.POINTER(ctypes.c_double)) if array is not None else None


def _input_names(n_features, intercept, feature_names):
    """The names of the inputs x~ of every gate and expert row: "intercept" first when the
    model has one, then the features' names (x1, x2, ... when none are given)."""
    if feature_names is None:
        feature_names = [f"x{j + 1}" for j in range(n_features)]
    feature_names = [str(name) for name in feature_names]
    if len(feature_names) != n_features:
        raise invalid(f"feature_names has {len(feature_names)} names for {n_features} features")
    return (["intercept"] if intercept else []) + feature_names


def _feature_mask(name, indices, n_features):
    """n_features bytes, 1 for each column index listed (a ctypes array), or None."""
    if indices is None:
        return None
    if isinstance(indices, (str, bytes)) or not hasattr(indices, "__iter__"):
        raise invalid(f"{name} must be a list of column indices, got {indices!r}")
    mask = (ctypes.c_ubyte * max(n_features, 1))()
    for index in indices:
        index = whole_number(f"{name}[...]", index, 0, max(n_features - 1, 0))
        if n_features == 0:
            raise invalid(f"{name}: the model has no features")
        if mask[index]:
            raise invalid(f"{name} lists column {index} twice")
        mask[index] = 1
    return mask


HELD, FREE, OFFSET = 0, 1, 2  # what an input is to a part (moe/model.h, spec version 2)


class Summary:
    """Estimates of a model's free parameters with their standard errors, one row per
    parameter in the order of Model.vcov, each named ("gate[1].x1", "expert[2].intercept",
    "expert[1].class[a].x2", "variance[1]"; experts and gate rows count from 1).

    Attributes: names (list of str), estimates, standard_errors, z_values (estimate over
    standard error) and p_values (two-sided, normal) as arrays, and covariance, the matrix
    they come from. str() is a table; to_dict() maps each name to its row."""

    def __init__(self, names, estimates, covariance):
        """The summary of parameters `names` with values `estimates` and this covariance."""
        self.names = list(names)
        self.estimates = np.asarray(estimates, dtype=np.float64)
        self.covariance = covariance
        self.standard_errors = np.sqrt(np.diag(covariance))
        with np.errstate(divide="ignore", invalid="ignore"):
            self.z_values = self.estimates / self.standard_errors
        self.p_values = np.array([math.erfc(abs(z) / math.sqrt(2.0)) for z in self.z_values])

    def __len__(self):
        return len(self.names)

    def to_dict(self):
        """name -> {"estimate", "standard_error", "z_value", "p_value"} for every parameter."""
        return {name: {"estimate": float(estimate), "standard_error": float(error),
                       "z_value": float(z), "p_value": float(p)}
                for name, estimate, error, z, p in zip(self.names, self.estimates,
                                                       self.standard_errors, self.z_values,
                                                       self.p_values)}

    def __str__(self):
        width = max([len("parameter")] + [len(name) for name in self.names])
        lines = [f"{'parameter':<{width}} {'estimate':>12} {'std. error':>12} {'z':>9} "
                 f"{'P(>|z|)':>10}"]
        for name, estimate, error, z, p in zip(self.names, self.estimates,
                                               self.standard_errors, self.z_values,
                                               self.p_values):
            lines.append(f"{name:<{width}} {estimate:>12.6g} {error:>12.6g} {z:>9.3f} "
                         f"{p:>10.3g}")
        return "\n".join(lines)

    def __repr__(self):
        return f"<Summary of {len(self.names)} parameters>\n{self}"


class Model:
    """A libmoe model (moe_model_t): the gate, the experts and, for Gaussian experts, their
    variances. Create one with Model.create, load one with Model.load or Model.from_bytes,
    or take a fitted estimator's model_. Pickles as libmoe's own bytes.

    Every call here takes the model as const, so a failure's message is the thread's
    (moe_last_error, what check reads), not the model's (moe_model_last_error keeps only
    failures of calls that modify the model)."""

    def __init__(self, handle):
        """Wrap a moe_model_t handle this object then owns (and frees)."""
        self._handle = ctypes.c_void_p(handle)

    @classmethod
    def create(cls, n_experts, n_features, family="gaussian", intercept=True, n_classes=0,
               link="identity", gate_features=None, expert_features=None, gate_intercept=True,
               expert_intercept=True, offset=None, trials=None):
        """A model with neutral parameters (equal gate weights, zero coefficients, unit
        variances). family: one of FAMILIES ("gaussian", "logistic", "multinomial"); link:
        one of LINKS, the Gaussian experts' mean function; n_classes for multinomial
        experts.

        libmoe 1.1: gate_features and expert_features are the column indices of X the gate
        and the experts see (None: every column; [] none, the intercept alone); the part
        sees the intercept when intercept and its gate_intercept or expert_intercept are
        true. offset is the index of a column that enters every expert's linear predictor
        with coefficient 1 (the log exposure of Poisson experts; not multinomial ones), or
        None. X stays the whole design everywhere; the coefficients of inputs a part does
        not see are held at 0 (the offset's at 1) and are not free parameters.

        libmoe 1.2: trials is the index of the column that holds binomial experts' numbers
        of trials (y the successes among them), or None (one trial a row); neither part sees
        it."""
        family_value = _value_of("family", family, lib.moe_family_from_name, FAMILIES)
        link_value = _value_of("link", link, lib.moe_link_from_name, LINKS)
        # Checked here: ctypes would store -1 in a size_t as 2^64 - 1.
        n_experts = whole_number("n_experts", n_experts, 1, SIZE_MAX)
        n_features = whole_number("n_features", n_features, 0, SIZE_MAX)
        n_classes = whole_number("n_classes", n_classes, 0, SIZE_MAX)
        restricted = (gate_features is not None or expert_features is not None
                      or not gate_intercept or not expert_intercept or offset is not None)
        spec = ModelSpec()
        version = MODEL_SPEC_VERSION
        if lib.moe_model_spec_init(ctypes.byref(spec), version) != 0:
            if trials is not None:  # a libmoe 1.1 knows versions 1 and 2
                raise invalid(f"the loaded libmoe ({lib.moe_version_string().decode()}) "
                              "has no trials: that needs libmoe 1.2")
            version = 2
        if version == 2 and lib.moe_model_spec_init(ctypes.byref(spec), version) != 0:
            if restricted:  # a libmoe 1.0 knows only version 1
                raise invalid(f"the loaded libmoe ({lib.moe_version_string().decode()}) "
                              "cannot give the gate and the experts their own features or an "
                              "offset: that needs libmoe 1.1")
            check(lib.moe_model_spec_init(ctypes.byref(spec), 1))
        spec.family = family_value
        spec.n_experts = n_experts
        spec.n_features = n_features
        spec.intercept = 1 if intercept else 0
        spec.n_classes = n_classes
        spec.link = link_value
        # The masks live until moe_model_create has copied them.
        masks = [_feature_mask(name, indices, n_features)
                 for name, indices in (("gate_features", gate_features),
                                       ("expert_features", expert_features))]
        if restricted:
            spec.gate_features, spec.expert_features = masks
            spec.gate_intercept = 1 if gate_intercept else 0
            spec.expert_intercept = 1 if expert_intercept else 0
            spec.offset_feature = (-1 if offset is None else
                                   whole_number("offset", offset, 0, max(n_features - 1, 0)))
        if trials is not None:
            spec.trials_feature = whole_number("trials", trials, 0, max(n_features - 1, 0))
        handle = ctypes.c_void_p()
        check(lib.moe_model_create(ctypes.byref(handle), ctypes.byref(spec)))
        return cls(handle.value)

    def __del__(self):
        if getattr(self, "_handle", None) is not None and self._handle.value:
            lib.moe_model_free(self._handle)
            self._handle = ctypes.c_void_p()

    # ---- structure and parameters ------------------------------------------------------
    @property
    def n_experts(self):
        """K, the number of experts."""
        return lib.moe_model_n_experts(self._handle)

    @property
    def n_features(self):
        """d, the number of columns of X."""
        return lib.moe_model_n_features(self._handle)

    @property
    def n_classes(self):
        """The classes of multinomial experts; 0 for the other families."""
        return lib.moe_model_n_classes(self._handle)

    @property
    def family(self):
        """The experts' family, as the library names it ("gaussian", "logistic",
        "multinomial")."""
        return lib.moe_family_name(lib.moe_model_family(self._handle)).decode()

    @property
    def link(self):
        """The link of the experts' mean, as the library names it ("identity", "sigmoid",
        "relu"; the classification families have "identity")."""
        return lib.moe_link_name(lib.moe_model_link(self._handle)).decode()

    @property
    def intercept(self):
        """True when every gate and expert row has an intercept (x~ = [1, x])."""
        return bool(lib.moe_model_has_intercept(self._handle))

    def _spec(self):
        """The model's moe_model_spec as the loaded libmoe fills it (version 2 when it knows
        it, else 1, whose models see every input)."""
        spec = ModelSpec()
        if lib.moe_model_spec_init(ctypes.byref(spec), MODEL_SPEC_VERSION) != 0:
            check(lib.moe_model_spec_init(ctypes.byref(spec), 1))
        check(lib.moe_model_get_spec(self._handle, ctypes.byref(spec)))
        return spec

    def _roles(self, spec, gate):
        """HELD, FREE or OFFSET for each input (intercept first) of the gate or the
        experts."""
        d = spec.n_features
        roles = []
        if spec.intercept:
            flag = spec.gate_intercept if gate else spec.expert_intercept
            roles.append(FREE if spec.version < 2 or flag else HELD)
        features = spec.gate_features if gate else spec.expert_features
        for j in range(d):
            if spec.version < 2 or not features:
                role = FREE
            else:
                role = {0: HELD, 1: FREE}.get(features[j], OFFSET if not gate else FREE)
            if not gate and spec.version >= 2 and spec.offset_feature == j:
                role = OFFSET
            roles.append(role)
        return roles

    @property
    def gate_inputs(self):
        """Boolean mask over the inputs (intercept first) whose gate coefficients are
        estimated; the others are held at zero (libmoe 1.1)."""
        return np.array(self._roles(self._spec(), True)) == FREE

    @property
    def expert_inputs(self):
        """Boolean mask over the inputs (intercept first) whose expert coefficients are
        estimated; the others are held at zero, the offset's at one (libmoe 1.1)."""
        return np.array(self._roles(self._spec(), False)) == FREE

    @property
    def gate_features(self):
        """The column indices of X the gate sees."""
        mask = self.gate_inputs[1 if self.intercept else 0:]
        return [int(j) for j in np.flatnonzero(mask)]

    @property
    def expert_features(self):
        """The column indices of X the experts see (the offset's excluded)."""
        mask = self.expert_inputs[1 if self.intercept else 0:]
        return [int(j) for j in np.flatnonzero(mask)]

    @property
    def offset(self):
        """The column index of the experts' offset, or None."""
        spec = self._spec()
        return int(spec.offset_feature) if spec.version >= 2 and spec.offset_feature >= 0 \
            else None

    @property
    def n_free_params(self):
        """The number of free parameters: the size of vcov and of parameter_names()."""
        return lib.moe_model_n_free_params(self._handle)

    @property
    def gate(self):
        """K x p gate rows (intercept first; the last row is the zero reference)."""
        K, p = self.n_experts, lib.moe_model_n_inputs(self._handle)
        out = np.empty((K, p))
        check(lib.moe_model_get_gate(self._handle, pointer(out), out.size))
        return out

    @property
    def experts(self):
        """K x rows x p expert coefficients (rows: 1, or classes for multinomial experts)."""
        K, p = self.n_experts, lib.moe_model_n_inputs(self._handle)
        rows = lib.moe_model_expert_rows(self._handle)
        out = np.empty((K, rows, p))
        check(lib.moe_model_get_experts(self._handle, pointer(out), out.size))
        return out if rows > 1 else out[:, 0, :]

    @property
    def variances(self):
        """The K experts' variances (Gaussian experts; for t experts the squared scales);
        None for the families without them (moe_model_scale_kind)."""
        if lib.moe_model_scale_kind(self._handle) not in (_SCALE_VARIANCE, _SCALE_STUDENT):
            return None
        out = np.empty(self.n_experts)
        check(lib.moe_model_get_variances(self._handle, pointer(out), out.size))
        return out

    @property
    def degrees(self):
        """The K t experts' degrees of freedom nu (libmoe 1.1), or Gamma experts' shapes
        (libmoe 1.2); None for other families."""
        if lib.moe_model_scale_kind(self._handle) not in (_SCALE_STUDENT, _SCALE_SHAPE):
            return None
        out = np.empty(self.n_experts)
        check(lib.moe_model_get_degrees(self._handle, pointer(out), out.size))
        return out

    def set_degrees(self, values):
        """Set the t experts' degrees of freedom (K values in [0.1, 1e6]); em keeps them
        with the fitter option update_degrees=0 and starts from them otherwise."""
        values = np.ascontiguousarray(values, dtype=float).ravel()
        check(lib.moe_model_set_degrees(self._handle, pointer(values), values.size),
              lambda: lib.moe_model_last_error(self._handle))

    # ---- evaluation ------------------------------------------------------------------
    def _rows(self, X):
        return as_rows(X, self.n_features)

    def _data(self, X, y, sample_weight=None):
        return checked_rows(X, self.n_features, y, sample_weight)

    def predict(self, X):
        """The mixture's prediction for each row of X: E[y | x] for Gaussian experts,
        P(y = 1 | x) for logistic ones (n values), and an n x classes array of P(y = c | x)
        for multinomial ones."""
        X = self._rows(X)
        width = lib.moe_model_prediction_width(self._handle)
        out = np.empty((X.shape[0], width))
        check(lib.moe_model_predict(self._handle, X.shape[0], pointer(X), leading(X), pointer(out),
                                    out.size))
        return out if width > 1 else out[:, 0]

    def gate_proba(self, X):
        """n x K gate probabilities pi_k(x) of each row of X."""
        X = self._rows(X)
        out = np.empty((X.shape[0], self.n_experts))
        check(lib.moe_model_gate_proba(self._handle, X.shape[0], pointer(X), leading(X),
                                       pointer(out), out.size))
        return out

    def posterior(self, X, y):
        """n x K posterior probabilities P(expert k | x, y) of each row."""
        X, y, _ = self._data(X, y)
        out = np.empty((X.shape[0], self.n_experts))
        check(lib.moe_model_posterior(self._handle, X.shape[0], pointer(X), leading(X), pointer(y),
                                      pointer(out), out.size))
        return out

    def classify(self, X):
        """The most probable class code (0 .. classes - 1; logistic: 1 when P(y = 1 | x) >
        1/2) of each row, by libmoe's rule (moe_model_classify, that of its accuracy: ties
        to the lower class). Classification families only."""
        X = self._rows(X)
        out = np.empty(X.shape[0], dtype=np.uintp)
        check(lib.moe_model_classify(self._handle, X.shape[0], pointer(X), leading(X),
                                     out.ctypes.data_as(c_size_t_p), out.size))
        return out.astype(np.intp)

    def cluster(self, X, y=None):
        """The expert (0 .. K - 1, rows of gate and experts) each row belongs to: the one of
        largest posterior P(k | x, y) given y, else of largest gate probability pi_k(x); ties
        to the lower expert (moe_model_cluster)."""
        if y is None:
            X = self._rows(X)
        else:
            X, y, _ = self._data(X, y)
        out = np.empty(X.shape[0], dtype=np.uintp)
        check(lib.moe_model_cluster(self._handle, X.shape[0], pointer(X), leading(X), pointer(y),
                                    out.ctypes.data_as(c_size_t_p), out.size))
        return out.astype(np.intp)

    def loglik(self, X, y, sample_weight=None):
        """The (weighted) log-likelihood sum_i w_i log p(y_i | x_i)."""
        X, y, w = self._data(X, y, sample_weight)
        value = ctypes.c_double()
        check(lib.moe_model_loglik(self._handle, X.shape[0], pointer(X), leading(X), pointer(y),
                                   pointer(w), ctypes.byref(value)))
        return value.value

    def criteria(self, X, y, sample_weight=None):
        """A dict of loglik, n_params, n_obs, aic, bic, icl and entropy."""
        X, y, w = self._data(X, y, sample_weight)
        result = Criteria()
        check(lib.moe_criteria_init(ctypes.byref(result), MOE_CRITERIA_VERSION))
        check(lib.moe_model_criteria(self._handle, X.shape[0], pointer(X), leading(X), pointer(y),
                                     pointer(w), ctypes.byref(result)))
        return {name: getattr(result, name) for name, _ in Criteria._fields_ if name != "version"}

    def aic(self, X, y):
        """Akaike's criterion, -2 loglik + 2 n_params (smaller is better)."""
        return self.criteria(X, y)["aic"]

    def bic(self, X, y):
        """The Bayesian criterion, -2 loglik + n_params log(n) (smaller is better)."""
        return self.criteria(X, y)["bic"]

    def icl(self, X, y):
        """The integrated completed likelihood, BIC plus twice the posterior entropy."""
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

    def parameter_names(self, feature_names=None, classes=None):
        """The names of the free parameters, in the order of vcov: the gate's free rows
        ("gate[1].intercept", "gate[1].x1", ...; the last expert is the reference; only the
        inputs the gate sees, and below only those the experts see), the
        experts' ("expert[2].x1"; multinomial experts "expert[2].class[a].x1" for every class
        but the last, the reference), then the variances ("variance[1]"; t experts: the
        squared scales "scale2[1]", then the degrees of freedom "nu[1]"). feature_names
        replaces x1, x2, ...; classes the multinomial class codes 0, 1, ...."""
        all_inputs = _input_names(self.n_features, self.intercept, feature_names)
        # Only the inputs a part estimates (libmoe 1.1: held coefficients are not free).
        gate_inputs = [name for name, free in zip(all_inputs, self.gate_inputs) if free]
        inputs = [name for name, free in zip(all_inputs, self.expert_inputs) if free]
        K = self.n_experts
        names = [f"gate[{k + 1}].{name}" for k in range(K - 1) for name in gate_inputs]
        if self.family == "multinomial":
            labels = list(range(self.n_classes)) if classes is None else list(classes)
            names += [f"expert[{k + 1}].class[{label}].{name}" for k in range(K)
                      for label in labels[:-1] for name in inputs]
        else:
            names += [f"expert[{k + 1}].{name}" for k in range(K) for name in inputs]
        if self.family == "gaussian":
            names += [f"variance[{k + 1}]" for k in range(K)]
        if self.family == "t":
            names += [f"scale2[{k + 1}]" for k in range(K)]
            names += [f"nu[{k + 1}]" for k in range(K)]
        return names

    def parameter_vector(self):
        """The free parameters' values, in the order of vcov and parameter_names()."""
        K = self.n_experts
        values = [self.gate[:K - 1][:, self.gate_inputs].ravel()]
        experts = self.experts[..., self.expert_inputs]
        values.append(experts[:, :-1, :].ravel() if self.family == "multinomial"
                      else experts.ravel())
        if self.family in ("gaussian", "t"):
            values.append(self.variances)
        if self.family == "t":
            values.append(self.degrees)
        return np.concatenate(values)

    def summary(self, X, y, sample_weight=None, gate_l2=0.0, expert_ridge=0.0,
                feature_names=None, classes=None):
        """A Summary: every free parameter named, with its estimate and its standard error
        from vcov (pass the penalties of the fit, as for vcov)."""
        covariance = self.vcov(X, y, sample_weight, gate_l2=gate_l2, expert_ridge=expert_ridge)
        return Summary(self.parameter_names(feature_names, classes), self.parameter_vector(),
                       covariance)

    def standard_errors(self, X, y, sample_weight=None, gate_l2=0.0, expert_ridge=0.0,
                        feature_names=None, classes=None):
        """name -> standard error of every free parameter (see summary and vcov)."""
        result = self.summary(X, y, sample_weight, gate_l2, expert_ridge, feature_names, classes)
        return dict(zip(result.names, result.standard_errors.tolist()))

    # ---- persistence ------------------------------------------------------------------
    def to_bytes(self):
        """The model in libmoe's portable format (what save writes)."""
        size = ctypes.c_size_t()
        check(lib.moe_model_save_buffer(self._handle, None, 0, ctypes.byref(size)))
        buffer = ctypes.create_string_buffer(size.value)
        check(lib.moe_model_save_buffer(self._handle, buffer, size.value, ctypes.byref(size)))
        return buffer.raw[:size.value]

    @classmethod
    def from_bytes(cls, data):
        """A model from to_bytes' output; MoeValueError for anything else."""
        handle = ctypes.c_void_p()
        buffer = ctypes.create_string_buffer(bytes(data), len(data))
        check(lib.moe_model_load_buffer(ctypes.byref(handle), buffer, len(data)))
        return cls(handle.value)

    def save(self, path):
        """Write the model to a file (atomically replacing one that is there)."""
        check(lib.moe_model_save(self._handle, file_name("path", path)))

    @classmethod
    def load(cls, path):
        """A model from a file that save (or the moe tool) wrote."""
        handle = ctypes.c_void_p()
        check(lib.moe_model_load(ctypes.byref(handle), file_name("path", path)))
        return cls(handle.value)

    def copy(self):
        """An independent deep copy."""
        handle = ctypes.c_void_p()
        check(lib.moe_model_clone(ctypes.byref(handle), self._handle))
        return Model(handle.value)

    def __reduce__(self):
        return (Model.from_bytes, (self.to_bytes(),))

    def __repr__(self):
        return (f"Model({self.family}, n_experts={self.n_experts}, "
                f"n_features={self.n_features})")
