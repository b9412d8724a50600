"""Choosing the memory layout of elementwise and reduction results, so that transposes cancel.

A network written for another layout reaches the convolutions (NCHW in the
back ends) through transposes: a JAX or Flax model in NHWC is imported as
``transpose -> conv -> transpose`` per layer, with the bias, the activation and
the residual adds in NHWC between them, and its gradient transposes every
cotangent back.  Each transpose is a pass over an activation, and the
elementwise ops that read a transposed operand cannot vectorize that read.
Those ops do not care about the order of their dimensions: a bias-add or a
relu computes the same values whichever dimension is innermost in memory.
This pass gives each connected group of them one layout, the one that makes
the fewest (smallest) conversions at the group's edges, and stores every
value of the group in it: transposes inside the group become copies of
identical layouts and vanish, the convolutions see their own layout.  This
is layout assignment in the sense of XLA's pass of that name and of
TensorRT's and TVM's layout conversion, on ``linalg`` on tensors.

The group
---------
Members are ``linalg.generic`` ops with one result, static shapes, parallel
and reduction loops and no other attributes, whose output map is a projected
permutation (each result a loop, each parallel loop once) and which are
elementwise or read one operand with a full permutation map (a reduction
over it): elementwise ops, transposes, broadcasts and generalized
``linalg.reduce`` ops.  Contractions and convolutions are never members.  A
member's operand read with a projected permutation map (each result a loop,
no constants), and its result, are *member values*; every dimension of a
member value is tied to the member's loop that indexes it.  Loops and
dimensions tied together form one *class* (a union-find over them): a class
is one dimension of the data seen through every transpose.  A read that would
tie two loops of one member (``x + transpose(x)``) is left a plain read.
Members of one block that share a class form a group.

The layout
----------
A layout for the group is an order of its classes, outermost first; each
member value is stored with its dimensions in that order, each member
iterates its loops in that order.  A member value used by an op outside the
group (a convolution, a return, a plain read) or defined outside it (a
function argument, a convolution's result) needs a transpose there unless its
own order of dimensions agrees with the layout.  The layout is built from
those edge values, largest first: each adds its order of classes unless that
contradicts the orders already taken.  The group is rewritten only if its
edge transposes move fewer elements than the transposing reads of its members
did before; inits that are empties, fills or splat constants are rebuilt in
the layout at no cost.

The back ends run it after generalization, before elementwise fusion
(:mod:`.kernel_fusion`), so the remaining transposes fuse into their
neighbours as before.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from mlir import ir
from mlir.dialects import arith, linalg, tensor

from .analysis import indexing_maps, use_owner
from .conv_im2col import build_generic
from .linalg_rewrite import affine_maps, defining_op, iterator_types, map_dims

__all__ = ["GroupLayout", "assign_layouts"]

#: the attributes a generic member may carry (any other marks an op a later stage treats specially)
_PLAIN_ATTRIBUTES = {"indexing_maps", "iterator_types", "operandSegmentSizes"}

#: views that keep every dimension: the attributes that list one entry per dimension
_VIEWS = {
    "tensor.extract_slice": ("static_offsets", "static_sizes", "static_strides"),
    "tensor.insert_slice": ("static_offsets", "static_sizes", "static_strides"),
    "tensor.pad": ("static_low", "static_high"),
}

#: the ops that define an init (or a view's destination) rebuilt in any layout at no cost
_FREE_INITS = ("tensor.empty", "linalg.fill", "arith.constant")

Key = tuple  # ("l", member, loop) or ("v", value, dim)


def _id(op: ir.Operation | None) -> ir.Value | None:
    """An op with one result is named by that result (an ir.Operation's hash changes with its
    attributes, a Value's does not)."""
    return op.results[0] if op is not None and len(op.results) == 1 else None


def _static_tensor(value: ir.Value) -> bool:
    t = value.type
    return isinstance(t, ir.RankedTensorType) and ir.RankedTensorType(t).has_static_shape


def _rank(value: ir.Value) -> int:
    return ir.RankedTensorType(value.type).rank


def _size(value: ir.Value) -> int:
    size = 1
    for extent in ir.RankedTensorType(value.type).shape:
        size *= extent
    return size


def _increasing(positions: list[int]) -> bool:
    return all(a < b for a, b in zip(positions, positions[1:]))


def _projected_permutation(amap: ir.AffineMap) -> list[int] | None:
    dims = map_dims(amap)
    return dims if dims and len(set(dims)) == len(dims) else None


def _expr_dims(expr: ir.AffineExpr) -> set[int] | None:
    """The loops a sum of (scaled) loops and constants reads; None for another expression."""
    if isinstance(expr, ir.AffineDimExpr):
        return {expr.position}
    if isinstance(expr, ir.AffineConstantExpr):
        return set()
    if isinstance(expr, ir.AffineAddExpr):
        lhs, rhs = _expr_dims(expr.lhs), _expr_dims(expr.rhs)
        return None if lhs is None or rhs is None else lhs | rhs
    if isinstance(expr, ir.AffineMulExpr) and isinstance(expr.rhs, ir.AffineConstantExpr):
        return _expr_dims(expr.lhs)
    return None


def _window_dims(amap: ir.AffineMap, iterators: list[str]) -> list[int] | None:
    """The parallel loop of each result of a window read (``x[n, 2 * oh + kh, ...]``: each
    result reads one parallel loop and any reduction loops), or None."""
    dims = []
    for expr in amap.results:
        loops = _expr_dims(expr)
        parallel = [d for d in loops or () if iterators[d] == "parallel"]
        if len(parallel) != 1:
            return None
        dims.append(parallel[0])
    return dims if dims and len(set(dims)) == len(dims) else None


def _tied_dims(amap: ir.AffineMap, iterators: list[str]) -> list[int] | None:
    """The loop each dimension of an operand is tied to: a projected permutation's loops, or
    a window read's parallel loops."""
    return _projected_permutation(amap) or _window_dims(amap, iterators)


def _iterators(op: ir.Operation) -> list[str]:
    return ["parallel" if "parallel" in str(a) else "reduction" for a in ir.ArrayAttr(op.attributes["iterator_types"])]


def _reads_init(op: ir.Operation) -> bool:
    return len(list(op.regions[0].blocks[0].arguments[-1].uses)) > 0


def _free(value: ir.Value) -> bool:
    """A value rebuilt in any layout at no cost: an empty, a fill, a splat constant."""
    op = defining_op(value)
    if op is None or op.name not in _FREE_INITS or not _static_tensor(value):
        return False
    if op.name == "arith.constant":
        attr = op.attributes["value"]
        return isinstance(attr, ir.DenseElementsAttr) and ir.DenseElementsAttr(attr).is_splat
    return True


def _generic_candidate(op: ir.Operation) -> bool:
    if op.name != "linalg.generic" or len(op.results) != 1 or len(op.regions[0].blocks) != 1:
        return False
    if any(name not in _PLAIN_ATTRIBUTES for name in op.attributes):
        return False
    if not all(_static_tensor(v) for v in list(op.operands) + list(op.results) if isinstance(v.type, ir.ShapedType)):
        return False
    maps, iterators = indexing_maps(op), _iterators(op)
    out = _projected_permutation(maps[-1])
    parallel = [i for i, kind in enumerate(iterators) if kind == "parallel"]
    if not iterators or out is None or sorted(out) != parallel:
        return False
    full = any(sorted(map_dims(m) or []) == list(range(len(iterators))) for m in maps[:-1])
    window = any(sorted(_window_dims(m, iterators) or []) == parallel for m in maps[:-1])
    return len(parallel) == len(iterators) or full or window


def _view_candidate(op: ir.Operation) -> bool:
    """A slice, an insertion or a pad with static offsets and sizes that keeps every dimension
    (and a pad whose padding value does not depend on the position)."""
    if op.name not in _VIEWS or len(op.results) != 1 or not _static_tensor(op.results[0]):
        return False
    tensors = 2 if op.name == "tensor.insert_slice" else 1
    if len(op.operands) != tensors or not all(_static_tensor(v) for v in op.operands):
        return False
    if any(_rank(v) != _rank(op.results[0]) for v in op.operands):
        return False
    if op.name == "tensor.pad":
        block = op.regions[0].blocks[0]
        return all(not list(arg.uses) for arg in block.arguments)
    return True


class _Classes:
    """Union-find over loops ``("l", member, loop)`` and dimensions ``("v", value, dim)``,
    refusing a union that would tie two loops of one member or two dimensions of one value."""

    def __init__(self) -> None:
        self.parent: dict[Key, Key] = {}
        self.owners: dict[Key, dict[tuple, int]] = {}

    def find(self, key: Key) -> Key:
        if key not in self.parent:
            self.parent[key] = key
            self.owners[key] = {key[:2]: key[2]}
        while self.parent[key] != key:
            key = self.parent[key]
        return key

    def tie(self, pairs: list[tuple[Key, Key]]) -> bool:
        """Unite each pair, all or none (none if a class would hold one owner twice)."""
        local: dict[Key, Key] = {}

        def top(root: Key) -> Key:
            while local.get(root, root) != root:
                root = local[root]
            return root

        for a, b in pairs:
            ra, rb = top(self.find(a)), top(self.find(b))
            if ra != rb:
                local[rb] = ra
        groups: dict[Key, list[Key]] = {}
        for root in {self.find(k) for pair in pairs for k in pair}:
            groups.setdefault(top(root), []).append(root)
        for roots in groups.values():
            merged: dict[tuple, int] = {}
            for root in roots:
                for owner, index in self.owners[root].items():
                    if merged.setdefault(owner, index) != index:
                        return False
        for roots in groups.values():
            roots.sort(key=lambda r: -len(self.owners[r]))
            for root in roots[1:]:
                self.parent[root] = roots[0]
                self.owners[roots[0]].update(self.owners.pop(root))
        return True


@dataclass
class _Member:
    op: ir.Operation
    #: a generic's indexing maps (empty for a view)
    maps: list[ir.AffineMap]
    #: the keys whose classes link the member to others: its loops, or its result's dimensions
    keys: list[Key]
    #: operand index -> whether the operand is a member value (stored in the layout)
    tied: dict[int, bool] = field(default_factory=dict)

    @property
    def is_view(self) -> bool:
        return not self.maps


def _key(value: ir.Value, dim: int) -> Key:
    return ("v", value, dim)


class _Block:
    """The layout assignment of the members of one block."""

    def __init__(self, block: ir.Block) -> None:
        self.ops = [op.operation for op in block.operations]
        self.order = {_id(op): i for i, op in enumerate(self.ops) if _id(op) is not None}
        self.members: dict[ir.Value, _Member] = {}
        self.classes = _Classes()
        for op in self.ops:
            if _generic_candidate(op):
                self._add_generic(op)
            elif _view_candidate(op):
                self._add_view(op)

    def _add_generic(self, op: ir.Operation) -> None:
        maps = indexing_maps(op)
        result = op.results[0]
        loops = [("l", result, d) for d in range(len(_iterators(op)))]
        member = _Member(op, maps, loops)
        iterators = _iterators(op)
        out = map_dims(maps[-1])
        n_inputs = len(op.operands) - 1
        init = op.operands[n_inputs]
        if _reads_init(op) and not _free(init):
            # an init the body reads is stored in the layout too, or the op is no member
            # (it cannot be rebuilt: its values matter)
            if not self.classes.tie([(_key(init, k), loops[d]) for k, d in enumerate(out)]):
                return
            member.tied[n_inputs] = True
        self.classes.tie([(_key(result, k), loops[d]) for k, d in enumerate(out)])
        for index in range(n_inputs):
            value = op.operands[index]
            if not isinstance(value.type, ir.RankedTensorType) or _free(value):
                continue  # a scalar, or an empty / fill / splat: read as it is, or rebuilt
            dims = _tied_dims(maps[index], iterators)
            member.tied[index] = dims is not None and self.classes.tie(
                [(_key(value, k), loops[d]) for k, d in enumerate(dims)])
        self.members[result] = member

    def _add_view(self, op: ir.Operation) -> None:
        result = op.results[0]
        tied = [i for i, v in enumerate(op.operands) if not (i == 1 and _free(v))]
        pairs = [(_key(op.operands[i], k), _key(result, k)) for i in tied for k in range(_rank(result))]
        if self.classes.tie(pairs):
            keys = [_key(result, k) for k in range(_rank(result))]
            self.members[result] = _Member(op, [], keys, {i: True for i in tied})

    # ----------------------------------------------------------------- groups

    def groups(self) -> list[list[ir.Value]]:
        """The members (by result) in groups: members sharing a class."""
        parent: dict[ir.Value, ir.Value] = {name: name for name in self.members}

        def top(name: ir.Value) -> ir.Value:
            while parent[name] != name:
                name = parent[name]
            return name

        first: dict[Key, ir.Value] = {}
        for name, member in self.members.items():
            for key in member.keys:
                a, b = top(first.setdefault(self.classes.find(key), name)), top(name)
                if a != b:
                    parent[b] = a
        groups: dict[ir.Value, list[ir.Value]] = {}
        for name in self.members:
            groups.setdefault(top(name), []).append(name)
        return list(groups.values())

    def _dims(self, value: ir.Value) -> list[Key]:
        return [self.classes.find(_key(value, k)) for k in range(_rank(value))]

    def values_of(self, group: list[ir.Value]) -> dict[ir.Value, list[Key]]:
        """The group's member values, each with its dimensions' classes in order."""
        values: dict[ir.Value, list[Key]] = {}
        for name in group:
            member = self.members[name]
            for index, tied in member.tied.items():
                if tied:
                    values[member.op.operands[index]] = self._dims(member.op.operands[index])
            values[name] = self._dims(name)
        return values

    def _tied_use(self, use: ir.OpOperand, inside: set) -> bool:
        name = _id(use_owner(use))
        return name in inside and self.members[name].tied.get(use.operand_number, False)

    def _replaced_use(self, use: ir.OpOperand, inside: set) -> bool:
        """An init that a member does not read (or a view's free destination): replaced."""
        user = use_owner(use)
        name = _id(user)
        if name not in inside or self.members[name].tied.get(use.operand_number, False):
            return False
        member = self.members[name]
        last = len(user.operands) - 1
        return use.operand_number == last and (member.is_view or not _reads_init(user))

    def edges(self, group: list[ir.Value], values: dict[ir.Value, list[Key]]) -> list[tuple[ir.Value, int]]:
        """``(value, conversions)``: member values defined outside the group and used by a
        member, or defined by a member and used outside; a layout that disagrees with their
        order of dimensions needs that many transposes (1 or 2)."""
        inside = set(group)
        edges = []
        for value in values:
            defined_inside = _id(defining_op(value)) in inside
            member_uses = outside_uses = 0
            for use in value.uses:
                if self._tied_use(use, inside):
                    member_uses += 1
                elif not self._replaced_use(use, inside):
                    outside_uses += 1
            count = (not defined_inside and member_uses > 0) + (defined_inside and outside_uses > 0)
            if count:
                edges.append((value, count))
        return edges

    # ----------------------------------------------------------------- layout

    @staticmethod
    def layout(values: dict[ir.Value, list[Key]], edges: list[tuple[ir.Value, int]]) -> list[Key]:
        """An order of the classes, outermost first, that agrees with the orders of as many of
        the largest edge values as it can."""
        after: dict[Key, set[Key]] = {}

        def reaches(a: Key, b: Key) -> bool:
            seen, stack = set(), [a]
            while stack:
                c = stack.pop()
                if c == b:
                    return True
                if c not in seen:
                    seen.add(c)
                    stack.extend(after.get(c, ()))
            return False

        ranked = sorted(edges, key=lambda e: -_size(e[0]) * e[1])
        for value, _ in ranked:
            added = []
            for a, b in zip(values[value], values[value][1:]):
                if reaches(b, a):
                    for x, y in added:
                        after[x].discard(y)
                    break
                if b not in after.setdefault(a, set()):
                    after[a].add(b)
                    added.append((a, b))
        # ties are broken by the order of the largest values, outermost first
        priority: dict[Key, tuple[int, int]] = {}
        for rank, value in enumerate([v for v, _ in ranked] + sorted(values, key=lambda v: -_size(v))):
            for position, cls in enumerate(values[value]):
                priority.setdefault(cls, (rank, position))
        indegree = {cls: 0 for cls in priority}
        for bs in after.values():
            for b in bs:
                indegree[b] += 1
        order, ready = [], [c for c, d in indegree.items() if d == 0]
        while ready:
            ready.sort(key=priority.__getitem__)
            cls = ready.pop(0)
            order.append(cls)
            for b in after.get(cls, ()):
                indegree[b] -= 1
                if indegree[b] == 0:
                    ready.append(b)
        return order

    def current_cost(self, group: list[ir.Value]) -> int:
        """Elements the group's generics read or write through a transposing map now."""
        cost = 0
        for name in group:
            member = self.members[name]
            if member.is_view:
                continue
            for index, tied in member.tied.items():
                if tied and not _increasing(_tied_dims(member.maps[index], _iterators(member.op))):
                    cost += _size(member.op.operands[index])
            if not _increasing(map_dims(member.maps[-1])):
                cost += _size(name)
        return cost

    # ----------------------------------------------------------------- rewrite

    def rewrite(self, group: list[ir.Value], values: dict[ir.Value, list[Key]],
                edges: list[tuple[ir.Value, int]], order: list[Key]) -> None:
        """Store the group's values in the layout ``order``, with transposes at its edges."""
        position = {cls: i for i, cls in enumerate(order)}
        physical = {v: sorted(range(len(dims)), key=lambda k: position[dims[k]]) for v, dims in values.items()}
        inside = set(group)
        outside = {value: [(use_owner(u), u.operand_number) for u in value.uses
                            if not self._tied_use(u, inside) and not self._replaced_use(u, inside)]
                   for value, _ in edges}
        members = [self.members[name] for name in group]
        for member in members:
            if member.is_view:
                self._rewrite_view(member, physical)
            else:
                self._rewrite_generic(member, position, physical)
        for value, _ in edges:
            perm = physical[value]
            if perm == sorted(perm):
                continue
            if _id(defining_op(value)) in inside:
                _convert_out(value, perm, outside[value])
            else:
                self._convert_in(value, perm, inside)
        for member in members:
            _drop_if_copy(member.op)

    def _convert_in(self, value: ir.Value, perm: list[int], inside: set) -> None:
        """``value``, defined outside the group, transposed into the layout for its member uses."""
        uses = [(use_owner(u), u.operand_number) for u in value.uses if self._tied_use(u, inside)]
        first = min((user for user, _ in uses), key=lambda user: self.order[_id(user)])
        with ir.InsertionPoint(first), first.location:
            converted = _transposed(value, perm)
        for user, index in uses:
            user.operands[index] = converted

    def _rewrite_generic(self, member: _Member, position: dict[Key, int], physical: dict) -> None:
        """Iterate the member's loops in the layout's order and store its member values in it."""
        op = member.op
        iterators = _iterators(op)
        rank = len(iterators)
        # loops of no class in the layout (their operand was left a plain read) go innermost
        loops = sorted(range(rank), key=lambda d: (position.get(self.classes.find(member.keys[d]), len(position)), d))
        new = {old: i for i, old in enumerate(loops)}
        rename = ir.AffineMap.get(rank, 0, [ir.AffineDimExpr.get(new[d]) for d in range(rank)])
        last = len(member.maps) - 1
        maps = []
        for index, amap in enumerate(member.maps):
            results = [expr.compose(rename) for expr in amap.results]
            if index == last:
                results = [results[k] for k in physical[op.results[0]]]
            elif member.tied.get(index, False):
                results = [results[k] for k in physical[op.operands[index]]]
            maps.append(ir.AffineMap.get(rank, 0, results))
        op.attributes["indexing_maps"] = affine_maps(*maps)
        op.attributes["iterator_types"] = iterator_types([iterators[d] for d in loops])
        for body_op in op.regions[0].blocks[0].operations:
            if body_op.operation.name == "linalg.index":
                dim = ir.IntegerAttr(body_op.attributes["dim"]).value
                body_op.attributes["dim"] = ir.IntegerAttr.get(ir.IntegerType.get_signless(64), new[dim])
        shape = _store_physical(op.results[0], physical[op.results[0]])
        if not member.tied.get(last, False):
            _rebuild(op, last, shape)

    @staticmethod
    def _rewrite_view(member: _Member, physical: dict) -> None:
        """Permute the view's per-dimension attributes; a free destination is rebuilt."""
        op = member.op
        perm = physical[op.results[0]]
        for name in _VIEWS[op.name]:
            entries = list(ir.DenseI64ArrayAttr(op.attributes[name]))
            op.attributes[name] = ir.DenseI64ArrayAttr.get([entries[k] for k in perm])
        shape = _store_physical(op.results[0], perm)
        if op.name == "tensor.insert_slice" and not member.tied.get(1, False):
            _rebuild(op, 1, shape)


def _store_physical(value: ir.Value, perm: list[int]) -> list[int]:
    """Give ``value`` its physical type (dimension k is logical dimension ``perm[k]``)."""
    logical = ir.RankedTensorType(value.type)
    shape = [logical.shape[k] for k in perm]
    value.set_type(ir.RankedTensorType.get(shape, logical.element_type))
    return shape


def _rebuild(op: ir.Operation, index: int, shape: list[int]) -> None:
    """Operand ``index`` (an init not read, or free) rebuilt with ``shape``."""
    old = op.operands[index]
    element = ir.RankedTensorType(old.type).element_type
    owner = defining_op(old)
    with ir.InsertionPoint(op), op.location:
        if owner is not None and owner.name == "linalg.fill":
            new = linalg.fill(owner.operands[0], outs=[tensor.EmptyOp(shape, element).result])
        elif owner is not None and owner.name == "arith.constant" and _free(old):
            splat = ir.DenseElementsAttr(owner.attributes["value"]).get_splat_value()
            new_type = ir.RankedTensorType.get(shape, element)
            new = arith.constant(new_type, ir.DenseElementsAttr.get_splat(new_type, splat))
        else:
            new = tensor.EmptyOp(shape, element).result
    op.operands[index] = new
    _erase_if_dead(old)


def _erase_if_dead(value: ir.Value) -> None:
    """Erase the empty, fill or constant defining ``value`` once nothing uses it (a fill's
    empty too)."""
    owner = defining_op(value)
    while owner is not None and owner.name in _FREE_INITS and not list(owner.results[0].uses):
        inputs = list(owner.operands)
        owner.erase()
        owner = defining_op(inputs[-1]) if inputs and isinstance(inputs[-1].type, ir.RankedTensorType) else None


def _convert_out(value: ir.Value, perm: list[int], uses: list[tuple[ir.Operation, int]]) -> None:
    """``value``, stored in the layout, transposed back for its ``uses`` outside the group."""
    owner = defining_op(value)
    with ir.InsertionPoint.after(owner), owner.location:
        converted = _transposed(value, [perm.index(k) for k in range(len(perm))])
    for user, index in uses:
        user.operands[index] = converted


def _drop_if_copy(op: ir.Operation) -> None:
    """A transpose whose input and output now share a layout: its input replaces it."""
    if op.name != "linalg.generic" or len(op.operands) != 2:
        return
    maps = indexing_maps(op)
    block = op.regions[0].blocks[0]
    body = list(block.operations)
    if len(body) != 1 or body[0].operands[0] != block.arguments[0] or str(maps[0]) != str(maps[1]):
        return
    if not _increasing(map_dims(maps[0]) or [1, 0]) or op.operands[0].type != op.results[0].type:
        return
    op.results[0].replace_all_uses_with(op.operands[0])
    init = op.operands[1]
    op.erase()
    _erase_if_dead(init)


def _transposed(value: ir.Value, perm: list[int]) -> ir.Value:
    """``value`` transposed by ``perm`` (result dimension k is dimension ``perm[k]``), a copy generic."""
    t = ir.RankedTensorType(value.type)
    empty = tensor.EmptyOp([t.shape[k] for k in perm], t.element_type).result
    read = ir.AffineMap.get(t.rank, 0, [ir.AffineDimExpr.get(perm.index(k)) for k in range(t.rank)])
    return build_generic([value], empty, affine_maps(read, ir.AffineMap.get_identity(t.rank)),
                         ["parallel"] * t.rank, lambda x, _: x)


def _assign_in_regions(operation: ir.Operation, rewritten: list) -> None:
    """Assign layouts in each block of ``operation``'s regions, then in the blocks nested in
    the ops that remain (a rewrite erases ops: blocks are visited after, not listed before).
    The bodies of linalg and tensor ops hold no members."""
    for region in operation.regions:
        for block in region.blocks:
            _assign_in_block(block, rewritten)
            for op in block.operations:
                op = op.operation
                if op.regions and not op.name.startswith(("linalg.", "tensor.")):
                    _assign_in_regions(op, rewritten)


@dataclass(frozen=True)
class GroupLayout:
    """One group given a layout: its function, member count, and the elements it moved through
    transposes or transposing reads before and after."""

    function: str
    members: int
    before: int
    after: int


def _function_name(block: ir.Block) -> str:
    op = block.owner
    while op is not None and op.operation.name != "func.func":
        op = op.operation.parent
    return ir.StringAttr(op.operation.attributes["sym_name"]).value if op is not None else "?"


def _assign_in_block(block: ir.Block, rewritten: list[GroupLayout]) -> None:
    state = _Block(block)
    for group in state.groups():
        values = state.values_of(group)
        edges = state.edges(group, values)
        order = state.layout(values, edges)
        position = {cls: i for i, cls in enumerate(order)}
        after = sum(count * _size(value) for value, count in edges
                    if not _increasing([position[c] for c in values[value]]))
        before = state.current_cost(group)
        if after < before:
            state.rewrite(group, values, edges, order)
            rewritten.append(GroupLayout(_function_name(block), len(group), before, after))


def assign_layouts(module: ir.Module | ir.Operation) -> list[GroupLayout]:
    """Assign layouts in every block of ``module``; the groups rewritten."""
    operation = module.operation
    rewritten: list[GroupLayout] = []
    with operation.context, ir.Location.unknown():
        _assign_in_regions(operation, rewritten)
    return rewritten
