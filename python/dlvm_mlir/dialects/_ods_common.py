# The generated op classes import their helpers from `._ods_common`; the
# dialect lives outside the `mlir` package, so re-export upstream's.
from mlir.dialects._ods_common import *  # noqa: F401,F403
from mlir.dialects._ods_common import _cext  # noqa: F401
