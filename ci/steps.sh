#!/usr/bin/env bash
# Named steps for the CI scripts, sourced after `set -euo pipefail`. A
# script calls ci_begin NAME once, ci_step "what" before each step and
# ci_end at the end, which prints one summary line, the last of the
# script's output:
#
#   ci/test.sh: PASS: 9 steps in 4m12s: go mod tidy, gofmt, …
#
# A command that fails ends the script (set -e); the EXIT trap then says
# which step failed, as the last line:
#
#   ci/test.sh: FAIL: step "go vet ./..." failed (exit 1) after 1m3s; passed before it: go mod tidy, gofmt
#
# ci_note TEXT adds a note to the current step's name in the summary
# ("go test ./... (31 packages)").

ci_begin() {
  ci_name=$1
  ci_start=$SECONDS
  ci_current=""
  ci_passed=()
  trap ci_on_exit EXIT
}

# ci_elapsed prints the time since ci_begin, like 4m12s or 37s.
ci_elapsed() {
  local s=$((SECONDS - ci_start))
  if [ "$s" -ge 60 ]; then echo "$((s / 60))m$((s % 60))s"; else echo "${s}s"; fi
}

# ci_list prints its arguments joined by ", " (or "none").
ci_list() {
  if [ $# -eq 0 ]; then echo "none"; return; fi
  local out=$1
  shift
  for s in "$@"; do out="$out, $s"; done
  echo "$out"
}

ci_step() {
  if [ -n "$ci_current" ]; then ci_passed+=("$ci_current"); fi
  ci_current=$1
  echo "== $1"
}

ci_note() {
  ci_current="$ci_current ($1)"
}

ci_end() {
  if [ -n "$ci_current" ]; then ci_passed+=("$ci_current"); fi
  ci_current=""
  echo "$ci_name: PASS: ${#ci_passed[@]} steps in $(ci_elapsed): $(ci_list "${ci_passed[@]}")"
}

ci_on_exit() {
  local rc=$?
  if [ "$rc" -ne 0 ]; then
    local where="before the first step"
    [ -z "$ci_current" ] || where="step \"$ci_current\" failed"
    echo "$ci_name: FAIL: $where (exit $rc) after $(ci_elapsed); passed before it: $(ci_list "${ci_passed[@]}")"
  elif [ -n "$ci_current" ]; then
    echo "$ci_name: FAIL: exited during step \"$ci_current\" without ci_end"
  fi
}
