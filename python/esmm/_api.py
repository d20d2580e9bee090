"""esmm.matmul, esmm.analyze and esmm.csrmm over libesmm."""
import ctypes
from dataclasses import dataclass
from typing import Optional

import numpy as np

from . import _lib
from ._arrays import (_is_torch, apart, describe, empty_like, mark_written, on_device,
                      same_place, zero_fraction)

_PATHS = {0: "none", 1: "dense", 2: "sparse"}
# esmm_masks_source_t: whether the product used masks, or why not.
_MASKS = {0: "none", 1: "used", 2: "probe-dense", 3: "small", 4: "k-too-long", 5: "narrow"}


def _op(transpose):
    return _lib.OP_T if transpose else _lib.OP_N


def _handle_for(m, stream):
    """This thread's handle for m's backend, running on `stream` (CUDA; a
    Stream from on_device)."""
    h = _lib.handle(m.backend, m.device)
    if m.backend == _lib.BACKEND_CUDA:
        _lib.call("esmm_set_stream", h.value, stream.ptr)
        h.stream = stream.owner
    return h.value


def _output(out, like, rows, cols, beta):
    if out is None:
        if beta != 0.0:
            raise ValueError("beta != 0 scales what out holds: pass out=")
        out = empty_like(like, rows, cols)
    return out, describe(out, "out", written=True)


def _product_shape(A, B, transpose_a, transpose_b):
    m, k = (A.cols, A.rows) if transpose_a else (A.rows, A.cols)
    kb, n = (B.cols, B.rows) if transpose_b else (B.rows, B.cols)
    if k != kb:
        raise ValueError(f"op(a) is {m} x {k} but op(b) is {kb} x {n}: inner sizes differ")
    return m, n, k


def matmul(a, b, *, out=None, alpha=1.0, beta=0.0, transpose_a=False, transpose_b=False,
           pattern_a=None, pattern_b=None):
    """out = alpha * op(a) @ op(b) + beta * out, skipping the work zeros make
    unnecessary; op(x) is x or x.T (transpose_a / transpose_b).

    a, b (and out) are 2-D float32 arrays whose rows are contiguous: NumPy
    arrays or CPU torch tensors run on the CPU backend, CUDA torch tensors and
    CuPy arrays on the GPU, on the current stream, asynchronously as the
    framework's own operations do. Returns out (a new array of a's kind when
    out is None). Nothing is copied; an array that would need a copy raises
    ValueError, a wrong dtype TypeError. pattern_a, pattern_b: Patterns of
    op(a) and op(b) from esmm.pattern_a and esmm.pattern_b, reused instead of
    extracting the operand's again. out must not overlap a or b or be
    read-only (ValueError)."""
    A, B = describe(a, "a"), describe(b, "b")
    for name, pattern in (("pattern_a", pattern_a), ("pattern_b", pattern_b)):
        if pattern is not None and not isinstance(pattern, Pattern):
            raise TypeError(f"{name}: {type(pattern).__name__}; pass a Pattern from "
                            f"esmm.{name}")
    m, n, k = _product_shape(A, B, transpose_a, transpose_b)
    out, C = _output(out, A, m, n, beta)
    if (C.rows, C.cols) != (m, n):
        raise ValueError(f"out is {C.rows} x {C.cols}; the product is {m} x {n}")
    apart("out", C, [("a", A), ("b", B)])
    same_place([("a", A), ("b", B), ("out", C)])
    with on_device(A) as stream:
        h = _handle_for(A, stream)
        alpha_c, beta_c = _lib.scalar(alpha), _lib.scalar(beta)
        if pattern_a is None and pattern_b is None:
            _lib.call("esmm_sgemm", h, _op(transpose_a), _op(transpose_b), m, n, k, alpha_c,
                      A.ptr, A.ld, B.ptr, B.ld, beta_c, C.ptr, C.ld)
        else:
            _lib.call("esmm_sgemm_patterns", h, _op(transpose_a), _op(transpose_b), m, n, k,
                      alpha_c, A.ptr, A.ld, pattern_a and pattern_a.value, B.ptr, B.ld,
                      pattern_b and pattern_b.value, beta_c, C.ptr, C.ld)
    mark_written(C)
    return out


