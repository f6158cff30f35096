"""The ``--threads N`` option of the benchmarks (default 1), applied to NumPy's BLAS, numba,
XLA and torch before they start their thread pools: a benchmark imports this module before
NumPy, JAX or torch (``from threads import THREADS``) and passes THREADS to
``torch.set_num_threads``.

The process is also pinned to N of the CPUs it may run on (Linux): XLA runs the matrices
of a batched LAPACK call (``eigh`` of 64 matrices) on more than one core whatever its
thread flags say (1.87 cores busy on this 2-core machine), which a one-thread comparison
must not count in its favour."""

from __future__ import annotations

import os
import sys


def threads_from_argv(argv: list[str]) -> int:
    """The value of ``--threads N`` / ``--threads=N`` in ``argv``, else 1."""
    for i, a in enumerate(argv):
        if a == "--threads" and i + 1 < len(argv):
            return int(argv[i + 1])
        if a.startswith("--threads="):
            return int(a.split("=", 1)[1])
    return 1


THREADS = threads_from_argv(sys.argv)
for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS"):
    os.environ[_var] = str(THREADS)
if hasattr(os, "sched_setaffinity"):
    _cpus = sorted(os.sched_getaffinity(0))
    os.sched_setaffinity(0, _cpus[:max(THREADS, 1)])
os.environ.setdefault("XLA_FLAGS", "--xla_cpu_multi_thread_eigen=false "
                      f"intra_op_parallelism_threads={THREADS}")
