"""Conformance with OpenCV (Debian's python3-opencv) on the bundled real images and on random
images: every operation that OpenCV has, its borders and the edges of its parameter ranges.

Prints one line per failure and ends with "conformance: N passed, N failed, N skipped".
Run: /usr/bin/python3 tests/conformance.py [--quick]
"""
import glob
import os
import sys

import cv2
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tessera_py import Tessera  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
QUICK = "--quick" in sys.argv
rng = np.random.default_rng(20261122)
T = Tessera()
counts = {"passed": 0, "failed": 0, "skipped": 0}

CV_BORDER = {"reflect101": cv2.BORDER_REFLECT_101, "replicate": cv2.BORDER_REPLICATE,
             "reflect": cv2.BORDER_REFLECT, "constant": cv2.BORDER_CONSTANT}


def check(name, ours, theirs, tolerance=0):
    """One comparison: equal (or within tolerance) everywhere."""
    ours = np.asarray(ours).astype(np.int64).reshape(np.asarray(theirs).shape)
    theirs = np.asarray(theirs).astype(np.int64)
    diff = np.abs(ours - theirs)
    if diff.max(initial=0) <= tolerance:
        counts["passed"] += 1
        return True
    counts["failed"] += 1
    where = np.unravel_index(np.argmax(diff), diff.shape)
    print("FAIL %s: %d sample(s) differ, max %d at %s (ours %d, OpenCV %d)" %
          (name, int((diff > tolerance).sum()), int(diff.max()), tuple(int(i) for i in where),
           int(ours[where]), int(theirs[where])))
    return False


def load_images():
    """The bundled photos: gray ones as 2-D arrays, colour ones in RGB order."""
    imgs = {}
    for path in sorted(glob.glob(os.path.join(ROOT, "data", "images", "*"))):
        if path.endswith(".md"):
            continue
        a = cv2.imread(path, cv2.IMREAD_UNCHANGED)
        if a is None:
            continue
        if a.ndim == 3:
            a = cv2.cvtColor(a, cv2.COLOR_BGR2RGB) if a.shape[2] == 3 else cv2.cvtColor(a, cv2.COLOR_BGRA2RGBA)
            if all(np.array_equal(a[..., 0], a[..., k]) for k in (1, 2)):
                a = np.ascontiguousarray(a[..., 0])   # stored as RGB but gray
        imgs[os.path.basename(path)] = a
    return imgs


def gray_of(a):
    return a if a.ndim == 2 else cv2.cvtColor(a[..., :3], cv2.COLOR_RGB2GRAY)


def blur_cv(a, rx, ry, border, value):
    """cv2.blur, with a constant border of any value through copyMakeBorder."""
    k = (2 * rx + 1, 2 * ry + 1)
    if border != "constant":
        return cv2.blur(a, k, borderType=CV_BORDER[border])
    padded = cv2.copyMakeBorder(a, ry, ry, rx, rx, cv2.BORDER_CONSTANT, value=[value] * 4)
    out = cv2.blur(padded, k, borderType=cv2.BORDER_CONSTANT)
    return out[ry:ry + a.shape[0], rx:rx + a.shape[1]]


def test_invert(imgs):
    for name, a in imgs.items():
        check("invert %s" % name, T.invert(a), cv2.bitwise_not(a))
    for dt, shape in ((np.uint8, (13, 42, 3)), (np.uint16, (257, 31)), (np.uint8, (1, 1, 4))):
        a = rng.integers(0, np.iinfo(dt).max + 1, shape, dtype=dt)
        check("invert random %s %s" % (dt.__name__, shape), T.invert(a), cv2.bitwise_not(a))


def test_box(imgs):
    radii = [0, 1, 2, 3, 5, 7, 15, 31, 64, 99] if not QUICK else [1, 7, 99]
    names = ["camera.png", "coffee.png", "page.png"]
    for name in names:
        a = imgs[name]
        for r in radii:
            for border in CV_BORDER:
                value = 0 if border != "constant" else int(rng.integers(0, 256))
                check("box %s r=%d %s value=%d" % (name, r, border, value),
                      T.box(a, r, border, value), blur_cv(a, r, r, border, value))
    # Separate radii per axis, windows larger than the image, 16-bit, odd sizes.
    cases = [("camera.png", 3, 20), ("coffee.png", 40, 0), ("text.png", 0, 99)]
    for name, rx, ry in cases:
        a = imgs[name]
        for border in CV_BORDER:
            check("box %s rx=%d ry=%d %s" % (name, rx, ry, border),
                  T.box(a, 0, border, 0, radius_x=rx, radius_y=ry), blur_cv(a, rx, ry, border, 0))
    # OpenCV rounds 16-bit means through a float32 product (its SIMD path), which can miss the
    # exact rounding that tessera defines by one; 8-bit means are exact in both.
    for shape, dt, r in (((13, 42), np.uint8, 30), ((257, 1031), np.uint8, 99), ((31, 17, 3), np.uint16, 5),
                         ((64, 64), np.uint16, 40), ((1, 1), np.uint8, 3), ((5, 1), np.uint8, 7)):
        a = rng.integers(0, np.iinfo(dt).max + 1, shape, dtype=dt)
        for border in CV_BORDER:
            check("box random %s %s r=%d %s" % (shape, dt.__name__, r, border),
                  T.box(a, r, border, 0), blur_cv(a, r, r, border, 0), tolerance=0 if dt == np.uint8 else 1)