class Pattern:
    """The zero pattern of a static operand, extracted once (esmm_pattern_*).
    The caller promises the operand does not change while the pattern is
    used. It owns the library's pattern (and kept copy), so it is neither
    copied nor pickled: extract another instead."""

    def __init__(self, value, backend, device):
        self.value = value
        self.backend, self.device = backend, device

    def __copy__(self):
        raise TypeError("an esmm Pattern owns its masks and cannot be copied; extract another")

    def __deepcopy__(self, memo):
        return self.__copy__()

    def __reduce__(self):
        raise TypeError("an esmm Pattern lives in libesmm's memory and cannot be pickled")

    @property
    def density(self):
        """Fraction of the operand's (strip, k) slices that hold a nonzero."""
        d = ctypes.c_double()
        _lib.call("esmm_pattern_density", self.value, ctypes.byref(d))
        return d.value

    def __del__(self):
        if getattr(self, "value", None):
            _lib.lib().esmm_pattern_destroy(self.value)


def _extract(which, x, name, transpose, keep_copy):
    X = describe(x, name)
    # The shape of op(x): m x k for A, k x n for B.
    sizes = (X.cols, X.rows) if transpose else (X.rows, X.cols)
    value = ctypes.c_void_p()
    with on_device(X) as stream:
        handle = _handle_for(X, stream)
        _lib.call(f"esmm_pattern_extract_{which}", handle, _op(transpose), *sizes, X.ptr, X.ld,
                  ctypes.byref(value))
        pattern = Pattern(value, X.backend, X.device)
        if keep_copy:
            _lib.call("esmm_pattern_keep_copy", handle, value, X.ptr, X.ld)
        # Waited for, so that the pattern is whole wherever it is used next:
        # on another stream, or another thread's handle.
        stream.synchronize()
    return pattern


def pattern_a(a, *, transpose_a=False, keep_copy=False):
    """Pattern of op(a), to pass to esmm.matmul(pattern_a=...) while a is
    unchanged. For torch tensors and CuPy arrays the call waits for the
    extraction, so the pattern may be used on any stream or thread. keep_copy:
    the pattern also keeps a copy of a laid out along m where a is stored
    along k (transpose_a False), which products given the pattern read
    instead (esmm_pattern_keep_copy; as much memory again as a)."""
    return _extract("a", a, "a", transpose_a, keep_copy)


def pattern_b(b, *, transpose_b=False, keep_copy=False):
    """Pattern of op(b), to pass to esmm.matmul(pattern_b=...) while b is
    unchanged (for example a layer's weights); as pattern_a, it is whole
    when the call returns. keep_copy: the pattern also
    keeps a copy of b laid out along n where b is stored along k
    (transpose_b True, as a layer's weights are), which products given the
    pattern read instead (esmm_pattern_keep_copy; as much memory again as
    b)."""
    return _extract("b", b, "b", transpose_b, keep_copy)


@dataclass
class Analysis:
    """What esmm sees in op(a) (and op(b)) and what esmm.matmul does with
    them. Densities are fractions of (32-wide strip, k) slices holding a
    nonzero: a strip's k is skipped where it holds none."""
    zero_fraction_a: float
    slice_density_a: float
    zero_fraction_b: Optional[float] = None
    slice_density_b: Optional[float] = None
    path: Optional[str] = None  # "dense", "sparse" or "none"
    kernel: Optional[str] = None
    work_fraction: Optional[float] = None  # of the dense work that ran
    # "used", or why no masks were: "probe-dense", "small" (under
    # esmm_set_min_planned_work's size on the GPU), "narrow" (C at most 32
    # wide or tall, or at most 64 under 8 times that size, on the GPU),
    # "k-too-long" or "none"
    masks: Optional[str] = None


