"""NNKit: DLVM's staged DSL in Python.

    import numpy as np
    import dlvm_mlir.nnkit as dl
    from dlvm_mlir.nnkit import Tensor, f32

    @dl.function
    def f(x: Tensor[f32, ("n", 784)], w: Tensor[f32, (784, 10)], b: Tensor[f32, (1, 10)]):
        return x @ w + b

    @dl.function
    def g(x, w, b):
        return dl.tanh(f(x, w, b))                          # staged application: func.call @f

    dg = dl.gradient(g, wrt=(1, 2), keeping=(0,))           # [gradient @g wrt 1, 2 keeping 0]
    dw, db, y = dg(x, w, b)                                 # specialized, compiled (once), run
    d2 = dl.gradient(dg, from_=0, wrt=(1,))                 # a gradient of a gradient
    print(dg.ir(x, w, b, stage="ad"))                       # the IR after any stage

Staged functions are specialized to the shapes and dtypes of their arguments
and compiled per specialization through :func:`dlvm_mlir.compile`. Mistakes in
user code raise :class:`StagingError` subclasses at the user's line.
"""

from . import ops as _ops
from .control import cond, fori_loop, while_loop
from .dtypes import DType, bf16, bool_, f16, f32, f64, i1, i8, i16, i32, i64, ui8, ui16, ui32, ui64
from .errors import ArityError, DTypeError, ShapeError, StagingError, TracingError
from .function import IR_STAGES, Function, Specialization, StagedFunction, function, lambda_
from .gradient import Gradient, gradient
from .ops import *  # noqa: F403 - every op (the generated elementwise ones included)
from .specs import Spec, TensorAnnotation, spec
from .tensor import Scalar, Tensor

__all__ = [
    "IR_STAGES",
    "ArityError",
    "DType",
    "DTypeError",
    "Function",
    "Gradient",
    "Scalar",
    "ShapeError",
    "Spec",
    "Specialization",
    "StagedFunction",
    "StagingError",
    "Tensor",
    "TensorAnnotation",
    "TracingError",
    "bf16",
    "bool_",
    "cond",
    "f16",
    "f32",
    "f64",
    "fori_loop",
    "function",
    "gradient",
    "i1",
    "i8",
    "i16",
    "i32",
    "i64",
    "ui8",
    "ui16",
    "ui32",
    "ui64",
    "lambda_",
    "spec",
    "while_loop",
    *_ops.__all__,
]
