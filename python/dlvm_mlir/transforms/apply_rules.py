"""dlvm-apply-rules: apply named rule sets, built-in or user-defined.

User rules are registered with :func:`dlvm_mlir.rewrite_rule` in a Python
file that ``dlvm-opt`` loads as a plugin::

    dlvm-opt f.mlir --load-pass-plugin=my_rules.py --dlvm-apply-rules="sets=my-rules"

``sets`` lists rule sets applied together (with the dialect's folders) to a
fixed point; rules are filtered by exactness as in ``dlvm-algebra-simplify``
(the default keeps exact, signed-zero and refining rules).
"""

from __future__ import annotations

from mlir import ir

from dlvm_mlir.errors import RegistryError
from dlvm_mlir.passes import ModulePass, Option, PassError, register_pass
from dlvm_mlir.rewrites import allowed_exactness, apply_rules, rule_set


@register_pass
class ApplyRules(ModulePass):
    """Applies the rules of the rule sets named in ``sets``."""

    name = "dlvm-apply-rules"
    summary = "Apply named rewrite rule sets (e.g. user rules loaded with --load-pass-plugin)"
    options = (
        Option("sets", str, (), "rule sets to apply together", is_list=True),
        Option("fast-math", bool, False, "also apply rules marked unsafe"),
        Option("strict", bool, False, "apply bit-exact rules only"),
    )

    def run(self, module: ir.Operation) -> None:
        if not self.sets:
            raise PassError("name at least one rule set: dlvm-apply-rules{sets=a,b}")
        if self.strict and self.fast_math:
            raise PassError("options 'strict' and 'fast-math' exclude each other")
        allowed = allowed_exactness(strict=self.strict, fast_math=self.fast_math)
        try:
            rules = [rule for name in self.sets for rule in rule_set(name).select(allowed)]
        except RegistryError as err:
            raise PassError(str(err)) from None
        apply_rules(module, rules)
