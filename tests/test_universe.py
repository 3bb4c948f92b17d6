"""irtensor's xDSL universe (the `xdsl.universe` entry point) offers every pass of its own
and its four dialects to xdsl-opt."""

from __future__ import annotations

import subprocess
import sys
from importlib.metadata import entry_points

from irtensor import passes, universe


def test_the_universe_lists_every_pass_of_irtensor_and_none_of_xdsl() -> None:
    own = {name for name, cls in passes.all_passes().items()  # not those other tests add
           if cls.__module__.startswith("irtensor.")}
    assert set(universe.PASS_NAMES) == own
    for name in universe.PASS_NAMES:
        assert universe.IRTENSOR_UNIVERSE.all_passes[name]() is passes.get_pass(name)


def test_the_universe_gives_the_dialects() -> None:
    loaded = {name: load().name for name, load in universe.IRTENSOR_UNIVERSE.all_dialects.items()}
    assert loaded == {"hl": "hl", "ll": "ll", "kernel": "kernel", "ocl": "ocl"}


def test_the_entry_point_is_installed() -> None:
    (point,) = [p for p in entry_points(group="xdsl.universe") if p.name == "irtensor"]
    assert point.load() is universe.IRTENSOR_UNIVERSE


def test_xdsl_opt_runs_an_irtensor_pass() -> None:
    text = ("func.func @main(%a: tensor<3xf32>) -> tensor<3xf32> {\n"
            "  %r = hl.neg %a : tensor<3xf32>\n  func.return %r : tensor<3xf32>\n}\n")
    done = subprocess.run([sys.executable, "-c", "from xdsl.tools.xdsl_opt import main; main()",
                           "-p", "decompose-hlops"], input=text, text=True,
                          capture_output=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    assert "ll.neg %a : tensor<3xf32>" in done.stdout
