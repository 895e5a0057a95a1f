#!/usr/bin/env bash
# `make test` and `make demo` at two commits, each from a fresh clone with empty compilation caches, in turn;
# the order of the two alternates from round to round (BEFORE first in odd rounds), so that neither always
# runs on a machine the other has just warmed.
# Usage: benchmarks/suite_before_after.sh BEFORE AFTER [ROUNDS]   (run with the cores otherwise idle)
set -u
before=$1; after=$2; rounds=${3:-2}
repo=$(git rev-parse --show-toplevel); work=$(mktemp -d)
for rev in "$before" "$after"; do
  git clone -q "$repo" "$work/$rev" && (cd "$work/$rev" && git checkout -q "$rev" && make dev > "$work/$rev-dev.log" 2>&1)
done
for round in $(seq "$rounds"); do
  order="$before $after"; [ $((round % 2)) -eq 0 ] && order="$after $before"
  for rev in $order; do
    cd "$work/$rev" && rm -rf .jax-test-cache demo-output
    s=$(date +%s.%N); make test > "$work/$rev-test-$round.log" 2>&1; rc=$?; e=$(date +%s.%N)
    echo "$rev round $round: make test rc=$rc $(echo "$e - $s" | bc) s ($(tail -1 "$work/$rev-test-$round.log"))"
    s=$(date +%s.%N); make demo > "$work/$rev-demo-$round.log" 2>&1; rc=$?; e=$(date +%s.%N)
    echo "$rev round $round: make demo rc=$rc $(echo "$e - $s" | bc) s"
  done
done
echo "logs: $work"
