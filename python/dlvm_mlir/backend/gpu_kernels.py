"""Hand-built GPU kernels for contractions (matmul, batch matmul, transposed operands).

A contraction on memrefs ``C[b.., m, n] += A[.., m, .., k] * B[.., k, .., n]``
(any order of the indices in each operand, batch indices shared or
broadcast) becomes a ``gpu.launch`` in a private function that the pipeline
calls and inlines.  Two variants:

SIMT (all element types)
    a block computes a ``BM x BN`` tile of C with 256 threads arranged
    16 x 16, each thread a ``TM x TN`` register tile (rows ``ty + i*16``,
    columns ``tx + j*16``: warps read shared memory without bank conflicts
    and store C coalesced).  The k loop steps by ``BK``: all threads copy
    the ``BM x BK`` tile of A and the ``BK x BN`` tile of B from global to
    workgroup memory (the copy walks the operand's contiguous index fastest,
    so it is coalesced whatever the transposition), ``gpu.barrier``, then
    ``BK`` rank-1 updates of the register tile from shared memory (FMAs),
    ``gpu.barrier``.  Out-of-range elements are loaded as zeros, so edge
    tiles need no special code besides the guarded stores.  f16/bf16
    inputs accumulate in f32.

tensor cores (``nvgpu.mma.sync``)
    f16 inputs (``mma.sync.m16n8k16``, f32 accumulators) and, when asked
    for, f32 inputs as TF32 (``m16n8k8``).  A block of 4 warps (2 x 2)
    computes a 64 x 64 tile (32 x 32 for small problems), each warp a grid
    of 16 x 8 accumulator fragments held in registers across the whole k
    loop; A and B are staged through workgroup memory as above and each lane
    gathers its fragment elements at the positions given by the PTX ISA's
    fragment layouts (groupID = lane / 4, threadID_in_group = lane % 4).

The generated IR is plain ``scf``/``memref``/``arith``/``math``/``vector``/
``nvgpu`` inside ``gpu.launch`` with ``workgroup(...)`` attributions, so it
can be read (``--stop-at=map``) and lowered by the ordinary GPU pipeline.
"""

from __future__ import annotations

from dataclasses import dataclass

from mlir import ir
from mlir.dialects import linalg

from .analysis import analyze_linalg_op
from .linalg_rewrite import defining_op

__all__ = ["MatmulSpec", "MatmulConfig", "matmul_spec", "matmul_config", "matmul_kernel"]

WORKGROUP = "#gpu.address_space<workgroup>"
FLOATS = ("f16", "bf16", "f32", "f64")
SMS = 132
"""Multiprocessors of an H100 SXM: small matmuls get tiles small enough to fill them."""
INTS = ("i8", "i16", "i32", "i64")


@dataclass(frozen=True)
class MatmulSpec:
    """A contraction the kernels handle, with static extents."""

    batch: tuple[int, ...]  # loop positions of the batch loops
    m: int  # loop position
    n: int
    k: int
    ranges: tuple[int, ...]  # extent of each loop
    a_dims: tuple[int, ...]  # loop position of each index of A, B and C
    b_dims: tuple[int, ...]
    c_dims: tuple[int, ...]
    a_type: str  # memref types as printed
    b_type: str
    c_type: str
    a_elem: str
    b_elem: str
    c_elem: str

    @property
    def M(self) -> int:  # noqa: N802 - matrix dimension names
        return self.ranges[self.m]

    @property
    def N(self) -> int:  # noqa: N802
        return self.ranges[self.n]

    @property
    def K(self) -> int:  # noqa: N802
        return self.ranges[self.k]

    @property
    def batch_count(self) -> int:
        total = 1
        for d in self.batch:
            total *= self.ranges[d]
        return total

    @property
    def accumulator(self) -> str:
        """Element type of the register accumulators."""
        if self.c_elem in ("f16", "bf16"):
            return "f32"
        return self.c_elem

    @property
    def is_float(self) -> bool:
        return self.c_elem in FLOATS


