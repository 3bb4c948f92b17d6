"""`irtensor demo train`: the digits CNN reaches 97% test accuracy; bad flags exit 2."""

from __future__ import annotations

import subprocess
import sys

from irtensor.tools import train_demo


def test_digits_cnn_reaches_97_percent() -> None:
    _, accuracy, seconds = train_demo.train(progress=False)
    assert accuracy >= 0.97, (accuracy, seconds)


def test_bad_flags_exit_with_a_message_not_a_traceback() -> None:
    done = subprocess.run([sys.executable, "-m", "irtensor.tools.cli", "demo", "train",
                           "--epochs", "0"], capture_output=True, text=True, check=False)
    assert done.returncode == 2
    assert "--epochs and --batch must be at least 1" in done.stderr
    assert "Traceback" not in done.stderr
