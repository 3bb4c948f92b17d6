"""`irtensor viz` writes one page: every stage with its changes marked, the kernel graph,
the kernel table; headless Chromium loads it without errors and shows all of them."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from irtensor.ir import parse
from irtensor.pipeline import Pipeline
from irtensor.tools import viz

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
if CHROMIUM is None and os.environ.get("IRTENSOR_REQUIRE_CHROMIUM") == "1":
    raise RuntimeError("IRTENSOR_REQUIRE_CHROMIUM=1 but chromium is not installed")
HEADLESS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
            "--disable-background-networking", "--disable-component-update", "--disable-sync"]


def conv_module():  # type: ignore[no-untyped-def]
    return parse((EXAMPLES / "conv_block.mlir").read_text())


def test_the_stages_are_the_input_each_pass_and_the_loops() -> None:
    stages = viz.stages_of(conv_module(), "hl-to-kernel")
    names = [s.name for s in stages]
    assert names == ["input", *[str(p.spec()) for p in Pipeline("hl-to-kernel").passes],
                     "lower-kernels-to-loops"]
    decompose = stages[1]
    lines = decompose.text.splitlines()
    assert decompose.changed and all("hl." not in lines[n] or "hl.max_pool2d" in lines[n]
                                     or "hl.conv2d" in lines[n] for n in decompose.changed)
    assert any("ll.reduce" in lines[n] for n in decompose.changed)
    assert not stages[0].changed


def test_the_page_holds_every_stage_and_kernel(tmp_path: Path) -> None:
    page = viz.write_page(conv_module(), tmp_path / "conv.html", "conv")
    text = page.read_text()
    kernels = viz.kernel_rows(conv_module(), "hl-to-kernel", time_kernels=False)
    assert len(kernels) == 6
    assert text.count('<div class="stage"') == 12  # the input and each pass of hl-to-kernel
    for row in kernels:
        assert f'id="row-{row.label[1:]}"' in text and row.name in text
        assert f'id="kernel_{row.label[1:]}"' in text  # its node in the graph
        assert row.why
    assert "<mark>" in text and "<svg" in text and "http://" not in text.replace(
        "http://www.w3.org", "")


def test_the_layout_of_our_own_draws_every_kernel() -> None:
    rows = viz.kernel_rows(conv_module(), "hl-to-kernel", time_kernels=False)
    svg = viz._layered_svg(rows)
    assert svg.startswith("<svg") and svg.count("<rect") == len(rows) + 3  # and %x %w %b
    assert all(f'id="kernel_{r.label[1:]}"' in svg for r in rows)


def test_the_cli_writes_the_page_and_refuses_bad_input(tmp_path: Path) -> None:
    out = tmp_path / "mlp.html"
    done = subprocess.run([sys.executable, "-m", "irtensor.tools.cli", "viz",
                           str(EXAMPLES / "mlp.mlir"), "-o", str(out), "--time"],
                          capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    assert re.search(r"\d+\.\d us</td>", out.read_text())  # kernel times
    bad = tmp_path / "bad.mlir"
    bad.write_text("func.func @main( {")
    done = subprocess.run([sys.executable, "-m", "irtensor.tools.cli", "viz", str(bad)],
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 1 and done.stderr.startswith("irtensor viz: error:")
    assert "Traceback" not in done.stderr


@pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed")
def test_headless_chromium_loads_the_page_without_errors(tmp_path: Path) -> None:
    page = viz.write_page(conv_module(), tmp_path / "conv.html", "conv", time_kernels=True)
    profile = tmp_path / "profile"
    dom = subprocess.run([CHROMIUM, *HEADLESS, f"--user-data-dir={profile}",
                          "--enable-logging=stderr", "--v=0", "--dump-dom", page.as_uri()],
                         capture_output=True, text=True, timeout=120, check=False)
    assert dom.returncode == 0, dom.stderr[-2000:]
    body = re.search(r"<body[^>]*>", dom.stdout)
    assert body is not None and 'data-ready="yes"' in body.group(0), body
    assert "data-errors" not in body.group(0)
    assert not re.search(r"CONSOLE.*(Uncaught|Error)", dom.stderr)
    assert "6 kernels" in dom.stdout and "12 stages" in dom.stdout
    shot = tmp_path / "conv.png"
    subprocess.run([CHROMIUM, *HEADLESS, f"--user-data-dir={profile}", "--hide-scrollbars",
                    "--window-size=1400,1100", f"--screenshot={shot}", page.as_uri()],
                   capture_output=True, timeout=120, check=False)
    assert shot.is_file() and shot.stat().st_size > 10_000
