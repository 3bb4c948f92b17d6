"""`irtensor viz`: one static HTML page showing a program at every stage.

    irtensor viz model.mlir -o model.html            # hl-to-kernel, then the loops
    irtensor viz model.mlir -o model.html -p 'hl-to-ll,fuse' --time

The page holds: every stage side by side (the input, then the IR after each pass, with
the lines that pass changed highlighted), the kernel graph as SVG (Graphviz's `dot`
through the `graphviz` package when it is installed, else a layered layout of our own),
and the kernel table (space, reduction, reads, why each is a kernel; with `--time`, the
median time of each kernel on device llvm). It needs no network and no script from
elsewhere: one file to open or attach to a bug report.
"""

from __future__ import annotations

import argparse
import difflib
import html
import json
import shutil
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import BlockArgument, SSAValue

from irtensor import ir
from irtensor.dialects.kernel import KernelOp
from irtensor.passes.kernel.explain import explain_fusion
from irtensor.pipeline import Pipeline

DEFAULT_PIPELINE = "hl-to-kernel"


@dataclass(frozen=True)
class Stage:
    name: str
    text: str
    changed: frozenset[int]  # line numbers (0-based) that differ from the stage before


@dataclass(frozen=True)
class KernelRow:
    label: str
    name: str
    space: list[int]
    reduces: str
    reads: list[str]
    why: str
    seconds: float | None


def stages_of(module: ModuleOp, pipeline: str, loops: bool = True) -> list[Stage]:
    """The input and the IR after each pass of `pipeline` (then the loops stage)."""
    work = module.clone()
    texts = [("input", ir.to_text(work))]
    for pass_ in Pipeline(pipeline).passes:
        Pipeline([pass_]).run(work)
        texts.append((str(pass_.spec()), ir.to_text(work)))
    if loops and any(isinstance(op, KernelOp) for op in work.walk()):
        Pipeline("lower-kernels-to-loops").run(work)
        texts.append(("lower-kernels-to-loops", ir.to_text(work)))
    out, previous = [], ""
    for name, text in texts:
        out.append(Stage(name, text, _changed_lines(previous, text) if previous else frozenset()))
        previous = text
    return out


def _changed_lines(before: str, after: str) -> frozenset[int]:
    changed: set[int] = set()
    matcher = difflib.SequenceMatcher(a=before.splitlines(), b=after.splitlines(), autojunk=False)
    for tag, _, _, j1, j2 in matcher.get_opcodes():
        if tag != "equal":
            changed.update(range(j1, j2))
    return frozenset(changed)


def kernel_rows(module: ModuleOp, pipeline: str, time_kernels: bool) -> list[KernelRow]:
    work = module.clone()
    Pipeline(pipeline).run(work)
    kernels = [op for op in work.walk() if isinstance(op, KernelOp)]
    reasons = _reasons(module) if pipeline == DEFAULT_PIPELINE else {}
    produced: dict[SSAValue, str] = {}
    rows = []
    for n, k in enumerate(kernels, start=1):
        label = f"#{n}"
        produced[k.res] = label
        reads = [produced.get(v) or (f"%{v.name_hint or v.index}" if isinstance(v, BlockArgument)
                                     else "%?") for v in k.inputs]
        reduces = f"{k.combiner.data} over {list(k.reduction_dims)}" if k.reduction_dims and \
            k.combiner is not None else ""
        rows.append(KernelRow(label, k.sym_name.data, list(k.sizes), reduces, reads,
                              reasons.get(label, ""), _time(k) if time_kernels else None))
    return rows


def _reasons(module: ModuleOp) -> dict[str, str]:
    """'#n' -> why kernel n exists, from explain_fusion's lines."""
    reasons, label = {}, ""
    for line in explain_fusion(module).splitlines():
        if line.startswith("#"):
            label = line.split()[0]
        elif "a kernel of its own because " in line:
            reasons[label] = line.split("a kernel of its own because ", 1)[1]
    return reasons


