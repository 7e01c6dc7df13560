#!/usr/bin/env bash
# Plants each bug of test/mutants/*.patch in the Effect 3 edition's src/ or binding/ (packages/effect3), the src/ of
# packages/core, shell, simulator, cluster or effect4, one at a time, runs the tests the patch names and reverts it. A mutant is KILLED when its tests fail,
# SURVIVED when they pass (a gap in the suite), SKIPPED when the patch no longer applies (the code was rewritten:
# refresh the patch by hand).
#
#   test/mutants/run.sh                      # every patch
#   test/mutants/run.sh test/mutants/03-*.patch
#
# Each patch starts with a header read here (git apply ignores text before the first diff):
#   Bug: what the change does            Test: the test files to run
#   Filter: a vitest -t pattern (optional: only the tests that should catch it)
# Test files are named from the repository's root. When they are under packages/effect4/ (the
# Effect 4 edition's own suite, on Node 22), vitest runs in that package as its `npm test` does:
# `node scripts/node22.mjs vitest run <files relative to it>`; otherwise `npx vitest run` at the root.
# Not part of `npm test` (it runs vitest once per mutant). Needs those sources clean (it refuses otherwise).
set -u
cd "$(git rev-parse --show-toplevel)"
sources="packages/effect3/src packages/effect3/binding packages/core/src packages/shell/src packages/simulator/src packages/cluster/src packages/cluster/binding packages/effect4/src packages/effect4/cluster/src"
# shellcheck disable=SC2086 # several paths
if ! git diff --quiet -- $sources || ! git diff --cached --quiet -- $sources; then
  echo "$sources: one has uncommitted changes: commit or stash them first" >&2
  exit 2
fi
if [ "$#" -eq 0 ]; then set -- test/mutants/*.patch; fi
logs=$(mktemp -d)
applied=""
revert() { if [ -n "$applied" ]; then git apply -R "$applied" && applied=""; fi; }
trap 'revert; exit 130' INT TERM
trap 'revert' EXIT
killed=0 survived=0 skipped=0
for patch in "$@"; do
  name=$(basename "$patch" .patch)
  tests=$(sed -n 's/^Test: //p' "$patch" | head -1)
  filter=$(sed -n 's/^Filter: //p' "$patch" | head -1)
  if [ -z "$tests" ] || ! git apply --check "$patch" 2>/dev/null; then
    echo "SKIPPED  $name (does not apply to these sources, or names no test)"
    skipped=$((skipped + 1))
    continue
  fi
  git apply "$patch" && applied="$patch"
  if [ "${tests#packages/effect4/}" != "$tests" ]; then
    # shellcheck disable=SC2086 # several test files
    run() { (cd packages/effect4 && node scripts/node22.mjs vitest run ${tests//packages\/effect4\//} ${filter:+-t "$filter"}); }
  else
    # shellcheck disable=SC2086 # several test files
    run() { npx vitest run $tests ${filter:+-t "$filter"}; }
  fi
  if run >"$logs/$name.log" 2>&1; then
    echo "SURVIVED $name: $tests passed with the bug planted (log: $logs/$name.log)"
    survived=$((survived + 1))
  else
    echo "KILLED   $name by $tests${filter:+ (-t \"$filter\")}"
    killed=$((killed + 1))
  fi
  revert
done
echo "killed $killed, survived $survived, skipped $skipped"
[ "$survived" -eq 0 ]
