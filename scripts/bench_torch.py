"""PyTorch eager anchor for the native benchmarks (scripts/bench-native.sh).

The three functions of scenarios/reference.rx written as PyTorch eager code
on one intra-op thread, timed at the batch sizes of native/bench_test.go.
Prints one line per case: "FUNCTION BATCH NS_PER_ROW CPU_NS_PER_ROW", the
minimum over --count runs of the wall-clock and the process CPU time per
row (the CPU time is steadier on a machine shared with other jobs).

It first prints, as "#" lines, which BLAS library PyTorch's MatMul runs on
(the libblas.so.3 that is mapped, resolved through Debian's alternatives)
and the CPU capability ATen dispatches its kernels for. Debian's PyTorch
calls the generic libblas.so.3: with OpenBLAS (libopenblas0-pthread, which
libtorch recommends and ci/setup.sh installs) it is a fair anchor; with
the reference BLAS (libblas3) its MatMul is several times slower, and this
script refuses to run unless RXEQ_BENCH_REFERENCE_BLAS=1 says to.
"""

import os
import sys
import time

import torch

F, H, C = 32, 32, 8
BATCHES = [1, 16, 128, 4096, 65536]


def score_linear(x, w, b):
    logits = x @ w + b
    for round_idx in range(4):
        if round_idx % 2 == 0:
            logits = logits * 0.5
        else:
            logits = torch.tanh(logits)
    probs = torch.softmax(logits, 1)
    classes = torch.argmax(probs, 1)
    return logits, probs, classes


def score_mlp(x, w1, b1, w2, b2):
    hidden = torch.tanh(x @ w1.t() + b1)
    for round_idx in range(4):
        if round_idx % 2 == 0:
            hidden = hidden * 0.75
        else:
            hidden = torch.tanh(hidden)
    logits = hidden @ w2 + b2
    probs = torch.softmax(logits, 1)
    classes = torch.argmax(probs, 1)
    return logits, probs, classes


def score_pipeline(x, mean, scale, w1, b1, w2, b2, phase):
    xn = (x - mean) / scale
    hidden = xn @ w1.t() + b1
    for round_idx in range(4):
        if (round_idx + phase) % 2 == 0:
            hidden = torch.relu(hidden)
        else:
            hidden = torch.tanh(hidden)
    logits = hidden @ w2 + b2
    probs = torch.softmax(logits, 1)
    classes = torch.argmax(probs, 1)
    return logits, probs, classes


def inputs(fn, batch, g):
    def normal(std, *shape):
        return torch.randn(*shape, generator=g) * std

    def uniform(lo, hi, *shape):
        return torch.rand(*shape, generator=g) * (hi - lo) + lo

    x = normal(1.0, batch, F)
    if fn is score_linear:
        return (x, normal(0.3, F, C), uniform(-0.1, 0.1, C))
    w1, b1 = normal(0.25, H, F), uniform(-0.1, 0.1, H)
    w2, b2 = normal(0.3, H, C), uniform(-0.1, 0.1, C)
    if fn is score_mlp:
        return (x, w1, b1, w2, b2)
    return (x, uniform(-0.5, 0.5, F), uniform(0.5, 1.5, F), w1, b1, w2, b2, 1)


def bench(fn, args, min_time):
    """Returns (wall ns, CPU ns) per call over at least min_time seconds."""
    with torch.no_grad():
        for _ in range(3):
            fn(*args)
        n = 1
        while True:
            t0, c0 = time.perf_counter_ns(), time.process_time_ns()
            for _ in range(n):
                fn(*args)
            dt, dc = time.perf_counter_ns() - t0, time.process_time_ns() - c0
            if dt >= min_time * 1e9:
                return dt / n, dc / n
            n = max(n * 2, int(n * min_time * 1.2e9 / max(dt, 1)))


def blas_libraries():
    """The BLAS libraries mapped into this process, after a MatMul."""
    torch.ones(4, 4) @ torch.ones(4, 4)
    libs = set()
    try:
        with open("/proc/self/maps") as f:
            for line in f:
                path = line.split()[-1] if len(line.split()) >= 6 else ""
                name = os.path.basename(path)
                if "blas" in name or "mkl" in name or "blis" in name:
                    libs.add(os.path.realpath(path))
    except OSError:
        pass
    return sorted(libs)


def is_reference_blas(libs):
    """Whether the BLAS in use is Netlib's reference one (Debian's libblas3)."""
    for lib in libs:
        low = lib.lower()
        if "openblas" in low or "mkl" in low or "blis" in low:
            return False
    return any("/blas/" in lib or os.path.basename(lib).startswith("libblas.so") for lib in libs)


def cpu_capability():
    """The CPU capability ATen dispatches for (DEFAULT, AVX2, AVX512)."""
    cpu = getattr(torch.backends, "cpu", None)
    if cpu is not None and hasattr(cpu, "get_cpu_capability"):
        return cpu.get_cpu_capability()
    for line in torch.__config__.show().splitlines():
        if "CPU capability usage:" in line:
            return line.split(":", 1)[1].strip()
    return "unknown"


def main():
    libs = blas_libraries()
    blas = ", ".join(libs) if libs else "none found"
    print(f"# blas: {blas}")
    print(f"# cpu capability: {cpu_capability()}")
    if is_reference_blas(libs):
        msg = (f"PyTorch's MatMul runs on the reference BLAS ({blas}), several times slower than the "
               "OpenBLAS that libtorch recommends: install libopenblas0-pthread (ci/setup.sh does), "
               "or set RXEQ_BENCH_REFERENCE_BLAS=1 to compare against it anyway")
        if os.environ.get("RXEQ_BENCH_REFERENCE_BLAS") != "1":
            print(f"bench_torch.py: {msg}", file=sys.stderr)
            sys.exit(2)
        print(f"# WARNING: {msg}")
    torch.set_num_threads(1)
    torch.set_num_interop_threads(1)
    min_time = float(sys.argv[1]) if len(sys.argv) > 1 else 0.3
    count = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    g = torch.Generator().manual_seed(20261202)
    print(f"# torch {torch.__version__}, intra-op threads {torch.get_num_threads()}, eager, no_grad")
    if count <= 0:
        return  # the header only (bench-native.sh asks for it first)
    for fn in (score_linear, score_mlp, score_pipeline):
        for batch in BATCHES:
            args = inputs(fn, batch, g)
            runs = [bench(fn, args, min_time) for _ in range(count)]
            wall = min(r[0] for r in runs)
            cpu = min(r[1] for r in runs)
            print(f"{fn.__name__} {batch} {wall / batch:.1f} {cpu / batch:.1f}", flush=True)


if __name__ == "__main__":
    main()
