"""The options of the CPU back end, kept free of heavy imports.

:func:`dlvm_mlir.compile` derives its cache key from them before it decides
whether to compile at all, so a warm start must not pay for importing the
compiler (MLIR's dialect modules, networkx): this module imports only the
standard library, the ``_dlvm`` extension and the target description.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field, replace
from functools import lru_cache

from .. import _dlvm
from .target import CpuTarget, host_target

__all__ = ["CodegenOptions", "CpuOptions", "ScheduleOptions", "TUNING_MODES", "default_threads", "default_tuning",
           "host_machine"]

#: :attr:`ScheduleOptions.tuning`
TUNING_MODES = ("off", "use", "search")


@lru_cache(maxsize=1)
def host_machine() -> tuple[str, str, str]:
    """(triple, cpu, features) of this machine as LLVM detects them."""
    triple, cpu, features = _dlvm.host_target()
    return triple, cpu, features


@dataclass(frozen=True)
class CodegenOptions:
    """How LLVM turns the lowered module into machine code."""

    #: LLVM's IR optimization pipeline (the default one of this level)
    opt_level: int = 3
    #: instruction selection, scheduling and register allocation
    codegen_opt_level: int = 3
    #: LLVM CPU name and features; empty: this machine's
    cpu: str = ""
    features: str = ""
    #: LLVM's post-register-allocation schedulers: off by default, they cost
    #: as much as the rest of code generation on the long straight-line
    #: blocks of register tiles (see dialect/lib/CAPI/Codegen.cpp)
    post_ra_scheduling: bool = False
    #: LLVM command-line options, ``name=value`` separated by spaces (as
    #: ``-mllvm``; default ``$DLVM_MLIR_LLVM_OPTIONS``)
    llvm_options: str = field(default_factory=lambda: os.environ.get("DLVM_MLIR_LLVM_OPTIONS", ""))
    #: object partitions compiled on parallel threads (not part of the cache
    #: key: the code is the same, only split differently)
    partitions: int = field(default_factory=lambda: os.cpu_count() or 1, compare=False)

    def __post_init__(self) -> None:
        for name in ("opt_level", "codegen_opt_level"):
            if not 0 <= getattr(self, name) <= 3:
                raise ValueError(f"{name} must be 0..3, got {getattr(self, name)}")

    def key(self) -> str:
        """What affects the generated code (cache keys): the opt level and the machine."""
        triple, cpu, features = host_machine()
        return repr((self.opt_level, self.codegen_opt_level, self.cpu or cpu, self.features or (features if not self.cpu else ""),
                     triple, self.post_ra_scheduling, self.llvm_options))


def default_tuning() -> str:
    """``$DLVM_MLIR_TUNE``, else ``"use"`` (:attr:`ScheduleOptions.tuning`; not checked here)."""
    return os.environ.get("DLVM_MLIR_TUNE", "") or "use"


def default_threads() -> int:
    """The one default thread count of the CPU back end (``compile``, ``CpuOptions``, the
    ``dlvm-cpu-pipeline`` pass): the cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0)) or 1
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


@dataclass(frozen=True)
class ScheduleOptions:
    """Knobs of the CPU schedules; defaults are derived from the target."""

    threads: int = field(default_factory=default_threads)
    # A thread split costs a task hand-off and a join: about a microsecond
    # while the worker of dlvm's async runtime spins (AsyncRuntime.cpp; for
    # 5 ms after its last task), far more when it has to be woken.  Ops below
    # these thresholds (about 5-10 us of work) run on one thread.  MLP
    # 784-512-512-10 training step, median ms over 150 steps, two alternated
    # runs each (Nov 2026, 2 vCPUs): batch 128: 2^12/2^15 4.5, 4.6;
    # 2^14/2^17 4.5, 3.9, 4.0, 4.4; 2^17/2^20 (the thresholds that suited
    # libmlir_async_runtime's sleeping workers) 4.5, 5.3; batch 32 within
    # noise (1.4-1.8) for all three.
    #: minimum iteration count (generic ops) worth splitting over threads
    min_parallel_iterations: int = 1 << 14
    #: minimum multiply-adds (contractions) worth splitting over threads
    min_parallel_flops: int = 1 << 17
    #: tasks per thread of a parallel loop (ops with enough work).  Two per
    #: thread let a thread whose vCPU is preempted or late hand work over:
    #: 2-thread matmuls taking turns with numpy (in-process, 60 calls each),
    #: GFLOP/s with 1 / 2 tasks per thread: 128x784x512 63 / 93,
    #: 512^3 114 / 119, 1024^3 137 / 137 (numpy 104, 128, 143); the MLP
    #: training step within noise (batch 128: 3.70 / 3.86, 3.74 / 3.70,
    #: 3.52 / 3.65 ms).  Four per thread: 99-131 GFLOP/s, step 3-6% slower.
    tasks_per_thread: int = 2
    #: register tile (m, n, k) for contractions; ``None``: from the target
    register_tile: tuple[int, int, int] | None = None
    #: rows (m) of a contraction's register tile; 0: from the target (its vectors, n, are
    #: the packed panels' width, fixed before the schedules run)
    register_rows: int = 0
    #: cache tile targets (m, n, k) for contractions; ``None``:
    #: :data:`.schedule.CONTRACTION_CACHE_TILE`
    cache_tile: tuple[int, int, int] | None = None
    #: vector registers one generic-op tile may occupy
    generic_tile_vectors: int = 4
    #: fuse a contraction's zero-fill init into its parallel tile loops
    fuse_init: bool = True
    #: compute a direct convolution's elementwise consumer (a bias and an activation) in
    #: its tiles, on the accumulators (:data:`.schedule.EPILOGUE_PLANS`)
    fuse_epilogues: bool = True
    #: a kernel several ops share stays a function, generated once (else each
    #: op gets its own copy of the scheduled code). Halves compile time where a
    #: loop was unrolled, but calls need contiguous operands: LSTM gradient
    #: (T=16, Nov 2026) compile 19.1 -> 10.2 s, each step 4.4 -> 6.7 ms;
    #: transformer block step 10.7 -> 6.8 s, 8.1 -> 9.0 ms. Off by default.
    share_kernels: bool = False
    vectorize: bool = True
    #: 2-D convolutions with unit strides computed in place, without an im2col copy
    direct_convolutions: bool = True
    #: output channels in a direct convolution's register tile a full row wide (a narrower
    #: one takes more); 0: :data:`.schedule.DIRECT_CONVOLUTION_ROWS` for the target
    direct_convolution_rows: int = 0
    #: at most this many vectors of output pixels in a direct convolution's register tile;
    #: 0: :data:`.schedule.DIRECT_CONVOLUTION_VECTORS` for the target
    direct_convolution_vectors: int = 0
    #: row vectors a kernel-gradient tile accumulates before its accumulators are stored;
    #: 0: :data:`.schedule.KERNEL_GRADIENT_SPAN` (grouped: ``GROUPED_KERNEL_GRADIENT_SPAN``)
    kernel_gradient_span: int = 0
    #: images per step of a kernel gradient along the filters; 0: as many as fit the
    #: second-level cache, at most :data:`.schedule.KERNEL_GRADIENT_FILTER_IMAGES`
    kernel_gradient_images: int = 0
    #: a kernel gradient's register tile: input channels x filters (lane-wise partial sums)
    #: or x vectors of filters (along the filters); empty: from the target
    kernel_gradient_tile: tuple[int, int] | tuple[()] = ()
    #: the tuning database (:mod:`.tuning`): ``"use"`` its schedules, ``"search"`` (and
    #: record) schedules of the kernels it lacks, or ``"off"``; default ``$DLVM_MLIR_TUNE``
    #: (``use``)
    tuning: str = field(default_factory=default_tuning)

    def __post_init__(self) -> None:
        if self.tuning not in TUNING_MODES:
            raise ValueError(f"tuning must be one of {', '.join(TUNING_MODES)}, got {self.tuning!r}")


