"""`irtensor demo train`: a small CNN trained on scikit-learn's bundled digits.

    irtensor demo train [--epochs N] [--device D] [--batch B]

The 1797 8x8 images ship inside scikit-learn (no download). The model is two
3x3 convolutions with batch norm, ReLU and max pooling, then a linear layer;
Adam; every step is one gradient program (forward and backward, fused by the
compiler) and one update program, each compiled once and replayed after that.
A progress bar shows the loss and the test accuracy.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence

import numpy as np

from irtensor import Tensor, nn
from irtensor.nn import optim
from irtensor.nn.state import get_parameters

TEST_SIZE = 297


class DigitsNet:
    """conv(1->16) bn relu pool, conv(16->32) bn relu pool, linear(128->10)."""

    def __init__(self) -> None:
        self.c1, self.n1 = nn.Conv2d(1, 16, 3, padding=1), nn.BatchNorm(16)
        self.c2, self.n2 = nn.Conv2d(16, 32, 3, padding=1), nn.BatchNorm(32)
        self.fc = nn.Linear(32 * 2 * 2, 10)

    def __call__(self, x: Tensor) -> Tensor:
        x = self.n1(self.c1(x)).relu().max_pool2d()
        x = self.n2(self.c2(x)).relu().max_pool2d()
        return self.fc(x.reshape(x.shape[0], -1))


def load(seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Train and test images (N, 1, 8, 8) in [0, 1] and labels, shuffled with `seed`."""
    from sklearn.datasets import load_digits

    digits = load_digits()
    images = (digits.images / 16.0).astype(np.float32)[:, None]
    labels = digits.target.astype(np.int32)
    order = np.random.default_rng(seed).permutation(len(images))
    images, labels = images[order], labels[order]
    cut = len(images) - TEST_SIZE
    return images[:cut], labels[:cut], images[cut:], labels[cut:]


def accuracy(model: DigitsNet, images: np.ndarray, labels: np.ndarray) -> float:
    with Tensor.test():
        predicted = model(Tensor(images)).argmax(axis=1).numpy()
    return float((predicted == labels).mean())


def train(epochs: int = 8, batch: int = 64, lr: float = 3e-3, seed: int = 0,
          progress: bool = True) -> tuple[DigitsNet, float, float]:
    """Train; return the model, its test accuracy and the seconds it took."""
    from tqdm import tqdm

    Tensor.manual_seed(seed)
    x_train, y_train, x_test, y_test = load(seed)
    model = DigitsNet()
    opt = optim.Adam(get_parameters(model), lr=lr)
    rng = np.random.default_rng(seed)
    steps = len(x_train) // batch
    start, test_accuracy = time.perf_counter(), 0.0
    bar = tqdm(total=epochs * steps, disable=not progress, unit="step", file=sys.stdout)
    with Tensor.train():
        for _ in range(epochs):
            order = rng.permutation(len(x_train))
            for i in range(steps):
                pick = order[i * batch:(i + 1) * batch]
                opt.zero_grad()
                loss = model(Tensor(x_train[pick])).cross_entropy(Tensor(y_train[pick]))
                loss.backward()
                opt.step()
                bar.update()
                if i % 8 == 0:
                    bar.set_postfix(loss=f"{loss.item():.3f}", test_acc=f"{test_accuracy:.3f}")
            test_accuracy = accuracy(model, x_test, y_test)
            bar.set_postfix(loss=f"{loss.item():.3f}", test_acc=f"{test_accuracy:.3f}")
    bar.close()
    return model, test_accuracy, time.perf_counter() - start


def main(argv: Sequence[str]) -> int:
    parser = argparse.ArgumentParser(prog="irtensor demo train", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--epochs", type=int, default=8)
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--lr", type=float, default=3e-3)
    parser.add_argument("--device", choices=("llvm", "interp", "opencl"), default="llvm")
    args = parser.parse_args(argv)
    if args.epochs < 1 or args.batch < 1:
        parser.error("--epochs and --batch must be at least 1")
    from irtensor import Context

    with Context(device=args.device):
        _, test_accuracy, seconds = train(args.epochs, args.batch, args.lr)
    print(f"digits: test accuracy {test_accuracy:.4f} on {TEST_SIZE} held-out images after "
          f"{args.epochs} epochs, {seconds:.1f} s on device {args.device}")
    return 0
