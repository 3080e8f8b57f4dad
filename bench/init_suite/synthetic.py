"""Writes the synthetic data sets of the start benchmark as CSV files.

Each set is built to break one family of starting values: regression lines
that cross (k-means on [x, y] groups by place, not by line), many experts in
ten dimensions, heavy noise, unbalanced experts, a variance that changes along
one covariate. Fixed seeds: the same files on every machine.

    python3 synthetic.py DIRECTORY
"""
import os
import sys

import numpy as np


def softmax_rows(logits):
    logits = logits - logits.max(axis=1, keepdims=True)
    weights = np.exp(logits)
    return weights / weights.sum(axis=1, keepdims=True)


def draw_labels(rng, probabilities):
    cumulative = probabilities.cumsum(axis=1)
    uniform = rng.random((probabilities.shape[0], 1))
    return np.minimum((uniform > cumulative).sum(axis=1), probabilities.shape[1] - 1)


def gated(rng, n, d, K, gate_scale, coefficient_scale, noise, intercept_shift=None):
    """A softmax-gated Gaussian mixture of experts with random parameters."""
    X = rng.standard_normal((n, d))
    gate = rng.standard_normal((K, d + 1)) * gate_scale
    if intercept_shift is not None:
        gate[:, 0] += intercept_shift
    logits = gate[:, 0] + X @ gate[:, 1:].T
    labels = draw_labels(rng, softmax_rows(logits))
    betas = rng.standard_normal((K, d + 1)) * coefficient_scale
    mean = betas[labels, 0] + np.einsum("ij,ij->i", X, betas[labels, 1:])
    sd = np.asarray(noise, dtype=float)
    sd = sd[labels] if sd.ndim else sd
    y = mean + rng.standard_normal(n) * sd
    return X, y


def crossing_curves(rng, n):
    """Two regimes whose curves cross: y = 5x against y = 15 + 10x - x^2."""
    x = rng.uniform(0, 10, n)
    second = rng.random(n) < 0.5
    y = np.where(second, 15 + 10 * x - x**2, 5 * x) + rng.standard_normal(n) * 3
    return np.column_stack([x, x**2]), y, ["x", "x2"]


def crossing_lines(rng, n, K, noise):
    """K lines through nearly one point, mixed with weights that ignore x."""
    x = rng.uniform(-3, 3, n)
    labels = rng.integers(0, K, n)
    slopes = np.linspace(-2, 2, K)
    intercepts = rng.standard_normal(K) * 0.3
    y = intercepts[labels] + slopes[labels] * x + rng.standard_normal(n) * noise
    return x[:, None], y, ["x"]


def changing_variance(rng, n):
    """One covariate, four regimes along it with very different noise."""
    t = np.sort(rng.uniform(0, 4, n))
    regime = np.minimum(t.astype(int), 3)
    slope = np.array([1.0, -2.0, 0.5, 3.0])[regime]
    level = np.array([0.0, 2.0, -1.0, 1.0])[regime]
    sd = np.array([0.1, 1.0, 0.3, 2.0])[regime]
    y = level + slope * (t - regime) + rng.standard_normal(n) * sd
    return t[:, None], y, ["t"]


def write(directory, name, X, y, names):
    path = os.path.join(directory, name + ".csv")
    with open(path, "w") as out:
        out.write(",".join(names + ["y"]) + "\n")
        for row, response in zip(X, y):
            out.write(",".join("%.17g" % value for value in row) + ",%.17g\n" % response)


def main():
    directory = sys.argv[1] if len(sys.argv) > 1 else "."
    os.makedirs(directory, exist_ok=True)
    sets = {}
    rng = np.random.default_rng(101)
    sets["crossing_curves"] = crossing_curves(rng, 500)
    rng = np.random.default_rng(102)
    sets["crossing_lines3"] = crossing_lines(rng, 600, 3, 0.4)
    rng = np.random.default_rng(103)
    sets["crossing_lines5"] = crossing_lines(rng, 1500, 5, 0.3)
    rng = np.random.default_rng(104)
    sets["changing_variance"] = changing_variance(rng, 400)
    for name, seed, n, d, K, gate_scale, coefficient_scale, noise, shift in [
        ("separated_k8_d10", 105, 4000, 10, 8, 3.0, 3.0, 0.5, None),
        ("overlapping_k8_d10", 106, 4000, 10, 8, 0.7, 1.0, 1.5, None),
        ("heavy_noise_k3_d2", 107, 1000, 2, 3, 1.5, 1.0, 4.0, None),
        ("unbalanced_k3_d3", 108, 2000, 3, 3, 1.0, 2.0, 0.5, np.array([3.0, 1.0, -0.5])),
        ("gated_k3_d5", 109, 5000, 5, 3, 2.0, 2.0, [0.5, 1.0, 2.0], None),
        ("gated_k6_d4", 110, 3000, 4, 6, 2.0, 2.0, 0.7, None),
    ]:
        rng = np.random.default_rng(seed)
        X, y = gated(rng, n, d, K, gate_scale, coefficient_scale, noise, shift)
        sets[name] = (X, y, ["x%d" % (j + 1) for j in range(d)])
    for name, (X, y, names) in sets.items():
        write(directory, name, X, y, names)


if __name__ == "__main__":
    main()
