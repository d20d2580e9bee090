"""esmm.csrmm with SciPy CSR matrices on the CPU backend."""
import numpy as np
import pytest

import esmm

scipy_sparse = pytest.importorskip("scipy.sparse")


def random_csr(rng, rows, cols, per_row):
    dense = np.zeros((rows, cols), np.float32)
    for r in range(rows):
        columns = rng.choice(cols, size=min(per_row, cols), replace=False)
        dense[r, columns] = rng.uniform(-1, 1, size=columns.size)
    return scipy_sparse.csr_matrix(dense), dense


def sparse_b(rng, rows, cols, density):
    b = rng.uniform(-1, 1, size=(rows, cols)).astype(np.float32)
    return np.where(rng.random((rows, cols)) < density, b, np.float32(0))


@pytest.mark.parametrize("transpose", [False, True])
@pytest.mark.parametrize("n", [2, 7, 128])
def test_csrmm_matches_float64(rng, transpose, n):
    w, dense = random_csr(rng, 50, 37, 9)
    op = dense.T if transpose else dense
    b = sparse_b(rng, op.shape[1], n, 0.1)
    c0 = rng.standard_normal((op.shape[0], n)).astype(np.float32)
    out = c0.copy()
    esmm.csrmm(w, b, out=out, alpha=0.5, beta=-2.0, transpose_w=transpose)
    want = 0.5 * (op.astype(np.float64) @ b) - 2.0 * c0
    assert np.allclose(out, want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("transpose", [False, True])
def test_csrmv_returns_a_vector(rng, transpose):
    w, dense = random_csr(rng, 40, 60, 12)
    op = dense.T if transpose else dense
    x = sparse_b(rng, op.shape[1], 1, 0.1).reshape(-1)
    y = esmm.csrmm(w, x, transpose_w=transpose)
    assert y.shape == (op.shape[0],)
    assert np.allclose(y, op.astype(np.float64) @ x, rtol=1e-5, atol=1e-6)


def test_empty_rows_and_no_entries(rng):
    w = scipy_sparse.csr_matrix((5, 4), dtype=np.float32)
    out = esmm.csrmm(w, np.ones((4, 3), np.float32))
    assert np.array_equal(out, np.zeros((5, 3), np.float32))


def test_bad_inputs_are_named(rng):
    w, _ = random_csr(rng, 6, 5, 2)
    with pytest.raises(TypeError, match="float32 weights"):
        esmm.csrmm(w.astype(np.float64), np.ones((5, 2), np.float32))
    with pytest.raises(TypeError, match="CSR"):
        esmm.csrmm(w.tocoo(), np.ones((5, 2), np.float32))
    with pytest.raises(ValueError, match="rows"):
        esmm.csrmm(w, np.ones((4, 2), np.float32))
    with pytest.raises(ValueError, match="contiguous"):
        esmm.csrmm(w, np.ones(10, np.float32)[::2])


def test_invalid_csr_is_refused():
    """SciPy does not check indices when it makes a CSR: esmm does, before
    narrowing them to int32 and reading through them."""
    b = np.arange(8, dtype=np.float32).reshape(4, 2)
    for column in (-1, 4, 2**32 + 1):
        w = scipy_sparse.csr_matrix((np.array([5], np.float32), np.array([column]),
                                     np.array([0, 1])), shape=(1, 4))
        with pytest.raises(ValueError, match="column indices"):
            esmm.csrmm(w, b)
        with pytest.raises(ValueError, match="column indices"):
            esmm.csrmm(w, b[:1], transpose_w=True)
    w = scipy_sparse.csr_matrix((np.array([5, 6], np.float32), np.array([0, 1]),
                                 np.array([0, 2, 1])), shape=(2, 4))
    with pytest.raises(ValueError, match="row pointers"):
        esmm.csrmm(w, b)
    w = scipy_sparse.csr_matrix((np.array([5], np.float32), np.array([0]), np.array([0, 1])),
                                shape=(1, 4))
    w.indptr = np.array([0, 3])  # past the one stored entry: read past the arrays
    with pytest.raises(ValueError, match="row pointers"):
        esmm.csrmm(w, b)
    if hasattr(scipy_sparse, "csr_array"):
        try:
            vector = scipy_sparse.csr_array(np.array([1, 0, 2], np.float32))
        except ValueError:  # SciPy releases without 1-D sparse arrays
            vector = None
        if vector is not None and len(vector.shape) == 1:
            with pytest.raises(ValueError, match="2-D"):
                esmm.csrmm(vector, np.ones((3, 2), np.float32))


def test_out_must_be_writable_and_apart(rng):
    w = scipy_sparse.csr_matrix(np.array([[0, 1], [1, 0]], np.float32))
    x = np.array([1, 2], np.float32)
    with pytest.raises(ValueError, match="overlaps b"):
        esmm.csrmm(w, x, out=x)
    b = np.array([[1, 1], [2, 2]], np.float32)
    with pytest.raises(ValueError, match="overlaps b"):
        esmm.csrmm(w, b, out=b, transpose_w=True)
    y = np.zeros(2, np.float32)
    y.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        esmm.csrmm(w, x, out=y)
    assert not y.any()
