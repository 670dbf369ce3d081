"""Multi-scale Retinex with colour restoration (MSRCR, Jobson et al.) on a channels_last RGB
batch, with the large Gaussian surrounds approximated on an image pyramid: one 19-tap Gaussian
applied separably as depthwise conv2d (groups = 3) after reflect padding, at full resolution,
after avg_pool2d by 4 and after avg_pool2d by 16, the blurred low-resolution images brought back
by bilinear interpolate; log-ratio responses averaged over the three scales, the colour
restoration factor beta * (log(alpha * I) - log(sum_c I)), gain and offset, then a per-image,
per-channel contrast stretch to mean +- 2 std (var_mean over H and W) with clamp to [0, 1]."""


import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, sigma, taps, alpha, beta, gain, offset):
        super().__init__()
        half = taps // 2
        xs = torch.arange(-half, half + 1, dtype=torch.float32)
        g = torch.exp(-xs * xs / (2.0 * sigma * sigma))
        g = g / g.sum()
        self.register_buffer("kernel_h", g.view(1, 1, 1, taps).repeat(3, 1, 1, 1))
        self.register_buffer("kernel_v", g.view(1, 1, taps, 1).repeat(3, 1, 1, 1))
        self.half = half
        self.alpha = alpha
        self.beta = beta
        self.gain = gain
        self.offset = offset

    def blur(self, x):
        p = self.half
        x = F.conv2d(F.pad(x, (p, p, 0, 0), mode="reflect"), self.kernel_h, groups=3)
        return F.conv2d(F.pad(x, (0, 0, p, p), mode="reflect"), self.kernel_v, groups=3)

    def forward(self, img):
        # img: [B, 3, H, W] in [0, 1], channels_last
        size = img.shape[-2:]
        x = img + 1.0 / 255.0
        log_x = torch.log(x)
        surrounds = [self.blur(x)]
        for factor in (4, 16):
            small = self.blur(F.avg_pool2d(x, factor))
            surrounds.append(F.interpolate(small, size=size, mode="bilinear",
                                           align_corners=False))
        msr = sum(log_x - torch.log(s.clamp(min=1e-6)) for s in surrounds) / len(surrounds)
        crf = self.beta * (torch.log(self.alpha * x) - torch.log(x.sum(dim=1, keepdim=True)))
        out = self.gain * (msr * crf + self.offset)
        var, mean = torch.var_mean(out, dim=(2, 3), keepdim=True)
        std = torch.sqrt(var + 1e-8)
        lo, hi = mean - 2.0 * std, mean + 2.0 * std
        return ((out - lo) / (hi - lo)).clamp(0.0, 1.0)


batch = 8
height = 512
width = 768


def get_inputs():
    base = torch.rand(batch, 3, height // 16, width // 16)
    img = F.interpolate(base, size=(height, width), mode="bicubic", align_corners=False)
    img = (img * 0.6 + 0.4 * torch.rand(batch, 3, height, width)).clamp(0.0, 1.0)
    return [img.contiguous(memory_format=torch.channels_last)]


def get_init_inputs():
    return [3.0, 19, 125.0, 46.0, 0.5, 0.1]
