import numpy as np
import pytest


@pytest.fixture
def rng():
    return np.random.default_rng(20261122)


def blocky(rng, rows, cols, density, block=(32, 8)):
    """float32 rows x cols with whole blocks zeroed (kept with probability
    density) and random nonzero values elsewhere."""
    x = rng.uniform(0.5, 1.5, size=(rows, cols)).astype(np.float32)
    x *= np.where(rng.random((rows, cols)) < 0.5, -1, 1).astype(np.float32)
    br, bc = block
    keep = rng.random(((rows + br - 1) // br, (cols + bc - 1) // bc)) < density
    mask = np.kron(keep, np.ones(block, dtype=bool))[:rows, :cols]
    return np.where(mask, x, np.float32(0))


def reference(a, b, alpha=1.0, beta=0.0, c=None, transpose_a=False, transpose_b=False):
    """float64 alpha * op(a) @ op(b) + beta * c and the scale of its terms."""
    a64 = a.astype(np.float64).T if transpose_a else a.astype(np.float64)
    b64 = b.astype(np.float64).T if transpose_b else b.astype(np.float64)
    want = alpha * (a64 @ b64)
    scale = abs(alpha) * (np.abs(a64) @ np.abs(b64))
    if beta != 0.0:
        want += beta * c.astype(np.float64)
        scale += abs(beta) * np.abs(c.astype(np.float64))
    return want, scale


def assert_close(got, want, scale, tolerance=1e-5):
    got = np.asarray(got, dtype=np.float64)
    assert got.shape == want.shape
    error = np.abs(got - want)
    bad = error > tolerance * np.maximum(scale, np.finfo(np.float32).tiny)
    assert not bad.any(), f"{bad.sum()} elements off, worst {error.max()}"
