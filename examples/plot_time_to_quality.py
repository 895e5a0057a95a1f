"""
Time to quality against GPflow (recorded, not re-run)
=====================================================

Protocol TTQ (``PROTOCOLS.md``) times the default ``SparseGPRegressor()``, which chooses m itself, until its
test SMSE and SNLP are within 2 % and 0.02 of GPflow SGPR's best result over m in {128, 256, 512} after
1,000 iterations; GPflow's own time to that quality is rescaled by its time per evaluation measured in the
same invocation. The runs take minutes to hours on two cores, so this example does not repeat them: it reads
the figures recorded in BENCHMARKS.md ("Headline figures", with the commands that produced them) and draws
them. The target the project set itself is a quarter of GPflow's time.
"""

import re
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np

# The checkout's BENCHMARKS.md, beside this file's folder (the docs build runs the examples from the checkout)
here = Path(__file__).resolve().parent if "__file__" in globals() else Path.cwd()
benchmarks = next(p / "BENCHMARKS.md" for p in (here, *here.parents) if (p / "BENCHMARKS.md").exists())
row = next(line for line in benchmarks.read_text().splitlines() if line.startswith("| time to quality against GPflow"))
figures = row.split("|")[2]
found = re.findall(r"(parkinsons|K10|pol|P32|elevators) ([\d.]+)x \(([\d.]+) s", figures)
if len(found) != 5:
    raise RuntimeError(f"BENCHMARKS.md's time-to-quality row no longer reads as five datasets: {figures!r}")
names = [name for name, _, _ in found]
ratio = np.array([float(r) for _, r, _ in found])
ours = np.array([float(s) for _, _, s in found])
gpflow = ours / ratio
date = row.rstrip(" |").split("|")[-1].strip()
for name, r, o, g in zip(names, ratio, ours, gpflow):
    print(f"{name:10s}: ours {o:6.1f} s, GPflow {g:7.1f} s, ratio {r:.3f}x")

fig, (ax, ax_ratio) = plt.subplots(1, 2, figsize=(11, 3.8))
x = np.arange(len(names))
ax.bar(x - 0.2, gpflow, 0.4, label="GPflow SGPR")
ax.bar(x + 0.2, ours, 0.4, label="sparsegp, the defaults")
ax.set_xticks(x, names)
ax.set_yscale("log")
ax.set_ylabel("seconds to the quality (2 cores)")
ax.legend(fontsize=8)
ax.set_title(f"time to GPflow's quality, seed 0 ({date})")
ax_ratio.bar(x, ratio, color="C1")
ax_ratio.axhline(0.25, color="k", ls="--", lw=0.8, label="the 0.25x target")
ax_ratio.set_xticks(x, names)
ax_ratio.set_ylabel("our time / GPflow's")
ax_ratio.legend(fontsize=8)
fig.tight_layout()
plt.show()
