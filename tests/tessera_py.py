"""ctypes access to build/libtessera.so for the conformance tests and the benchmark.

Images are numpy arrays of shape (h, w) or (h, w, channels), uint8 or uint16; results come
back as new arrays. Colour arrays are in the channel order given (tessera does not reorder).
"""
import ctypes as C
import os

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class Image(C.Structure):
    _fields_ = [("width", C.c_int), ("height", C.c_int), ("channels", C.c_int), ("depth", C.c_int),
                ("stride", C.c_size_t), ("data", C.c_void_p), ("memory", C.c_int), ("owned", C.c_int)]


class Exec(C.Structure):
    _fields_ = [("backend", C.c_int), ("variant", C.c_char_p), ("stream", C.c_void_p), ("threads", C.c_int)]


class BoxParams(C.Structure):
    _fields_ = [("radius", C.c_int), ("radius_x", C.c_int), ("radius_y", C.c_int), ("border", C.c_int),
                ("value", C.c_int)]


class ThresholdParams(C.Structure):
    _fields_ = [("block", C.c_int), ("c", C.c_double), ("method", C.c_int), ("inverse", C.c_int),
                ("maxval", C.c_int)]


class SumsParams(C.Structure):
    _fields_ = [("axis", C.c_int)]


class ResizeParams(C.Structure):
    _fields_ = [("width", C.c_int), ("height", C.c_int)]


BORDERS = {"reflect101": 0, "replicate": 1, "reflect": 2, "constant": 3}
BACKENDS = {"auto": 0, "cpu": 1, "cuda": 2}


class TesseraError(RuntimeError):
    pass


class Tessera:
    """The library, loaded once; each method runs one operation synchronously."""

    def __init__(self, path=None):
        path = path or os.environ.get("TSR_LIB") or os.path.join(ROOT, "build", "libtessera.so")
        self.lib = C.CDLL(path)
        self.lib.tsr_last_error.restype = C.c_char_p
        self.lib.tsr_cuda_available.restype = C.c_int
        self.lib.tsr_cuda_device_name.restype = C.c_char_p
        for name in ("tsr_invert", "tsr_box", "tsr_threshold", "tsr_sums", "tsr_gray", "tsr_resize",
                     "tsr_image_wrap"):
            getattr(self.lib, name).restype = C.c_int

    def cuda_available(self):
        return bool(self.lib.tsr_cuda_available())

    def _wrap(self, a):
        if not a.flags["C_CONTIGUOUS"]:
            a = np.ascontiguousarray(a)
        if a.dtype not in (np.uint8, np.uint16, np.uint32, np.uint64):
            raise TesseraError("unsupported dtype %s" % a.dtype)
        h, w = a.shape[:2]
        cn = 1 if a.ndim == 2 else a.shape[2]
        img = Image()
        s = self.lib.tsr_image_wrap(C.byref(img), w, h, cn, a.dtype.itemsize, C.c_void_p(a.ctypes.data),
                                    C.c_size_t(a.strides[0]), 0)
        if s:
            raise TesseraError(self.lib.tsr_last_error().decode())
        return img, a

    def _exec(self, backend, variant, threads):
        return Exec(BACKENDS[backend], variant.encode() if variant else None, None, threads)

    def _call(self, fn, src, out, params, backend="cpu", variant=None, threads=0):
        si, keep = self._wrap(src)
        di, keep_out = self._wrap(out)
        ex = self._exec(backend, variant, threads)
        args = [C.byref(si), C.byref(di)] + ([C.byref(params)] if params is not None else []) + [C.byref(ex)]
        s = fn(*args)
        if s:
            raise TesseraError(self.lib.tsr_last_error().decode())
        return keep_out

    # Each call writes into 'out' when given (an array of the result's shape), else a new array.
    def invert(self, a, out=None, **kw):
        return self._call(self.lib.tsr_invert, a, np.empty_like(a) if out is None else out, None, **kw)

    def box(self, a, radius=1, border="reflect101", value=0, radius_x=-1, radius_y=-1, out=None, **kw):
        p = BoxParams(radius, radius_x, radius_y, BORDERS[border], value)
        return self._call(self.lib.tsr_box, a, np.empty_like(a) if out is None else out, p, **kw)

    def threshold(self, a, block, c, inverse=False, maxval=255, out=None, **kw):
        p = ThresholdParams(block, float(c), 0, int(inverse), maxval)
        return self._call(self.lib.tsr_threshold, a, np.empty_like(a) if out is None else out, p, **kw)

    def sums(self, a, axis="columns", **kw):
        h, w = a.shape[:2]
        cn = 1 if a.ndim == 2 else a.shape[2]
        maxv = 255 if a.dtype == np.uint8 else 65535
        n = h if axis == "columns" else w
        dt = np.uint32 if maxv * n <= 0xffffffff else np.uint64
        shape = (1, w, cn) if axis == "columns" else (h, 1, cn)
        out = self._call(self.lib.tsr_sums, a, np.empty(shape, dt), SumsParams(0 if axis == "columns" else 1), **kw)
        return out

    def gray(self, a, out=None, **kw):
        return self._call(self.lib.tsr_gray, a, np.empty(a.shape[:2], a.dtype) if out is None else out, None, **kw)

    def resize(self, a, width, height, out=None, **kw):
        shape = (height, width) + a.shape[2:]
        out = np.empty(shape, a.dtype) if out is None else out
        return self._call(self.lib.tsr_resize, a, out, ResizeParams(width, height), **kw)
