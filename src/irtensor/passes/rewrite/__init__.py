"""The hl -> ll rung: tensor programs rewritten into the few low-level op types.

In: `hl` functions (numpy-like ops with broadcasting, matmul, conv2d, pools, norms).
Out: `ll` functions (unary, binary, ternary, reduce, movement, const; no implicit
broadcasting), folded where operands are constants.

- `decompose_hlops`: decompose-hlops, every hl op but conv2d and the pools as ll ops;
- `conv_to_mul_sum`: conv-to-mul-sum, conv2d and the pools as pad + windows + mul + reduce;
- `fold_constants`: fold-constants, ll ops evaluated on constants, exact identities;
- `ll_patterns`: the exact local rewrites of ll ops (canonicalize), registered with `ll`;
- `ll_builder`: `LLBuilder`, which the patterns above emit ll ops with.
"""
