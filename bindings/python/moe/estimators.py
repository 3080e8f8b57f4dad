"""scikit-learn style estimators over libmoe's fitters: MoERegressor (Gaussian experts) and
MoEClassifier (logistic or multinomial experts)."""
import collections
import ctypes
import threading
import warnings

import numpy as np

from ._checks import (MOE_ERR_DIMENSION, invalid, option_table, option_text, per_row, text,
                      whole_number)
from ._lib import MOE_ERR_CANCELLED, PROGRESS_FN, check, lib
from .model import FAMILIES, Model, checked_rows, in_place, leading, pointer

try:  # scikit-learn is optional: without it the estimators still work, with less checking
    from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin
    from sklearn.metrics import r2_score
    from sklearn.utils.metaestimators import available_if
    from sklearn.utils.multiclass import check_classification_targets
    from sklearn.utils.validation import (_check_sample_weight, check_array, check_is_fitted,
                                          check_X_y)
    HAVE_SKLEARN = True
except ImportError:  # pragma: no cover
    HAVE_SKLEARN = False

    class BaseEstimator:
        pass

    class RegressorMixin:
        pass

    class ClassifierMixin:
        pass

    def available_if(check):
        return lambda method: method


def _validate(X, y, sample_weight, numeric):
    """X, y and weights as libmoe needs them, with scikit-learn's messages when it is there."""
    if HAVE_SKLEARN:
        X, y = check_X_y(X, y, dtype=np.float64, y_numeric=numeric)
        X = X if in_place(X) else np.ascontiguousarray(X)
        if sample_weight is not None:
            sample_weight = _check_sample_weight(sample_weight, X, dtype=np.float64)
        return X, y, sample_weight
    X = np.asarray(X, dtype=np.float64)
    X = X if X.ndim == 2 and in_place(X) else np.ascontiguousarray(X)
    if X.ndim != 2:
        raise ValueError(f"X must be 2-dimensional, got {X.ndim} dimensions")
    # y's and the weights' lengths: checked_rows, as for every call into libmoe.
    return X, np.asarray(y), sample_weight


def _column_names(X):
    """X's column names as an object array, as scikit-learn reads them: X names its columns
    (a pandas DataFrame, or anything with a `columns` of strings) and every name is a string.
    None when X has no such names or none is a string; a mix is a TypeError."""
    columns = getattr(X, "columns", None)
    if columns is None or isinstance(X, np.ndarray):
        return None
    try:
        names = list(columns)
    except TypeError:
        return None
    strings = [isinstance(name, str) for name in names]
    if names and all(strings):
        return np.asarray(names, dtype=object)
    if any(strings):
        kinds = sorted({type(name).__name__ for name in names})
        raise TypeError(f"X's column names must be all strings or none, got {', '.join(kinds)}: "
                        "convert them, e.g. X.columns = X.columns.astype(str)")
    return None


def _listed(heading, names, most=5):
    """A section of the message of other columns, in scikit-learn's form ("- name" lines,
    sorted, at most `most` and then "- ..."): a frame may have thousands."""
    names = sorted(names)
    lines = [f"- {name}" for name in names[:most]] + (["- ..."] if len(names) > most else [])
    return f"{heading}:\n" + "".join(f"{line}\n" for line in lines)


def _check_columns(estimator, names):
    """Refuse X whose named columns are not the fit's, in the fit's order: libmoe reads
    columns by position, so other names or another order would answer for other data.
    Reordered columns are refused, not put back in order, as scikit-learn does: a frame
    that differs from the fit's usually means a mistake upstream, and the same code then
    behaves alike with every estimator of a pipeline. The message is scikit-learn's, which
    its estimator checks match, with the columns and the remedy after it. X without names
    is taken with a warning, as scikit-learn takes it (names the estimator cannot check)."""
    fitted = getattr(estimator, "feature_names_in_", None)
    kind = type(estimator).__name__
    if names is None or fitted is None:
        if names is None and fitted is not None:
            warnings.warn(f"X does not have valid feature names, but {kind} was fitted with "
                          "feature names", UserWarning, stacklevel=4)
        elif names is not None and hasattr(estimator, "model_"):
            warnings.warn(f"X has feature names, but {kind} was fitted without feature names",
                          UserWarning, stacklevel=4)
        return
    if list(names) == list(fitted):
        return
    message = "The feature names should match those that were passed during fit.\n"
    unexpected = set(names) - set(fitted)
    missing = set(fitted) - set(names)
    if unexpected:
        message += _listed("Feature names unseen at fit time", unexpected)
    if missing:
        message += _listed("Feature names seen at fit time, yet now missing", missing)
    if not (unexpected or missing):
        if collections.Counter(names) == collections.Counter(fitted):
            message += "Feature names must be in the same order as they were in fit.\n"
        else:
            message += "Feature names must be those of the fit, each as often.\n"
        message += "Select the fit's columns in its order with X[estimator.feature_names_in_]."
    raise invalid(message, MOE_ERR_DIMENSION)


