"""The tree shows the architecture: no import circles, small modules and functions, one
folder per rung of the ladder, and docs/architecture.md names only paths that exist."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "src" / "irtensor"
MAX_MODULE_LINES = 600
MAX_FUNCTION_LINES = 60
RUNGS = ("rewrite", "autodiff", "kernel", "loops", "llvm", "opencl")


def module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def modules() -> dict[str, Path]:
    return {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def _type_checking_nodes(tree: ast.AST) -> set[int]:
    skipped: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            skipped |= {id(n) for n in ast.walk(node)}
    return skipped


def imports_of(name: str, path: Path, known: dict[str, Path]) -> set[str]:
    """The package's modules that `name` imports anywhere in its body (a function-level
    import counts: it is a cycle all the same, only deferred), but for TYPE_CHECKING."""
    tree = ast.parse(path.read_text())
    skipped = _type_checking_nodes(tree)
    found: set[str] = set()
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
                package = package[: len(package) - node.level + 1]
                base = ".".join([*package, *([node.module] if node.module else [])])
            for alias in node.names:
                found.add(sub if (sub := f"{base}.{alias.name}") in known else base)
    return {m for m in found if m in known and m != name}


def import_graph() -> dict[str, set[str]]:
    known = modules()
    return {name: imports_of(name, path, known) for name, path in known.items()}


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_the_package_has_no_import_circles() -> None:
    assert cycles(import_graph()) == []


def test_the_cycle_finder_finds_a_circle() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert cycles(graph) == [["a", "b", "c"]]


def test_a_function_level_import_is_an_edge(tmp_path: Path) -> None:
    source = tmp_path / "m.py"
    source.write_text("def f():\n    from irtensor.dialects import hl\n")
    known = {"irtensor.m": source, "irtensor.dialects.hl": PACKAGE / "dialects" / "hl.py",
             "irtensor.dialects": PACKAGE / "dialects" / "__init__.py"}
    assert imports_of("irtensor.m", source, known) == {"irtensor.dialects.hl"}


@pytest.mark.parametrize("path", sorted(PACKAGE.rglob("*.py")), ids=lambda p: module_name(p))
def test_modules_and_functions_are_small(path: Path) -> None:
    lines = path.read_text().count("\n")
    assert lines <= MAX_MODULE_LINES, f"{path.name}: {lines} lines"
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            length = (node.end_lineno or node.lineno) - node.lineno + 1
            assert length <= MAX_FUNCTION_LINES, f"{path.name}: {node.name} has {length} lines"


def test_one_folder_per_rung_each_saying_what_comes_in_and_goes_out() -> None:
    passes = PACKAGE / "passes"
    # the registry and the rewrite trace serve every rung; the passes are in the rungs
    assert sorted(p.stem for p in passes.glob("*.py")) == ["__init__", "registry", "trace"]
    for rung in RUNGS:
        doc = ast.get_docstring(ast.parse((passes / rung / "__init__.py").read_text()))
        assert doc and "In:" in doc and "Out:" in doc, rung
    assert not (PACKAGE / "backend").exists()
    assert (PACKAGE / "frontend" / "tensor.py").is_file()


def test_docs_architecture_names_only_paths_that_exist() -> None:
    text = (ROOT / "docs" / "architecture.md").read_text()
    named = set(re.findall(r"`((?:src|tests|docs|examples|bench)/[^`*]+?)`", text))
    assert len(named) >= 20
    missing = sorted(p for p in named if not (ROOT / p.rstrip("/")).exists())
    assert missing == []
    for rung in RUNGS:
        assert f"src/irtensor/passes/{rung}/" in text


def test_the_public_api_stays() -> None:
    from irtensor import Tensor, passes, pipeline, testing

    assert Tensor.__module__ == "irtensor.frontend.tensor"
    assert callable(passes.register_pass) and callable(passes.register_pipeline)
    assert pipeline.Pipeline is not None and callable(testing.programs)
    assert {"hl-to-ll", "hl-to-kernel", "default-llvm"} <= set(passes.all_pipelines())
    assert {"fuse", "convert-to-llvm", "lower-to-opencl"} <= set(passes.all_passes())


def test_editing_a_nested_pass_changes_the_kernel_cache_key(tmp_path: Path) -> None:
    import shutil

    from irtensor.runtime import cache

    copy = tmp_path / "irtensor"
    shutil.copytree(PACKAGE, copy, ignore=shutil.ignore_patterns("__pycache__"))
    before = cache.compiler_fingerprint(copy)
    assert before == cache.compiler_fingerprint(PACKAGE)
    nested = copy / "passes" / "kernel" / "fuse.py"
    nested.write_text(nested.read_text() + "\n# a changed pass\n")
    assert cache.compiler_fingerprint(copy) != before
    deeper = copy / "passes" / "llvm" / "vector_math.py"
    edited = cache.compiler_fingerprint(copy)
    deeper.write_text(deeper.read_text().replace("def ", "def  ", 1))
    assert cache.compiler_fingerprint(copy) != edited
