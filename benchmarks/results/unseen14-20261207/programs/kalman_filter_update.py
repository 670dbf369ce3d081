"""DeepSORT Kalman filter over many tracks: predict, project, Mahalanobis gate and update."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, dt=1.0, std_weight_position=1.0 / 20, std_weight_velocity=1.0 / 160):
        super().__init__()
        motion = torch.eye(8)
        motion[:4, 4:] = dt * torch.eye(4)
        self.register_buffer("motion", motion)  # constant-velocity F
        self.register_buffer("observe", torch.eye(4, 8))  # H: (x, y, a, h) observed
        self.w_pos, self.w_vel = std_weight_position, std_weight_velocity

    def _std(self, height, weight, aspect_std):
        ones = torch.ones_like(height)
        return torch.stack((weight * height, weight * height, aspect_std * ones,
                            weight * height), dim=-1)

    def forward(self, mean, cov_factor, measurement):
        # mean [N, 8]; covariance = cov_factor cov_factor^T + 0.005 I; measurement [N, 4]
        eye8 = torch.eye(8, dtype=mean.dtype, device=mean.device)
        cov = cov_factor @ cov_factor.transpose(1, 2) + 0.005 * eye8
        height = mean[:, 3].abs() + 1.0
        # predict
        q_std = torch.cat((self._std(height, self.w_pos, 1e-2),
                           self._std(height, self.w_vel, 1e-5)), dim=-1)
        mean = mean @ self.motion.t()
        cov = self.motion @ cov @ self.motion.t() + torch.diag_embed(q_std.square())
        # project
        r_std = self._std(height, self.w_pos, 1e-1)
        proj_mean = mean @ self.observe.t()
        proj_cov = (self.observe @ cov @ self.observe.t()
                    + torch.diag_embed(r_std.square()))
        chol = torch.linalg.cholesky(proj_cov)
        innovation = measurement - proj_mean
        # gating distance (squared Mahalanobis)
        z = torch.linalg.solve_triangular(chol, innovation.unsqueeze(-1), upper=False)
        gating = z.square().sum(dim=(1, 2))
        # update
        cross = cov @ self.observe.t()  # P H^T, [N, 8, 4]
        gain = torch.cholesky_solve(cross.transpose(1, 2), chol).transpose(1, 2)
        new_mean = mean + (gain @ innovation.unsqueeze(-1)).squeeze(-1)
        new_cov = cov - gain @ cross.transpose(1, 2)  # (I - K H) P
        return new_mean, new_cov, gating


n_tracks = 131072


def get_inputs():
    mean = torch.randn(n_tracks, 8)
    cov_factor = torch.randn(n_tracks, 8, 8) * 0.02
    measurement = torch.randn(n_tracks, 4)
    return [mean, cov_factor, measurement]


def get_init_inputs():
    return []
