"""The `>>>` examples of docs/frontend.md run and print what the page says (doctest),
on the default device, llvm, as the page shows."""

from __future__ import annotations

import doctest
import re
from pathlib import Path

import numpy as np
import pytest

from irtensor import Tensor, dtypes

DOC = Path(__file__).resolve().parent.parent / "docs" / "frontend.md"
FENCE = re.compile(r"^```(\w*)\s*$")
FLAGS = doctest.NORMALIZE_WHITESPACE | doctest.ELLIPSIS
MIN_EXAMPLES = 100


def python_blocks(text: str) -> str:
    """The page with all but its ```python blocks blanked, line for line, so a failure
    names the page's own line and a fence ends an example's expected output."""
    kept, inside = [], False
    for line in text.splitlines():
        fence = FENCE.match(line)
        if fence:
            inside = not inside and fence.group(1) == "python"
            kept.append("")
        else:
            kept.append(line if inside else "")
    return "\n".join(kept) + "\n"


def test_the_examples_print_what_the_page_says(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("IRTENSOR_DEVICE", "llvm")
    globs = {"Tensor": Tensor, "dtypes": dtypes, "np": np}
    test = doctest.DocTestParser().get_doctest(python_blocks(DOC.read_text()), globs,
                                               DOC.name, str(DOC), 0)
    runner = doctest.DocTestRunner(optionflags=FLAGS)
    try:
        result = runner.run(test)
    finally:
        Tensor.training = False
    assert result.failed == 0, f"{result.failed} of {result.attempted} examples failed"
    assert result.attempted > MIN_EXAMPLES, f"only {result.attempted} examples"
