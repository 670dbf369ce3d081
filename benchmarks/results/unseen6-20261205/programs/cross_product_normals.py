"""Mesh normals: per-face unit normals from the cross product of two edge vectors, then
per-vertex normals as the normalised sum of the normals of the faces around each vertex."""

import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, verts, faces):
        a = verts.index_select(1, faces[:, 0])
        b = verts.index_select(1, faces[:, 1])
        c = verts.index_select(1, faces[:, 2])
        face_n = torch.linalg.cross(b - a, c - a, dim=-1)
        face_n = F.normalize(face_n, dim=-1, eps=1e-8)
        vert_n = torch.zeros_like(verts)
        for corner in range(3):
            vert_n.index_add_(1, faces[:, corner], face_n)
        return F.normalize(vert_n, dim=-1, eps=1e-8), face_n


batch = 16
num_verts = 65536
num_faces = 131072


def get_inputs():
    verts = torch.randn(batch, num_verts, 3)
    # three distinct corners per face, so that no triangle is degenerate
    first = torch.randint(0, num_verts, (num_faces,))
    step1 = torch.randint(1, num_verts // 2, (num_faces,))
    step2 = torch.randint(num_verts // 2, num_verts, (num_faces,))
    faces = torch.stack([first, (first + step1) % num_verts, (first + step2) % num_verts], dim=1)
    return [verts, faces]


def get_init_inputs():
    return []
