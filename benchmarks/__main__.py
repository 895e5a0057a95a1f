"""``python -m benchmarks NAME [ARGS]``: run the benchmark module ``benchmarks.NAME`` as a script, with ARGS as
its command line; without NAME, list the benchmarks with the first line of each docstring."""

from __future__ import annotations

import ast
import pkgutil
import runpy
import sys
from pathlib import Path

HERE = Path(__file__).parent


def _summary(name: str) -> str:
    tree = ast.parse((HERE / f"{name}.py").read_text())
    doc = ast.get_docstring(tree) or ""
    return doc.strip().splitlines()[0] if doc.strip() else ""


def main(argv: list[str]) -> int:
    names = sorted(m.name for m in pkgutil.iter_modules([str(HERE)]) if not m.name.startswith("_"))
    if not argv or argv[0] in ("-h", "--help"):
        print("python -m benchmarks NAME [ARGS]: run one of\n")
        width = max(map(len, names))
        for name in names:
            print(f"  {name:{width}}  {_summary(name)}")
        return 0
    name, args = argv[0], argv[1:]
    if name not in names:
        print(f"no benchmark {name!r}; python -m benchmarks lists them", file=sys.stderr)
        return 2
    sys.argv = [f"benchmarks.{name}", *args]
    runpy.run_module(f"benchmarks.{name}", run_name="__main__", alter_sys=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
