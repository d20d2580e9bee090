"""esmm.matmul and esmm.analyze on the CPU backend (NumPy)."""
import numpy as np
import pytest
from conftest import assert_close, blocky, reference

import esmm

SHAPES = [(1, 1, 1), (7, 13, 5), (64, 64, 64), (97, 61, 131), (33, 1, 257), (1, 40, 3)]


@pytest.mark.parametrize("m,n,k", SHAPES)
@pytest.mark.parametrize("transpose_a", [False, True])
@pytest.mark.parametrize("transpose_b", [False, True])
@pytest.mark.parametrize("density", [1.0, 0.25, 0.0])
def test_matches_float64(rng, m, n, k, transpose_a, transpose_b, density):
    a = blocky(rng, *((k, m) if transpose_a else (m, k)), density)
    b = blocky(rng, *((n, k) if transpose_b else (k, n)), density)
    c = esmm.matmul(a, b, transpose_a=transpose_a, transpose_b=transpose_b)
    assert isinstance(c, np.ndarray) and c.dtype == np.float32 and c.shape == (m, n)
    assert_close(c, *reference(a, b, transpose_a=transpose_a, transpose_b=transpose_b))


def test_alpha_beta_out_and_row_strides(rng):
    big_a = blocky(rng, 40, 50, 0.5)
    a = big_a[:, 3:40]  # rows 50 floats apart
    b = blocky(rng, 37, 23, 0.5)
    out_storage = rng.standard_normal((40, 30)).astype(np.float32)
    out = out_storage[:, :23]
    before = out.copy()
    padding = out_storage[:, 23:].copy()
    result = esmm.matmul(a, b, out=out, alpha=-1.5, beta=2.0)
    assert result is out
    assert_close(out, *reference(a, b, -1.5, 2.0, before))
    assert np.array_equal(out_storage[:, 23:], padding), "out's padding changed"


def test_sparse_operands_take_the_skipping_path(rng):
    a = blocky(rng, 256, 256, 0.125)
    b = blocky(rng, 256, 256, 0.125)
    info = esmm.analyze(a, b)
    assert info.path == "sparse" and info.work_fraction < 0.5 and info.masks == "used"
    assert_close(esmm.matmul(a, b), *reference(a, b))


def test_nan_and_inf_propagate_as_in_dense(rng):
    a = blocky(rng, 64, 64, 0.25)
    b = blocky(rng, 64, 64, 0.25)
    a[0, 0] = np.nan
    b[5, 7] = np.inf
    with np.errstate(invalid="ignore"):
        want = a.astype(np.float64) @ b.astype(np.float64)
    got = esmm.matmul(a, b)
    assert np.array_equal(np.isnan(got), np.isnan(want))
    assert np.array_equal(np.isinf(got), np.isinf(want))


def test_empty_and_zero_k():
    assert esmm.matmul(np.zeros((0, 4), np.float32), np.zeros((4, 3), np.float32)).shape == (0, 3)
    c = esmm.matmul(np.zeros((2, 0), np.float32), np.zeros((0, 3), np.float32))
    assert np.array_equal(c, np.zeros((2, 3), np.float32))


def test_analyze_reports_the_pattern(rng):
    a = blocky(rng, 128, 128, 0.25)
    info = esmm.analyze(a)
    assert info.path is None
    assert 0.0 < info.slice_density_a < 0.6
    assert info.zero_fraction_a == pytest.approx(np.mean(a == 0))
    full = esmm.analyze(np.ones((64, 64), np.float32), np.ones((64, 64), np.float32))
    assert full.path == "dense" and full.slice_density_a == 1.0 and full.work_fraction == 1.0
    assert full.masks == "probe-dense"


