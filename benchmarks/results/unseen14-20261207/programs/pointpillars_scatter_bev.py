"""PointPillars pillar feature net, scatter of pillar features to the BEV canvas, first conv."""

import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, pillar_channels, grid_y, grid_x, batch_size, voxel=0.16,
                 x_min=0.0, y_min=-39.68):
        super().__init__()
        self.grid_y, self.grid_x, self.batch_size = grid_y, grid_x, batch_size
        self.vx = self.vy = voxel
        self.x_offset = voxel / 2 + x_min
        self.y_offset = voxel / 2 + y_min
        self.linear = nn.Linear(9, pillar_channels, bias=False)
        self.norm = nn.BatchNorm1d(pillar_channels, eps=1e-3, momentum=0.01)
        self.conv = nn.Conv2d(pillar_channels, 2 * pillar_channels, 3, stride=2, padding=1,
                              bias=False)
        self.conv_bn = nn.BatchNorm2d(2 * pillar_channels, eps=1e-3, momentum=0.01)
        with torch.no_grad():
            for bn in (self.norm, self.conv_bn):
                bn.running_mean.uniform_(-0.2, 0.2)
                bn.running_var.uniform_(0.5, 1.5)
        self.eval()

    def forward(self, points, num_points, coords):
        # points: [P, N, 4] (x, y, z, reflectance); num_points: [P]; coords: [P, 3] (b, y, x)
        n_max = points.size(1)
        valid = torch.arange(n_max, device=points.device)[None, :] < num_points[:, None]
        valid = valid.unsqueeze(-1).type_as(points)
        xyz = points[:, :, :3]
        count = num_points.type_as(points).view(-1, 1, 1)
        mean = (xyz * valid).sum(dim=1, keepdim=True) / count
        f_cluster = xyz - mean
        cx = coords[:, 2].type_as(points).unsqueeze(1) * self.vx + self.x_offset
        cy = coords[:, 1].type_as(points).unsqueeze(1) * self.vy + self.y_offset
        f_center = torch.stack((points[:, :, 0] - cx, points[:, :, 1] - cy), dim=-1)
        feats = torch.cat((points, f_cluster, f_center), dim=-1) * valid
        h = self.linear(feats)  # [P, N, C]
        h = F.relu(self.norm(h.permute(0, 2, 1)).permute(0, 2, 1))
        pillar = h.max(dim=1).values  # [P, C]

        cells = self.grid_y * self.grid_x
        flat = coords[:, 0] * cells + coords[:, 1] * self.grid_x + coords[:, 2]
        canvas = pillar.new_zeros(pillar.size(1), self.batch_size * cells)
        canvas[:, flat] = pillar.t()
        bev = canvas.view(-1, self.batch_size, self.grid_y, self.grid_x).permute(1, 0, 2, 3)
        return F.relu(self.conv_bn(self.conv(bev)))


samples = 4
n_pillars = 16384
max_points = 32
pillar_channels = 64
grid_y = 496
grid_x = 432


def get_inputs():
    points = torch.randn(n_pillars, max_points, 4)
    num_points = torch.randint(1, max_points + 1, (n_pillars,))
    cells = grid_y * grid_x
    flat = torch.randperm(samples * cells)[:n_pillars]
    coords = torch.stack((flat // cells, (flat % cells) // grid_x, flat % grid_x), dim=1)
    return [points, num_points, coords]


def get_init_inputs():
    return [pillar_channels, grid_y, grid_x, samples]