def _time(kernel: KernelOp) -> float:
    from irtensor import dtypes
    from irtensor.runtime import llvm_device

    rng = np.random.default_rng(0)
    args = [rng.standard_normal(tuple(v.type.get_shape())).astype(
        dtypes.to_numpy(v.type.element_type)) for v in kernel.inputs]
    result = kernel.res.type
    out = np.zeros(tuple(result.get_shape()), dtypes.to_numpy(result.element_type))
    return llvm_device.measure_schedule(kernel, args, out)


def kernel_graph_svg(rows: Sequence[KernelRow]) -> str:
    """The kernels and the buffers between them, as SVG."""
    if shutil.which("dot") is not None:
        try:
            import graphviz  # type: ignore[import-untyped]
        except ImportError:
            graphviz = None
        if graphviz is not None:
            return _dot_svg(graphviz, rows)
    return _layered_svg(rows)


def _dot_svg(graphviz: object, rows: Sequence[KernelRow]) -> str:
    graph = graphviz.Digraph("kernels", graph_attr={"rankdir": "LR"},  # type: ignore[attr-defined]
                             node_attr={"fontname": "monospace", "fontsize": "10"})
    for row in rows:
        graph.node(row.label, f"{row.label} {row.name}\\n{row.space}", shape="box",
                   id=f"kernel_{row.label[1:]}")
        for source in row.reads:
            if not source.startswith("#"):
                graph.node(source, source, shape="ellipse")
            graph.edge(source, row.label)
    svg = graph.pipe(format="svg").decode()
    return svg[svg.index("<svg"):]


def _layered_svg(rows: Sequence[KernelRow]) -> str:
    """A layout of our own: arguments in column 0, each kernel one column right of the
    furthest kernel it reads."""
    column: dict[str, int] = {}
    for row in rows:
        for source in row.reads:
            column.setdefault(source, 0)
        column[row.label] = 1 + max((column[s] for s in row.reads), default=0)
    per_column: dict[int, list[str]] = {}
    for name, c in column.items():
        per_column.setdefault(c, []).append(name)
    where = {name: (20 + 200 * c, 20 + 50 * i)
             for c, names in per_column.items() for i, name in enumerate(names)}
    width = 200 * (max(per_column) + 1) + 40
    height = 50 * max(len(v) for v in per_column.values()) + 40
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}">']
    for row in rows:
        for source in row.reads:
            (x1, y1), (x2, y2) = where[source], where[row.label]
            parts.append(f'<line x1="{x1 + 150}" y1="{y1 + 15}" x2="{x2}" y2="{y2 + 15}" '
                         'stroke="#666"/>')
    names = {row.label: row.name for row in rows}
    for name, (x, y) in where.items():
        node_id = f' id="kernel_{name[1:]}"' if name in names else ""
        label = html.escape(f"{name} {names.get(name, '')}".strip())
        parts.append(f'<g{node_id}><rect x="{x}" y="{y}" width="150" height="30" fill="#eef" '
                     f'stroke="#336"/><text x="{x + 5}" y="{y + 19}" font-family="monospace" '
                     f'font-size="11">{label}</text></g>')
    return "\n".join([*parts, "</svg>"])


_STYLE = """
body { font-family: sans-serif; margin: 1em; }
.stages { display: flex; gap: 8px; overflow-x: auto; align-items: flex-start; }
.stage { flex: 0 0 auto; border: 1px solid #ccc; max-width: 60em; }
.stage h3 { margin: 0; padding: 4px 8px; background: #f3f3f3; font-size: 13px; }
.stage h3 .n { color: #a33; font-weight: normal; }
pre { margin: 0; padding: 4px 8px; font-size: 11px; max-height: 40em; overflow: auto; }
mark { background: #fff3a8; display: block; }
table { border-collapse: collapse; font-size: 12px; }
td, th { border: 1px solid #ccc; padding: 3px 6px; text-align: left; vertical-align: top; }
"""

_SCRIPT = """
window.onerror = function (message) {
  document.body.dataset.errors = (document.body.dataset.errors || "") + message + ";";
};
document.addEventListener("DOMContentLoaded", function () {
  var data = JSON.parse(document.getElementById("irtensor-data").textContent);
  var shown = document.querySelectorAll(".stage").length;
  var kernels = document.querySelectorAll("tr.kernel").length;
  document.getElementById("summary").textContent =
    shown + " stages, " + kernels + " kernels (" + data.pipeline + ")";
  document.body.dataset.ready = (shown === data.stages && kernels === data.kernels) ? "yes" : "no";
});
"""


