"""glibc's malloc tuning on import (funcgrad/allocator.py): large arrays reuse freed memory
instead of faulting in fresh pages, and the switch leaves malloc alone."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

glibc = pytest.mark.skipif(
    not sys.platform.startswith("linux") or os.confstr("CS_GNU_LIBC_VERSION") is None,
    reason="glibc only")

# Half a megabyte arrays, allocated and freed in a pattern where several are alive at once
# (as a program's temporaries are): what glibc's own limits trim and fault in again.
PROGRAM = textwrap.dedent("""
    import resource, sys
    import numpy as np
    if sys.argv[1] == "import":
        import funcgrad
        print("tuned", funcgrad.allocator.tune())
    a = np.ones((256, 256))
    def step():
        live = [a * float(i) for i in range(12)]
        return sum(float(x[0, 0]) for x in live)
    for _ in range(20):
        step()
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    for _ in range(200):
        step()
    print("faults", (resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before) / 200)
""")


def _run(mode: str, **env: str) -> dict[str, str]:
    out = subprocess.run([sys.executable, "-c", PROGRAM, mode], capture_output=True,
                         text=True, check=True, env={**os.environ, **env}, timeout=120)
    return dict(line.split(" ", 1) for line in out.stdout.splitlines())


@glibc
def test_importing_funcgrad_stops_page_faults_of_large_temporaries() -> None:
    tuned = _run("import", FUNCGRAD_MALLOC_TUNING="1")
    assert tuned["tuned"] == "True"
    # 12 arrays of 128 pages each per step: untuned glibc faults in most of them again.
    assert float(tuned["faults"]) < 50, tuned


@glibc
def test_the_switch_leaves_malloc_alone() -> None:
    off = _run("import", FUNCGRAD_MALLOC_TUNING="0")
    assert off["tuned"] == "False"
    plain = _run("plain")
    # The untuned process is the control: it does fault (else the test above proves nothing).
    assert float(plain["faults"]) > 200, plain
    assert float(off["faults"]) > 200, off
