"""The examples in the docstrings of the frontend's composed methods run and print
what they say, on every device."""

from __future__ import annotations

import doctest
import importlib

import pytest

from irtensor import Tensor

MODULES = ["elementwise", "scan", "einsum", "sort", "indexing"]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name: str) -> None:
    module = importlib.import_module(f"irtensor.frontend.{name}")
    result = doctest.testmod(module, extraglobs={"Tensor": Tensor}, report=False)
    assert result.attempted > 0, f"{name} has no examples"
    assert result.failed == 0, f"{result.failed} of {result.attempted} examples in {name} failed"