@dataclass(frozen=True)
class CpuOptions:
    """Options of the CPU pipeline and its code generation."""

    threads: int = field(default_factory=default_threads)
    #: LLVM's IR pipeline (CodegenOptions.opt_level).  1 since the eleventh session (it was
    #: 3): the kernels arrive tiled and vectorized, and the higher levels' passes changed no
    #: measured run time (``ab_variants.py``, in turns, O3 / O2 / O1: CNN step batch 128
    #: 77.4 / 76.7 / - ms and, in a second pair, O2 / O1 81.1 / 81.1; MLP step batch 128
    #: 1.68 / 1.71 / - and 1.85 / 1.82, batch 32 0.76 / 0.72; 3x3 128->128 forward 7.04 / 7.09
    #: (O2 / O1); the char-LM transformer step 43.2-44.4 / 43.8-44.7) while compiles got
    #: shorter: the CNN step's LLVM stage 2.70 (O3) -> 2.25 (O2) -> 1.98 s (O1), its whole
    #: compile 4.0 -> 3.5 s (O2 -> O1), the MLP step 1.4 -> 1.1 s, a convolution 0.4 -> 0.2 s
    opt_level: int = 1
    vectorize: bool = True
    fuse_elementwise: bool = True
    #: replace f32 tanh/exp/log/erf/... by vectorizable polynomial approximations
    fast_math_approximations: bool = True
    #: pack B of large matmuls into contiguous register-tile panels
    pack_operands: bool = True
    #: 2-D convolutions as an im2col copy and a contraction (backend/conv_im2col.py)
    im2col: bool = True
    #: memref.alloc/dealloc call MLIR's generic allocation functions, which
    #: libdlvm_runtime.so implements on a caching allocator (False: malloc/free)
    caching_allocator: bool = True
    #: LLVM's code generation (see CodegenOptions)
    codegen_opt_level: int = 3
    post_ra_scheduling: bool = False
    schedule: ScheduleOptions = field(default_factory=ScheduleOptions)
    target: CpuTarget = field(default_factory=host_target)

    def __post_init__(self) -> None:
        if self.threads < 1:
            raise ValueError(f"threads must be >= 1, got {self.threads}")
        if self.schedule.threads != self.threads or self.schedule.vectorize != self.vectorize:
            object.__setattr__(
                self, "schedule", replace(self.schedule, threads=self.threads, vectorize=self.vectorize)
            )

    def codegen(self) -> CodegenOptions:
        """How LLVM compiles the lowered module (for this machine)."""
        return CodegenOptions(
            opt_level=self.opt_level, codegen_opt_level=self.codegen_opt_level,
            post_ra_scheduling=self.post_ra_scheduling,
        )

    def key(self) -> str:
        """Stable text identifying everything that affects the generated code (the tuning
        database's stamp included, unless tuning is off)."""
        from .tuning import database_stamp

        return repr(
            (self.threads, self.vectorize, self.fuse_elementwise,
             self.fast_math_approximations, self.pack_operands, self.im2col, self.caching_allocator, self.schedule,
             self.target.key(), self.codegen().key(), database_stamp() if self.schedule.tuning != "off" else "")
        )
