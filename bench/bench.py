"""CPU benchmark: every operation and CPU variant of tessera beside OpenCV, in the same run, on
the same image and the same number of threads.

For each row: median time, GB/s (bytes read + written), percent of the measured copy bandwidth
(numpy copyto of the same image), OpenCV's median, and the ratio OpenCV / tessera (> 1: tessera
is faster). Usage: /usr/bin/python3 bench/bench.py [--size N] [--reps N] [--threads N]
"""
import argparse
import ctypes as C
import os
import statistics
import sys
import time

import cv2
import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests"))
from tessera_py import Tessera  # noqa: E402


class Variant(C.Structure):
    _fields_ = [("name", C.c_char_p), ("backend", C.c_int), ("help", C.c_char_p), ("run", C.c_void_p),
                ("supports", C.c_void_p), ("is_default", C.c_int), ("is_reference", C.c_int)]


class Op(C.Structure):
    _fields_ = [("name", C.c_char_p), ("summary", C.c_char_p), ("help", C.c_char_p), ("params", C.c_void_p),
                ("nparams", C.c_int), ("params_size", C.c_size_t), ("check", C.c_void_p),
                ("variants", C.POINTER(C.POINTER(Variant)))]


def variants_of(lib, opname, backend=1):
    """Names of the op's variants on a backend (1 CPU, 2 CUDA), from the library's registry."""
    lib.tsr_op_find.restype = C.POINTER(Op)
    op = lib.tsr_op_find(opname.encode()).contents
    out, i = [], 0
    while op.variants[i]:
        v = op.variants[i].contents
        if v.backend == backend:
            out.append((v.name.decode(), bool(v.is_reference), bool(v.is_default)))
        i += 1
    return out


