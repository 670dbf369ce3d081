"""3D Gaussian Splatting rasterisation in pure PyTorch, per screen tile: each tile holds a
depth-sorted list of projected 2-D Gaussians (mean, scale, rotation angle, opacity logit,
RGB, depth). The 2-D covariance R S S^T R^T plus the 0.3 px low-pass dilation is inverted in
closed form to the conic, every tile pixel (centre grid from meshgrid) gets alpha =
sigmoid(opacity) * exp(-power) clamped to 0.99, front-to-back transmittance is an exclusive
cumprod of (1 - alpha), weights blend colours and depths by bmm, the background fills the
remaining transmittance, and the tiles are permuted back into the full image."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, tile_size, tiles_y, tiles_x, background=(0.0, 0.0, 0.0)):
        super().__init__()
        self.tile_size, self.tiles_y, self.tiles_x = tile_size, tiles_y, tiles_x
        self.register_buffer("background", torch.tensor(background))

    def forward(self, means, scales, thetas, opacity_logits, colors, depths):
        # means: [T, G, 2] pixel coordinates inside the tile; scales: [T, G, 2] (px, > 0)
        n_tiles, G, _ = means.shape
        ts = self.tile_size
        cos, sin = torch.cos(thetas), torch.sin(thetas)
        sx2, sy2 = scales[..., 0] ** 2, scales[..., 1] ** 2
        # Sigma = R diag(sx^2, sy^2) R^T + 0.3 I
        cov_a = cos * cos * sx2 + sin * sin * sy2 + 0.3
        cov_b = cos * sin * (sx2 - sy2)
        cov_c = sin * sin * sx2 + cos * cos * sy2 + 0.3
        det = cov_a * cov_c - cov_b * cov_b
        det_inv = 1.0 / det
        conic_a, conic_b, conic_c = cov_c * det_inv, -cov_b * det_inv, cov_a * det_inv

        ys, xs = torch.meshgrid(torch.arange(ts, device=means.device, dtype=means.dtype),
                                torch.arange(ts, device=means.device, dtype=means.dtype),
                                indexing="ij")
        pix = torch.stack((xs.reshape(-1), ys.reshape(-1)), -1) + 0.5  # [P, 2]
        dx = pix[None, :, None, 0] - means[:, None, :, 0]  # [T, P, G]
        dy = pix[None, :, None, 1] - means[:, None, :, 1]
        power = (0.5 * (conic_a[:, None] * dx * dx + conic_c[:, None] * dy * dy)
                 + conic_b[:, None] * dx * dy)
        alpha = torch.sigmoid(opacity_logits)[:, None, :] * torch.exp(-power)
        alpha = alpha.clamp(max=0.99)
        one_minus = 1.0 - alpha
        transmittance = torch.cumprod(
            torch.cat((torch.ones_like(one_minus[..., :1]), one_minus[..., :-1]), dim=-1), dim=-1)
        weights = alpha * transmittance  # [T, P, G]
        t_final = transmittance[..., -1] * one_minus[..., -1]  # [T, P]
        rgb = torch.bmm(weights, colors) + t_final[..., None] * self.background
        depth = torch.bmm(weights, depths.unsqueeze(-1)).squeeze(-1)
        accum = 1.0 - t_final

        def untile(x):  # [T, P, C] -> [C, H, W]
            c = x.shape[-1]
            x = x.view(self.tiles_y, self.tiles_x, ts, ts, c)
            return x.permute(4, 0, 2, 1, 3).reshape(c, self.tiles_y * ts, self.tiles_x * ts)

        return untile(rgb), untile(depth[..., None]), untile(accum[..., None])


tile_size = 16
tiles_y = 16
tiles_x = 32
gaussians_per_tile = 128


def get_inputs():
    n_tiles = tiles_y * tiles_x
    G = gaussians_per_tile
    means = torch.rand(n_tiles, G, 2) * (tile_size + 8) - 4
    scales = 0.5 + torch.rand(n_tiles, G, 2) * 0.25 * tile_size
    thetas = torch.rand(n_tiles, G) * 3.14159
    opacity_logits = torch.randn(n_tiles, G) - 2.0
    colors = torch.rand(n_tiles, G, 3)
    depths = torch.sort(torch.rand(n_tiles, G) * 10 + 1, dim=-1).values
    return [means, scales, thetas, opacity_logits, colors, depths]


def get_init_inputs():
    return [tile_size, tiles_y, tiles_x]
