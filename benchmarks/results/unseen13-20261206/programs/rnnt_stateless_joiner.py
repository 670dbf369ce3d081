"""RNN-Transducer training head with a stateless prediction network (icefall style): the label
sequence gets blank prepended (F.pad with the blank id), is embedded, passed through a causal
grouped Conv1d over the last two tokens (left F.pad) and ReLU; the joiner projects encoder
frames and decoder states, adds them over the full (T, U+1) lattice by broadcasting, tanh,
projects to the vocabulary and log-softmaxes; the blank log-probs and the log-probs of each
next label (gather with expanded label ids) are the two lattices an RNN-T loss consumes."""

import torch
import torch.nn as nn
import torch.nn.functional as F


class StatelessDecoder(nn.Module):
    def __init__(self, vocab_size, decoder_dim, blank_id, context_size=2):
        super().__init__()
        self.embedding = nn.Embedding(vocab_size, decoder_dim, padding_idx=blank_id)
        self.context_size = context_size
        self.conv = nn.Conv1d(decoder_dim, decoder_dim, kernel_size=context_size,
                              groups=decoder_dim // 4, bias=False)

    def forward(self, y):
        emb = self.embedding(y).permute(0, 2, 1)  # [B, D, U+1]
        emb = F.pad(emb, (self.context_size - 1, 0))
        emb = self.conv(emb).permute(0, 2, 1)
        return F.relu(emb)


class Model(nn.Module):
    def __init__(self, encoder_dim, decoder_dim, joiner_dim, vocab_size, blank_id=0):
        super().__init__()
        self.blank_id = blank_id
        self.decoder = StatelessDecoder(vocab_size, decoder_dim, blank_id)
        self.encoder_proj = nn.Linear(encoder_dim, joiner_dim)
        self.decoder_proj = nn.Linear(decoder_dim, joiner_dim)
        self.output_linear = nn.Linear(joiner_dim, vocab_size)

    def forward(self, encoder_out, labels):
        B, T, _ = encoder_out.shape
        U = labels.size(1)
        sos_y = F.pad(labels, (1, 0), value=self.blank_id)  # [B, U+1]
        decoder_out = self.decoder(sos_y)
        enc = self.encoder_proj(encoder_out).unsqueeze(2)  # [B, T, 1, J]
        dec = self.decoder_proj(decoder_out).unsqueeze(1)  # [B, 1, U+1, J]
        logits = self.output_linear(torch.tanh(enc + dec))  # [B, T, U+1, V]
        log_probs = logits.log_softmax(dim=-1)
        blank_lp = log_probs[..., self.blank_id]  # [B, T, U+1]
        index = labels[:, None, :, None].expand(B, T, U, 1)
        label_lp = log_probs[:, :, :U].gather(3, index).squeeze(3)  # [B, T, U]
        return blank_lp, label_lp


batch = 8
frames = 128
label_len = 32
encoder_dim = 512
decoder_dim = 512
joiner_dim = 512
vocab_size = 512


def get_inputs():
    encoder_out = torch.randn(batch, frames, encoder_dim)
    labels = torch.randint(1, vocab_size, (batch, label_len))
    return [encoder_out, labels]


def get_init_inputs():
    return [encoder_dim, decoder_dim, joiner_dim, vocab_size]
