"""A model's tensors by name, and their files: get_parameters, get_state_dict,
load_state_dict, safe_save and safe_load (tinygrad's names).

A model is any object: `get_state_dict` walks its attributes, lists, tuples and dicts and
names each tensor by its path ("layers.0.weight"), as tinygrad and torch name them.
Files are in the safetensors format, written and read through the `safetensors`
package's numpy API; what a file holds is checked before a tensor is made from it.
"""

from __future__ import annotations

import types
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
from safetensors.numpy import load_file, save_file

from irtensor import dtypes
from irtensor.frontend.tensor import Tensor


class StateFileError(ValueError):
    """A file that is not a safetensors file irtensor can read (truncated, garbled, or
    holding a dtype irtensor has not)."""


def _children(obj: Any) -> list[tuple[str, Any]]:
    if hasattr(obj, "_asdict"):  # a namedtuple
        obj = obj._asdict()
    if isinstance(obj, Mapping):
        return [(str(k), v) for k, v in obj.items()]
    if isinstance(obj, list | tuple):
        return [(str(i), v) for i, v in enumerate(obj)]
    if isinstance(obj, types.ModuleType | type) or not hasattr(obj, "__dict__"):
        return []
    return list(vars(obj).items())


def _walk(obj: Any, prefix: str, path: set[int], out: dict[str, Tensor]) -> None:
    if isinstance(obj, Tensor):
        out[prefix.strip(".")] = obj
        return
    if id(obj) in path:  # a cycle (a layer that refers back to its parent)
        return
    path.add(id(obj))
    for name, child in _children(obj):
        _walk(child, f"{prefix}{name}.", path, out)
    path.discard(id(obj))


def get_state_dict(obj: Any, prefix: str = "") -> dict[str, Tensor]:
    """Every tensor reachable from `obj` by attributes, list/tuple items and dict values,
    named by its dotted path, in attribute order; a tensor reachable two ways is listed
    under both names (torch's state_dict does the same)."""
    out: dict[str, Tensor] = {}
    _walk(obj, prefix, set(), out)
    return out


def get_parameters(obj: Any) -> list[Tensor]:
    """The tensors of `get_state_dict(obj)`, each once: weights, and buffers such as
    BatchNorm's running statistics (an optimizer updates those that require a gradient
    and realizes the others in its step)."""
    seen: dict[int, Tensor] = {}
    for t in get_state_dict(obj).values():
        seen.setdefault(id(t), t)
    return list(seen.values())


def _as_tensor(key: str, value: Any) -> Tensor:
    if isinstance(value, Tensor):
        return value
    if isinstance(value, np.ndarray):
        return Tensor(value)
    raise TypeError(f"state dict entry {key!r} is {type(value).__name__}, not a Tensor or "
                    "numpy array")


def _check_keys(model: dict[str, Tensor], state_dict: Mapping[str, Any]) -> None:
    missing = [k for k in model if k not in state_dict]
    unexpected = [k for k in state_dict if k not in model]
    if missing or unexpected:
        parts = ([f"missing keys {missing}"] if missing else []) + \
            ([f"unexpected keys {unexpected}"] if unexpected else [])
        raise ValueError(f"load_state_dict: {'; '.join(parts)} (strict=False loads the keys "
                       "both have)")


def load_state_dict(obj: Any, state_dict: Mapping[str, Tensor | np.ndarray],
                    strict: bool = True, consume: bool = False, realize: bool = True
                    ) -> list[Tensor]:
    """Give each tensor of `obj` the value of the entry of its name (cast to its dtype;
    the tensor object stays, so an optimizer holding it sees the new value). With
    `strict`, a key the model has and the dict lacks, or the other way, is an error;
    a shape mismatch always is. Everything is checked before anything is loaded.
    `consume` deletes the loaded entries from the dict; `realize` computes the new values
    in one program. Returns the loaded tensors."""
    model = get_state_dict(obj)
    if strict:
        _check_keys(model, state_dict)
    pairs = [(k, t, _as_tensor(k, state_dict[k])) for k, t in model.items() if k in state_dict]
    bad = [f"{k}: model {t.shape}, state dict {v.shape}" for k, t, v in pairs
           if t.shape != v.shape]
    if bad:
        raise ValueError(f"load_state_dict: shape mismatch: {'; '.join(bad)}")
    for _, t, v in pairs:
        t.assign(v)
    loaded = [t for _, t, _ in pairs]
    if realize and loaded:
        loaded[0].realize(*loaded[1:])
    if consume and isinstance(state_dict, dict):
        for k, _, _ in pairs:
            del state_dict[k]
    return loaded


def safe_save(state_dict: Mapping[str, Tensor], path: str | Path,
              metadata: dict[str, str] | None = None) -> None:
    """Write the tensors (realized together first) to a safetensors file."""
    for k, v in state_dict.items():
        if not isinstance(k, str) or not isinstance(v, Tensor):
            raise TypeError(f"safe_save: entry {k!r} must be a str naming a Tensor, got "
                            f"{type(v).__name__}")
    tensors = list(state_dict.values())
    if tensors:
        tensors[0].realize(*tensors[1:])
    save_file({k: np.require(v.numpy(), requirements="C") for k, v in state_dict.items()},
              str(path), metadata)


def _checked(path: str, key: str, array: np.ndarray) -> Tensor:
    try:
        dtypes.from_numpy(array.dtype)
    except TypeError:
        raise StateFileError(f"safe_load: {path}: tensor {key!r} is {array.dtype}, a dtype "
                             "irtensor has not") from None
    return Tensor(array)


def safe_load(path: str | Path) -> dict[str, Tensor]:
    """The tensors of a safetensors file, by name. A missing, truncated or garbled file,
    or one holding a dtype irtensor has not, raises StateFileError (a ValueError)."""
    name = str(path)
    if not Path(name).is_file():
        raise StateFileError(f"safe_load: {name}: no such file")
    try:
        arrays = load_file(name)
    except Exception as e:  # the package's SafetensorError, or numpy's on a bad dtype
        first = str(e).splitlines()[0] if str(e) else type(e).__name__
        raise StateFileError(f"safe_load: {name} is not a readable safetensors file: "
                             f"{first}") from None
    return {k: _checked(name, k, a) for k, a in arrays.items()}
