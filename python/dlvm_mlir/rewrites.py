"""Rewrite rules: named, individually testable patterns applied by MLIR's greedy driver.

A rule is a function of one matched op that returns the value(s) replacing
the op's results, or ``None`` when it does not apply. It runs with the
insertion point just before the op and the op's location, so it builds new
ops with the plain op builders::

    import dlvm_mlir
    from dlvm_mlir.dialects import dlvm
    from dlvm_mlir.transforms._patterns import producer

    @dlvm_mlir.rewrite_rule(dlvm.SubOp, set="my-rules", sample='''
    func.func @f(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
      %n = dlvm.neg %b : tensor<4xf32>
      %r = dlvm.sub %a, %n : tensor<4xf32>, tensor<4xf32>
      return %r : tensor<4xf32>
    }''')
    def sub_of_neg(op: dlvm.SubOp) -> ir.Value | None:  # a - (-b) -> a + b
        neg = producer(op.rhs, dlvm.NegOp)
        if neg is None:
            return None
        return dlvm.add(op.lhs, neg.operand)

    dlvm_mlir.validate_rule(sub_of_neg)       # random inputs, before vs after
    # dlvm-opt f.mlir --load-pass-plugin=rules.py --dlvm-apply-rules=sets=my-rules

Guard first, build last: a rule that returns ``None`` must not have built
anything. The driver keeps every rewrite type-correct: a replacement whose
shape the op broadcast to a larger one is wrapped in ``dlvm.broadcast_to``; any
other type mismatch, or replacing an op by its own result, is a :class:`RuleError`
naming the rule (MLIR would abort the whole process on some misuses, so the
rules never touch the rewriter themselves).

Every rule states its :class:`Exactness`; passes pick rules by it
(:func:`allowed_exactness`). :func:`validate_rule` runs a rule's sample IR
before and after the rule through the reference interpreter (float64) on
random inputs and compares the outputs.
"""

from __future__ import annotations

import enum
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np
from mlir import ir
from mlir.rewrite import GreedyRewriteConfig, RewritePatternSet, apply_patterns_and_fold_greedily

from dlvm_mlir.errors import DLVMError, RegistryError

__all__ = [
    "Exactness",
    "RewriteRule",
    "RuleError",
    "RuleSet",
    "RuleValidationError",
    "ValidationReport",
    "allowed_exactness",
    "apply_rules",
    "rewrite_rule",
    "rule_set",
    "rule_sets",
    "unregister_rule_set",
    "validate_rule",
]


class Exactness(enum.Enum):
    """How far a rule may change floating-point results.

    - ``EXACT``: the same result for every input, bit for bit (for ``dot``:
      the same products and sums; a kernel's summation order is unspecified anyway).
    - ``SIGNED_ZERO``: the same, except that a zero result may change sign
      (``x + 0.0 -> x`` gives ``-0.0`` for ``x = -0.0``; LLVM's ``nsz``).
    - ``REFINING``: the same real-valued function with the same special values
      (inf, NaN) and no added rounding: the result is the rounded value of
      what the original computed with extra roundings (``x^2 -> x*x``,
      ``log(exp x) -> x``). Results may differ in the last bits, or be finite
      where an intermediate of the original overflowed.
    - ``UNSAFE``: changes results for some inputs: adds roundings
      (reassociation), or differs on inf/NaN or outside a function's domain
      (``x*0 -> 0``, ``x/x -> 1``, ``exp(log x) -> x``). Only with fast-math.
    """

    EXACT = "exact"
    SIGNED_ZERO = "signed-zero"
    REFINING = "refining"
    UNSAFE = "unsafe"


def allowed_exactness(*, strict: bool = False, fast_math: bool = False) -> frozenset[Exactness]:
    """The exactness levels a pass applies: ``strict`` keeps bit-exact rules only,
    the default adds signed-zero and refining rules, ``fast_math`` adds all."""
    if strict and fast_math:
        raise RegistryError("'strict' and 'fast-math' exclude each other")
    if strict:
        return frozenset({Exactness.EXACT})
    if fast_math:
        return frozenset(Exactness)
    return frozenset({Exactness.EXACT, Exactness.SIGNED_ZERO, Exactness.REFINING})


