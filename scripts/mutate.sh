#!/usr/bin/env bash
# Mutation run: how many realistic one-line bugs rxeq's own end-to-end
# channels catch. Each mutant is a patch in scripts/mutants/ (a small
# `git diff` with a header saying where and what). For the unpatched tree
# (the baseline) and then for each patch, one at a time, this script:
#
#   1. exports the base commit (default HEAD) to a scratch directory under
#      /tmp (git archive: no worktree, nothing in the repository changes),
#      applies the patch (git apply) and builds rxeq (go build ./cmd/rxeq);
#   2. runs the three end-to-end channels there, from the tree's root as
#      ci/catalog.sh does:
#        catalog   the three `rxeq run` commands of ci/catalog.sh: every
#                  built-in executor (oracle, fallback, native, torch,
#                  onnxruntime, onnxruntime-noopt) over the catalog with
#                  the locks; the reference and error scenarios through
#                  the two Python executor examples; the catalog as
#                  generated Python (pytorch, torchscript, numpy);
#        selftest  `rxeq selftest`;
#        fuzz      `rxeq fuzz --time 30s` with the default executors (each
#                  finding's reduction bounded by --reduce-time 10s, which
#                  changes the run's length, not what it finds);
#   3. records per channel whether the mutant was caught.
#
# A channel catches a mutant when it fails where the baseline does not:
#   catalog   a command exits with a status other than 0 and 1 (usage,
#             crash, timeout), or its JSON report holds a failed or
#             erroring case or lock that the baseline's does not (a case
#             whose executor did not start because the machine was too
#             loaded for it to say hello within a minute is listed, not
#             counted);
#   selftest  it exits non-zero (the baseline must pass);
#   fuzz      it exits with a status other than 0 and 1, or reports a new
#             finding whose (executor, category) the baseline's 30 s do not
#             show (the baseline's pairs are noise the mutant cannot be
#             credited with).
# A patch that does not apply or does not build is reported as such and
# counted in neither column.
#
# Prints a markdown table (also written to DIR/RESULTS.md, with
# DIR/results.tsv and each run's logs under DIR/NAME/). -r judges the runs
# in DIR again from their logs and prints the table of those finished. Exits 0 when the
# run completes, whatever was caught; 2 on bad usage or when the baseline
# does not build.
#
# Usage: scripts/mutate.sh [-o DIR] [-b REV] [-t SECONDS] [-j N] [-B DIR] [-k] [PATCH...]
#        scripts/mutate.sh -r [-o DIR]
#   -o DIR       results directory (default /tmp/mut-results; emptied first)
#   -b REV       the commit to mutate (default HEAD of this repository)
#   -t SECONDS   fuzz time per mutant run (default 30; the baseline's is
#                three times that)
#   -j N         mutants run at once (default 1; the baseline runs alone)
#   -k           keep each scratch tree (default: removed after its run)
#   -B DIR       take the baseline from DIR (another run's DIR/baseline, of
#                the same commit) and its build cache instead of measuring
#                it again; with it,
#                two runs can share a set of mutants (e.g. one each from
#                either end of the list, each its own -o)
#   -r           only render DIR's table from the mutants measured so far
#                (of a run still going or stopped: marked PARTIAL)
#   PATCH...     patch files (default: scripts/mutants/*.patch)
# Needs what ci/setup.sh installs (libtorch, ONNX Runtime, python3-torch,
# numpy). A mutant takes 1 to 4 minutes (one that changes the C runtime
# rebuilds it); run the whole set under nohup, e.g.
#   nohup scripts/mutate.sh -o /tmp/mut-results > /tmp/mut.log 2>&1 &
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
out=/tmp/mut-results
base=HEAD
fuzz_secs=30
keep=0
jobs=1
render_only=0
reuse_base=""
while getopts "o:b:t:j:B:krh" opt; do
  case $opt in
    o) out=$OPTARG ;;
    b) base=$OPTARG ;;
    t) fuzz_secs=$OPTARG ;;
    j) jobs=$OPTARG ;;
    k) keep=1 ;;
    B) reuse_base=$OPTARG ;;
    r) render_only=1 ;;
    h) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "usage: $0 [-o DIR] [-b REV] [-t SECONDS] [-j N] [-B DIR] [-k] [PATCH...] | -r [-o DIR]" >&2; exit 2 ;;
  esac
