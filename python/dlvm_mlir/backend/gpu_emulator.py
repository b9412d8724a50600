"""Run the CUDA back end's kernels on the CPU, one thread at a time: GPU schedules tested without a GPU.

The GPU pipeline's ``map`` stage leaves every op inside a ``gpu.launch``
whose body reads its block and thread ids (``gpu.block_id``,
``gpu.thread_id``).  :func:`launches_to_loops` replaces each launch by a call
of a function of its own (the values the body uses are its parameters, as in
``gpu-kernel-outlining``) holding six nested ``scf.for`` loops over the grid
and the block (z, y, x of the grid outermost), the ids replaced by the loops'
induction variables, so the host function computes what the kernels would;
:class:`EmulatedGpuProgram` then lowers it with the CPU's LLVM lowering and
runs it in the ExecutionEngine through the same packed C interface as the
artifacts (:mod:`dlvm_mlir.backend.runtime`).

What this checks: every plan's tiling, thread mapping and predication (a
thread that computes the wrong element, an element that no thread
computes, an element that two threads write differently) and the rewrites
before it (split reductions, generalized convolutions), against the CPU back
end.  What it cannot check: kernels that synchronize their threads
(``gpu.barrier``, workgroup memory: the matmul kernels of
:mod:`dlvm_mlir.backend.gpu_kernels`; use
``GpuScheduleOptions(matmul_kernels=False)``) are refused with
:class:`NotEmulable`, threads run in a fixed order (a race between two threads
is not seen), and math functions come from libm, not libdevice.
"""

from __future__ import annotations

from typing import Any

from mlir import ir
from mlir.dialects import arith, func, scf
from mlir.execution_engine import ExecutionEngine

from .analysis import ops_where
from .boolmem import widen_bool_memrefs

from .gpu import GpuOptions, kernel_loop_steps, lower_to_gpu
from .gpu_schedule import GpuOpRecord
from .gpu_sink_views import captured_values
from .linalg_rewrite import rebind_operands
from dlvm_mlir.passes import Passes, run_steps
from .runtime import ENTRY_PREFIX, ERROR_GLOBAL, ExecutionError, FunctionSignature, _EntryPoint

__all__ = ["EmulatedGpuProgram", "NotEmulable", "launches_to_loops"]

#: ids and sizes a kernel body may read, by op name: index into (block ids, thread ids, grid, block)
_ID_OPS = {"gpu.block_id": 0, "gpu.thread_id": 1, "gpu.grid_dim": 2, "gpu.block_dim": 3}
_AXES = {"x": 0, "y": 1, "z": 2}

TO_LLVM = (
    "convert-scf-to-cf,expand-strided-metadata,lower-affine,convert-arith-to-llvm,arith-expand,"
    "convert-math-to-llvm,convert-math-to-libm,finalize-memref-to-llvm,convert-to-llvm,reconcile-unrealized-casts"
)


class NotEmulable(ExecutionError):
    """A kernel that synchronizes threads: its threads cannot run one after another."""


def _axis(op: ir.Operation) -> int:
    return _AXES[str(op.attributes["dimension"]).rstrip(">").split()[-1]]


def _check_emulable(launch: ir.Operation) -> None:
    refused: list[str] = []

    def visit(op: ir.Operation) -> ir.WalkResult:
        name = op.name
        if name.startswith(("gpu.", "nvgpu.", "nvvm.")) and name not in _ID_OPS and name not in (
            "gpu.launch", "gpu.terminator"
        ):
            refused.append(f"a kernel uses {name}: threads that synchronize cannot run one after another")
        elif name == "memref.alloca" or (name == "memref.alloc" and "workgroup" in str(op.results[0].type)):
            # workgroup memory is shared by a block's threads; an alloca in the loops that
            # replace a launch would grow the stack at every emulated thread
            refused.append(f"a kernel allocates memory ({name}), which the emulator does not model")
        return ir.WalkResult.INTERRUPT if refused else ir.WalkResult.ADVANCE

    launch.walk(visit, ir.WalkOrder.PRE_ORDER)
    if refused:
        raise NotEmulable(refused[0])


def _loop(lower: ir.Value, upper: ir.Value, step: ir.Value) -> tuple[ir.Value, ir.InsertionPoint]:
    loop = scf.ForOp(lower, upper, step)
    with ir.InsertionPoint(loop.body):
        scf.YieldOp([])
    return loop.induction_variable, ir.InsertionPoint.at_block_terminator(loop.body)


