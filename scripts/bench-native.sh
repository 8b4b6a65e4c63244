#!/usr/bin/env bash
# bench-native.sh [BASE_REV]: the native scoring benchmarks and the PyTorch
# eager anchor in one run, and their ratios.
#
# Builds package native's test binary (and, given BASE_REV, the same
# benchmarks from that commit, for before/after in the same run), runs
# BenchmarkScoreLinear/MLP/Pipeline (native), BenchmarkEmptyCall,
# BenchmarkCompile and BenchmarkOps (each op alone), and
# scripts/bench_torch.py (/usr/bin/python3, torch, one thread) on the same
# functions and batches, in COUNT rounds that take turns, and prints the
# table (scripts/bench_report.py): the ratios, the sum of each function's
# ops beside its own cost and eager/4, and with BASE_REV a before/now table
# of RunInto. Go benchmarks report wall-clock ns/row and cpu-ns/row; on a
# machine shared with other jobs compare within one run, and prefer the CPU
# figures.
#
# It prints which BLAS library and which CPU capability PyTorch runs with,
# and stops (exit 2) when PyTorch's MatMul would run on the reference BLAS
# (Debian's libblas3, several times slower than the OpenBLAS that libtorch
# recommends and ci/setup.sh installs) unless RXEQ_BENCH_REFERENCE_BLAS=1.
#
# Environment: COUNT (default 3), BENCHTIME (default 300ms), PYTHON
# (default /usr/bin/python3), OUT (a directory for the raw outputs; default
# a temporary one, printed), RXEQ_BENCH_REFERENCE_BLAS (1: compare against
# the reference BLAS anyway).
set -euo pipefail
cd "$(dirname "$0")/.."
count=${COUNT:-3}
benchtime=${BENCHTIME:-300ms}
python=${PYTHON:-/usr/bin/python3}
out=${OUT:-$(mktemp -d -t rxeq-bench-XXXXXX)}
mkdir -p "$out"
benches='^(BenchmarkScoreLinear|BenchmarkScoreMLP|BenchmarkScorePipeline|BenchmarkCompile)$/^(native|native-release|native-into|native-call|cold|cold-tcc|cold-empty-cache)$'

# The anchor first: which BLAS and CPU capability PyTorch runs with, and
# no comparison against the reference BLAS unless asked for.
OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1 \
	"$python" scripts/bench_torch.py 0 0 | grep '^#' >&2

go test -c -o "$out/native.test" ./native
base_args=()
if [[ $# -ge 1 ]]; then
	wt="$out/base-src"
	git worktree add --detach "$wt" "$1" >/dev/null
	trap 'git worktree remove --force "$wt" >/dev/null 2>&1 || true' EXIT
	(cd "$wt" && go test -c -o "$out/base.test" ./native)
fi

run() { # binary output
	# A pattern with a second level skips benchmarks without sub-benchmarks:
	# the empty call and the ops run on their own.
	(cd native && "$1" -test.run '^$' -test.bench "$benches" -test.benchtime "$benchtime" -test.count 1 &&
		"$1" -test.run '^$' -test.bench '^(BenchmarkEmptyCall|BenchmarkOps)$' -test.benchtime "$benchtime" -test.count 1) >>"$2" 2>&1
}
echo "benchmarks -> $out" >&2
rm -f "$out/base.txt" "$out/native.txt" "$out/torch.txt"
if [[ -x "$out/base.test" ]]; then
	base_args=("$out/base.txt")
fi
# COUNT rounds, each of them all: the base, native and PyTorch take turns,
# so that a machine whose speed drifts over minutes (a shared host) slows
# each of them alike, and the report's minimum over the rounds compares
# like with like. One thread for PyTorch's own pool and for the BLAS and
# OpenMP pools under it (torch.set_num_threads alone leaves OpenBLAS's
# threads running).
for ((round = 1; round <= count; round++)); do
	echo "round $round of $count" >&2
	if [[ -x "$out/base.test" ]]; then
		run "$out/base.test" "$out/base.txt"
	fi
	run "$out/native.test" "$out/native.txt"
	OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1 \
		"$python" scripts/bench_torch.py 0.3 1 >>"$out/torch.txt"
done
"$python" scripts/bench_report.py "$out/native.txt" "$out/torch.txt" "${base_args[@]}"
