#!/usr/bin/env python3
"""Plots esmm's speedup over cuBLAS against density from an `esmm bench --sweep
density --json` file (matplotlib).

    python3 scripts/plot_density.py bench/results/h100-density.json -o bench/results/h100-density.png
"""
import argparse
import json

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("results")
    parser.add_argument("-o", "--output", required=True)
    args = parser.parse_args()
    with open(args.results) as f:
        doc = json.load(f)
    series = {False: [], True: []}
    for r in doc["results"]:
        if r["kernel"] == "esmm":
            series[bool(r.get("cached_b"))].append((r["density_a"], r["speedup"]))
    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    labels = {False: "esmm (both operands' patterns extracted per call)",
              True: "esmm (B's pattern extracted once)"}
    for cached, points in series.items():
        if points:
            points.sort()
            ax.plot([p[0] for p in points], [p[1] for p in points], marker="o",
                    label=labels[cached])
    ax.axhline(1.0, color="gray", linestyle="--", linewidth=1, label="cuBLAS SGEMM (FP32)")
    r0 = doc["results"][0]
    ax.set_xlabel("density d of each operand (32-wide strips kept per k with probability d)")
    ax.set_ylabel("speedup over cuBLAS")
    ax.set_yscale("log")
    ax.set_title(f"{r0['m']}x{r0['n']}x{r0['k']} on {doc['device']} (commit {doc['commit']})",
                 fontsize=10)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(args.output, dpi=120)


if __name__ == "__main__":
    main()
