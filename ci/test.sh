#!/usr/bin/env bash
# The README's test command: installs what the tests need on a fresh Debian
# machine (a C and a C++ compiler, libtorch-dev, xmllint, staticcheck), then
# runs lint and every ginkgo suite, native and torch ones included, under
# plain `go test`. Its last line says what passed and how long it took,
# or which step failed (ci/steps.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
source ci/steps.sh
ci_begin ci/test.sh

ci_step "setup"
source ci/setup.sh
# setup.sh installed libtorch-dev: a spec that needs it fails, not skips.
export RXEQ_REQUIRE_TORCH=1
# and the ONNX Runtime library: its specs fail, not skip, without it.
export RXEQ_REQUIRE_ORT=1
# and node with the TensorFlow.js packages: the tfjs specs fail, not skip.
export RXEQ_REQUIRE_TFJS=1
# The Go tools and test binaries collect less often (rxeq itself runs at
# GOGC=400 unless told otherwise, cmd/rxeq/gc.go): go test -count=1 of
# fuzz, pyexport, oracle and compare took 114.6 s of CPU at GOGC=100 and
# 103.0 s at 400, on a machine with memory to spare.
export GOGC=400

STATICCHECK_VERSION=v0.8.2
if ! staticcheck -version 2>/dev/null | grep -q "${STATICCHECK_VERSION#v}"; then
  ci_step "install staticcheck ${STATICCHECK_VERSION}"
  go install "honnef.co/go/tools/cmd/staticcheck@${STATICCHECK_VERSION}"
fi

# go.mod and go.sum must not change.
ci_step "go mod tidy"
cp go.mod /tmp/rxeq-go.mod.$$ && cp go.sum /tmp/rxeq-go.sum.$$
go mod tidy
if ! cmp -s go.mod /tmp/rxeq-go.mod.$$ || ! cmp -s go.sum /tmp/rxeq-go.sum.$$; then
  echo "go mod tidy changed go.mod or go.sum:"; git diff -- go.mod go.sum || true
  mv /tmp/rxeq-go.mod.$$ go.mod; mv /tmp/rxeq-go.sum.$$ go.sum; exit 1
fi
rm -f /tmp/rxeq-go.mod.$$ /tmp/rxeq-go.sum.$$

ci_step "gofmt -l"
unformatted=$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))
if [ -n "$unformatted" ]; then
  echo "gofmt would change:"; echo "$unformatted"; exit 1
