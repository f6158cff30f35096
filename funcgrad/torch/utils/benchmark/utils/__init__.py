"""The modules behind ``torch.utils.benchmark``: ``common``, ``timer``, ``compare`` and
``fuzzer``.

>>> from funcgrad.torch.utils.benchmark.utils import common
>>> common.unit_to_english("ms")
'millisecond'
"""
