"""Exact em on a dask.distributed cluster: the rows stay on the workers, the sums travel.

    from dask.distributed import Client, LocalCluster
    import dask.array as da
    import moe.dask

    client = Client(LocalCluster(n_workers=2))
    X = da.from_array(X_numpy, chunks=(50_000, -1)); y = da.from_array(y_numpy, chunks=50_000)
    regressor = moe.dask.DaskMoERegressor(n_experts=3, random_state=0).fit(X, y)
    regressor.predict(X)   # a dask array, block by block

The estimators are moe.MoERegressor and moe.MoEClassifier whose fit takes dask arrays (or
dask DataFrames and Series) and fits by libmoe's exact em with sums that travel
(moe_fitter_set_combine in moe/fitter.h): each partition of rows is held by an actor on a
worker that runs libmoe's em on its rows, and every pass's sums (a few kilobytes, whatever
the rows) go through this process, which adds them in partition order and hands every
partition the same total. The model is the in-memory fit's of all rows: the start is the
in-memory fit (its search and restarts) of a sample drawn from every partition by its share
of the rows (all rows when there are at most `start_rows`, 20000 by default), and from it em
runs on all rows. A partition's bad value or failed row is reported with the partition and
its row. Only em fits this way (estimator must be "em").

Why actors that fit in lockstep rather than stateless tasks: em's passes read each row's
responsibilities, which live beside the rows; a stateless task would recompute them in
every pass. An actor keeps them for the fit, and only the sums move.
"""
import ctypes
import queue
import re
import sys
import threading
import warnings

import numpy as np

from . import estimators as _estimators
from ._checks import one_per_row
from ._lib import MoeValueError, check, lib
from .model import Model

try:
    import dask
    import dask.array as da
    from distributed import get_client, wait
except ImportError as error:  # pragma: no cover
    raise ImportError("moe.dask needs dask and distributed (Debian: python3-dask, "
                      "python3-distributed; pip: dask[distributed])") from error

__all__ = ["DaskMoERegressor", "DaskMoEClassifier"]

MESSAGE_SIZE = 256  # MOE_COMBINE_MESSAGE_SIZE
COMBINE_VERSION = 1
START_ROWS = 20000


class _Request(ctypes.Structure):
    """moe_combine_request (moe/fitter.h), version 1."""
    _fields_ = [("version", ctypes.c_uint), ("values", ctypes.POINTER(ctypes.c_double)),
                ("count", ctypes.c_size_t), ("status", ctypes.c_int), ("has_row", ctypes.c_int),
                ("failed_row", ctypes.c_size_t), ("final", ctypes.c_int),
                ("message", ctypes.c_char_p)]


_COMBINE_FN = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.POINTER(_Request))


def _combine_function():
    if not hasattr(lib, "moe_fitter_set_combine"):
        raise ImportError("moe.dask needs libmoe 1.2 (moe_fitter_set_combine); the loaded "
                          f"libmoe is {lib.moe_version_string().decode()}")
    function = lib.moe_fitter_set_combine
    function.restype = ctypes.c_int
    function.argtypes = [ctypes.c_void_p, _COMBINE_FN, ctypes.c_void_p]
    return function


