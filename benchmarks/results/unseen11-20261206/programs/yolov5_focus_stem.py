"""YOLOv5 (v1-v5) Focus stem: space-to-depth by four strided 2-D slices of the image
(even/odd rows times even/odd columns) concatenated on channels, then Conv 3x3 +
BatchNorm (eval) + SiLU, followed by a bottleneck (1x1 conv, 3x3 conv, each BN + SiLU)
with a residual add, on a non-square 384x640 letterboxed batch."""

import torch
import torch.nn as nn
import torch.nn.functional as F


def _bn(channels):
    bn = nn.BatchNorm2d(channels, eps=1e-3, momentum=0.03)
    with torch.no_grad():
        bn.running_mean.uniform_(-0.2, 0.2)
        bn.running_var.uniform_(0.5, 1.5)
    return bn


class Model(nn.Module):
    def __init__(self, in_ch, out_ch):
        super().__init__()
        self.stem = nn.Conv2d(4 * in_ch, out_ch, 3, 1, 1, bias=False)
        self.stem_bn = _bn(out_ch)
        self.cv1 = nn.Conv2d(out_ch, out_ch, 1, bias=False)
        self.bn1 = _bn(out_ch)
        self.cv2 = nn.Conv2d(out_ch, out_ch, 3, padding=1, bias=False)
        self.bn2 = _bn(out_ch)
        self.eval()

    def forward(self, x):
        x = torch.cat((x[..., ::2, ::2], x[..., 1::2, ::2],
                       x[..., ::2, 1::2], x[..., 1::2, 1::2]), dim=1)
        y = F.silu(self.stem_bn(self.stem(x)))
        z = F.silu(self.bn1(self.cv1(y)))
        z = F.silu(self.bn2(self.cv2(z)))
        return y + z


batch = 8
in_ch = 3
out_ch = 32
height = 384
width = 640


def get_inputs():
    return [torch.rand(batch, in_ch, height, width)]


def get_init_inputs():
    return [in_ch, out_ch]
