"""Files written whole or not at all (:mod:`sparsegp._atomic`): model files, the CLI's outputs, the reports.

A failure while writing leaves the old file as it was and no temporary file behind; the new file keeps the old
one's permissions, or gets the umask's; a process killed (SIGKILL) at random moments while saving a large model
over a good one leaves a file that loads and is the old model or the new one (and, beside it, the hidden
temporary file the kill left).
"""

import os
import signal
import stat
import subprocess
import sys
import time

import numpy as np
import pytest

from sparsegp import ExactGPRegressor, load_model, save_model
from sparsegp._atomic import replaced_atomically
from sparsegp.kernels import SquaredExponential


def test_a_failure_while_writing_leaves_the_old_file_and_no_temporary(tmp_path):
    path = tmp_path / "out.txt"
    path.write_text("old")
    os.chmod(path, 0o640)
    with pytest.raises(RuntimeError, match="disk full"):
        with replaced_atomically(path, "w") as f:
            f.write("half of the new")
            raise RuntimeError("disk full")
    assert path.read_text() == "old" and os.listdir(tmp_path) == ["out.txt"]
    with replaced_atomically(path, "w") as f:
        f.write("new")
    assert path.read_text() == "new" and os.listdir(tmp_path) == ["out.txt"]
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o640  # the old file's permissions


def test_a_new_file_gets_the_umasks_permissions(tmp_path):
    old = os.umask(0o027)
    try:
        with replaced_atomically(tmp_path / "new.bin") as f:
            f.write(b"x")
    finally:
        os.umask(old)
    assert stat.S_IMODE(os.stat(tmp_path / "new.bin").st_mode) == 0o640


def _model(n, D, seed):
    X = np.random.default_rng(seed).normal(size=(n, D))
    y = np.sin(X[:, 0]) + 0.1 * np.random.default_rng(seed + 1).normal(size=n)
    kernel = SquaredExponential(lengthscale=float(np.sqrt(D)), variance=1.0)
    return ExactGPRegressor(kernel=kernel, noise=0.1, optimize=False).fit(X, y)


def test_an_interrupted_save_keeps_the_old_model(tmp_path, monkeypatch):
    path = save_model(_model(40, 2, 0), tmp_path / "model")
    new = _model(40, 2, 1)

    def interrupted(f, **arrays):
        f.write(b"PK\x03\x04 a zip file cut short")
        raise KeyboardInterrupt

    monkeypatch.setattr(np, "savez", interrupted)
    with pytest.raises(KeyboardInterrupt):
        save_model(new, path)
    monkeypatch.undo()
    assert np.array_equal(load_model(path).X_train_, _model(40, 2, 0).X_train_)
    assert os.listdir(tmp_path) == ["model.npz"]


CHILD = """
import sys
from sparsegp import load_model, save_model
model = load_model(sys.argv[1])
print("saving", flush=True)
save_model(model, sys.argv[2])
print("saved", flush=True)
"""


@pytest.mark.slow  # twenty processes
def test_a_process_killed_while_saving_over_a_model_leaves_the_old_or_the_new(tmp_path):
    old, new = _model(800, 4000, 0), _model(800, 4000, 1)  # X_train alone is 26 MB
    source = save_model(new, tmp_path / "new")
    target = tmp_path / "target.npz"
    t = time.perf_counter()
    save_model(new, tmp_path / "timing")
    seconds = time.perf_counter() - t
    rng = np.random.default_rng(0)
    outcomes = []
    for _ in range(20):
        save_model(old, target)
        child = subprocess.Popen([sys.executable, "-c", CHILD, source, str(target)], stdout=subprocess.PIPE, text=True)
        assert child.stdout.readline().strip() == "saving"
        time.sleep(rng.uniform(0.0, 1.5 * seconds))
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=60)
        loaded = load_model(target).X_train_
        same = [np.array_equal(loaded, m.X_train_) for m in (old, new)]
        assert any(same)
        outcomes.append("new" if same[1] else "old")
        # a kill leaves at most its temporary file, hidden and named after the target, beside the others
        left = sorted(p.name for p in tmp_path.iterdir() if p.name not in ("new.npz", "target.npz", "timing.npz"))
        assert all(name.startswith(".target.npz.") and name.endswith(".partial") for name in left)
    assert "old" in outcomes  # some kills fell inside the write
