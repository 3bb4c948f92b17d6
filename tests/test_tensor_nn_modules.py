"""irtensor.nn layers on every device: each forward against a numpy reference written out
in nn_reference.py, BatchNorm's running statistics in training and their use in eval,
Dropout's seeded mask and its identity outside training. The outputs of a group of
layers are realized together, so each device compiles few programs."""

from __future__ import annotations

import numpy as np

import nn_reference as ref
from irtensor import Tensor, nn

RNG = np.random.default_rng(11)


def arr(*shape: int) -> np.ndarray:
    return RNG.standard_normal(shape).astype(np.float32)


def close(got: Tensor, want: np.ndarray, tol: float = 1e-5) -> None:
    assert got.shape == want.shape, (got.shape, want.shape)
    np.testing.assert_allclose(got.numpy().astype(np.float64), want, rtol=tol, atol=tol)


def test_layers_with_weights_match_numpy() -> None:
    Tensor.manual_seed(1)
    lin, x_lin = nn.Linear(5, 3), arr(4, 5)
    c2 = nn.Conv2d(4, 6, 3, stride=(2, 1), padding=1, groups=2)
    same = nn.Conv2d(2, 3, (2, 3), padding="same", dilation=(1, 2), bias=False)
    c1 = nn.Conv1d(2, 4, 3, stride=2, padding=1)
    ct = nn.ConvTranspose2d(4, 2, 3, stride=2, padding=1, output_padding=1, groups=2)
    emb, idx = nn.Embedding(7, 3), np.array([[0, 6, 2], [2, 2, 5]], np.int32)
    x2, xs, x1, xt = arr(2, 4, 5, 6), arr(1, 2, 5, 7), arr(2, 2, 9), arr(1, 4, 3, 4)
    outs = [lin(Tensor(x_lin)), c2(Tensor(x2)), same(Tensor(xs)), c1(Tensor(x1)),
            ct(Tensor(xt)), emb(Tensor(idx))]
    outs[0].realize(*outs[1:])
    w = {name: layer.weight.numpy() for name, layer in
         (("lin", lin), ("c2", c2), ("same", same), ("c1", c1), ("ct", ct), ("emb", emb))}
    close(outs[0], x_lin.astype(np.float64) @ w["lin"].T.astype(np.float64) + lin.bias.numpy())
    close(outs[1], ref.conv2d(x2, w["c2"], c2.bias.numpy(), (2, 1), (1, 1, 1, 1), (1, 1), 2))
    # 'same' with kernel (2, 3) dilated (1, 2): 1 extra row at the bottom, 2 columns a side
    close(outs[2], ref.conv2d(xs, w["same"], None, (1, 1), (0, 1, 2, 2), (1, 2)))
    want1 = ref.conv2d(x1[:, :, None], w["c1"][:, :, None], c1.bias.numpy(), (1, 2),
                       (0, 0, 1, 1))[:, :, 0]
    close(outs[3], want1)
    close(outs[4], ref.conv_transpose2d(xt, w["ct"], ct.bias.numpy(), (2, 2), (1, 1), (1, 1),
                                        (1, 1), 2))
    close(outs[5], w["emb"][idx].astype(np.float64))
    assert outs[4].shape == (1, 2, 6, 8)


def test_norm_layers_match_numpy() -> None:
    x4, x3 = arr(3, 4, 2, 5), arr(2, 3, 6)
    ln = nn.LayerNorm((3, 6), eps=1e-4)
    ln.weight.assign(Tensor(arr(3, 6)))
    gn = nn.GroupNorm(2, 4)
    gn.weight.assign(Tensor(arr(4)))
    gn.bias.assign(Tensor(arr(4)))
    rms = nn.RMSNorm(6)
    rms.weight.assign(Tensor(arr(6)))
    plain = nn.LayerNorm(6, elementwise_affine=False)
    outs = [ln(Tensor(x3)), gn(Tensor(x4)), rms(Tensor(x3)), plain(Tensor(x3))]
    outs[0].realize(*outs[1:])
    close(outs[0], ref.normalize(x3, (1, 2), 1e-4) * ln.weight.numpy() + ln.bias.numpy())
    grouped = ref.normalize(x4.reshape(3, 2, -1), (2,), 1e-5).reshape(x4.shape)
    close(outs[1], grouped * gn.weight.numpy().reshape(1, 4, 1, 1)
          + gn.bias.numpy().reshape(1, 4, 1, 1))
    x64 = x3.astype(np.float64)
    close(outs[2], x64 / np.sqrt((x64 ** 2).mean(-1, keepdims=True) + 1e-6) * rms.weight.numpy())
    close(outs[3], ref.normalize(x3, (2,), 1e-5))


def test_batchnorm_tracks_running_statistics_in_training_and_uses_them_in_eval() -> None:
    bn = nn.BatchNorm2d(3, momentum=0.2)
    bn.weight.assign(Tensor(arr(3)))
    rm, rv = np.zeros(3), np.ones(3)
    w, b = bn.weight.numpy().reshape(1, 3, 1, 1), bn.bias.numpy().reshape(1, 3, 1, 1)
    axes = (0, 2, 3)
    with Tensor.train():
        for x in (arr(4, 3, 2, 2), arr(4, 3, 2, 2) + 1):  # the second step replays the first
            out = bn(Tensor(x)).realize(bn.running_mean, bn.running_var)
            close(out, ref.normalize(x, axes, 1e-5) * w + b)
            rm = 0.8 * rm + 0.2 * x.mean(axis=axes)
            rv = 0.8 * rv + 0.2 * x.astype(np.float64).var(axis=axes, ddof=1)
            close(bn.running_mean, rm)
            close(bn.running_var, rv)
    assert bn.num_batches_tracked.tolist() == [2]
    x = arr(2, 3, 2, 2)
    want = (x - rm.reshape(1, 3, 1, 1)) / np.sqrt(rv.reshape(1, 3, 1, 1) + 1e-5) * w + b
    close(bn(Tensor(x)), want)  # eval: the running statistics, which stay as they were
    close(bn.running_mean, rm)


def test_dropout_is_seeded_and_the_identity_outside_training() -> None:
    x = np.abs(arr(40, 50)) + 0.5
    drop = nn.Dropout(0.25)
    with Tensor.train():
        Tensor.manual_seed(3)
        first = drop(Tensor(x)).numpy()
        Tensor.manual_seed(3)
        again = drop(Tensor(x)).numpy()
    np.testing.assert_array_equal(first, again)
    keep = np.random.default_rng(3).random(x.shape) >= 0.25  # the draw manual_seed makes
    np.testing.assert_allclose(first, np.where(keep, x / 0.75, 0), rtol=1e-6)
    assert 0.7 < keep.mean() < 0.8
    np.testing.assert_array_equal(drop(Tensor(x)).numpy(), x)
