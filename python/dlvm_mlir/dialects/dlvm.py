"""The dlvm dialect's op classes, enums and attribute helpers."""

from ._dlvm_enum_gen import *  # noqa: F401,F403
from ._dlvm_ops_gen import *  # noqa: F401,F403