def median_ms(fn, reps):
    fn()   # warm up: page faults, thread start-up
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(times)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", type=int, default=8192)
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument("--threads", type=int, default=os.cpu_count())
    args = ap.parse_args()
    n, reps = args.size, args.reps
    T = Tessera()
    cv2.setNumThreads(args.threads)
    rng = np.random.default_rng(7)
    gray = rng.integers(0, 256, (n, n), dtype=np.uint8)
    half = n // 2
    rgb = rng.integers(0, 256, (half, half, 3), dtype=np.uint8)
    graysmall = np.ascontiguousarray(rgb[..., 1])
    tmp = np.empty_like(gray)
    copy_ms = median_ms(lambda: np.copyto(tmp, gray), reps)
    copy_gbs = 2 * gray.nbytes / copy_ms / 1e6

    # (op, params text, bytes moved, tessera call, OpenCV call or None)
    out8 = np.empty_like(gray)
    # Outputs are allocated once for both libraries, so that page faults are timed by neither.
    gout = np.empty((half, half), np.uint8)
    rout = np.empty((half, half), np.uint8)
    sout = np.empty((192, 192), np.uint8)
    cases = [("invert", "", 2 * gray.nbytes, lambda v: T.invert(gray, out=out8, variant=v, threads=args.threads),
              lambda: cv2.bitwise_not(gray, dst=out8))]
    for r in (1, 3, 7, 15, 64):
        cases.append(("box", "r=%d" % r, 2 * gray.nbytes,
                      lambda v, r=r: T.box(gray, r, out=out8, variant=v, threads=args.threads),
                      lambda r=r: cv2.blur(gray, (2 * r + 1, 2 * r + 1), dst=out8)))
    for b in (3, 15, 31):
        cases.append(("threshold", "block=%d C=5" % b, 2 * gray.nbytes,
                      lambda v, b=b: T.threshold(gray, b, 5, out=out8, variant=v, threads=args.threads),
                      lambda b=b: cv2.adaptiveThreshold(gray, 255, cv2.ADAPTIVE_THRESH_MEAN_C, cv2.THRESH_BINARY,
                                                        b, 5, dst=out8)))
    cases.append(("sums", "columns", gray.nbytes, lambda v: T.sums(gray, "columns", variant=v, threads=args.threads),
                  lambda: cv2.reduce(gray, 0, cv2.REDUCE_SUM, dtype=cv2.CV_32S)))
    cases.append(("sums", "rows", gray.nbytes, lambda v: T.sums(gray, "rows", variant=v, threads=args.threads),
                  lambda: cv2.reduce(gray, 1, cv2.REDUCE_SUM, dtype=cv2.CV_32S)))
    cases.append(("gray", "%d^2 RGB" % half, rgb.nbytes * 4 // 3, lambda v: T.gray(rgb, out=gout, variant=v, threads=args.threads),
                  lambda: cv2.cvtColor(rgb, cv2.COLOR_RGB2GRAY, dst=gout)))
    cases.append(("resize", "%d^2 -> %d^2" % (n, half), gray.nbytes * 5 // 4,
                  lambda v: T.resize(gray, half, half, out=rout, variant=v, threads=args.threads),
                  lambda: cv2.resize(gray, (half, half), dst=rout, interpolation=cv2.INTER_AREA)))
    cases.append(("resize", "%d^2 -> 192^2" % half, graysmall.nbytes,
                  lambda v: T.resize(graysmall, 192, 192, out=sout, variant=v, threads=args.threads),
                  lambda: cv2.resize(graysmall, (192, 192), dst=sout, interpolation=cv2.INTER_AREA)))
    # Colour images (half the side, 8-bit RGB and RGBA): the interleaved-channel paths.
    rgba = rng.integers(0, 256, (half, half, 4), dtype=np.uint8)
    cout3, cout4 = np.empty_like(rgb), np.empty_like(rgba)
    q = half // 2
    qout3, qout4 = np.empty((q, q, 3), np.uint8), np.empty((q, q, 4), np.uint8)
    f = half * 2 // 3
    fout4 = np.empty((f, f, 4), np.uint8)
    for r in (1, 7):
        cases.append(("box", "RGB r=%d" % r, 2 * rgb.nbytes,
                      lambda v, r=r: T.box(rgb, r, out=cout3, variant=v, threads=args.threads),
                      lambda r=r: cv2.blur(rgb, (2 * r + 1, 2 * r + 1), dst=cout3)))
    cases.append(("box", "RGBA r=7", 2 * rgba.nbytes, lambda v: T.box(rgba, 7, out=cout4, variant=v, threads=args.threads),
                  lambda: cv2.blur(rgba, (15, 15), dst=cout4)))
    cases.append(("sums", "RGB rows", rgb.nbytes, lambda v: T.sums(rgb, "rows", variant=v, threads=args.threads),
                  lambda: cv2.reduce(rgb, 1, cv2.REDUCE_SUM, dtype=cv2.CV_32S)))
    cases.append(("gray", "%d^2 RGBA" % half, rgba.nbytes * 5 // 4,
                  lambda v: T.gray(rgba, out=gout, variant=v, threads=args.threads),
                  lambda: cv2.cvtColor(rgba, cv2.COLOR_RGBA2GRAY, dst=gout)))
    cases.append(("resize", "RGB -> %d^2" % q, rgb.nbytes * 5 // 4,
                  lambda v: T.resize(rgb, q, q, out=qout3, variant=v, threads=args.threads),
                  lambda: cv2.resize(rgb, (q, q), dst=qout3, interpolation=cv2.INTER_AREA)))
    cases.append(("resize", "RGBA -> %d^2" % q, rgba.nbytes * 5 // 4,
                  lambda v: T.resize(rgba, q, q, out=qout4, variant=v, threads=args.threads),
                  lambda: cv2.resize(rgba, (q, q), dst=qout4, interpolation=cv2.INTER_AREA)))
    cases.append(("resize", "RGBA -> %d^2" % f, rgba.nbytes + fout4.nbytes,
                  lambda v: T.resize(rgba, f, f, out=fout4, variant=v, threads=args.threads),
                  lambda: cv2.resize(rgba, (f, f), dst=fout4, interpolation=cv2.INTER_AREA)))

    # 16-bit RGB (the same side): gray and the 2x2 shrink
    rgb16 = rng.integers(0, 65536, (half, half, 3), dtype=np.uint16)
    gout16, qout16 = np.empty((half, half), np.uint16), np.empty((q, q, 3), np.uint16)
    cases.append(("gray", "16-bit RGB", rgb16.nbytes * 4 // 3,
                  lambda v: T.gray(rgb16, out=gout16, variant=v, threads=args.threads),
                  lambda: cv2.cvtColor(rgb16, cv2.COLOR_RGB2GRAY, dst=gout16)))
    cases.append(("resize", "16-bit RGB 2x", rgb16.nbytes * 5 // 4,
                  lambda v: T.resize(rgb16, q, q, out=qout16, variant=v, threads=args.threads),
                  lambda: cv2.resize(rgb16, (q, q), dst=qout16, interpolation=cv2.INTER_AREA)))

    print("tessera CPU benchmark: %dx%d 8-bit gray (gray and colour rows: %d^2 RGB or RGBA, 8- or 16-bit), %d thread(s), "
          "median of %d runs" % (n, n, half, args.threads, reps))
    print("copy bandwidth (numpy copyto, read+write): %.1f GB/s (%.2f ms)\n" % (copy_gbs, copy_ms))
    hdr = "%-10s %-10s %-16s %10s %8s %8s %12s %8s" % ("op", "variant", "params", "ms", "GB/s", "%copy",
                                                     "OpenCV ms", "ratio")
    print(hdr)
    print("-" * len(hdr))
    peer_cache = {}
    for op, ptxt, nbytes, ours, peer in cases:
        for vname, is_ref, is_def in variants_of(T.lib, op):
            # The references are the slow plain definitions: time them once, on cheap parameters.
            if is_ref and op in ("box", "threshold") and ptxt not in ("r=1", "block=3 C=5", "RGB r=1"):
                continue
            ms = median_ms(lambda: ours(vname), 1 if is_ref else reps)
            key = (op, ptxt)
            if key not in peer_cache:
                peer_cache[key] = median_ms(peer, reps) if peer else None
            pms = peer_cache[key]
            gbs = nbytes / ms / 1e6
            print("%-10s %-10s %-16s %10.2f %8.1f %7.0f%% %12s %8s" %
                  (op, vname + ("*" if is_def else ""), ptxt, ms, gbs, 100 * gbs / copy_gbs,
                   "%.2f" % pms if pms else "-", "%.2fx" % (pms / ms) if pms else "-"))
            sys.stdout.flush()
    print("\n* the default variant. ratio = OpenCV time / tessera time (> 1: tessera is faster).")


if __name__ == "__main__":
    main()
