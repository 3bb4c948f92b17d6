"""The commands and snippets of docs/inspect.md run as written."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "inspect.md"
BLOCK = re.compile(r"```(python|sh)\n(.*?)```", re.S)


def blocks(kind: str) -> list[str]:
    return [body for lang, body in BLOCK.findall(DOC.read_text()) if lang == kind]


def test_the_python_snippets_run_in_order() -> None:
    code = "\n".join(blocks("python"))
    assert code.count("\n") > 40
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                          text=True, timeout=900, check=False)
    assert done.returncode == 0, done.stderr[-3000:]


def test_the_shell_commands_run() -> None:
    commands = [line[2:] for body in blocks("sh") for line in body.splitlines()
                if line.startswith("$ ")]
    assert len(commands) >= 7
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    for command in commands:
        done = subprocess.run(["bash", "-c", command], cwd=ROOT, env=env, capture_output=True,
                              text=True, timeout=600, check=False)
        assert done.returncode == 0, f"{command}\n{done.stderr[-2000:]}"
