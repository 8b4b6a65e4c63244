#!/usr/bin/env bash
# bench-ort.sh: the onnxruntime executor beside ONNX Runtime's own Run,
# native, torch and PyTorch eager, on the reference functions at B = 1, 16,
# 128, 4096 and 65536, in ns per row; session creation per function.
#
# Runs package onnx/ort's BenchmarkScoring (the executor's RunResult with
# Result.Release and its plain Run, ONNX Runtime's Run on the same session
# into outputs allocated once, native and torch each with Result.Release;
# wall clock and the calling thread's CPU time) and BenchmarkSession, and
# scripts/bench_torch.py (PyTorch eager, one thread), in COUNT rounds that
# take turns, and prints one table (scripts/bench_ort_report.py) with the
# minimum of each figure over the rounds. "overhead" is the executor's time
# over ONNX Runtime's Run (the goal is at most 20% at B >= 128).
#
# Environment: COUNT (default 3), BENCHTIME (default 300ms), PYTHON
# (default /usr/bin/python3), OUT (a directory for the raw outputs; default
# a temporary one, printed), RXEQ_ORT_LIB (the library; default where
# ci/setup.sh puts it).
set -euo pipefail
cd "$(dirname "$0")/.."
count=${COUNT:-3}
benchtime=${BENCHTIME:-300ms}
python=${PYTHON:-/usr/bin/python3}
out=${OUT:-$(mktemp -d -t rxeq-bench-ort-XXXXXX)}
mkdir -p "$out"
go test -c -o "$out/ort.test" ./onnx/ort
echo "benchmarks -> $out" >&2
rm -f "$out/ort.txt" "$out/torch.txt"
for ((round = 1; round <= count; round++)); do
	echo "round $round of $count" >&2
	(cd onnx/ort && "$out/ort.test" -test.run '^$' -test.bench '^(BenchmarkScoring|BenchmarkSession)$' \
		-test.benchtime "$benchtime" -test.count 1) >>"$out/ort.txt" 2>&1
	OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1 \
		"$python" scripts/bench_torch.py 0.3 1 >>"$out/torch.txt"
done
if grep -q -- '--- SKIP' "$out/ort.txt"; then
	grep -A2 -- '--- SKIP' "$out/ort.txt" >&2
	echo "bench-ort.sh: ONNX Runtime is not installed (ci/setup.sh installs it)" >&2
	exit 2
fi
"$python" scripts/bench_ort_report.py "$out/ort.txt" "$out/torch.txt"
