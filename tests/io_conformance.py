#!/usr/bin/python3
"""Fixtures and expected decodes for the image I/O tests (tests/test_io.c).

  io_conformance.py --make   rebuild the small fixtures in tests/data/io from ../shared/images
  io_conformance.py          decode every fixture with OpenCV and (re)write
                             tests/data/io/expected.txt: "file width height channels bytes fnv1a64"
                             where fnv1a64 hashes the tightly packed samples in RGB(A) order,
                             16-bit samples little-endian. JPEG fixtures are not hashed (decoders
                             may differ by a few levels): their OpenCV decode is kept as a PPM/PGM
                             ("*.ref.ppm") that the C test compares with a tolerance.
Uses /usr/bin/python3 with cv2 and numpy; not wired into the build.
"""
import os
import shutil
import sys

import cv2
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "data", "io")
SHARED = os.path.join(HERE, "..", "..", "shared", "images")


def rgb(a):
    if a.ndim == 3 and a.shape[2] == 3:
        return a[:, :, ::-1]
    if a.ndim == 3 and a.shape[2] == 4:
        return a[:, :, [2, 1, 0, 3]]
    return a


def bgr(a):
    return rgb(a)  # the same swap


def make():
    os.makedirs(DATA, exist_ok=True)
    for f in ("camera.png", "chelsea.png"):
        shutil.copyfile(os.path.join(SHARED, f), os.path.join(DATA, f))
    cam = cv2.imread(os.path.join(DATA, "camera.png"), cv2.IMREAD_UNCHANGED)
    cat = cv2.imread(os.path.join(DATA, "chelsea.png"), cv2.IMREAD_UNCHANGED)
    cam_s = cam[200:247, 230:291].copy()          # 61x47 gray
    cat_s = cat[60:125, 180:277].copy()           # 97x65 BGR
    cv2.imwrite(os.path.join(DATA, "camera_crop.pgm"), cam_s)
    cv2.imwrite(os.path.join(DATA, "chelsea_crop.ppm"), cat_s)
    cv2.imwrite(os.path.join(DATA, "camera_crop.bmp"), cam_s)
    cv2.imwrite(os.path.join(DATA, "chelsea_crop.bmp"), cat_s)
    cv2.imwrite(os.path.join(DATA, "chelsea_crop.jpg"), cat_s, [cv2.IMWRITE_JPEG_QUALITY, 90])
    cv2.imwrite(os.path.join(DATA, "camera_crop.jpg"), cam_s, [cv2.IMWRITE_JPEG_QUALITY, 90])
    h, w = cat_s.shape[:2]
    alpha = (np.arange(w)[None, :] * 255 // (w - 1) + np.zeros((h, 1), int)).astype(np.uint8)
    cv2.imwrite(os.path.join(DATA, "chelsea_crop_rgba.png"), np.dstack([cat_s, alpha]))
    cam16 = cam_s.astype(np.uint16) * 257 + (np.arange(cam_s.size).reshape(cam_s.shape) % 251).astype(np.uint16)
    cv2.imwrite(os.path.join(DATA, "camera_crop16.png"), cam16)
    # An ASCII PGM with a comment and maxval 1000 (scaled to 16 bits by tessera).
    with open(os.path.join(DATA, "camera_crop_ascii.pgm"), "w") as f:
        f.write("P2\n# camera crop, maxval 1000\n%d %d\n1000\n" % (cam_s.shape[1], cam_s.shape[0]))
        v = (cam_s.astype(int) * 1000 // 255)
        for row in v:
            f.write(" ".join(str(x) for x in row) + "\n")


def fnv(a):
    b = np.ascontiguousarray(a)
    if b.dtype == np.uint16:
        b = b.astype("<u2")
    h = 0xcbf29ce484222325
    for x in b.tobytes():
        h = ((h ^ x) * 0x100000001b3) & 0xFFFFFFFFFFFFFFFF
    return h


def expected():
    lines = []
    for f in sorted(os.listdir(DATA)):
        ext = f.rsplit(".", 1)[-1]
        if ext not in ("png", "pgm", "ppm", "bmp", "jpg") or ".ref." in f:
            continue
        a = cv2.imread(os.path.join(DATA, f), cv2.IMREAD_UNCHANGED)
        if f == "camera_crop_ascii.pgm":
            # OpenCV keeps maxval-1000 samples as they are; tessera scales to 0..65535 with rounding.
            a = ((a.astype(np.uint64) * 65535 + 500) // 1000).astype(np.uint16)
        a = rgb(a)
        c = 1 if a.ndim == 2 else a.shape[2]
        if ext == "jpg":
            ref = f[:-4] + (".ref.pgm" if c == 1 else ".ref.ppm")
            cv2.imwrite(os.path.join(DATA, ref), bgr(a))
            continue
        lines.append("%s %d %d %d %d %016x\n" % (f, a.shape[1], a.shape[0], c, a.dtype.itemsize, fnv(a)))
    with open(os.path.join(DATA, "expected.txt"), "w") as out:
        out.writelines(lines)
    sys.stdout.writelines(lines)


if __name__ == "__main__":
    if "--make" in sys.argv:
        make()
    expected()
