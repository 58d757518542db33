"""Optional packages: the core needs numpy only; tables, plots, sweeps and cluster backends
import their packages when used, and a missing one is a clear error naming the extra to
install (never an ``ImportError`` traceback)."""
from __future__ import annotations

import importlib

__all__ = ["EXTRAS", "need"]

#: extra -> the modules it provides (pyproject.toml's ``[project.optional-dependencies]``)
EXTRAS = {
    "sweep": ("scipy", "tqdm"),
    "pandas": ("pandas", "pyarrow"),
    "plot": ("matplotlib",),
    "dask": ("dask.distributed",),
    "ray": ("ray",),
    "verify": ("z3", "hypothesis"),
    "draw": ("cairosvg",),
}


class MissingExtra(ValueError):
    """An optional package is not installed (a ``ValueError``: the CLI prints it, status 1)."""


def need(extra: str, what: str, modules=None) -> None:
    """Import ``modules`` (default: every module of ``extra``) or raise :class:`MissingExtra`:
    ``WHAT needs pandas (pip install 'serq[pandas]')``."""
    missing = []
    for name in modules or EXTRAS[extra]:
        try:
            importlib.import_module(name)
        except ImportError:
            missing.append(name.split(".")[0])
    if missing:
        raise MissingExtra(f"{what} needs {', '.join(missing)} "
                           f"(pip install 'serq[{extra}]')")
