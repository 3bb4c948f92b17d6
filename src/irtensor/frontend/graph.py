"""The light recording graph: what a Tensor call records, and the xDSL program built from it.

A lazy tensor holds a `Node`: an immutable, hash-consed record of one op (its class,
its operand nodes, its constructor arguments, its result's shape and dtype), in the
spirit of tinygrad's UOps. Recording builds no xDSL object: the result type of a
signature (op class, operand shapes and dtypes, arguments) comes from the op's own
verifier the first time that signature is seen, so the shape rules live in one place,
the dialect, and a mistake still raises at the call that made it. The `@main` that
every stage, dump and pass sees is built from the nodes only when a program is new.

Nodes hold their operands and nothing holds a node but tensors and other nodes, so
a node, and the buffer it realized, goes as soon as its last user does.
"""

from __future__ import annotations

import weakref
from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.utils.exceptions import VerifyException

from irtensor import dtypes
from irtensor.dialects import hl, ll
from irtensor.dtypes import DType
from irtensor.runtime import limits
from irtensor.shapes import ShapeError

OpClass = type[Operation]
# Ops whose constructor takes its operands as one list.
VARIADIC: frozenset[OpClass] = frozenset({hl.ConcatOp})


class Buffer:
    """The op kind of a placeholder: a value held in a realized buffer."""

    name = "buffer"


class Node:
    """One recorded op and its result; built by `record` and `buffer` only.

    What it computes never changes. `buffer` is the array a placeholder stands for;
    `realized` is a cache, not part of what the node is: a weak reference to the
    placeholder holding its value once computed (the buffer goes with that placeholder's
    last tensor, and the node computes again if asked after that)."""

    __slots__ = ("__weakref__", "_type", "args", "buffer", "dtype", "key", "op", "realized",
                 "shape", "srcs")

    def __init__(self, op: OpClass | type[Buffer], srcs: tuple[Node, ...], args: tuple[Any, ...],
                 t: TensorType | None, shape: tuple[int, ...], dtype: DType,
                 buffer: np.ndarray | None = None, key: tuple[Any, ...] = ()):
        self.op, self.srcs, self.args, self.key = op, srcs, args, key  # key: key_of(args)
        self._type, self.shape, self.dtype = t, shape, dtype
        self.buffer = buffer
        self.realized: weakref.ref[Node] | None = None

    @property
    def type(self) -> TensorType:
        """The result's tensor type (a buffer's is made when first asked: it is rarely)."""
        if self._type is None:
            self._type = TensorType(self.dtype.element, list(self.shape))
        return self._type

    @property
    def is_buffer(self) -> bool:
        return self.op is Buffer

    def __repr__(self) -> str:
        return f"<Node {self.op.name} {self.type}>"


def key_of(args: tuple[Any, ...]) -> tuple[Any, ...]:
    """`args` as a key that tells -0.0 from 0.0 and matches NaN with NaN (floats by bits)."""
    for a in args:
        if type(a) is float:
            return tuple(a.hex() if type(a) is float else a for a in args)
    return args


@dataclass
class _Signature:
    type: TensorType
    shape: tuple[int, ...]
    dtype: DType
    nbytes: int


_SIGNATURES: dict[Hashable, _Signature] = {}
_BY_NUMPY: dict[np.dtype, DType] = {d.np: d for d in dtypes.ALL}
MAX_SIGNATURES = 1 << 14
_CONSED: weakref.WeakValueDictionary[Hashable, Node] = weakref.WeakValueDictionary()
NAMES: weakref.WeakKeyDictionary[Node, str] = weakref.WeakKeyDictionary()


def make_op(op: OpClass, operands: Sequence[SSAValue], args: tuple[Any, ...]) -> Operation:
    """The xDSL op a node stands for, on `operands` (dtypes among `args` as element types)."""
    if op is ll.ConstOp:
        value, d, shape = args
        return ll.ConstOp(value, TensorType(d.element, list(shape)))
    args = tuple(a.element if type(a) is DType else a for a in args)
    if op in VARIADIC:
        return op(list(operands), *args)
    return op(*operands, *args)


