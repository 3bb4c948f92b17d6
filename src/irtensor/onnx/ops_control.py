"""Control flow unrolled at import: If with a condition known at import takes its branch;
Loop runs its body while its trip count and condition (known at import, each iteration)
allow; Scan runs its body once per element of its sequences (their lengths are static).
Each iteration's ops are recorded like any others, so the kernels see straight-line code."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from irtensor.frontend.tensor import Tensor
from irtensor.onnx.registry import Node, Value, op

# A loop that has not stopped after this many iterations is refused, not unrolled further.
MAX_ITERATIONS = 10_000


def _known_bool(node: Node, value: Value | None, what: str) -> bool:
    if value is None:
        return True
    if isinstance(value, Tensor):
        raise node.error(f"{what} is computed at run time; irtensor unrolls control flow at "
                         "import and needs it known there")
    if value.size != 1:
        raise node.error(f"{what} must hold one value, got shape {value.shape}")
    return bool(value.reshape(-1)[0])


def _stack(node: Node, values: Sequence[Value], axis: int = 0) -> Value:
    """values stacked along a new `axis`: in numpy when all are known, else as Tensors."""
    if all(isinstance(v, np.ndarray) for v in values):
        return np.stack(values, axis=axis)  # type: ignore[arg-type]
    tensors = [node.as_tensor(v) for v in values]
    return tensors[0].stack(*tensors[1:], dim=axis)


def _take(value: Value, axis: int, i: int) -> Value:
    index = (slice(None),) * axis + (i,)
    return value[index]  # type: ignore[index]


@op("If")
def if_(node: Node) -> list[Value]:
    taken = _known_bool(node, node.inputs[0], "input 0 (cond)")
    return node.run(node.attr("then_branch" if taken else "else_branch"), [])


@op("Loop")
def loop(node: Node) -> list[Value]:
    body = node.attr("body")
    limit = node.inputs[0]
    if isinstance(limit, Tensor):
        raise node.error("input 0 (M, the trip count) is computed at run time; irtensor "
                         "unrolls loops at import and needs it known there")
    trips = int(limit.reshape(-1)[0]) if limit is not None else None
    going = _known_bool(node, node.inputs[1] if len(node.inputs) > 1 else None,
                        "input 1 (cond)")
    carried: list[Value] = [v for v in node.inputs[2:] if v is not None]
    scans: list[list[Value]] = []
    i = 0
    while going and (trips is None or i < trips):
        if i == MAX_ITERATIONS:
            raise node.error(f"the loop runs past {MAX_ITERATIONS} iterations; irtensor "
                             "unrolls loops at import")
        outs = node.run(body, [np.array(i, np.int64), np.array(going), *carried])
        going = _known_bool(node, outs[0], "the body's condition output")
        carried, step = outs[1:1 + len(carried)], outs[1 + len(carried):]
        scans.append(step)
        i += 1
    if (scans and scans[0]) or node.n_outputs > len(carried):
        if not scans:
            raise node.error("the loop runs no iteration, so its scan outputs have no shape")
        return [*carried, *(_stack(node, [s[k] for s in scans])
                            for k in range(len(scans[0])))]
    return carried


@op("Scan")
def scan(node: Node) -> list[Value]:
    body = node.attr("body")
    count = node.attr("num_scan_inputs")
    if node.opset < 9:  # opset 8: a batch axis first, and sequence_lens as input 0
        return _scan_batched(node, body, count)
    inputs = list(node.inputs)
    return _scan(node, body, inputs[:len(inputs) - count], inputs[len(inputs) - count:])


def _scan(node: Node, body: object, states: list[Value | None],
          sequences: list[Value | None]) -> list[Value]:
    """Scan-9 on these states and sequences: the final states, then each scan output."""
    if any(v is None for v in (*states, *sequences)):
        raise node.error("an optional state or scan input left empty is not supported")
    axes = [a % v.ndim for a, v in zip(node.attr("scan_input_axes", [0] * len(sequences)),
                                       sequences, strict=True)]  # type: ignore[union-attr]
    backward = node.attr("scan_input_directions", [0] * len(sequences))
    lengths = {v.shape[a] for v, a in zip(sequences, axes, strict=True)}  # type: ignore[union-attr]
    if len(lengths) != 1:
        raise node.error(f"the scan inputs' lengths differ: {sorted(lengths)}")
    (length,) = lengths
    carried: list[Value] = list(states)  # type: ignore[arg-type]
    steps: list[list[Value]] = []
    for t in range(length):
        taken = [_take(v, a, length - 1 - t if back else t)  # type: ignore[arg-type]
                 for v, a, back in zip(sequences, axes, backward, strict=True)]
        outs = node.run(body, [*carried, *taken])  # type: ignore[arg-type]
        carried, step = outs[:len(carried)], outs[len(carried):]
        steps.append(step)
    if not steps:
        raise node.error("the scan inputs are empty, so its scan outputs have no shape")
    outputs = len(steps[0])
    out_axes = node.attr("scan_output_axes", [0] * outputs)
    out_back = node.attr("scan_output_directions", [0] * outputs)
    stacked = []
    for k in range(outputs):
        column = [s[k] for s in steps]
        column = column[::-1] if out_back[k] else column
        rank = np.ndim(column[0]) if isinstance(column[0], np.ndarray) else column[0].ndim
        stacked.append(_stack(node, column, out_axes[k] % (rank + 1)))
    return [*carried, *stacked]


def _scan_batched(node: Node, body: object, count: int) -> list[Value]:
    """Scan-8: each batch item scanned on its own (the sequence axis after the batch)."""
    lens, rest = node.inputs[0], list(node.inputs[1:])
    if isinstance(lens, Tensor) or (lens is not None and len(set(lens.reshape(-1))) > 1):
        raise node.error("input 0 (sequence_lens) must be known at import and the same for "
                         "every batch item")
    if node.attr("directions") is not None:
        node.attrs["scan_input_directions"] = node.attr("directions")
    states, sequences = rest[:len(rest) - count], rest[len(rest) - count:]
    batch = next(v.shape[0] for v in rest if v is not None)
    per_item = [_scan(node, body, [_take(v, 0, b) for v in states],  # type: ignore[arg-type]
                      [_take(v, 0, b) for v in sequences])  # type: ignore[arg-type]
                for b in range(batch)]
    return [_stack(node, [item[k] for item in per_item]) for k in range(len(per_item[0]))]


__all__ = ["if_", "loop", "scan"]
