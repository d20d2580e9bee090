#!/usr/bin/env python3
"""Merges `esmm bench --json` files into one (device, commit and date of the first).

    python3 scripts/merge_results.py OUT.json IN1.json IN2.json ...
"""
import json
import sys


def main(out, inputs):
    merged = None
    for path in inputs:
        with open(path) as f:
            doc = json.load(f)
        if merged is None:
            merged = doc
        else:
            merged["results"].extend(doc["results"])
    with open(out, "w") as f:
        json.dump(merged, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2:])