SHAPE_WORDS = ("shape", "axis", "axes", "dimension", "rank", "size", "broadcast")


def _error_kind(message: str) -> type[Exception]:
    """TypeError for an element type; ShapeError (a ValueError and a RuntimeError, as
    numpy and torch raise) for a shape; ValueError for any other bad argument."""
    if "element type" in message:
        return TypeError
    return ShapeError if any(w in message for w in SHAPE_WORDS) else ValueError


def _signature(op: OpClass, srcs: tuple[Node, ...], args: tuple[Any, ...],
               key: Hashable) -> _Signature:
    """Verify the op once for this signature, on stand-in operands, and keep its type."""
    block = Block(arg_types=[s.type for s in srcs])
    try:
        built = make_op(op, block.args, args)
        built.verify()
    except VerifyException as e:
        message = str(e).splitlines()[0]
        raise _error_kind(message)(message) from None
    t = built.results[0].type
    assert isinstance(t, TensorType)
    found = _Signature(t, tuple(t.get_shape()), dtypes.of_element(t.element_type),
                       limits.nbytes(t) if t.element_type in limits.ITEM_BYTES else 0)
    if len(_SIGNATURES) >= MAX_SIGNATURES:
        _SIGNATURES.clear()
    _SIGNATURES[key] = found
    return found


def record(op: OpClass, srcs: tuple[Node, ...], args: tuple[Any, ...], device: str) -> Node:
    """The node of `op` on `srcs` with constructor arguments `args`: the existing one when
    the same op was recorded on the same operands, else a new one, checked as the op's
    verifier checks it and (unless a constant) against `device`'s memory."""
    akey = key_of(args)
    ckey = (op, srcs, akey)
    if (found := _CONSED.get(ckey)) is not None:
        return found
    # a constant's value does not change its type: its signature is its dtype and shape
    skey = (op, tuple([(s.dtype, s.shape) for s in srcs]),
            akey[1:] if op is ll.ConstOp else akey)
    sig = _SIGNATURES.get(skey) or _signature(op, srcs, args, skey)
    # a constant is one scalar until it is realized (then `realize` checks it): a sum of
    # `Tensor.ones(2**40)` folds to 2**40 without ever holding it
    if op is not ll.ConstOp and sig.nbytes > limits.device_memory(device):
        limits.check_tensor(sig.type, device, f"the result of {op.name}")
    node = Node(op, srcs, args, sig.type, sig.shape, sig.dtype, None, akey)
    _CONSED[ckey] = node
    return node


# Constants recorded lately, held: a loop's `x * 0.5` records no new node for 0.5 (nor
# for the product, which the hash-consing then finds).
_CONSTS: dict[tuple[Any, ...], Node] = {}
MAX_CONSTS = 1 << 12


def const(value: float | int | bool, d: DType, shape: tuple[int, ...], device: str) -> Node:
    key = (value.hex() if type(value) is float else value, d, shape, device)
    if (found := _CONSTS.get(key)) is not None:
        return found
    node = record(ll.ConstOp, (), (value, d, shape), device)
    if len(_CONSTS) >= MAX_CONSTS:
        _CONSTS.clear()
    _CONSTS[key] = node
    return node


def buffer(array: np.ndarray) -> Node:
    """A new placeholder for a realized buffer (never shared: each buffer is its own)."""
    return Node(Buffer, (), (), None, array.shape, _BY_NUMPY[array.dtype], array)


@dataclass
class Graph:
    """The nodes computing some values, operands first, and the buffers they read.

    Constants are leaves, as buffers are: `consts` holds one entry per use of a
    constant (operands in order, then outputs), so two uses of one value stay two
    places in the program, and a program's structure never depends on which of its
    scalars happen to be equal."""

    order: list[Node]
    inputs: list[Node]
    outputs: list[Node]
    consts: list[Node] = field(default_factory=list)


