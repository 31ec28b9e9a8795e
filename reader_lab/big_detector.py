"""A larger die detector for the accelerator: a small ResNet with a feature pyramid back
to stride 4, CenterNet-style heads.

The committed detector (``train_reader.Detector``, 0.26M parameters, trained on the CPU)
misses about one die in five on photos nobody here tuned on. This one has about ten times
the capacity: residual stages of widths ``WIDTHS`` (16/32/64/128/192) at strides 2-32, a
top-down pyramid of ``PYRAMID`` channels back to stride 4, and the same two heads as the
committed detector, so the companion reads it unchanged (``companion.vision.learned``:
input ``image`` 1x3xHxW in 0-1 BGR, H and W multiples of 32; outputs ``hm``, the sigmoid
heat map at stride 4, and ``wh``, the log box sizes in stride-4 cells).

``count_macs(model, side)`` counts the multiply-adds of one side x side forward pass
(convolutions only; what sets the speed on a CPU).
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

WIDTHS = (16, 32, 64, 128, 192)
DEPTHS = (1, 2, 2, 3)  # residual blocks at strides 4, 8, 16, 32
PYRAMID = 64
HEAD = 48


def _cbr(i: int, o: int, s: int = 1, k: int = 3) -> nn.Sequential:
    return nn.Sequential(nn.Conv2d(i, o, k, s, k // 2, bias=False), nn.BatchNorm2d(o),
                         nn.ReLU(inplace=True))


class Block(nn.Module):
    """A ResNet basic block: two 3x3 convolutions and a shortcut."""

    def __init__(self, i: int, o: int, stride: int = 1) -> None:
        super().__init__()
        self.a = _cbr(i, o, stride)
        self.b = nn.Sequential(nn.Conv2d(o, o, 3, 1, 1, bias=False), nn.BatchNorm2d(o))
        self.short = (nn.Identity() if i == o and stride == 1 else
                      nn.Sequential(nn.Conv2d(i, o, 1, stride, bias=False), nn.BatchNorm2d(o)))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.relu(self.b(self.a(x)) + self.short(x))


class BigDetector(nn.Module):
    def __init__(self, widths: tuple[int, ...] = WIDTHS, depths: tuple[int, ...] = DEPTHS,
                 pyramid: int = PYRAMID, head: int = HEAD) -> None:
        super().__init__()
        self.stem = _cbr(3, widths[0], 2)
        stages = []
        for k, depth in enumerate(depths):
            i, o = widths[k], widths[k + 1]
            stages.append(nn.Sequential(Block(i, o, 2), *(Block(o, o) for _ in range(depth - 1))))
        self.stages = nn.ModuleList(stages)
        self.lateral = nn.ModuleList(nn.Conv2d(w, pyramid, 1) for w in widths[1:])
        self.smooth = nn.ModuleList(_cbr(pyramid, pyramid) for _ in widths[1:-1])
        self.head = _cbr(pyramid, head)
        self.hm = nn.Conv2d(head, 1, 3, 1, 1)
        self.wh = nn.Conv2d(head, 2, 3, 1, 1)
        nn.init.constant_(self.hm.bias, -2.19)

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        feats = []
        x = self.stem(x)
        for stage in self.stages:
            x = stage(x)
            feats.append(x)
        p = self.lateral[-1](feats[-1])
        for k in range(len(feats) - 2, -1, -1):
            p = F.interpolate(p, scale_factor=2.0, mode="nearest") + self.lateral[k](feats[k])
            p = self.smooth[k](p)
        h = self.head(p)
        return torch.sigmoid(self.hm(h)), self.wh(h)


def parameters(model: nn.Module) -> int:
    return sum(p.numel() for p in model.parameters())


def count_macs(model: nn.Module, side: int = 640, height: int | None = None) -> int:
    """Multiply-adds of the convolutions in one forward pass of a side x height input."""
    total = 0

    def hook(mod: nn.Conv2d, _inp, out: torch.Tensor) -> None:
        nonlocal total
        k = mod.kernel_size[0] * mod.kernel_size[1] * mod.in_channels // mod.groups
        total += int(out.numel()) * k

    handles = [m.register_forward_hook(hook) for m in model.modules()
               if isinstance(m, nn.Conv2d)]
    was = model.training
    model.eval()
    with torch.no_grad():
        model(torch.zeros(1, 3, height or side, side))
    model.train(was)
    for h in handles:
        h.remove()
    return total
