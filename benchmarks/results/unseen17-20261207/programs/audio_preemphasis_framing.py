"""Classic speech front end (Kaldi/HTK style) before an FFT: pre-emphasis y[n] = x[n] - k x[n-1]
built with slicing and cat, per-utterance DC removal, right zero padding so every length
yields frames, framing with Tensor.unfold (frame length and hop as constructor arguments), a
periodic Hann window buffer, per-frame log energy, zero-crossing rate from sign changes, and
an energy voice-activity mask relative to each utterance's loudest frame."""

import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, frame_len, hop, preemph, vad_db):
        super().__init__()
        self.frame_len = frame_len
        self.hop = hop
        self.preemph = preemph
        self.vad_log = vad_db / 10.0 * 2.302585092994046  # dB to natural log of energy
        self.register_buffer("window", torch.hann_window(frame_len, periodic=True))

    def forward(self, wav):
        # wav: [B, N] mono waveform
        emph = torch.cat([wav[:, :1], wav[:, 1:] - self.preemph * wav[:, :-1]], dim=1)
        emph = emph - emph.mean(dim=1, keepdim=True)
        padded = F.pad(emph, (0, self.frame_len))
        frames = padded.unfold(1, self.frame_len, self.hop)  # [B, N // hop + 1, frame_len]
        windowed = frames * self.window
        log_energy = torch.log(windowed.pow(2).sum(dim=-1).clamp(min=1e-10))
        signs = torch.sign(frames)
        crossings = (signs[..., 1:] != signs[..., :-1]).to(wav.dtype).sum(dim=-1)
        zcr = crossings / max(self.frame_len - 1, 1)
        voiced = log_energy > (log_energy.amax(dim=1, keepdim=True) - self.vad_log)
        return windowed, log_energy, zcr, voiced


batch = 32
num_samples = 160000
frame_len = 400
hop = 160


def get_inputs():
    return [torch.randn(batch, num_samples) * 0.1]


def get_init_inputs():
    return [frame_len, hop, 0.97, 40.0]
