"""A small CNN on scikit-learn's bundled 8x8 digits with funcgrad.torch: Conv2d, BatchNorm2d,
MaxPool2d, Dropout, a DataLoader and Adam, written as a PyTorch tutorial writes it.

Needs scikit-learn (the data set ships with it; nothing is downloaded); tqdm draws a
progress bar (on stderr) if it is installed.

Run: python examples/cnn_digits.py [--epochs N] [--no-bar]
"""

from __future__ import annotations

import argparse

import numpy as np
from sklearn.datasets import load_digits

import funcgrad.torch as torch
from funcgrad.torch import nn
from funcgrad.torch.utils.data import DataLoader, TensorDataset

try:
    from tqdm import tqdm
except ImportError:  # the bar is optional
    tqdm = None


class Net(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(1, 16, kernel_size=3, padding=1), nn.BatchNorm2d(16), nn.ReLU(),
            nn.MaxPool2d(2),                                    # 8x8 -> 4x4
            nn.Conv2d(16, 32, kernel_size=3, padding=1), nn.ReLU(),
            nn.MaxPool2d(2),                                    # 4x4 -> 2x2
        )
        self.head = nn.Sequential(nn.Flatten(), nn.Dropout(0.2), nn.Linear(32 * 2 * 2, 10))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.features(x))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=12)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--no-bar", action="store_true", help="no tqdm progress bar")
    args = parser.parse_args()

    torch.manual_seed(args.seed)
    digits = load_digits()
    x = (digits.images / 16.0).astype(np.float32)[:, None]     # N x 1 x 8 x 8
    y = digits.target.astype(np.int64)
    order = np.random.default_rng(args.seed).permutation(len(x))
    test, train = order[: len(x) // 5], order[len(x) // 5:]
    loader = DataLoader(TensorDataset(torch.tensor(x[train]), torch.tensor(y[train])),
                        batch_size=64, shuffle=True,
                        generator=torch.Generator().manual_seed(args.seed))

    model = Net()
    opt = torch.optim.Adam(model.parameters(), lr=3e-3)
    loss_fn = nn.CrossEntropyLoss()
    for epoch in range(args.epochs):
        model.train()
        total = 0.0
        batches = loader
        if tqdm is not None and not args.no_bar:
            batches = tqdm(loader, desc=f"epoch {epoch}", leave=False)
        for xb, yb in batches:
            opt.zero_grad()
            loss = loss_fn(model(xb), yb)
            loss.backward()
            opt.step()
            total += loss.item() * len(xb)
        print(f"epoch {epoch:2d}  loss {total / len(train):.4f}")

    model.eval()
    with torch.no_grad():
        pred = model(torch.tensor(x[test])).argmax(dim=1).numpy()
    print(f"test accuracy {float((pred == y[test]).mean()):.3f}")


if __name__ == "__main__":
    main()
