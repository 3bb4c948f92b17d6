"""Train a small CNN on scikit-learn's bundled digits with irtensor: nn, Adam, backward.

    python examples/train_digits.py

The same as `irtensor demo train`, as a plain script: the model, the loop and the
accuracy, in the tinygrad style (the names port by renaming imports).
"""

from __future__ import annotations

import numpy as np

from irtensor import Tensor
from irtensor.nn import optim
from irtensor.nn.state import get_parameters
from irtensor.tools.train_demo import DigitsNet, load

x_train, y_train, x_test, y_test = load(seed=0)
Tensor.manual_seed(0)
model = DigitsNet()
opt = optim.Adam(get_parameters(model), lr=3e-3)
rng = np.random.default_rng(0)
BATCH = 64

with Tensor.train():
    for epoch in range(8):
        order = rng.permutation(len(x_train))
        for i in range(len(x_train) // BATCH):
            pick = order[i * BATCH:(i + 1) * BATCH]
            opt.zero_grad()
            loss = model(Tensor(x_train[pick])).cross_entropy(Tensor(y_train[pick]))
            loss.backward()
            opt.step()
        with Tensor.test():
            predicted = model(Tensor(x_test)).argmax(axis=1).numpy()
        print(f"epoch {epoch}: loss {loss.item():.3f}, "
              f"test accuracy {(predicted == y_test).mean():.3f}")
