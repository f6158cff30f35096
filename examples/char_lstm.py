"""A character-level LSTM that learns a short text and then writes it back from its first
letters, with funcgrad.torch (nn.Embedding, nn.LSTM, nn.Linear, clip_grad_norm_, Adam).
tqdm draws a progress bar (on stderr) if it is installed.

Run: python examples/char_lstm.py [--steps N] [--no-bar]
"""

from __future__ import annotations

import argparse

import funcgrad.torch as torch
from funcgrad.torch import nn

try:
    from tqdm import tqdm
except ImportError:  # the bar is optional
    tqdm = None

TEXT = "the quick brown fox jumps over the lazy dog. " * 3


class CharLSTM(nn.Module):
    def __init__(self, vocab: int, hidden: int = 64) -> None:
        super().__init__()
        self.embed = nn.Embedding(vocab, 16)
        self.lstm = nn.LSTM(16, hidden, batch_first=True)
        self.out = nn.Linear(hidden, vocab)

    def forward(self, x: torch.Tensor, state: tuple | None = None) -> tuple:
        h, state = self.lstm(self.embed(x), state)
        return self.out(h), state


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=150)
    parser.add_argument("--no-bar", action="store_true", help="no tqdm progress bar")
    args = parser.parse_args()

    torch.manual_seed(0)
    chars = sorted(set(TEXT))
    index = {c: i for i, c in enumerate(chars)}
    data = torch.tensor([index[c] for c in TEXT])
    x, y = data[:-1].unsqueeze(0), data[1:].unsqueeze(0)

    model = CharLSTM(len(chars))
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    loss_fn = nn.CrossEntropyLoss()
    steps, say = range(args.steps), print
    if tqdm is not None and not args.no_bar:
        # tqdm.write prints the loss lines (to stdout) above the bar (on stderr).
        steps, say = tqdm(steps, desc="training", leave=False), tqdm.write
    for step in steps:
        opt.zero_grad()
        logits, _ = model(x)
        loss = loss_fn(logits.reshape(-1, len(chars)), y.reshape(-1))
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if step % 25 == 0 or step == args.steps - 1:
            say(f"step {step:3d}  loss {loss.item():.4f}")

    # Greedy generation from the first four characters.
    with torch.no_grad():
        out = list(TEXT[:4])
        logits, state = model(torch.tensor([[index[c] for c in out]]))
        for _ in range(40):
            nxt = int(logits[0, -1].argmax())
            out.append(chars[nxt])
            logits, state = model(torch.tensor([[nxt]]), state)
    print("generated:", "".join(out))


if __name__ == "__main__":
    main()
