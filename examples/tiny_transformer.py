"""A tiny Transformer encoder that learns to sort short sequences of digits, with
funcgrad.torch (nn.Embedding, nn.TransformerEncoder, positional embeddings, AdamW).
tqdm draws a progress bar (on stderr) if it is installed.

Run: python examples/tiny_transformer.py [--steps N] [--no-bar]
"""

from __future__ import annotations

import argparse

import numpy as np

import funcgrad.torch as torch
from funcgrad.torch import nn

try:
    from tqdm import tqdm
except ImportError:  # the bar is optional
    tqdm = None

LENGTH, VOCAB = 6, 10


class Sorter(nn.Module):
    def __init__(self, d_model: int = 32) -> None:
        super().__init__()
        self.tokens = nn.Embedding(VOCAB, d_model)
        self.positions = nn.Parameter(torch.randn(LENGTH, d_model) * 0.1)
        layer = nn.TransformerEncoderLayer(d_model, nhead=4, dim_feedforward=64, dropout=0.0,
                                           batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, num_layers=2)
        self.out = nn.Linear(d_model, VOCAB)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.out(self.encoder(self.tokens(x) + self.positions))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=250)
    parser.add_argument("--no-bar", action="store_true", help="no tqdm progress bar")
    args = parser.parse_args()

    torch.manual_seed(0)
    rng = np.random.default_rng(0)
    model = Sorter()
    opt = torch.optim.AdamW(model.parameters(), lr=2e-3)
    loss_fn = nn.CrossEntropyLoss()
    steps, say = range(args.steps), print
    if tqdm is not None and not args.no_bar:
        # tqdm.write prints the loss lines (to stdout) above the bar (on stderr).
        steps, say = tqdm(steps, desc="training", leave=False), tqdm.write
    for step in steps:
        seqs = rng.integers(0, VOCAB, (64, LENGTH))
        x, y = torch.tensor(seqs), torch.tensor(np.sort(seqs, axis=1))
        opt.zero_grad()
        loss = loss_fn(model(x).reshape(-1, VOCAB), y.reshape(-1))
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if step % 50 == 0 or step == args.steps - 1:
            say(f"step {step:3d}  loss {loss.item():.4f}")

    model.eval()
    test = rng.integers(0, VOCAB, (200, LENGTH))
    with torch.no_grad():
        pred = model(torch.tensor(test)).argmax(dim=-1).numpy()
    print(f"sorted exactly: {float((pred == np.sort(test, axis=1)).all(axis=1).mean()):.3f}")


if __name__ == "__main__":
    main()
