#!/usr/bin/env python3
"""Prints a Markdown table of an `esmm bench --json` results file, for the README.

    python3 scripts/results_table.py bench/results/h100-ladder.json
"""
import json
import sys


def main(path):
    with open(path) as f:
        doc = json.load(f)
    print(f"{doc.get('device', '?')}, commit {doc.get('commit', '?')}, {doc.get('date', '?')}\n")
    print("| kernel | m×n×k | ops | median ms | TFLOP/s | × cuBLAS | check |")
    print("| --- | --- | --- | ---: | ---: | ---: | --- |")
    for r in doc["results"]:
        shape = f"{r['m']}×{r['n']}×{r['k']}"
        ops = f"{r.get('transa', 'N')}{r.get('transb', 'N')}"
        print(f"| {r['kernel']} | {shape} | {ops} | {r['ms']:.3f} | {r.get('tflops', 0):.1f} "
              f"| {r.get('speedup', 0):.2f} | {r.get('check', '?')} |")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(sys.argv[1])
