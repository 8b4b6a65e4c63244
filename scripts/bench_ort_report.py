"""Join the ONNX Runtime benchmarks and the PyTorch anchor into one table.

Usage: bench_ort_report.py ORT_BENCH_OUTPUT TORCH_OUTPUT

ORT_BENCH_OUTPUT is `go test -bench '^(BenchmarkScoring|BenchmarkSession)$'`
output of package onnx/ort (several runs); TORCH_OUTPUT is
scripts/bench_torch.py's. Each figure is the minimum over the runs (on a
shared machine, the least disturbed one). The overheads are computed from
those minimums: the executor's time per row over ONNX Runtime's own Run.
"""

import re
import sys

# The benchmark and PyTorch outputs are read as scripts/bench_report.py
# reads them (the minimum of each figure over the rounds).
from bench_report import go_metrics, torch_metrics

COLS = [("ns/row", "ort exec"), ("fresh-ns/row", "ort Run()"), ("ort-ns/row", "ORT Run"),
        ("native-ns/row", "native"), ("torch-ns/row", "torch"), ("eager", "eager")]


def pct(a, b):
    return f"{100 * (a - b) / b:+.0f}%" if a and b else "-"


def main():
    go, eager = go_metrics(sys.argv[1]), torch_metrics(sys.argv[2])
    print("ns per row, minimum over the rounds (wall clock / CPU time of the calling thread);")
    print("exec = RunResult + Release, Run() = fresh outputs, ORT Run = ONNX Runtime's own Run")
    head = ["function", "B"] + [c[1] for c in COLS] + ["overhead", "cpu overhead", "Run() overhead"]
    rows = [head]
    for name, m in sorted(go.items()):
        mm = re.match(r"BenchmarkScoring/(\w+)/batch=(\d+)$", name)
        if not mm:
            continue
        fn, batch = mm.group(1), int(mm.group(2))
        cells = [fn, str(batch)]
        for key, _ in COLS:
            if key == "eager":
                e = eager.get((fn, batch))
                cells.append(f"{e[0]:.0f} / {e[1]:.0f}" if e else "-")
                continue
            w, c = m.get(key), m.get(key.replace("ns/row", "cpu-ns/row"))
            cells.append(f"{w:.0f} / {c:.0f}" if w is not None and c is not None else "-")
        cells.append(pct(m.get("ns/row"), m.get("ort-ns/row")))
        cells.append(pct(m.get("cpu-ns/row"), m.get("ort-cpu-ns/row")))
        cells.append(pct(m.get("fresh-ns/row"), m.get("ort-ns/row")))
        rows.append(cells)
    rows[1:] = sorted(rows[1:], key=lambda r: (r[0], int(r[1])))
    widths = [max(len(r[i]) for r in rows) for i in range(len(head))]
    for r in rows:
        print("  ".join(c.rjust(w) for c, w in zip(r, widths)))
    print()
    print("session creation, ms per function (minimum over the rounds)")
    for name, m in sorted(go.items()):
        mm = re.match(r"BenchmarkSession/(\w+)/(\w+)$", name)
        if mm and "ms/session" in m:
            print(f"  {mm.group(1):16s} {mm.group(2):6s} {m['ms/session']:.2f}")


if __name__ == "__main__":
    main()
