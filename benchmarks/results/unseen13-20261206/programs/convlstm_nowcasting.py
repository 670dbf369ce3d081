"""ConvLSTM precipitation nowcasting encoder (Shi et al.): two stacked ConvLSTM cells run over
the radar frames in a Python loop; each cell concatenates input and hidden state along
channels, one 3x3 conv gives all four gates, torch.split into i/f/o/g with sigmoid/tanh,
c = f*c + i*g, h = o*tanh(c). The states start from zeros; a 1x1 conv head on the last
hidden state predicts the next frame's rain intensity through softplus."""

import torch
import torch.nn as nn
import torch.nn.functional as F


class ConvLSTMCell(nn.Module):
    def __init__(self, input_dim, hidden_dim, kernel_size):
        super().__init__()
        self.hidden_dim = hidden_dim
        self.conv = nn.Conv2d(input_dim + hidden_dim, 4 * hidden_dim, kernel_size,
                              padding=kernel_size // 2, bias=True)

    def forward(self, x, state):
        h_cur, c_cur = state
        combined = torch.cat([x, h_cur], dim=1)
        cc_i, cc_f, cc_o, cc_g = torch.split(self.conv(combined), self.hidden_dim, dim=1)
        i = torch.sigmoid(cc_i)
        f = torch.sigmoid(cc_f)
        o = torch.sigmoid(cc_o)
        g = torch.tanh(cc_g)
        c_next = f * c_cur + i * g
        h_next = o * torch.tanh(c_next)
        return h_next, c_next

    def init_state(self, x):
        b, _, h, w = x.shape
        zeros = torch.zeros(b, self.hidden_dim, h, w, device=x.device, dtype=x.dtype)
        return zeros, zeros.clone()


class Model(nn.Module):
    def __init__(self, in_channels, hidden_dims, kernel_size=3):
        super().__init__()
        dims = [in_channels] + list(hidden_dims)
        self.cells = nn.ModuleList(
            [ConvLSTMCell(dims[i], dims[i + 1], kernel_size) for i in range(len(hidden_dims))])
        self.head = nn.Conv2d(dims[-1], in_channels, kernel_size=1)

    def forward(self, frames):
        # frames: [B, T, C, H, W]
        seq_len = frames.size(1)
        layer_input = frames
        for cell in self.cells:
            state = cell.init_state(layer_input[:, 0])
            outputs = []
            for t in range(seq_len):
                state = cell(layer_input[:, t], state)
                outputs.append(state[0])
            layer_input = torch.stack(outputs, dim=1)
        last_hidden = layer_input[:, -1]
        return F.softplus(self.head(last_hidden)), layer_input


batch = 4
frames = 6
in_channels = 1
hidden_1 = 32
hidden_2 = 64
height = 64
width = 64


def get_inputs():
    return [torch.rand(batch, frames, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, (hidden_1, hidden_2)]
