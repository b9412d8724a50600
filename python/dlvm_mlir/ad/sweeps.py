"""Which sweep of a gradient function an op belongs to, recorded in its location.

A synthesized gradient body is the forward sweep followed by the reverse
sweep. The reverse sweep's ops are created at the location
``"dlvm.adjoint"(<the primal op's location>)``; the forward values that
``dlvm-checkpoint`` recomputes in the reverse sweep get
``"dlvm.recompute"(<location>)``. Locations, unlike op attributes, survive
rewriting: patterns, folders and conversions give the ops they create the
location of the op they replace, so the split stays readable after
``dlvm-optimize`` and even after ``dlvm-to-linalg``. Diagnostics still point
at the source (a name location shows its child's position).

Only the top-level ops of a function body are classified: an op nested in a
loop or branch belongs to the sweep of its top-level ancestor.
"""

from __future__ import annotations

import enum

from mlir import ir

__all__ = [
    "ADJOINT",
    "RECOMPUTE",
    "Sweep",
    "adjoint_location",
    "forward_location",
    "recompute_location",
    "sweep_of",
]

ADJOINT = "dlvm.adjoint"
RECOMPUTE = "dlvm.recompute"


class Sweep(enum.Enum):
    FORWARD = "forward"
    ADJOINT = "adjoint"
    RECOMPUTE = "recompute"

    @property
    def is_reverse(self) -> bool:
        """Part of the reverse sweep (adjoint code or a recomputed forward value)."""
        return self is not Sweep.FORWARD


_TAGS = {ADJOINT: Sweep.ADJOINT, RECOMPUTE: Sweep.RECOMPUTE}


def adjoint_location(location: ir.Location) -> ir.Location:
    """The location of reverse-sweep code emitted for a primal op at ``location``."""
    return ir.Location.name(ADJOINT, childLoc=forward_location(location), context=location.context)


def recompute_location(location: ir.Location) -> ir.Location:
    """The location of a recomputed copy of a forward op at ``location``."""
    return ir.Location.name(RECOMPUTE, childLoc=forward_location(location), context=location.context)


def forward_location(location: ir.Location) -> ir.Location:
    """``location`` without its sweep tag (a forward copy of a reverse-sweep op)."""
    while location.is_a_name() and location.name_str in _TAGS:
        location = location.child_loc
    return location


def sweep_of(op: ir.Operation | ir.OpView) -> Sweep:
    """The sweep a top-level op of a gradient body belongs to."""
    return _sweep_of_location(op.location)


def _sweep_of_location(location: ir.Location) -> Sweep:
    if location.is_a_name():
        return _TAGS.get(location.name_str, Sweep.FORWARD)
    if location.is_a_fused():
        # Ops merged by a rewrite: reverse if any of the merged ops was.
        for child in location.locations:
            found = _sweep_of_location(child)
            if found.is_reverse:
                return found
    return Sweep.FORWARD
