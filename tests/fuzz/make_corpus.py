#!/usr/bin/env python3
"""Write the seed corpora of the fuzz targets into tests/fuzz/corpus/<target>/: a few tiny valid
files of each format (odd sizes, palettes, 16-bit, interlaced, progressive, top-down...) and a
few broken ones (truncated, bad checksum, absurd sizes). Run from anywhere; needs numpy and
OpenCV (cv2) for the JPEG seeds. The files are committed; rerun only to change them."""
import os, struct, zlib, shutil
import numpy as np
import cv2

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "corpus")


def put(target, name, data):
    d = os.path.join(OUT, target)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


def chunk(tag, body):
    return struct.pack(">I", len(body)) + tag + body + struct.pack(">I", zlib.crc32(tag + body) & 0xffffffff)


def png(w, h, depth, ctype, rows, extra=b"", interlace=0):
    raw = b"".join(b"\0" + r for r in rows)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, depth, ctype, 0, 0, interlace)) +
            extra + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))


def main():
    shutil.rmtree(OUT, ignore_errors=True)
    rng = np.random.default_rng(7)
    # PNG
    put("png", "gray1x1.png", png(1, 1, 8, 0, [b"\x80"]))
    put("png", "rgba3x2.png", png(3, 2, 8, 6, [bytes(range(12)), bytes(range(12, 24))]))
    put("png", "gray16_2x2.png", png(2, 2, 16, 0, [b"\x01\x02\x03\x04", b"\xff\xff\x00\x00"]))
    pal = chunk(b"PLTE", bytes([0, 0, 0, 255, 0, 0, 0, 255, 0, 0, 0, 255])) + chunk(b"tRNS", b"\x00\x80")
    put("png", "pal2bit4x4.png", png(4, 4, 2, 3, [b"\x1b", b"\xe4", b"\x00", b"\xff"], pal))
    put("png", "interlaced5x3.png", png(5, 3, 8, 2, [bytes(rng.integers(0, 256, 15, dtype=np.uint8))] * 3, interlace=1))
    good = png(3, 2, 8, 6, [bytes(range(12)), bytes(range(12, 24))])
    put("png", "truncated.png", good[:-20])
    put("png", "badcrc.png", good[:29] + b"\0\0\0\0" + good[33:])
    put("png", "huge.png", png(100000, 100000, 8, 0, [b"\0"]))
    # JPEG
    ok, g = cv2.imencode(".jpg", rng.integers(0, 256, (8, 8), dtype=np.uint8), [cv2.IMWRITE_JPEG_QUALITY, 50])
    put("jpeg", "gray8x8.jpg", g.tobytes())
    ok, c = cv2.imencode(".jpg", rng.integers(0, 256, (7, 9, 3), dtype=np.uint8), [cv2.IMWRITE_JPEG_QUALITY, 30])
    put("jpeg", "rgb9x7.jpg", c.tobytes())
    ok, p = cv2.imencode(".jpg", rng.integers(0, 256, (11, 6, 3), dtype=np.uint8),
                         [cv2.IMWRITE_JPEG_QUALITY, 30, cv2.IMWRITE_JPEG_PROGRESSIVE, 1])
    put("jpeg", "progressive6x11.jpg", p.tobytes())
    put("jpeg", "truncated.jpg", c.tobytes()[: len(c) // 2])
    b = bytearray(g.tobytes())
    i = b.find(b"\xff\xc0")
    b[i + 5:i + 9] = struct.pack(">HH", 60000, 60000)   # SOF0 height/width
    put("jpeg", "huge.jpg", bytes(b))
    # PGM/PPM
    put("pnm", "p5_3x2.pgm", b"P5\n3 2\n255\n" + bytes(range(6)))
    put("pnm", "p6_2x2_16.ppm", b"P6 2 2 65535\n" + bytes(range(24)))
    put("pnm", "p2_comments.pgm", b"P2\n# a comment\n3 1 # more\n10\n0 5 10\n")
    put("pnm", "p3_maxval100.ppm", b"P3\n1 2\n100\n100 0 50\n1 2 3\n")
    put("pnm", "truncated.pgm", b"P5\n4 4\n255\n" + bytes(5))
    put("pnm", "huge.ppm", b"P6\n2147483647 2147483647\n255\n\0\0\0")
    # BMP
    def bmp(w, h, bpp, rows, palette=b"", hsize=40, comp=0, masks=b""):
        body = b"".join(rows)
        off = 14 + hsize + len(masks) + len(palette)
        info = struct.pack("<IiiHHIIiiII", hsize, w, h, 1, bpp, comp, len(body), 2835, 2835,
                           len(palette) // 4, 0) + bytes(hsize - 40)
        return b"BM" + struct.pack("<IHHI", off + len(body), 0, 0, off) + info + masks + palette + body
    gray_pal = b"".join(bytes([i, i, i, 0]) for i in range(4))
    put("bmp", "pal8_3x2.bmp", bmp(3, 2, 8, [b"\0\1\2\0", b"\3\2\1\0"], gray_pal))
    put("bmp", "rgb24_3x3.bmp", bmp(3, 3, 24, [bytes(range(9)) + b"\0\0\0"] * 3))
    put("bmp", "bgra32_topdown_2x2.bmp",
        bmp(2, -2, 32, [bytes(range(8)), bytes(range(8, 16))], hsize=40, comp=3,
            masks=struct.pack("<IIII", 0xff0000, 0xff00, 0xff, 0xff000000)))
    full = bmp(3, 3, 24, [bytes(range(9)) + b"\0\0\0"] * 3)
    put("bmp", "truncated.bmp", full[:-7])
    put("bmp", "huge.bmp", bmp(0x7fffffff, 2, 24, [b"\0" * 12]))
    # Detection + any decoder: one of each.
    for t, n in (("png", "rgba3x2.png"), ("jpeg", "rgb9x7.jpg"), ("pnm", "p2_comments.pgm"),
                 ("bmp", "pal8_3x2.bmp"), ("png", "truncated.png")):
        with open(os.path.join(OUT, t, n), "rb") as f:
            put("read", n, f.read())
    put("read", "unknown.bin", b"GIF89a\1\0\1\0")
    # YUV4MPEG2 (y4m reader): 4:2:0, mono with two frames, 10-bit 4:4:4 with an out-of-range
    # sample and an X tag, a truncated 4:2:2 frame, an absurd size, an interlaced stream.
    put("y4m", "420_4x2.y4m", b"YUV4MPEG2 W4 H2 F25:1 Ip A1:1 C420jpeg\nFRAME\n" + bytes(range(8)) + b"\x80\x80" + b"\x10\x20")
    put("y4m", "mono_3x3_2frames.y4m", b"YUV4MPEG2 W3 H3 Cmono\nFRAME\n" + bytes(9) + b"FRAME\n" + bytes(range(9)))
    put("y4m", "444p10_2x2.y4m", b"YUV4MPEG2 W2 H2 C444p10 XYSCSS=444P10\nFRAME\n" + b"\xff\x03\x00\x04\x01\x00\x02\x00" * 3)
    put("y4m", "422_5x3_truncated.y4m", b"YUV4MPEG2 W5 H3 C422\nFRAME\n" + bytes(10))
    put("y4m", "huge.y4m", b"YUV4MPEG2 W100000 H100000 C420\nFRAME\n\0\0\0")
    put("y4m", "interlaced.y4m", b"YUV4MPEG2 W2 H2 It C420\nFRAME\n" + bytes(6))
    # Puzzle placement JSON: rotations and every field, the minimal form, a repeated tile, an
    # unknown nested key, an absurd grid cut short, a missing closing brace.
    put("puzzle_json", "rot2x2.json", b'{"format": "tessera-puzzle", "rows": 2, "cols": 2, "tile": 16, "rotate": true, '
        b'"cost": 12.5, "exact": false,\n "cells": [[3, 1], [0, 0], [2, 3], [1, 2]]}\n')
    put("puzzle_json", "plain1x3.json", b'{"rows":1,"cols":3,"cells":[[2,0],[0,0],[1,0]]}')
    put("puzzle_json", "not_permutation.json", b'{"rows":2,"cols":1,"cells":[[0,0],[0,0]]}')
    put("puzzle_json", "unknown_keys.json", b'{"rows":1,"cols":1,"cells":[[0,0]],"x":{"a":[1,2,{"b":null}],"c":"d"}}')
    put("puzzle_json", "huge_truncated.json", b'{"rows":1048576,"cols":1048576,"cells":[')
    put("puzzle_json", "unterminated.json", b'{"rows":1,"cols":1,"cells":[[0,0]]')
    # CLI arguments: op index (invert box threshold sums gray resize; 6 = global), positional
    # slots, then NUL-separated arguments.
    def args(op, npos, *a):
        return bytes([op, npos]) + b"\0".join(x.encode() for x in a)
    put("cli_args", "box", args(1, 2, "--radius", "7", "--border=constant", "--value", "9", "in.png", "out.png"))
    put("cli_args", "box_axes", args(1, 2, "--radius-x=3", "--radius-y", "0", "--", "-x", "-"))
    put("cli_args", "threshold", args(2, 2, "--block", "15", "--c", "2.5", "--inverse", "--no-inverse", "a", "b"))
    put("cli_args", "threshold_bad", args(2, 2, "--block", "1e999", "--c", "nan", "--maxval=-1"))
    put("cli_args", "sums", args(3, 2, "--axis", "rows", "--time", "--quiet", "x", "-"))
    put("cli_args", "resize", args(5, 2, "--width", "640", "--height", "99999999999999999999", "--threads", "4"))
    put("cli_args", "global", args(6, 0, "--backend", "cuda", "--variant", "reference", "--threads=0"))
    put("cli_args", "help", args(0, 2, "-h", "--help", "--unknown", "--" + "x" * 80))


if __name__ == "__main__":
    main()
