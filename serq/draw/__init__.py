"""``serq draw``: the deployment view of a program, as SVG or TikZ (pyserq 0.1.3's ``draw``).

``draw(path=None, *, source=None, sets={}, defs={}, format="tikz")`` takes the program's
file or text (not a compiled ``Program``: the view draws what one request runs, which the
program text compiled for the view says) and returns the picture's text. See docs/draw.md.
"""
from __future__ import annotations

from serq.deep import deep

__all__ = ["draw", "FORMATS"]

FORMATS = ("svg", "tikz")


@deep
def draw(path=None, *, source=None, sets=None, defs=None, format="tikz") -> str:
    from serq.draw.layout import Layout
    from serq.draw.scene import svg, tikz
    from serq.draw.view import View
    from serq.lang.compiler import compile_view
    if format not in FORMATS:
        raise ValueError(f"unknown draw format `{format}`: use svg or tikz")
    program = compile_view(path, source=source, sets=sets, defs=defs)
    scene = Layout(View(program)).scene()
    return svg(scene) if format == "svg" else tikz(scene)
