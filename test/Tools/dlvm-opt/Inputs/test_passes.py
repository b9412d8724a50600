"""Test-only Python passes, loaded with ``dlvm-opt --load-pass-plugin=<this file>``."""

from mlir import ir

from dlvm_mlir.passes import (
    ModulePass,
    Option,
    PassError,
    pass_text,
    register_pass,
    register_pipeline,
)


def _walk(module: ir.Operation) -> list[ir.Operation]:
    found: list[ir.Operation] = []

    def visit(op: ir.Operation) -> ir.WalkResult:
        found.append(op)
        return ir.WalkResult.ADVANCE

    module.walk(visit, ir.WalkOrder.PRE_ORDER)
    return found


@register_pass
class TestAnnotate(ModulePass):
    """Records its option values as attributes of the module."""

    name = "test-annotate"
    summary = "Record the option values as test.* attributes of the module"
    options = (
        Option("tag", str, "none", "value of test.tag"),
        Option("count", int, 0, "value of test.count"),
        Option("scale", float, 1.0, "value of test.scale"),
        Option("flag", bool, False, "value of test.flag"),
        Option("sizes", int, (), "value of test.sizes", is_list=True),
        Option("mode", str, "fast", "value of test.mode", choices=("fast", "safe")),
    )

    def run(self, module: ir.Operation) -> None:
        attrs = module.attributes
        attrs["test.tag"] = ir.StringAttr.get(self.tag)
        attrs["test.count"] = ir.IntegerAttr.get(
            ir.IntegerType.get_signless(64), self.count
        )
        attrs["test.scale"] = ir.FloatAttr.get_f64(self.scale)
        attrs["test.flag"] = ir.BoolAttr.get(self.flag)
        attrs["test.sizes"] = ir.DenseI64ArrayAttr.get(list(self.sizes))
        attrs["test.mode"] = ir.StringAttr.get(self.mode)


@register_pass
class TestRejectOp(ModulePass):
    """Reports an error at every operation with the given name."""

    name = "test-reject-op"
    summary = "Fail with an error at every operation named op-name"
    options = (Option("op-name", str, "arith.addi", "operation to reject"),)

    def run(self, module: ir.Operation) -> None:
        for op in _walk(module):
            if op.name == self.op_name:
                self.emit_error(op, f"'{op.name}' rejected by test-reject-op")


@register_pass
class TestRaiseAtFunc(ModulePass):
    """Raises PassError at the first function."""

    name = "test-raise-at-func"
    summary = "Fail by raising PassError at the first func.func"

    def run(self, module: ir.Operation) -> None:
        for op in _walk(module):
            if op.name == "func.func":
                raise PassError("functions are not allowed here", at=op)


@register_pass
class TestCrash(ModulePass):
    """A pass with a bug: raises an unexpected exception."""

    name = "test-crash"
    summary = "Raise an unexpected exception (simulates a bug in a pass)"

    def run(self, module: ir.Operation) -> None:
        raise RuntimeError("bug in test-crash")


@register_pipeline(
    "test-cleanup",
    "Annotate, then canonicalize and cse",
    options=(Option("tag", str, "cleaned", "tag given to test-annotate"),),
)
def cleanup(tag: str) -> str:
    return f"{pass_text('test-annotate', tag=tag)},canonicalize,func.func(cse)"


@register_pass
class TestErrorAtUnknownLoc(ModulePass):
    """Fails with an error that has no source position."""

    name = "test-error-at-unknown-loc"
    summary = "Fail with an error at an unknown location"

    def run(self, module: ir.Operation) -> None:
        raise PassError("no position for this one", at=ir.Location.unknown())
