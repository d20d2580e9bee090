"""python -m esmm.plot on a small committed results file."""
import os
import subprocess
import sys

import pytest

pytest.importorskip("matplotlib")
DATA = os.path.join(os.path.dirname(__file__), "data", "sweep.json")


def test_plot_writes_a_png(tmp_path):
    output = tmp_path / "sweep.png"
    done = subprocess.run([sys.executable, "-m", "esmm.plot", DATA, "-o", str(output)],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert output.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_plot_says_when_nothing_applies(tmp_path):
    empty = tmp_path / "empty.json"
    empty.write_text('{"results": []}')
    done = subprocess.run([sys.executable, "-m", "esmm.plot", str(empty), "-o",
                           str(tmp_path / "x.png")], capture_output=True, text=True)
    assert done.returncode == 1 and "nothing to plot" in done.stderr