def render(title: str, pipeline: str, stages: Sequence[Stage], rows: Sequence[KernelRow],
           svg: str) -> str:
    """The page: one string of HTML with its style, data and a small check script inline."""
    columns = []
    for i, stage in enumerate(stages):
        lines = [f"<mark>{html.escape(line)}</mark>" if n in stage.changed else html.escape(line)
                 for n, line in enumerate(stage.text.splitlines())]
        note = f' <span class="n">{len(stage.changed)} lines changed</span>' if i else ""
        columns.append(f'<div class="stage" id="stage-{i}"><h3>{i:02d} '
                       f'{html.escape(stage.name)}{note}</h3><pre>'
                       + "\n".join(lines).replace("</mark>\n", "</mark>") + "</pre></div>")
    table = ["<tr><th>kernel</th><th>name</th><th>space</th><th>reduces</th><th>reads</th>"
             "<th>why a kernel</th><th>time (llvm)</th></tr>"]
    for row in rows:
        seconds = f"{row.seconds * 1e6:.1f} us" if row.seconds is not None else ""
        cells = [row.label, row.name, str(row.space), row.reduces, ", ".join(row.reads),
                 row.why, seconds]
        table.append(f'<tr class="kernel" id="row-{row.label[1:]}">'
                     + "".join(f"<td>{html.escape(c)}</td>" for c in cells) + "</tr>")
    data = json.dumps({"pipeline": pipeline, "stages": len(stages), "kernels": len(rows)})
    return "\n".join([
        "<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
        f"<title>{html.escape(title)}</title><style>{_STYLE}</style>",
        f'<script id="irtensor-data" type="application/json">{data}</script>',
        f"<script>{_SCRIPT}</script></head><body>",
        f"<h1>{html.escape(title)}</h1><p id=\"summary\"></p>",
        "<h2>Stages</h2>", f'<div class="stages">{"".join(columns)}</div>',
        "<h2>Kernel graph</h2>", f'<div id="graph">{svg}</div>',
        "<h2>Kernels</h2>", f'<table id="kernels">{"".join(table)}</table>',
        "</body></html>", ""])


def write_page(module: ModuleOp, path: Path, title: str, pipeline: str = DEFAULT_PIPELINE,
               time_kernels: bool = False) -> Path:
    """Write the page for `module` (at hl or ll) to `path`."""
    stages = stages_of(module, pipeline)
    rows = kernel_rows(module, pipeline, time_kernels)
    path.write_text(render(title, pipeline, stages, rows, kernel_graph_svg(rows)))
    return path


def main(argv: Sequence[str]) -> int:
    parser = argparse.ArgumentParser(prog="irtensor viz", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("file", help="input .mlir file (hl or ll)")
    parser.add_argument("-o", "--output", default="irtensor-viz.html", help="the HTML file")
    parser.add_argument("-p", "--passes", default=DEFAULT_PIPELINE, metavar="PIPELINE",
                        help=f"the pipeline shown pass by pass (default {DEFAULT_PIPELINE})")
    parser.add_argument("--time", action="store_true", help="time each kernel on device llvm")
    args = parser.parse_args(argv)
    try:
        text = Path(args.file).read_text()
        module = ir.parse(text, name=args.file)
        ir.verify(module)
        out = write_page(module, Path(args.output), Path(args.file).name, args.passes, args.time)
    except (OSError, UnicodeDecodeError) as e:
        print(f"irtensor viz: error: {args.file}: {e}", file=sys.stderr)
        return 1
    except Exception as e:  # parse, verify and pipeline errors carry their own message
        from irtensor.pipeline import PipelineError

        if not isinstance(e, ir.IRError | PipelineError):
            raise
        print(f"irtensor viz: error: {e}", file=sys.stderr)
        return 1
    print(f"wrote {out}")
    return 0