@dataclass(frozen=True)
class MatmulConfig:
    """Tile sizes of one kernel."""

    variant: str  # "simt", "mma_f16" or "mma_tf32"
    bm: int
    bn: int
    bk: int
    tm: int = 1  # SIMT register tile
    tn: int = 1
    threads: int = 256

    def shared_bytes(self, a_bytes: int, b_bytes: int) -> int:
        if self.variant == "simt":
            return self.bk * (self.bm + 4) * a_bytes + self.bk * (self.bn + 4) * b_bytes
        pad = 8 if self.variant == "mma_f16" else 4
        return self.bm * (self.bk + pad) * a_bytes + self.bk * (self.bn + pad) * b_bytes


def _element(value: ir.Value) -> str:
    return str(ir.ShapedType(value.type).element_type)


def _dims(amap: ir.AffineMap) -> tuple[int, ...] | None:
    dims = []
    for expr in amap.results:
        if not isinstance(expr, ir.AffineDimExpr):
            return None
        dims.append(ir.AffineDimExpr(expr).position)
    return tuple(dims)


_WIDENING = ("arith.extf", "arith.extsi")


def _arg_number(value: ir.Value) -> int | None:
    if isinstance(value.owner, ir.Block):
        return ir.BlockArgument(value).arg_number
    return None


def _is_multiply_add(op: ir.Operation) -> bool:
    """The body is ``out + a * b`` (a and b possibly widened first)."""
    block = op.regions[0].blocks[0]
    if len(block.arguments) != 3:
        return False
    ops = [o.operation for o in block.operations]
    core = [o for o in ops if o.name not in _WIDENING]
    if [o.name for o in core] not in (
        ["arith.mulf", "arith.addf", "linalg.yield"],
        ["arith.muli", "arith.addi", "linalg.yield"],
    ):
        return False
    mul, add, yield_ = core

    def source(value: ir.Value) -> int | None:
        producer = defining_op(value)
        if producer is not None and producer.name in _WIDENING:
            value = producer.operands[0]
        return _arg_number(value)

    if sorted(str(source(v)) for v in mul.operands) != ["0", "1"]:
        return False
    add_sources = [(_arg_number(v), defining_op(v)) for v in add.operands]
    has_acc = any(number == 2 for number, _ in add_sources)
    has_mul = any(producer is not None and producer == mul for _, producer in add_sources)
    yielded = defining_op(yield_.operands[0])
    return has_acc and has_mul and yielded is not None and yielded == add


def matmul_spec(op: ir.Operation) -> MatmulSpec | None:
    """The :class:`MatmulSpec` of a linalg op on memrefs, or ``None`` if the kernels do not apply."""
    if len(op.results) != 0 or len(op.operands) != 3:
        return None
    if not all(isinstance(v.type, ir.MemRefType) for v in op.operands):
        return None
    nest = analyze_linalg_op(op)
    if nest is None or nest.contraction is None:
        return None
    con = nest.contraction
    if len(con.m) != 1 or len(con.n) != 1 or len(con.k) != 1:
        return None
    if not _is_multiply_add(op):
        return None
    maps = [ir.AffineMapAttr(a).value for a in linalg.get_indexing_maps(op)]
    dims = [_dims(m) for m in maps]
    if any(d is None for d in dims):
        return None
    elems = [_element(v) for v in op.operands]
    a_elem, b_elem, c_elem = elems
    if c_elem in FLOATS:
        if a_elem not in FLOATS or b_elem not in FLOATS:
            return None
    elif c_elem in INTS:
        if a_elem not in INTS or b_elem not in INTS:
            return None
    else:
        return None
    return MatmulSpec(
        batch=tuple(con.batch),
        m=con.m[0],
        n=con.n[0],
        k=con.k[0],
        ranges=nest.ranges,
        a_dims=dims[0],  # type: ignore[arg-type]
        b_dims=dims[1],  # type: ignore[arg-type]
        c_dims=dims[2],  # type: ignore[arg-type]
        a_type=str(op.operands[0].type),
        b_type=str(op.operands[1].type),
        c_type=str(op.operands[2].type),
        a_elem=a_elem,
        b_elem=b_elem,
        c_elem=c_elem,
    )


