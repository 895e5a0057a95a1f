#!/bin/sh
# The checked-in reports: `sparsegp reproduce all --full` at one clean commit, run in a worktree of that commit so
# that the main checkout can move on, and resumable: run it again after a stop and `--resume` keeps every paper
# and every long step (sparsegp.experiments.steps) that this very commit finished in full mode (about 6.5 h on
# 2 cores in all; BENCHMARKS.md, "Reproductions").
#
#   sh benchmarks/full_reproduction.sh [COMMIT]        # default: HEAD; run from the repository root
#   sh benchmarks/full_reproduction.sh save COMMIT     # copy what has finished into the repository
#
# The run spans more hours than a machine may be held, so what has finished is saved into
# benchmarks/reproduction-in-progress/COMMIT (commit it); a new worktree starts from there.
# When all five reports are in ../reproduce-COMMIT/out, copy them over reports/, regenerate the index and
# remove the saved steps:
#   cp -r ../reproduce-COMMIT/out/*/ reports/ && rm -r reports/*/steps benchmarks/reproduction-in-progress \
#     && .venv/bin/sparsegp reproduce verdicts --out reports
set -eu
save=no
if [ "${1:-}" = save ]; then save=yes; shift; fi
commit=$(git rev-parse --short=12 "${1:-HEAD}")
python=$(pwd)/.venv/bin/python
tree=../reproduce-$commit
stage=$(pwd)/benchmarks/reproduction-in-progress/$commit
if [ $save = yes ]; then
    rm -rf "$stage" && mkdir -p "$stage" && cp -r "$tree/out/." "$stage/"
    echo "saved $(find "$stage" -name '*.json' -path '*steps*' | wc -l) steps and" \
        "$(find "$stage" -name report.md | wc -l) reports into $stage"
    exit 0
fi
if [ ! -d "$tree" ]; then
    git worktree add --detach "$tree" "$commit"
    if [ -d "$stage" ]; then mkdir -p "$tree/out" && cp -r "$stage/." "$tree/out/"; fi
fi
cd "$tree"
PYTHONPATH=src "$python" -c "import sys; from sparsegp.cli import main; sys.exit(main(sys.argv[1:]))" \
    reproduce all --full --resume --out out --quiet
