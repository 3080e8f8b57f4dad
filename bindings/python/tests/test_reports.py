"""What a fit reports (moe_fit_report): the start search's iterations apart from
the final ones, a streaming session's rows, steps and prequential log-likelihood, and a gate
that separates the rows, with the remedy."""
import ctypes
import json
import os
import pickle
import subprocess
import warnings

import numpy as np
import pytest

import moe
from moe._lib import lib
from moe.estimators import REPORT_VERSION, _Report

UNSUPPORTED = 10  # MOE_ERR_UNSUPPORTED

MCYCLE = os.path.join(os.path.dirname(__file__), "..", "..", "..", "tests", "data",
                      "mcycle.csv")


def mcycle():
    data = np.loadtxt(MCYCLE, delimiter=",", skiprows=1)
    return data[:, :1], data[:, 1]


def regimes(n, seed):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1.0, 1.0, size=(n, 1))
    first = rng.uniform(size=n) < 1.0 / (1.0 + np.exp(-8.0 * X[:, 0]))
    y = np.where(first, -2.5, 2.5) * X[:, 0] + rng.normal(size=n)
    return X, y


def test_the_start_search_is_counted_apart():
    X, y = regimes(600, 3)
    fit = moe.MoERegressor(n_experts=2, random_state=0).fit(X, y)
    assert fit.n_search_runs_ >= 24
    assert fit.n_search_iter_ > fit.report_["total_iterations"] >= fit.n_iter_ >= 1
    plain = moe.MoERegressor(n_experts=2, random_state=0, init="kmeans").fit(X, y)
    assert plain.n_search_runs_ == 0 and plain.n_search_iter_ == 0


def test_the_report_struct_is_the_c_layout():
    # moe_fit_report_init zeroes the C struct: every field of the Python struct (none lies
    # past C's) and no byte past it (none of C's lies past Python's).
    X, y = mcycle()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", moe.GateSeparationWarning)
        fit = moe.MoERegressor(n_experts=3, random_state=5).fit(X, y)
    size = ctypes.sizeof(_Report)
    buffer = (ctypes.c_ubyte * (size + 64))(*([0xA5] * (size + 64)))
    report = ctypes.cast(buffer, ctypes.POINTER(_Report))
    assert lib.moe_fit_report_init(report, REPORT_VERSION) == 0
    assert report.contents.version == REPORT_VERSION
    for name, _ in _Report._fields_[1:]:
        value = getattr(report.contents, name)
        assert all(v == 0 for v in (value if name == "stage_seconds" else [value])), name
    assert all(byte == 0xA5 for byte in buffer[size:])
    for wrong in (0, REPORT_VERSION + 1):
        assert lib.moe_fit_report_init(report, wrong) == UNSUPPORTED
    assert lib.moe_fitter_get_report(fit._fitter._handle, report) == 0
    assert all(byte == 0xA5 for byte in buffer[size:])
    # The last fields are where C has them: the tool's JSON of the same fit says the same.
    tool = os.environ.get("MOE_TOOL")
    if not tool:
        pytest.skip("MOE_TOOL (the moe program of the same libmoe) is not set")
    out = subprocess.run([tool, "fit", MCYCLE, "--response", "accel", "-k", "3", "--seed", "5",
                          "--json"], check=True, capture_output=True, text=True).stdout
    reported = json.loads(out)["fit"]
    assert reported["search_iterations"] == report.contents.search_iterations
    assert reported["search_runs"] == report.contents.search_runs
    assert reported["gate_separated"] is True
    assert reported["gate_transition_rows"] == report.contents.gate_transition


def test_a_stream_reports_its_session():
    X, y = regimes(3000, 2)
    stream = moe.MoERegressor(n_experts=2, estimator="ismm", random_state=1,
                              options={"batch_size": 16})
    for start in range(0, 1500, 500):
        stream.partial_fit(X[start:start + 500], y[start:start + 500])
    copy = pickle.loads(pickle.dumps(stream))
    for start in range(1500, 3000, 500):
        stream.partial_fit(X[start:start + 500], y[start:start + 500])
        copy.partial_fit(X[start:start + 500], y[start:start + 500])
    # No convergence flag for a stream, and its session instead.
    assert stream.converged_ is None
    session = stream.stream_
    assert session["rows"] == 3000 and session["batches"] == 6
    assert session["scored_rows"] == 16 * session["steps"]
    assert 3000 - 85 - 16 < session["scored_rows"] <= 3000 - 85
    # Setting 6.1 has an expected log-likelihood of about -1.6 per row at the truth.
    assert -2.5 < session["average_loglik"] < -1.3
    # A pickled (saved and resumed) session reports what the unbroken one does.
    assert copy.stream_ == session
    fit = moe.MoERegressor(n_experts=2, random_state=0).fit(X, y)
    assert fit.stream_ is None and fit.converged_ is True


def test_a_separated_gate_warns_with_the_remedy():
    X, y = mcycle()
    for k in (3, 4):
        with pytest.warns(moe.GateSeparationWarning, match="gate_l2"):
            fit = moe.MoERegressor(n_experts=k, random_state=0).fit(X, y)
        assert fit.gate_separated_
        assert fit.report_["gate_transition"] < 1e-3
    with warnings.catch_warnings():
        warnings.simplefilter("error", moe.GateSeparationWarning)
        assert not moe.MoERegressor(n_experts=2, random_state=0).fit(X, y).gate_separated_
        penalised = moe.MoERegressor(n_experts=3, random_state=0, gate_l2=1e-4).fit(X, y)
        assert not penalised.gate_separated_
        assert not moe.MoERegressor(n_experts=2, random_state=0).fit(
            *regimes(1000, 3)).gate_separated_
