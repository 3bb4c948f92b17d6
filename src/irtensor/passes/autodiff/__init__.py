"""The autodiff rung: the gradient of an `ll` function, as another `ll` function.

In: `ll` functions (after `decompose-hlops` and `conv-to-mul-sum`), one result each.
Out: the same functions and, beside each, `@<name>_grad`: its arguments (and, with
`seed=arg`, the result's cotangent last) to the result followed by the
vector-Jacobian product with respect to the chosen arguments, in `ll` ops only, so
it fuses and lowers like any program.

- `grad`: the `grad` pass (reverse mode over the function's ops, last to first);
- `vjp_rules`: one named rule per `ll` op type, `register_vjp` to add or replace one.
"""