class RuleError(DLVMError):
    """A rewrite rule is malformed or produced an ill-typed replacement."""


class RuleValidationError(RuleError):
    """A rule changed a program's outputs, or did not fire on its sample."""


Replacement = ir.Value | Sequence[ir.Value] | None
RuleFn = Callable[[ir.OpView], Replacement]
Root = type[ir.OpView] | str


@dataclass(frozen=True, eq=False)
class RewriteRule:
    """A registered rule: ``fn`` applied to ops of the ``roots`` classes (or names)."""

    name: str
    roots: tuple[Root, ...]
    fn: RuleFn
    rule_set: str
    exactness: Exactness
    sample: str | None = None
    """IR text with one function the rule rewrites; used by :func:`validate_rule`."""
    sample_range: tuple[float, float] = (-2.0, 2.0)
    """Interval of the random float inputs for the sample (e.g. positive for ``log``)."""
    benefit: int = 1
    doc: str = ""

    def __call__(self, op: ir.OpView) -> Replacement:
        return self.fn(op)

    @property
    def root_names(self) -> tuple[str, ...]:
        return tuple(root if isinstance(root, str) else root.OPERATION_NAME for root in self.roots)


@dataclass
class RuleSet:
    """A named, ordered collection of rules."""

    name: str
    rules: list[RewriteRule] = field(default_factory=list)

    def add(self, rule: RewriteRule) -> None:
        if any(existing.name == rule.name for existing in self.rules):
            raise RegistryError(f"rule set '{self.name}' already has a rule '{rule.name}'")
        self.rules.append(rule)

    def get(self, name: str) -> RewriteRule:
        for rule in self.rules:
            if rule.name == name:
                return rule
        raise RegistryError(f"rule set '{self.name}' has no rule '{name}'")

    def select(self, allowed: Iterable[Exactness]) -> list[RewriteRule]:
        allowed = frozenset(allowed)
        return [rule for rule in self.rules if rule.exactness in allowed]

    def __iter__(self):
        return iter(self.rules)

    def __len__(self) -> int:
        return len(self.rules)


_sets: dict[str, RuleSet] = {}


def rewrite_rule(
    *roots: Root,
    set: str = "user",  # noqa: A002  (reads as a keyword: @rewrite_rule(Op, set="x"))
    name: str | None = None,
    exactness: Exactness = Exactness.EXACT,
    sample: str | None = None,
    sample_range: tuple[float, float] = (-2.0, 2.0),
    benefit: int = 1,
) -> Callable[[RuleFn], RewriteRule]:
    """Decorator: register ``fn(op) -> replacement | None`` on op classes into rule set ``set``.

    The decorated name becomes the :class:`RewriteRule` (still callable on an op).
    """
    if not roots:
        raise RegistryError("rewrite_rule needs at least one op class or op name")
    for root in roots:
        if not isinstance(root, str) and not (isinstance(root, type) and hasattr(root, "OPERATION_NAME")):
            raise RegistryError(f"rewrite_rule: {root!r} is neither an op class nor an op name")

    def decorate(fn: RuleFn) -> RewriteRule:
        rule = RewriteRule(
            name=name or fn.__name__,
            roots=tuple(roots),
            fn=fn,
            rule_set=set,
            exactness=exactness,
            sample=sample,
            sample_range=sample_range,
            benefit=benefit,
            doc=(fn.__doc__ or "").strip(),
        )
        _sets.setdefault(set, RuleSet(set)).add(rule)
        return rule

    return decorate


def rule_set(name: str) -> RuleSet:
    """The rule set ``name`` (built-in sets are registered when their pass module is imported)."""
    _import_builtin_rules()
    if name not in _sets:
        known = ", ".join(sorted(_sets)) or "none"
        raise RegistryError(f"no rule set named '{name}' (known: {known})")
    return _sets[name]


def rule_sets() -> list[RuleSet]:
    """Every registered rule set, sorted by name."""
    _import_builtin_rules()
    return [_sets[name] for name in sorted(_sets)]


def unregister_rule_set(name: str) -> None:
    """Remove a rule set (meant for tests that register their own rules)."""
    if _sets.pop(name, None) is None:
        raise RegistryError(f"no rule set named '{name}'")