def _rows(estimator, X):
    """X for a fitted estimator's prediction: the fit's columns (checked by name when X
    names them), as float64 rows libmoe reads in place."""
    if HAVE_SKLEARN:
        check_is_fitted(estimator, "model_")
    _check_columns(estimator, _column_names(X))
    if HAVE_SKLEARN:
        X = check_array(X, dtype=np.float64)
    X = np.asarray(X, dtype=np.float64)
    return X if in_place(X) else np.ascontiguousarray(X)


class _Report(ctypes.Structure):
    """moe_fit_report as moe/fitter.h lays it out, version REPORT_VERSION: a later libmoe
    fills the fields of the version asked for and no more."""
    _fields_ = [("version", ctypes.c_uint), ("status", ctypes.c_int),
                ("iterations", ctypes.c_size_t), ("total_iterations", ctypes.c_size_t),
                ("loglik", ctypes.c_double), ("converged", ctypes.c_int),
                ("n_restarts", ctypes.c_size_t), ("best_restart", ctypes.c_size_t),
                ("seconds", ctypes.c_double), ("monotonicity_violations", ctypes.c_size_t),
                ("worst_relative_decrease", ctypes.c_double), ("degenerate_events", ctypes.c_size_t),
                ("inner_iterations", ctypes.c_size_t), ("gradient_evaluations", ctypes.c_size_t),
                ("ridge_fallbacks", ctypes.c_size_t), ("line_search_failures", ctypes.c_size_t),
                ("floored_variances", ctypes.c_size_t),
                ("separation_events", ctypes.c_size_t), ("step", ctypes.c_double),
                ("gate_step", ctypes.c_double),
                ("samples_seen", ctypes.c_size_t), ("batches", ctypes.c_size_t),
                ("stages", ctypes.c_uint), ("stage_seconds", ctypes.c_double * 3),
                ("search_runs", ctypes.c_size_t), ("search_iterations", ctypes.c_size_t),
                ("stream_steps", ctypes.c_size_t), ("stream_rows", ctypes.c_size_t),
                ("stream_loglik", ctypes.c_double), ("warnings", ctypes.c_uint),
                ("gate_transition", ctypes.c_double)]


REPORT_VERSION = 1  # the layout _Report describes: MOE_FIT_REPORT_VERSION of moe/fitter.h
STAGE_STREAM = 0x8
WARNING_GATE_SEPARATED = 0x1


class GateSeparationWarning(UserWarning):
    """The fitted gate separates the rows: its maximum likelihood lies at infinity."""


GATE_SEPARATED_MESSAGE = (
    "libmoe: the gate separates the rows (its smallest transition holds {rows:.2g} rows): its "
    "maximum likelihood lies at infinity, so its coefficients are where the iterations "
    "stopped and their standard errors and p-values are not meaningful (the likelihood is "
    "flat towards infinity); the experts and the gate's borders are still estimated. For a "
    "finite gate, refit with a gate penalty, e.g. gate_l2=1e-4.")


lib.moe_fit_report_init.restype = ctypes.c_int
lib.moe_fit_report_init.argtypes = [ctypes.POINTER(_Report), ctypes.c_uint]
lib.moe_fitter_get_report.restype = ctypes.c_int
lib.moe_fitter_get_report.argtypes = [ctypes.c_void_p, ctypes.POINTER(_Report)]


CANCELLED = "libmoe: the fit was cancelled"


def _report_attributes(fitter):
    """The fitted attributes the report gives: n_iter_ (the best restart's iterations),
    n_search_iter_ and n_search_runs_ (the start search's EM iterations and runs, counted
    apart), converged_ (None for a streaming session, which has no convergence test),
    stream_ (a session's rows, steps and prequential average log-likelihood per row, else
    None), gate_separated_, and report_ (every field, as a dict)."""
    report = _Report()
    if (lib.moe_fit_report_init(ctypes.byref(report), REPORT_VERSION) != 0
            or lib.moe_fitter_get_report(fitter._handle, ctypes.byref(report)) != 0):
        return {}
    fields = {}
    for name, kind in _Report._fields_:
        value = getattr(report, name)
        fields[name] = list(value) if name == "stage_seconds" else value
    streaming = bool(report.stages & STAGE_STREAM)
    stream = None
    if streaming:
        rows = report.stream_rows
        stream = {"rows": report.samples_seen, "batches": report.batches,
                  "steps": report.stream_steps, "scored_rows": rows,
                  "average_loglik": report.stream_loglik / rows if rows else float("nan")}
    return {"n_iter_": report.iterations, "n_search_iter_": report.search_iterations,
            "n_search_runs_": report.search_runs,
            "converged_": None if streaming else bool(report.converged), "stream_": stream,
            "gate_separated_": bool(report.warnings & WARNING_GATE_SEPARATED),
            "report_": fields}