def analyze(a, b=None, *, transpose_a=False, transpose_b=False):
    """Zero statistics of op(a) and, with b, of op(b) and the path, kernel
    and fraction of the work esmm.matmul(a, b) takes (it runs that call once
    into scratch memory, without b's pattern: a product given a pattern is
    always planned, where esmm.matmul alone may not plan it)."""
    A = describe(a, "a")
    result = Analysis(zero_fraction(A), pattern_a(a, transpose_a=transpose_a).density)
    if b is None:
        return result
    B = describe(b, "b")
    result.zero_fraction_b = zero_fraction(B)
    b_pattern = pattern_b(b, transpose_b=transpose_b)
    result.slice_density_b = b_pattern.density
    m, n, _ = _product_shape(A, B, transpose_a, transpose_b)
    matmul(a, b, out=empty_like(A, m, n), transpose_a=transpose_a, transpose_b=transpose_b)
    info = _lib.info_t()
    with on_device(A) as stream:
        _lib.call("esmm_get_last_info", _handle_for(A, stream), ctypes.byref(info))
    result.path = _PATHS.get(info.path, str(info.path))
    result.kernel = info.kernel.decode() if info.kernel else None
    result.work_fraction = info.work_fraction
    result.masks = _MASKS.get(info.masks, str(info.masks))
    return result


def _csr_arrays(w):
    """(rows, cols, nnz, row_ptr, col_idx, values, device, keep) of a SciPy
    CSR matrix (host) or a torch sparse CSR tensor; int64 indices are
    converted to int32 (a copy, kept in `keep`), the values must already be
    float32."""
    if _is_torch(w):
        import torch

        if w.layout != torch.sparse_csr:
            raise TypeError(f"w: layout {w.layout}; esmm.csrmm takes torch.sparse_csr")
        if w.dim() != 2:
            raise ValueError(f"w: esmm takes a 2-D CSR matrix, got {w.dim()}-D")
        values = w.values()
        if values.dtype != torch.float32:
            raise TypeError(f"w: dtype {values.dtype}; esmm takes torch.float32 weights")
        row_ptr = w.crow_indices().to(torch.int32).contiguous()
        col_idx = w.col_indices().to(torch.int32).contiguous()
        values = values.contiguous()
        keep = (row_ptr, col_idx, values)
        return (*w.shape, values.numel(), row_ptr.data_ptr(), col_idx.data_ptr(),
                values.data_ptr(), w.device.index if w.is_cuda else None, keep)
    try:
        import scipy.sparse
    except ImportError:
        scipy = None
    if scipy is None or not scipy.sparse.issparse(w) or w.format != "csr":
        raise TypeError(f"w: {type(w).__name__}; esmm.csrmm takes a scipy.sparse CSR matrix "
                        "(CPU) or a torch.sparse_csr tensor")
    if w.dtype != np.float32:
        raise TypeError(f"w: dtype {w.dtype}; esmm takes float32 weights (w.astype(np.float32))")
    if len(w.shape) != 2:
        raise ValueError(f"w: esmm takes a 2-D CSR matrix, got {len(w.shape)}-D")
    if w.nnz > np.iinfo(np.int32).max:
        raise ValueError("w: more than 2^31 - 1 stored entries")
    _check_csr(w)
    row_ptr = np.ascontiguousarray(w.indptr, dtype=np.int32)
    col_idx = np.ascontiguousarray(w.indices, dtype=np.int32)
    values = np.ascontiguousarray(w.data)
    keep = (row_ptr, col_idx, values)
    return (*w.shape, w.nnz, row_ptr.ctypes.data, col_idx.ctypes.data, values.ctypes.data, None,
            keep)