def _import_builtin_rules() -> None:
    from dlvm_mlir.passes import registry

    registry.registered_passes()  # imports every module of dlvm_mlir.transforms


# --------------------------------------------------------------------------
# Applying rules
# --------------------------------------------------------------------------


@dataclass
class _Run:
    hits: Counter[str] = field(default_factory=Counter)
    error: RuleError | None = None


def apply_rules(
    target: ir.Module | ir.Operation | ir.OpView,
    rules: Iterable[RewriteRule],
    *,
    fold: bool = True,
    max_iterations: int = 10,
) -> Counter[str]:
    """Apply ``rules`` greedily (with MLIR's folders unless ``fold=False``) until nothing changes.

    Returns how often each rule fired, by rule name. Raises :class:`RuleError`
    when a rule produced an ill-typed replacement or raised.
    """
    rules = list(rules)
    run = _Run()
    patterns = RewritePatternSet()
    for rule in rules:
        for root in rule.roots:
            patterns.add(root, _pattern(rule, run), benefit=rule.benefit)
    config = GreedyRewriteConfig()
    config.enable_folding = fold
    config.max_iterations = max_iterations
    operation = target.operation if isinstance(target, (ir.Module, ir.OpView)) else target
    apply_patterns_and_fold_greedily(operation, patterns.freeze(), config)
    if run.error is not None:
        raise run.error
    return run.hits


def _pattern(rule: RewriteRule, run: _Run) -> Callable[[ir.OpView, object], bool | None]:
    """The rule as a greedy-driver pattern (which reports success by returning a falsy value)."""

    def match_and_rewrite(op: ir.OpView, rewriter) -> bool | None:
        if run.error is not None:
            return True
        try:
            with rewriter.ip, op.location:
                produced = rule.fn(op)
                if produced is None:
                    return True
                values = _fit_replacement(rule, op, produced)
        except RuleError as err:
            run.error = err
            return True
        except Exception as err:  # a bug in the rule: report it by name
            run.error = RuleError(f"rule '{rule.name}' raised {type(err).__name__}: {err}")
            run.error.__cause__ = err
            return True
        rewriter.replace_op(op, values)
        run.hits[rule.name] += 1
        return None

    return match_and_rewrite


def _fit_replacement(rule: RewriteRule, op: ir.OpView, produced: Replacement) -> list[ir.Value]:
    """Check the replacement's types, inserting ``dlvm.broadcast_to`` where the op broadcast it."""
    from dlvm_mlir.dialects import dlvm

    values = [produced] if isinstance(produced, ir.Value) else list(produced)
    results = list(op.results)
    if len(values) != len(results):
        raise RuleError(f"rule '{rule.name}' gave {len(values)} values for {len(results)} results of '{op.name}'")
    fitted = []
    for value, result in zip(values, results):
        if value == result:
            raise RuleError(f"rule '{rule.name}' replaced '{op.name}' by its own result")
        if value.type != result.type:
            if not _broadcasts_to(value.type, result.type):
                raise RuleError(
                    f"rule '{rule.name}' replaced a {result.type} result of '{op.name}' by a {value.type}"
                )
            value = dlvm.broadcast_to(value, list(ir.RankedTensorType(result.type).shape))
        fitted.append(value)
    return fitted


def _broadcasts_to(source: ir.Type, target: ir.Type) -> bool:
    if not (isinstance(source, ir.RankedTensorType) and isinstance(target, ir.RankedTensorType)):
        return False
    if source.element_type != target.element_type:
        return False
    if source.rank == 0:
        return True
    return source.rank == target.rank and all(s in (1, t) for s, t in zip(source.shape, target.shape))


# --------------------------------------------------------------------------
# Validation through the reference interpreter
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class ValidationReport:
    """What :func:`validate_rule` observed."""

    rule: str
    function: str
    fired: int
    trials: int
    max_abs_error: float
    max_rel_error: float
    before: str
    after: str


