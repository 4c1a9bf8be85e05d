"""y4m streams for the viewer's tests, written and read without tessera.

  y4m_frames.py gen OUT.y4m W H N CHROMA BITS [F]  a banded, moving test stream (CHROMA 420, 422,
                                                   444 or mono; BITS 8..16; F the rate, e.g. 25:1)
  y4m_frames.py frame IN.y4m K OUT.png [rgb|luma]  frame K (from 0; past the end: the last) shown
                                                   as tsr_frame_to_image documents it

The conversion is written from the formula in include/tessera.h (tsr_frame_to_image), not from
tessera's code, so the viewer's screenshots are checked against an independent implementation.
"""
import sys

import cv2
import numpy as np


def plane_sizes(w, h, chroma):
    cw, ch = {"420": ((w + 1) // 2, (h + 1) // 2), "422": ((w + 1) // 2, h), "444": (w, h)}.get(chroma, (0, 0))
    return [(h, w)] + ([(ch, cw)] * 2 if chroma != "mono" else [])


def gen(path, w, h, n, chroma, bits, fps="25:1"):
    rng = np.random.default_rng(7)
    maxv, s = (1 << bits) - 1, bits - 8
    tag = chroma if bits == 8 else ("mono%d" % bits if chroma == "mono" else "%sp%d" % (chroma, bits))
    with open(path, "wb") as f:
        f.write(("YUV4MPEG2 W%d H%d F%s Ip A1:1 C%s\n" % (w, h, fps, tag)).encode())
        for k in range(n):
            f.write(b"FRAME\n")
            for p, (ph, pw) in enumerate(plane_sizes(w, h, chroma)):
                ys, xs = np.mgrid[0:ph, 0:pw]
                if p == 0:   # steps of two code values that move with the frame, and a little noise
                    v = ((16 + ((xs + 3 * k) // 6) * 2 + ys // 9) << s) + rng.integers(0, 1 << max(s, 1), (ph, pw))
                else:        # smooth chroma, and every value somewhere (a wrong coefficient shows)
                    v = (100 + 50 * p + (xs + k) // 4 - (ys + k) // 3) << s
                    v = np.where((xs + ys) % 5 == 0, rng.integers(0, maxv + 1, (ph, pw)), v)
                v = np.clip(v, 0, maxv).astype(np.uint8 if bits == 8 else "<u2")
                f.write(v.tobytes())


def read(path):
    data = open(path, "rb").read()
    nl = data.index(b"\n")
    w = h = 0
    tag = "420jpeg"
    for t in data[:nl].decode().split()[1:]:
        if t[0] == "W":
            w = int(t[1:])
        elif t[0] == "H":
            h = int(t[1:])
        elif t[0] == "C":
            tag = t[1:]
    chroma = "mono" if tag.startswith("mono") else tag[:3]
    rest = tag[len(chroma):].lstrip("p")
    bits = int(rest) if rest.isdigit() else 8
    frames, pos = [], nl + 1
    while pos < len(data):
        pos = data.index(b"\n", pos) + 1
        planes = []
        for ph, pw in plane_sizes(w, h, chroma):
            n = ph * pw * (2 if bits > 8 else 1)
            planes.append(np.frombuffer(data[pos:pos + n], np.uint8 if bits == 8 else "<u2")
                          .reshape(ph, pw).astype(np.int64))
            pos += n
        frames.append(planes)
    return frames, chroma, bits


def show(planes, chroma, bits, view):
    s, y = bits - 8, planes[0]
    if chroma == "mono" or view == "luma":
        m = (1 << bits) - 1
        return ((y * 255 + m // 2) // m).astype(np.uint8)
    h, w = y.shape
    cy = np.arange(h) // (2 if chroma == "420" else 1)
    cx = np.arange(w) // (1 if chroma == "444" else 2)
    d = planes[1][cy][:, cx] - (128 << s)
    e = planes[2][cy][:, cx] - (128 << s)
    c = 298 * (y - (16 << s)) + (128 << s)

    def out(v):
        return np.clip(np.maximum(v, 0) >> (8 + s), 0, 255).astype(np.uint8)

    return np.dstack([out(c + 409 * e), out(c - 100 * d - 208 * e), out(c + 516 * d)])


def main():
    if sys.argv[1] == "gen":
        a = sys.argv[2:]
        gen(a[0], int(a[1]), int(a[2]), int(a[3]), a[4], int(a[5]), *(a[6:7]))
    else:
        frames, chroma, bits = read(sys.argv[2])
        img = show(frames[min(int(sys.argv[3]), len(frames) - 1)], chroma, bits,
                   sys.argv[5] if len(sys.argv) > 5 else "rgb")
        if not cv2.imwrite(sys.argv[4], img[:, :, ::-1] if img.ndim == 3 else img):
            sys.exit("cannot write " + sys.argv[4])


main()