class _Fitter:
    """A moe_fitter_t for one fit: options as text, Ctrl-C through the progress callback."""

    def __init__(self, estimator, options):
        # Every name and value is checked before the library sees any: options that cannot
        # be what the caller meant (a NUL, a wrapped count) fail before a handle exists.
        settings = [(text("option name", name), option_text(estimator, name, value))
                    for name, value in options.items() if value is not None]
        self._handle = ctypes.c_void_p()
        check(lib.moe_fitter_create(ctypes.byref(self._handle), text("estimator", estimator)))
        for name, value in settings:
            check(lib.moe_fitter_set_option(self._handle, name, value), self._message)
        self._interrupted = False

        def progress(_progress, _user):
            return 1 if self._interrupted else 0

        self._progress = PROGRESS_FN(progress)
        check(lib.moe_fitter_set_progress(self._handle, self._progress, None), self._message)

    def _message(self):
        return lib.moe_fitter_last_error(self._handle)

    def __del__(self):
        if getattr(self, "_handle", None) is not None and self._handle.value:
            lib.moe_fitter_free(self._handle)
            self._handle = ctypes.c_void_p()

    @property
    def estimator(self):
        return lib.moe_fitter_estimator_name(self._handle).decode()

    def state(self):
        """The fitter's state (options, the streaming session) as libmoe's bytes."""
        size = ctypes.c_size_t()
        check(lib.moe_fitter_save_state_buffer(self._handle, None, 0, ctypes.byref(size)),
              self._message)
        buffer = ctypes.create_string_buffer(size.value)
        check(lib.moe_fitter_save_state_buffer(self._handle, buffer, size.value,
                                               ctypes.byref(size)), self._message)
        return buffer.raw[:size.value]

    def restore(self, state):
        buffer = ctypes.create_string_buffer(bytes(state), len(state))
        check(lib.moe_fitter_load_state_buffer(self._handle, buffer, len(state)), self._message)

    @classmethod
    def from_state(cls, state, estimator):
        fitter = cls(estimator, {})
        fitter.restore(state)
        return fitter

    def penalty(self, name):
        """The value of a penalty option (gate_l2, expert_ridge) this fitter fitted with; 0
        when its estimator has no such option."""
        value = ctypes.c_double()
        if lib.moe_fitter_get_double(self._handle, _OPTION_NUMBERS[name],
                                     ctypes.byref(value)) != 0:
            return 0.0
        return value.value

    def run(self, function, model, X, y, weights):
        """The fit on a thread of its own (ctypes releases the GIL for the call), so that
        Ctrl-C reaches Python and cancels the fit through the callback."""
        result = {}
        # The end of the call, signalled by the thread itself: Thread.join interrupted by
        # KeyboardInterrupt may report the thread finished while the library still runs
        # on it (CPython before 3.13), and leaving then would unload the library under it.
        finished = threading.Event()

        def call():
            try:
                result["status"] = function(self._handle, model._handle, X.shape[0],
                                            pointer(X), leading(X), pointer(y),
                                            pointer(weights))
            finally:
                finished.set()

        thread = threading.Thread(target=call)
        thread.start()
        try:
            try:
                while not finished.wait(0.05):
                    pass
            except KeyboardInterrupt:
                self._interrupted = True
                while not finished.wait(0.05):
                    pass
                thread.join()
                # Raised even when the fit ended before it saw the request: the caller asked
                # for no result.
                raise KeyboardInterrupt(f"{CANCELLED} (Ctrl-C)") from None
        finally:
            # The flag belongs to this call: a fitter kept for the next partial_fit must not
            # cancel that one too.
            self._interrupted = False
        status = result["status"]
        if status == MOE_ERR_CANCELLED:
            raise KeyboardInterrupt(f"{CANCELLED}: {self._message().decode()}")
        check(status, self._message)


# The options the library pins (moe_option_name), except seed, which random_state sets.
_PINNED_OPTIONS = (
    "n_init", "max_iter", "tol", "init", "gate_l2", "expert_ridge", "variance_floor",
    "gate_max_newton", "gate_tol", "min_expert_weight", "threads", "step", "gate_step",
    "batch_size", "line_search", "inner_steps", "update_variance", "expert_max_newton",
    "expert_tol", "gate_solver", "update_experts", "optimizer", "beta1", "beta2",
    "optimizer_eps", "weight_decay", "update_degrees", "search_shards",
)


_OPTION_NUMBERS = {lib.moe_option_name(number).decode(): number for number in range(1, 64)
                   if lib.moe_option_name(number) is not None}


def _without_intercept(model, values, n_features):
    """The columns of gate or expert rows that multiply X's features (scikit-learn's coef_):
    the first n_features after the intercept, not the offset and trials fit() appends."""
    start = 1 if model.intercept else 0
    return values[..., start:start + n_features]


def _intercepts(model, values):
    """The intercept column of gate or expert rows; zeros for a model without intercepts."""
    return values[..., 0] if model.intercept else np.zeros(values.shape[:-1])


def _column(name, value, names, n_features):
    """The index of one column of X: an index, or a name among X's column names."""
    if isinstance(value, str):
        if names is None:
            raise invalid(f"{name}: {value!r} is a column name, but X has no column names "
                          "(fit on a data frame, or give column indices)")
        matches = [j for j, column in enumerate(names) if column == value]
        if not matches:
            raise invalid(f"{name}: X has no column {value!r} (its columns: "
                          f"{', '.join(map(str, names[:10]))}{', ...' if len(names) > 10 else ''})")
        return matches[0]
    index = whole_number(name, value, 0, max(n_features - 1, 0))
    if index >= n_features:
        raise invalid(f"{name}: X has no column {index}")
    return index


