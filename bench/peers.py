"""Peers measured in the same run as tessera-bench-cuda: torch and cupy on 8192x8192 uint8
random data, median of 20 CUDA-event-timed runs after warm-up (microseconds)."""
import sys


def bench(fn, runs=20):
    import torch
    for _ in range(3):
        fn()
    ts = []
    for _ in range(runs):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        fn()
        b.record()
        b.synchronize()
        ts.append(a.elapsed_time(b) * 1000)
    ts.sort()
    return ts[len(ts) // 2]


def main():
    try:
        import torch
    except ImportError:
        print("torch missing: no peers")
        return 0
    n = 8192
    x = torch.randint(0, 256, (n, n), dtype=torch.uint8, device="cuda")
    y = torch.empty_like(x)
    print("peer torch bitwise_not 8192^2: %.1f us" % bench(lambda: torch.bitwise_not(x, out=y)))
    print("peer torch sum(dim=0) int32 8192^2: %.1f us" % bench(lambda: x.sum(dim=0, dtype=torch.int32)))
    print("peer torch sum(dim=1) int32 8192^2: %.1f us" % bench(lambda: x.sum(dim=1, dtype=torch.int32)))
    try:
        import cupy as cp
        import cupyx.scipy.ndimage as nd
        cx = cp.asarray(x)
        with cp.cuda.ExternalStream(torch.cuda.current_stream().cuda_stream):
            print("peer cupy sum(axis=0) uint32 8192^2: %.1f us" % bench(lambda: cx.sum(axis=0, dtype=cp.uint32)))
            print("peer cupy sum(axis=1) uint32 8192^2: %.1f us" % bench(lambda: cx.sum(axis=1, dtype=cp.uint32)))
            for r in (1, 7, 15):
                print("peer cupy uniform_filter r=%d 8192^2: %.1f us" % (r, bench(lambda: nd.uniform_filter(cx, 2 * r + 1, mode="mirror"))))
    except Exception as e:  # cupy absent or failing: say so, the C benchmark still stands
        print("cupy peers unavailable: %s" % e)
    return 0


if __name__ == "__main__":
    sys.exit(main())
