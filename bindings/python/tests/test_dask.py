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
                                       dashboard_address=None)
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


def test_offset_and_trials_are_fit_arguments(client):
    """offset= and trials= as fit's and predict's arguments, in chunks other than X's (they
    are cut in X's): the in-memory fit with the same arguments, as exact em gives it; a
    length that is not X's is refused; the constructor's column form still fits, with the
    in-memory estimators' DeprecationWarning."""
    rng = np.random.default_rng(21)
    n = 6000
    x = np.sort(rng.uniform(-2.0, 2.0, n))
    exposure = rng.uniform(0.5, 3.0, n)
    upper = rng.uniform(size=n) < 1.0 / (1.0 + np.exp(-3.0 * x))
    counts = rng.poisson(np.where(upper, np.exp(0.5 + 0.8 * x), np.exp(-0.5 - 0.4 * x)) *
                         exposure).astype(float)
    X, offset = x[:, None], np.log(exposure)
    memory = moe.MoERegressor(n_experts=2, family="poisson", random_state=2).fit(
        X, counts, offset=offset)
    dX, dy = da.from_array(X, chunks=(1500, 1)), da.from_array(counts, chunks=1500)
    fitted = moe.dask.DaskMoERegressor(n_experts=2, family="poisson", random_state=2).fit(
        dX, dy, offset=da.from_array(offset, chunks=2000))
    assert fitted.n_features_in_ == 1 and fitted.coef_.shape == memory.coef_.shape
    expected = memory.loglik(X, counts, offset=offset)
    assert abs(fitted.loglik(X, counts, offset=offset) - expected) <= 1e-6 * abs(expected)
    predicted = fitted.predict(dX, offset=offset).compute()
    np.testing.assert_allclose(predicted, memory.predict(X, offset=offset), rtol=1e-3)
    with pytest.raises(ValueError, match="one value per row"):
        moe.dask.DaskMoERegressor(n_experts=2, family="poisson").fit(dX, dy,
                                                                     offset=offset[:-1])
    with pytest.raises(ValueError, match="offset"):
        fitted.predict(dX)  # the fit had an offset: each row's is needed
    with pytest.warns(DeprecationWarning, match="offset=column"):
        column = moe.dask.DaskMoERegressor(n_experts=2, family="poisson", random_state=2,
                                           offset=1).fit(
            da.from_array(np.column_stack([x, offset]), chunks=(1500, 2)), dy)
    assert abs(column.loglik(np.column_stack([x, offset]), counts) - expected) <= \
        1e-6 * abs(expected)

    trials = rng.integers(1, 9, n).astype(float)
    successes = rng.binomial(trials.astype(int), np.where(upper, 0.8, 0.3)).astype(float)
    memory = moe.MoERegressor(n_experts=2, family="binomial", random_state=4).fit(
        X, successes, trials=trials)
    fitted = moe.dask.DaskMoERegressor(n_experts=2, family="binomial", random_state=4).fit(
        dX, da.from_array(successes, chunks=1500), trials=trials)
    expected = memory.loglik(X, successes, trials=trials)
    assert abs(fitted.loglik(X, successes, trials=trials) - expected) <= 1e-6 * abs(expected)