class _Partition:
    """An actor: one partition's rows and the em that fits them, in lockstep with the others
    through this module's driver. Its fit runs on a thread of its own; each of its combine
    requests waits in `request` for the driver, which answers through `answer`."""

    def __init__(self, X, y, weights, index):
        self.X = np.ascontiguousarray(X, dtype=np.float64)
        self.y = np.ascontiguousarray(y, dtype=np.float64)
        self.weights = None if weights is None else np.ascontiguousarray(weights, np.float64)
        self.index = index
        self.requests = queue.Queue()
        self.answers = queue.Queue()
        self.outcome = None

    def rows(self):
        return self.X.shape[0]

    def first_bad_value(self):
        """(row, what) of the first value libmoe would refuse, or None: found here, so that
        the start's fit on a sample does not name its own row instead of the partition's."""
        bad_X = ~np.isfinite(self.X)
        bad_rows = [np.flatnonzero(bad_X.any(axis=1)), np.flatnonzero(~np.isfinite(self.y))]
        if self.weights is not None:
            bad_rows.append(np.flatnonzero(~(np.isfinite(self.weights) & (self.weights >= 0))))
        found = [(int(rows[0]), kind) for rows, kind in zip(bad_rows, ("X", "y", "weight"))
                 if rows.size > 0]
        if not found:
            return None
        row, kind = min(found)
        if kind == "X":
            column = int(np.flatnonzero(bad_X[row])[0])
            return row, f", column {column} (counting from 0): the value is {self.X[row, column]}"
        value = self.y[row] if kind == "y" else self.weights[row]
        name = "response" if kind == "y" else "weight"
        return row, f" (counting from 0), {name}: the value {value} is not allowed"

    def sample(self, count, seed):
        """`count` of its rows (all of them, in order, when count is the whole partition):
        [X, y, weights] of the start's sample."""
        n = self.X.shape[0]
        if count >= n:
            chosen = np.arange(n)
        else:
            chosen = np.sort(np.random.RandomState(seed + self.index).choice(n, count, False))
        weights = None if self.weights is None else self.weights[chosen]
        return self.X[chosen], self.y[chosen], weights

    def _combine(self, _user, request_pointer):
        request = request_pointer.contents
        values = np.ctypeslib.as_array(request.values, (request.count,)).copy() \
            if request.count > 0 else np.zeros(0)
        message = ctypes.string_at(request.message).decode("utf-8", "replace")
        self.requests.put({"status": request.status, "has_row": bool(request.has_row),
                           "row": int(request.failed_row), "final": bool(request.final),
                           "values": values, "message": message})
        answer = self.answers.get()
        request.status = answer["status"]
        request.has_row = int(answer["has_row"])
        request.failed_row = answer["row"]
        request.final = int(answer["final"])
        text = answer["message"].encode("utf-8")[:MESSAGE_SIZE - 1]
        ctypes.memmove(request.message, text + b"\0", len(text) + 1)
        if answer["status"] == 0 and request.count > 0:
            ctypes.memmove(request.values, answer["values"].ctypes.data, request.count * 8)
        return 0

    def start(self, model_bytes, estimator, options):
        """Begin the fit from the start's model (bytes) on a thread; returns at once."""
        model = Model.from_bytes(model_bytes)
        settings = dict(options, init="model", n_init=1)
        self.outcome = None

        def fit():
            try:
                fitter = _estimators._Fitter(estimator, settings)
                callback = _COMBINE_FN(self._combine)
                check(_combine_function()(fitter._handle, callback, None), fitter._message)
                fitter.run(lib.moe_fitter_fit, model, self.X, self.y, self.weights)
                self.outcome = ("ok", model.to_bytes(), _estimators._report_attributes(fitter))
            except BaseException as error:  # every failure is the driver's to report
                self.outcome = ("error", type(error).__name__, str(error),
                                getattr(error, "status", None))
                # A fit that failed before its final request (an option refused before the
                # fit began) still owes the driver one.
                self.requests.put(None)

        self.thread = threading.Thread(target=fit, daemon=True)
        self.thread.start()

    def next_request(self):
        """The fit's next combine request, or None once its thread has ended."""
        request = self.requests.get()
        if request is None:
            self.thread.join()
        return request

    def answer(self, answer):
        self.answers.put(answer)

    def result(self):
        self.thread.join()
        return self.outcome


def _decide(requests, offsets):
    """The answer every partition receives (moe/fitter.h's protocol): the first failing
    partition's outcome, its row counted among all rows; else the sums added in partition
    order."""
    finals = sum(r["final"] for r in requests)
    for index, request in enumerate(requests):
        if request["status"] != 0:
            message = request["message"]
            return {"status": request["status"], "has_row": request["has_row"],
                    "row": offsets[index] + request["row"], "final": finals > 0,
                    "message": _rebase(message, offsets[index]), "values": None}
    counts = {len(r["values"]) for r in requests}
    if (0 < finals < len(requests)) or len(counts) > 1:
        return {"status": 12, "has_row": False, "row": 0, "final": True, "values": None,
                "message": "the partitions' fits are out of step"}
    total = np.zeros(counts.pop())
    for request in requests:
        total += request["values"]
    return {"status": 0, "has_row": False, "row": 0, "final": finals > 0, "values": total,
            "message": ""}


