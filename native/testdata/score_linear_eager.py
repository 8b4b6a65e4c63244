"""PyTorch eager baseline for BenchmarkScoreLinearTorch (native/bench_torch_test.go).

score_linear of testdata/score_linear.rx written as PyTorch eager code, timed
with one intra-op thread (torch.set_num_threads(1); the caller also sets
OPENBLAS_NUM_THREADS=1) at each batch given on the command line, or, with
no arguments, at each batch read from stdin, one per line (so that a Go
benchmark can interleave its own runs with these). Prints one line per
batch: "BATCH NS_PER_ROW". Each batch runs a warm-up, then repeats the call
until at least one second has passed and reports the mean, the statistic
of Go's b.Loop.
"""
import sys
import time

import torch


def score_linear(x, w, b):
    logits = torch.mm(x, w) + b
    for round_idx in range(4):
        if round_idx % 2 == 0:
            logits = logits * 0.5
        else:
            logits = torch.tanh(logits)
    probs = torch.softmax(logits, 1)
    classes = torch.argmax(probs, 1)
    return logits, probs, classes


def main():
    torch.set_num_threads(1)
    torch.manual_seed(1)
    args = sys.argv[1:] or (line.strip() for line in sys.stdin if line.strip())
    with torch.inference_mode():
        for arg in args:
            batch = int(arg)
            x = torch.randn(batch, 32)
            w = torch.randn(32, 8) * 0.3
            b = torch.rand(8) * 0.2 - 0.1
            for _ in range(10):
                score_linear(x, w, b)
            n, start = 0, time.perf_counter_ns()
            while True:
                score_linear(x, w, b)
                n += 1
                el = time.perf_counter_ns() - start
                if el >= 1_000_000_000:
                    break
            print(batch, el / n / batch, flush=True)


if __name__ == "__main__":
    main()
