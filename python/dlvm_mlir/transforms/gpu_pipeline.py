"""dlvm-gpu-pipeline: DLVM (or linalg) IR to GPU kernels and host code for CUDA.

A ModulePass rather than pipeline text: the schedules are computed per op in
Python and applied with the transform interpreter, and the matmul kernels are
generated IR.  The stages (see :mod:`dlvm_mlir.backend.gpu` and docs/gpu.md)::

    linalg      dlvm-differentiate (when the module declares derivatives),
                dlvm-optimize (optimize=true), dlvm-to-linalg
    entry-points, fuse, bufferize,
    map         blocks/threads tiling, matmul kernels: every op in a gpu.launch
    host        device buffers and copies
    outline     gpu.func kernels in one gpu.module with the NVVM target
    device      kernels in the NVVM/LLVM dialects
    host-llvm   host code in the LLVM dialect (CUDA runtime calls)
    binary      gpu.binary with PTX (format=isa) or a cubin (format=bin)

``stop-at=<stage>`` prints the IR after that stage, e.g.
``dlvm-opt --dlvm-gpu-pipeline='stop-at=map'`` for the tiled ``gpu.launch``
ops or ``stop-at=outline`` for the kernels as ``gpu.func``.

In a pass manager the pass is its stages' steps (``expand``, as
``dlvm-cpu-pipeline``): upstream passes are passes of that pass manager and
Python steps are named ``GpuPipeline.<stage>`` or ``GpuPipeline.<stage>/<step>``,
so ``--mlir-timing`` and ``--mlir-print-ir-after-all`` see each.
"""

from __future__ import annotations

from collections.abc import Sequence

from mlir import ir

from dlvm_mlir.backend.cpu import entry_point_signatures
from dlvm_mlir.backend.gpu import GPU_STAGE_NAMES, GpuOptions, gpu_stage_steps, lower_to_gpu
from dlvm_mlir.backend.gpu_schedule import GpuScheduleOptions
from dlvm_mlir.backend.runtime import FunctionSignature
from dlvm_mlir.passes import Call, ModulePass, Option, Step, register_pass
from dlvm_mlir.transforms._lowering import (
    FRONT_OPTIONS,
    front_options,
    run_lowering_privately,
    stage_passes,
    to_linalg,
)

STOP_POINTS = ("linalg", *GPU_STAGE_NAMES)


@register_pass
class GpuPipeline(ModulePass):
    name = "dlvm-gpu-pipeline"
    summary = "Lower DLVM/linalg IR to tiled GPU kernels (PTX/cubin for NVIDIA) and CUDA host code"
    options = (
        *FRONT_OPTIONS,
        Option("chip", str, "sm_90", "NVIDIA GPU architecture (sm_XY)"),
        Option("features", str, "+ptx80", "PTX ISA features of the NVPTX back end"),
        Option("opt-level", int, 3, "optimization level of the NVPTX back end (0-3)"),
        Option("format", str, "isa", "kernel binary format: isa (PTX), bin (cubin via ptxas), auto",
               choices=("isa", "bin", "auto")),
        Option("stop-at", str, "binary", "stop after this stage", choices=STOP_POINTS),
        Option("block-threads", int, 256, "threads per block of elementwise and reduction kernels"),
        Option("mma", str, "auto", "tensor cores: auto (f16 matmuls), tf32 (also f32 matmuls, TF32 precision), none",
               choices=("auto", "tf32", "none")),
        Option("matmul-kernels", bool, True, "use the shared-memory matmul kernels for contractions"),
        Option("split-reductions", bool, True,
               "split reductions with few outputs into a parallel partial pass and a combining pass"),
        Option("fuse", bool, True, "fuse elementwise producers into consumers and reductions"),
    )

    def _problem(self) -> str | None:
        if self.opt_level not in range(4):
            return f"opt-level must be 0..3, got {self.opt_level}"
        if not self.chip.startswith("sm_"):
            return f"chip must look like sm_90, got '{self.chip}'"
        if not 1 <= self.block_threads <= 1024:
            return f"block-threads must be in [1, 1024], got {self.block_threads}"
        return None

    def _options(self) -> GpuOptions:
        return GpuOptions(
            chip=self.chip,
            features=self.features,
            opt_level=self.opt_level,
            format=self.format,
            fuse_elementwise=self.fuse,
            schedule=GpuScheduleOptions(
                block_threads=self.block_threads, mma=self.mma, matmul_kernels=self.matmul_kernels,
                split_reductions=self.split_reductions,
            ),
        )

    def expand(self) -> Sequence[str | ModulePass] | None:
        """The front stage, then each back-end stage's steps up to ``stop-at``
        (bad options: None, and ``run`` reports them)."""
        if self._problem() is not None:
            return None
        options = self._options()
        front = front_options(self)
        lowering = self.stop_at != "linalg"
        signatures: list[FunctionSignature] = []

        def linalg(module: ir.OpView) -> None:
            to_linalg(module, front)
            if lowering:  # taken before entry-points, for the host stage (as in lower_to_gpu)
                signatures[:] = entry_point_signatures(module)

        stages: list[tuple[str, list[Step]]] = [("linalg", [Call("linalg", linalg)])]
        for name, steps in gpu_stage_steps(options, lambda: signatures) if lowering else ():
            stages.append((name, steps))
            if name == self.stop_at:
                break
        return stage_passes(self, "GPU", stages)

    def run(self, module: ir.Operation) -> None:
        """The whole pipeline as one pass, on a copy in a private context
        (a pass manager runs the steps of ``expand`` instead)."""
        run_lowering_privately(self, module, "dlvm-gpu-pipeline",
                               lambda work: lower_to_gpu(work, self._options(), stop_after=self.stop_at))
