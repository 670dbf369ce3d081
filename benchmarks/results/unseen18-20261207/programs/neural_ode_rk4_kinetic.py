"""Latent neural ODE integrated with a fixed-step classic Runge-Kutta 4 solver unrolled in a
Python loop (Chen et al.; RNODE-style regularisation from Finlay et al.): the vector field is
an MLP on [z, sin/cos time features] with softplus activations and a learned per-dimension
damping, each step makes four field evaluations (time broadcast with torch.full), the state is
recorded at every step (torch.stack into a trajectory), the kinetic-energy regulariser
integrates ||f||^2 with Simpson weights from the same stage evaluations, and a linear decoder
reads every recorded state. Returns the decoded trajectory [S + 1, B, out], the final state and
the per-sample kinetic energy."""

import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class VectorField(nn.Module):
    def __init__(self, dim, hidden):
        super().__init__()
        self.fc1 = nn.Linear(dim + 2, hidden)
        self.fc2 = nn.Linear(hidden, hidden)
        self.fc3 = nn.Linear(hidden, dim)
        self.log_damp = nn.Parameter(torch.full((dim,), -2.0))

    def forward(self, t, z):
        tt = torch.full((z.shape[0], 1), t, device=z.device, dtype=z.dtype)
        feat = torch.cat([z, torch.sin(2.0 * math.pi * tt), torch.cos(2.0 * math.pi * tt)], dim=1)
        h = F.softplus(self.fc1(feat))
        h = F.softplus(self.fc2(h))
        return torch.tanh(self.fc3(h)) - torch.exp(self.log_damp) * z


class Model(nn.Module):
    def __init__(self, dim, hidden, out_dim, num_steps, t1):
        super().__init__()
        self.field = VectorField(dim, hidden)
        self.decoder = nn.Linear(dim, out_dim)
        self.num_steps = num_steps
        self.dt = t1 / num_steps

    def forward(self, z0):
        z = z0
        dt = self.dt
        states = [z]
        kinetic = torch.zeros(z.shape[0], device=z.device, dtype=z.dtype)
        for i in range(self.num_steps):
            t = i * dt
            k1 = self.field(t, z)
            k2 = self.field(t + 0.5 * dt, z + 0.5 * dt * k1)
            k3 = self.field(t + 0.5 * dt, z + 0.5 * dt * k2)
            k4 = self.field(t + dt, z + dt * k3)
            z = z + (dt / 6.0) * (k1 + 2.0 * k2 + 2.0 * k3 + k4)
            e1 = k1.pow(2).sum(dim=1)
            emid = 0.5 * (k2.pow(2).sum(dim=1) + k3.pow(2).sum(dim=1))
            e4 = k4.pow(2).sum(dim=1)
            kinetic = kinetic + (dt / 6.0) * (e1 + 4.0 * emid + e4)
            states.append(z)
        traj = torch.stack(states, dim=0)  # [S + 1, B, D]
        return self.decoder(traj), z, kinetic


batch = 4096
dim = 64
hidden = 256
out_dim = 17


def get_inputs():
    return [torch.randn(batch, dim)]


def get_init_inputs():
    return [dim, hidden, out_dim, 8, 1.0]