def _tile(extent: int, largest: int) -> int:
    """Power-of-two block tile between 16 and ``largest`` covering ``extent`` if possible."""
    size = 16
    while size < largest and size < extent:
        size *= 2
    return size


def matmul_config(spec: MatmulSpec, mma: str = "auto") -> MatmulConfig:
    """Tile sizes (and the variant) for ``spec``; ``mma`` as in GpuScheduleOptions."""
    inputs = (spec.a_elem, spec.b_elem)
    blocks64 = -(-spec.M // 64) * -(-spec.N // 64) * spec.batch_count
    size = 64 if min(spec.M, spec.N) > 32 and blocks64 >= SMS // 2 else 32
    if mma in ("auto", "tf32") and inputs == ("f16", "f16") and spec.c_elem in ("f16", "f32"):
        return MatmulConfig("mma_f16", size, size, 32, threads=128)
    if mma == "tf32" and inputs == ("f32", "f32") and spec.c_elem == "f32":
        return MatmulConfig("mma_tf32", size, size, 16, threads=128)
    largest = 128 if spec.M * spec.N >= 1024 * 1024 else 64
    bm = _tile(spec.M, largest)
    bn = _tile(spec.N, largest)
    # small problems: smaller tiles (down to 32) until the grid has a block per two SMs
    while -(-spec.M // bm) * -(-spec.N // bn) * spec.batch_count < SMS // 2 and max(bm, bn) > 32:
        if bm >= bn:
            bm //= 2
        else:
            bn //= 2
    bk = spec.K if spec.K <= 16 else 16
    if spec.c_elem == "f64" or max(bm, bn) == 128:
        bk = min(bk, 8)
    return MatmulConfig("simt", bm, bn, bk, tm=bm // 16, tn=bn // 16, threads=256)


# --------------------------------------------------------------------------
# IR text emission
# --------------------------------------------------------------------------


class _Text:
    """Lines of IR with fresh SSA names and memoized index constants."""

    def __init__(self, indent: str) -> None:
        self.lines: list[str] = []
        self.indent = indent
        self.counter = 0
        self.consts: dict[tuple[str, str], str] = {}

    def fresh(self, stem: str = "v") -> str:
        self.counter += 1
        return f"%{stem}{self.counter}"

    def emit(self, line: str) -> None:
        self.lines.append(self.indent + line)

    def op(self, text: str, stem: str = "v") -> str:
        name = self.fresh(stem)
        self.emit(f"{name} = {text}")
        return name

    def index(self, value: int) -> str:
        key = ("index", str(value))
        if key not in self.consts:
            name = f"%c{value}" if value >= 0 else f"%cm{-value}"
            self.consts[key] = name
        return self.consts[key]

    def const_lines(self) -> list[str]:
        return [f"{self.indent}{name} = arith.constant {value} : index" for (_, value), name in self.consts.items()]

    # index arithmetic (all operands are SSA names of type index)
    def add(self, a: str, b: str) -> str:
        return self.op(f"arith.addi {a}, {b} : index", "i")

    def mul(self, a: str, b: str) -> str:
        return self.op(f"arith.muli {a}, {b} : index", "i")

    def div(self, a: str, b: str) -> str:
        return self.op(f"arith.divui {a}, {b} : index", "i")

    def rem(self, a: str, b: str) -> str:
        return self.op(f"arith.remui {a}, {b} : index", "i")

    def lt(self, a: str, b: str) -> str:
        return self.op(f"arith.cmpi ult, {a}, {b} : index", "p")

    def both(self, a: str | None, b: str | None) -> str | None:
        if a is None:
            return b
        if b is None:
            return a
        return self.op(f"arith.andi {a}, {b} : i1", "p")


def _zero(elem: str) -> str:
    return f"arith.constant 0.0 : {elem}" if elem in FLOATS else f"arith.constant 0 : {elem}"


def _bytes(elem: str) -> int:
    return {"f16": 2, "bf16": 2, "f32": 4, "f64": 8, "i8": 1, "i16": 2, "i32": 4, "i64": 8}[elem]


def _convert(t: _Text, value: str, src: str, dst: str) -> str:
    """Convert a scalar between element types (widening or narrowing)."""
    if src == dst:
        return value
    if src in FLOATS and dst in FLOATS:
        wider = _bytes(dst) > _bytes(src) or (src, dst) == ("bf16", "f32")
        op = "arith.extf" if wider else "arith.truncf"
        return t.op(f"{op} {value} : {src} to {dst}")
    if src in INTS and dst in INTS:
        op = "arith.extsi" if _bytes(dst) > _bytes(src) else "arith.trunci"
        return t.op(f"{op} {value} : {src} to {dst}")
    raise ValueError(f"no conversion from {src} to {dst}")


def _operand_indices(dims: tuple[int, ...], values: dict[int, str]) -> str:
    return ", ".join(values[d] for d in dims)


def _guarded_load(
    t: _Text, memref: str, mtype: str, elem: str, indices: str, guard: str | None, zero: str
) -> str:
    if guard is None:
        return t.op(f"memref.load {memref}[{indices}] : {mtype}")
    result = t.fresh("ld")
    t.emit(f"{result} = scf.if {guard} -> ({elem}) {{")
    inner = t.op(f"memref.load {memref}[{indices}] : {mtype}")
    t.emit(f"  scf.yield {inner} : {elem}")
    t.emit("} else {")
    t.emit(f"  scf.yield {zero} : {elem}")
    t.emit("}")
    return result


class _Kernel:
    """Shared parts of both kernel variants."""

    def __init__(self, spec: MatmulSpec, config: MatmulConfig, name: str) -> None:
        self.spec = spec
        self.cfg = config
        self.name = name
        self.t = _Text("      ")

    # The tile copy: ``rows x cols`` elements of an operand into shared memory.
    def copy_tile(
        self,
        *,
        operand: str,
        mtype: str,
        elem: str,
        dims: tuple[int, ...],
        row_dim: int,
        col_dim: int,
        rows: int,
        cols: int,
        row0: str,
        col0: str,
        shared: str,
        shared_type: str,
        shared_index: str,  # "rc" (shared[r][c]) or "cr" (shared[c][r])
        batch_values: dict[int, str],
        tid: str,
        threads: int,
        zero: str,
    ) -> None:
        """Copy rows x cols; each thread copies ``ceil(rows*cols/threads)`` elements.

        The operand index that is contiguous in memory (A's or B's last
        index) varies fastest across the threads of a warp.
        """
        t = self.t
        spec = self.spec
        total = rows * cols
        per_thread = -(-total // threads)
        fastest_is_col = dims[-1] == col_dim
        extent_row = spec.ranges[row_dim]
        extent_col = spec.ranges[col_dim]
        need_row = extent_row % rows != 0
        need_col = extent_col % cols != 0
        need_total = total % threads != 0
        iv = t.fresh("e")
        t.emit(f"scf.for {iv} = {t.index(0)} to {t.index(per_thread)} step {t.index(1)} {{")
        saved = t.indent
        t.indent += "  "
        linear = t.add(t.mul(iv, t.index(threads)), tid)
        if fastest_is_col:
            r, c = t.div(linear, t.index(cols)), t.rem(linear, t.index(cols))
        else:
            r, c = t.rem(linear, t.index(rows)), t.div(linear, t.index(rows))
        if need_total:
            t.emit(f"scf.if {t.lt(linear, t.index(total))} {{")
            t.indent += "  "
        grow, gcol = t.add(row0, r), t.add(col0, c)
        guard = t.both(
            t.lt(grow, t.index(extent_row)) if need_row else None,
            t.lt(gcol, t.index(extent_col)) if need_col else None,
        )
        values = dict(batch_values)
        values[row_dim] = grow
        values[col_dim] = gcol
        loaded = _guarded_load(t, operand, mtype, elem, _operand_indices(dims, values), guard, zero)
        sidx = f"{r}, {c}" if shared_index == "rc" else f"{c}, {r}"
        t.emit(f"memref.store {loaded}, {shared}[{sidx}] : {shared_type}")
        if need_total:
            t.indent = t.indent[:-2]
            t.emit("}")
        t.indent = saved
        t.emit("}")

    def batch_values(self, bz: str) -> dict[int, str]:
        """Batch loop values from the z block index (row-major delinearization)."""
        t = self.t
        values: dict[int, str] = {}
        rest = bz
        dims = list(self.spec.batch)
        for i, d in enumerate(reversed(dims)):
            extent = self.spec.ranges[d]
            if i == len(dims) - 1:
                values[d] = rest
            else:
                values[d] = t.rem(rest, t.index(extent))
                rest = t.div(rest, t.index(extent))
        return values

    def store_c(self, value: str, gm: str, gn: str, batch_values: dict[int, str], guard: str | None) -> None:
        """``C[...] += value`` (value in the accumulator type)."""
        t = self.t
        spec = self.spec
        values = dict(batch_values)
        values[spec.m] = gm
        values[spec.n] = gn
        idx = _operand_indices(spec.c_dims, values)
        if guard is not None:
            t.emit(f"scf.if {guard} {{")
            t.indent += "  "
        old = t.op(f"memref.load %C[{idx}] : {spec.c_type}")
        old = _convert(t, old, spec.c_elem, spec.accumulator)
        add = "arith.addf" if spec.is_float else "arith.addi"
        total = t.op(f"{add} {old}, {value} : {spec.accumulator}")
        total = _convert(t, total, spec.accumulator, spec.c_elem)
        t.emit(f"memref.store {total}, %C[{idx}] : {spec.c_type}")
        if guard is not None:
            t.indent = t.indent[:-2]
            t.emit("}")

    def wrap(self, body: list[str], workgroup: list[str]) -> str:
        spec = self.spec
        cfg = self.cfg
        gx = -(-spec.N // cfg.bn)
        gy = -(-spec.M // cfg.bm)
        gz = spec.batch_count
        consts = self.t.const_lines()
        attributions = ", ".join(workgroup)
        return "\n".join(
            [
                f"func.func private @{self.name}(%A: {spec.a_type}, %B: {spec.b_type}, %C: {spec.c_type}) {{",
                f"  %gx = arith.constant {gx} : index",
                f"  %gy = arith.constant {gy} : index",
                f"  %gz = arith.constant {gz} : index",
                f"  %nt = arith.constant {cfg.threads} : index",
                "  %one = arith.constant 1 : index",
                "  gpu.launch blocks(%bx, %by, %bz) in (%sgx = %gx, %sgy = %gy, %sgz = %gz)"
                " threads(%tx, %ty, %tz) in (%stx = %nt, %sty = %one, %stz = %one)"
                f" workgroup({attributions}) {{",
                *consts,
                *body,
                "      gpu.terminator",
                "    }",
                "  return",
                "}",
            ]
        )


def _simt_kernel(spec: MatmulSpec, cfg: MatmulConfig, name: str) -> str:
    k = _Kernel(spec, cfg, name)
    t = k.t
    acc_t = spec.accumulator
    a_sh_t = f"memref<{cfg.bk}x{cfg.bm + 4}x{spec.a_elem}, {WORKGROUP}>"
    b_sh_t = f"memref<{cfg.bk}x{cfg.bn + 4}x{spec.b_elem}, {WORKGROUP}>"
    ty_count = cfg.bm // cfg.tm  # 16
    tx_count = cfg.bn // cfg.tn  # 16
    tid = "%tx"
    trow = t.div(tid, t.index(tx_count))
    tcol = t.rem(tid, t.index(tx_count))
    m0 = t.mul("%by", t.index(cfg.bm))
    n0 = t.mul("%bx", t.index(cfg.bn))
    batch = k.batch_values("%bz")
    zero_a = t.op(_zero(spec.a_elem), "z")
    zero_b = t.op(_zero(spec.b_elem), "z")
    zero_acc = t.op(_zero(acc_t), "z")
    n_acc = cfg.tm * cfg.tn
    accs = [f"%acc{i}" for i in range(n_acc)]
    results = t.fresh("res")
    iter_args = ", ".join(f"{a} = {zero_acc}" for a in accs)
    types = ", ".join([acc_t] * n_acc)
    kt = t.fresh("kt")
    t.emit(
        f"{results}:{n_acc} = scf.for {kt} = {t.index(0)} to {t.index(spec.K)} step {t.index(cfg.bk)} "
        f"iter_args({iter_args}) -> ({types}) {{"
    )
    t.indent += "  "
    k.copy_tile(
        operand="%A", mtype=spec.a_type, elem=spec.a_elem, dims=spec.a_dims, row_dim=spec.m, col_dim=spec.k,
        rows=cfg.bm, cols=cfg.bk, row0=m0, col0=kt, shared="%As", shared_type=a_sh_t, shared_index="cr",
        batch_values=batch, tid=tid, threads=cfg.threads, zero=zero_a,
    )
    k.copy_tile(
        operand="%B", mtype=spec.b_type, elem=spec.b_elem, dims=spec.b_dims, row_dim=spec.k, col_dim=spec.n,
        rows=cfg.bk, cols=cfg.bn, row0=kt, col0=n0, shared="%Bs", shared_type=b_sh_t, shared_index="rc",
        batch_values=batch, tid=tid, threads=cfg.threads, zero=zero_b,
    )
    t.emit("gpu.barrier")
    inner = t.fresh("inner")
    kk = t.fresh("kk")
    inner_args = ", ".join(f"%a{i} = {a}" for i, a in enumerate(accs))
    t.emit(
        f"{inner}:{n_acc} = scf.for {kk} = {t.index(0)} to {t.index(cfg.bk)} step {t.index(1)} "
        f"iter_args({inner_args}) -> ({types}) {{"
    )
    t.indent += "  "
    a_vals = []
    for i in range(cfg.tm):
        row = t.add(trow, t.index(i * ty_count)) if i else trow
        v = t.op(f"memref.load %As[{kk}, {row}] : {a_sh_t}")
        a_vals.append(_convert(t, v, spec.a_elem, acc_t))
    b_vals = []
    for j in range(cfg.tn):
        col = t.add(tcol, t.index(j * tx_count)) if j else tcol
        v = t.op(f"memref.load %Bs[{kk}, {col}] : {b_sh_t}")
        b_vals.append(_convert(t, v, spec.b_elem, acc_t))
    updated = []
    for i in range(cfg.tm):
        for j in range(cfg.tn):
            acc = f"%a{i * cfg.tn + j}"
            if spec.is_float:
                updated.append(t.op(f"math.fma {a_vals[i]}, {b_vals[j]}, {acc} : {acc_t}"))
            else:
                prod = t.op(f"arith.muli {a_vals[i]}, {b_vals[j]} : {acc_t}")
                updated.append(t.op(f"arith.addi {acc}, {prod} : {acc_t}"))
    t.emit(f"scf.yield {', '.join(updated)} : {types}")
    t.indent = t.indent[:-2]
    t.emit("}")
    t.emit("gpu.barrier")
    t.emit(f"scf.yield {', '.join(f'{inner}#{i}' for i in range(n_acc))} : {types}")
    t.indent = t.indent[:-2]
    t.emit("}")
    need_m = spec.M % cfg.bm != 0
    need_n = spec.N % cfg.bn != 0
    for i in range(cfg.tm):
        gm = t.add(m0, t.add(trow, t.index(i * ty_count)))
        for j in range(cfg.tn):
            gn = t.add(n0, t.add(tcol, t.index(j * tx_count)))
            guard = t.both(
                t.lt(gm, t.index(spec.M)) if need_m else None, t.lt(gn, t.index(spec.N)) if need_n else None
            )
            k.store_c(f"{results}#{i * cfg.tn + j}", gm, gn, batch, guard)
    return k.wrap(t.lines, [f"%As : {a_sh_t}", f"%Bs : {b_sh_t}"])


def _mma_kernel(spec: MatmulSpec, cfg: MatmulConfig, name: str) -> str:
    """Tensor-core kernel: 4 warps (2 x 2), each a (BM/2) x (BN/2) tile of 16 x 8 fragments."""
    k = _Kernel(spec, cfg, name)
    t = k.t
    f16 = cfg.variant == "mma_f16"
    op_elem = "f16" if f16 else "f32"
    kstep = 16 if f16 else 8
    pad = 8 if f16 else 4
    a_sh_t = f"memref<{cfg.bm}x{cfg.bk + pad}x{op_elem}, {WORKGROUP}>"
    b_sh_t = f"memref<{cfg.bk}x{cfg.bn + pad}x{op_elem}, {WORKGROUP}>"
    a_vec = "vector<4x2xf16>" if f16 else "vector<4x1xf32>"
    b_vec = "vector<2x2xf16>" if f16 else "vector<2x1xf32>"
    c_vec = "vector<2x2xf32>"
    wm_size, wn_size = cfg.bm // 2, cfg.bn // 2
    mi_count, ni_count = wm_size // 16, wn_size // 8
    tid = "%tx"
    warp = t.div(tid, t.index(32))
    lane = t.rem(tid, t.index(32))
    wm0 = t.mul(t.div(warp, t.index(2)), t.index(wm_size))
    wn0 = t.mul(t.rem(warp, t.index(2)), t.index(wn_size))
    g = t.div(lane, t.index(4))
    q = t.rem(lane, t.index(4))  # threadID_in_group
    m0 = t.mul("%by", t.index(cfg.bm))
    n0 = t.mul("%bx", t.index(cfg.bn))
    batch = k.batch_values("%bz")
    zero_a = t.op(_zero(spec.a_elem), "z")
    zero_b = t.op(_zero(spec.b_elem), "z")
    zero_c = t.op(f"arith.constant dense<0.0> : {c_vec}", "z")
    n_acc = mi_count * ni_count
    accs = [f"%acc{i}" for i in range(n_acc)]
    results = t.fresh("res")
    types = ", ".join([c_vec] * n_acc)
    kt = t.fresh("kt")
    t.emit(
        f"{results}:{n_acc} = scf.for {kt} = {t.index(0)} to {t.index(spec.K)} step {t.index(cfg.bk)} "
        f"iter_args({', '.join(f'{a} = {zero_c}' for a in accs)}) -> ({types}) {{"
    )
    t.indent += "  "
    k.copy_tile(
        operand="%A", mtype=spec.a_type, elem=spec.a_elem, dims=spec.a_dims, row_dim=spec.m, col_dim=spec.k,
        rows=cfg.bm, cols=cfg.bk, row0=m0, col0=kt, shared="%As", shared_type=a_sh_t, shared_index="rc",
        batch_values=batch, tid=tid, threads=cfg.threads, zero=zero_a,
    )
    k.copy_tile(
        operand="%B", mtype=spec.b_type, elem=spec.b_elem, dims=spec.b_dims, row_dim=spec.k, col_dim=spec.n,
        rows=cfg.bk, cols=cfg.bn, row0=kt, col0=n0, shared="%Bs", shared_type=b_sh_t, shared_index="rc",
        batch_values=batch, tid=tid, threads=cfg.threads, zero=zero_b,
    )
    t.emit("gpu.barrier")
    current = list(accs)
    for ks in range(cfg.bk // kstep):
        k0 = ks * kstep
        a_frags = []
        for mi in range(mi_count):
            base = t.add(wm0, t.index(mi * 16))
            elems = []
            if f16:
                for i in range(8):
                    row = t.add(base, t.add(g, t.index(8 * ((i >> 1) & 1))))
                    col = t.add(t.mul(q, t.index(2)), t.index(k0 + (i & 1) + 8 * (i >> 2)))
                    elems.append(t.op(f"memref.load %As[{row}, {col}] : {a_sh_t}"))
            else:
                for i in range(4):
                    row = t.add(base, t.add(g, t.index(8 * (i & 1))))
                    col = t.add(q, t.index(k0 + 4 * (i >> 1)))
                    elems.append(t.op(f"memref.load %As[{row}, {col}] : {a_sh_t}"))
            a_frags.append(t.op(f"vector.from_elements {', '.join(elems)} : {a_vec}"))
        b_frags = []
        for ni in range(ni_count):
            col = t.add(wn0, t.add(g, t.index(ni * 8)))
            elems = []
            if f16:
                for i in range(4):
                    row = t.add(t.mul(q, t.index(2)), t.index(k0 + (i & 1) + 8 * (i >> 1)))
                    elems.append(t.op(f"memref.load %Bs[{row}, {col}] : {b_sh_t}"))
            else:
                for i in range(2):
                    row = t.add(q, t.index(k0 + 4 * i))
                    elems.append(t.op(f"memref.load %Bs[{row}, {col}] : {b_sh_t}"))
            b_frags.append(t.op(f"vector.from_elements {', '.join(elems)} : {b_vec}"))
        shape = "[16, 8, 16]" if f16 else "[16, 8, 8], tf32Enabled"
        nxt = []
        for mi in range(mi_count):
            for ni in range(ni_count):
                acc = current[mi * ni_count + ni]
                nxt.append(
                    t.op(
                        f"nvgpu.mma.sync({a_frags[mi]}, {b_frags[ni]}, {acc}) {{mmaShape = {shape}}} : "
                        f"({a_vec}, {b_vec}, {c_vec}) -> {c_vec}"
                    )
                )
        current = nxt
    t.emit("gpu.barrier")
    t.emit(f"scf.yield {', '.join(current)} : {types}")
    t.indent = t.indent[:-2]
    t.emit("}")
    need_m = spec.M % cfg.bm != 0
    need_n = spec.N % cfg.bn != 0
    for mi in range(mi_count):
        for ni in range(ni_count):
            acc = f"{results}#{mi * ni_count + ni}"
            for r in range(2):
                gm = t.add(m0, t.add(wm0, t.add(g, t.index(mi * 16 + 8 * r))))
                for e in range(2):
                    gn = t.add(n0, t.add(wn0, t.add(t.mul(q, t.index(2)), t.index(ni * 8 + e))))
                    value = t.op(f"vector.extract {acc}[{r}, {e}] : f32 from {c_vec}")
                    guard = t.both(
                        t.lt(gm, t.index(spec.M)) if need_m else None,
                        t.lt(gn, t.index(spec.N)) if need_n else None,
                    )
                    k.store_c(value, gm, gn, batch, guard)
    return k.wrap(t.lines, [f"%As : {a_sh_t}", f"%Bs : {b_sh_t}"])


def matmul_kernel(spec: MatmulSpec, config: MatmulConfig, name: str) -> str:
    """A ``func.func private @name(%A, %B, %C)`` running the contraction as one ``gpu.launch``."""
    if config.variant == "simt":
        return _simt_kernel(spec, config, name)
    return _mma_kernel(spec, config, name)
