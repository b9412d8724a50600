"""dlvm-cpu-pipeline: DLVM (or linalg) IR to the LLVM dialect for the CPU, as one flag.

The same stages as ``dlvm_mlir.compile(text, target="cpu")`` (see
:mod:`dlvm_mlir.backend.cpu` and docs/cpu.md), as a ModulePass::

    linalg              the front half of dlvm_mlir.compile (dlvm_mlir.stages):
                        dlvm-differentiate (when the module declares derivatives),
                        dlvm-optimize (optimize=true) with the checkpoint policy
                        (checkpoint=, checkpoint-budget=), dlvm-to-linalg
    entry-points        public functions -> C-interface entry points
    fuse                dlvm-kernel-fusion
    approximate-math    f32 exp/log/tanh/erf -> vectorizable polynomials
    pack                B of large matmuls packed into register-tile panels
    tile-and-vectorize  full reductions split; per-op schedules: threads, cache and register tiles, vectors
    bufferize           One-Shot Bufferize, results -> out-parameters
    lower-vectors       vector.contract -> FMAs, n-D vectors -> 1-D
    parallelize         scf.forall -> async runtime tasks (threads > 1)
    to-llvm             everything to the LLVM dialect

``stop-at=<stage>`` prints the IR after that stage, e.g.
``dlvm-opt --dlvm-cpu-pipeline=stop-at=tile-and-vectorize`` for the tiled,
vectorized loops on tensors.  After ``to-llvm`` the module is in the LLVM
dialect only (``mlir-translate --mlir-to-llvmir`` takes it); with
``threads`` > 1 it calls MLIR's async runtime ABI (``mlirAsyncRuntime*``:
``libmlir_async_runtime.so``, or dlvm's spinning implementation that the
JIT binds; docs/cpu.md).

Tile sizes follow the host CPU (SIMD width, caches) unless ``vector-bits``
fixes the SIMD width, which makes the output the same on every machine.

In a pass manager the pass is its stages' steps (``expand``): every upstream
pass of a stage is a pass of that pass manager, and every Python step one
named ``CpuPipeline.<stage>`` or ``CpuPipeline.<stage>/<step>``, so
``dlvm-opt --mlir-timing`` times each and ``--mlir-print-ir-after-all``
prints the IR after each (passes that a step runs only when needed, e.g.
``canonicalize,cse`` after math approximations, are printed too and timed
as part of their step).
"""

from __future__ import annotations

from dataclasses import replace

from mlir import ir

from collections.abc import Sequence

from dlvm_mlir.backend.cpu import (
    CPU_STAGE_STEPS,
    STAGE_NAMES,
    CpuOptions,
    entry_point_signatures,
    lower_to_llvm_cpu,
)
from dlvm_mlir.backend.options import TUNING_MODES, ScheduleOptions, default_threads, default_tuning
from dlvm_mlir.backend.target import CpuTarget, host_target
from dlvm_mlir.passes import Call, ModulePass, Option, Step, register_pass
from dlvm_mlir.transforms._lowering import (
    FRONT_OPTIONS,
    front_options,
    run_lowering_privately,
    stage_passes,
    to_linalg,
)

__all__ = ["CpuPipeline", "STOP_POINTS", "cpu_options"]

STOP_POINTS = ("linalg", *STAGE_NAMES)

VECTOR_BITS = (0, 128, 256, 512)


def cpu_options(
    *,
    threads: int | None = None,
    vectorize: bool = True,
    fuse: bool = True,
    fast_math: bool = True,
    pack: bool = True,
    im2col: bool = True,
    direct_conv: bool = True,
    vector_bits: int = 0,
    caching_allocator: bool = True,
    tuning: str = "",
) -> CpuOptions:
    """The :class:`CpuOptions` for the pass options (``vector_bits=0``: the host's;
    ``tuning=""``: :func:`default_tuning`)."""
    target: CpuTarget = host_target()
    if vector_bits:
        target = replace(target, vector_bits=vector_bits, vector_registers=32 if vector_bits == 512 else 16)
    return CpuOptions(
        threads=default_threads() if threads is None else threads,
        vectorize=vectorize,
        fuse_elementwise=fuse,
        fast_math_approximations=fast_math,
        pack_operands=pack,
        im2col=im2col,
        caching_allocator=caching_allocator,
        schedule=ScheduleOptions(direct_convolutions=direct_conv, tuning=tuning or default_tuning()),
        target=target,
    )