fi
ci_step "go vet ./..."
go vet ./...
ci_step "staticcheck ./..."
staticcheck ./...
# rxeq built without cgo runs no native or torch code and says so. The
# e2e spec of cmd/rxeq that builds such a binary and runs it on the
# catalog runs in go test ./... below. RXEQ_REQUIRE_TORCH is about a
# missing libtorch; such a build cannot run torch whatever is installed.
ci_step "CGO_ENABLED=0 go vet ./..."
CGO_ENABLED=0 go vet ./...
# go test's own vet pass (-vet, a subset of go vet's analyzers) is off in
# the two go test steps: go vet ./... ran every analyzer on the same
# packages, tests included, in each of the two configurations above.
ci_step "CGO_ENABLED=0 go test (native harness isolate rxginkgo)"
env -u RXEQ_REQUIRE_TORCH -u RXEQ_REQUIRE_ORT CGO_ENABLED=0 go test -count=1 -vet=off ./native ./harness ./isolate ./rxginkgo
ci_step "go test ./..."
log=$(mktemp)
go test -count=1 -vet=off -timeout 30m ./... 2>&1 | tee "$log"
ci_note "$(grep -c '^ok' "$log") packages"
rm -f "$log"
# The judgement can fail: the mutants on the catalog and a canary for
# every rule (docs/comparison.md#the-rules-and-their-canaries), from a
# fresh `go run`, the hostile external executor being rxeq itself.
ci_step "rxeq selftest (mutants and canaries)"
go run ./cmd/rxeq selftest
# ONNX's node tests (libonnx-testdata, installed by setup.sh) imported and
# run through the executors, ONNX Runtime at both levels included (which
# also runs ONNX's own models; a model it differs on is printed as
# "differs:", documented in docs/import.md) and the generated Python ones;
# a test that stops agreeing is named and fails the step.
ci_step "rxeq conformance onnx"
go run ./cmd/rxeq conformance onnx --backend fallback,native,torch,onnxruntime,onnxruntime-noopt,pytorch,torchscript,numpy
# The committed corpora were replayed by go test above. The budgets are
# counts of inputs, not durations: with a duration, Go 1.26's fuzz
# coordinator can report its own deadline as "context deadline exceeded"
# and fail a run that found nothing (golang/go#75804, fixed in Go 1.27).
# Each count takes some 5 to 30 seconds on two cores. A new interesting
# input is minimized for 2000 runs at most (-fuzzminimizetime; Go's
# default is 60 s per input, and a fresh clone's FuzzParse once spent a
# minute at 0 execs/s minimizing); a crasher is saved either way.
ci_step "fuzz FuzzParse 20000 inputs"
go test ./program -run '^$' -fuzz FuzzParse -fuzztime 20000x -fuzzminimizetime 2000x
ci_step "fuzz FuzzUnmarshalModel 20000 inputs"
go test ./onnx/internal/onnxpb -run '^$' -fuzz FuzzUnmarshalModel -fuzztime 20000x -fuzzminimizetime 2000x
# Any bytes given to rxeq import: an ErrImport or a program that checks,
# never a panic (some 5 seconds after the build).
ci_step "fuzz FuzzImport 50000 inputs"
go test ./onnx -run '^$' -fuzz FuzzImport -fuzztime 50000x -fuzzminimizetime 2000x
ci_step "fuzz FuzzCompare 200000 inputs"
go test ./compare -run '^$' -fuzz FuzzCompare -fuzztime 200000x -fuzzminimizetime 2000x
# Random programs, oracle vs fallback, driven by Go's fuzzer.
ci_step "fuzz FuzzDifferential 20000 inputs"
go test ./fuzz -run '^$' -fuzz FuzzDifferential -fuzztime 20000x -fuzzminimizetime 2000x
# Random programs through all four executors, native and torch code in
# workers. Fixed seeds, so a finding here reproduces with the command it
# prints. Edge-seeking programs (one in 8 by default) are left to the
# next step, whose findings are held against the ledger per category:
# here torch's known signed zeros would surface through further ops
# (Sqrt(1.0 / Maximum(-x, x)) is NaN against +Inf at seed 17).
ci_step "rxeq fuzz --seed 1 --count 30, four executors"
out=$(mktemp -d)
go run ./cmd/rxeq fuzz --seed 1 --count 30 --exclude edges --executors oracle,fallback,native,torch --out "$out/findings" \
  || { cat "$out"/findings/*/*.reduced.rx 2>/dev/null; exit 1; }
rm -rf "$out"
# Edge-seeking programs through every framework executor: torch, ONNX
# Runtime at both levels, and the Python executors (pytorch, torchscript,
# numpy). Every finding must match an entry of ledger/known.json (xfail),
# and every entry's own program must still fail (--strict: an xpass
# fails): a new discrepancy fails CI with its reproducer's path. The
# reduction is bounded by a count of candidates, not a duration, so that
# what it saves does not depend on the machine's load. Seeds 20 to 43 meet
# ONNX Runtime's ReduceSum address dependence (22), ArgMax NaN (27) and
# Maximum(+0, -0) (43); every entry's own program runs too (65 of the 66
# have one). About 25 seconds on two idle cores.
ci_step "rxeq fuzz --edges --seed 20 --count 24 through the framework executors: findings in the ledger"
out=$(mktemp -d)
go run ./cmd/rxeq fuzz --edges --seed 20 --count 24 --executors oracle,torch,onnxruntime,onnxruntime-noopt,pytorch,torchscript,numpy --reduce-tests 6 --reduce-time 0 --strict \
  --out "$out/findings" --json "$out/edges.json" \
  || { grep -l '"status": "new"' "$out"/findings/*/finding.json 2>/dev/null \
         | while read -r f; do echo "new finding, reproducer: $(dirname "$f")/$(sed -n 's/.*"reduced": "\(.*\)".*/\1/p' "$f")"; done
       exit 1; }
rm -rf "$out"
# The same edge-seeking seeds through TensorFlow.js's two backends, in a
# step of their own (node is a third runtime to start under load): seeds
# 20 to 43 meet the wasm backend's Maximum NaN (seed 21), tf.argMax's NaN
# (29) and tf.max's signed zeros (38), each a ledger entry; every tfjs
# entry's own program runs too. About 20 seconds on two loaded cores.
ci_step "rxeq fuzz --edges --seed 20 --count 24 through tfjs-cpu and tfjs-wasm: findings in the ledger"
out=$(mktemp -d)
go run ./cmd/rxeq fuzz --edges --seed 20 --count 24 --executors oracle,tfjs-cpu,tfjs-wasm --reduce-tests 6 --reduce-time 0 --strict \
  --out "$out/findings" --json "$out/edges.json" \
  || { grep -l '"status": "new"' "$out"/findings/*/finding.json 2>/dev/null \
         | while read -r f; do echo "new finding, reproducer: $(dirname "$f")/$(sed -n 's/.*"repro": "\(.*\)".*/\1/p' "$f")"; done
       exit 1; }
rm -rf "$out"
ci_end
