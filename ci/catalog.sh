#!/usr/bin/env bash
# The README's main job: run the built-in catalog through the oracle, the
# fallback interpreter and the forced-native backend, with the source locks,
# and write the JSON and JUnit reports (validated against the JUnit schema).
# Usage: bash ci/catalog.sh [OUTDIR]   (default: ./rxeq-out)
set -euo pipefail
cd "$(dirname "$0")/.."
source ci/setup.sh
out=${1:-rxeq-out}
mkdir -p "$out"
go build -o "$out/rxeq" ./cmd/rxeq
"$out/rxeq" run --json "$out/report.json" --junit "$out/junit.xml"
xmllint --noout --schema reports/testdata/junit-10.xsd "$out/junit.xml"
# The comparison must be able to fail: deliberately wrong executors, each
# of which has to be reported.
"$out/rxeq" selftest
echo "reports: $out/report.json $out/junit.xml"
