#!/bin/sh
# The checked-in reports: `sparsegp reproduce all --full` at one clean commit, run in a worktree of that commit so
# that the main checkout can move on, and resumable: run it again after a stop and `--resume` keeps every paper
# that this very commit finished in full mode (about 6.5 h on 2 cores in all; BENCHMARKS.md, "Reproductions").
#
#   sh benchmarks/full_reproduction.sh [COMMIT]     # default: HEAD; run from the repository root
#
# When all five reports are in ../reproduce-COMMIT/out, copy them over reports/ and regenerate the index:
#   cp -r ../reproduce-COMMIT/out/* reports/ && .venv/bin/sparsegp reproduce verdicts --out reports
set -eu
commit=$(git rev-parse --short=12 "${1:-HEAD}")
python=$(pwd)/.venv/bin/python
tree=../reproduce-$commit
[ -d "$tree" ] || git worktree add --detach "$tree" "$commit"
cd "$tree"
PYTHONPATH=src "$python" -c "import sys; from sparsegp.cli import main; sys.exit(main(sys.argv[1:]))" \
    reproduce all --full --resume --out out --quiet
