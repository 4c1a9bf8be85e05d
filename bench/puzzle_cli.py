#!/usr/bin/env python3
"""End-to-end timing of `tessera puzzle solve` (decode, solve, encode, JSON), several builds
interleaved in one session, with a check that they write the same placement.

  TSR_PUZZLE_BENCH=1 TSR_PUZZLE_BENCH_SAVE=DIR build/tessera-tests test_puzzle_bench
  bench/puzzle_cli.py DIR OLD/tessera build/tessera [--runs 7] [--threads 2] [--images 5]

writes DIR/s_I.png and DIR/r_I.png (the prepared photo I scrambled with seed 1000 + I, without and
with rotation) when missing, then for each image and case runs every binary in turn, --runs
rounds, and prints the median wall time of each. The placement JSON of every binary must equal
the first one's byte for byte (exit 1 otherwise); the images are compared by their pixels.
"""
import argparse
import os
import statistics
import subprocess
import sys
import time


def run(cmd):
    t0 = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - t0


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("dir")
    ap.add_argument("bins", nargs="+")
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--images", default="5", help="comma-separated photo indices (0..6)")
    a = ap.parse_args()
    d, bins, ok = a.dir, a.bins, True
    for i in a.images.split(","):
        for rot in (0, 1):
            scr = os.path.join(d, ("r_" if rot else "s_") + i + ".png")
            if not os.path.exists(scr):
                subprocess.run([bins[0], "--quiet", "puzzle", "scramble", os.path.join(d, "photo_%s.png" % i), scr,
                                "--tile", "28", "--seed", str(1000 + int(i))] + (["--rotate"] if rot else []),
                               check=True)
            times = [[] for _ in bins]
            outs = [os.path.join(d, "out_%d.png" % b) for b in range(len(bins))]
            for _ in range(a.runs):
                for b, exe in enumerate(bins):
                    times[b].append(run([exe, "--quiet", "--threads", str(a.threads), "puzzle", "solve", scr,
                                         outs[b], "--tile", "28"] + (["--rotate"] if rot else [])))
            same = []
            for b in range(1, len(bins)):
                js = [open(o[:-4] + ".json", "rb").read() for o in (outs[0], outs[b])]
                px = []
                for o in (outs[0], outs[b]):   # pixels through PPM (PNG files differ by zlib level)
                    subprocess.run([bins[b], "--quiet", "invert", o, o[:-4] + ".ppm"], check=True)
                    px.append(open(o[:-4] + ".ppm", "rb").read())
                same.append(js[0] == js[1] and px[0] == px[1])
                ok = ok and same[-1]
            print("photo %s %-8s " % (i, "rotate" if rot else "known") +
                  "  ".join("%.1f ms" % (1e3 * statistics.median(t)) for t in times) +
                  ("  identical" if all(same) else "  DIFFERENT"), flush=True)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
