"""Module-level driver: synthesize every derivative declaration, in dependency order.

A declaration (a body-less function carrying ``dlvm.gradient`` or
``dlvm.tangent``) needs its primal's body first; the primal may itself be a
declaration (higher-order derivatives), so ``ensure_body`` synthesizes
depth-first and reports cycles. Differentiating a call asks for a derivative
of the callee (``request_gradient`` / ``request_tangent``): an existing
declaration of the right form is reused, else a private one is created next to
the callee and queued. A recursive function's gradient thereby calls itself.

After synthesis the declaration attribute is replaced by
``dlvm.derivative_of`` (same value), so the function verifies as an ordinary
function, can be optimized and lowered, and a later run does not synthesize
it again.
"""

from __future__ import annotations

from collections.abc import Sequence

from mlir import ir
from mlir.dialects import func
from mlir.passmanager import PassManager

from dlvm_mlir.ad.cloning import walk_ops
from dlvm_mlir.ad.core import ReverseSweep, append_entry_block, function_type
from dlvm_mlir.ad.errors import DifferentiationError
from dlvm_mlir.dialects.dlvm import DerivativeDecl

__all__ = ["DERIVATIVE_OF_ATTR", "Synthesizer", "differentiate"]

DERIVATIVE_OF_ATTR = "dlvm.derivative_of"
"""Set on a synthesized function: the declaration it was synthesized from."""

_LIFT_PIPELINE = "builtin.module(func.func(lift-cf-to-scf))"


def differentiate(module: ir.Module | ir.Operation) -> list[str]:
    """Synthesize every derivative declaration of ``module``; return the synthesized names."""
    return Synthesizer(module).run()


