"""What libesmm needs to know of an array: where its float32 data is, its
shape and row stride, which backend reads it, and how to make another like
it. NumPy arrays (and CPU torch tensors, through NumPy) go to the CPU
backend; CUDA torch tensors, CuPy arrays and anything else with
__cuda_array_interface__ go to the CUDA backend, on the caller's current
stream. Nothing is copied: an array the library cannot read in place is an
error that says what to do."""
import contextlib
import sys
from dataclasses import dataclass

import numpy as np

from . import _lib


@dataclass
class Matrix:
    ptr: int
    rows: int
    cols: int
    ld: int  # elements between the starts of consecutive rows
    kind: str  # "numpy", "torch", "cupy" or "cuda" (another __cuda_array_interface__)
    device: object  # None for host memory, else the CUDA device index
    array: object  # the caller's object
    stream: int = 0  # another CUDA array's stream, from its interface (0: none named)

    @property
    def backend(self):
        return _lib.BACKEND_CPU if self.device is None else _lib.BACKEND_CUDA


def _is_torch(x):
    # A tensor exists only once torch is imported; subclasses count too.
    torch = sys.modules.get("torch")
    return torch is not None and isinstance(x, torch.Tensor)


def _is_cupy(x):
    return type(x).__module__.split(".")[0] == "cupy"


def _row_stride(name, rows, cols, strides):
    """Row stride in elements from strides in elements; columns must be
    adjacent (any stride is fine along a dimension of length 1)."""
    row_step, col_step = strides
    if rows == 0 or cols == 0:
        return max(cols, 1)
    if cols > 1 and col_step != 1:
        raise ValueError(f"{name}: its columns are not adjacent in memory (strides {strides} "
                         "elements); esmm reads row-major rows: pass a contiguous copy")
    if rows > 1 and row_step < max(cols, 1):
        raise ValueError(f"{name}: its rows overlap or run backwards (strides {strides} "
                         "elements); pass a contiguous copy")
    return row_step if rows > 1 else max(cols, 1)


def _check_rank(name, shape):
    if len(shape) != 2:
        raise ValueError(f"{name}: esmm takes 2-D matrices, got {len(shape)}-D")


def _read_only(name):
    return ValueError(f"{name}: a read-only array; esmm writes the product there")


