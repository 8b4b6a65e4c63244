"""Join the native benchmarks and the PyTorch anchor into one table.

Usage: bench_report.py NATIVE_BENCH_OUTPUT TORCH_OUTPUT [BASE_BENCH_OUTPUT]

NATIVE_BENCH_OUTPUT (and BASE_BENCH_OUTPUT, the same benchmarks built from
an earlier commit) are `go test -bench` outputs of package native, with
several -count runs; TORCH_OUTPUT is scripts/bench_torch.py's. Each metric
is the minimum over the runs (on a shared machine, the least disturbed
one); TORCH_OUTPUT may hold several runs too (bench-native.sh runs them in
turns with the native ones), and its minimum is taken the same way. Ratios
are PyTorch's time per row over native's: how many times native's
throughput is PyTorch eager's, by the wall clock and by CPU time.
"""

import re
import sys

FUNCS = {"BenchmarkScoreLinear": "score_linear", "BenchmarkScoreMLP": "score_mlp",
         "BenchmarkScorePipeline": "score_pipeline"}

# The ops of each reference function (scenarios/reference.rx) as
# BenchmarkOps measures them (native/testdata/bench_ops.rx), one entry per
# op the function runs: score_pipeline's phase is 1, so its rounds are
# Tanh, Relu, Tanh, Relu, and its second Tanh sees values already squashed.
OPS = {
    "score_linear": ["classes8", "scale8", "tanh8", "scale8", "tanh8", "softmax8", "argmax8"],
    "score_mlp": ["hidden32_tanh", "scale32", "tanh32_squashed", "scale32", "tanh32_squashed",
                  "classes8", "softmax8", "argmax8"],
    "score_pipeline": ["normalize32", "hidden32", "tanh32", "relu32", "tanh32_squashed", "relu32",
                       "classes8", "softmax8", "argmax8"],
}


def go_metrics(path):
    best = {}
    for line in open(path):
        if not line.startswith("Benchmark"):
            continue
        f = line.split()
        name = re.sub(r"-\d+$", "", f[0])
        m = best.setdefault(name, {})
        for i in range(2, len(f) - 1, 2):
            try:
                v = float(f[i])
            except ValueError:
                continue
            m[f[i + 1]] = min(m.get(f[i + 1], v), v)
    return best


def torch_metrics(path):
    out = {}
    for line in open(path):
        if line.startswith("#") or not line.strip():
            continue
        fn, batch, wall, cpu = line.split()[:4]
        key, wall, cpu = (fn, int(batch)), float(wall), float(cpu)
        if key in out:
            wall, cpu = min(wall, out[key][0]), min(cpu, out[key][1])
        out[key] = (wall, cpu)
    return out


def native_row(best, bench, batch, kind="native"):
    m = best.get(f"{bench}/{kind}/batch={batch}")
    if not m:
        return None
    return m.get("ns/row"), m.get("cpu-ns/row"), m.get("allocs/op")


def fmt(v, w=9, p=1):
    return f"{v:{w}.{p}f}" if v is not None else " " * (w - 1) + "-"


