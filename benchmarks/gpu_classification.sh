#!/usr/bin/env bash
# The classification figures on a lent GPU, one command (BENCHMARKS.md, "MNIST on a lent H200"):
#   OUT=dir bash benchmarks/gpu_classification.sh [SECONDS]
# The default SparseGPClassifier() on MNIST (784 inputs, 10 classes), test rows scored at each stage's end;
# then, in what is left of SECONDS (default 560), the stated settings tol=1e-4 max_inducing=1024.
# Each run's stage records and result land in $OUT; progress bars go to its log there.
set -u
budget=${1:-560}
start=$(date +%s)
export PYTHONPATH=src PYTHONUNBUFFERED=1
python3 -c "import jax, sparsegp; print(jax.__version__, jax.devices())"
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader
records() { tr '\r' '\n' < "$1" | grep -a -o '{"m": .*}\|Error.*\|^ "[a-z_]*": [^[{]*$' ; }
timeout 330 python3 -m benchmarks classification_mnist --stage-test --out "$OUT/mnist-default.json" > "$OUT/mnist-default.log" 2>&1
echo "default: rc=$? after $(( $(date +%s) - start )) s"; records "$OUT/mnist-default.log"
left=$(( budget - ($(date +%s) - start) - 10 ))
if [ "$left" -gt 30 ]; then
  timeout "$left" python3 -m benchmarks classification_mnist --stage-test --out "$OUT/mnist-stated.json" \
    tol=0.0001 max_inducing=1024 > "$OUT/mnist-stated.log" 2>&1
  echo "stated: rc=$? after $(( $(date +%s) - start )) s"; records "$OUT/mnist-stated.log"
fi
