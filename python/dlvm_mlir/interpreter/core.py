"""The interpreter's machinery: values, types, compiled functions, the executor.

Execution model
---------------
A function is compiled once (per :class:`Interpreter`) into plain Python
records: every SSA value of the function gets an integer *slot*; every op
becomes a :class:`Node` holding its handler (looked up by op name in
:data:`OPS` / :data:`TERMINATORS`), its operand and result slots, one
*coercer* per result (which converts what the handler returned into the
result type's storage, see below) and its compiled regions. A call runs the
entry block of the body in a fresh :class:`Frame` (a list indexed by slot);
nested regions (``scf.for`` bodies, ...) run in the frame of the enclosing
function call.

Value representation
--------------------
- ``tensor<...xT>``: a numpy array of T's storage dtype and the runtime shape
  (rank-0 tensors are 0-d arrays). Arrays are immutable once produced:
  handlers never write into their operands.
- scalar ``iN``/``index``/``fN``: a numpy scalar of the storage dtype.
- ``memref<...xT>``: a numpy array that *is* the buffer (mutated in place by
  ``memref.store``/``memref.copy``; subviews are numpy views).
- storage dtypes: ``i1`` -> bool, ``i8/16/32/64`` -> ``intN``, other widths up
  to 64 -> int64 wrapped to N bits (two's complement), ``index`` -> int64,
  ``f16`` -> float16, ``f32`` -> float32, ``f64`` -> float64, ``bf16`` ->
  float32 rounded to bf16 after every op (round to nearest even). With
  ``dtype=np.float64`` every float type is stored (and computed) as float64.
- Integers are signless; ops that read them as signed (DLVM ``cmp``, ``div``,
  ``cast``, ``arith.*si``) treat ``i1`` true as -1, as LLVM does.
"""

from __future__ import annotations

import math
import re
import sys
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from mlir import ir

from ..errors import DLVMError

__all__ = [
    "OPS",
    "TERMINATORS",
    "ElementInfo",
    "Frame",
    "Interpreter",
    "InterpreterError",
    "Node",
    "op",
    "terminator",
]


class InterpreterError(DLVMError):
    """An op cannot be executed: unsupported op, bad input, undefined behavior caught.

    ``op_name`` and ``location`` (``str(op.location)``) name the op when the
    error comes from one.
    """

    def __init__(self, message: str, op_name: str | None = None, location: str | None = None):
        self.message = message
        self.op_name = op_name
        self.location = location
        if op_name is not None:
            where = f" at {location}" if location else ""
            text = f"'{op_name}'{where}: {message}"
        else:
            text = message
        super().__init__(text)


# --------------------------------------------------------------------------
# Op registry
# --------------------------------------------------------------------------

Handler = Callable[["Frame", "Node", list], Any]

OPS: dict[str, tuple[Handler, bool]] = {}
"""Op name -> (handler, returns_sequence). A handler gets (frame, node, operand
values) and returns the result (one value), or a sequence of results when
registered with ``seq=True``."""

TERMINATORS: dict[str, Handler] = {}
"""Op name -> handler returning ``(next_block, values)``; ``next_block`` is
None to leave the region with ``values`` (func.return, scf.yield, ...)."""


def op(*names: str, seq: bool = False) -> Callable[[Handler], Handler]:
    """Registers a handler for the ops ``names``."""

    def register(fn: Handler) -> Handler:
        for name in names:
            OPS[name] = (fn, seq)
        return fn

    return register


def terminator(*names: str) -> Callable[[Handler], Handler]:
    def register(fn: Handler) -> Handler:
        for name in names:
            TERMINATORS[name] = fn
        return fn

    return register


# --------------------------------------------------------------------------
# Element types and storage
# --------------------------------------------------------------------------


