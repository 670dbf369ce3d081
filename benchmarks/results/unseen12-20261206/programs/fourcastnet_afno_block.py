"""FourCastNet's AFNO block (adaptive Fourier neural operator for global weather forecasting):
LayerNorm, a 2-D real FFT over the latitude x longitude token grid, a block-diagonal complex
two-layer MLP applied only to the retained low-frequency modes (both ends of the latitude
axis) and written into a zero spectrum, softshrink sparsification, inverse FFT, a double
skip, then a GELU MLP with its own residual."""

import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, dim, num_blocks, mlp_hidden, keep_fraction, lambd):
        super().__init__()
        self.nb, self.bs = num_blocks, dim // num_blocks
        self.keep_fraction, self.lambd = keep_fraction, lambd
        s = self.bs ** -0.5
        self.w1 = nn.Parameter(s * torch.randn(2, self.nb, self.bs, self.bs))
        self.b1 = nn.Parameter(s * torch.randn(2, self.nb, self.bs))
        self.w2 = nn.Parameter(s * torch.randn(2, self.nb, self.bs, self.bs))
        self.b2 = nn.Parameter(s * torch.randn(2, self.nb, self.bs))
        self.norm1 = nn.LayerNorm(dim)
        self.norm2 = nn.LayerNorm(dim)
        self.fc1 = nn.Linear(dim, mlp_hidden)
        self.fc2 = nn.Linear(mlp_hidden, dim)

    def spectral_mlp(self, xr, xi):
        # block-diagonal complex matmuls written on real and imaginary parts
        w1, b1, w2, b2 = self.w1, self.b1, self.w2, self.b2
        o1r = F.relu(torch.einsum("...bi,bio->...bo", xr, w1[0])
                     - torch.einsum("...bi,bio->...bo", xi, w1[1]) + b1[0])
        o1i = F.relu(torch.einsum("...bi,bio->...bo", xi, w1[0])
                     + torch.einsum("...bi,bio->...bo", xr, w1[1]) + b1[1])
        o2r = (torch.einsum("...bi,bio->...bo", o1r, w2[0])
               - torch.einsum("...bi,bio->...bo", o1i, w2[1]) + b2[0])
        o2i = (torch.einsum("...bi,bio->...bo", o1i, w2[0])
               + torch.einsum("...bi,bio->...bo", o1r, w2[1]) + b2[1])
        return o2r, o2i

    def forward(self, x):  # [B, H, W, C] token grid
        B, H, W, C = x.shape
        residual = x
        y = self.norm1(x)
        spec = torch.fft.rfft2(y, dim=(1, 2), norm="ortho")  # [B, H, W//2+1, C] complex
        Wf = W // 2 + 1
        kh = max(1, int((H // 2) * self.keep_fraction))  # |latitude frequency| < kh
        kw = max(1, int(Wf * self.keep_fraction))
        low = torch.cat((spec[:, :kh, :kw], spec[:, H - kh:, :kw]), dim=1)
        low = low.reshape(B, 2 * kh, kw, self.nb, self.bs)
        o2r, o2i = self.spectral_mlp(low.real, low.imag)
        o2 = torch.stack((o2r, o2i), dim=-1)
        o2 = F.softshrink(o2, lambd=self.lambd)
        o2 = torch.view_as_complex(o2.contiguous()).reshape(B, 2 * kh, kw, C)
        out = torch.zeros(B, H, Wf, C, dtype=spec.dtype, device=x.device)
        out[:, :kh, :kw] = o2[:, :kh]
        out[:, H - kh:, :kw] = o2[:, kh:]
        filtered = torch.fft.irfft2(out, s=(H, W), dim=(1, 2), norm="ortho") + y
        x = filtered + residual
        x = x + self.fc2(F.gelu(self.fc1(self.norm2(x))))
        return x


batch = 2
lat = 90
lon = 180
num_blocks = 8
block_size = 96
mlp_hidden = 3072
keep_fraction = 0.5
lambd = 0.01


def get_inputs():
    return [torch.randn(batch, lat, lon, num_blocks * block_size)]


def get_init_inputs():
    return [num_blocks * block_size, num_blocks, mlp_hidden, keep_fraction, lambd]
