"""Multi-coil MRI reconstruction step as in E2E-VarNet / cascaded networks: expand the image
estimate to coil images with complex sensitivity maps, centred orthonormal 2-D FFT
(ifftshift / fftshift), a learned soft data-consistency step on the sampled k-space columns,
inverse FFT, coil combination with the conjugate maps, and the root-sum-of-squares image."""

import torch
import torch.nn as nn


def fft2c(x):
    x = torch.fft.ifftshift(x, dim=(-2, -1))
    x = torch.fft.fft2(x, dim=(-2, -1), norm="ortho")
    return torch.fft.fftshift(x, dim=(-2, -1))


def ifft2c(k):
    k = torch.fft.ifftshift(k, dim=(-2, -1))
    k = torch.fft.ifft2(k, dim=(-2, -1), norm="ortho")
    return torch.fft.fftshift(k, dim=(-2, -1))


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.dc_weight = nn.Parameter(torch.tensor(0.7))

    def forward(self, image, sens_maps, kspace, mask):
        # image [B, H, W, 2], sens_maps and kspace [B, coils, H, W, 2], mask [W] bool
        img = torch.view_as_complex(image).unsqueeze(1)
        sens = torch.view_as_complex(sens_maps)
        k0 = torch.view_as_complex(kspace)
        k = fft2c(img * sens)
        m = mask.view(1, 1, 1, -1)
        k = k - torch.where(m, k - k0, torch.zeros_like(k)) * self.dc_weight
        coil_imgs = ifft2c(k)
        combined = (coil_imgs * sens.conj()).sum(dim=1)
        rss = torch.sqrt((coil_imgs.abs() ** 2).sum(dim=1))
        return torch.view_as_real(combined), rss


batch = 8
coils = 15
height = 320
width = 320
center_lines = 24


def get_inputs():
    mask = torch.rand(width) < 0.25
    c = width // 2
    mask[c - center_lines // 2: c + center_lines // 2] = True
    return [
        torch.randn(batch, height, width, 2),
        torch.randn(batch, coils, height, width, 2) * 0.3,
        torch.randn(batch, coils, height, width, 2),
        mask,
    ]


def get_init_inputs():
    return []
