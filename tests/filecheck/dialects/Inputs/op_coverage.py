"""List the ops of the hl and ll dialects that no round-trip test checks.

Usage: python op_coverage.py FOLDER

An op counts as covered when some `.mlir` file in FOLDER has a CHECK line
(CHECK, CHECK-NEXT, ...) with a result printed in the op's custom syntax,
`%r = hl.add ...`. Prints one summary line per dialect, then each op that is
missing.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

from irtensor.dialects import HL, LL


def checked_lines(folder: Path) -> list[str]:
    lines = []
    for path in sorted(folder.glob("*.mlir")):
        for line in path.read_text().splitlines():
            if re.match(r"\s*//\s*CHECK(-[A-Z]+)?:", line):
                lines.append(line)
    return lines


def main() -> int:
    lines = checked_lines(Path(sys.argv[1]))
    for dialect in (HL, LL):
        names = sorted(op.name for op in dialect.operations)
        missing = [
            n for n in names
            if not any(re.search(rf"%[\w.$-]+ = {re.escape(n)}(\s|$)", line) for line in lines)
        ]
        print(f"{dialect.name}: {len(names)} ops, {len(missing)} without a round-trip check")
        for name in missing:
            print(f"  missing: {name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
