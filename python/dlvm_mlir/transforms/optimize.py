"""dlvm-optimize: DLVM's optimization pipeline, in order.

1. ``canonicalize,cse``: folders (constants, exact identities), dead code, shared values.
2. ``dlvm-algebra-simplify``: algebraic rules (exactness chosen by the options).
3. ``dlvm-linalg-fusion``, ``dlvm-matmul-reorder``: linear algebra, on the
   simplified graph (``x * 1`` gone, transposes folded) so that sums of dots
   and dot chains are visible; then ``dlvm-algebra-simplify`` again for what
   fusion and reordering expose (transposes of concatenations, ...).
   ``linalg=false`` leaves them out: both reassociate sums of products.
4. ``dlvm-checkpoint`` (only with ``checkpoint=`` other than
   save-everything): which forward values gradients save or recompute,
   decided on fully simplified IR; then ``canonicalize,cse`` again (the
   recomputed copies carry ``dlvm.recompute``, so CSE keeps them).
5. ``dlvm-literal-broadcast-promotion`` last (the simplification rules match
   splats of any shape, and promotion only shrinks literals), then
   ``canonicalize,cse`` to share the new rank-0 literals.

Each stage is a list entry of :func:`stages`, so a new pass is one line.
"""

from __future__ import annotations

from dlvm_mlir.passes import Option, pass_text, register_pipeline
from dlvm_mlir.transforms.checkpoint import POLICIES

OPTIONS = (
    Option("fast-math", bool, False, "also apply algebraic rules that change results (see dlvm-algebra-simplify)"),
    Option("strict", bool, False, "apply bit-exact algebraic rules only"),
    Option("linalg", bool, True, "run linear-algebra fusion and matrix-chain reordering (they reassociate)"),
    Option("fusion-policy", str, "cost", "dlvm-linalg-fusion policy", choices=("cost", "always")),
    Option("checkpoint", str, "save-everything", "dlvm-checkpoint policy", choices=POLICIES),
    Option("checkpoint-budget", str, "", "dlvm-checkpoint budget (with checkpoint=min-recompute)"),
)


def stages(
    fast_math: bool,
    strict: bool,
    linalg: bool,
    fusion_policy: str,
    checkpoint: str = "save-everything",
    checkpoint_budget: str = "",
) -> list[str]:
    """The pipeline's elements, in order."""
    algebra = pass_text("dlvm-algebra-simplify", **_set_flags(fast_math=fast_math, strict=strict))
    steps = ["canonicalize", "cse", algebra]
    if linalg:
        steps += [
            pass_text("dlvm-linalg-fusion", **({} if fusion_policy == "cost" else {"policy": fusion_policy})),
            "dlvm-matmul-reorder",
            algebra,
        ]
    if checkpoint != "save-everything" or checkpoint_budget:
        options = {"policy": checkpoint} | ({"budget": checkpoint_budget} if checkpoint_budget else {})
        steps.append(pass_text("dlvm-checkpoint", **options))
    steps += ["canonicalize", "cse", "dlvm-literal-broadcast-promotion", "canonicalize", "cse"]
    return steps


def _set_flags(**flags: bool) -> dict[str, bool]:
    """The flags that are on (defaults stay out of the pipeline text)."""
    return {name: True for name, value in flags.items() if value}


@register_pipeline("dlvm-optimize", "DLVM's optimization pipeline: simplify, fuse and reorder, clean up", OPTIONS)
def optimize(
    fast_math: bool, strict: bool, linalg: bool, fusion_policy: str, checkpoint: str, checkpoint_budget: str
) -> str:
    return ",".join(stages(fast_math, strict, linalg, fusion_policy, checkpoint, checkpoint_budget))
