"""Rigid transformation of batched point clouds by unit quaternions (pose refinement /
molecular docking): the object pose quaternion composed with a camera quaternion by the
Hamilton product written out component-wise, normalised, points centred on their
centroid, rotated as q (0, p) q* with both Hamilton products expanded elementwise, and
translated; also returns the equivalent 3x3 rotation matrices."""

import torch
import torch.nn as nn


def _hamilton(a, b):
    aw, ax, ay, az = a.unbind(-1)
    bw, bx, by, bz = b.unbind(-1)
    return torch.stack((
        aw * bw - ax * bx - ay * by - az * bz,
        aw * bx + ax * bw + ay * bz - az * by,
        aw * by - ax * bz + ay * bw + az * bx,
        aw * bz + ax * by - ay * bx + az * bw,
    ), dim=-1)


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, points, q_obj, q_cam, translation):
        q = _hamilton(q_cam, q_obj)
        q = q / q.norm(dim=-1, keepdim=True)  # [B, 4]
        centred = points - points.mean(dim=1, keepdim=True)  # [B, N, 3]
        qn = q[:, None, :].expand(-1, points.shape[1], -1)
        p = torch.cat([torch.zeros_like(centred[..., :1]), centred], dim=-1)
        conj = qn * torch.tensor([1.0, -1.0, -1.0, -1.0], device=q.device, dtype=q.dtype)
        rotated = _hamilton(_hamilton(qn, p), conj)[..., 1:]
        out = rotated + translation[:, None, :]

        w, x, y, z = q.unbind(-1)
        rot = torch.stack((
            1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y),
            2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x),
            2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y),
        ), dim=-1).view(-1, 3, 3)
        return out, rot


batch = 512
num_points = 16384


def get_inputs():
    points = torch.randn(batch, num_points, 3) * 5.0
    q_obj = torch.randn(batch, 4)
    q_cam = torch.randn(batch, 4)
    translation = torch.randn(batch, 3) * 10.0
    return [points, q_obj, q_cam, translation]


def get_init_inputs():
    return []
