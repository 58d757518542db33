"""``serq draw FILE``: the deployment view as SVG or TikZ (docs/draw.md).

Registered by ``serq.cli``; the picture itself is ``serq.draw.draw``.
"""
from __future__ import annotations


def add_parser(sub, assignment):
    draw = sub.add_parser(
        "draw", help="draw the deployment view (SVG or TikZ)",
        description="Draw what one request of FILE runs — its stations, the pools held "
                    "around them, the paths between them — as SVG or TikZ, the picture "
                    "pyserq 0.1.3's `draw` gives. FILE is a program's text (.sq): the view "
                    "is compiled from it.")
    draw.add_argument("file", metavar="FILE", help="a program (.sq)")
    draw.add_argument("--format", choices=("svg", "tikz", "png"), default="svg",
                      help="svg (default), tikz (a tikzpicture for \\usepackage{tikz}) or png "
                           "(the SVG rendered by cairosvg: the `draw` extra; needs -o)")
    draw.add_argument("-o", "--output", metavar="OUT",
                      help="write the picture to OUT instead of stdout")
    draw.add_argument("--set", dest="sets", metavar="NAME=EXPR", action="append",
                      type=assignment("EXPR"), default=[],
                      help="override the declared `let NAME` with the expression EXPR")
    draw.add_argument("--def", dest="defs", metavar="NAME=BODY", action="append",
                      type=assignment("BODY"), default=[],
                      help="replace the body of the expression definition `def NAME(...)`")
    return draw


def cmd_draw(args, out, err) -> int:
    from serq.draw import draw
    if args.file.endswith(".json"):
        raise ValueError(f"{args.file}: `serq draw` needs the program's text (.sq): the view "
                         "is compiled from it, and an IR has the whole session in its place")
    png = args.format == "png"
    if args.output is not None:
        from serq.output import check_output_file
        check_output_file(args.output, "-o")
    if png:
        if args.output is None:
            args.parser.error("--format png writes a file: give -o OUT")
        from serq.extras import need
        need("draw", "serq draw --format png")
    text = draw(args.file, sets=dict(args.sets), defs=dict(args.defs),
                format="svg" if png else args.format)
    if args.output is None:
        out(text)
        return 0
    from serq.output import replace_file
    if png:
        import cairosvg
        replace_file(args.output, lambda f: cairosvg.svg2png(
            bytestring=text.encode("utf-8"), write_to=f, scale=2))
    else:
        data = text.encode("utf-8")
        replace_file(args.output, lambda f: f.write(data))
    err(f"serq: wrote {args.output} ({args.format})\n")
    return 0
