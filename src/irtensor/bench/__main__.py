"""`python -m irtensor.bench`: the same as `irtensor bench`."""

import sys

from irtensor.bench.runner import main

if __name__ == "__main__":
    sys.exit(main(prog="python -m irtensor.bench"))
