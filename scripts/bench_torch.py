"""PyTorch eager anchor for the native benchmarks (scripts/bench-native.sh).

The three functions of scenarios/reference.rx written as PyTorch eager code
on one intra-op thread, timed at the batch sizes of native/bench_test.go.
Prints one line per case: "FUNCTION BATCH NS_PER_ROW CPU_NS_PER_ROW", the
minimum over --count runs of the wall-clock and the process CPU time per
row (the CPU time is steadier on a machine shared with other jobs).
"""

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


def main():
    torch.set_num_threads(1)
    torch.set_num_interop_threads(1)
    min_time = float(sys.argv[1]) if len(sys.argv) > 1 else 0.3
    count = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    g = torch.Generator().manual_seed(20261202)
    print(f"# torch {torch.__version__}, intra-op threads {torch.get_num_threads()}, eager, no_grad")
    for fn in (score_linear, score_mlp, score_pipeline):
        for batch in BATCHES:
            args = inputs(fn, batch, g)
            runs = [bench(fn, args, min_time) for _ in range(count)]
            wall = min(r[0] for r in runs)
            cpu = min(r[1] for r in runs)
            print(f"{fn.__name__} {batch} {wall / batch:.1f} {cpu / batch:.1f}", flush=True)


if __name__ == "__main__":
    main()