def _rebase(message, offset):
    """A message that names a partition's row ("row N...") names it among all rows."""
    if offset == 0 or not message.startswith("row "):
        return message
    digits = message[4:].split(",")[0].split(":")[0]
    if not digits.isdigit():
        return message
    return f"row {int(digits) + offset}{message[4 + len(digits):]}"


# A message about one row, as moe's exceptions word it (moe/_lib.py): "row I (counting from
# 0)" or "row I, column J (both counting from 0)", I among all partitions' rows.
_ROW = re.compile(r"^row (\d+)(, column (\d+))?( \((both )?counting from 0\))?")


def _where(message, offsets):
    """A message naming a row among all rows, with its partition and its row there."""
    match = _ROW.match(message)
    if match is None:
        return message
    row = int(match.group(1))
    partition = int(np.searchsorted(offsets, row, side="right")) - 1
    location = f"partition {partition}, row {row - offsets[partition]} (row {row} of all rows)"
    if match.group(3) is not None:
        location += f", column {match.group(3)}"
    return location + " (counting from 0)" + message[match.end():]


def _as_array(values):
    """A dask array of doubles from a dask array, DataFrame or Series, or anything numpy
    takes."""
    if hasattr(values, "to_dask_array"):  # a dask DataFrame or Series
        values = values.to_dask_array(lengths=True)
    if not isinstance(values, da.Array):
        values = da.from_array(np.asarray(values))
    return values.astype(np.float64)


def _appended(X, values):
    """X (a dask array one chunk wide) with the named per-row values (the fit's offset and
    trials) as columns after its own, each cut in X's row chunks: the design the model sees,
    as the in-memory estimators' _design makes it, while no transformer before the estimator
    sees those values."""
    for role, value in values.items():
        # the in-memory estimators' check and message, on the shape alone (nothing computed)
        column = one_per_row(role, _as_array(value), X.shape[0])
        X = da.concatenate([X, column.rechunk((X.chunks[0],))[:, None]], axis=1)
    return X.rechunk({1: -1})


def _partitions(X, y, sample_weight, appended=None):
    """X (with the appended values' columns), y and the weights as dask arrays cut in the
    same row chunks, X one chunk wide."""
    X = _as_array(X)
    if X.ndim != 2:
        raise ValueError(f"X must be 2-dimensional, got {X.ndim} dimensions")
    X = _appended(X.rechunk({1: -1}), appended or {})
    y = _as_array(y).rechunk((X.chunks[0],))
    weights = None if sample_weight is None else \
        _as_array(sample_weight).rechunk((X.chunks[0],))
    if y.shape[0] != X.shape[0] or (weights is not None and weights.shape[0] != X.shape[0]):
        raise ValueError("X, y and sample_weight must have the same number of rows")
    return X, y, weights


