"""Matrix products: ``mm``, ``addmm`` (``nn.Linear``), ``bmm`` (attention), ``dot``.

``matmul``/``linear``/``baddbmm`` decompose to these in core ATen; all lower to
``dlvm.dot`` / ``dlvm.dot_general`` and so to the CPU back end's packed matmul.
"""

from __future__ import annotations

from typing import Any

import torch
import torch.fx

import dlvm_mlir.nnkit as dl

from . import rule

aten = torch.ops.aten


@rule(aten.mm.default, aten.bmm.default, aten.dot.default)
def _mm(node: torch.fx.Node, a: dl.Tensor, b: dl.Tensor) -> dl.Tensor:
    return dl.matmul(a, b)


@rule(aten.addmm.default)
def _addmm(node: torch.fx.Node, bias: Any, a: dl.Tensor, b: dl.Tensor, beta: Any = 1, alpha: Any = 1) -> dl.Tensor:
    product = dl.matmul(a, b)
    if alpha != 1:
        product = product * dl.constant(alpha, product.dtype)
    if beta == 0:
        return product
    if not isinstance(bias, dl.Tensor):
        bias = dl.constant(bias, product.dtype)
    if beta != 1:
        bias = bias * dl.constant(beta, bias.dtype)
    return product + bias
