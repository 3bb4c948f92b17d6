"""`irtensor bench` (also `python -m irtensor.bench`): irtensor on its devices side by
side with numpy, and torch and tinygrad when they import, on a fixed set of cases.

Each thread count runs in a fresh child process with the thread variables set before
anything is imported and with empty kernel caches, so irtensor's first call of a case
pays the pipeline and every compile. See bench/README.md for the columns.
"""

from irtensor.bench.runner import main

__all__ = ["main"]