class ElementInfo:
    """An MLIR element type and how the interpreter stores it."""

    __slots__ = ("kind", "width", "dtype", "name", "bf16", "wrap", "mlir_type")

    def __init__(self, kind: str, width: int, dtype: np.dtype, name: str, bf16: bool, wrap: bool, mlir_type):
        self.kind = kind  # "f" float, "i" integer (signless, or unsigned: dtype uint*), "index"
        self.width = width
        self.dtype = np.dtype(dtype)
        self.name = name
        self.bf16 = bf16  # stored as float32, rounded to bf16 after each op
        self.wrap = wrap  # stored as int64, wrapped to `width` bits after each op
        self.mlir_type = mlir_type

    @property
    def is_float(self) -> bool:
        return self.kind == "f"

    @property
    def is_bool(self) -> bool:
        return self.kind == "i" and self.width == 1

    def __repr__(self) -> str:
        return f"ElementInfo({self.name}, {self.dtype})"


_FLOAT_TYPES = (
    (ir.F16Type, "f16", 16, np.float16),
    (ir.BF16Type, "bf16", 16, np.float32),
    (ir.F32Type, "f32", 32, np.float32),
    (ir.F64Type, "f64", 64, np.float64),
)
_INT_DTYPES = {1: np.bool_, 8: np.int8, 16: np.int16, 32: np.int32, 64: np.int64}
_UINT_DTYPES = {8: np.uint8, 16: np.uint16, 32: np.uint32, 64: np.uint64}


def element_info(t: ir.Type, f64: bool) -> ElementInfo:
    """Storage of the element type ``t`` (a scalar type)."""
    for cls, name, width, dtype in _FLOAT_TYPES:
        if isinstance(t, cls):
            if f64:
                return ElementInfo("f", width, np.float64, name, False, False, t)
            return ElementInfo("f", width, dtype, name, name == "bf16", False, t)
    if isinstance(t, ir.IndexType):
        return ElementInfo("index", 64, np.int64, "index", False, False, t)
    if isinstance(t, ir.IntegerType):
        w = t.width
        if w > 64:
            raise InterpreterError(f"integer type {t} wider than 64 bits is not supported")
        if t.is_unsigned and w in _UINT_DTYPES:  # numpy's unsigned dtypes have dlvm's semantics
            return ElementInfo("i", w, _UINT_DTYPES[w], f"ui{w}", False, False, t)
        if not t.is_signless:
            raise InterpreterError(f"integer type {t} is not supported (dlvm has signless integers and ui8/ui16/ui32/ui64)")
        dtype = _INT_DTYPES.get(w, np.int64)
        return ElementInfo("i", w, dtype, f"i{w}", False, w not in _INT_DTYPES, t)
    raise InterpreterError(f"element type {t} is not supported")


