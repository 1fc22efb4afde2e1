#!/usr/bin/env python3
"""MobileNetV2, MobileNetV3-Large and EfficientNet-B0 as torchvision builds them (the same layers,
channels, kernels, strides, squeeze-excite and activations; BatchNorm left out, as the ONNX
export folds it into the convs), written in plain torch.nn because Debian 12 has python3-torch
but no torchvision. Random weights (seeded), eval mode, exported to ONNX (opset 17, TorchScript
exporter). For counting dispatches without the GPU machine (docs/conv-planner.md, channels-last
regions):

    /usr/bin/python3 bench/mobilenet_like_onnx.py OUT_DIR [BATCH]
    vk-compile OUT_DIR/mobilenet_v2.onnx -o m.vkcm --target nvidia --precision fp16 --report
"""
import os
import sys

import torch
from torch import nn


def divisible(v, d=8):
    n = max(d, int(v + d / 2) // d * d)
    return n + d if n < 0.9 * v else n


def conv(cin, cout, k, stride=1, groups=1, act=None):
    layers = [nn.Conv2d(cin, cout, k, stride, (k - 1) // 2, groups=groups, bias=True)]
    if act is not None:
        layers.append(act())
    return nn.Sequential(*layers)


class SqueezeExcite(nn.Module):
    def __init__(self, channels, squeeze, act, gate):
        super().__init__()
        self.fc1, self.fc2 = nn.Conv2d(channels, squeeze, 1), nn.Conv2d(squeeze, channels, 1)
        self.act, self.gate = act(), gate()

    def forward(self, x):
        s = nn.functional.adaptive_avg_pool2d(x, 1)
        return x * self.gate(self.fc2(self.act(self.fc1(s))))


class InvertedResidual(nn.Module):
    def __init__(self, cin, hidden, cout, k, stride, act, se=None):
        super().__init__()
        layers = [] if hidden == cin else [conv(cin, hidden, 1, act=act)]
        layers.append(conv(hidden, hidden, k, stride, hidden, act=act))
        if se is not None:
            layers.append(se(hidden))
        layers.append(conv(hidden, cout, 1))
        self.block = nn.Sequential(*layers)
        self.residual = stride == 1 and cin == cout

    def forward(self, x):
        y = self.block(x)
        return x + y if self.residual else y


def head(cin, features, hidden, act, classes=1000):
    class Head(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = conv(cin, features, 1, act=act)
            fc = [nn.Linear(features, hidden), act(), nn.Linear(hidden, classes)] if hidden else [nn.Linear(features, classes)]
            self.fc = nn.Sequential(*fc)

        def forward(self, x):
            return self.fc(torch.flatten(nn.functional.adaptive_avg_pool2d(self.conv(x), 1), 1))
    return Head()


def mobilenet_v2():
    layers, cin = [conv(3, 32, 3, 2, act=nn.ReLU6)], 32
    for t, c, n, s in [(1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2), (6, 96, 3, 1),
                       (6, 160, 3, 2), (6, 320, 1, 1)]:
        for i in range(n):
            layers.append(InvertedResidual(cin, cin * t, c, 3, s if i == 0 else 1, nn.ReLU6))
            cin = c
    layers.append(head(cin, 1280, 0, nn.ReLU6))
    return nn.Sequential(*layers)


def mobilenet_v3_large():
    layers, cin = [conv(3, 16, 3, 2, act=nn.Hardswish)], 16
    for k, exp, c, se, hs, s in [(3, 16, 16, 0, 0, 1), (3, 64, 24, 0, 0, 2), (3, 72, 24, 0, 0, 1),
                                 (5, 72, 40, 1, 0, 2), (5, 120, 40, 1, 0, 1), (5, 120, 40, 1, 0, 1),
                                 (3, 240, 80, 0, 1, 2), (3, 200, 80, 0, 1, 1), (3, 184, 80, 0, 1, 1),
                                 (3, 184, 80, 0, 1, 1), (3, 480, 112, 1, 1, 1), (3, 672, 112, 1, 1, 1),
                                 (5, 672, 160, 1, 1, 2), (5, 960, 160, 1, 1, 1), (5, 960, 160, 1, 1, 1)]:
        squeeze = (lambda ch: SqueezeExcite(ch, divisible(ch // 4), nn.ReLU, nn.Hardsigmoid)) if se else None
        layers.append(InvertedResidual(cin, exp, c, k, s, nn.Hardswish if hs else nn.ReLU, squeeze))
        cin = c
    layers.append(head(cin, 960, 1280, nn.Hardswish))
    return nn.Sequential(*layers)


def efficientnet_b0():
    layers, cin = [conv(3, 32, 3, 2, act=nn.SiLU)], 32
    for t, k, s, c, n in [(1, 3, 1, 16, 1), (6, 3, 2, 24, 2), (6, 5, 2, 40, 2), (6, 3, 2, 80, 3),
                          (6, 5, 1, 112, 3), (6, 5, 2, 192, 4), (6, 3, 1, 320, 1)]:
        for i in range(n):
            squeeze = max(1, cin // 4)
            layers.append(InvertedResidual(cin, cin * t, c, k, s if i == 0 else 1, nn.SiLU,
                                           lambda ch, q=squeeze: SqueezeExcite(ch, q, nn.SiLU, nn.Sigmoid)))
            cin = c
    layers.append(head(cin, 1280, 0, nn.SiLU))
    return nn.Sequential(*layers)


def main():
    out = sys.argv[1]
    batch = int(sys.argv[2]) if len(sys.argv) > 2 else 32
    os.makedirs(out, exist_ok=True)
    for name, build in [("mobilenet_v2", mobilenet_v2), ("mobilenet_v3_large", mobilenet_v3_large),
                        ("efficientnet_b0", efficientnet_b0)]:
        torch.manual_seed(0)
        model = build().eval()
        x = torch.randn(batch, 3, 224, 224)
        torch.onnx.export(model, x, os.path.join(out, name + ".onnx"), opset_version=17, input_names=["x"],
                          output_names=["y"], do_constant_folding=True)
        print(name)


if __name__ == "__main__":
    main()
