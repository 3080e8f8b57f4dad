"""moe.dask on a LocalCluster of two worker processes: the exact em of dask arrays and
frames whose partitions hold rows sorted by a covariate (each partition its own region)
gives the in-memory fit of the same rows, and a bad value names its partition and row.
Registered as the CTest python_dask (tests/CMakeLists.txt) when python3 has dask and
distributed; the python_binding test leaves this file out."""
import numpy as np
import pytest

distributed = pytest.importorskip("distributed")
da = pytest.importorskip("dask.array")

import moe  # noqa: E402
import moe.dask  # noqa: E402


@pytest.fixture(scope="module")
def client():
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                       dashboard_address=":0")
    with distributed.Client(cluster) as connected:
        yield connected
    cluster.close()


def regimes(n, seed):
    """Two regression lines under a logistic gate in x, rows sorted by x."""
    rng = np.random.default_rng(seed)
    x = np.sort(rng.uniform(-2.0, 2.0, n))
    upper = rng.uniform(size=n) < 1.0 / (1.0 + np.exp(-3.0 * x))
    y = np.where(upper, 1.0 + 2.0 * x, -1.0 - x) + 0.3 * rng.normal(size=n)
    return x[:, None], y


@pytest.mark.parametrize("partitions", [2, 4])
def test_sorted_partitions_give_the_in_memory_fit(client, partitions):
    X, y = regimes(200_000, 7)
    memory = moe.MoERegressor(n_experts=2, random_state=3).fit(X, y)
    chunk = -(-len(y) // partitions)
    fitted = moe.dask.DaskMoERegressor(n_experts=2, random_state=3).fit(
        da.from_array(X, chunks=(chunk, 1)), da.from_array(y, chunks=chunk))
    assert fitted.n_partitions_ == partitions
    expected, got = memory.model_.loglik(X, y), fitted.model_.loglik(X, y)
    assert abs(got - expected) <= 1e-6 * abs(expected)
    np.testing.assert_allclose(np.sort(fitted.coef_.ravel()), np.sort(memory.coef_.ravel()),
                               atol=1e-3)
    predicted = fitted.predict(da.from_array(X, chunks=(chunk, 1))).compute()
    np.testing.assert_allclose(predicted, memory.predict(X), atol=1e-3)


def test_small_data_is_the_in_memory_fit_with_weights(client):
    """At most start_rows rows: the start is the in-memory fit itself, and em goes on from
    it with the partitions' sums; weights travel with their rows (a dask DataFrame)."""
    dd = pytest.importorskip("dask.dataframe")
    pandas = pytest.importorskip("pandas")
    X, y = regimes(3000, 11)
    weights = np.random.default_rng(12).uniform(0.5, 2.0, len(y))
    memory = moe.MoERegressor(n_experts=2, random_state=1, tol=1e-11).fit(X, y, weights)
    frame = dd.from_pandas(pandas.DataFrame({"x": X[:, 0]}), npartitions=3)
    response = dd.from_pandas(pandas.Series(y), npartitions=3)
    w = dd.from_pandas(pandas.Series(weights), npartitions=3)
    fitted = moe.dask.DaskMoERegressor(n_experts=2, random_state=1, tol=1e-11).fit(
        frame, response, sample_weight=w)
    expected = memory.model_.loglik(X, y, weights)
    assert abs(fitted.model_.loglik(X, y, weights) - expected) <= 1e-9 * abs(expected)


def test_a_bad_value_names_its_partition_and_row(client):
    X, y = regimes(4000, 5)
    X[2500, 0] = np.nan  # partition 2 of 4 (1000 rows each), its row 500
    with pytest.raises(moe.MoeValueError, match=r"partition 2, row 500 \(row 2500 of all rows\)"
                                                r", column 0"):
        moe.dask.DaskMoERegressor(n_experts=2).fit(da.from_array(X, chunks=(1000, 1)),
                                                   da.from_array(y, chunks=1000))


def test_a_row_no_expert_explains_names_its_partition(client):
    """A failure inside a pass (here the first: no expert of the start gives the row a
    likelihood) reaches every partition, and the error names where the row is."""
    X, y = regimes(30_000, 9)  # more rows than the start's sample, which may miss it
    y[29_990] = 1e200
    with pytest.raises(moe.MoeError, match=r"partition 2, row \d+ \(row 29990 of all rows\)"):
        moe.dask.DaskMoERegressor(n_experts=2, start_rows=1000).fit(
            da.from_array(X, chunks=(10_000, 1)), da.from_array(y, chunks=10_000))


def test_classifier_and_refusals(client):
    rng = np.random.default_rng(4)
    x = np.sort(rng.normal(size=20_000))
    labels = np.where(rng.uniform(size=x.size) < 1 / (1 + np.exp(-2 * x)), "b", "a")
    X = x[:, None]
    memory = moe.MoEClassifier(n_experts=2, random_state=0).fit(X, labels)
    fitted = moe.dask.DaskMoEClassifier(n_experts=2, random_state=0).fit(
        da.from_array(X, chunks=(5000, 1)), da.from_array(labels, chunks=5000))
    assert list(fitted.classes_) == ["a", "b"]
    codes = (labels == "b").astype(float)
    expected = memory.model_.loglik(X, codes)
    assert abs(fitted.model_.loglik(X, codes) - expected) <= 1e-6 * abs(expected)
    with pytest.raises(ValueError, match="exact em"):
        moe.dask.DaskMoERegressor(estimator="gd").fit(da.from_array(X, chunks=(5000, 1)),
                                                      da.from_array(x, chunks=5000))


def exposures(n, seed):
    """Poisson counts over exposures (offset: the log exposure) and binomial successes
    among trials, two experts under a logistic gate in x, rows sorted by x."""
    rng = np.random.default_rng(seed)
    x = np.sort(rng.uniform(-2.0, 2.0, n))
    exposure = rng.uniform(0.5, 3.0, n)
    upper = rng.uniform(size=n) < 1.0 / (1.0 + np.exp(-3.0 * x))
    counts = rng.poisson(np.where(upper, np.exp(0.5 + 0.8 * x), np.exp(-0.5 - 0.4 * x)) *
                         exposure).astype(float)
    trials = rng.integers(1, 9, n).astype(float)
    successes = rng.binomial(trials.astype(int), np.where(upper, 0.8, 0.3)).astype(float)
    return x[:, None], np.log(exposure), counts, trials, successes


def test_offset_and_trials_are_fit_arguments(client):
    """offset= and trials= as fit's and predict's arguments, in chunks other than X's (they
    are cut in X's): the in-memory fit with the same arguments, as exact em gives it (at most
    start_rows rows and tol=1e-11, as test_small_data_is_the_in_memory_fit_with_weights:
    the start is the in-memory fit itself, and em goes on from it with the partitions'
    sums)."""
    X, offset, counts, trials, successes = exposures(6000, 21)
    memory = moe.MoERegressor(n_experts=2, family="poisson", random_state=2, tol=1e-11).fit(
        X, counts, offset=offset)
    dX, dy = da.from_array(X, chunks=(1500, 1)), da.from_array(counts, chunks=1500)
    fitted = moe.dask.DaskMoERegressor(n_experts=2, family="poisson", random_state=2,
                                       tol=1e-11).fit(
        dX, dy, offset=da.from_array(offset, chunks=2000))
    assert fitted.n_features_in_ == 1 and fitted.coef_.shape == memory.coef_.shape
    assert fitted.n_partitions_ == 4
    expected = memory.loglik(X, counts, offset=offset)
    assert abs(fitted.loglik(X, counts, offset=offset) - expected) <= 1e-9 * abs(expected)
    np.testing.assert_allclose(fitted.coef_, memory.coef_, atol=1e-4)
    np.testing.assert_allclose(fitted.gate_coef_, memory.gate_coef_, atol=1e-3)
    predicted = fitted.predict(dX, offset=da.from_array(offset, chunks=1000))
    assert predicted.chunks[0] == dX.chunks[0]
    predicted = predicted.compute()
    np.testing.assert_allclose(predicted, memory.predict(X, offset=offset), rtol=1e-4)
    # a numpy X is predicted at once, in memory (a dask offset computed for it)
    np.testing.assert_allclose(fitted.predict(X, offset=da.from_array(offset, chunks=1000)),
                               predicted, rtol=1e-12)

    memory = moe.MoERegressor(n_experts=2, family="binomial", random_state=4, tol=1e-11).fit(
        X, successes, trials=trials)
    fitted = moe.dask.DaskMoERegressor(n_experts=2, family="binomial", random_state=4,
                                       tol=1e-11).fit(
        dX, da.from_array(successes, chunks=1500), trials=trials)
    expected = memory.loglik(X, successes, trials=trials)
    assert abs(fitted.loglik(X, successes, trials=trials) - expected) <= 1e-9 * abs(expected)
    np.testing.assert_allclose(fitted.coef_, memory.coef_, atol=1e-4)
    # the success probability needs no trials, as MoERegressor.predict's
    np.testing.assert_allclose(fitted.predict(dX).compute(), memory.predict(X), rtol=1e-4)


def test_the_classifier_takes_offset_as_an_argument(client):
    rng = np.random.default_rng(8)
    X, offset, _, _, _ = exposures(6000, 22)
    shift = 0.3 * rng.normal(size=len(offset))
    labels = np.where(rng.uniform(size=len(shift)) <
                      1 / (1 + np.exp(-2 * X[:, 0] - shift)), "b", "a")
    memory = moe.MoEClassifier(n_experts=2, random_state=0).fit(X, labels, offset=shift)
    dX = da.from_array(X, chunks=(2000, 1))
    fitted = moe.dask.DaskMoEClassifier(n_experts=2, random_state=0).fit(
        dX, da.from_array(labels, chunks=2000), offset=da.from_array(shift, chunks=2500))
    expected = memory.loglik(X, labels, offset=shift)
    assert abs(fitted.loglik(X, labels, offset=shift) - expected) <= 1e-6 * abs(expected)
    proba = fitted.predict_proba(dX, offset=shift)
    assert proba.chunks == (dX.chunks[0], (2,))
    np.testing.assert_allclose(proba.compute(), memory.predict_proba(X, offset=shift),
                               atol=1e-3)
    assert list(np.unique(fitted.predict(dX, offset=shift).compute())) == ["a", "b"]
    with pytest.raises(ValueError, match="the fit had offset="):
        fitted.predict_proba(dX)


def test_offset_and_trials_refusals(client):
    """A length that is not X's is refused when the call is made, with the in-memory
    estimators' message (nothing is computed); so is an offset given twice, and a predict
    without the offset the fit had."""
    X, offset, counts, trials, successes = exposures(3000, 23)
    dX, dy = da.from_array(X, chunks=(1000, 1)), da.from_array(counts, chunks=1000)
    with pytest.raises(ValueError) as in_memory:
        moe.MoERegressor(family="poisson").fit(X, counts, offset=offset[:-1])
    assert "offset has 2999 values for 3000 rows of X" in str(in_memory.value)
    for given in (offset[:-1], da.from_array(offset[:-1], chunks=1000)):
        with pytest.raises(ValueError) as refused:
            moe.dask.DaskMoERegressor(family="poisson").fit(dX, dy, offset=given)
        assert str(refused.value) == str(in_memory.value)
    with pytest.raises(ValueError, match="trials has 3001 values for 3000 rows of X"):
        moe.dask.DaskMoERegressor(family="binomial").fit(
            dX, da.from_array(successes, chunks=1000), trials=np.append(trials, 1.0))
    with pytest.raises(ValueError, match="offset has shape"):
        moe.dask.DaskMoERegressor(family="poisson").fit(dX, dy,
                                                        offset=np.ones((3000, 2)))
    with pytest.warns(DeprecationWarning), pytest.raises(ValueError, match="given twice"):
        moe.dask.DaskMoERegressor(family="poisson", offset=1).fit(
            da.from_array(np.column_stack([X[:, 0], offset]), chunks=(1000, 2)), dy,
            offset=offset)
    fitted = moe.dask.DaskMoERegressor(family="poisson", random_state=0).fit(dX, dy,
                                                                             offset=offset)
    with pytest.raises(ValueError, match="offset has 2999 values for 3000 rows of X"):
        fitted.predict(dX, offset=offset[:-1])
    with pytest.raises(ValueError, match="the fit had offset="):
        fitted.predict(dX)  # the fit had an offset: each row's is needed
    with pytest.raises(ValueError, match="trials= was not given to fit"):
        fitted.predict(dX, offset=offset, trials=trials)


def test_the_constructor_columns_are_deprecated(client):
    """The constructor's offset= and trials= columns of X still fit the model of fit's
    arguments, with the in-memory estimators' DeprecationWarning, pointing at the caller's
    line as theirs does."""
    X, offset, counts, trials, successes = exposures(3000, 24)
    dy = da.from_array(counts, chunks=1000)
    memory = moe.MoERegressor(n_experts=2, family="poisson", random_state=2, tol=1e-11).fit(
        X, counts, offset=offset)
    expected = memory.loglik(X, counts, offset=offset)
    with_offset = np.column_stack([X[:, 0], offset])
    with pytest.warns(DeprecationWarning, match=r"DaskMoERegressor\(offset=column\) is "
                                                r"deprecated") as record:
        column = moe.dask.DaskMoERegressor(n_experts=2, family="poisson", random_state=2,
                                           tol=1e-11, offset=1).fit(
            da.from_array(with_offset, chunks=(1000, 2)), dy)
    assert [w.filename for w in record if w.category is DeprecationWarning] == [__file__]
    assert abs(column.loglik(with_offset, counts) - expected) <= 1e-9 * abs(expected)

    memory = moe.MoERegressor(n_experts=2, family="binomial", random_state=4, tol=1e-11).fit(
        X, successes, trials=trials)
    expected = memory.loglik(X, successes, trials=trials)
    with_trials = np.column_stack([X[:, 0], trials])
    with pytest.warns(DeprecationWarning, match=r"DaskMoERegressor\(trials=column\)"):
        column = moe.dask.DaskMoERegressor(n_experts=2, family="binomial", random_state=4,
                                           tol=1e-11, trials=1).fit(
            da.from_array(with_trials, chunks=(1000, 2)), da.from_array(successes, chunks=1000))
    assert column.get_params()["trials"] == 1
    assert abs(column.loglik(with_trials, successes) - expected) <= 1e-9 * abs(expected)

    labels = np.where(counts > np.median(counts), "b", "a")
    with pytest.warns(DeprecationWarning, match=r"DaskMoEClassifier\(offset=column\)") \
            as record:  # a few passes: only the warning is looked at
        moe.dask.DaskMoEClassifier(n_experts=2, random_state=0, offset=1, max_iter=5).fit(
            da.from_array(with_offset, chunks=(1000, 2)), da.from_array(labels, chunks=1000))
    assert [w.filename for w in record if w.category is DeprecationWarning] == [__file__]
