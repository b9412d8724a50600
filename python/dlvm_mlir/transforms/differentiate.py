"""dlvm-differentiate: synthesize the bodies of derivative declarations.

Every body-less function carrying ``dlvm.gradient = #dlvm.gradient<...>``
(reverse mode: adjoint code generation) or ``dlvm.tangent =
#dlvm.tangent<...>`` (forward mode: a Jacobian-vector product) gets its body;
the declaration attribute becomes ``dlvm.derivative_of``. Derivatives of
callees are created next to them as private functions. See
:mod:`dlvm_mlir.ad` for the algorithm and :mod:`dlvm_mlir.ad.rules` for the
derivative rules.
"""

from __future__ import annotations

from mlir import ir

from dlvm_mlir.ad.synthesis import differentiate
from dlvm_mlir.passes import ModulePass, register_pass


@register_pass
class Differentiate(ModulePass):
    name = "dlvm-differentiate"
    summary = "Synthesize gradient (reverse mode) and tangent (forward mode) declarations"

    def run(self, module: ir.Operation) -> None:
        differentiate(module)
