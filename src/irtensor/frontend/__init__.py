"""The frontend: the lazy, tinygrad-style `Tensor`, and realizing it.

In: Python calls on `Tensor`s. Out: an `hl` program per realized tensor (recorded op by
op, copy-free views), run through the device's pipeline (`realize`), and numpy arrays.

- `tensor`: the `Tensor` class, creation, elementwise ops, realizing;
- `movement`: reshape, permute, expand, pad, shrink, flip, indexing (`MovementMixin`);
- `reduce_nn`: reductions, matmul, conv2d, pools, softmax, norms (`ReduceMixin`, `NNMixin`);
- `pool_indices`: the indices of `max_pool2d(..., return_indices=True)`;
- `elementwise`, `bitwise`, `bitcast`: more math (rounding, inverse trig, erf, fmod), bit ops,
  casts, bitcast;
- `creation`: linspace, random initialisers, properties (`size`, `assign`, `to`);
- `ops`, `scan`: prod, any/all, argmax, logsumexp, triangles; cumulative scans;
- `indexing`, `einsum`: gather/scatter, diag, roll, unfold; einsum, rearrange;
- `sort`, `nn_ops`: sort/topk; losses, attention, conv_transpose2d, interpolate;
- `realize`: a program from lazy tensors, its pipeline, the program cache, the devices.
"""
