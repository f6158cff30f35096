"""``nn.SyncBatchNorm`` across processes (under mpiexec, 2 and 3 ranks): each rank's
shard of one batch, normalised with the whole batch's statistics, gives PyTorch's
``BatchNorm`` on the whole batch: outputs, input gradients, running statistics, and the
weight/bias gradients summed over the ranks. Uneven shards (and an empty one) included.

Skips cleanly without mpi4py / mpiexec or PyTorch (the reference).
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

pytest.importorskip("mpi4py")
pytest.importorskip("torch", exc_type=ImportError)

from funcgrad.distributed.run import find_mpiexec  # noqa: E402

WORKER = textwrap.dedent('''
    import numpy as np
    import torch as pt

    import funcgrad.torch as ft
    import funcgrad.torch.distributed as dist

    dist.init_process_group("gloo")
    rank, n = dist.get_rank(), dist.get_world_size()


    def shards(total, uneven):
        if not uneven:
            return np.array_split(np.arange(total), n)
        # Rank 0 gets one sample, the last rank none, the rest share the remainder.
        cuts = [0, 1] + [1 + (total - 1) * (k + 1) // max(n - 2, 1) for k in range(n - 2)]
        cuts = cuts[:n] + [total]
        return [np.arange(cuts[k], cuts[k + 1]) for k in range(n)]


    for ndim, uneven in ((2, False), (4, False), (3, True)):
        total = 4 * n + 1
        shape = (total, 3) + (2,) * (ndim - 2)
        rng = np.random.default_rng(ndim)
        xs = [rng.standard_normal(shape) * (k + 1) + k for k in range(2)]
        wts = np.cos(np.arange(np.prod(shape))).reshape(shape)
        mine = shards(total, uneven)[rank]

        ref = pt.nn.BatchNorm1d(3) if ndim < 4 else pt.nn.BatchNorm2d(3)
        ref = ref.double()
        sbn = ft.nn.SyncBatchNorm(3).double()
        with pt.no_grad(), ft.no_grad():
            ref.weight.copy_(pt.tensor([0.5, 1.0, 2.0], dtype=pt.float64))
            sbn.weight.copy_(ft.tensor([0.5, 1.0, 2.0], dtype=ft.float64))
        for x in xs:
            ref.zero_grad()
            sbn.zero_grad()
            xr = pt.tensor(x, requires_grad=True)
            yr = ref(xr)
            (yr * pt.tensor(wts)).sum().backward()
            xf = ft.tensor(x[mine], requires_grad=True)
            yf = sbn(xf)
            assert type(yf.grad_fn).__name__ == "SyncBatchNormBackward", yf.grad_fn
            (yf * ft.tensor(wts[mine])).sum().backward()
            np.testing.assert_allclose(yf.detach().numpy(), yr.detach().numpy()[mine],
                                       rtol=1e-10, atol=1e-12)
            np.testing.assert_allclose(xf.grad.numpy(), xr.grad.numpy()[mine],
                                       rtol=1e-9, atol=1e-11)
            for p, q in ((sbn.weight, ref.weight), (sbn.bias, ref.bias)):
                # An empty shard leaves them None, as in PyTorch.
                g = ft.zeros(3, dtype=ft.float64) if p.grad is None else p.grad.clone()
                dist.all_reduce(g)
                np.testing.assert_allclose(g.numpy(), q.grad.numpy(), rtol=1e-9, atol=1e-11)
        np.testing.assert_allclose(sbn.running_mean.numpy(), ref.running_mean.numpy(),
                                   rtol=1e-10)
        np.testing.assert_allclose(sbn.running_var.numpy(), ref.running_var.numpy(),
                                   rtol=1e-10)
        assert int(sbn.num_batches_tracked) == 2

    # Evaluation uses the running statistics and talks to no one.
    sbn.eval()
    y = sbn(ft.ones(2, 3, dtype=ft.float64))
    assert y.grad_fn is None or type(y.grad_fn).__name__ == "NativeBatchNormBackward0"
    print(f"[rank {rank}] OK {rank}", flush=True)
''')


def _launch(script: str, nproc: int) -> subprocess.CompletedProcess[str]:
    try:
        find_mpiexec()
    except SystemExit:
        pytest.skip("no mpiexec")
    cmd = [sys.executable, "-m", "funcgrad.distributed.run", "--nproc", str(nproc), script]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=900, check=False,
                          cwd=os.path.dirname(script))


@pytest.mark.parametrize("nproc", [2, 3])
def test_syncbn_over_ranks_equals_batchnorm_on_the_whole_batch(nproc, tmp_path):
    script = tmp_path / "syncbn_worker.py"
    script.write_text(WORKER)
    res = _launch(str(script), nproc)
    out = res.stdout + res.stderr
    assert res.returncode == 0, out[-4000:]
    for r in range(nproc):
        assert f"[rank {r}] OK {r}" in res.stdout, out[-4000:]