def describe(x, name, written=False):
    """A Matrix for x, or TypeError/ValueError naming what is wrong with it;
    `written`: esmm writes to x, so it must not be read-only."""
    if isinstance(x, np.ndarray):
        if x.dtype != np.float32:
            raise TypeError(f"{name}: dtype {x.dtype}; esmm takes float32")
        _check_rank(name, x.shape)
        if written and not x.flags.writeable:
            raise _read_only(name)
        if any(s % 4 for s in x.strides):
            raise ValueError(f"{name}: strides {x.strides} bytes are not whole floats")
        ld = _row_stride(name, *x.shape, tuple(s // 4 for s in x.strides))
        return Matrix(x.ctypes.data, *x.shape, ld, "numpy", None, x)
    if _is_torch(x):
        import torch

        if x.dtype != torch.float32:
            raise TypeError(f"{name}: dtype {x.dtype}; esmm takes torch.float32")
        if x.layout != torch.strided:
            raise TypeError(f"{name}: layout {x.layout}; esmm.matmul takes dense tensors")
        _check_rank(name, x.shape)
        ld = _row_stride(name, *x.shape, tuple(x.stride()))
        device = x.device.index if x.is_cuda else None
        if not x.is_cuda and x.device.type != "cpu":
            raise TypeError(f"{name}: a tensor on {x.device}; esmm takes CPU or CUDA tensors")
        return Matrix(x.data_ptr(), *x.shape, ld, "torch", device, x)
    interface = getattr(x, "__cuda_array_interface__", None)
    if interface is not None:
        if np.dtype(interface["typestr"]) != np.float32:
            raise TypeError(f"{name}: dtype {np.dtype(interface['typestr'])}; esmm takes float32")
        shape = tuple(interface["shape"])
        _check_rank(name, shape)
        strides = interface.get("strides")
        elements = (shape[1], 1) if strides is None else tuple(s // 4 for s in strides)
        if strides is not None and any(s % 4 for s in strides):
            raise ValueError(f"{name}: strides {strides} bytes are not whole floats")
        ld = _row_stride(name, *shape, elements)
        if written and interface["data"][1]:
            raise _read_only(name)
        if interface.get("mask") is not None:
            raise ValueError(f"{name}: a masked array; esmm reads every element")
        kind = "cupy" if _is_cupy(x) else "cuda"
        device = x.device.id if kind == "cupy" else 0
        # The interface's stream (version 3) is where the array's producer
        # queued its work: running there orders esmm's reads after it.
        return Matrix(interface["data"][0], *shape, ld, kind, device, x,
                      interface.get("stream") or 0)
    raise TypeError(f"{name}: {type(x).__name__} is not an array esmm takes (NumPy, torch, "
                    "CuPy or __cuda_array_interface__)")


def same_place(named):
    """Checks that every (name, Matrix) pair lives where the first does."""
    first_name, first = named[0]
    for name, m in named[1:]:
        if m.device != first.device:
            raise ValueError(f"{name} is on {_where(m)} but {first_name} is on {_where(first)}")


def _extent(m):
    """The bytes [first, last) that m's elements span; None when empty."""
    if m.rows == 0 or m.cols == 0:
        return None
    return m.ptr, m.ptr + ((m.rows - 1) * m.ld + m.cols) * 4


def apart(out_name, out, named):
    """Checks that out's span meets none of the (name, Matrix) pairs' spans:
    esmm reads them while it writes out (the result would be undefined, as
    in BLAS)."""
    written = _extent(out)
    for name, m in named:
        read = _extent(m)
        if (written is not None and read is not None and m.device == out.device
                and written[0] < read[1] and read[0] < written[1]):
            raise ValueError(f"{out_name} overlaps {name} in memory: esmm reads {name} while "
                             f"it writes {out_name}; pass an {out_name} of its own")


def _where(m):
    return "the host" if m.device is None else f"CUDA device {m.device}"


def empty_like(m, rows, cols):
    """A new rows x cols float32 array of the kind and device of m."""
    if m.kind == "numpy":
        return np.empty((rows, cols), dtype=np.float32)
    if m.kind == "torch":
        import torch

        return torch.empty((rows, cols), dtype=torch.float32, device=m.array.device)
    if m.kind == "cupy":
        import cupy

        with cupy.cuda.Device(m.device):
            return cupy.empty((rows, cols), dtype=cupy.float32)
    raise TypeError("out= is needed for arrays other than NumPy, torch and CuPy")


@dataclass
class Stream:
    ptr: int  # the cudaStream_t to run on
    owner: object  # the framework's stream object (None for a bare handle)

    def synchronize(self):
        """Waits for the work queued on the stream so far."""
        if self.owner is not None:
            self.owner.synchronize()


@contextlib.contextmanager
def on_device(m):
    """Makes m's device current and yields the Stream to run on: the
    framework's current stream, or for other CUDA arrays the stream their
    __cuda_array_interface__ names (0, the legacy default stream, where it
    names none)."""
    if m.kind == "torch" and m.device is not None:
        import torch

        with torch.cuda.device(m.device):
            stream = torch.cuda.current_stream(m.device)
            yield Stream(stream.cuda_stream, stream)
    elif m.kind == "cupy":
        import cupy

        with cupy.cuda.Device(m.device):
            stream = cupy.cuda.get_current_stream()
            yield Stream(stream.ptr, stream)
    else:
        stream = m.stream or 0
        yield Stream(stream, None)


def mark_written(m):
    """Tells torch that esmm wrote m's tensor (its version counter moves, as
    an in-place op's would), so that autograd and esmm.torch.Linear see it."""
    if m.kind == "torch":
        import torch

        torch.autograd.graph.increment_version(m.array)


def zero_fraction(m):
    """Fraction of m's elements that are exactly zero."""
    x = m.array
    if m.kind == "numpy":
        return float(np.count_nonzero(x == 0)) / max(x.size, 1)
    if m.kind == "torch":
        return float((x == 0).sum().item()) / max(x.numel(), 1)
    if m.kind == "cupy":
        return float((x == 0).sum().item()) / max(x.size, 1)
    raise TypeError("zero statistics need a NumPy, torch or CuPy array")
