#!/usr/bin/env python3
"""Prints a Markdown table of an `esmm bench --json` results file, for the README.
Files from `--sweep targets` get the target table (one row per case: end-to-end
and cached-B esmm against cuBLAS, the target, the path the planner took); files
from `--op csrmm --sweep csr-targets` get the CSR table against cuSPARSE.

    python3 scripts/results_table.py bench/results/h100-ladder.json
    python3 scripts/results_table.py bench/results/h100-esmm.json
    python3 scripts/results_table.py bench/results/h100-spmm.json
"""
import json
import sys


def speedup_text(speedup, target):
    """Two decimals, or three where two would round a missed target up to it."""
    text = f"{speedup:.2f}"
    if target is not None and speedup < target and float(text) >= target:
        text = f"{speedup:.3f}"
    return text


def kernel_table(doc):
    print("| kernel | m×n×k | ops | median ms | TFLOP/s | × cuBLAS | check |")
    print("| --- | --- | --- | ---: | ---: | ---: | --- |")
    for r in doc["results"]:
        if r.get("op", "sgemm") != "sgemm":
            continue
        shape = f"{r['m']}×{r['n']}×{r['k']}"
        ops = f"{r.get('transa', 'N')}{r.get('transb', 'N')}"
        print(f"| {r['kernel']} | {shape} | {ops} | {r['ms']:.3f} | {r.get('tflops', 0):.1f} "
              f"| {r.get('speedup', 0):.2f} | {r.get('check', '?')} |")


def target_table(doc):
    rows = {}
    for r in doc["results"]:
        if r["kernel"] != "esmm":
            continue
        row = rows.setdefault(r["case"], {})
        row["cached" if r.get("cached_b") else "e2e"] = r
    print("| case | m=n=k | cuBLAS ms | esmm ms | × cuBLAS | target | met | cached B × | path | work run |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | --- | ---: | --- | ---: |")
    for case, row in rows.items():
        e, c = row["e2e"], row.get("cached")
        target = e.get("target_speedup")
        met = "—" if target is None else ("yes" if e["speedup"] >= target else "no")
        target_text = "—" if target is None else f"≥ {target:g}"
        cached = f"{c['speedup']:.2f}" if c else "—"
        print(f"| {case} | {e['m']} | {e['baseline_ms']:.3f} | {e['ms']:.3f} "
              f"| {speedup_text(e['speedup'], target)} "
              f"| {target_text} | {met} | {cached} | {e.get('path', '?')} "
              f"| {100 * e.get('work_fraction', 1):.1f}% |")


def csr_table(doc):
    print("| case | cuSPARSE fastest | cuSPARSE ms | esmm ms | × cuSPARSE | target | met |")
    print("| --- | --- | ---: | ---: | ---: | ---: | --- |")
    for r in doc["results"]:
        if r["kernel"] != "esmm":
            continue
        algorithm = r["baseline_kernel"].replace("CUSPARSE_SPMM_", "").replace("CUSPARSE_SPMV_", "")
        target = r.get("target_speedup")
        met = "—" if target is None else ("yes" if r["speedup"] >= target else "no")
        target_text = "—" if target is None else f"≥ {target:g}"
        print(f"| {r['case']} | {algorithm} | {r['baseline_ms']:.4f} | {r['ms']:.4f} "
              f"| {speedup_text(r['speedup'], target)} | {target_text} | {met} |")


def main(path):
    with open(path) as f:
        doc = json.load(f)
    print(f"{doc.get('device', '?')}, commit {doc.get('commit', '?')}, {doc.get('date', '?')}\n")
    if any(r.get("op") in ("csrmm", "csrmv") and "case" in r for r in doc["results"]):
        csr_table(doc)
    elif any("case" in r for r in doc["results"]):
        target_table(doc)
    else:
        kernel_table(doc)


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(sys.argv[1])