def launches_to_loops(module: ir.Module) -> int:
    """Replace every ``gpu.launch`` by a call of a function of its own that loops over its
    blocks and threads; the number replaced.

    The functions are not inlined: one host function holding every kernel's loops (a
    gradient of a wide pooling has hundreds of kernels) took LLVM minutes to optimize.
    Raises :class:`NotEmulable` for a kernel that synchronizes its threads."""
    launches = ops_where(module, lambda op: op.name == "gpu.launch")
    with module.context:
        for number, launch in enumerate(launches):
            _check_emulable(launch)
            if len(launch.results):
                raise NotEmulable("an asynchronous launch cannot be emulated")
            body = launch.regions[0].blocks[0]
            # region arguments: block ids, thread ids, grid sizes, block sizes (x, y, z each);
            # the sizes are the launch's operands in the same order
            segments = list(ir.DenseI32ArrayAttr(launch.attributes["operandSegmentSizes"]))
            first = segments[0]  # after the asynchronous dependencies
            sizes = [launch.operands[first + i] for i in range(6)]
            captured = list(dict.fromkeys(sizes + captured_values(launch)))
            with launch.location, ir.InsertionPoint(module.body):
                kernel = func.FuncOp(f"__dlvm_emulated_kernel_{number}",
                                     ir.FunctionType.get([v.type for v in captured], []),
                                     visibility="private")
                kernel.attributes["passthrough"] = ir.ArrayAttr.get([ir.StringAttr.get("noinline")])
                entry = kernel.add_entry_block()
                arguments = dict(zip(captured, entry.arguments))
                point = ir.InsertionPoint(entry)
                with point:
                    zero = arith.constant(ir.IndexType.get(), 0)
                    one = arith.constant(ir.IndexType.get(), 1)
                    func.ReturnOp([])
                point = ir.InsertionPoint.at_block_terminator(entry)
                ids: list[ir.Value | None] = [None] * 6
                for position in (2, 1, 0, 5, 4, 3):  # grid z, y, x, then block z, y, x
                    with point:
                        ids[position], point = _loop(zero, arguments[sizes[position]], one)
            # (block x y z, thread x y z, grid x y z, block size x y z)
            values = ids + [arguments[size] for size in sizes]
            for i, argument in enumerate(body.arguments):
                argument.replace_all_uses_with(values[i])
            for op in ops_where(launch, lambda op: op.name in _ID_OPS):  # anywhere in the body
                op.results[0].replace_all_uses_with(values[3 * _ID_OPS[op.name] + _axis(op)])
                op.erase()
            for inner in list(body.operations):
                inner = inner.operation
                if inner.name != "gpu.terminator":
                    inner.move_before(point.ref_operation)

            rebind_operands(kernel.operation, arguments)
            with launch.location, ir.InsertionPoint(launch):
                func.CallOp(kernel, captured)
            launch.erase()
    return len(launches)


class EmulatedGpuProgram:
    """A module (linalg on tensors) through the GPU pipeline's stages up to ``map``, with its
    kernels run on the CPU by :func:`launches_to_loops`.

    ``program(name, *args)`` takes and returns numpy arrays like a
    :class:`~dlvm_mlir.backend.runtime.CpuExecutable`; :attr:`plans` are the
    ``map`` stage's records (which plan each op got)."""

    def __init__(self, module: ir.Module, options: GpuOptions | None = None) -> None:
        result = lower_to_gpu(module, options, stop_after="map")
        self.plans: list[GpuOpRecord] = result.ops
        self.signatures: dict[str, FunctionSignature] = {sig.name: sig for sig in result.signatures}
        run_steps(module, kernel_loop_steps())
        launches_to_loops(module)
        widen_bool_memrefs(module)
        run_steps(module, [Passes(TO_LLVM)])
        self.module = module
        self.engine = ExecutionEngine(module, opt_level=2)
        self._entries: dict[str, _EntryPoint] = {}

    def entry(self, name: str) -> _EntryPoint:
        if name not in self._entries:
            if name not in self.signatures:
                raise ExecutionError(f"no entry point @{name}; have {', '.join(sorted(self.signatures))}")
            address = self.engine.raw_lookup(f"_mlir_ciface_{ENTRY_PREFIX}{name}")
            self._entries[name] = _EntryPoint(self.signatures[name], address, _ErrorSlot(self.engine))
        return self._entries[name]

    def __call__(self, name: str, *args: Any) -> Any:
        return self.entry(name)(*args)


class _ErrorSlot:
    """The program's error slot (:data:`~dlvm_mlir.backend.runtime.ERROR_GLOBAL`), where it has one."""

    def __init__(self, engine: ExecutionEngine) -> None:
        import ctypes

        prefix = "_mlir_"
        try:
            address = engine.raw_lookup(ERROR_GLOBAL[len(prefix):])
        except Exception:  # no such symbol: the program has no run-time checks
            address = 0
        self.slot = ctypes.c_int64.from_address(address) if address else None

    def failed(self) -> bool:
        return self.slot is not None and self.slot.value != 0

    def raise_if_failed(self, function: str) -> None:
        if self.slot is not None and self.slot.value:
            failed, self.slot.value = self.slot.value, 0
            raise ExecutionError(f"@{function}: the emulated program failed with error code {failed}")