class _DaskFit:
    """One fit: the actors, the start, the lockstep loop."""

    def __init__(self, estimator, X, y, sample_weight, appended=None):
        self.client = get_client()
        X, y, weights = _partitions(X, y, sample_weight, appended)
        blocks_X = self.client.compute(list(X.to_delayed().ravel()))
        blocks_y = self.client.compute(list(y.to_delayed().ravel()))
        blocks_w = self.client.compute(list(weights.to_delayed().ravel())) \
            if weights is not None else [None] * len(blocks_X)
        self.actors = [self.client.submit(_Partition, block_X, block_y, block_w, index,
                                          actor=True, pure=False)
                       for index, (block_X, block_y, block_w)
                       in enumerate(zip(blocks_X, blocks_y, blocks_w))]
        wait(self.actors)
        self.actors = [future.result() for future in self.actors]
        self.rows = [actor.rows().result() for actor in self.actors]
        self.offsets = np.concatenate([[0], np.cumsum(self.rows)[:-1]]).astype(int)
        self.n_features = X.shape[1]
        for index, actor in enumerate(self.actors):
            bad = actor.first_bad_value().result()
            if bad is not None:
                row, rest = bad
                raise MoeValueError(5, f"partition {index}, row {row} (row "
                                       f"{self.offsets[index] + row} of all rows){rest}")

    def sample(self, start_rows, seed):
        total = sum(self.rows)
        wanted = min(total, start_rows)
        # each partition's share, the shares adding up to `wanted`
        edges = [wanted * c // total for c in np.cumsum([0] + self.rows)]
        counts = [int(b - a) for a, b in zip(edges[:-1], edges[1:])]
        parts = [actor.sample(count, seed).result() for actor, count in zip(self.actors, counts)]
        X = np.concatenate([p[0] for p in parts])
        y = np.concatenate([p[1] for p in parts])
        weights = None if parts[0][2] is None else np.concatenate([p[2] for p in parts])
        return X, y, weights

    def run(self, start, estimator, options, progress):
        for actor in self.actors:
            actor.start(start.to_bytes(), estimator, options).result()
        passes = 0
        while True:
            requests = [actor.next_request() for actor in self.actors]
            requests = [r.result() for r in requests]
            if any(r is None for r in requests):
                self._stop(requests)
                break
            answer = _decide(requests, self.offsets)
            for actor in self.actors:
                actor.answer(answer).result()
            passes += 1
            if progress is not None:
                progress(passes, answer)
            if answer["final"]:
                break
        outcomes = [actor.result().result() for actor in self.actors]
        return outcomes, passes

    def _stop(self, requests):
        """A partition whose fit ended without its final request (it failed before its fit
        began): the others, waiting in a request, receive its failure as the fit's end."""
        ended = [i for i, r in enumerate(requests) if r is None]
        outcome = self.actors[ended[0]].result().result()
        message = outcome[2] if outcome and outcome[0] == "error" else "a partition's fit ended"
        answer = {"status": 12, "has_row": False, "row": 0, "final": True, "values": None,
                  "message": f"partition {ended[0]}: {message}"[:MESSAGE_SIZE - 1]}
        for index, request in enumerate(requests):
            if request is not None:
                self.actors[index].answer(answer).result()


def _print_progress(passes, answer):
    """A line that rewrites itself: the passes so far (each a round of sums through the
    driver) and whether the fit has ended."""
    end = "\n" if answer["final"] else "\r"
    sys.stderr.write(f"moe.dask: {passes} passes over the partitions{end}")
    sys.stderr.flush()


def _fit_distributed(self, X, y, sample_weight, fitted_classes=None, **values):
    """fit of the Dask estimators: the sample's in-memory fit, then exact em on all rows.
    values: fit's offset= and trials= (None: not given), appended to X's columns as the
    in-memory estimators append them."""
    if self.estimator != "em":
        raise ValueError(f"moe.dask fits by exact em: estimator must be \"em\", got "
                         f"{self.estimator!r}")
    appended = {role: value for role, value in values.items() if value is not None}
    # The in-memory fit's refusals of these arguments (an offset both a column of X and
    # fit's argument) before any partition is computed; their lengths are _appended's.
    self._design(np.empty((0, 0)), fitting=True, **{role: np.empty(0) for role in appended})
    job = _DaskFit(self.estimator, X, y, sample_weight, appended)
    n_features = job.n_features - len(appended)
    seed = 0 if self.random_state is None else int(self.random_state) % 2**31
    X_start, y_start, w_start = job.sample(self.start_rows, seed)
    local = self._in_memory()
    start_values = {role: X_start[:, n_features + index]
                    for index, role in enumerate(appended)}
    with warnings.catch_warnings():
        # warned above, once, for this estimator
        warnings.filterwarnings("ignore", r".*\((offset|trials)=column\) is deprecated",
                                DeprecationWarning)
        local.fit(X_start[:, :n_features], y_start, sample_weight=w_start, **start_values)
    options = local._fitter_options()
    progress = _print_progress if self.progress is True else (self.progress or None)
    outcomes, passes = job.run(local.model_, "em", options, progress)
    failures = [o for o in outcomes if o is None or o[0] == "error"]
    if failures:
        kind, text, status = failures[0][1:] if failures[0] else ("MoeError", "", 12)
        error = _error_class(kind)
        text = _where(text, job.offsets)
        raise error(status, text) if status is not None else error(text)
    _, model_bytes, report = outcomes[0]
    self.model_ = Model.from_bytes(model_bytes)
    for name, value in report.items():
        setattr(self, name, value)
    self.n_features_in_ = n_features
    self._appended = local._appended
    self.n_partitions_ = len(job.actors)
    self.n_passes_ = passes
    self.start_model_ = local.model_
    self._fitter = local._fitter  # its options (the penalties of summary and standard_errors)
    if fitted_classes is not None:
        for name, value in fitted_classes.items():
            setattr(self, name, value)
    return self


def _error_class(kind):
    from ._lib import MoeError, MoeNumericalError, MoeValueError
    return {"MoeValueError": MoeValueError, "MoeNumericalError": MoeNumericalError,
            "ValueError": ValueError, "KeyboardInterrupt": KeyboardInterrupt}.get(kind, MoeError)


def _in_memory_class(estimator):
    """The in-memory estimator class whose methods a Dask estimator (or a subclass of one)
    applies to numpy rows."""
    return _estimators.MoEClassifier if isinstance(estimator, _estimators.MoEClassifier) \
        else _estimators.MoERegressor


def _apply_block(block, estimator, method, columns=None, roles=()):
    """An in-memory estimator method on one block of rows (a task on a worker: module-level
    so that it pickles, the estimator travelling as its pickle); the block's columns after
    the first `columns` are the values of roles (offset=, trials=)."""
    kind = _in_memory_class(estimator)
    if not roles:
        return getattr(kind, method)(estimator, block)
    values = {role: block[:, columns + index] for index, role in enumerate(roles)}
    return getattr(kind, method)(estimator, block[:, :columns], **values)


def _predict_blocks(estimator, method, X, width=None, **values):
    """estimator.method over a dask array's row blocks (a numpy X is predicted at once);
    values: the method's offset= and trials= (None: not given), cut in X's row chunks."""
    values = {role: value for role, value in values.items() if value is not None}
    if not isinstance(X, da.Array):
        kind = _in_memory_class(estimator)
        values = {role: np.asarray(value, dtype=np.float64) for role, value in values.items()}
        return getattr(kind, method)(estimator, np.asarray(X, dtype=np.float64), **values)
    X = X.rechunk({1: -1})
    # The in-memory estimators' refusals (an offset the fit had and the call lacks, or the
    # reverse) now, not when the result is computed.
    estimator._design(np.empty((0, X.shape[1])), need_trials=False,
                      **{role: np.empty(0) for role in values})
    if values:
        columns = X.shape[1]
        X = _appended(X, values)
        return _map_blocks(X, estimator, method, width, columns, tuple(values))
    return _map_blocks(X, estimator, method, width)


def _map_blocks(X, estimator, method, width, columns=None, roles=()):
    if width is None:
        return X.map_blocks(_apply_block, estimator, method, columns, roles, drop_axis=1,
                            dtype=np.float64 if method != "predict" or
                            not hasattr(estimator, "classes_") else estimator.classes_.dtype)
    return X.map_blocks(_apply_block, estimator, method, columns, roles,
                        chunks=(X.chunks[0], (width,)), dtype=np.float64)


class DaskMoERegressor(_estimators.MoERegressor):
    """moe.MoERegressor whose fit takes dask arrays (or dask DataFrames) on a
    dask.distributed cluster (the current Client) and fits by exact em, the rows staying on
    the workers. Parameters as MoERegressor's, and start_rows (the rows of the start's
    in-memory fit, drawn from every partition by its share; default 20000) and progress
    (True: a line on stderr counting the passes; or a callable(passes, answer)). After fit,
    n_partitions_, n_passes_ (rounds of sums) and start_model_ besides MoERegressor's
    attributes; predict returns a dask array for a dask X."""

    def __init__(self, n_experts=2, estimator="em", fit_intercept=True, random_state=None,
                 n_init=None, max_iter=None, tol=None, family="gaussian", options=None,
                 threads=None, start_rows=START_ROWS, progress=None, gate_features=None,
                 expert_features=None, offset=None, trials=None):
        super().__init__(n_experts=n_experts, estimator=estimator, fit_intercept=fit_intercept,
                         random_state=random_state, n_init=n_init, max_iter=max_iter, tol=tol,
                         options=options, threads=threads, family=family,
                         gate_features=gate_features, expert_features=expert_features,
                         offset=offset, trials=trials)
        self.start_rows = start_rows
        self.progress = progress

    def _in_memory(self):
        parameters = {name: getattr(self, name) for name in
                      ("n_experts", "estimator", "fit_intercept", "random_state", "n_init",
                       "max_iter", "tol", "family", "options", "threads", "gate_features",
                       "expert_features", "offset", "trials")}
        return _estimators.MoERegressor(**parameters)

    def fit(self, X, y, sample_weight=None, offset=None, trials=None):
        """Exact em of every partition's rows; returns the estimator. offset and trials: as
        MoERegressor.fit's, one value per row of X (dask or numpy), cut in X's row
        chunks (the constructor's offset= and trials= columns of X are deprecated, as
        MoERegressor's are)."""
        self._deprecated_columns()
        return _fit_distributed(self, X, y, sample_weight, offset=offset, trials=trials)

    def predict(self, X, offset=None, trials=None):
        """The mixture's mean of each row: a dask array for a dask X. offset: as fit's, for
        these rows (trials may be left out: the mean is then per trial)."""
        return _predict_blocks(self, "predict", X, offset=offset, trials=trials)


class DaskMoEClassifier(_estimators.MoEClassifier):
    """moe.MoEClassifier whose fit takes dask arrays (labels any values, encoded in sorted
    order as classes_), fitted by exact em as DaskMoERegressor's."""

    def __init__(self, n_experts=2, estimator="em", fit_intercept=True, random_state=None,
                 n_init=None, max_iter=None, tol=None, options=None, threads=None,
                 start_rows=START_ROWS, progress=None, gate_features=None,
                 expert_features=None, offset=None):
        super().__init__(n_experts=n_experts, estimator=estimator, fit_intercept=fit_intercept,
                         random_state=random_state, n_init=n_init, max_iter=max_iter, tol=tol,
                         options=options, threads=threads, gate_features=gate_features,
                         expert_features=expert_features, offset=offset)
        self.start_rows = start_rows
        self.progress = progress

    def _in_memory(self):
        parameters = {name: getattr(self, name) for name in
                      ("n_experts", "estimator", "fit_intercept", "random_state", "n_init",
                       "max_iter", "tol", "options", "threads", "gate_features",
                       "expert_features", "offset")}
        return _estimators.MoEClassifier(**parameters)

    def fit(self, X, y, sample_weight=None, offset=None):
        """Exact em of every partition's rows; the labels are encoded as their positions
        among the sorted distinct labels (classes_). offset: as MoEClassifier.fit's."""
        self._deprecated_columns()
        if hasattr(y, "to_dask_array"):
            y = y.to_dask_array(lengths=True)
        y = y if isinstance(y, da.Array) else da.from_array(np.asarray(y))
        classes = np.unique(y.compute() if y.shape[0] <= 10 ** 6 else da.unique(y).compute())
        codes = y.map_blocks(lambda block: np.searchsorted(classes, block).astype(np.float64),
                             dtype=np.float64)
        self.classes_ = classes
        self._n_classes = len(classes)
        return _fit_distributed(self, X, codes, sample_weight, {"classes_": classes},
                                offset=offset)

    def predict_proba(self, X, offset=None):
        """P(class | x), n x classes: a dask array for a dask X."""
        return _predict_blocks(self, "predict_proba", X, len(self.classes_), offset=offset)

    def predict(self, X, offset=None):
        """The most probable class of each row (a label of classes_)."""
        return _predict_blocks(self, "predict", X, offset=offset)
