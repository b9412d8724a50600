"""Python passes, named pipelines and the runner shared by dlvm-opt and Python code.

Declare a pass::

    from mlir import ir
    from dlvm_mlir.passes import ModulePass, Option, PassError, register_pass

    @register_pass
    class AlgebraSimplify(ModulePass):
        name = "dlvm-algebra-simplify"
        summary = "Simplify algebraic identities"
        options = (Option("reassociate", bool, False, "allow reassociation"),)

        def run(self, module: ir.Operation) -> None:
            ...  # self.reassociate; raise PassError("why", at=op) to reject the input

Declare a pipeline::

    @register_pipeline("dlvm-optimize", "Simplify, then clean up",
                       options=(Option("reassociate", bool, False, "allow reassociation"),))
    def optimize(reassociate: bool) -> str:
        return f"{pass_text('dlvm-algebra-simplify', reassociate=reassociate)},canonicalize,cse"

Run one from Python::

    run_pipeline(module, "builtin.module(dlvm-optimize,func.func(cse))")
"""

from dlvm_mlir.errors import (
    PassError,
    PassPipelineFailure,
    PipelineError,
    RegistryError,
)
from dlvm_mlir.passes.options import Option
from dlvm_mlir.passes.pipeline import (
    Pipeline,
    is_upstream_pass,
    pass_text,
    run_passes,
    run_pipeline,
)
from dlvm_mlir.passes.registry import (
    ModulePass,
    PipelineSpec,
    emit_error,
    emit_remark,
    emit_warning,
    get_pass,
    get_pipeline,
    load_plugin,
    register_pass,
    register_pipeline,
    registered_passes,
    registered_pipelines,
    unregister,
)
from dlvm_mlir.passes.steps import Call, Passes, Step, StepPass, run_steps

__all__ = [
    "Call",
    "ModulePass",
    "Option",
    "PassError",
    "PassPipelineFailure",
    "Passes",
    "Pipeline",
    "PipelineError",
    "PipelineSpec",
    "RegistryError",
    "Step",
    "StepPass",
    "emit_error",
    "emit_remark",
    "emit_warning",
    "get_pass",
    "get_pipeline",
    "is_upstream_pass",
    "load_plugin",
    "pass_text",
    "register_pass",
    "register_pipeline",
    "registered_passes",
    "registered_pipelines",
    "run_passes",
    "run_pipeline",
    "run_steps",
    "unregister",
]
