"""``torch.utils.benchmark``: ``Timer`` for timing statements with replicates,
``Measurement`` for their statistics, ``Compare`` for tables of many, and ``Fuzzer`` for
random inputs.

>>> import funcgrad.torch.utils.benchmark as benchmark
>>> m = benchmark.Timer("x.sum()", setup="x = torch.ones(100)").timeit(50)
>>> m.times[0] > 0
True
"""

from funcgrad.torch.utils.benchmark.utils.common import (
    Measurement,
    TaskSpec,
    ordered_unique,
    select_unit,
    set_torch_threads,
    trim_sigfig,
    unit_to_english,
)
from funcgrad.torch.utils.benchmark.utils.compare import Colorize, Compare
from funcgrad.torch.utils.benchmark.utils.fuzzer import (
    FuzzedParameter,
    FuzzedTensor,
    Fuzzer,
    ParameterAlias,
)
from funcgrad.torch.utils.benchmark.utils.timer import Language, Timer, timer

__all__ = ["Colorize", "Compare", "FuzzedParameter", "FuzzedTensor", "Fuzzer", "Language",
           "Measurement", "ParameterAlias", "TaskSpec", "Timer", "ordered_unique",
           "select_unit", "set_torch_threads", "timer", "trim_sigfig", "unit_to_english"]
