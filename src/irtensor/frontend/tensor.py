"""The lazy Tensor: tinygrad's API, recording `hl` IR, realized through a pipeline.

Every operation records an op at once (so a shape or dtype mistake raises at
the call that made it) and computes nothing; `.numpy()`, `.tolist()`,
`.item()` and `.realize()` run the program. Where numpy and tinygrad differ,
this follows tinygrad, and the docstring says so.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Sequence
from typing import Any

import numpy as np
from xdsl.dialects.builtin import TensorType
from xdsl.ir import Operation

from irtensor import dtypes, shapes
from irtensor.dialects import hl
from irtensor.dtypes import DType
from irtensor.frontend import graph, realize
from irtensor.frontend.autograd import GradMixin
from irtensor.frontend.bitcast import BitcastMixin
from irtensor.frontend.bitwise import BitwiseMixin, CastMixin
from irtensor.frontend.creation import CreationMixin, PropertiesMixin
from irtensor.frontend.einsum import EinsumMixin
from irtensor.frontend.elementwise import ElementwiseMixin
from irtensor.frontend.graph import Node
from irtensor.frontend.indexing import IndexingMixin
from irtensor.frontend.inspection import InspectMixin
from irtensor.frontend.movement import MovementMixin, argfix, sizes
from irtensor.frontend.nn_ops import NNOpsMixin
from irtensor.frontend.ops import MoreReduceMixin
from irtensor.frontend.reduce_nn import NNMixin, ReduceMixin
from irtensor.frontend.scan import ScanMixin
from irtensor.frontend.sort import SortMixin
from irtensor.runtime import buffers, limits
from irtensor.settings import CAPTURING, JitError, PipelineLike

Scalar = int | float | bool
POOLED_COPY_BYTES = 1 << 20  # smaller copies come from malloc, which is quicker for them




def _check_draw(shape: Sequence[Any], what: str) -> tuple[int, ...]:
    """Sizes of values numpy is about to make on the host (8 bytes each: float64 draws,
    int64 ranges), checked before numpy asks for the memory."""
    shape = sizes(shape, what)
    limits.check_host(shapes.numel(shape), 8, f"{what}{shapes.fmt(shape)} (8 bytes a value)")
    return shape


def _scalar_in(x: Scalar, d: DType) -> Scalar:
    """A Python scalar as a value of `d` (rounded, for floats), refused by name when an
    integer does not fit."""
    try:
        return d.np.type(x).item()
    except OverflowError:
        info = np.iinfo(d.np)
        raise OverflowError(f"the Python scalar {x} does not fit {d.name} (whose range is "
                            f"[{info.min}, {info.max}]); cast the tensor to a wider dtype "
                            "first") from None


def _kind(d: DType) -> int:
    return 2 if d.is_float else 1 if d.is_int else 0


def _infer(array: np.ndarray) -> DType:
    """Python data: bools, ints as the default int, floats as the default float."""
    if array.dtype == np.bool_:
        return dtypes.bool_
    if np.issubdtype(array.dtype, np.integer):
        return dtypes.default_int
    return dtypes.default_float


def _known(dtype: np.dtype) -> bool:
    """One of irtensor's numpy dtypes (bfloat16 is neither 'f' nor any numpy kind)."""
    try:
        dtypes.from_numpy(dtype)
    except TypeError:
        return False
    return True


def host_array(data: Any, dtype: Any) -> np.ndarray:
    """The buffer of `Tensor(data, dtype)`: numbers only (bools, integers, reals), and
    Python integers that fit the dtype asked for (numpy 2 refuses the others)."""
    array = np.asarray(data)
    if array.dtype.kind not in "biuf" and not _known(array.dtype):
        what = "None" if data is None else f"{array.dtype} data"
        if array.dtype.kind == "O" and data is not None:
            what = "data numpy holds as objects (None, an int beyond int64, mixed types)"
        raise TypeError(f"Tensor: {what} is not supported; a tensor holds booleans, "
                        "integers or real numbers")
    if isinstance(data, np.ndarray | np.generic):  # numpy data keeps its dtype, as in tinygrad
        want = dtypes.as_dtype(array.dtype if dtype is None else dtype)
        return np.array(dtypes.cast_array(array, want.np), order="C")  # rounded once
    want = _infer(array) if dtype is None else dtypes.as_dtype(dtype)
    try:
        return np.array(data, dtype=want.np, order="C")
    except OverflowError as e:
        raise OverflowError(f"Tensor: {e}") from None


