"""The pass registry: every pass and named pipeline irtensor knows, by name.

`irtensor.passes` re-exports this module and imports every rung's passes, so
that importing it registers them all.

A pass is an `xdsl.passes.ModulePass` subclass (a frozen dataclass whose
fields are its options) with a `name`; the first line of its docstring is its
one-line description. Register your own with one call::

    from irtensor.passes.registry import register_pass

    @register_pass
    @dataclass(frozen=True)
    class MyPass(ModulePass):
        \"\"\"my-pass: what it does, in one line.\"\"\"
        name = "my-pass"
        def apply(self, ctx, op): ...

A named pipeline is a pipeline string registered under a name; it can stand
anywhere a pass name can (`register_pipeline("hl-to-ll", "decompose-hlops,cse")`).
"""

from __future__ import annotations

import dataclasses
import importlib.util
import inspect
from pathlib import Path
from typing import TypeVar

from xdsl.passes import ModulePass
from xdsl.transforms.canonicalize import CanonicalizePass
from xdsl.transforms.common_subexpression_elimination import CommonSubexpressionElimination
from xdsl.transforms.dead_code_elimination import DeadCodeElimination

PassT = TypeVar("PassT", bound=type[ModulePass])

_PASSES: dict[str, type[ModulePass]] = {}
_PIPELINES: dict[str, str] = {}
_DESCRIPTIONS: dict[str, str] = {}


class PassRegistryError(ValueError):
    """An unknown pass name, a clash of names, a bad pass class, or a plugin that fails."""


class PassInputError(ValueError):
    """A pass refusing IR it does not take (ops of another level, ops it cannot handle):
    the input's mistake, not the pass's, so a pipeline reports it without a type name."""


def register_pass(cls: PassT, description: str | None = None) -> PassT:
    """Register a ModulePass subclass under its `name`; usable as a decorator."""
    if not (isinstance(cls, type) and issubclass(cls, ModulePass)):
        raise PassRegistryError(f"{cls!r} is not a ModulePass subclass")
    name = getattr(cls, "name", None)
    if not isinstance(name, str) or not name:
        raise PassRegistryError(f"pass class {cls.__name__} has no `name`")
    if name in _PIPELINES or (name in _PASSES and _PASSES[name] is not cls):
        raise PassRegistryError(f"a pass or pipeline named '{name}' is already registered")
    _PASSES[name] = cls
    _DESCRIPTIONS[name] = description or _first_line(cls.__doc__, name)
    return cls


def register_pipeline(name: str, spec: str, description: str = "") -> None:
    """Register `spec` (a pipeline string) under `name`."""
    if name in _PASSES or (name in _PIPELINES and _PIPELINES[name] != spec):
        raise PassRegistryError(f"a pass or pipeline named '{name}' is already registered")
    _PIPELINES[name] = spec
    _DESCRIPTIONS[name] = description or spec


def get_pass(name: str) -> type[ModulePass]:
    if name not in _PASSES:
        raise PassRegistryError(f"unknown pass '{name}'{_suggest(name)}")
    return _PASSES[name]


def all_passes() -> dict[str, type[ModulePass]]:
    return dict(sorted(_PASSES.items()))


def all_pipelines() -> dict[str, str]:
    return dict(sorted(_PIPELINES.items()))


def describe(name: str) -> str:
    return _DESCRIPTIONS.get(name, "")


def pass_options(cls: type[ModulePass]) -> list[tuple[str, str, object]]:
    """(option name as written in a pipeline, type, default) for each option of a pass."""
    options = []
    for field in dataclasses.fields(cls) if dataclasses.is_dataclass(cls) else ():
        default = field.default if field.default is not dataclasses.MISSING else None
        kind = field.type if isinstance(field.type, str) else getattr(field.type, "__name__", "")
        options.append((field.name.replace("_", "-"), str(kind), default))
    return options


def load_pass_plugin(path: str | Path) -> list[str]:
    """Import a Python file; the passes it registers (or defines) join the registry.

    Returns the names of the passes that became available.
    """
    path = Path(path)
    if not path.is_file():
        raise PassRegistryError(f"pass plugin {path} does not exist")
    before = set(_PASSES)
    spec = importlib.util.spec_from_file_location(f"irtensor_plugin_{path.stem}", path)
    if spec is None or spec.loader is None:
        raise PassRegistryError(f"cannot load pass plugin {path}")
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
    except Exception as e:  # the plugin's own code: report it, as a pass that raises is
        where = f" (line {e.lineno})" if isinstance(e, SyntaxError) and e.lineno else ""
        reason = e.msg if isinstance(e, SyntaxError) else str(e)
        raise PassRegistryError(f"pass plugin {path} failed to load: "
                                f"{type(e).__name__}{where}: {reason}") from None
    for obj in vars(module).values():
        if (inspect.isclass(obj) and issubclass(obj, ModulePass) and obj is not ModulePass
                and obj.__module__ == module.__name__ and obj not in _PASSES.values()):
            register_pass(obj)
    return sorted(set(_PASSES) - before)


def _first_line(doc: str | None, name: str = "") -> str:
    """A docstring's first paragraph as one line, without the `name: ` it starts with by
    convention."""
    paragraph = []
    for line in (doc or "").strip().splitlines():
        if not line.strip():
            break
        paragraph.append(line.strip())
    text = " ".join(paragraph)
    return text.removeprefix(f"{name}: ") if name else text


def _suggest(name: str) -> str:
    import difflib

    close = difflib.get_close_matches(name, [*_PASSES, *_PIPELINES], n=1)
    return f" (did you mean '{close[0]}'?)" if close else " (irtensor-opt --list-passes lists them)"


register_pass(CanonicalizePass, "Fold ops and apply each op's canonicalization patterns (xDSL).")
register_pass(CommonSubexpressionElimination, "Merge identical side-effect-free ops (xDSL).")
register_pass(DeadCodeElimination, "Erase unused ops that have no effects (xDSL).")