def test_reused_pattern_gives_the_same_bits(rng):
    a = blocky(rng, 96, 80, 0.5)
    w = blocky(rng, 48, 80, 0.25)  # stored out x in, used transposed
    pattern = esmm.pattern_b(w, transpose_b=True)
    assert 0.0 < pattern.density < 1.0
    once = esmm.matmul(a, w, transpose_b=True, pattern_b=pattern)
    every = esmm.matmul(a, w, transpose_b=True)
    assert np.array_equal(once, every)
    kept = esmm.pattern_b(w, transpose_b=True, keep_copy=True)
    assert kept.density == pattern.density
    assert np.array_equal(esmm.matmul(a, w, transpose_b=True, pattern_b=kept), every)
    # A's pattern too, alone and beside B's, kept copy or not.
    a_pattern = esmm.pattern_a(a)
    a_kept = esmm.pattern_a(a, keep_copy=True)
    for pa in (a_pattern, a_kept):
        assert np.array_equal(esmm.matmul(a, w, transpose_b=True, pattern_a=pa), every)
        assert np.array_equal(
            esmm.matmul(a, w, transpose_b=True, pattern_a=pa, pattern_b=kept), every)


def test_a_pattern_must_be_a_pattern(rng):
    a, w = blocky(rng, 16, 24, 0.5), blocky(rng, 24, 8, 0.5)
    with pytest.raises(TypeError, match="pattern_a: int"):
        esmm.matmul(a, w, pattern_a=3)
    with pytest.raises(TypeError, match="pattern_b: ndarray"):
        esmm.matmul(a, w, pattern_b=w)
    # Shapes that disagree with the pattern are the library's to refuse.
    with pytest.raises(esmm.EsmmError):
        esmm.matmul(a, w, pattern_b=esmm.pattern_b(blocky(rng, 24, 16, 0.5)))


def test_patterns_are_neither_copied_nor_pickled(rng):
    # Each Pattern frees its masks once: a copy would free them twice.
    import copy
    import pickle

    pattern = esmm.pattern_b(blocky(rng, 32, 40, 0.5), keep_copy=True)
    for make in (copy.copy, copy.deepcopy, pickle.dumps):
        with pytest.raises(TypeError, match="Pattern"):
            make(pattern)
    assert 0.0 < pattern.density < 1.0  # still whole


@pytest.mark.parametrize("bad,error,words", [
    (np.ones((3, 4), np.float64), TypeError, "float32"),
    (np.ones((3, 4, 1), np.float32), ValueError, "2-D"),
    (np.ones((4, 3), np.float32).T, ValueError, "columns are not adjacent"),
    ([[1.0, 2.0]], TypeError, "list"),
])
def test_bad_arrays_are_named(bad, error, words):
    with pytest.raises(error, match=words):
        esmm.matmul(bad, np.ones((4, 2), np.float32))


def test_shape_and_out_errors():
    a, b = np.ones((3, 4), np.float32), np.ones((5, 2), np.float32)
    with pytest.raises(ValueError, match="inner sizes"):
        esmm.matmul(a, b)
    with pytest.raises(ValueError, match="out is 2 x 2"):
        esmm.matmul(a, np.ones((4, 2), np.float32), out=np.ones((2, 2), np.float32))
    with pytest.raises(ValueError, match="beta"):
        esmm.matmul(a, np.ones((4, 2), np.float32), beta=1.0)


def test_out_must_be_writable_and_apart():
    a, b = np.ones((4, 4), np.float32), np.ones((4, 4), np.float32)
    for shared in ("a", "b"):
        with pytest.raises(ValueError, match=f"overlaps {shared}"):
            esmm.matmul(a, b, out=a if shared == "a" else b)
    big = np.zeros((8, 4), np.float32)
    with pytest.raises(ValueError, match="overlaps a"):
        esmm.matmul(big[2:6], b, out=big[4:8])  # rows 4-5 are both
    esmm.matmul(big[:4], b, out=big[4:])  # apart: fine
    out = np.zeros((4, 4), np.float32)
    out.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        esmm.matmul(a, b, out=out)
    assert not out.any()


def test_library_errors_carry_the_status(rng):
    pattern = esmm.pattern_b(np.ones((8, 8), np.float32))
    with pytest.raises(esmm.EsmmError) as caught:
        esmm.matmul(np.ones((8, 16), np.float32), np.ones((16, 8), np.float32),
                    pattern_b=pattern)  # extracted from an 8 x 8 B
    assert caught.value.status_name == "ESMM_STATUS_INVALID_VALUE"
    assert "esmm_sgemm_patterns" in str(caught.value)


def test_version():
    assert esmm.library_version().count(".") == 2