def _columns(name, values, names, n_features):
    """The indices of a list of columns (None stays None: every column)."""
    if values is None:
        return None
    if isinstance(values, (str, int, np.integer)):
        values = [values]
    return [_column(name, value, names, n_features) for value in values]


class _MoE(BaseEstimator):
    """What the regressor and the classifier share: the options, the fit into a new model,
    coefficients under scikit-learn's names, named standard errors and hard assignments."""

    _family = "gaussian"

    # Every option the library pins is a keyword (None: the library's default); options of
    # one estimator only (cqt, ismm, ot) go in `options`, a dict of name to value.
    def __init__(self, n_experts=2, estimator="em", fit_intercept=True, random_state=None,
                 n_init=None, max_iter=None, tol=None, init=None, gate_l2=None, expert_ridge=None,
                 variance_floor=None, gate_max_newton=None, gate_tol=None, min_expert_weight=None,
                 threads=None, step=None, gate_step=None, batch_size=None, line_search=None,
                 inner_steps=None, update_variance=None, expert_max_newton=None, expert_tol=None,
                 gate_solver=None, update_experts=None, optimizer=None, beta1=None, beta2=None,
                 optimizer_eps=None, weight_decay=None, update_degrees=None, search_shards=None,
                 options=None,
                 gate_features=None, expert_features=None, offset=None):
        """Keep the parameters as given (scikit-learn's convention: they are checked by fit).
        None leaves an option at libmoe's default; `options` is a dict of further option
        names to values. gate_features, expert_features: the columns of X the gate and the
        experts see (indices, or names for X with column names; [] none: the intercept
        alone; None every column but the offset); offset: the column added to every
        expert's linear predictor with coefficient 1 (libmoe 1.1)."""
        self.n_experts = n_experts
        self.estimator = estimator
        self.fit_intercept = fit_intercept
        self.random_state = random_state
        self.n_init = n_init
        self.max_iter = max_iter
        self.tol = tol
        self.init = init
        self.gate_l2 = gate_l2
        self.expert_ridge = expert_ridge
        self.variance_floor = variance_floor
        self.gate_max_newton = gate_max_newton
        self.gate_tol = gate_tol
        self.min_expert_weight = min_expert_weight
        self.threads = threads
        self.step = step
        self.gate_step = gate_step
        self.batch_size = batch_size
        self.line_search = line_search
        self.inner_steps = inner_steps
        self.update_variance = update_variance
        self.expert_max_newton = expert_max_newton
        self.expert_tol = expert_tol
        self.gate_solver = gate_solver
        self.update_experts = update_experts
        self.optimizer = optimizer
        self.beta1 = beta1
        self.beta2 = beta2
        self.optimizer_eps = optimizer_eps
        self.weight_decay = weight_decay
        self.update_degrees = update_degrees
        self.search_shards = search_shards
        self.options = options
        self.gate_features = gate_features
        self.expert_features = expert_features
        self.offset = offset

    def _fitter_options(self):
        options = {name: getattr(self, name) for name in _PINNED_OPTIONS}
        if self.random_state is not None:
            seed = self.random_state
            if isinstance(seed, np.random.RandomState):
                seed = seed.randint(0, 2**31 - 1)
            upper = option_table("em")["seed"]["upper"]
            options["seed"] = whole_number("random_state", seed, 0, int(upper))
        if self.options is not None and not isinstance(self.options, dict):
            raise ValueError(f"options must be a dict of option name to value, got "
                             f"{self.options!r}")
        options.update(self.options or {})
        return options

    def _inputs(self, n_features, names, appended=()):
        """Model.create's gate_features, expert_features, offset and trials from the
        estimator's, which may name X's columns (names: X's column names, or None).
        appended: the roles ("offset", "trials") of the columns fit() put after X's
        n_features columns, from its offset= and trials= arguments."""
        offset = None if self.offset is None else _column("offset", self.offset, names,
                                                          n_features)
        given = getattr(self, "trials", None)
        trials = None if given is None else _column("trials", given, names, n_features)
        if "offset" in appended:
            offset = n_features + appended.index("offset")
        if "trials" in appended:
            trials = n_features + appended.index("trials")
        gate = _columns("gate_features", self.gate_features, names, n_features)
        experts = _columns("expert_features", self.expert_features, names, n_features)
        if offset is not None and experts is not None and offset in experts:
            raise invalid(f"expert_features lists column {self.offset!r}, the offset: the "
                          "experts take it with its coefficient fixed at 1")
        # An offset (a log exposure) is not a covariate of the gate unless one says so; the
        # trials never are (the library holds them out of both parts).
        if (offset is not None or trials is not None) and gate is None:
            gate = [j for j in range(n_features) if j != offset]
        inputs = {"gate_features": gate, "expert_features": experts, "offset": offset}
        if trials is not None:
            inputs["trials"] = trials
        return inputs

    def _new_model(self, n_features, n_classes=0, names=None, appended=()):
        family = self._family if n_classes <= 2 else "multinomial"
        return Model.create(self.n_experts, n_features + len(appended), family=family,
                            intercept=self.fit_intercept,
                            n_classes=n_classes if family == "multinomial" else 0,
                            **self._inputs(n_features, names, appended))

    def _deprecated_columns(self):
        """The DeprecationWarning of offset= and trials= as columns of X (constructor
        parameters since libmoe 1.1 and 1.2): they keep working, as a minor release must, but
        a transformer before the estimator rescales such a column like any feature, and the
        fit is then of another model without a word."""
        for role in ("offset", "trials"):
            if getattr(self, role, None) is not None:
                warnings.warn(
                    f"{type(self).__name__}({role}=column) is deprecated: a transformer before "
                    f"the estimator (a StandardScaler in a Pipeline) rescales that column of X "
                    f"and fits another model. Pass the values instead: fit(X, y, {role}=...) "
                    f"and predict(X, {role}=...).", DeprecationWarning, stacklevel=3)

    def _design(self, X, offset=None, trials=None, fitting=False, need_trials=True):
        """X and, after its columns, the offset and the trials given as arguments: the model's
        design, with the roles of the appended columns. They travel apart from X up to here
        so that no transformer of a pipeline sees them. A fit fixes which roles the model
        has; the other methods must then give the same (the trials may be left out where
        they change nothing, as for predict: each row's success probability)."""
        n = X.shape[0]
        if fitting:
            for role, value in (("offset", offset), ("trials", trials)):
                if value is not None and getattr(self, role, None) is not None:
                    raise invalid(f"{role} is given twice: as the column {getattr(self, role)!r} "
                                  f"of X (the constructor's {role}=) and as fit's {role}= values")
            roles = tuple(role for role, value in (("offset", offset), ("trials", trials))
                          if value is not None)
        else:
            roles = getattr(self, "_appended", ())
            for role, value in (("offset", offset), ("trials", trials)):
                if value is not None and role not in roles:
                    raise invalid(f"{role}= was not given to fit: the model has no {role}")
                if value is None and role in roles and (role == "offset" or need_trials):
                    raise invalid(f"the fit had {role}=: this needs each row's {role} too "
                                  f"({role}=, one value per row of X)")
        if not roles:
            return X, roles
        values = {"offset": offset, "trials": trials}
        columns = [X] + [np.ones(n) if values[role] is None else per_row(role, values[role], n)
                         for role in roles]
        return np.column_stack(columns), roles

    def _fit(self, X, y, sample_weight, partial, fitted=None, names=None, appended=()):
        """The fit, into a new model (or, continuing a stream, a copy of model_) that becomes
        model_ only once the library returns MOE_OK. A fit that fails or is cancelled (Ctrl-C)
        leaves the estimator as it was: unfitted, or with its previous fit and stream intact.
        `fitted`: further attributes (a classifier's classes) set with the fit, and only then.
        `names`: X's column names (_column_names), or None; those of a stream's first batch
        (partial_fit checks the next ones'). `appended`: the roles of the columns after X's
        own (_design)."""
        fitted = dict(fitted or {})
        continuing = partial and hasattr(self, "model_")
        if names is not None and not continuing:
            fitted["feature_names_in_"] = names
        if continuing:
            appended = self._appended
        X, y, w = checked_rows(X, self.n_features_in_ + len(appended) if continuing else None,
                               y, sample_weight)
        if continuing:
            model, fitter = self.model_.copy(), self._fitter
            # A cancelled partial fit may have advanced the session (libmoe keeps what the
            # estimator did before the cancel): the state from before goes back then.
            before = fitter.state()
        else:
            model = self._new_model(X.shape[1] - len(appended), fitted.get("_n_classes", 0),
                                    names, appended)
            fitter = _Fitter(self.estimator, self._fitter_options())
            before = None
        function = lib.moe_fitter_partial_fit if partial else lib.moe_fitter_fit
        try:
            fitter.run(function, model, X, y, w)
        except BaseException:
            if before is not None:
                fitter.restore(before)
            raise
        fitted.update(_report_attributes(fitter))
        fitted.update(model_=model, _fitter=fitter, n_features_in_=X.shape[1] - len(appended),
                      _appended=tuple(appended))
        for name, value in fitted.items():
            setattr(self, name, value)
        if names is None and not continuing:
            self.__dict__.pop("feature_names_in_", None)  # a refit on an array forgets them
        if getattr(self, "gate_separated_", False):
            warnings.warn(GATE_SEPARATED_MESSAGE.format(rows=self.report_["gate_transition"]),
                          GateSeparationWarning, stacklevel=3)
        return self

    # ---- the fitted parameters under scikit-learn's names: views of model_, in its order of
    # experts; model_.gate, model_.experts and model_.variances hold the same values with
    # the intercept as the first column.
    @property
    def coef_(self):
        """The experts' coefficients of X's features: n_experts x n_features (multinomial
        experts: n_experts x n_classes x n_features, the last class the reference, zero)."""
        return _without_intercept(self.model_, self.model_.experts, self.n_features_in_)

    @property
    def intercept_(self):
        """The experts' intercepts: n_experts values (multinomial: n_experts x n_classes);
        zeros for fit_intercept=False."""
        return _intercepts(self.model_, self.model_.experts)

    @property
    def gate_coef_(self):
        """The gate's coefficients of X's features, n_experts x n_features: the softmax
        weights of expert k are gate_coef_[k] . x + gate_intercept_[k]; the last row, the
        reference, is zero."""
        return _without_intercept(self.model_, self.model_.gate, self.n_features_in_)

    @property
    def gate_intercept_(self):
        """The gate's intercepts, n_experts values (the last is 0, the reference)."""
        return _intercepts(self.model_, self.model_.gate)

    def _penalties(self):
        """The gate_l2 and expert_ridge the fit used, from its fitter (the estimator's
        parameters may have changed since)."""
        return {name: self._fitter.penalty(name) for name in ("gate_l2", "expert_ridge")}

    def _classes_for_names(self):
        return None

    def _feature_names(self):
        """The names of the model's columns for summary: X's (feature_names_in_, else None:
        x1, x2, ...), then "offset" and "trials" for the columns fit appended."""
        names = getattr(self, "feature_names_in_", None)
        appended = getattr(self, "_appended", ())
        if not appended:
            return names
        names = [f"x{j + 1}" for j in range(self.n_features_in_)] if names is None \
            else list(names)
        return names + list(appended)

    def summary(self, X, y, sample_weight=None, offset=None, trials=None):
        """A moe.Summary of the fitted model on data (usually the fit's): every free
        parameter named after X's columns ("gate[1].x1", "expert[2].intercept",
        "variance[1]"; feature_names_in_ when the fit had them), with its estimate and
        standard error. A fit with gate_l2 or expert_ridge gets the penalised covariance
        (Model.vcov), with the fit's own penalties. offset and trials: as fit's."""
        X, _ = self._design(_rows(self, X), offset, trials)
        return self.model_.summary(X, self._encode(y), sample_weight,
                                   feature_names=self._feature_names(),
                                   classes=self._classes_for_names(), **self._penalties())

    def standard_errors(self, X, y, sample_weight=None, offset=None, trials=None):
        """name -> standard error of every free parameter (see summary)."""
        result = self.summary(X, y, sample_weight, offset=offset, trials=trials)
        return dict(zip(result.names, result.standard_errors.tolist()))

    def predict_cluster(self, X, y=None, offset=None, trials=None):
        """The expert (0 .. n_experts - 1) each row belongs to: of largest posterior
        P(k | x, y) given y, else of largest gate probability; ties to the lower expert."""
        X, _ = self._design(_rows(self, X), offset, trials, need_trials=y is not None)
        return self.model_.cluster(X, None if y is None else self._encode(y))

    def bic(self, X, y, offset=None, trials=None):
        """The Bayesian information criterion of the fitted model on data X, y (usually the
        fit's), -2 loglik + n_params log(n), n the rows of X and n_params the model's free
        parameters; smaller is better. As GaussianMixture.bic, with the response."""
        X, _ = self._design(_rows(self, X), offset, trials)
        return self.model_.bic(X, self._encode(y))

    def aic(self, X, y, offset=None, trials=None):
        """Akaike's information criterion of the fitted model on data X, y, -2 loglik +
        2 n_params; smaller is better."""
        X, _ = self._design(_rows(self, X), offset, trials)
        return self.model_.aic(X, self._encode(y))

    def __getstate__(self):
        # The fitter is a C handle: it travels as libmoe's bytes of its state (options and
        # the streaming session), so that an unpickled stream goes on where it stopped.
        state = dict(self.__dict__)
        fitter = state.pop("_fitter", None)
        if fitter is not None:
            state["_fitter_state"] = (fitter.estimator, fitter.state())
        return state

    def __setstate__(self, state):
        state = dict(state)
        saved = state.pop("_fitter_state", None)
        self.__dict__.update(state)
        if saved is not None:
            estimator, fitter_state = saved
            self._fitter = _Fitter.from_state(fitter_state, estimator)


