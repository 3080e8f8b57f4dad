"""moe.dask's exact em against the in-memory fit (bench/RESULTS.md): log-likelihood and
standard errors of the same rows fitted in memory and on a LocalCluster of two worker
processes with the rows in 2 and 4 partitions, the partitions holding the rows in blocks
(mcycle sorted by time, NPreg's two classes as they come, a generated set sorted by x).

    python3 bench/dask/exact_em.py [--npreg NPreg.csv] [--rows 200000]

NPreg is flexmix's (write.csv(NPreg) from R); mcycle is tests/data/mcycle.csv.
"""
import argparse
import os
import time

import numpy as np


def blocks(name, X, y, k, partitions, moe, da):
    memory = moe.MoERegressor(n_experts=k, random_state=0).fit(X, y)
    expected = memory.model_.loglik(X, y)
    errors = memory.standard_errors(X, y)
    for count in partitions:
        chunk = -(-len(y) // count)
        started = time.time()
        fitted = moe.dask.DaskMoERegressor(n_experts=k, random_state=0).fit(
            da.from_array(X, chunks=(chunk, X.shape[1])), da.from_array(y, chunks=chunk))
        seconds = time.time() - started
        got = fitted.model_.loglik(X, y)
        mine = fitted.standard_errors(X, y)
        # A separated gate's standard errors say how far it ran, not a spread: the
        # experts' alone are compared then.
        separated = getattr(memory, "gate_separated_", False)
        names = [name for name in errors if not (separated and name.startswith("gate"))]
        worst = max(abs(mine[name] - errors[name]) / abs(errors[name]) for name in names)
        print(f"{name}, {count} partitions: log-likelihood {got:.6f} (in memory "
              f"{expected:.6f}, relative difference {abs(got - expected) / abs(expected):.2g}), "
              f"standard errors{' (experts; the gate is separated)' if separated else ''} within "
              f"{worst:.2g}, {fitted.n_passes_} passes, {seconds:.2f} s")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--npreg")
    parser.add_argument("--rows", type=int, default=200_000)
    arguments = parser.parse_args()
    import dask.array as da
    from distributed import Client, LocalCluster

    import moe
    import moe.dask
    client = Client(LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                 dashboard_address=None))
    here = os.path.dirname(os.path.abspath(__file__))
    cycle = np.genfromtxt(os.path.join(here, "../../tests/data/mcycle.csv"), delimiter=",",
                          names=True)
    order = np.argsort(cycle["times"], kind="stable")
    blocks("mcycle sorted by time, K = 3", cycle["times"][order][:, None],
           cycle["accel"][order], 3, (2, 4), moe, da)
    if arguments.npreg:
        npreg = np.genfromtxt(arguments.npreg, delimiter=",", names=True)
        blocks("NPreg yn ~ x in its two classes' blocks, K = 2", npreg["x"][:, None],
               npreg["yn"], 2, (2, 4), moe, da)
    rng = np.random.default_rng(1)
    x = np.sort(rng.uniform(-2, 2, arguments.rows))
    upper = rng.uniform(size=x.size) < 1 / (1 + np.exp(-3 * x))
    y = np.where(upper, 1 + 2 * x, -1 - x) + 0.3 * rng.normal(size=x.size)
    blocks(f"{arguments.rows} generated rows sorted by x, K = 2", x[:, None], y, 2, (2, 4),
           moe, da)
    client.close()


if __name__ == "__main__":
    main()