def _check_csr(w):
    """SciPy does not check a CSR's indices when it makes one: arrays that
    point outside w (or past int32, which libesmm's indices are) raise here,
    before they are narrowed and read."""
    rows, cols = w.shape
    indptr, indices = w.indptr, w.indices
    if (len(indptr) != rows + 1 or indptr[0] != 0
            or indptr[-1] > min(len(indices), len(w.data)) or np.any(np.diff(indptr) < 0)):
        raise ValueError("w: invalid CSR: row pointers must run from 0 up to at most the "
                         "stored entries, never down (w.check_format(full_check=True) says more)")
    if w.nnz and (indices[:w.nnz].min() < 0 or indices[:w.nnz].max() >= cols):
        raise ValueError(f"w: invalid CSR: column indices must lie in [0, {cols})")


def _as_column(x, name):
    """A contiguous 1-D array as a k x 1 matrix view."""
    contiguous = x.is_contiguous() if _is_torch(x) else x.flags.c_contiguous
    if not contiguous:
        raise ValueError(f"{name}: a vector must be contiguous")
    return x.reshape(-1, 1)


def csrmm(w, b, *, out=None, alpha=1.0, beta=0.0, transpose_w=False):
    """out = alpha * op(w) @ b + beta * out with w sparse in CSR: a SciPy CSR
    matrix with NumPy b (CPU backend) or a torch.sparse_csr CUDA tensor with
    CUDA torch b. A 1-D b is a vector (esmm_scsrmv) and gives a 1-D result.

    Gathers give the same bits on every run; op(w) = w.T (transpose_w) on
    the GPU scatters with atomics, in an order that may vary from run to
    run. A SciPy w's indices are checked (ValueError where they point
    outside w); a torch w is taken as valid CSR, which torch checks where
    it is made with check_invariants=True. out must not overlap b or be
    read-only (ValueError)."""
    rows, cols, nnz, row_ptr, col_idx, values, w_device, keep = _csr_arrays(w)
    m, k = (cols, rows) if transpose_w else (rows, cols)
    vector = getattr(b, "ndim", 2) == 1
    if vector:
        if out is None and beta != 0.0:
            raise ValueError("beta != 0 scales what out holds: pass out=")
        B = describe(_as_column(b, "b"), "b")
        if out is None:
            out = empty_like(B, m, 1).reshape(-1)
        if getattr(out, "ndim", None) != 1:
            raise ValueError("out: a 1-D b gives a 1-D out")
        C = describe(_as_column(out, "out"), "out", written=True)
    else:
        B = describe(b, "b")
        out, C = _output(out, B, m, B.cols, beta)
    if B.rows != k:
        raise ValueError(f"op(w) is {m} x {k} but b has {B.rows} rows")
    if (C.rows, C.cols) != (m, B.cols):
        raise ValueError(f"out is {C.rows} x {C.cols}; the product is {m} x {B.cols}")
    same_place([("b", B), ("out", C)])
    apart("out", C, [("b", B)])
    if w_device != B.device:
        raise ValueError(f"w is on {'the host' if w_device is None else f'CUDA device {w_device}'}"
                         f" but b is on {'the host' if B.device is None else f'CUDA device {B.device}'}")
    with on_device(B) as stream:
        h = _handle_for(B, stream)
        descriptor = ctypes.c_void_p()
        _lib.call("esmm_csr_create", h, rows, cols, nnz, row_ptr, col_idx, values, 0.0,
                  ctypes.byref(descriptor))
        try:
            if vector:
                _lib.call("esmm_scsrmv", h, _op(transpose_w), descriptor, _lib.scalar(alpha),
                          B.ptr, _lib.scalar(beta), C.ptr)
            else:
                _lib.call("esmm_scsrmm", h, _op(transpose_w), descriptor, B.cols,
                          _lib.scalar(alpha), B.ptr, B.ld, _lib.scalar(beta), C.ptr, C.ld)
        finally:
            _lib.lib().esmm_csr_destroy(descriptor)
    mark_written(C)
    # The int32 index copies in `keep` were alive until the product was
    # queued; on CUDA the framework's allocator orders their reuse after it.
    del keep
    return out