def validate_rule(
    rule: RewriteRule,
    ir_text: str | ir.Module | None = None,
    fn: str | None = None,
    *,
    trials: int = 3,
    seed: int = 0,
    sample_range: tuple[float, float] | None = None,
    rtol: float = 1e-9,
    atol: float = 1e-12,
    require_fired: bool = True,
) -> ValidationReport:
    """Check ``rule`` on a program: outputs before and after the rule must agree.

    ``ir_text`` (default: the rule's sample) is parsed twice; the rule alone
    (no folding) rewrites one copy; function ``fn`` (default: the only one
    with a body) of both runs in the reference interpreter, in float64, on
    ``trials`` sets of random inputs (floats uniform in ``sample_range``,
    default the rule's; integers in [-5, 5]; booleans fair). Raises
    :class:`RuleValidationError` when outputs differ beyond ``rtol``/``atol``
    (NaN matches NaN) or, with ``require_fired``, when the rule never fired.
    """
    import dlvm_mlir
    from dlvm_mlir.interpreter import Interpreter

    source = rule.sample if ir_text is None else str(ir_text)
    if source is None:
        raise RuleValidationError(f"rule '{rule.name}' has no sample IR: pass ir_text")
    low, high = sample_range or rule.sample_range
    with dlvm_mlir.make_context():
        before = ir.Module.parse(source)
        after = ir.Module.parse(source)
        hits = apply_rules(after, [rule], fold=False)
        if not after.operation.verify():
            raise RuleValidationError(f"rule '{rule.name}' produced invalid IR:\n{after}")
        fn = fn or _only_function(before, rule)
        fired = hits[rule.name]
        if require_fired and fired == 0:
            raise RuleValidationError(f"rule '{rule.name}' did not fire on @{fn}:\n{source}")
        arg_types = _function(before, fn).type.inputs
        rng = np.random.default_rng(seed)
        run_before = Interpreter(before, dtype=np.float64)
        run_after = Interpreter(after, dtype=np.float64)
        max_abs = max_rel = 0.0
        for _ in range(trials):
            args = [_random_argument(t, rng, low, high) for t in arg_types]
            expected = _as_tuple(run_before.run(fn, *args))
            actual = _as_tuple(run_after.run(fn, *args))
            for index, (e, a) in enumerate(zip(expected, actual, strict=True)):
                e, a = np.asarray(e, dtype=np.float64), np.asarray(a, dtype=np.float64)
                if e.shape != a.shape or not np.allclose(a, e, rtol=rtol, atol=atol, equal_nan=True):
                    raise RuleValidationError(
                        f"rule '{rule.name}' changed result {index} of @{fn}\n"
                        f"inputs: {args}\nbefore: {e}\nafter: {a}\nIR before:\n{before}\nIR after:\n{after}"
                    )
                finite = np.isfinite(e) & np.isfinite(a)
                if finite.any():
                    diff = np.abs(a[finite] - e[finite])
                    max_abs = max(max_abs, float(diff.max()))
                    max_rel = max(max_rel, float((diff / np.maximum(np.abs(e[finite]), 1e-300)).max()))
        return ValidationReport(rule.name, fn, fired, trials, max_abs, max_rel, str(before), str(after))


def _only_function(module: ir.Module, rule: RewriteRule) -> str:
    names = [
        ir.StringAttr(op.attributes["sym_name"]).value
        for op in module.body.operations
        if op.operation.name == "func.func" and len(op.regions[0].blocks) > 0
    ]
    if len(names) != 1:
        raise RuleValidationError(f"rule '{rule.name}': name the function to run (the IR defines {names})")
    return names[0]


def _function(module: ir.Module, name: str) -> ir.OpView:
    for op in module.body.operations:
        if op.operation.name == "func.func" and ir.StringAttr(op.attributes["sym_name"]).value == name:
            return op
    raise RuleValidationError(f"no function @{name}")


def _random_argument(type_: ir.Type, rng: np.random.Generator, low: float, high: float) -> np.ndarray:
    shaped = ir.RankedTensorType(type_) if isinstance(type_, ir.RankedTensorType) else None
    shape = tuple(shaped.shape) if shaped is not None else ()
    element = shaped.element_type if shaped is not None else type_
    if isinstance(element, ir.IntegerType):
        if element.width == 1:
            return rng.random(shape) < 0.5
        return rng.integers(-5, 6, size=shape).astype(np.int64)
    return rng.uniform(low, high, size=shape)


def _as_tuple(result: object) -> tuple:
    return result if isinstance(result, tuple) else (result,)
