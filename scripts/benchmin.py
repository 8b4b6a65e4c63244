"""Reduce `go test -bench` output to the minimum of each metric per benchmark.

Reads benchmark lines on stdin (several -count runs, several binaries each
prefixed by a label line "## LABEL") and prints one line per (label,
benchmark): the minimum ns/op and ns/row, and allocs/op. On a shared
machine the minimum is the run least disturbed by others.
"""

import re
import sys


def main():
    label = ""
    best = {}
    order = []
    for line in sys.stdin:
        if line.startswith("## "):
            label = line[3:].strip()
            continue
        if not line.startswith("Benchmark"):
            continue
        f = line.split()
        name = re.sub(r"-\d+$", "", f[0])
        metrics = {}
        for i in range(2, len(f) - 1, 2):
            try:
                metrics[f[i + 1]] = float(f[i])
            except ValueError:
                pass
        key = (label, name)
        if key not in best:
            best[key] = metrics
            order.append(key)
        else:
            for k, v in metrics.items():
                best[key][k] = min(best[key].get(k, v), v)
    for key in order:
        m = best[key]
        parts = [f"{k}={m[k]:.4g}" for k in ("ns/op", "ns/row", "cpu-ns/row", "cpu-ns/op", "ms/compile", "B/op", "allocs/op") if k in m]
        print(f"{key[0]:8s} {key[1]:55s} " + " ".join(parts))


if __name__ == "__main__":
    main()