class MoERegressor(RegressorMixin, _MoE):
    """Softmax-gated mixture of regression experts: Gaussian (family="gaussian", the
    default), Poisson count experts with the log link (family="poisson", libmoe 1.1:
    y must be counts 0, 1, 2, ...; predict gives the mixture's mean count), or Student-t
    experts, robust to outliers (family="t", libmoe 1.1, em, gem or gd: variances_ are the squared
    scales, degrees_ the degrees of freedom, estimated unless update_degrees=0).

    Every libmoe fitter option is a keyword through `options` (a dict), and the common ones
    are parameters: n_experts, estimator (a name of moe.available_estimators(): "em", "gem",
    "gd", "cqt", "ismm", "ot"), fit_intercept, random_state (the seed), n_init, max_iter, tol,
    threads.

    Attributes after a fit: model_ (the moe.Model), coef_ and intercept_ (the experts'),
    gate_coef_ and gate_intercept_ (the gate's; the last expert's row is the zero
    reference), variances_, n_features_in_, feature_names_in_ (only for a fit on X with
    string column names, such as a pandas DataFrame: predict and the rest then refuse X with
    other columns or another order, and warn for X without names), n_iter_ and converged_.
    Expert k of predict_cluster is row k of coef_, "expert[k + 1]" in summary's names.

    gate_features and expert_features (libmoe 1.1) are the columns of X the gate and the
    experts see: indices, or names for X with column names ([]: the intercept alone; None:
    every column but the offset); offset is the column (index or name) that enters every
    expert with coefficient 1, for Poisson experts the log of the exposure. Coefficients of
    columns a part does not see are held at 0 in coef_, gate_coef_ and model_, and summary
    lists the free parameters only.

    A fit or partial_fit that fails or is interrupted (Ctrl-C raises KeyboardInterrupt,
    "libmoe: the fit was cancelled") leaves the estimator as it was before the call: not
    fitted, or with its previous model_ and stream intact. A pickle carries the stream's
    state, so an unpickled estimator's partial_fit goes on exactly where it stopped."""

    _family = "gaussian"

    def __init__(self, n_experts=2, estimator="em", fit_intercept=True, random_state=None,
                 n_init=None, max_iter=None, tol=None, init=None, gate_l2=None, expert_ridge=None,
                 variance_floor=None, gate_max_newton=None, gate_tol=None, min_expert_weight=None,
                 threads=None, step=None, gate_step=None, batch_size=None, line_search=None,
                 inner_steps=None, update_variance=None, expert_max_newton=None, expert_tol=None,
                 gate_solver=None, update_experts=None, optimizer=None, beta1=None, beta2=None,
                 optimizer_eps=None, weight_decay=None, update_degrees=None, search_shards=None,
                 options=None,
                 family="gaussian", gate_features=None, expert_features=None, offset=None,
                 trials=None):
        """As _MoE's, and the experts' family (any of the library's families whose response
        is a number: "gaussian", "poisson", "t", "binomial", ...), checked by fit. For
        Poisson experts of counts over exposures t, offset names the column of log(t); for
        binomial experts (libmoe 1.2) trials names the column of each row's number of
        trials, y the successes among them, and predict gives the success probability."""
        super().__init__(
            n_experts=n_experts, estimator=estimator, fit_intercept=fit_intercept,
            random_state=random_state, n_init=n_init, max_iter=max_iter, tol=tol, init=init,
            gate_l2=gate_l2, expert_ridge=expert_ridge, variance_floor=variance_floor,
            gate_max_newton=gate_max_newton, gate_tol=gate_tol,
            min_expert_weight=min_expert_weight, threads=threads, step=step,
            gate_step=gate_step, batch_size=batch_size, line_search=line_search,
            inner_steps=inner_steps, update_variance=update_variance,
            expert_max_newton=expert_max_newton, expert_tol=expert_tol,
            gate_solver=gate_solver, update_experts=update_experts, optimizer=optimizer,
            beta1=beta1, beta2=beta2, optimizer_eps=optimizer_eps, weight_decay=weight_decay,
            update_degrees=update_degrees, search_shards=search_shards, options=options,
            gate_features=gate_features,
            expert_features=expert_features, offset=offset)
        self.family = family
        self.trials = trials

    @staticmethod
    def _families():
        """The library's families whose response is a number (not a class label)."""
        return [name for name in FAMILIES if name not in MoEClassifier._label_families]

    def _new_model(self, n_features, n_classes=0, names=None, appended=()):
        if self.family not in self._families():
            raise ValueError(f"family must be one of {', '.join(self._families())}, got "
                             f"{self.family!r}")
        return Model.create(self.n_experts, n_features + len(appended), family=self.family,
                            intercept=self.fit_intercept,
                            **self._inputs(n_features, names, appended))

    @property
    def variances_(self):
        """The experts' variances, n_experts values (model_.variances; t experts' squared
        scales); None for Poisson experts, which have none."""
        return self.model_.variances

    @property
    def degrees_(self):
        """The t experts' degrees of freedom, or Gamma experts' shapes (model_.degrees); None
        for other families."""
        return self.model_.degrees

    def _encode(self, y):
        return y

    def fit(self, X, y, sample_weight=None, offset=None, trials=None):
        """Fit the mixture to X (n x d; a DataFrame's column names become feature_names_in_)
        and y (n values), with optional per-row weights; returns the estimator.

        offset: n values added to every expert's linear predictor with coefficient 1 (for
        Poisson experts of counts over exposures t, log(t)); trials: binomial experts' n
        numbers of trials (y the successes among them). Neither is a column of X, so a
        transformer of a Pipeline never rescales them (route them there as
        pipeline.fit(X, y, moeregressor__offset=...)); predict, score, loglik, bic, aic and
        summary then take the new rows' values the same way."""
        self._deprecated_columns()
        names = _column_names(X)
        X, y, sample_weight = _validate(X, y, sample_weight, numeric=True)
        X, appended = self._design(X, offset, trials, fitting=True)
        return self._fit(X, y, sample_weight, partial=False, names=names, appended=appended)

    @available_if(lambda self: self.estimator == "ismm")
    def partial_fit(self, X, y, sample_weight=None):
        """One batch of a stream: the "ismm" estimator. The first batch's column names are
        feature_names_in_; the next batches must have the same."""
        names = _column_names(X)
        if hasattr(self, "model_"):
            _check_columns(self, names)  # before X's values: a frame of other columns
            if getattr(self, "_appended", ()):
                raise invalid("partial_fit cannot continue a fit with offset= or trials= "
                              "arguments: a stream has no offset")
        X, y, sample_weight = _validate(X, y, sample_weight, numeric=True)
        return self._fit(X, y, sample_weight, partial=True, names=names)

    def predict(self, X, offset=None, trials=None):
        """The mixture's mean E[y | x] of each row of X (binomial experts: the success
        probability, which needs no trials). offset: each row's, when the fit had one."""
        X, _ = self._design(_rows(self, X), offset, trials, need_trials=False)
        return self.model_.predict(X)

    def score(self, X, y, sample_weight=None, offset=None, trials=None):
        """R^2 of predict(X, offset) against y, as scikit-learn's regressors score."""
        if offset is None and trials is None:
            return super().score(X, y, sample_weight)
        predicted = self.predict(X, offset=offset, trials=trials)
        if HAVE_SKLEARN:
            return r2_score(y, predicted, sample_weight=sample_weight)
        y = np.asarray(y, dtype=np.float64)
        w = np.ones_like(y) if sample_weight is None else np.asarray(sample_weight, float)
        mean = np.average(y, weights=w)
        return 1.0 - np.sum(w * (y - predicted) ** 2) / np.sum(w * (y - mean) ** 2)

    def loglik(self, X, y, sample_weight=None, offset=None, trials=None):
        """The (weighted) log-likelihood of y given X under the fitted model."""
        X, _ = self._design(_rows(self, X), offset, trials)
        return self.model_.loglik(X, y, sample_weight)


