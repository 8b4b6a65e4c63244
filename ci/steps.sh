#!/usr/bin/env bash
# Named steps for the CI scripts, sourced after `set -euo pipefail`. A
# script calls ci_begin NAME once, ci_step "what" before each step and
# ci_end at the end, which prints one summary line, the last of the
# script's output, with each step's wall time and CPU time (user + system,
# of the step's commands and everything they ran):
#
#   ci/test.sh: PASS: 9 steps in 4m12s (402s cpu): go mod tidy 2s/1s cpu, gofmt 1s/1s cpu, …
#
# The CPU time says where the work goes even on a loaded machine, where
# the wall time says mostly how loaded it was. A command that fails ends
# the script (set -e); the EXIT trap then says which step failed, as the
# last line:
#
#   ci/test.sh: FAIL: step "go vet ./..." failed (exit 1) after 1m3s (70s cpu); passed before it: go mod tidy 2s/1s cpu, gofmt 1s/1s cpu
#
# ci_note TEXT adds a note to the current step's name in the summary
# ("go test ./... (31 packages)").

ci_begin() {
  ci_name=$1
  ci_start=$SECONDS
  ci_start_cpu=$(ci_cpu)
  ci_current=""
  ci_passed=()
  trap ci_on_exit EXIT
}

# ci_cpu prints the CPU time in milliseconds (user + system) used so far
# by this shell and by every child it has waited for, which includes
# their own waited-for children: what bash's `times` reports, read from
# /proc because `times` in a command substitution would report the
# subshell's. 0 where there is no /proc.
ci_cpu() {
  local stat f
  if ! read -r stat </proc/$$/stat 2>/dev/null; then echo 0; return; fi
  # Fields after the command name: state is field 3, utime 14, stime 15,
  # cutime 16, cstime 17, in clock ticks.
  read -r -a f <<<"${stat##*) }"
  : "${ci_hz:=$(getconf CLK_TCK 2>/dev/null || echo 100)}"
  echo $(((f[11] + f[12] + f[13] + f[14]) * 1000 / ci_hz))
}

# ci_duration SECONDS prints a duration like 4m12s or 37s.
ci_duration() {
  if [ "$1" -ge 60 ]; then echo "$(($1 / 60))m$(($1 % 60))s"; else echo "$1s"; fi
}

# ci_elapsed prints the time since ci_begin and the CPU time used since,
# like "4m12s (402s cpu)".
ci_elapsed() {
  echo "$(ci_duration $((SECONDS - ci_start))) ($((($(ci_cpu) - ci_start_cpu + 500) / 1000))s cpu)"
}

# ci_list prints its arguments joined by ", " (or "none").
ci_list() {
  if [ $# -eq 0 ]; then echo "none"; return; fi
  local out=$1
  shift
  for s in "$@"; do out="$out, $s"; done
  echo "$out"
}

# ci_close ends the current step, if any: its name, note and times go to
# ci_passed.
ci_close() {
  if [ -n "$ci_current" ]; then
    local cpu=$(($(ci_cpu) - ci_step_cpu))
    ci_passed+=("$ci_current $(ci_duration $((SECONDS - ci_step_start)))/$(((cpu + 500) / 1000))s cpu")
  fi
  ci_current=""
}

ci_step() {
  ci_close
  ci_current=$1
  ci_step_start=$SECONDS
  ci_step_cpu=$(ci_cpu)
  echo "== $1"
}

ci_note() {
  ci_current="$ci_current ($1)"
}

ci_end() {
  ci_close
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
