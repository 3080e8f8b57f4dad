"""Outlier data sets for the t experts' defaults (issue 41): two regimes of a regression on x
gated by x, Gaussian noise, and a share of gross outliers.

    python3 generate.py N SEED OUT.csv [OUTLIER_SHARE [WHERE]]

x uniform on (-2, 2); P(regime 1 | x) = sigmoid(3 x); regime 1: y = 2 + 1.5 x, regime 2:
y = -1 + 0.5 x, noise sd 0.5; a share (default 0.05) of the rows get y shifted by +-10 to
30. WHERE is "both" (the default: outliers among every row) or "one" (only among regime 1's
rows, so that one expert's tail is heavy and the other's normal)."""
import sys

import numpy as np


def main():
    n, seed, out = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
    share = float(sys.argv[4]) if len(sys.argv) > 4 else 0.05
    where = sys.argv[5] if len(sys.argv) > 5 else "both"
    rng = np.random.default_rng(seed)
    x = rng.uniform(-2.0, 2.0, n)
    first = rng.uniform(size=n) < 1.0 / (1.0 + np.exp(-3.0 * x))
    y = np.where(first, 2.0 + 1.5 * x, -1.0 + 0.5 * x) + rng.normal(0.0, 0.5, n)
    outliers = rng.uniform(size=n) < share
    if where == "one":
        outliers &= first
    y[outliers] += rng.choice([-1.0, 1.0], outliers.sum()) * rng.uniform(10, 30, outliers.sum())
    np.savetxt(out, np.column_stack([x, y]), delimiter=",", header="x,y", comments="",
               fmt="%.8g")


main()
