"""The start benchmark: does the default `moe fit` find the best optimum?

For every data set of the suite (synthetic.py and public.R write them), it
compares the log-likelihood of the default fit, at several seeds, with

  - the reference: the best of 500 restarts from random hard labels, each run
    to convergence (computed once per data set and kept in reference.json);
  - optionally flexmix's default, stepFlexmix(nrep = 3), with the gate as a
    concomitant multinomial model on the same covariates (flexmix.R).

    python3 run.py DATA_DIR [--moe PATH] [--seeds 10] [--flexmix] [--only NAME,...]
                            [--args "--option init=kmeans"]

Prints one line per data set and exits 0 when the default reaches the
reference within 1e-6 relative at every seed (and is never below flexmix's
value by more than that), 1 otherwise.
"""
import argparse
import json
import os
import subprocess
import sys
import time

# Data set and number of experts.
SUITE = [
    ("crossing_curves", 2), ("crossing_lines3", 3), ("crossing_lines5", 5),
    ("changing_variance", 4), ("separated_k8_d10", 8), ("overlapping_k8_d10", 8),
    ("heavy_noise_k3_d2", 3), ("unbalanced_k3_d3", 3), ("gated_k3_d5", 3),
    ("gated_k6_d4", 6),
    ("npreg", 2), ("tonedata", 2), ("nodata", 2), ("co2", 2), ("mcycle", 4),
    ("faithful", 2), ("boston", 3),
]
TOLERANCE = 1e-6
REFERENCE_RESTARTS = 500
HERE = os.path.dirname(os.path.abspath(__file__))


def fit(moe, path, K, extra):
    command = [moe, "fit", path, "--response", "y", "-k", str(K), "--json"] + extra
    started = time.time()
    result = subprocess.run(command, capture_output=True, text=True)
    seconds = time.time() - started
    if result.returncode not in (0,):
        raise RuntimeError("%s: %s" % (" ".join(command), result.stderr.strip()))
    summary = json.loads(result.stdout)
    return summary["fit"]["loglik"], seconds


def reference(moe, directory, name, K, cache):
    key = "%s:%d" % (name, K)
    if key not in cache:
        loglik, seconds = fit(moe, os.path.join(directory, name + ".csv"), K,
                              ["--option", "init=random", "--n-init", str(REFERENCE_RESTARTS),
                               "--seed", "20261125", "--max-iter", "5000"])
        cache[key] = {"loglik": loglik, "seconds": seconds}
        with open(os.path.join(directory, "reference.json"), "w") as out:
            json.dump(cache, out, indent=1)
    return cache[key]["loglik"]


def flexmix(directory, name, K, cache):
    key = "%s:%d" % (name, K)
    if key not in cache:
        result = subprocess.run(["Rscript", os.path.join(HERE, "flexmix.R"),
                                 os.path.join(directory, name + ".csv"), str(K)],
                                capture_output=True, text=True)
        values = [line for line in result.stdout.splitlines() if line.startswith("loglik ")]
        cache[key] = float(values[-1].split()[1]) if values else None
        with open(os.path.join(directory, "flexmix.json"), "w") as out:
            json.dump(cache, out, indent=1)
    return cache[key]


def load(path):
    if os.path.exists(path):
        with open(path) as source:
            return json.load(source)
    return {}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("directory")
    parser.add_argument("--moe", default="moe")
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--flexmix", action="store_true")
    parser.add_argument("--only", default="")
    parser.add_argument("--args", default="")
    options = parser.parse_args()
    only = set(filter(None, options.only.split(",")))
    references = load(os.path.join(options.directory, "reference.json"))
    flexmixes = load(os.path.join(options.directory, "flexmix.json"))
    extra = options.args.split()
    failures = 0
    print("%-20s %2s %10s %16s %16s %10s %8s %s" % (
        "data", "K", "n", "reference", "worst default", "rel. gap", "seconds",
        "flexmix (nrep 3)"))
    for name, K in SUITE:
        if only and name not in only:
            continue
        path = os.path.join(options.directory, name + ".csv")
        if not os.path.exists(path):
            print("%-20s missing" % name)
            failures += 1
            continue
        with open(path) as source:
            n = sum(1 for _ in source) - 1
        best = reference(options.moe, options.directory, name, K, references)
        results = [fit(options.moe, path, K, ["--seed", str(seed)] + extra)
                   for seed in range(options.seeds)]
        worst = min(loglik for loglik, _ in results)
        seconds = max(s for _, s in results)
        gap = (best - worst) / abs(best)
        ok = gap <= TOLERANCE
        shown_flexmix = ""
        if options.flexmix:
            value = flexmix(options.directory, name, K, flexmixes)
            if value is None:
                shown_flexmix = "failed"
            else:
                below = (value - worst) / abs(value)
                ok = ok and below <= TOLERANCE
                shown_flexmix = "%.6f%s" % (value, "  (default below)" if below > TOLERANCE else "")
        failures += not ok
        print("%-20s %2d %10d %16.6f %16.6f %10.2e %8.2f %s %s" % (
            name, K, n, best, worst, gap, seconds, shown_flexmix, "" if ok else "FAIL"))
        sys.stdout.flush()
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
