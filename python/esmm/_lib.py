"""The C library through ctypes: loading it, its prototypes, its errors and
one handle per (thread, backend, device)."""
import ctypes
import glob
import os
import threading

SUCCESS = 0
BACKEND_CPU, BACKEND_CUDA = 1, 2
OP_N, OP_T = 0, 1

_STATUS_NAMES = {
    0: "ESMM_STATUS_SUCCESS",
    1: "ESMM_STATUS_NOT_INITIALIZED",
    2: "ESMM_STATUS_INVALID_VALUE",
    3: "ESMM_STATUS_ALLOC_FAILED",
    4: "ESMM_STATUS_NO_DEVICE",
    5: "ESMM_STATUS_NOT_SUPPORTED",
    6: "ESMM_STATUS_EXECUTION_FAILED",
    7: "ESMM_STATUS_INTERNAL_ERROR",
}


class EsmmError(RuntimeError):
    """A call into libesmm returned a status other than success.

    ``status`` is the numeric esmm_status_t, ``status_name`` its C name; the
    message carries esmm_status_string."""

    def __init__(self, function, status, text):
        self.function = function
        self.status = status
        self.status_name = _STATUS_NAMES.get(status, str(status))
        super().__init__(f"{function}: {text} ({self.status_name})")


class info_t(ctypes.Structure):
    _fields_ = [
        ("path", ctypes.c_int),
        ("kernel", ctypes.c_char_p),
        ("density_a", ctypes.c_double),
        ("density_b", ctypes.c_double),
        ("work_fraction", ctypes.c_double),
        ("extraction_ms", ctypes.c_double),
        ("form", ctypes.c_char_p),
        ("masks", ctypes.c_int),
    ]


_p = ctypes.c_void_p
_i64 = ctypes.c_int64
_fp = ctypes.POINTER(ctypes.c_float)
_PROTOTYPES = {
    "esmm_version": (ctypes.c_char_p, []),
    "esmm_status_string": (ctypes.c_char_p, [ctypes.c_int]),
    "esmm_create": (ctypes.c_int, [ctypes.POINTER(_p), ctypes.c_int]),
    "esmm_destroy": (ctypes.c_int, [_p]),
    "esmm_set_stream": (ctypes.c_int, [_p, _p]),
    "esmm_sgemm": (ctypes.c_int, [_p, ctypes.c_int, ctypes.c_int, _i64, _i64, _i64, _fp,
                                  _p, _i64, _p, _i64, _fp, _p, _i64]),
    "esmm_sgemm_patterns": (ctypes.c_int, [_p, ctypes.c_int, ctypes.c_int, _i64, _i64, _i64,
                                           _fp, _p, _i64, _p, _p, _i64, _p, _fp, _p, _i64]),
    "esmm_pattern_extract_a": (ctypes.c_int, [_p, ctypes.c_int, _i64, _i64, _p, _i64,
                                              ctypes.POINTER(_p)]),
    "esmm_pattern_extract_b": (ctypes.c_int, [_p, ctypes.c_int, _i64, _i64, _p, _i64,
                                              ctypes.POINTER(_p)]),
    "esmm_pattern_density": (ctypes.c_int, [_p, ctypes.POINTER(ctypes.c_double)]),
    "esmm_pattern_destroy": (ctypes.c_int, [_p]),
    "esmm_pattern_keep_copy": (ctypes.c_int, [_p, _p, _p, _i64]),
    "esmm_get_last_info": (ctypes.c_int, [_p, ctypes.POINTER(info_t)]),
    "esmm_csr_create": (ctypes.c_int, [_p, _i64, _i64, _i64, _p, _p, _p, ctypes.c_float,
                                       ctypes.POINTER(_p)]),
    "esmm_csr_destroy": (ctypes.c_int, [_p]),
    "esmm_scsrmm": (ctypes.c_int, [_p, ctypes.c_int, _p, _i64, _fp, _p, _i64, _fp, _p, _i64]),
    "esmm_scsrmv": (ctypes.c_int, [_p, ctypes.c_int, _p, _fp, _p, _fp, _p]),
}

_lock = threading.Lock()
_library = None


def _library_path():
    """ESMM_LIBRARY names a libesmm to use (for example a CMake build's);
    otherwise the one installed inside this package."""
    override = os.environ.get("ESMM_LIBRARY")
    if override:
        return override
    here = os.path.dirname(os.path.abspath(__file__))
    found = sorted(glob.glob(os.path.join(here, "libesmm.so*")))
    if not found:
        raise ImportError(f"libesmm is not in {here}: install esmm with pip, or set "
                          "ESMM_LIBRARY to the path of a libesmm.so")
    return found[0]


def lib():
    """The loaded library, loaded on first use (so that esmm.plot works
    without it)."""
    global _library
    with _lock:
        if _library is None:
            loaded = ctypes.CDLL(_library_path())
            for name, (restype, argtypes) in _PROTOTYPES.items():
                function = getattr(loaded, name)
                function.restype = restype
                function.argtypes = argtypes
            _library = loaded
    return _library


def status_text(status):
    return lib().esmm_status_string(status).decode()


def check(function, status):
    if status != SUCCESS:
        raise EsmmError(function, status, status_text(status))


def call(function, *args):
    """Calls libesmm's `function` and raises EsmmError unless it succeeded."""
    check(function, getattr(lib(), function)(*args))


def version():
    return lib().esmm_version().decode()


class _Handle:
    def __init__(self, backend):
        self.value = None  # set only once esmm_create succeeded
        # The framework's object of the stream the handle is bound to: esmm
        # orders the handle's next stream after this one, so it must outlive
        # the binding (a CuPy stream is destroyed with its object).
        self.stream = None
        handle = _p()
        call("esmm_create", ctypes.byref(handle), backend)
        self.value = handle

    def __del__(self):
        if getattr(self, "value", None) and _library is not None:
            _library.esmm_destroy(self.value)


_handles = threading.local()


def handle(backend, device=None):
    """This thread's _Handle for the backend (and CUDA device, which must be
    current when it is first asked for): a handle serves one thread at a
    time."""
    cache = getattr(_handles, "by_key", None)
    if cache is None:
        cache = _handles.by_key = {}
    key = (backend, device)
    if key not in cache:
        cache[key] = _Handle(backend)
    return cache[key]


def scalar(value):
    return ctypes.byref(ctypes.c_float(value))