def round_bf16(a: np.ndarray) -> np.ndarray:
    """Rounds float32 values to the nearest bf16 (ties to even), kept as float32."""
    a = np.asarray(a, dtype=np.float32)
    bits = a.view(np.uint32).astype(np.uint64)
    rounded = ((bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000).astype(np.uint32)
    out = rounded.view(np.float32)
    return np.where(np.isnan(a), a, out)


def round_bf16_from_f64(a) -> np.ndarray:
    """Rounds float64 values to the nearest bf16 (ties to even) in one step, kept as float32.

    Goes through float32 with round-to-odd, which makes the second rounding exact.
    """
    a = np.asarray(a, dtype=np.float64)
    t = a.astype(np.float32)
    over = np.abs(t.astype(np.float64)) > np.abs(a)
    t = np.where(over & np.isfinite(a), np.nextafter(t, np.float32(0)), t)
    inexact = (t.astype(np.float64) != a) & np.isfinite(a)
    bits = t.view(np.uint32) | inexact.astype(np.uint32)
    return round_bf16(bits.view(np.float32))


def wrap_int(a, width: int):
    """Wraps int64 values to ``width``-bit two's complement (sign-extended)."""
    half = np.int64(1 << (width - 1))
    mask = np.int64((1 << width) - 1)
    a = np.asarray(a, dtype=np.int64)
    return ((a + half) & mask) - half


def signed(x):
    """The signed integer reading of ``x``: i1 true becomes -1 (int8)."""
    if x.dtype == np.bool_:
        return -(np.asarray(x).astype(np.int8))
    return x


def from_signed_bool(r):
    """Truncates integers to i1 (the low bit)."""
    return (np.asarray(r) & 1).astype(np.bool_)


def unsigned(x, elem: ElementInfo):
    """The unsigned reading of integer ``x`` (same numeric values, unsigned dtype)."""
    if x.dtype == np.bool_:
        return np.asarray(x).astype(np.uint8)
    if elem.wrap:
        return np.asarray(x, dtype=np.int64) & np.int64((1 << elem.width) - 1)
    return np.asarray(x).astype(_UINT_DTYPES[elem.width])


def int_semantics(fn: Callable) -> Callable:
    """Wraps an integer kernel so i1 operands compute as 1-bit signed integers."""

    def wrapped(*xs):
        if any(getattr(x, "dtype", None) == np.bool_ for x in xs):
            return from_signed_bool(fn(*(signed(x) if getattr(x, "dtype", None) == np.bool_ else x for x in xs)))
        return fn(*xs)

    return wrapped


# --------------------------------------------------------------------------
# Types -> coercers
# --------------------------------------------------------------------------


class TypeInfo:
    """A value type: 'tensor', 'memref', 'scalar', 'func' or 'other'."""

    __slots__ = ("kind", "elem", "shape", "mlir_type")

    def __init__(self, kind: str, elem: ElementInfo | None, shape: tuple | None, mlir_type):
        self.kind = kind
        self.elem = elem
        self.shape = shape  # static dims, -1 for dynamic (tensors/memrefs)
        self.mlir_type = mlir_type


_DYN = ir.ShapedType.get_dynamic_size()


def type_info(t: ir.Type, f64: bool) -> TypeInfo:
    if isinstance(t, ir.RankedTensorType):
        shape = tuple(-1 if d == _DYN else d for d in t.shape)
        return TypeInfo("tensor", element_info(t.element_type, f64), shape, t)
    if isinstance(t, ir.MemRefType):
        shape = tuple(-1 if d == _DYN else d for d in t.shape)
        return TypeInfo("memref", element_info(t.element_type, f64), shape, t)
    if isinstance(t, (ir.IntegerType, ir.IndexType, ir.FloatType)):
        return TypeInfo("scalar", element_info(t, f64), None, t)
    if isinstance(t, ir.FunctionType):
        return TypeInfo("func", None, None, t)
    return TypeInfo("other", None, None, t)


def _shape_ok(actual: tuple, expected: tuple) -> bool:
    if len(actual) != len(expected):
        return False
    return all(e < 0 or a == e for a, e in zip(actual, expected))


def make_coercer(info: TypeInfo) -> Callable[[Any], Any]:
    """A function converting a handler's output into ``info``'s storage (with checks)."""
    if info.kind == "tensor":
        elem, shape = info.elem, info.shape
        dt = elem.dtype
        static = all(d >= 0 for d in shape)

        def coerce_tensor(v):
            a = v if type(v) is np.ndarray else np.asarray(v)
            if a.dtype != dt:
                a = a.astype(dt)
            if elem.wrap:
                a = wrap_int(a, elem.width)
            elif elem.bf16:
                a = round_bf16(a)
            if a.shape != shape and (static or not _shape_ok(a.shape, shape)):
                raise InterpreterError(f"value of shape {a.shape} does not fit {info.mlir_type}")
            return a

        return coerce_tensor
    if info.kind == "scalar":
        elem = info.elem
        dt = elem.dtype
        st = dt.type

        def coerce_scalar(v):
            if type(v) is st and not elem.bf16 and not elem.wrap:
                return v
            a = np.asarray(v)
            if a.ndim != 0:
                raise InterpreterError(f"expected a scalar {info.mlir_type}, got an array of shape {a.shape}")
            if a.dtype != dt:
                a = a.astype(dt)
            if elem.wrap:
                a = wrap_int(a, elem.width)
            elif elem.bf16:
                a = round_bf16(a)
            return a[()]

        return coerce_scalar
    if info.kind == "memref":
        shape = info.shape

        def coerce_memref(v):
            if not isinstance(v, np.ndarray) or v.dtype != info.elem.dtype:
                raise InterpreterError(f"expected a buffer of {info.mlir_type}")
            if not _shape_ok(v.shape, shape):
                raise InterpreterError(f"buffer of shape {v.shape} does not fit {info.mlir_type}")
            return v

        return coerce_memref
    return _identity


def _identity(v):
    return v


# --------------------------------------------------------------------------
# Attributes
# --------------------------------------------------------------------------

_ARRAY_ATTRS = tuple(
    getattr(ir, n)
    for n in ("DenseI64ArrayAttr", "DenseI32ArrayAttr", "DenseI16ArrayAttr", "DenseI8ArrayAttr",
              "DenseBoolArrayAttr", "DenseF32ArrayAttr", "DenseF64ArrayAttr")
    if hasattr(ir, n)
)


def convert_attr(a: ir.Attribute, f64: bool = False) -> Any:
    """A plain Python/numpy value for an attribute (unknown kinds are returned as is)."""
    if isinstance(a, _ARRAY_ATTRS):
        return tuple(a)
    if isinstance(a, ir.BoolAttr):
        return bool(a.value)
    if isinstance(a, ir.IntegerAttr):
        return int(a.value)
    if isinstance(a, ir.FloatAttr):
        return float(a.value)
    if isinstance(a, ir.FlatSymbolRefAttr):
        return a.value
    if isinstance(a, ir.StringAttr):
        return a.value
    if isinstance(a, ir.TypeAttr):
        return a.value
    if isinstance(a, ir.UnitAttr):
        return True
    if isinstance(a, ir.DenseElementsAttr):
        return dense_to_numpy(a, f64)
    if isinstance(a, ir.ArrayAttr):
        return [convert_attr(x, f64) for x in a]
    return a


_TOKEN = re.compile(r"0x[0-9a-fA-F]+|[-+]?(?:inf|nan|\d+\.?\d*(?:[eE][-+]?\d+)?)|true|false")


def _float_from_bits(bits: np.ndarray, name: str) -> np.ndarray:
    if name == "bf16":
        return (bits.astype(np.uint32) << 16).view(np.float32)
    dt = {"f16": (np.uint16, np.float16), "f32": (np.uint32, np.float32), "f64": (np.uint64, np.float64)}[name]
    return bits.astype(dt[0]).view(dt[1])


def dense_to_numpy(attr: ir.DenseElementsAttr, f64: bool = False) -> np.ndarray:
    """The elements of a dense elements attribute as a (read-only) array of storage dtype."""
    stype = attr.type
    shape = tuple(stype.shape)
    elem = element_info(stype.element_type, f64)
    try:
        if attr.is_splat:
            value = attr.get_splat_value().value
            out = np.full(shape, value, dtype=np.float64 if elem.is_float else object)
            out = _to_storage(out, elem)
        else:
            out = _to_storage(np.array(attr).reshape(shape), elem)
    except (TypeError, ValueError, OverflowError):
        out = _to_storage(_parse_dense_text(str(attr), elem, shape), elem)
    out.flags.writeable = False
    return out


def _to_storage(a: np.ndarray, elem: ElementInfo) -> np.ndarray:
    if elem.is_float:
        a = a.astype(np.float64) if a.dtype == object else a
        a = a.astype(elem.dtype)
        return round_bf16(a) if elem.bf16 else a
    if elem.is_bool:
        return a.astype(np.bool_)
    if a.dtype == object:  # Python ints, possibly unsigned readings of wide values
        a = np.array([int(v) & ((1 << 64) - 1) for v in a.reshape(-1)], dtype=np.uint64).reshape(a.shape)
        a = a.view(np.int64)
    a = a.astype(np.int64) if elem.wrap else a.astype(elem.dtype)
    return wrap_int(a, elem.width) if elem.wrap else a


def _parse_dense_text(text: str, elem: ElementInfo, shape: tuple) -> np.ndarray:
    """Fallback for element types numpy conversion does not handle (bf16, odd int widths)."""
    body = text[text.index("<") + 1 : text.rindex(">", 0, text.rindex(" : "))].strip()
    count = math.prod(shape)
    if body.startswith('"0x'):
        raw = bytes.fromhex(body[3:-1])
        nbytes = max(1, (elem.width + 7) // 8)
        udt = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[nbytes]
        bits = np.frombuffer(raw, dtype=np.dtype(udt).newbyteorder("<")).astype(udt)
        if bits.size == 1:
            bits = np.full(count, bits[0], dtype=udt)
        if elem.is_float:
            return _float_from_bits(bits, elem.name).reshape(shape)
        return wrap_int(bits.astype(np.int64), elem.width).reshape(shape)
    tokens = _TOKEN.findall(body)
    if elem.is_float:
        vals = []
        for tok in tokens:
            if tok.startswith("0x"):
                vals.append(float(_float_from_bits(np.array([int(tok, 16)]), elem.name)[0]))
            else:
                vals.append(float(tok))
        arr = np.array(vals, dtype=np.float64)
    else:
        arr = np.array([1 if t == "true" else 0 if t == "false" else int(t, 0) for t in tokens], dtype=object)
    if arr.size == 1 and count != 1:
        arr = np.full(count, arr[0], dtype=arr.dtype)
    return arr.reshape(shape)


# --------------------------------------------------------------------------
# Compiled IR
# --------------------------------------------------------------------------

_MISSING = object()


#: results with more elements than this are not materialized by the interpreter
MAX_ELEMENTS = 1 << 32


def _too_large(info: TypeInfo) -> bool:
    """More than MAX_ELEMENTS elements, or (even empty) dims numpy cannot index: the product
    of the non-zero dims times 8 bytes beyond a 64-bit size (seed 1616: 2^62 x 0)."""
    if info.shape is None or any(d < 0 for d in info.shape):
        return False
    spread = math.prod(d for d in info.shape if d) * 8
    return math.prod(info.shape) > MAX_ELEMENTS or spread >= 1 << 63


def _too_large_result(frame: Any, node: Node, args: list) -> Any:
    shapes = [list(t.shape) for t in node.out_info if _too_large(t)]
    raise node.error(f"a result of shape {shapes[0]} is too large for the interpreter (limit {MAX_ELEMENTS} elements)")


class Node:
    """One compiled op."""

    __slots__ = ("op", "name", "fn", "store", "ins", "outs", "coerce", "regions", "succ",
                 "cache", "interp", "out_info")

    def __init__(self, op: ir.Operation, interp: Interpreter):
        self.op = op
        self.name = op.name
        self.interp = interp
        self.cache: dict[str, Any] = {}
        self.regions: list[Region] = []
        self.succ: list[Block] = []

    # -- attributes ----------------------------------------------------------
    def attr(self, name: str, default: Any = None) -> Any:
        """Attribute ``name`` converted to Python (cached); ``default`` when absent."""
        key = "@" + name
        value = self.cache.get(key, _MISSING)
        if value is _MISSING:
            attrs = self.op.attributes
            value = convert_attr(attrs[name], self.interp.f64) if name in attrs else _MISSING
            self.cache[key] = value
        return default if value is _MISSING else value

    def has_attr(self, name: str) -> bool:
        return name in self.op.attributes

    def raw_attr(self, name: str) -> ir.Attribute | None:
        attrs = self.op.attributes
        return attrs[name] if name in attrs else None

    def cached(self, key: str, make: Callable[[], Any]) -> Any:
        """A per-op memo (e.g. a converted constant)."""
        value = self.cache.get(key, _MISSING)
        if value is _MISSING:
            value = self.cache[key] = make()
        return value

    # -- types ---------------------------------------------------------------
    def result_info(self, i: int = 0) -> TypeInfo:
        return self.out_info[i]

    def result_elem(self, i: int = 0) -> ElementInfo:
        return self.out_info[i].elem

    def result_shape(self, i: int = 0) -> tuple:
        return self.out_info[i].shape

    def operand_info(self, i: int) -> TypeInfo:
        def make():
            return [self.interp.type_info(v.type) for v in self.op.operands]

        return self.cached("#operand_info", make)[i]

    def operand_elem(self, i: int) -> ElementInfo:
        return self.operand_info(i).elem

    def segments(self) -> tuple[int, ...]:
        """``operandSegmentSizes``."""
        return self.attr("operandSegmentSizes")

    def split_operands(self, args: list) -> list[list]:
        """The operands grouped by ``operandSegmentSizes``."""
        out, i = [], 0
        for n in self.segments():
            out.append(args[i : i + n])
            i += n
        return out

    def error(self, message: str) -> InterpreterError:
        return InterpreterError(message, self.name, str(self.op.location))


class Block:
    __slots__ = ("args", "arg_coerce", "body", "term")

    def __init__(self):
        self.args: list[int] = []
        self.arg_coerce: list[Callable] = []
        self.body: list[Node] = []
        self.term: Node | None = None


class Region:
    __slots__ = ("blocks", "entry")

    def __init__(self, blocks: list[Block]):
        self.blocks = blocks
        self.entry = blocks[0] if blocks else None


class Function:
    __slots__ = ("name", "op", "region", "nslots", "arg_info", "result_info")

    def __init__(self, name, op, region, nslots, arg_info, result_info):
        self.name = name
        self.op = op
        self.region = region
        self.nslots = nslots
        self.arg_info = arg_info
        self.result_info = result_info


def _unsupported(frame: Frame, node: Node, args: list):
    raise node.error(f"unsupported operation '{node.name}' (the interpreter has no implementation for it)")


class _Compiler:
    def __init__(self, interp: Interpreter):
        self.interp = interp
        self.slots: dict[ir.Value, int] = {}
        self.blocks: dict[ir.Block, Block] = {}

    def slot(self, value: ir.Value) -> int:
        s = self.slots.get(value)
        if s is None:
            s = self.slots[value] = len(self.slots)
        return s

    def region(self, region: ir.Region) -> Region:
        mlir_blocks = list(region.blocks)
        blocks = []
        for b in mlir_blocks:
            blk = Block()
            self.blocks[b] = blk
            blocks.append(blk)
        for b, blk in zip(mlir_blocks, blocks):
            self.block(b, blk)
        return Region(blocks)

    def block(self, b: ir.Block, blk: Block) -> None:
        interp = self.interp
        for a in b.arguments:
            blk.args.append(self.slot(a))
            blk.arg_coerce.append(make_coercer(interp.type_info(a.type)))
        ops = list(b.operations)
        for i, o in enumerate(ops):
            o = o.operation
            node = Node(o, interp)
            name = o.name
            is_last = i == len(ops) - 1
            if is_last and name in TERMINATORS:
                node.fn, seq = TERMINATORS[name], True
            else:
                node.fn, seq = OPS.get(name, (_unsupported, False))
            node.ins = [self.slot(v) for v in o.operands]
            node.outs = [self.slot(r) for r in o.results]
            node.out_info = [interp.type_info(r.type) for r in o.results]
            if any(_too_large(t) for t in node.out_info):
                node.fn = _too_large_result
            node.coerce = [make_coercer(t) for t in node.out_info]
            node.store = 0 if not node.outs else (2 if seq or len(node.outs) > 1 else 1)
            node.regions = [self.region(r) for r in o.regions]
            succ = getattr(o, "successors", None)
            if succ is not None and len(succ):
                node.succ = [self._block_for(s) for s in succ]
            if is_last and name in TERMINATORS:
                blk.term = node
            else:
                blk.body.append(node)

    def _block_for(self, b: ir.Block) -> Block:
        blk = self.blocks.get(b)
        if blk is None:
            raise InterpreterError("branch to a block outside the region")
        return blk


# --------------------------------------------------------------------------
# Execution
# --------------------------------------------------------------------------


class FunctionRef:
    """The value of ``func.constant @f``."""

    __slots__ = ("name",)

    def __init__(self, name: str):
        self.name = name

    def __repr__(self) -> str:
        return f"FunctionRef(@{self.name})"


class Frame:
    """The values of one function call."""

    __slots__ = ("interp", "env")

    def __init__(self, interp: Interpreter, nslots: int):
        self.interp = interp
        self.env: list[Any] = [None] * nslots

    def run(self, region: Region, args: Sequence[Any]) -> list:
        """Runs ``region`` from its entry block; returns the values it exits with."""
        env = self.env
        block = region.entry
        if block is None:
            return []
        node = None
        try:
            while True:
                if len(args) != len(block.args):
                    raise InterpreterError(f"block expects {len(block.args)} argument(s), got {len(args)}")
                for s, c, v in zip(block.args, block.arg_coerce, args):
                    env[s] = c(v)
                for node in block.body:
                    res = node.fn(self, node, [env[i] for i in node.ins])
                    store = node.store
                    if store == 1:
                        env[node.outs[0]] = node.coerce[0](res)
                    elif store == 2:
                        res = list(res)
                        if len(res) != len(node.outs):
                            raise node.error(f"produced {len(res)} value(s) for {len(node.outs)} result(s)")
                        for s, c, v in zip(node.outs, node.coerce, res):
                            env[s] = c(v)
                node = block.term
                if node is None:
                    return []
                target, args = node.fn(self, node, [env[i] for i in node.ins])
                if target is None:
                    return list(args)
                block = target  # `node` stays the branch until the block's arguments are bound
        except InterpreterError as e:
            if e.op_name is None and node is not None:
                raise node.error(e.message) from e
            raise
        except RecursionError:
            raise
        except Exception as e:  # numpy errors and the like, reported at the op
            if node is None:
                raise
            raise node.error(f"{type(e).__name__}: {e}") from e

    def call(self, name: str, args: Sequence[Any]) -> list:
        return self.interp.call_function(name, args)


_RECURSION_LIMIT = 20000
"""Python recursion limit while running (an interpreted call nests about 6 Python frames)."""


class Interpreter:
    """Executes the functions of a module.

    ``module``: an ``ir.Module``, a ``builtin.module`` operation, or IR text
    (parsed in a context with the dlvm dialect, shared by text inputs). ``dtype=np.float64``
    computes every float in float64 regardless of the IR's element types
    (float constants and inputs are converted to float64; casts between float
    types and bf16/f16 rounding become no-ops). ``externals`` maps the names
    of body-less functions to Python callables (numpy values in, a value or a
    tuple out). ``uninitialized`` is what fresh buffers and ``tensor.empty`` hold before they
    are written (reading it is undefined behaviour in compiled code; running twice with
    different values tells a result that depends on it). ``sum_order`` is the order in which
    ``dlvm.reduce`` adds and multiplies: numpy's ``"pairwise"``, the elements
    ``"reversed"`` first, ``"sequential"`` (one running total), or ``"lanes4"``/``"lanes8"``/
    ``"lanes16"`` (that many running totals, element i into lane i mod N, then halved as
    vectorized code reduces a vector): compiled code may use any order, and a result that
    only another order reproduces is not a miscompile. A float32 ``dlvm.dot`` honours it too,
    each product added exactly (as a fused multiply-add does) and each sum rounded.
    """

    SUM_ORDERS = ("pairwise", "reversed", "sequential", "lanes4", "lanes8", "lanes16")

    def __init__(self, module: ir.Module | ir.Operation | str, *, dtype: Any = None,
                 externals: dict[str, Callable[..., Any]] | None = None, uninitialized: int = 0,
                 sum_order: str = "pairwise"):
        if sum_order not in self.SUM_ORDERS:
            raise ValueError(f"sum_order must be one of {', '.join(self.SUM_ORDERS)}, got {sum_order!r}")
        self.sum_order = sum_order
        self.uninitialized = uninitialized
        if dtype is None:
            self.f64 = False
        elif np.dtype(dtype) == np.float64:
            self.f64 = True
        else:
            raise ValueError(f"dtype must be None or numpy.float64, got {dtype!r}")
        if isinstance(module, str):
            module = _parse(module)
        self.module = module
        body_op = module.operation if isinstance(module, ir.Module) else module
        if body_op.name != "builtin.module":
            raise InterpreterError(f"expected a builtin.module, got '{body_op.name}'")
        self.context = body_op.context
        self._funcs: dict[str, ir.Operation] = {}
        for o in body_op.regions[0].blocks[0].operations:
            o = o.operation
            if o.name == "func.func":
                self._funcs[convert_attr(o.attributes["sym_name"])] = o
        self._compiled: dict[str, Function] = {}
        self._types: dict[str, TypeInfo] = {}
        self.externals = dict(externals or {})

    # -- public API ----------------------------------------------------------
    @property
    def function_names(self) -> list[str]:
        return list(self._funcs)

    def run(self, fn_name: str, *args: Any) -> Any:
        """Calls function ``fn_name`` with numpy arguments; one value, or a tuple."""
        name = fn_name.lstrip("@")
        fn = self._function(name)
        if fn is not None and len(args) != len(fn.arg_info):
            raise InterpreterError(f"@{name} takes {len(fn.arg_info)} argument(s), got {len(args)}")
        if fn is not None:
            args = [self._input(a, info, f"@{name} argument #{i}") for i, (a, info) in enumerate(zip(args, fn.arg_info))]
        limit = sys.getrecursionlimit()
        with self.context, np.errstate(all="ignore"):
            try:
                sys.setrecursionlimit(max(limit, _RECURSION_LIMIT))
                results = self.call_function(name, args)
            except RecursionError as e:
                raise InterpreterError(f"recursion too deep while running @{name}") from e
            finally:
                sys.setrecursionlimit(limit)
        values = [self._output(v) for v in results]
        return values[0] if len(values) == 1 else tuple(values)

    __call__ = run

    # -- internals -----------------------------------------------------------
    def type_info(self, t: ir.Type) -> TypeInfo:
        key = str(t)
        info = self._types.get(key)
        if info is None:
            info = self._types[key] = type_info(t, self.f64)
        return info

    def _function(self, name: str) -> Function | None:
        fn = self._compiled.get(name)
        if fn is not None:
            return fn
        o = self._funcs.get(name)
        if o is None:
            if name in self.externals:
                return None
            raise InterpreterError(f"no function @{name} in the module")
        ftype = o.attributes["function_type"].value
        arg_info = [self.type_info(t) for t in ftype.inputs]
        result_info = [self.type_info(t) for t in ftype.results]
        if len(o.regions[0].blocks) == 0:
            if name in self.externals:
                return None
            hint = ""
            if "dlvm.gradient" in o.attributes or "dlvm.tangent" in o.attributes:
                hint = " (a derivative declaration: run the dlvm-differentiate pass first)"
            raise InterpreterError(f"function @{name} has no body{hint}", "func.func", str(o.location))
        comp = _Compiler(self)
        region = comp.region(o.regions[0])
        fn = Function(name, o, region, len(comp.slots), arg_info, result_info)
        self._compiled[name] = fn
        return fn

    def call_function(self, name: str, args: Sequence[Any]) -> list:
        fn = self._function(name)
        if fn is None:
            result = self.externals[name](*args)
            return list(result) if isinstance(result, tuple) else [result]
        frame = Frame(self, fn.nslots)
        results = frame.run(fn.region, args)
        return results

    def _input(self, value: Any, info: TypeInfo, position: str) -> Any:
        if info.kind == "memref":
            if not isinstance(value, np.ndarray) or value.dtype != info.elem.dtype:
                raise InterpreterError(f"{position}: expected a numpy array of {info.elem.dtype} for {info.mlir_type}")
            return make_coercer(info)(value)
        if info.kind not in ("tensor", "scalar"):
            return value
        elem = info.elem
        a = np.asarray(value)
        if a.dtype == object or not (
            a.dtype == elem.dtype
            or np.can_cast(a.dtype, elem.dtype, "same_kind")
            or (elem.is_float and a.dtype.kind in "iub")
        ):
            raise InterpreterError(f"{position}: cannot pass {a.dtype} data as {info.mlir_type}")
        if info.kind == "scalar":
            if a.ndim != 0:
                raise InterpreterError(f"{position}: expected a scalar {info.mlir_type}, got shape {a.shape}")
        elif not _shape_ok(a.shape, info.shape):
            raise InterpreterError(f"{position}: expected shape {info.mlir_type}, got {a.shape}")
        return make_coercer(info)(a)

    @staticmethod
    def _output(v: Any) -> Any:
        if isinstance(v, np.ndarray):
            return np.array(v, copy=True)
        return v


_SHARED_CONTEXT: list[ir.Context] = []


def _parse(text: str) -> ir.Module:
    """Parses IR text in a context shared by all text inputs (creating one costs ~15 ms)."""
    from .. import make_context
    from ..errors import ParseError
    from ..parsing import parse_module

    if not _SHARED_CONTEXT:
        _SHARED_CONTEXT.append(make_context())
    ctx = _SHARED_CONTEXT[0]
    try:
        return parse_module(text, ctx)
    except ParseError as e:
        raise ParseError("cannot parse the module", e.diagnostics) from None