class Tensor(MovementMixin, ReduceMixin, NNMixin, ElementwiseMixin, BitwiseMixin, CreationMixin,
             PropertiesMixin, MoreReduceMixin, ScanMixin, EinsumMixin, IndexingMixin, SortMixin,
             NNOpsMixin, BitcastMixin, CastMixin, GradMixin, InspectMixin):
    """A lazy tensor. `Tensor([1, 2, 3])`, `Tensor(np_array)`, `Tensor(2.5)`."""

    __slots__ = ("_value", "device")
    _rng = np.random.default_rng(0)

    def __init__(
        self,
        data: Any,
        dtype: DType | str | np.dtype | type | None = None,
        device: str | None = None,
        requires_grad: bool | None = None,
    ):
        self.device = realize.check_device(device) if device else realize.default_device()
        if isinstance(data, Node):
            self._value = data
        elif isinstance(data, Tensor):
            self._value = data.cast(dtype)._value if dtype else data._value
        else:
            self._value = realize.buffer_value(host_array(data, dtype))
        if requires_grad:
            self.requires_grad_()

    # ------------------------------------------------------------------ properties

    @property
    def _type(self) -> TensorType:
        return self._value.type

    @property
    def shape(self) -> tuple[int, ...]:
        return self._value.shape

    @property
    def dtype(self) -> DType:
        return self._value.dtype

    @property
    def ndim(self) -> int:
        return len(self.shape)

    def numel(self) -> int:
        return shapes.numel(self.shape)

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of a 0-d tensor")
        return self.shape[0]

    def __repr__(self) -> str:
        state = "realized" if realize.buffer_of(self._value) is not None else "lazy"
        return f"<Tensor {self.shape} {self.dtype.name} on {self.device}, {state}>"

    # ------------------------------------------------------------------ creation

    @staticmethod
    def full(shape: int | Sequence[int], fill_value: Scalar, dtype: Any = None,
             device: str | None = None) -> Tensor:
        """A constant: one scalar broadcast to `shape`, stored nowhere."""
        shape = sizes((shape,) if isinstance(shape, int) else tuple(shape), "Tensor.full")
        d = dtypes.as_dtype(dtype) if dtype is not None else Tensor._scalar_dtype(fill_value)
        value = _scalar_in(fill_value, d)
        where = realize.check_device(device) if device else realize.default_device()
        return Tensor._of(graph.const(value, d, shape, where), where)

    @staticmethod
    def zeros(*shape: int, dtype: Any = None, device: str | None = None) -> Tensor:
        return Tensor.full(argfix(*shape), 0, dtype or dtypes.default_float, device)

    @staticmethod
    def ones(*shape: int, dtype: Any = None, device: str | None = None) -> Tensor:
        return Tensor.full(argfix(*shape), 1, dtype or dtypes.default_float, device)

    @staticmethod
    def empty(*shape: int, dtype: Any = None, device: str | None = None) -> Tensor:
        """Unspecified contents; here, zeros."""
        return Tensor.zeros(*shape, dtype=dtype, device=device)

    @staticmethod
    def arange(start: Scalar, stop: Scalar | None = None, step: Scalar = 1, dtype: Any = None,
               device: str | None = None) -> Tensor:
        """A buffer (tinygrad builds it lazily from a cumsum; the result is the same)."""
        if stop is None:
            start, stop = 0, start
        for name, v in (("start", start), ("stop", stop), ("step", step)):
            if isinstance(v, bool) or not isinstance(v, numbers.Real) or not math.isfinite(v):
                raise TypeError(f"Tensor.arange: {name} must be a finite int or float, "
                                f"got {v!r}")
        if step == 0:
            raise ValueError("Tensor.arange: step must not be zero")
        kind = dtypes.default_float if any(isinstance(v, float) for v in (start, stop, step)) \
            else dtypes.default_int
        count = max(math.ceil((stop - start) / step), 0)
        _check_draw((count,), "Tensor.arange")
        return Tensor(np.arange(start, stop, step), dtype or kind, device)

    @staticmethod
    def eye(n: int, m: int | None = None, dtype: Any = None, device: str | None = None) -> Tensor:
        shape = _check_draw((n, n if m is None else m), "Tensor.eye")
        return Tensor(np.eye(*shape), dtype or dtypes.default_float, device)

    @staticmethod
    def manual_seed(seed: int = 0) -> None:
        Tensor._rng = np.random.default_rng(seed)

    @staticmethod
    def rand(*shape: int, dtype: Any = None, device: str | None = None) -> Tensor:
        """Uniform in [0, 1), drawn on the host from the `manual_seed` generator."""
        shape = _check_draw(argfix(*shape), "Tensor.rand")
        return Tensor(Tensor._rng.random(shape), dtype or dtypes.default_float, device)

    @staticmethod
    def randn(*shape: int, dtype: Any = None, device: str | None = None) -> Tensor:
        shape = _check_draw(argfix(*shape), "Tensor.randn")
        return Tensor(Tensor._rng.standard_normal(shape), dtype or dtypes.default_float, device)

    @staticmethod
    def uniform(*shape: int, low: float = 0.0, high: float = 1.0, dtype: Any = None,
                device: str | None = None) -> Tensor:
        shape = _check_draw(argfix(*shape), "Tensor.uniform")
        return Tensor(Tensor._rng.uniform(low, high, shape), dtype or dtypes.default_float,
                      device)

    def full_like(self, fill_value: Scalar, dtype: Any = None) -> Tensor:
        return Tensor.full(self.shape, fill_value, dtype or self.dtype, self.device)

    def zeros_like(self, dtype: Any = None) -> Tensor:
        return self.full_like(0, dtype)

    def ones_like(self, dtype: Any = None) -> Tensor:
        return self.full_like(1, dtype)

    def rand_like(self, dtype: Any = None) -> Tensor:
        return Tensor.rand(*self.shape, dtype=dtype or self.dtype, device=self.device)

    def randn_like(self, dtype: Any = None) -> Tensor:
        return Tensor.randn(*self.shape, dtype=dtype or self.dtype, device=self.device)

    # ------------------------------------------------------------------ realization

    def realize(self, *others: Tensor, pipeline: PipelineLike | None = None,
                device_pipeline: PipelineLike | None = None) -> Tensor:
        """Compute this tensor (and `others`, sharing their work); return self. `pipeline`
        (a pipeline string, pass objects, registered names) is what a new program runs
        instead of the device's `default-<device>`; `device_pipeline` what a compiled
        device runs on each kernel instead of `device-<device>` (see `irtensor.Context`)."""
        tensors = (self, *others)
        for i, t in enumerate(others):
            if not isinstance(t, Tensor):
                raise TypeError(f"realize() takes Tensors to realize with this one; argument "
                                f"#{i} is {type(t).__name__}")
        values = realize.realize([t._value for t in tensors], self.device, pipeline,
                                 device_pipeline)
        for t, v in zip(tensors, values, strict=True):
            t._value = v
        return self

    def numpy(self) -> np.ndarray:
        if (captured := CAPTURING.get()) is not None:
            raise JitError(
                f"TinyJit: {captured} reads a tensor's value on the host (numpy, item, "
                "tolist, bool) while it is captured; replays run no Python, so control flow "
                "on the value (`if loss.item() > 1:`) would be frozen and a print would not "
                "repeat. Return the tensor from the function and read it after the call")
        self.realize()
        array = realize.buffer_of(self._value)
        assert array is not None
        if array.nbytes < POOLED_COPY_BYTES:
            return array.copy()
        # A copy the caller owns, in a pooled buffer: the pool reuses it only once the
        # caller has dropped it, and a repeated call faults in no fresh pages.
        out = buffers.empty(array.shape, array.dtype)
        np.copyto(out, array)
        return out

    def __bool__(self) -> bool:
        """A one-element tensor's truth (realized, as torch); more elements are ambiguous."""
        if self.numel() != 1:
            raise ValueError(f"the truth value of a tensor of shape {self.shape} is ambiguous; "
                             "use .any() or .all()")
        return bool(self.item())

    def tolist(self) -> Any:
        return self.numpy().tolist()

    def item(self) -> Scalar:
        if self.numel() != 1:
            raise ValueError(f"item() needs a tensor of one element, this one has shape "
                             f"{self.shape}")
        return self.numpy().reshape(()).item()


    # ------------------------------------------------------------------ plumbing

    @staticmethod
    def _of(node: Node, device: str) -> Tensor:
        """A tensor of a recorded node (the device already checked)."""
        t = Tensor.__new__(Tensor)
        t._value, t.device = node, device
        return t

    def _new(self, op: type[Operation], *srcs: Tensor, args: tuple[Any, ...] = ()) -> Tensor:
        """Record `op` on `srcs` (constructor arguments `args`) on this tensor's device."""
        node = graph.record(op, tuple(s._value for s in srcs), args, self.device)
        return Tensor._of(node, self.device)

    @staticmethod
    def _scalar_dtype(x: Scalar) -> DType:
        if isinstance(x, bool):
            return dtypes.bool_
        return dtypes.default_int if isinstance(x, int) else dtypes.default_float

    def _const(self, x: Scalar, dtype: DType) -> Tensor:
        """A 0-d constant on this tensor's device (Tensor.full without its checks)."""
        return Tensor._of(graph.const(_scalar_in(x, dtype), dtype, (), self.device), self.device)

    def _pair(self, other: Tensor | Scalar, reverse: bool = False) -> tuple[Tensor, Tensor]:
        """Both operands as tensors of one dtype. Python scalars take the tensor's dtype
        unless their kind is higher (a float with an int tensor gives the default float)."""
        if isinstance(other, Tensor):
            if other._value.dtype is self._value.dtype:
                return (other, self) if reverse else (self, other)
            d = dtypes.promote(self.dtype, other.dtype)
            a, b = self.cast(d), other.cast(d)
        else:
            mine = self._value.dtype
            if type(other) is float and mine.is_float:  # the common case, decided at once
                return (self._const(other, mine), self) if reverse \
                    else (self, self._const(other, mine))
            kind = Tensor._scalar_dtype(other)
            d = mine if _kind(kind) <= _kind(mine) else kind
            a, b = self.cast(d), self._const(other, d)
        return (b, a) if reverse else (a, b)

    def _binary(self, op: type[Operation], other: Tensor | Scalar, reverse: bool = False
                ) -> Tensor:
        a, b = self._pair(other, reverse)
        return a._new(op, a, b)

    def _float(self) -> Tensor:
        return self if self.dtype.is_float else self.cast(dtypes.default_float)

    def _unary_float(self, op: type[Operation]) -> Tensor:
        x = self._float()
        return x._new(op, x)

    def cast(self, dtype: Any) -> Tensor:
        if dtype is self._value.dtype:
            return self
        d = dtypes.as_dtype(dtype)
        return self if d is self.dtype else self._new(hl.CastOp, self, args=(d,))

    # ------------------------------------------------------------------ elementwise

    def _both_bool(self, x: Tensor | Scalar) -> bool:
        return self.dtype.is_bool and (x.dtype.is_bool if isinstance(x, Tensor)
                                       else isinstance(x, bool))

    def __add__(self, x: Tensor | Scalar) -> Tensor:
        if self._both_bool(x):
            return self._binary(hl.OrOp, x)  # numpy: True + True is True
        return self._binary(hl.AddOp, x)

    def __radd__(self, x: Scalar) -> Tensor:
        return self._binary(hl.OrOp if self._both_bool(x) else hl.AddOp, x, reverse=True)

    def __sub__(self, x: Tensor | Scalar) -> Tensor:
        return self._binary(hl.SubOp, x)

    def __rsub__(self, x: Scalar) -> Tensor:
        return self._binary(hl.SubOp, x, reverse=True)

    def __mul__(self, x: Tensor | Scalar) -> Tensor:
        return self._binary(hl.AndOp if self._both_bool(x) else hl.MulOp, x)  # numpy: and

    def __rmul__(self, x: Scalar) -> Tensor:
        return self._binary(hl.AndOp if self._both_bool(x) else hl.MulOp, x, reverse=True)

    def __truediv__(self, x: Tensor | Scalar) -> Tensor:
        """True division; integers are divided as the default float (as tinygrad)."""
        a, b = self._pair(x)
        return a._float()._binary(hl.DivOp, b._float())

    def __rtruediv__(self, x: Scalar) -> Tensor:
        return self._float()._binary(hl.DivOp, x, reverse=True)

    def __floordiv__(self, x: Tensor | Scalar) -> Tensor:
        a, _ = self._pair(x)
        if not a.dtype.is_int:
            raise TypeError(f"// is defined for integer tensors here, not {a.dtype.name}")
        return self._binary(hl.IDivOp, x)

    def __mod__(self, x: Tensor | Scalar) -> Tensor:
        a, _ = self._pair(x)
        if not a.dtype.is_int:
            raise TypeError(f"% is defined for integer tensors here, not {a.dtype.name}")
        return self._binary(hl.ModOp, x)

    def __pow__(self, x: Tensor | Scalar) -> Tensor:
        """Non-negative integer exponents multiply, squaring (exact; integers stay integers
        and wrap as numpy's do) for any exponent on integers and up to 16 on floats;
        others use hl.pow on floats."""
        if isinstance(x, int) and not isinstance(x, bool) and x >= 0 \
                and (x <= 16 or not self.dtype.is_float):
            result, base = self.ones_like(), self
            while x:
                result, base, x = (result * base if x & 1 else result), base * base, x >> 1
            return result
        return self._float()._binary(hl.PowOp, x)

    def __rpow__(self, x: Scalar) -> Tensor:
        return self._float()._binary(hl.PowOp, x, reverse=True)

    def __neg__(self) -> Tensor:
        return self.logical_not() if self.dtype.is_bool else self._new(hl.NegOp, self)

    def __lt__(self, x: Tensor | Scalar) -> Tensor:
        return self._binary(hl.LtOp, x)

    def __le__(self, x: Tensor | Scalar) -> Tensor:
        return self._binary(hl.LeOp, x)

    def __gt__(self, x: Tensor | Scalar) -> Tensor:
        return self._binary(hl.GtOp, x)

    def __ge__(self, x: Tensor | Scalar) -> Tensor:
        return self._binary(hl.GeOp, x)

    def __eq__(self, x: object) -> Tensor:  # type: ignore[override]
        return self._binary(hl.EqOp, x)  # type: ignore[arg-type]

    def __ne__(self, x: object) -> Tensor:  # type: ignore[override]
        return self._binary(hl.NeOp, x)  # type: ignore[arg-type]

    __hash__ = object.__hash__

    def _logical(self, op: type[Operation], x: Tensor | Scalar) -> Tensor:
        a, b = self._pair(x)
        if not a.dtype.is_bool:
            raise TypeError(f"logical operations need bool tensors, got {a.dtype.name}")
        return a._new(op, a, b)

    def __and__(self, x: Tensor | Scalar) -> Tensor:
        """Logical on bools, bitwise on integers (as numpy, torch and tinygrad)."""
        return self.bitwise_and(x) if self.dtype.is_int else self._logical(hl.AndOp, x)

    def __or__(self, x: Tensor | Scalar) -> Tensor:
        return self.bitwise_or(x) if self.dtype.is_int else self._logical(hl.OrOp, x)

    def __xor__(self, x: Tensor | Scalar) -> Tensor:
        return self.bitwise_xor(x) if self.dtype.is_int else self._logical(hl.XorOp, x)

    def __lshift__(self, x: int | Tensor) -> Tensor:
        return self.lshift(x)

    def __rshift__(self, x: int | Tensor) -> Tensor:
        return self.rshift(x)

    __rand__, __ror__, __rxor__ = __and__, __or__, __xor__

    def logical_not(self) -> Tensor:
        if not self.dtype.is_bool:
            raise TypeError(f"logical_not needs a bool tensor, got {self.dtype.name}")
        return self._new(hl.NotOp, self)

    def __invert__(self) -> Tensor:
        """Logical not of bools, bitwise not of integers (~x = -x - 1)."""
        return self.bitwise_not() if self.dtype.is_int else self.logical_not()

    def add(self, x: Tensor | Scalar) -> Tensor:
        return self + x

    def sub(self, x: Tensor | Scalar) -> Tensor:
        return self - x

    def mul(self, x: Tensor | Scalar) -> Tensor:
        return self * x

    def div(self, x: Tensor | Scalar, rounding_mode: str | None = None) -> Tensor:
        """torch.div: None is true division (`/`, ints give the default float); "trunc"
        rounds toward zero and "floor" down, both keeping the dtype (ints stay ints).
        A float "floor" is torch's (and Python's) (a - fmod(a, b)) / b made whole, not
        floor(a / b), which can round up past it (1.0 // 0.1 is 9.0); x / 0 is a / b.
        An int divided by 0 gives 0 (numpy's; torch raises)."""
        if rounding_mode is None:
            return self / x
        if rounding_mode not in ("trunc", "floor"):
            raise ValueError(f"div rounding_mode {rounding_mode!r}: expected None, 'trunc' "
                             "or 'floor'")
        a, b = self._pair(x)
        if a.dtype.is_int:
            return a // b if rounding_mode == "floor" else (a - a.fmod(b)) // b
        if rounding_mode == "trunc":
            return (a / b).trunc()
        r = a.fmod(b)
        q = (a - r) / b  # whole, up to rounding
        q = ((r != 0) & ((b < 0) != (r < 0))).where(q - 1, q)
        f = q.floor()
        f = (q - f > 0.5).where(f + 1, f)
        f = (q == 0).where(q.copysign(a / b), f)  # a zero quotient takes the sign of a / b
        return (b == 0).where(a / b, f)

    def pow(self, x: Tensor | Scalar) -> Tensor:
        return self**x

    def neg(self) -> Tensor:
        return -self

    def abs(self) -> Tensor:
        return self if self.dtype.is_bool else self._new(hl.AbsOp, self)

    def relu(self) -> Tensor:
        return self._new(hl.ReluOp, self)

    def exp(self) -> Tensor:
        return self._unary_float(hl.ExpOp)

    def exp2(self) -> Tensor:
        return self._unary_float(hl.Exp2Op)

    def log(self) -> Tensor:
        return self._unary_float(hl.LogOp)

    def log2(self) -> Tensor:
        return self._unary_float(hl.Log2Op)

    def sqrt(self) -> Tensor:
        return self._unary_float(hl.SqrtOp)

    def rsqrt(self) -> Tensor:
        return self._unary_float(hl.RsqrtOp)

    def reciprocal(self) -> Tensor:
        return self._unary_float(hl.ReciprocalOp)

    def sin(self) -> Tensor:
        return self._unary_float(hl.SinOp)

    def cos(self) -> Tensor:
        return self._unary_float(hl.CosOp)

    def sigmoid(self) -> Tensor:
        return self._unary_float(hl.SigmoidOp)

    def tanh(self) -> Tensor:
        return self._unary_float(hl.TanhOp)

    def gelu(self, approximate: str = "tanh") -> Tensor:
        """The tanh approximation by default, as tinygrad; `approximate="none"` is the
        exact 0.5 x (1 + erf(x / sqrt 2)), torch's default (torch's "tanh" is this one)."""
        if approximate not in ("none", "tanh"):
            raise ValueError(f"gelu approximate {approximate!r}: expected 'none' or 'tanh'")
        x = self._float()
        if approximate == "none":
            return 0.5 * x * (1 + (x * (1 / math.sqrt(2))).erf())
        return 0.5 * x * (1 + (math.sqrt(2 / math.pi) * (x + 0.044715 * x * x * x)).tanh())

    def silu(self) -> Tensor:
        return self._float() * self.sigmoid()

    def softplus(self, beta: float = 1) -> Tensor:
        """log(1 + exp(beta x)) / beta as max(bx, 0) + log1p(exp(-|bx|)): exp never
        overflows (softplus(100) is 100, not inf), and log1p keeps the tiny result of a
        very negative x (softplus(-30) is 9.4e-14, not 0)."""
        x = self._float() * beta
        u = (-x.abs()).exp()  # in [0, 1]
        w = 1 + u
        # log1p(u) = log(w) * u / (w - 1), exact where w rounds to 1 (Goldberg's trick)
        log1p = (w == 1).where(u, w.log() * (u / (w - 1)))
        return (x.relu() + log1p) * (1 / beta)

    def maximum(self, x: Tensor | Scalar) -> Tensor:
        return self._binary(hl.MaximumOp, x)

    def minimum(self, x: Tensor | Scalar) -> Tensor:
        return self._binary(hl.MinimumOp, x)

    def clip(self, min_: Scalar | None = None, max_: Scalar | None = None) -> Tensor:
        """`clamp` (at least one bound, as torch)."""
        return self.clamp(min_, max_)

    def where(self, x: Tensor | Scalar, y: Tensor | Scalar) -> Tensor:
        """`cond.where(x, y)`: x where cond else y, all three broadcasting (tinygrad's spelling)."""
        cond = self if self.dtype.is_bool else self != 0
        if not isinstance(x, Tensor) and not isinstance(y, Tensor):
            x = cond._const(x, dtypes.promote(Tensor._scalar_dtype(x), Tensor._scalar_dtype(y)))
        a, b = x._pair(y) if isinstance(x, Tensor) else y._pair(x, reverse=True)  # type: ignore[union-attr]
        return cond._new(hl.WhereOp, cond, a, b)
