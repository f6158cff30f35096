"""Train a small MLP on scikit-learn's bundled 8x8 digits with funcgrad.torch.nn and Adam.

The loop is the usual PyTorch one: minibatches, forward, loss, zero_grad,
backward, step. Needs scikit-learn (the data set ships with it; nothing is
downloaded); tqdm draws a progress bar if it is installed.

Run: python examples/train_mlp_digits.py [--epochs N] [--seed S]
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from sklearn.datasets import load_digits

import funcgrad.torch as torch
from funcgrad.torch import nn, optim

try:
    from tqdm import tqdm
except ImportError:  # the bar is optional
    tqdm = None


def load_data(seed: int) -> tuple[np.ndarray, ...]:
    """Digits scaled to [0, 1], split 80/20 into train and test (a fixed shuffle)."""
    digits = load_digits()
    x = (digits.data / 16.0).astype(np.float32)
    y = digits.target.astype(np.int64)
    order = np.random.default_rng(seed).permutation(len(x))
    n_test = len(x) // 5
    test, train = order[:n_test], order[n_test:]
    return x[train], y[train], x[test], y[test]


def make_model() -> nn.Module:
    return nn.Sequential(
        nn.Linear(64, 128), nn.ReLU(),
        nn.Linear(128, 64), nn.ReLU(),
        nn.Linear(64, 10),
    )


def accuracy(model: nn.Module, x: np.ndarray, y: np.ndarray) -> float:
    model.eval()
    with torch.no_grad():
        pred = model(torch.tensor(x)).argmax(dim=1).numpy()
    model.train()
    return float((pred == y).mean())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=10)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--lr", type=float, default=1e-3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--no-bar", action="store_true", help="no tqdm progress bar")
    args = parser.parse_args()

    torch.manual_seed(args.seed)
    x_train, y_train, x_test, y_test = load_data(args.seed)
    model = make_model()
    print(model)
    loss_fn = nn.CrossEntropyLoss()
    optimizer = optim.Adam(model.parameters(), lr=args.lr)
    rng = np.random.default_rng(args.seed)
    n_batches = -(-len(x_train) // args.batch_size)

    start = time.perf_counter()
    for epoch in range(1, args.epochs + 1):
        order = rng.permutation(len(x_train))
        batches = range(n_batches)
        if tqdm is not None and not args.no_bar:
            batches = tqdm(batches, desc=f"epoch {epoch}", leave=False)
        total = 0.0
        for b in batches:
            idx = order[b * args.batch_size:(b + 1) * args.batch_size]
            logits = model(torch.tensor(x_train[idx]))
            loss = loss_fn(logits, torch.tensor(y_train[idx]))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            total += loss.item() * len(idx)
        print(f"epoch {epoch:2d}  loss {total / len(x_train):.4f}  "
              f"test accuracy {accuracy(model, x_test, y_test):.4f}")
    elapsed = time.perf_counter() - start
    print(f"test accuracy: {accuracy(model, x_test, y_test):.4f} "
          f"({len(x_train)} train / {len(x_test)} test digits, {elapsed:.1f} s)")


if __name__ == "__main__":
    main()
