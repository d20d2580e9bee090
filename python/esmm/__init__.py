"""esmm: FP32 matrix products that skip the work zeros make unnecessary.

    import esmm
    c = esmm.matmul(a, b)        # NumPy: CPU backend; CUDA torch / CuPy: the GPU
    esmm.analyze(a, b)           # zero statistics and the path esmm takes
    y = esmm.csrmm(w, x)         # SciPy CSR or torch.sparse_csr times dense

esmm.torch.Linear is a forward-only drop-in for torch.nn.Linear. Errors from
the C library raise esmm.EsmmError; bad arrays raise TypeError/ValueError.
"""
from importlib import metadata as _metadata

from ._api import Analysis, Pattern, analyze, csrmm, matmul, pattern_a, pattern_b
from ._lib import EsmmError
from ._lib import version as library_version

try:
    __version__ = _metadata.version("esmm")
except _metadata.PackageNotFoundError:  # imported from the source tree
    __version__ = "unknown"

__all__ = ["Analysis", "EsmmError", "Pattern", "analyze", "csrmm", "library_version", "matmul",
           "pattern_a", "pattern_b"]
