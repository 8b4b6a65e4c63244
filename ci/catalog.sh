#!/usr/bin/env bash
# The README's main job: run the built-in catalog through every built-in
# executor (the oracle, the fallback interpreter, the forced-native backend,
# torch, the same C over libtorch's ATen kernels, and ONNX Runtime with and
# without its graph optimizations), native at every instruction set below
# the widest and in row tiles of 64 (native-avx2, native-sse2, native-c,
# native-tiled: compared bit for bit with native), with the source locks,
# and write the
# JSON and JUnit reports (validated against the JUnit schema); then the
# reference scenario through the Python executor examples too. setup.sh
# installs libtorch-dev and the ONNX Runtime library, so torch and the
# onnxruntime executors are named explicitly: without them this fails
# (exit 2) rather than pass on fewer.
# Usage: bash ci/catalog.sh [OUTDIR]   (default: ./rxeq-out)
set -euo pipefail
cd "$(dirname "$0")/.."
source ci/setup.sh
out=${1:-rxeq-out}
mkdir -p "$out"
go build -o "$out/rxeq" ./cmd/rxeq
"$out/rxeq" run --backend oracle,fallback,native,torch,onnxruntime,onnxruntime-noopt,native-avx2,native-sse2,native-c,native-tiled --json "$out/report.json" --junit "$out/junit.xml"
xmllint --noout --schema reports/testdata/junit-10.xsd "$out/junit.xml"
# The comparison must be able to fail: deliberately wrong executors, each
# of which has to be reported, then a canary for every rule of the
# judgement (comparison, blame, source lock, external-executor checks,
# the latter through the hostile `rxeq selftest-executor`), each of which
# has to be flagged; a missed canary fails here, naming its rule.
"$out/rxeq" selftest
echo "reports: $out/report.json $out/junit.xml"

# The reference scenario (and the runtime-error one) through the oracle,
# fallback, native and the two Python examples, external executors over
# rxeq.executor/v1 on Debian's python3 with NumPy and PyTorch.
"$out/rxeq" run --json "$out/python-report.json" --junit "$out/python-junit.xml" \
  --executor author-numpy='/usr/bin/python3 python/rxeq_executor.py examples/python/numpy_scoring.py' \
  --executor author-torch='/usr/bin/python3 python/rxeq_executor.py examples/python/torch_scoring.py' \
  scenarios/reference.rx scenarios/error.rx
xmllint --noout --schema reports/testdata/junit-10.xsd "$out/python-junit.xml"
if grep -q '"status": *"skip"' "$out/python-report.json"; then
  echo "a Python example did not serve a function of the reference scenario"; exit 1
fi
echo "reports: $out/python-report.json $out/python-junit.xml"

# The whole catalog (edge scenarios included) as generated Python: the
# program exported as a PyTorch module run eagerly and through
# torch.jit.script, and as a NumPy module (docs/python.md). Named
# explicitly, so a missing python3-torch fails here instead of passing.
"$out/rxeq" run --backend pytorch,torchscript,numpy --json "$out/generated-report.json" --junit "$out/generated-junit.xml"
xmllint --noout --schema reports/testdata/junit-10.xsd "$out/generated-junit.xml"
echo "reports: $out/generated-report.json $out/generated-junit.xml"

"$out/rxeq" run --backend tfjs-cpu,tfjs-wasm --json "$out/tfjs-report.json" --junit "$out/tfjs-junit.xml"
xmllint --noout --schema reports/testdata/junit-10.xsd "$out/tfjs-junit.xml"
echo "reports: $out/tfjs-report.json $out/tfjs-junit.xml"
