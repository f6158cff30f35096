"""All primitives of funcgrad, each defined once with its rules.

Adding a primitive: define it in the module of its family with
``abstract_eval``, ``impl`` and its ``jvp``/``vjp``/``batch`` rules, and
export it here.

>>> from funcgrad.primitives import PRIMITIVES
>>> "dot_general" in PRIMITIVES
True
"""

from funcgrad.core import PRIMITIVES
from funcgrad.primitives.bits import *  # noqa: F403
from funcgrad.primitives.callbacks import *  # noqa: F403
from funcgrad.primitives.checks import *  # noqa: F403
from funcgrad.primitives.collectives import *  # noqa: F403
from funcgrad.primitives.convolution import *  # noqa: F403
from funcgrad.primitives.decompositions import *  # noqa: F403
from funcgrad.primitives.elementwise import *  # noqa: F403
from funcgrad.primitives.fft import *  # noqa: F403
from funcgrad.primitives.indexing import *  # noqa: F403
from funcgrad.primitives.linalg import *  # noqa: F403
from funcgrad.primitives.prng import *  # noqa: F403
from funcgrad.primitives.random_gamma import *  # noqa: F403
from funcgrad.primitives.reductions import *  # noqa: F403
from funcgrad.primitives.schur_forms import *  # noqa: F403
from funcgrad.primitives.sorting import *  # noqa: F403
from funcgrad.primitives.special import *  # noqa: F403
from funcgrad.primitives.structural import *  # noqa: F403
from funcgrad.primitives.transfer import *  # noqa: F403
from funcgrad.primitives.windows import *  # noqa: F403

__all__ = ["PRIMITIVES"]
