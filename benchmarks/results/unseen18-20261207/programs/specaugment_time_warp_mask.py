"""SpecAugment (Park et al.) on a batch of fp16 log-mel spectrograms, with every random choice
supplied as an input so that forward is deterministic: a per-utterance piecewise-linear time
warp around an int64 centre by an int64 shift (source coordinates built with torch.where on a
transposed [B, 1, F, T] view, resampled by grid_sample), then two frequency masks and several
time masks, each a band test of an arange against int64 starts and widths reduced with any(),
filled with the utterance mean. Returns the augmented fp16 spectrogram and the bool mask."""

import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, num_frames, num_mels):
        super().__init__()
        self.num_frames = num_frames
        self.num_mels = num_mels

    def forward(self, spec, warp_center, warp_shift, freq_start, freq_width, time_start,
                time_width):
        # spec: [B, T, F] fp16; warp_center, warp_shift: [B] int64;
        # freq_start, freq_width: [B, NF] int64; time_start, time_width: [B, NT] int64
        b, t_len, f_len = spec.shape
        x = spec.float().transpose(1, 2).unsqueeze(1)  # [B, 1, F, T]
        t = torch.arange(t_len, device=spec.device, dtype=torch.float32).unsqueeze(0)
        c = warp_center.float().unsqueeze(1)
        dest = c + warp_shift.float().unsqueeze(1)  # where the centre frame lands
        left = t * c / dest
        right = c + (t - dest) * (t_len - 1 - c) / (t_len - 1 - dest)
        src = torch.where(t < dest, left, right)  # [B, T] source frame for each output frame
        gx = (2.0 * src / (t_len - 1) - 1.0).unsqueeze(1).expand(b, f_len, t_len)
        fy = torch.linspace(-1.0, 1.0, f_len, device=spec.device)
        gy = fy.view(1, f_len, 1).expand(b, f_len, t_len)
        grid = torch.stack((gx, gy), dim=-1)  # [B, F, T, 2]
        warped = F.grid_sample(x, grid, mode="bilinear", padding_mode="border",
                               align_corners=True).squeeze(1).transpose(1, 2)  # [B, T, F]

        f_idx = torch.arange(f_len, device=spec.device).view(1, 1, f_len)
        f_mask = ((f_idx >= freq_start.unsqueeze(2))
                  & (f_idx < (freq_start + freq_width).unsqueeze(2))).any(dim=1)  # [B, F]
        t_idx = torch.arange(t_len, device=spec.device).view(1, 1, t_len)
        t_mask = ((t_idx >= time_start.unsqueeze(2))
                  & (t_idx < (time_start + time_width).unsqueeze(2))).any(dim=1)  # [B, T]
        mask = t_mask.unsqueeze(2) | f_mask.unsqueeze(1)  # [B, T, F]
        fill = warped.mean(dim=(1, 2), keepdim=True)
        out = torch.where(mask, fill, warped)
        return out.to(spec.dtype), mask


batch = 64
num_frames = 1000
num_mels = 80
num_freq_masks = 2
num_time_masks = 10
max_warp = 80
max_freq_width = 27
max_time_width = 40


def get_inputs():
    spec = (torch.randn(batch, num_frames, num_mels) * 2.0 - 4.0).half()
    warp_center = torch.randint(max_warp + 1, num_frames - max_warp - 1, (batch,))
    warp_shift = torch.randint(-max_warp, max_warp + 1, (batch,))
    freq_width = torch.randint(0, max_freq_width + 1, (batch, num_freq_masks))
    freq_start = (torch.rand(batch, num_freq_masks) * (num_mels - freq_width)).long()
    time_width = torch.randint(0, max_time_width + 1, (batch, num_time_masks))
    time_start = (torch.rand(batch, num_time_masks) * (num_frames - time_width)).long()
    return [spec, warp_center, warp_shift, freq_start, freq_width, time_start, time_width]


def get_init_inputs():
    return [num_frames, num_mels]