def main():
    new = go_metrics(sys.argv[1])
    tor = torch_metrics(sys.argv[2])
    base = go_metrics(sys.argv[3]) if len(sys.argv) > 3 else {}
    seen = set()
    for line in open(sys.argv[2]):
        if line.startswith(("# blas", "# cpu capability", "# torch", "# WARNING")) and line not in seen:
            seen.add(line)
            print("PyTorch anchor:", line[2:].rstrip())
    print("ns per row (min over runs); ratio = PyTorch eager / native (x = native's throughput multiple);")
    print("native = Program.Run (allocates its outputs), into = Program.RunInto (reuses them)")
    hdr = f"{'function':15s} {'batch':>6s} | {'torch':>9s} {'torch cpu':>9s} |"
    if base:
        hdr += f" {'before':>9s} {'bef cpu':>9s} |"
    hdr += f" {'native':>9s} {'nat cpu':>9s} {'allocs':>6s} | {'ratio':>7s} {'cpu ratio':>9s} |"
    hdr += f" {'into':>9s} {'into cpu':>9s} | {'ratio':>7s} {'cpu ratio':>9s}"
    print(hdr)
    for bench, fn in FUNCS.items():
        for batch in (1, 16, 128, 4096, 65536):
            n = native_row(new, bench, batch)
            t = tor.get((fn, batch))
            if not n or not t:
                continue
            line = f"{fn:15s} {batch:6d} | {fmt(t[0])} {fmt(t[1])} |"
            if base:
                b = native_row(base, bench, batch) or (None, None, None)
                line += f" {fmt(b[0])} {fmt(b[1])} |"
            ratio = t[0] / n[0] if n[0] else None
            cpu_ratio = t[1] / n[1] if n[1] else None
            line += f" {fmt(n[0])} {fmt(n[1])} {fmt(n[2], 6, 0)} | {fmt(ratio, 6, 1)}x {fmt(cpu_ratio, 8, 1)}x |"
            i = native_row(new, bench, batch, "native-into")
            if i:
                line += f" {fmt(i[0])} {fmt(i[1])} | {fmt(t[0] / i[0] if i[0] else None, 6, 1)}x {fmt(t[1] / i[1] if i[1] else None, 8, 1)}x"
            print(line)
    if base:
        print()
        print("RunInto before (BASE_REV) and now, CPU ns per row; speedup = before / now;")
        print("cpu ratio = PyTorch eager's CPU ns per row / native's, before and now")
        print(f"{'function':15s} {'batch':>6s} | {'before':>9s} {'now':>9s} {'speedup':>8s} | {'ratio before':>12s} {'ratio now':>9s}")
        for bench, fn in FUNCS.items():
            for batch in (1, 16, 128, 4096, 65536):
                b = native_row(base, bench, batch, "native-into")
                i = native_row(new, bench, batch, "native-into")
                t = tor.get((fn, batch))
                if not b or not i or not t or not b[1] or not i[1]:
                    continue
                print(f"{fn:15s} {batch:6d} | {fmt(b[1])} {fmt(i[1])} {fmt(b[1] / i[1], 7, 2)}x |"
                      f" {fmt(t[1] / b[1], 11, 1)}x {fmt(t[1] / i[1], 8, 1)}x")
    print()
    print("Run / RunInto, CPU ns per row: Run (fresh outputs), Run with Result.Release (reused outputs);")
    print("faults and collections per 1000 Runs (fresh outputs)")
    print(f"{'function':15s} {'batch':>6s} | {'Run':>9s} {'Release':>9s} {'RunInto':>9s} | {'Run/Into':>8s} {'Rel/Into':>8s} | {'faults/k':>9s} {'gc/k':>7s}")
    for bench, fn in FUNCS.items():
        for batch in (1, 16, 128, 4096, 65536):
            m = new.get(f"{bench}/native/batch={batch}", {})
            r, i = native_row(new, bench, batch), native_row(new, bench, batch, "native-into")
            e = native_row(new, bench, batch, "native-release")
            if not r or not i or not i[1]:
                continue
            rel = e[1] if e else None
            print(f"{fn:15s} {batch:6d} | {fmt(r[1])} {fmt(rel)} {fmt(i[1])} | {fmt(r[1] / i[1] if r[1] else None, 8, 2)}"
                  f" {fmt(rel / i[1] if rel else None, 8, 2)} | {fmt(m.get('faults/kcall'), 9, 0)} {fmt(m.get('gc/kcall'), 7, 1)}")
    ops_table(new, tor)
    print()
    for name in ("BenchmarkEmptyCall", "BenchmarkEmptyCall/native", "BenchmarkEmptyCall/native-into", "BenchmarkCompile/cold", "BenchmarkCompile/cold-tcc", "BenchmarkCompile/cold-empty-cache", "BenchmarkCompile/warm"):
        for label, src in (("before", base), ("native", new)):
            m = src.get(name)
            if not m:
                continue
            parts = [f"{k}={m[k]:.4g}" for k in ("ns/op", "cpu-ns/op", "ms/compile", "allocs/op") if k in m]
            print(f"{name:36s} {label:7s} " + " ".join(parts))


def ops_table(best, tor):
    """The sum of each function's ops (BenchmarkOps, CPU ns per row) beside
    its RunInto at B=4096 and a quarter of PyTorch eager's time there (the
    time per row that 4x eager's throughput allows)."""
    ops = {k.split("/", 1)[1]: m.get("cpu-ns/row") for k, m in best.items() if k.startswith("BenchmarkOps/")}
    if not ops:
        return
    print()
    print("ops: CPU ns per row of each op alone (BenchmarkOps, B=1024), their sum per function,")
    print("RunInto at B=4096 and eager/4 (the time per row that 4x PyTorch eager's throughput allows)")
    print("  " + " ".join(f"{k}={v:.1f}" for k, v in ops.items()))
    print(f"{'function':15s} | {'ops sum':>8s} {'into cpu':>9s} {'eager/4':>8s} | ops")
    for bench, fn in FUNCS.items():
        if any(ops.get(o) is None for o in OPS[fn]):
            continue
        total = sum(ops[o] for o in OPS[fn])
        i = native_row(best, bench, 4096, "native-into")
        t = tor.get((fn, 4096))
        print(f"{fn:15s} | {fmt(total, 8)} {fmt(i[1] if i else None)} {fmt(t[1] / 4 if t else None, 8)} | "
              + " + ".join(OPS[fn]))


if __name__ == "__main__":
    main()