@register_pass
class CpuPipeline(ModulePass):
    name = "dlvm-cpu-pipeline"
    summary = "Lower DLVM/linalg IR through fusion, tiling, vectorization and bufferization to the LLVM dialect (CPU)"
    options = (
        *FRONT_OPTIONS,
        Option("threads", int, default_threads(), "threads the parallel loops are split over (1: no async runtime)",
               default_doc="the cores this process may use"),
        Option("vectorize", bool, True, "tile and vectorize (false: scalar loops)"),
        Option("vector-bits", int, 0, "SIMD width for tile sizes: 128, 256, 512, or 0 for the host's"),
        Option("fuse", bool, True, "fuse elementwise producers into consumers and reductions (dlvm-kernel-fusion)"),
        Option("fast-math", bool, True, "f32 exp/log/tanh/erf as vectorizable polynomial approximations"),
        Option("pack", bool, True, "pack the B operand of large matmuls into contiguous panels"),
        Option("im2col", bool, True, "large 2-D convolutions as an im2col copy and a contraction"),
        Option("direct-conv", bool, True, "2-D convolutions whose output rows fill a vector computed in place "
               "(strided ones by phases) and kernel gradients as lane-wise partial sums, before im2col"),
        Option("caching-allocator", bool, True,
               "memref.alloc/dealloc call _mlir_memref_to_llvm_{alloc,aligned_alloc,free} (bound to dlvm_mlir's "
               "caching allocator by its JIT; false: malloc/free)"),
        Option("tuning", str, "", "the tuning database's schedules: use, search (the heavy kernels it lacks, "
               "then use) or off; empty: $DLVM_MLIR_TUNE, else use", default_doc="$DLVM_MLIR_TUNE, else use"),
        Option("stop-at", str, "to-llvm", "stop after this stage", choices=STOP_POINTS),
    )

    def _problem(self) -> str | None:
        if self.tuning and self.tuning not in TUNING_MODES:
            return f"tuning must be one of {', '.join(TUNING_MODES)} (or empty), got '{self.tuning}'"
        if not self.tuning and default_tuning() not in TUNING_MODES:
            return f"$DLVM_MLIR_TUNE must be one of {', '.join(TUNING_MODES)}, got '{default_tuning()}'"
        if not 1 <= self.threads <= 1024:
            return f"threads must be in [1, 1024], got {self.threads}"
        if self.vector_bits not in VECTOR_BITS:
            return f"vector-bits must be 0 (host), 128, 256 or 512, got {self.vector_bits}"
        return None

    def _options(self) -> CpuOptions:
        return cpu_options(
            threads=self.threads,
            vectorize=self.vectorize,
            fuse=self.fuse,
            fast_math=self.fast_math,
            pack=self.pack,
            im2col=self.im2col,
            direct_conv=self.direct_conv,
            vector_bits=self.vector_bits,
            caching_allocator=self.caching_allocator,
            tuning=self.tuning,
        )

    def expand(self) -> Sequence[str | ModulePass] | None:
        """The front stage, then each back-end stage's steps up to ``stop-at``
        (bad options: None, and ``run`` reports them)."""
        if self._problem() is not None:
            return None
        options = self._options()
        front = front_options(self)
        lowering = self.stop_at != "linalg"

        def linalg(module: ir.OpView) -> None:
            to_linalg(module, front)
            if lowering:  # entry points the runtime cannot call are errors (as in lower_to_llvm_cpu)
                entry_point_signatures(module)

        stages: list[tuple[str, list[Step]]] = [("linalg", [Call("linalg", linalg)])]
        for name, steps in CPU_STAGE_STEPS if lowering else ():
            stages.append((name, steps(options)))
            if name == self.stop_at:
                break
        return stage_passes(self, "CPU", stages)

    def run(self, module: ir.Operation) -> None:
        """The whole pipeline as one pass, on a copy in a private context
        (a pass manager runs the steps of ``expand`` instead)."""
        run_lowering_privately(self, module, "dlvm-cpu-pipeline",
                               lambda work: lower_to_llvm_cpu(work, options=self._options(), stop_after=self.stop_at))
