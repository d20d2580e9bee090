"""Plots an `esmm bench --json` results file (matplotlib):

    python -m esmm.plot FILE.json -o FILE.png

Draws speedup over the baseline against operand density where the file
holds esmm rows at several densities (`--sweep density`), and time against
size where a kernel ran at several sizes (`--sweep targets`); one panel
each, side by side when both apply."""
import argparse
import json
import sys
from collections import defaultdict


def _density_series(results):
    """{label: [(density, speedup)]} of the esmm rows of the most common
    size, one series per kind of run (B's pattern extracted per call or
    once)."""
    series = defaultdict(list)
    sizes = [(r.get("m"), r.get("n"), r.get("k")) for r in results if r.get("kernel") == "esmm"]
    size = max(set(sizes), key=sizes.count) if sizes else None
    for r in results:
        if r.get("kernel") != "esmm" or r.get("speedup") is None or r.get("density_a") is None:
            continue
        if (r.get("m"), r.get("n"), r.get("k")) != size:
            continue
        if r.get("density_a") != r.get("density_b") or r.get("generator") != "density":
            continue
        label = ("esmm (B's pattern extracted once)" if r.get("cached_b")
                 else "esmm (both patterns extracted per call)")
        series[label].append((r["density_a"], r["speedup"]))
    return {k: sorted(set(v)) for k, v in series.items() if len({d for d, _ in v}) > 1}


def _size_series(results):
    """{kernel: [(size, ms)]} for square problems with both operands at one
    density that ran at several sizes."""
    series = defaultdict(dict)
    for r in results:
        if r.get("ms") is None or r.get("generator", "density") != "density" or \
                not (r.get("m") == r.get("n") == r.get("k")):
            continue
        if r.get("density_a", 1.0) != r.get("density_b", 1.0) or r.get("cached_b"):
            continue
        density = r.get("density_a", 1.0)
        label = r["kernel"] if density in (None, 1.0) else f"{r['kernel']}, d = {density:g}"
        series[label][r["m"]] = r["ms"]
    return {k: sorted(v.items()) for k, v in series.items() if len(v) > 1}


def plot(doc, output):
    """Writes the panels that apply to `doc` (a parsed results file) to
    `output`; ValueError when none does."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    results = doc.get("results", [])
    panels = [p for p in (("density", _density_series(results)), ("size", _size_series(results)))
              if p[1]]
    if not panels:
        raise ValueError("nothing to plot: no esmm rows at several densities and no kernel "
                         "at several sizes")
    fig, axes = plt.subplots(1, len(panels), figsize=(6.4 * len(panels), 4.4), squeeze=False)
    for ax, (what, series) in zip(axes[0], panels):
        for label, points in series.items():
            ax.plot([p[0] for p in points], [p[1] for p in points], marker="o", label=label)
        if what == "density":
            baseline = next((r.get("baseline") for r in results if r.get("baseline")), "baseline")
            ax.axhline(1.0, color="gray", linestyle="--", linewidth=1, label=f"{baseline} (1x)")
            ax.set_xlabel("density of each operand (32-wide strips kept per k)")
            ax.set_ylabel("speedup over the baseline")
            ax.set_yscale("log")
        else:
            ax.set_xlabel("m = n = k")
            ax.set_ylabel("median ms")
            ax.set_xscale("log", base=2)
            ax.set_yscale("log")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=7)
    fig.suptitle(f"{doc.get('device', '?')}, commit {doc.get('commit', '?')}", fontsize=10)
    fig.tight_layout()
    fig.savefig(output, dpi=120)
    plt.close(fig)


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m esmm.plot",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("results", help="an esmm bench --json file")
    parser.add_argument("-o", "--output", required=True, help="the PNG to write")
    args = parser.parse_args(argv)
    try:
        with open(args.results) as f:
            doc = json.load(f)
        plot(doc, args.output)
    except (OSError, ValueError) as e:
        print(f"esmm.plot: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
