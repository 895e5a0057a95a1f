"""A reproduction's kept steps: exact round trips, kept only for the same revision and mode."""

import json

import numpy as np
import pytest

from sparsegp.experiments.steps import Kept, decode, direct, encode


def _same(a, b):
    """Equal in value, type, dtype and bits (NaN equal to NaN)."""
    assert type(a) is type(b), (type(a), type(b))
    if isinstance(a, dict):
        assert list(a) == list(b)
        for k in a:
            _same(a[k], b[k])
    elif isinstance(a, (list, tuple)):
        assert len(a) == len(b)
        for x, y in zip(a, b):
            _same(x, y)
    elif isinstance(a, (np.ndarray, np.generic)):
        assert a.dtype == b.dtype and np.shape(a) == np.shape(b)
        assert np.asarray(a).tobytes() == np.asarray(b).tobytes()
    elif isinstance(a, float):
        assert np.float64(a).tobytes() == np.float64(b).tobytes()
    else:
        assert a == b


def test_every_value_a_step_returns_comes_back_bit_for_bit():
    rng = np.random.default_rng(0)
    value = {
        "curve": rng.standard_normal((3, 4)),
        "sizes": np.arange(5, dtype=np.int32),
        "mask": np.array([True, False]),
        "empty": np.zeros((0, 3)),
        "scalars": [np.float64(np.pi), np.int64(7), np.bool_(True), np.float32(0.1)],
        "plain": [1, 2.5, float("nan"), float("inf"), -0.0, 1e-310, None, True, "a"],
        "pair": (1, (2.0, "x")),
        "by_m": {16: 0.5, 32: [1.0]},
        "by_pair": {("info-gain", 50): 3},
        "nested": [{"dict": 1, "array": 2}],  # the tags' own names as keys
    }
    back = decode(json.loads(json.dumps(encode(value))))
    _same(value, back)


def test_a_value_that_is_not_data_is_refused():
    with pytest.raises(TypeError, match="cannot keep a object"):
        encode({"model": object()})
    with pytest.raises(TypeError, match="dtype"):
        encode(np.array(["a", "b"]))


def test_a_step_is_run_once_and_kept_for_the_same_revision_and_mode_only(tmp_path):
    calls = []

    def experiment(a, *, b):
        calls.append((a, b))
        return {"value": np.array([a, b], dtype=float)}

    first = Kept(str(tmp_path), "full", "abc123")("fig3-kin40k", experiment, 1, b=2)
    again = Kept(str(tmp_path), "full", "abc123")("fig3-kin40k", experiment, 1, b=2)
    assert calls == [(1, 2)]
    _same(first, again)
    Kept(str(tmp_path), "quick", "abc123")("fig3-kin40k", experiment, 1, b=2)  # another mode: run again
    Kept(str(tmp_path), "quick", "def456")("fig3-kin40k", experiment, 1, b=2)  # other code: run again
    assert len(calls) == 3
    assert (tmp_path / "steps" / "fig3-kin40k.json").exists()
    (tmp_path / "steps" / "fig3-kin40k.json").write_text("{not json")  # a torn file is run again
    Kept(str(tmp_path), "quick", "def456")("fig3-kin40k", experiment, 1, b=2)
    assert len(calls) == 4
    assert direct("x", experiment, 3, b=4)["value"].tolist() == [3.0, 4.0] and len(calls) == 5
    with pytest.raises(ValueError, match="name"):
        Kept(str(tmp_path), "full", "abc123")("../escape", experiment, 1, b=2)


@pytest.mark.slow  # rows of the paper's table, run and rerun
def test_seeger_table2_is_kept_row_by_row_so_a_stopped_run_redoes_only_the_unfinished_row(tmp_path):
    from sparsegp.experiments import seeger2003_pumadyn as pd

    kept = Kept(str(tmp_path), "quick", "abc123")
    args = (40, [("random", 4, 1), ("fixed", 4, 1)], 1, 2)
    first = pd.model_selection(*args, step=kept)
    rows = sorted(p.name for p in (tmp_path / "steps").iterdir())
    assert rows == ["pumadyn-table2-fixed-4.json", "pumadyn-table2-full-GPR.json", "pumadyn-table2-random-4.json"]
    (tmp_path / "steps" / "pumadyn-table2-fixed-4.json").unlink()  # the run stopped inside this row
    ran = []

    def recording(name, fn, /, *a, **k):
        return kept(name, lambda *a, **k: ran.append(name) or fn(*a, **k), *a, **k)

    again = pd.model_selection(*args, step=recording)
    assert ran == ["pumadyn-table2-fixed-4"]
    assert list(again) == list(first) == ["full GPR", "random d=4", "fixed d=4"]
    for key in first:
        for a, b in zip(first[key]["runs"], again[key]["runs"]):
            assert {k: v for k, v in a.items() if k != "seconds"} == {k: v for k, v in b.items() if k != "seconds"}
