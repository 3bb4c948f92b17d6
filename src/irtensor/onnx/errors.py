"""The one error an ONNX import raises for the model's mistakes and what irtensor lacks."""

from __future__ import annotations

from irtensor.passes.registry import PassInputError


class OnnxImportError(PassInputError):
    """A model irtensor cannot import: a malformed file, an operator or attribute it does
    not support, a shape it cannot know at import. The message names the node (its name
    and op type) and what is wrong, on one line."""


def node_error(name: str, op_type: str, what: str) -> OnnxImportError:
    label = f"node {name!r} ({op_type})" if name else f"a {op_type} node"
    return OnnxImportError(f"{label}: {what}")