def test_threshold(imgs):
    blocks = range(3, 200, 2) if not QUICK else (3, 15, 51, 199)
    cs = [-7.5, -2, -0.5, 0, 0.3, 1, 2.5, 5, 10, 20, 300, -300]
    for name in ("page.png", "text.png", "camera.png"):
        g = gray_of(imgs[name])
        for b in blocks:
            c = cs[int(rng.integers(0, len(cs)))]
            for inverse in (False, True):
                maxval = 255 if b % 4 == 1 else int(rng.integers(0, 256))
                kind = cv2.THRESH_BINARY_INV if inverse else cv2.THRESH_BINARY
                theirs = cv2.adaptiveThreshold(g, maxval, cv2.ADAPTIVE_THRESH_MEAN_C, kind, b, c)
                check("threshold %s block=%d C=%g inverse=%d maxval=%d" % (name, b, c, inverse, maxval),
                      T.threshold(g, b, c, inverse, maxval), theirs)
    for shape in ((13, 42), (1, 1), (257, 1031)):
        a = rng.integers(0, 256, shape, dtype=np.uint8)
        for b, c in ((3, 0.5), (199, -1.25), (41, 7)):
            for inverse in (False, True):
                kind = cv2.THRESH_BINARY_INV if inverse else cv2.THRESH_BINARY
                check("threshold random %s block=%d C=%g inverse=%d" % (shape, b, c, inverse),
                      T.threshold(a, b, c, inverse, 255),
                      cv2.adaptiveThreshold(a, 255, cv2.ADAPTIVE_THRESH_MEAN_C, kind, b, c))


def test_sums(imgs):
    for name, a in imgs.items():
        for axis, dim in (("columns", 0), ("rows", 1)):
            theirs = cv2.reduce(a, dim, cv2.REDUCE_SUM, dtype=cv2.CV_32S)
            check("sums %s %s" % (name, axis), T.sums(a, axis), theirs)
    for shape in ((257, 1031), (1, 1), (13, 42, 3)):
        a = rng.integers(0, 65536, shape, dtype=np.uint16)
        for axis, dim in (("columns", 0), ("rows", 1)):
            theirs = cv2.reduce(a, dim, cv2.REDUCE_SUM, dtype=cv2.CV_64F)
            check("sums random 16-bit %s %s" % (shape, axis), T.sums(a, axis), theirs)


def test_gray(imgs):
    for name, a in imgs.items():
        if a.ndim != 3:
            continue
        check("gray %s" % name, T.gray(a), cv2.cvtColor(a[..., :3], cv2.COLOR_RGB2GRAY))
    for dt, shape in ((np.uint8, (13, 42, 4)), (np.uint16, (31, 17, 3)), (np.uint8, (1, 1, 3))):
        a = rng.integers(0, np.iinfo(dt).max + 1, shape, dtype=dt)
        code = cv2.COLOR_RGBA2GRAY if shape[2] == 4 else cv2.COLOR_RGB2GRAY
        check("gray random %s %s" % (dt.__name__, shape), T.gray(a), cv2.cvtColor(a, code))


def test_resize(imgs):
    for name, a in imgs.items():
        h, w = a.shape[:2]
        for fx, fy in ((2, 2), (3, 3), (4, 2), (1, 2), (5, 5)):
            if w % fx or h % fy:
                a2 = a[:h - h % fy, :w - w % fx]
            else:
                a2 = a
            dw, dh = a2.shape[1] // fx, a2.shape[0] // fy
            check("resize %s /%dx%d exact" % (name, fx, fy), T.resize(a2, dw, dh),
                  cv2.resize(a2, (dw, dh), interpolation=cv2.INTER_AREA))
        for dw, dh in ((w * 2 // 3, h * 2 // 3), (min(w, 192), min(h, 192)), (w // 7 + 1, h // 5 + 1), (w - 1, h - 1)):
            check("resize %s -> %dx%d fractional" % (name, dw, dh), T.resize(a, dw, dh),
                  cv2.resize(a, (dw, dh), interpolation=cv2.INTER_AREA))
    for dt, shape in ((np.uint16, (64, 96, 3)), (np.uint8, (13, 42)), (np.uint8, (100, 100, 4))):
        a = rng.integers(0, np.iinfo(dt).max + 1, shape, dtype=dt)
        h, w = shape[:2]
        for dw, dh in ((w // 2, h // 2), (w // 3 + 1, h // 4 + 1)):
            exact = w % dw == 0 and h % dh == 0
            check("resize random %s %s -> %dx%d" % (dt.__name__, shape, dw, dh), T.resize(a, dw, dh),
                  cv2.resize(a, (dw, dh), interpolation=cv2.INTER_AREA), tolerance=0)


def main():
    imgs = load_images()
    if not imgs:
        print("FAIL: no images under data/images")
        counts["failed"] += 1
    for t in (test_invert, test_box, test_threshold, test_sums, test_gray, test_resize):
        t(imgs)
    print("conformance: %(passed)d passed, %(failed)d failed, %(skipped)d skipped" % counts)
    return 1 if counts["failed"] else 0


if __name__ == "__main__":
    sys.exit(main())