done
shift $((OPTIND - 1))
case $fuzz_secs$jobs in
  '' | *[!0-9]*) echo "-t and -j take whole numbers" >&2; exit 2 ;;
esac
fuzz_time=${fuzz_secs}s
if [ $# -gt 0 ]; then
  patches=("$@")
else
  patches=("$root"/scripts/mutants/*.patch)
fi
for p in "${patches[@]}"; do
  [ -f "$p" ] || { echo "no such patch: $p" >&2; exit 2; }
done
commit=$(git -C "$root" rev-parse --verify "$base^{commit}") || { echo "not a commit: $base" >&2; exit 2; }
export PATH="$PATH:/usr/local/go/bin:$(go env GOPATH 2>/dev/null || echo "$HOME/go")/bin"
for tool in go jq git timeout; do
  command -v "$tool" >/dev/null || { echo "$tool is not installed" >&2; exit 2; }
done

# render: $out/results.tsv from the rows written so far (in the order of
# $out/order), and the markdown table, to stdout and $out/RESULTS.md. A
# run still going, or one that was stopped, renders as partial.
render() {
  local commit fuzz_time started total done_n
  read -r commit fuzz_time started <"$out/meta"
  printf 'mutant\tstatus\tcatalog\tselftest\tfuzz\tany\tdetail\taimed\n' >"$out/results.tsv"
  total=0
  while read -r name; do
    total=$((total + 1))
    [ -f "$out/$name/row.tsv" ] && cat "$out/$name/row.tsv" >>"$out/results.tsv"
  done <"$out/order"
  done_n=$(($(wc -l <"$out/results.tsv") - 1))
  {
    echo "Mutation run of \`$commit\` (started $(date -u -d "@$started" '+%Y-%m-%d %H:%M UTC'), $(($(date +%s) - started)) s so far; fuzz $fuzz_time per mutant)."
    [ "$done_n" -lt "$total" ] && echo "**PARTIAL: $done_n of $total mutants measured.**"
    echo
    echo "| mutant | catalog | selftest | fuzz | any | issue 30 work aimed at it | what the channels saw |"
    echo "| --- | --- | --- | --- | --- | --- | --- |"
    # awk, not read: a tab-separated line may have empty fields.
    awk -F'\t' 'NR > 1 {
      gsub(/\|/, "\\|", $7)
      if ($2 != "built") printf "| %s | %s | | | | %s | |\n", $1, $2, $8
      else printf "| %s | %s | %s | %s | **%s** | %s | %s |\n", $1, $3, $4, $5, $6, $8, $7
    }' "$out/results.tsv"
    awk -F'\t' 'NR > 1 && $2 == "built" { n++; for (c = 3; c <= 6; c++) if ($c == "caught") k[c]++ }
      END { printf "| **caught, of %d built** | %d | %d | %d | **%d** | | |\n", n, k[3], k[4], k[5], k[6] }' "$out/results.tsv"
  } | tee "$out/RESULTS.md"
}

# failed_cases REPORT prints one line per failed or erroring case and lock.
# An executor that did not start because it did not say hello in time
# (torch's import can take a minute on a loaded machine) is not counted.
startup='test("did not start: .*waiting for its hello")'
failed_cases() {
  jq -r "(.cases[]? | select((.status == \"fail\" or .status == \"error\") and ((.error // \"\") | $startup | not))
            | \"case \\(.scenario)/\\(.function)/b\\(.batch)/\\(.executor) \\(.status)\"),
         (.locks[]? | select(.status != \"pass\") | \"lock \\(.scenario)/\\(.function) \\(.status)\")" "$1" | sort -u
}

# flaky_cases REPORT prints the cases failed_cases leaves out.
flaky_cases() {
  jq -r "(.cases[]? | select((.status == \"fail\" or .status == \"error\") and ((.error // \"\") | $startup))
            | \"case \\(.scenario)/\\(.function)/b\\(.batch)/\\(.executor) \\(.status)\")" "$1" | sort -u
}

# new_findings FUZZJSON prints "executor category" of each new finding.
new_findings() {
  jq -r '.distinct[]? | select(.status == "new") | "\(.executor) \(.category)"' "$1" | sort -u
}

# run_channels DIR TREE [FUZZTIME]: the three channels in TREE, logs and
# verdicts in DIR (catalog.failed, fuzz.pairs, *.rc).
run_channels() {
  local d=$1 tree=$2
  (
    cd "$tree"
    set +e
    timeout 900 ./rxeq run --backend oracle,fallback,native,torch,onnxruntime,onnxruntime-noopt \
      --json "$d/catalog-main.json" >"$d/catalog-main.out" 2>&1
    echo $? >"$d/catalog-main.rc"
    timeout 900 ./rxeq run --json "$d/catalog-python.json" \
      --executor author-numpy='/usr/bin/python3 python/rxeq_executor.py examples/python/numpy_scoring.py' \
      --executor author-torch='/usr/bin/python3 python/rxeq_executor.py examples/python/torch_scoring.py' \
      scenarios/reference.rx scenarios/error.rx >"$d/catalog-python.out" 2>&1
    echo $? >"$d/catalog-python.rc"
    timeout 900 ./rxeq run --backend pytorch,torchscript,numpy \
      --json "$d/catalog-generated.json" >"$d/catalog-generated.out" 2>&1
    echo $? >"$d/catalog-generated.rc"
    timeout 300 ./rxeq selftest >"$d/selftest.out" 2>&1
    echo $? >"$d/selftest.rc"
    # Without RXEQ_CACHE a fuzz session builds its programs in a private
    # scratch directory (only the runtime comes from RXEQ_RUNTIME_CACHE).
    timeout 900 env -u RXEQ_CACHE ./rxeq fuzz --time "${3:-$fuzz_time}" --reduce-time 10s --out "$d/findings" \
      --json "$d/fuzz.json" >"$d/fuzz.out" 2>&1
    echo $? >"$d/fuzz.rc"
  )
  collect "$d"
}

# collect DIR: the channels' outcomes in DIR, from their exit statuses and
# reports: catalog.failed (failed cases and locks, and commands that did
# not finish), catalog.flaky (cases that failed only because the machine
# was too loaded for an executor to start: a Python executor that does not
# say hello within a minute), fuzz.pairs.
collect() {
  local d=$1 rc part
  : >"$d/catalog.failed"
  : >"$d/catalog.flaky"
  for part in main python generated; do
    rc=$(cat "$d/catalog-$part.rc")
    if [ "$rc" -gt 1 ]; then
      echo "$part exit $rc" >>"$d/catalog.failed"
    elif [ -s "$d/catalog-$part.json" ]; then
      failed_cases "$d/catalog-$part.json" >>"$d/catalog.failed" || echo "$part report unreadable" >>"$d/catalog.failed"
      flaky_cases "$d/catalog-$part.json" >>"$d/catalog.flaky" || true
    elif [ "$rc" -ne 0 ]; then
      echo "$part exit $rc without a report" >>"$d/catalog.failed"
    fi
  done
  sort -u -o "$d/catalog.failed" "$d/catalog.failed"
  if [ -s "$d/fuzz.json" ]; then
    new_findings "$d/fuzz.json" >"$d/fuzz.pairs" || echo "fuzz report-unreadable" >"$d/fuzz.pairs"
  else
    : >"$d/fuzz.pairs"
  fi
}

# prepare NAME PATCH: the scratch tree with PATCH applied ("" for none) and
# rxeq built; prints the tree's path, or fails with the reason in
# $out/NAME/status.
prepare() {
  local name=$1 patch=$2 tree
  tree=$(mktemp -d /tmp/mut-tree-XXXXXX)
  git -C "$root" archive --format=tar "$commit" | tar -x -C "$tree"
  if [ -n "$patch" ] && ! (cd "$tree" && git apply --verbose "$patch") >"$out/$name/apply.log" 2>&1; then
    echo "does not apply" >"$out/$name/status"
    rm -rf "$tree"
    return 1
  fi
  # rxeq compiles its runtime's C and C++ when it first needs them; a
  # runtime that does not compile would make native or torch unavailable
  # and every channel fail, which is not a catch. So the runtime files a
  # patch touches are compiled here first (for real: -fsyntax-only misses
  # an unused function), with the warnings the runtime build makes errors.
  local f ok=1
  for f in $( [ -n "$patch" ] && sed -n 's|^+++ b/\(native/runtime/csrc/.*\)$|\1|p' "$patch"); do
    case $f in
      *.c) (cd "$tree/$(dirname "$f")" && cc -std=c11 -O0 -fPIC -ffp-contract=off -Wall -Wextra -Werror \
              -c -o /dev/null "$(basename "$f")") ;;
      *.cc) (cd "$tree/$(dirname "$f")" && c++ -std=c++17 -O0 -fPIC -ffp-contract=off -Wall -Werror \
               -isystem /usr/include/torch/csrc/api/include -c -o /dev/null "$(basename "$f")") ;;
    esac >>"$out/$name/build.log" 2>&1 || ok=0
  done
  if [ "$ok" = 0 ] || ! (cd "$tree" && go build -o rxeq ./cmd/rxeq) >>"$out/$name/build.log" 2>&1; then
    echo "does not build" >"$out/$name/status"
    rm -rf "$tree"
    return 1
  fi
  echo "$tree"
}

cleanup_tree() {
  if [ "$keep" = 1 ]; then
    echo "  kept $1"
  else
    rm -rf "$1"
  fi
}

# judge NAME PATCH: the mutant's row of the results ($out/NAME/row.tsv)
# from its collected outcomes against the baseline's.
judge() {
  local name=$1 patch=$2 d=$out/$1 aimed cat_v self_v fuzz_v frc any detail n
  # The patch header's "# issue-30:" line: the work meant to catch it.
  aimed=$(sed -n 's/^# issue-30: //p' "$patch" | head -1)
  if [ "$(cat "$d/status")" != built ]; then
    printf '%s\t%s\t-\t-\t-\t-\t\t%s\n' "$name" "$(cat "$d/status")" "$aimed" >"$d/row.tsv"
    return
  fi
  # Caught: what the mutant's channel shows beyond the baseline's.
  comm -13 "$out/baseline/catalog.failed" "$d/catalog.failed" >"$d/catalog.new"
  comm -13 "$out/baseline/fuzz.pairs" "$d/fuzz.pairs" >"$d/fuzz.new"
  cat_v=escaped self_v=escaped fuzz_v=escaped
  [ -s "$d/catalog.new" ] && cat_v=caught
  [ "$(cat "$d/selftest.rc")" != 0 ] && self_v=caught
  frc=$(cat "$d/fuzz.rc")
  if [ -s "$d/fuzz.new" ] || [ "$frc" -gt 1 ]; then fuzz_v=caught; fi
  any=escaped
  [ "$cat_v$self_v$fuzz_v" != escapedescapedescaped ] && any=caught
  detail=""
  if [ -s "$d/catalog.new" ]; then
    n=$(wc -l <"$d/catalog.new")
    detail="catalog: $(head -3 "$d/catalog.new" | tr '\n' ';' | sed 's/;$//')"
    [ "$n" -gt 3 ] && detail="$detail (+$((n - 3)) more)"
  fi
  [ "$(cat "$d/selftest.rc")" != 0 ] && detail="$detail${detail:+ / }selftest: $(tail -1 "$d/selftest.out")"
  [ "$frc" -gt 1 ] && detail="$detail${detail:+ / }fuzz exit $frc"
  [ -s "$d/fuzz.new" ] && detail="$detail${detail:+ / }fuzz: $(tr '\n' ';' <"$d/fuzz.new" | sed 's/;$//')"
  [ -s "$d/catalog.flaky" ] && detail="$detail${detail:+ / }($(wc -l <"$d/catalog.flaky") catalog cases not counted: an executor did not start in time)"
  printf '%s\tbuilt\t%s\t%s\t%s\t%s\t%s\t%s\n' "$name" "$cat_v" "$self_v" "$fuzz_v" "$any" "$detail" "$aimed" >"$d/row.tsv"
}

# run_one PATCH: the mutant's runs and its row of the results.
run_one() {
  local patch=$1 name d t0 tree
  name=$(basename "$patch" .patch)
  d=$out/$name
  mkdir -p "$d"
  cp "$patch" "$d/mutant.patch"
  t0=$(date +%s)
  if tree=$(prepare "$name" "$patch"); then
    run_channels "$d" "$tree"
    cleanup_tree "$tree"
    echo "built" >"$d/status"
  fi
  judge "$name" "$patch"
  echo "== $name: $(cut -f2-5 "$d/row.tsv" | tr '\t' ' ') ($(($(date +%s) - t0)) s)"
}

if [ "$render_only" = 1 ]; then
  [ -f "$out/meta" ] || { echo "$out holds no mutation run" >&2; exit 2; }
  # Judged again from what each finished run left (so that a change in
  # how outcomes are judged applies to runs already made).
  collect "$out/baseline"
  while read -r name; do
    d=$out/$name
    if [ -f "$d/status" ] && [ -f "$d/mutant.patch" ]; then
      [ "$(cat "$d/status")" = built ] && collect "$d"
      judge "$name" "$d/mutant.patch"
    fi
  done <"$out/order"
  render
  exit 0
fi

cache=$out/cache
if [ -n "$reuse_base" ]; then
  reuse_base=$(cd "$reuse_base" && pwd)
  cache=$(dirname "$reuse_base")/cache # content-addressed: safe to share
fi
rm -rf "$out"
mkdir -p "$out" "$cache"
# The runtime libraries (and the catalog's programs) build into a cache of
# the run's own, shared by its runs: content-addressed, so a mutant that
# does not touch the runtime reuses the baseline's build, and the user's
# cache is left alone. Fuzz sessions keep their programs in a private
# directory as usual (only the runtime comes from here).
export RXEQ_CACHE="$cache" RXEQ_RUNTIME_CACHE="$cache"

echo "== mutation run of $commit ($(git -C "$root" log -1 --format=%s "$commit" | cut -c1-60)), ${#patches[@]} mutants, results in $out"
start=$(date +%s)
echo "$commit $fuzz_time $start" >"$out/meta"
for patch in "${patches[@]}"; do basename "$patch" .patch; done >"$out/order"
# The baseline fuzzes three times as long as a mutant run, so that the
# findings the unmutated tree already has at these seeds (noise for this
# purpose) are all seen before they are subtracted.
base_fuzz_time=$((3 * fuzz_secs))s
mkdir -p "$out/baseline"
if [ -n "$reuse_base" ]; then
  echo "== baseline: $reuse_base"
  [ -f "$reuse_base/catalog.failed" ] && [ -f "$reuse_base/fuzz.pairs" ] && [ -f "$reuse_base/selftest.rc" ] ||
    { echo "$reuse_base is not a baseline of scripts/mutate.sh" >&2; exit 2; }
  cp -r "$reuse_base/." "$out/baseline/"
else
  echo "== baseline (no patch)"
  if ! tree=$(prepare baseline ""); then
    echo "the baseline $(cat "$out/baseline/status"); see $out/baseline/build.log" >&2
    exit 2
  fi
  run_channels "$out/baseline" "$tree" "$base_fuzz_time"
  cleanup_tree "$tree"
fi
base_self=$(cat "$out/baseline/selftest.rc")
echo "   catalog: $(wc -l <"$out/baseline/catalog.failed") failing cases or locks; selftest exit $base_self;" \
  "fuzz: $(wc -l <"$out/baseline/fuzz.pairs") (executor, category) pairs with new findings"
[ "$base_self" = 0 ] || echo "   warning: the baseline's selftest fails; its column means nothing" >&2

running=0
for patch in "${patches[@]}"; do
  patch=$(cd "$(dirname "$patch")" && pwd)/$(basename "$patch")
  if [ "$running" -ge "$jobs" ]; then
    wait -n || true
    running=$((running - 1))
  fi
  run_one "$patch" &
  running=$((running + 1))
done
wait || true
render