class Synthesizer:
    def __init__(self, module: ir.Module | ir.Operation):
        self.module = module.operation
        self.body = self.module.regions[0].blocks[0]
        self.synthesized: list[str] = []
        self._in_progress: list[str] = []
        self._pending: list[str] = []
        self._generated: set[str] = set()
        self._derivatives: dict[tuple, str] = {}
        self._primals: dict[str, ir.Operation] = {}
        self._scratch: list[ir.Module] = []
        for op in self._functions():
            decl = DerivativeDecl.of_function(op)
            if decl is not None:
                self._derivatives.setdefault(self._key(decl, self.lookup(decl.of, op)), _name(op))

    def run(self) -> list[str]:
        declared = [_name(op) for op in self._functions() if DerivativeDecl.of_function(op) is not None]
        for name in declared:
            self.ensure_body(name)
        while self._pending:
            self.ensure_body(self._pending.pop(0))
        return self.synthesized

    # ----------------------------------------------------------------------
    # Functions and declarations
    # ----------------------------------------------------------------------

    def lookup(self, name: str, at: ir.Operation | None = None) -> ir.Operation:
        for op in self._functions():
            if _name(op) == name:
                return op
        raise DifferentiationError(f"no function named @{name} in the module", at or self.module)

    def ensure_body(self, name: str, requested_by: ir.Operation | None = None) -> None:
        """Make sure @name has a body, synthesizing it (and what it needs) first."""
        fn = self.lookup(name, requested_by)
        decl = DerivativeDecl.of_function(fn)
        if decl is None:
            if not _has_body(fn):
                raise DifferentiationError(
                    f"cannot differentiate @{name}: it is a declaration without a body",
                    requested_by or fn,
                )
            return
        if name in self._in_progress:
            cycle = " -> ".join(f"@{n}" for n in [*self._in_progress, name])
            raise DifferentiationError(f"cyclic derivative declarations: {cycle}", fn)
        if _has_body(fn):
            raise DifferentiationError(f"derivative declaration @{name} must not have a body", fn)
        self._in_progress.append(name)
        try:
            self.ensure_body(decl.of, fn)
            self._synthesize(fn, decl)
        finally:
            self._in_progress.pop()

    def _synthesize(self, fn: ir.Operation, decl: DerivativeDecl) -> None:
        from dlvm_mlir.ad.forward import ForwardSweep

        primal = self.primal(decl.of, fn)
        sweep = ReverseSweep(self, primal, decl) if decl.kind == "gradient" else ForwardSweep(self, primal, decl)
        # Build into a scratch copy: if a rule rejects the input, erasing the
        # copy leaves the module as it was (the declaration stays body-less).
        scratch = fn.clone(ip=ir.InsertionPoint.after(fn))
        scratch.attributes["sym_name"] = ir.StringAttr.get(self._fresh_name(f"{_name(fn)}__building"))
        del scratch.attributes[decl.attr_name]
        try:
            sweep.synthesize(scratch)
        except BaseException:
            scratch.erase()
            raise
        _move_body(scratch, fn)
        scratch.erase()
        attrs = fn.attributes
        attrs[DERIVATIVE_OF_ATTR] = attrs[decl.attr_name]
        del attrs[decl.attr_name]
        if _name(fn) not in self._generated and "sym_visibility" in attrs:
            # A user's declaration is an entry point: keep it from symbol DCE.
            del attrs["sym_visibility"]
        self.synthesized.append(_name(fn))

    def primal(self, name: str, requested_by: ir.Operation) -> ir.Operation:
        """The function to differentiate: @name itself, or a structured copy when it has a CFG."""
        if name in self._primals:
            return self._primals[name]
        fn = self.lookup(name, requested_by)
        if _is_structured(fn):
            self._primals[name] = fn
            return fn
        lifted = self._lift(fn)
        self._primals[name] = lifted
        return lifted

    def _lift(self, fn: ir.Operation) -> ir.Operation:
        """Copy ``fn`` into a scratch module and turn its CFG into scf ops."""
        with fn.location:
            scratch = ir.Module.create()
        self._scratch.append(scratch)
        copy = fn.clone(ip=ir.InsertionPoint(scratch.body))
        pm = PassManager.parse(_LIFT_PIPELINE, fn.context)
        pm.enable_verifier(False)
        try:
            pm.run(scratch.operation)
        except ir.MLIRError as err:
            raise DifferentiationError(
                f"cannot differentiate @{_name(fn)}: turning its control flow into scf failed: {err}", fn
            ) from None
        if not _is_structured(copy):
            raise DifferentiationError(
                f"cannot differentiate @{_name(fn)}: its control flow could not be turned into scf loops and branches",
                fn,
            )
        return copy

    # ----------------------------------------------------------------------
    # Derivatives of callees
    # ----------------------------------------------------------------------

    def request_gradient(self, callee: str, wrt: Sequence[int], at: ir.Operation) -> str:
        """A seedable gradient of @callee wrt ``wrt`` (all results seeded), created on first use."""
        return self._request(DerivativeDecl("gradient", callee, tuple(wrt), (), None, True), at)

    def request_tangent(self, callee: str, wrt: Sequence[int], at: ir.Operation) -> str:
        """A JVP of @callee wrt ``wrt`` that also keeps every result."""
        primal = self.lookup(callee, at)
        keeping = tuple(range(len(function_type(primal).results)))
        return self._request(DerivativeDecl("tangent", callee, tuple(wrt), keeping, None, False), at)

    def _request(self, decl: DerivativeDecl, at: ir.Operation) -> str:
        primal = self.lookup(decl.of, at)
        if not _has_body(primal) and DerivativeDecl.of_function(primal) is None:
            raise DifferentiationError(f"cannot differentiate @{decl.of}: it is a declaration without a body", at)
        key = self._key(decl, primal)
        if key in self._derivatives:
            return self._derivatives[key]
        suffix = "grad" if decl.kind == "gradient" else "jvp"
        name = self._fresh_name(f"{decl.of}__{suffix}_{'_'.join(map(str, decl.wrt)) or 'none'}")
        with primal.location:
            declaration = func.FuncOp(
                name,
                decl.expected_type(function_type(primal)),
                visibility="private",
                ip=ir.InsertionPoint.after(primal),
            )
            declaration.attributes[decl.attr_name] = decl.to_attr()
        self._derivatives[key] = name
        self._generated.add(name)
        self._pending.append(name)
        return name

    @staticmethod
    def _key(decl: DerivativeDecl, primal: ir.Operation) -> tuple:
        """Declarations with equal keys compute the same function."""
        wrt = tuple(decl.wrt_indices(len(function_type(primal).inputs)))
        return (decl.kind, decl.of, wrt, decl.keeping, decl.from_, decl.seedable)

    def _fresh_name(self, base: str) -> str:
        taken = {_name(op) for op in self._functions()}
        name, n = base, 0
        while name in taken:
            n += 1
            name = f"{base}_{n}"
        return name

    def _functions(self) -> list[ir.Operation]:
        return [op.operation for op in self.body.operations if op.operation.name == "func.func"]


def _move_body(source: ir.Operation, target: ir.Operation) -> None:
    """Move the body of ``source`` into the body-less ``target`` (same function type)."""
    entry = append_entry_block(target)
    old_entry = source.regions[0].blocks[0]
    for old, new in zip(old_entry.arguments, entry.arguments, strict=True):
        old.replace_all_uses_with(new)
    insert = ir.InsertionPoint(entry)
    for op in list(old_entry.operations):
        op.operation.detach_from_parent()
        insert.insert(op.operation)


def _name(fn: ir.Operation) -> str:
    return ir.StringAttr(fn.attributes["sym_name"]).value


def _has_body(fn: ir.Operation) -> bool:
    return len(fn.regions[0].blocks) > 0


def _is_structured(fn: ir.Operation) -> bool:
    """One block in the body and in every nested region."""
    if len(fn.regions[0].blocks) != 1:
        return False
    return all(len(region.blocks) <= 1 for op in walk_ops(fn) for region in op.regions)