def collect(outputs: Sequence[Node], resolve: Any) -> Graph:
    """The nodes computing `outputs` (`resolve` maps a realized node to its placeholder),
    found without recursion: a loop of thousands of `x += 1` is a chain that deep."""
    order: list[Node] = []
    inputs: list[Node] = []
    seen: set[int] = set()
    for out in outputs:
        stack: list[tuple[Node, bool]] = [(resolve(out), False)]
        while stack:
            node, ready = stack.pop()
            if ready:  # its operands are placed: place the node
                order.append(node)
                continue
            if id(node) in seen:
                continue
            seen.add(id(node))
            if node.op is Buffer:
                inputs.append(node)
            elif node.op is not ll.ConstOp:
                stack.append((node, True))
                stack.extend((resolve(s), False) for s in reversed(node.srcs))
    consts = [r for n in order for s in n.srcs if (r := resolve(s)).op is ll.ConstOp]
    consts += [r for n in outputs if (r := resolve(n)).op is ll.ConstOp]
    return Graph(order, inputs, list(outputs), consts)


def graph_keys(graph: Graph, resolve: Any) -> tuple[Hashable, tuple[Any, ...]]:
    """The program's structure with its scalar constants left out, and those constants:
    together they say which program this is, in time linear in its size."""
    where: dict[Node, Hashable] = {n: -1 - i for i, n in enumerate(graph.inputs)}
    for c in graph.consts:
        where[c] = c.key[1:]  # a constant's place: its dtype and shape
    items: list[Hashable] = [tuple((n.dtype, n.shape) for n in graph.inputs)]
    for i, node in enumerate(graph.order):
        items.append((node.op, tuple([where[resolve(s)] for s in node.srcs]), node.key))
        where[node] = i
    items.append(tuple(where[resolve(n)] for n in graph.outputs))
    return tuple(items), tuple([c.key[0] for c in graph.consts])


def build(graph: Graph, resolve: Any, params: Sequence[int] = ()
          ) -> tuple[ModuleOp, list[Node]]:
    """`@main` computing the graph's outputs from its buffers, and then, for each use of
    a constant numbered in `params`, from a 0-d argument standing for it; and the
    placeholders it reads."""
    param_types = [TensorType(graph.consts[i].dtype.element, []) for i in params]
    block = Block(arg_types=[n.type for n in graph.inputs] + param_types)
    mapping: dict[Node, SSAValue] = dict(zip(graph.inputs, block.args, strict=False))
    for i, arg in enumerate(block.args):
        arg.name_hint = f"in{i}" if i < len(graph.inputs) else f"s{i - len(graph.inputs)}"
    scalars = dict(zip(params, block.args[len(graph.inputs):], strict=True))
    uses = iter(range(len(graph.consts)))

    def value_of(src: Node) -> SSAValue:
        node = resolve(src)
        if node.op is not ll.ConstOp:
            return mapping[node]
        scalar = scalars.get(next(uses))
        if scalar is None:  # a fixed constant: one op for all its fixed uses
            if node not in mapping:
                mapping[node] = add(make_op(ll.ConstOp, (), node.args), node)
            return mapping[node]
        return scalar if node.shape == () else add(hl.BroadcastToOp(scalar, node.shape), node)

    def add(op: Operation, node: Node) -> SSAValue:
        block.add_op(op)
        if (name := NAMES.get(node)) is not None:
            op.results[0].name_hint = name
        return op.results[0]

    for node in graph.order:
        mapping[node] = add(make_op(node.op, [value_of(s) for s in node.srcs], node.args), node)
    results = [value_of(n) for n in graph.outputs]
    block.add_op(func.ReturnOp(*results))
    main = func.FuncOp("main", (list(block.arg_types), [r.type for r in results]),
                       Region(block))
    return ModuleOp([main]), list(graph.inputs)


def param_arrays(graph: Graph, params: Sequence[int]) -> list[np.ndarray]:
    """The 0-d buffers holding the constants at `params`, in their dtypes."""
    return [np.array(graph.consts[i].args[0], dtype=graph.consts[i].dtype.np) for i in params]