class MoEClassifier(ClassifierMixin, _MoE):
    """Softmax-gated mixture of logistic (two classes) or multinomial experts. Class labels
    may be any values; they are encoded in sorted order, like scikit-learn does, and are
    classes_ after a fit. An interrupted or failed fit keeps the previous fit, classes_
    included. The other parameters and attributes are MoERegressor's, without variances_;
    coef_ and intercept_ model P(y = classes_[1]) with two classes, and have a row per
    class (the last the zero reference) with more."""

    _family = "logistic"
    _label_families = ("logistic", "multinomial")

    def _classes_for_names(self):
        return self.classes_

    def _classes(self, y, sample_weight):
        """The classes of y and y's codes; they become the estimator's with a fit that ends."""
        y = np.asarray(y)
        if HAVE_SKLEARN:
            check_classification_targets(y)
        classes, codes = np.unique(y, return_inverse=True)
        if sample_weight is not None:
            sample_weight = per_row("sample_weight", sample_weight, len(y))
        present = y if sample_weight is None else y[sample_weight > 0]
        if len(classes) < 2 or len(np.unique(present)) < 2:
            raise ValueError("one class: a classifier needs at least two classes with "
                             "positive weight")
        return {"classes_": classes, "_n_classes": len(classes)}, codes.astype(np.float64)

    def _encode(self, y):
        """y's labels as the model's class codes (their positions in classes_)."""
        y = np.asarray(y)
        positions = np.searchsorted(self.classes_, y)
        if np.any(positions >= len(self.classes_)) or np.any(self.classes_[positions] != y):
            raise ValueError("y holds a class not seen in fit")
        return positions.astype(np.float64)

    def fit(self, X, y, sample_weight=None, offset=None):
        """Fit the mixture to X (n x d; a DataFrame's column names become feature_names_in_)
        and the labels y (any values, at least two classes), with optional per-row weights;
        returns the estimator. offset: n values added to the logistic experts' linear
        predictor with coefficient 1, kept out of X (see MoERegressor.fit)."""
        self._deprecated_columns()
        names = _column_names(X)
        X, y, sample_weight = _validate(X, y, sample_weight, numeric=False)
        classes, codes = self._classes(y, sample_weight)
        X, appended = self._design(X, offset, fitting=True)
        # libmoe's logistic experts model P(y = 1): class 1 is the second sorted label.
        return self._fit(X, codes, sample_weight, partial=False, fitted=classes, names=names,
                         appended=appended)

    def predict_proba(self, X, offset=None):
        """n x n_classes probabilities P(y = classes_[c] | x) of each row of X."""
        X, _ = self._design(_rows(self, X), offset)
        out = self.model_.predict(X)
        if self._n_classes == 2:
            return np.column_stack([1.0 - out, out])
        return out

    def predict(self, X, offset=None):
        """The most probable label of each row of X, by libmoe's rule (moe_model_classify,
        the rule of its accuracy: ties to the class first in classes_)."""
        X, _ = self._design(_rows(self, X), offset)
        return self.classes_[self.model_.classify(X)]

    def score(self, X, y, sample_weight=None, offset=None):
        """The accuracy of predict(X, offset) on the labels y."""
        if offset is None:
            return super().score(X, y, sample_weight)
        predicted = self.predict(X, offset=offset)
        right = (predicted == np.asarray(y)).astype(np.float64)
        return float(np.average(right, weights=sample_weight))

    def loglik(self, X, y, sample_weight=None, offset=None):
        """The (weighted) log-likelihood of the labels y given X under the fitted model."""
        X, _ = self._design(_rows(self, X), offset)
        return self.model_.loglik(X, self._encode(y), sample_weight)
