"""``torch.utils.tensorboard``: ``SummaryWriter`` for TensorBoard (needs the ``tensorboard``
package, as PyTorch's does: ``pip install funcgrad[tensorboard]``).

>>> import tempfile
>>> from funcgrad.torch.utils.tensorboard import SummaryWriter
>>> writer = SummaryWriter(tempfile.mkdtemp())
>>> writer.add_scalar("accuracy", 0.5, global_step=1)
>>> writer.close()
"""

try:
    import tensorboard  # noqa: F401
except ImportError:
    raise ImportError("TensorBoard logging requires TensorBoard version 1.15 or above") \
        from None

from funcgrad.torch.utils.tensorboard.writer import FileWriter, SummaryWriter

__all__ = ["FileWriter", "SummaryWriter"]
