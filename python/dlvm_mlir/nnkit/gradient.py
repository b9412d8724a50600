"""``dl.gradient``: NNKit's ``gradient(of:withRespectTo:keeping:)``.

A :class:`Gradient` is a staged function whose specialization is a body-less
``func.func`` carrying ``#dlvm.gradient<of @f wrt [...] keeping [...] ...>``
next to the primal ``@f``; ``dlvm-differentiate`` synthesizes its body when the
program is compiled. Its arguments are the primal's (plus one seed per
differentiated result when ``seedable``); its results are the gradients wrt
the ``wrt`` arguments, in order, then the kept primal results. The primal may
itself be a Gradient (higher order: the paper's
``gradient(of: dg, from: 0, withRespectTo: (1))``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from mlir import ir
from mlir.dialects import func

from dlvm_mlir.dialects.dlvm import GRADIENT_ATTR, DerivativeDecl
from dlvm_mlir.errors import SourceLocation

from .errors import ArityError, ShapeError, StagingError, user_location
from .function import Function, StagedFunction
from .specs import Spec
from .tracing import Emitted, ModuleBuilder

__all__ = ["Gradient", "gradient"]


def _indices(value: int | Sequence[int] | None) -> tuple[int, ...] | None:
    if value is None:
        return None
    if isinstance(value, int):
        return (value,)
    return tuple(int(v) for v in value)


class Gradient(StagedFunction):
    """The gradient of a staged function, as a staged function."""

    def __init__(
        self,
        of: StagedFunction | Callable[..., Any],
        wrt: int | Sequence[int] | None = None,
        keeping: int | Sequence[int] = (),
        seedable: bool = False,
        from_: int | None = None,
        name: str | None = None,
        checkpoint: str | None = None,
        checkpoint_budget: str | None = None,
    ) -> None:
        if not isinstance(of, StagedFunction):
            if not callable(of):
                raise StagingError(f"dl.gradient expects a function, got {type(of).__name__}")
            of = Function(of)
        if seedable and of.variadic:
            raise StagingError(
                f"dl.gradient(seedable=True) of '{of.name}', which takes *args: the seeds could not be told "
                "from its arguments; give it named parameters",
                user_location(),
            )
        self.variadic = of.variadic
        super().__init__(
            name or f"{of.name}_grad",
            of.target,
            of.optimize,
            of.checkpoint if checkpoint is None else checkpoint,
            of.checkpoint_budget if checkpoint_budget is None else checkpoint_budget,
        )
        self.of = of
        self.wrt = _indices(wrt)
        self.keeping = _indices(keeping) or ()
        self.seedable = bool(seedable)
        self.from_ = None if from_ is None else int(from_)
        self._defined_at: SourceLocation | None = user_location()

    def declaration(self, primal_symbol: str) -> DerivativeDecl:
        return DerivativeDecl("gradient", primal_symbol, self.wrt, self.keeping, self.from_, self.seedable)

    def param_count(self, builder: ModuleBuilder, args: tuple[Spec, ...]) -> int:
        count = self.of.param_count(builder, args)
        if not self.seedable:
            return count
        primal = builder.emit(self.of, args[:count])
        return count + (1 if self.from_ is not None else len(primal.results))

    def _check_declaration(self, primal: Emitted) -> None:
        """Reject bad indices here, at the line that called dl.gradient."""
        where = self._defined_at
        arity, results = len(primal.args), len(primal.results)
        for i in self.wrt or ():
            if not 0 <= i < arity:
                raise StagingError(f"gradient of '{self.of.name}': wrt index {i} is out of range ({arity} arguments)", where)
        for i in self.keeping:
            if not 0 <= i < results:
                raise StagingError(
                    f"gradient of '{self.of.name}': keeping index {i} is out of range ({results} results)", where
                )
        if self.from_ is not None and not 0 <= self.from_ < results:
            raise StagingError(
                f"gradient of '{self.of.name}': from index {self.from_} is out of range ({results} results)", where
            )
        if results == 0:
            raise StagingError(f"gradient of '{self.of.name}': the function returns nothing", where)
        for i in self.wrt if self.wrt is not None else range(arity):
            if not primal.args[i].dtype.is_float:
                raise StagingError(
                    f"gradient of '{self.of.name}': argument {i} has element type {primal.args[i].dtype}; "
                    "only float arguments can be differentiated (leave it out of wrt)",
                    where,
                )

    def _emit(self, builder: ModuleBuilder, args: tuple[Spec, ...], public: bool) -> Emitted:
        count = self.of.param_count(builder, args)
        if len(args) < count:
            raise ArityError(f"'{self.name}' takes {count} arguments (those of '{self.of.name}'), got {len(args)}")
        primal = builder.emit(self.of, args[:count])
        self._check_declaration(primal)
        declaration = self.declaration(primal.symbol)
        expected = declaration.expected_type(primal.function_type())
        want = tuple(Spec.from_mlir(t) for t in expected.inputs)
        if len(args) != len(want):
            seeds = f" and {len(want) - count} seeds" if self.seedable else ""
            raise ArityError(f"'{self.name}' takes {count} arguments{seeds}, got {len(args)}")
        for position, (given, needed) in enumerate(zip(args, want)):
            if given != needed:
                role = "seed" if position >= count else "argument"
                raise ShapeError(f"'{self.name}': {role} {position} is {given}, expected {needed}")
        name = builder.symbol(self.name)
        loc = _location(self._defined_at)
        fop = builder.new_function(name, expected, loc, public=False)
        fop.attributes[GRADIENT_ATTR] = declaration.to_attr()
        results = tuple(Spec.from_mlir(t) for t in expected.results)
        return Emitted(name, args, results, single=len(results) == 1)

    def _emit_entry(self, builder: ModuleBuilder, args: tuple[Spec, ...]) -> Emitted:
        """A public function that calls the (private, body-less) declaration."""
        declared = builder.emit(self, args)
        name = builder.symbol(f"{self.name}_entry")
        loc = _location(self._defined_at)
        fop = builder.new_function(name, declared.function_type(), loc, public=True)
        block = fop.add_entry_block(arg_locs=[loc] * len(args))
        with ir.InsertionPoint(block):
            call = func.CallOp(
                [s.mlir() for s in declared.results],
                ir.FlatSymbolRefAttr.get(declared.symbol),
                list(block.arguments),
                loc=loc,
            )
            func.ReturnOp(list(call.results), loc=loc)
        return Emitted(name, declared.args, declared.results, declared.single)


def _location(where: SourceLocation | None) -> ir.Location:
    if where is None:
        return ir.Location.unknown()
    return ir.Location.file(where.filename, where.line, where.column)


def gradient(
    of: StagedFunction | Callable[..., Any],
    wrt: int | Sequence[int] | None = None,
    keeping: int | Sequence[int] = (),
    seedable: bool = False,
    from_: int | None = None,
    *,
    name: str | None = None,
    checkpoint: str | None = None,
    checkpoint_budget: str | None = None,
) -> Gradient:
    """The gradient of ``of`` (a staged function; a plain one is staged) as a staged function.

    DLVM's ``[gradient @of wrt ... keeping ...]``:

    - ``wrt``: argument indices to differentiate (default: all);
    - ``keeping``: primal result indices also returned, after the gradients;
    - ``seedable``: take one seed per differentiated result as trailing arguments
      (else the seed is ones: a non-scalar result gives the gradient of its sum);
    - ``from_``: differentiate only result ``from_`` of a multi-result function;
    - ``checkpoint`` / ``checkpoint_budget``: what the gradient saves for its
      reverse sweep (dlvm-checkpoint's policy and budget; default: ``of``'s).
    """
    return Gradient(of, wrt, keeping, seedable, from_, name, checkpoint, checkpoint_budget)
