"""The benchmarks: one module per measurement, each writing the figures BENCHMARKS.md quotes with the command
that produced them. Run one from the repository root with ``python -m benchmarks NAME [ARGS]``; ``python -m
benchmarks`` lists them. Shared helpers: :mod:`benchmarks.harness` (timing, tables, child processes) and
:mod:`benchmarks.case_io` (one comparison case's inputs and outputs, shared with the comparison libraries'
environment, which has no sparsegp)."""
