"""Run one program through every stage and classify what happened (needs MLIR).

Stages, in order (the first one that does not succeed classifies the program):

    parse          parse + verify, and print + parse again (round trip)
    declare        add gradient / tangent declarations for float functions
    canonicalize   canonicalize,cse
    differentiate  dlvm-differentiate (its output is the interpreter's program)
    optimize       dlvm-optimize
    cpu-pipeline   dlvm-cpu-pipeline with random options (some programs)
    compile        dlvm_mlir.compile
    interpret      call every public function through dlvm_mlir.interpreter on random
                   inputs (seeded)
    run            the same calls to the compiled code (not made when the interpreter
                   found the program does not terminate or, without bounds checks,
                   that it indexes out of bounds)
    compare        compiled vs interpreted results, with dtype tolerances
    gpu-emulate    the CUDA back end's pipeline up to its kernels, the kernels run on the
                   CPU (dlvm_mlir.backend.gpu_emulator; some programs)
    gpu-compare    the emulated GPU's results vs the interpreter's, for the calls that
                   compared (so on inputs where the program terminates and stays in bounds)

Classes: ``ok``, ``located`` (a DLVMError naming a line of the program),
``unlocated`` (a DLVMError without one), ``traceback`` (any other
exception), ``ice`` (a DLVMError saying "internal compiler error"),
``invalid-ir`` (the printed program does not parse back), ``miscompile``; the
worker adds ``crash`` (the process died; ``ice`` when it died in a stage the
crash guard covers, see :data:`GUARDED_STAGES`) and ``timeout``.

The comparison knows ill-conditioned inputs: when compiled and interpreted
results differ beyond the tolerance, the interpreter runs again in float64,
on the same inputs and on slightly perturbed ones; an element whose float64
value moves under the perturbation beyond the tolerance, or by as much as
the difference, is not reported.
"""

from __future__ import annotations

import inspect
import math
import random
import re
import traceback
import zlib
from collections.abc import Callable
from typing import Any

import numpy as np

__all__ = [
    "BAD_CLASSES",
    "COMPILE_STAGES",
    "GUARDED_STAGES",
    "FILENAME",
    "STAGES",
    "classify_exception",
    "compare_results",
    "is_bad",
    "make_inputs",
    "run_program",
    "signature",
]

FILENAME = "fuzz.mlir"
STAGES = ("parse", "declare", "canonicalize", "differentiate", "optimize", "cpu-pipeline",
          "compile", "interpret", "run", "compare", "gpu-emulate", "gpu-compare")
COMPILE_STAGES = STAGES[:7]
#: stages that dlvm-opt and compile() run in the compiler process (a crash there
#: reaches the user as an internal compiler error; LLVM code generation, in
#: "compile", included); the compiled code ("run") runs in the user's process,
#: and so does the emulated GPU here (its pipeline in process: the fuzzer's test
#: of the GPU back end, not of the crash guard)
GUARDED_STAGES = STAGES[:7]
BAD_CLASSES = ("unlocated", "traceback", "crash", "ice", "invalid-ir", "miscompile")
CLASSES = ("ok", "located", "unlocated", "traceback", "crash", "timeout", "ice", "invalid-ir", "miscompile")

_LOCATION = re.compile(r"(?<![\w.])([\w.<>-]+):(\d+):(\d+)(?!\d)")


def is_bad(cls: str, stage: str) -> bool:
    """Whether an outcome is a failure of dlvm-mlir (a timeout counts while compiling, not while running)."""
    if cls == "timeout":
        return stage in COMPILE_STAGES
    return cls in BAD_CLASSES


# --------------------------------------------------------------------------
# Classification
# --------------------------------------------------------------------------


def classify_exception(exc: BaseException, n_lines: int, text: str = "") -> tuple[str, str]:
    """(class, message) of an exception raised by a stage.

    Located: a position inside the program, or a position that the program's own ``loc(...)``
    attributes name (an error at an op whose location the source spells out is where the
    user said that op is)."""
    from dlvm_mlir.errors import DLVMError

    if not isinstance(exc, DLVMError):
        return "traceback", "".join(traceback.format_exception(exc)).rstrip()
    message = str(exc)
    if "internal compiler error" in message:
        return "ice", message
    cause = exc.__cause__
    if cause is not None and not isinstance(cause, (DLVMError, FloatingPointError, RecursionError, MemoryError)):
        from dlvm_mlir.interpreter import InterpreterError

        if isinstance(exc, InterpreterError):
            # the interpreter wraps a bug in a handler into an InterpreterError
            detail = "".join(traceback.format_exception(cause)).rstrip()
            return "traceback", f"{message}\n{detail}"
    for match in _LOCATION.finditer(message):
        if match.group(1) == FILENAME and 1 <= int(match.group(2)) <= n_lines:
            return "located", message
        named = f'{match.group(1)}":{match.group(2)}:{match.group(3)})'
        if int(match.group(2)) >= 1 and named in text:
            return "located", message
    return "unlocated", message


def _first_error_line(message: str) -> str:
    lines = [line.strip() for line in message.split("\n") if line.strip()]
    for line in lines:
        if ": error: " in line or line.startswith("error: "):
            return line
    return lines[0] if lines else ""


def normalize(text: str) -> str:
    """A message with names, numbers, types and locations blanked (for grouping)."""
    text = re.sub(r"\S+:\d+:\d+:\s*", "", text)
    text = re.sub(r"loc\([^)]*\)", "loc", text)
    text = re.sub(r"tensor<[^>]*>", "T", text)
    text = re.sub(r"memref<[^>]*>", "M", text)
    text = re.sub(r"%[\w$.#-]+", "%", text)
    text = re.sub(r"@\"?[\w$.]+\"?", "@", text)
    text = re.sub(r"'[^']*'", "'_'", text)
    text = re.sub(r"0x[0-9a-fA-F]+", "N", text)
    text = re.sub(r"-?\d+(\.\d+)?(e[-+]?\d+)?", "N", text)
    text = re.sub(_ELEMENT.format("f16|bf16|f32|f64|i1|i8|i16|i32|i64|index"), "E", text)
    return text[:200]


def signature(cls: str, stage: str, message: str) -> str:
    """What identifies a distinct failure: class, stage and the normalized gist of the message."""
    if cls == "traceback":
        lines = [line for line in message.split("\n") if line.strip()]
        frames = re.findall(r'File "([^"]+)", line \d+, in (\S+)', message)
        frames = [(f, fn) for f, fn in frames if "dlvm_mlir" in f] or frames
        where = f"{frames[-1][0].split('dlvm_mlir/')[-1]}:{frames[-1][1]}" if frames else ""
        gist = lines[-1] if lines else ""
        return f"{cls}|{stage}|{where}|{normalize(gist)}"
    if cls == "crash":
        match = re.search(r"Assertion `(.*?)' failed", message) or re.search(r"(LLVM ERROR: .*)", message)
        gist = match.group(1) if match else message.split("\n")[0]
        return f"{cls}|{stage}|{normalize(gist)}"
    if cls == "miscompile":
        # which kind of function differs: a synthesized VJP or JVP, or a primal one
        match = re.search(r"@(\S+) ", message)
        name = match.group(1) if match else ""
        kind = "vjp" if "__fz_grad" in name else "jvp" if "__fz_jvp" in name else "function"
        return f"{cls}|{stage}|{kind}"
    return f"{cls}|{stage}|{normalize(_first_error_line(message))}"


# --------------------------------------------------------------------------
# Inputs and comparison
# --------------------------------------------------------------------------

_FLOAT_SPECIALS = np.array([0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, np.nan, 1e30, -1e30, 1e-30, 0.5, 2.0])
_MODES = ("normal", "positive", "unit", "special")
_MODE_WEIGHTS = (0.45, 0.25, 0.15, 0.15)


def _np_dtype(element: str) -> np.dtype | None:
    table = {"f16": np.float16, "f32": np.float32, "f64": np.float64, "i1": np.bool_, "i8": np.int8,
             "i16": np.int16, "i32": np.int32, "i64": np.int64, "ui8": np.uint8, "ui16": np.uint16,
             "ui32": np.uint32, "ui64": np.uint64, "index": np.int64}
    kind = table.get(element)
    return None if kind is None else np.dtype(kind)


def parse_type(text: str) -> tuple[str, tuple[int, ...] | None] | None:
    """``tensor<2x3xf32>`` -> ("f32", (2, 3)); ``f32`` -> ("f32", None); None for anything else."""
    match = re.fullmatch(r"tensor<((?:\d+x)*)([a-z0-9]+)>", text)
    if match:
        dims = tuple(int(d) for d in match.group(1).split("x")[:-1])
        return match.group(2), dims
    if re.fullmatch(r"[a-z0-9]+", text):
        return text, None
    return None


def make_inputs(types: list[str], rng: np.random.Generator) -> list[Any] | None:
    """Random arguments for a function of these parameter types (None if one is not supported)."""
    mode = _MODES[rng.choice(len(_MODES), p=_MODE_WEIGHTS)]
    args = []
    for typ in types:
        parsed = parse_type(typ)
        if parsed is None:
            return None
        element, shape = parsed
        dtype = _np_dtype(element)
        if dtype is None:
            return None
        size = shape if shape is not None else ()
        if math.prod(d for d in size if d) > np.iinfo(np.intp).max // 8:
            return None  # numpy cannot make it, even with a zero dimension (seed 404: 2^63-1 x 0)
        if dtype.kind == "f":
            if mode == "positive":
                value = rng.uniform(0.1, 3.0, size)
            elif mode == "unit":
                value = rng.uniform(-0.9, 0.9, size)
            else:
                value = rng.standard_normal(size)
            if mode == "special":
                mask = rng.random(size) < 0.15
                value = np.where(mask, rng.choice(_FLOAT_SPECIALS, size), value)
            value = np.asarray(value).astype(dtype)
        elif dtype.kind == "b":
            value = rng.random(size) < 0.5
        elif element == "index":
            value = rng.integers(0, 3, size).astype(dtype)
        else:
            value = rng.integers(-4, 6, size).astype(dtype)
        args.append(value if shape is not None else dtype.type(np.asarray(value).item()))
    return args


_ELEMENT = r"(?:(?<![\w.])|(?<=[0-9?]x)|(?<=<x))(?:{})(?![\w.])"
"""An element type name, alone or in a shaped type (``tensor<4xf32>``)."""


def tolerance_for(text: str) -> tuple[float, float, float]:
    """(rtol, atol, eps) for the least precise float type the program uses."""
    if re.search(_ELEMENT.format("bf16"), text):
        return 4e-2, 4e-2, 2.0**-8
    if re.search(_ELEMENT.format("f16"), text):
        return 1e-2, 1e-2, 2.0**-11
    if re.search(_ELEMENT.format("f32"), text):
        return 2e-4, 1e-5, 2.0**-24
    return 1e-9, 1e-11, 2.0**-53


def _as_list(value: Any) -> list[np.ndarray]:
    if value is None:
        return []
    values = value if isinstance(value, tuple) else (value,)
    return [np.asarray(v) for v in values]


def _mismatch(compiled: np.ndarray, ref: np.ndarray, rtol: float, atol: float, extra: np.ndarray | float = 0.0) -> np.ndarray:
    """Boolean mask of elements where ``compiled`` and ``ref`` differ beyond the tolerance."""
    if compiled.dtype.kind in "biu" or ref.dtype.kind in "biu":
        if compiled.dtype.kind == "f" or ref.dtype.kind == "f":
            c, r = compiled.astype(np.float64), ref.astype(np.float64)
        else:
            return np.asarray(compiled.astype(np.int64) != ref.astype(np.int64)) & ~np.asarray(np.asarray(extra) > 0)
    else:
        c, r = compiled.astype(np.float64), ref.astype(np.float64)
    with np.errstate(all="ignore"):
        c_nan, r_nan = np.isnan(c), np.isnan(r)
        finite = np.isfinite(r)
        scale = np.max(np.abs(r[finite]), initial=0.0) if finite.any() else 0.0
        allowed = atol + rtol * np.abs(r) + rtol * 1e-2 * scale + extra
        diff = np.abs(c - r)
        bad = diff > allowed
        bad |= c_nan != r_nan
        both_inf = np.isinf(c) & np.isinf(r) & (np.sign(c) == np.sign(r))
        bad &= ~both_inf
        bad &= ~(c_nan & r_nan)
        # rtol * |inf| allowed anything against an infinite reference: a finite value there
        # is a mismatch unless it is huge, as a refinement that removes an overflow or an
        # underflow leaves it (log(exp(-1e30)) is -1e30 after dlvm-algebra-simplify's
        # log_of_exp, -inf evaluated as written: fuzz seed 4343)
        bad |= np.isinf(r) & np.isfinite(c) & (np.abs(c) < HUGE)
    return np.asarray(bad)


#: the least magnitude of a finite result accepted against an infinite reference
HUGE = 1e20


def _perturbed(args: list[Any], eps: float, rng: np.random.Generator) -> list[Any]:
    out = []
    for a in args:
        arr = np.asarray(a)
        if arr.dtype.kind == "f":
            x = arr.astype(np.float64)
            with np.errstate(all="ignore"):
                delta = 8 * eps * rng.uniform(-1, 1, x.shape) * np.maximum(np.abs(x), 1.0)
                delta = np.where(np.isfinite(x), delta, 0.0)
                x = x + delta
            out.append(x if arr.ndim else np.float64(x))
        else:
            out.append(a)
    return out


def compare_results(
    fn: str,
    compiled: Any,
    reference: Any,
    rerun: Callable[[list[Any] | None], Any],
    args: list[Any],
    text: str,
    rng: np.random.Generator,
) -> str | None:
    """A miscompile message, or None when compiled and interpreted results agree.

    ``rerun(None)`` runs the interpreter in float64 on ``args``;
    ``rerun(perturbed_args)`` on other inputs.
    """
    rtol, atol, eps = tolerance_for(text)
    got, want = _as_list(compiled), _as_list(reference)
    if len(got) != len(want):
        return f"miscompile: @{fn} returns {len(got)} value(s), the interpreter {len(want)}"
    bad = []
    for i, (g, w) in enumerate(zip(got, want)):
        if g.shape != w.shape:
            return f"miscompile: @{fn} result #{i} has shape {g.shape}, the interpreter's {w.shape}"
        mask = _mismatch(g, w, rtol, atol)
        if mask.any():
            bad.append(i)
    if not bad:
        return None
    try:
        exact = _as_list(rerun(None))
        spreads = [np.zeros(w.shape) for w in want]
        unstable = [np.zeros(w.shape, dtype=bool) for w in want]
        for _ in range(2):
            moved = _as_list(rerun(_perturbed(args, eps, rng)))
            for i in bad:
                e, m = exact[i].astype(np.float64), moved[i].astype(np.float64)
                with np.errstate(all="ignore"):
                    d = np.abs(e - m)
                    unstable[i] |= np.isnan(e) != np.isnan(m)
                    unstable[i] |= np.isinf(e) != np.isinf(m)
                    # an 8-ulp change of the inputs moves it beyond the tolerance: a
                    # correct float32 evaluation (another summation order) may too
                    unstable[i] |= _mismatch(m, e, rtol, atol)
                    spreads[i] = np.maximum(spreads[i], np.where(np.isfinite(d), d, 0.0))
    except Exception:  # noqa: BLE001 - the float64 reference is best effort
        exact, spreads, unstable = None, None, None
    messages = []
    for i in bad:
        g, w = got[i], want[i]
        mask = _mismatch(g, w, rtol, atol)
        if g.dtype.kind == "f":
            # at the edge of the range: one side overflowed, the other is within 1/16 of the
            # largest finite value (a different summation order decides; not reported)
            big = float(np.finfo(g.dtype).max) / 16
            with np.errstate(all="ignore"):
                gf, wf = g.astype(np.float64), w.astype(np.float64)
                mask &= ~((np.isinf(gf) & (np.abs(wf) > big)) | (np.isinf(wf) & (np.abs(gf) > big)))
        if exact is not None:
            if g.dtype.kind == "f":
                # an infinite exact result: an intermediate that overflows in the
                # narrower type (1e30 * 1e30 in f32) meets the infinity as inf - inf
                with np.errstate(all="ignore"):
                    mask &= ~(np.isnan(g.astype(np.float64)) & np.isinf(exact[i].astype(np.float64)))
                    # an exact result beyond the narrower type's range: an infinity of its
                    # sign is the correctly rounded value (seed 707: 7.8e53 in f32; the
                    # interpreter's f32 intermediates cancelled to 0 on another order)
                    e64 = exact[i].astype(np.float64)
                    beyond = np.abs(e64) > float(np.finfo(g.dtype).max)
                    mask &= ~(beyond & np.isinf(g.astype(np.float64)) & (np.sign(g.astype(np.float64)) == np.sign(e64)))
                    # an intermediate overflowed in the narrower type on both sides (the float32
                    # interpreter is not finite either, where float64 is): inf or NaN then depends
                    # on the order of the sum (seed 808: 1e30-sized products meeting in a dot)
                    mask &= ~(~np.isfinite(g.astype(np.float64)) & ~np.isfinite(w.astype(np.float64))
                              & np.isfinite(e64))
            extra = 32 * spreads[i]
            if g.dtype.kind == "f" and w.dtype.kind == "f" and w.dtype != np.float64:
                # rounding of an ill-conditioned result (a long sum that cancels): the
                # interpreter's own error from the float64 value, at its worst over the
                # tensor, bounds what another summation order may do (up to 4 times)
                with np.errstate(all="ignore"):
                    own = np.abs(w.astype(np.float64) - exact[i].astype(np.float64))
                worst = float(np.max(np.where(np.isfinite(own), own, 0.0), initial=0.0))
                extra = np.maximum(extra, 4 * worst)
            mask &= _mismatch(g, w, rtol, atol, extra)
            mask &= _mismatch(g, exact[i].astype(g.dtype if g.dtype.kind != "f" else np.float64), rtol, atol, extra)
            mask &= ~unstable[i]
        if not mask.any():
            continue
        where = tuple(int(k) for k in np.argwhere(mask)[0]) if mask.ndim else ()
        gv = g[where] if g.ndim else g[()]
        wv = w[where] if w.ndim else w[()]
        ev = exact[i][where] if exact is not None and exact[i].ndim else (exact[i][()] if exact is not None else None)
        messages.append(
            f"miscompile: @{fn} result #{i} ({g.dtype}{list(g.shape)}): {int(mask.sum())} of {mask.size} "
            f"element(s) differ, first at {list(where)}: compiled {gv!r}, interpreter {wv!r}, float64 {ev!r}"
        )
    return "\n".join(messages) or None


# --------------------------------------------------------------------------
# Derivative declarations
# --------------------------------------------------------------------------


def _is_float(typ: Any) -> bool:
    from mlir import ir

    if isinstance(typ, ir.RankedTensorType):
        typ = ir.RankedTensorType(typ).element_type
    return isinstance(typ, (ir.F16Type, ir.BF16Type, ir.F32Type, ir.F64Type))


def declare_derivatives(module: Any, rng: random.Random, max_functions: int = 2) -> list[str]:
    """Text of gradient / tangent declarations for some float functions of ``module``."""
    from mlir import ir

    from dlvm_mlir.dialects.dlvm import DerivativeDecl

    functions = []
    names = set()
    declared_of = set()
    for top in module.body.operations:
        op = top.operation
        if op.name != "func.func":
            continue
        name = ir.StringAttr(op.attributes["sym_name"]).value
        names.add(name)
        decl = DerivativeDecl.of_function(op)
        if decl is not None:
            declared_of.add(decl.of)
            continue
        if len(op.regions[0].blocks) == 0 or "sym_visibility" in op.attributes:
            continue
        functions.append((name, op))
    texts = []
    rng.shuffle(functions)
    for name, op in functions[:max_functions]:
        if name in declared_of and rng.random() < 0.7:
            continue
        ftype = ir.FunctionType(ir.TypeAttr(op.attributes["function_type"]).value)
        float_in = [i for i, t in enumerate(ftype.inputs) if _is_float(t)]
        float_out = [i for i, t in enumerate(ftype.results) if _is_float(t)]
        if not float_in or not float_out:
            continue
        for kind in ("gradient", "tangent"):
            if rng.random() < (0.3 if kind == "tangent" else 0.25):
                continue
            if len(float_in) == len(ftype.inputs) and rng.random() < 0.5:
                wrt = None
            else:
                wrt = tuple(sorted(rng.sample(float_in, rng.randint(1, len(float_in)))))
            from_ = None if len(float_out) == len(ftype.results) and rng.random() < 0.7 else rng.choice(float_out)
            keeping = tuple(sorted(rng.sample(range(len(ftype.results)), 1))) if rng.random() < 0.2 else ()
            seedable = kind == "gradient" and rng.random() < 0.6
            decl = DerivativeDecl(kind, name, wrt, keeping, from_, seedable)
            base = f"{name}__fz_{'grad' if kind == 'gradient' else 'jvp'}"
            new_name, n = base, 0
            while new_name in names:
                n += 1
                new_name = f"{base}{n}"
            names.add(new_name)
            try:
                with module.context, ir.Location.unknown():
                    expected = decl.expected_type(ftype)
                    attr = decl.to_attr()
                ins = ", ".join(str(t) for t in expected.inputs)
                outs = ", ".join(str(t) for t in expected.results)
                texts.append(f"func.func private @{new_name}({ins}) -> ({outs})\n"
                             f"    attributes {{{decl.attr_name} = {attr}}}")
            except Exception:  # noqa: BLE001 - a declaration the dialect refuses is simply not added
                continue
    return texts


# --------------------------------------------------------------------------
# The stages
# --------------------------------------------------------------------------


def _compile_accepts(name: str) -> bool:
    from dlvm_mlir.compiler import compile as compile_program

    return name in inspect.signature(compile_program).parameters


def _cpu_pipeline_text(rng: random.Random) -> str:
    options = []
    if rng.random() < 0.5:
        options.append(f"threads={rng.choice((1, 2, 3, 4))}")
    if rng.random() < 0.3:
        options.append("vectorize=false")
    if rng.random() < 0.4:
        options.append(f"vector-bits={rng.choice((128, 256, 512))}")
    if rng.random() < 0.2:
        options.append("fuse=false")
    if rng.random() < 0.2:
        options.append("optimize=false")
    return "dlvm-cpu-pipeline" + ("{" + " ".join(options) + "}" if options else "")


def run_program(
    text: str,
    *,
    seed: int,
    declare: bool = True,
    cpu_pipeline: float = 0.3,
    gpu_emulate: float = 0.25,
    on_stage: Callable[[str], None] | None = None,
    on_text: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """Run ``text`` through the stages; a JSON-able outcome (class, stage, message, final text, ...)."""
    import dlvm_mlir
    from dlvm_mlir.backend.runtime import OutOfMemoryError
    from dlvm_mlir.errors import DLVMError
    from dlvm_mlir.interpreter import Interpreter, InterpreterError
    from dlvm_mlir.passes import run_pipeline
    from dlvm_mlir.parsing import parse_module

    # independent streams, so that replaying a program with its declarations already in
    # the text (declare=False) takes the same choices and inputs
    declare_rng = random.Random(seed * 3 + 1)
    pipeline_rng = random.Random(seed * 3 + 2)
    gpu_rng = random.Random(f"gpu {seed}")
    outcome: dict[str, Any] = {"cls": "ok", "stage": "", "message": "", "text": text, "calls": 0, "notes": []}
    stage = "parse"

    def enter(name: str) -> None:
        nonlocal stage
        stage = name
        if on_stage is not None:
            on_stage(name)

    def parse(source: str) -> Any:
        return parse_module(source, dlvm_mlir.make_context(), FILENAME)

    def fail(cls: str, message: str) -> dict[str, Any]:
        outcome.update(cls=cls, stage=stage, message=message)
        return outcome

    try:
        enter("parse")
        module = parse(text)
        printed = str(module)
        try:
            parse_module(printed, dlvm_mlir.make_context(), "printed.mlir")
        except DLVMError as err:
            return fail("invalid-ir", f"the printed program does not parse back: {err}\n--- printed:\n{printed}")
        if declare:
            enter("declare")
            extra = declare_derivatives(module, declare_rng)
            if extra:
                text = text.rstrip("\n") + "\n" + "\n".join(extra) + "\n"
                outcome["text"] = text
                if on_text is not None:
                    on_text(text)
                module = parse(text)
        n_lines = text.count("\n") + 1
        enter("canonicalize")
        run_pipeline(parse(text), "builtin.module(canonicalize,cse)", reproducer=False)
        enter("differentiate")
        differentiated = parse(text)
        run_pipeline(differentiated, "builtin.module(dlvm-differentiate)", reproducer=False)
        enter("optimize")
        optimized = parse(differentiated.operation.get_asm(enable_debug_info=True))
        run_pipeline(optimized, "builtin.module(dlvm-optimize)", reproducer=False)
        if pipeline_rng.random() < cpu_pipeline:
            enter("cpu-pipeline")
            lowered = parse(optimized.operation.get_asm(enable_debug_info=True))
            pipeline = _cpu_pipeline_text(pipeline_rng)
            outcome["notes"].append(pipeline)
            run_pipeline(lowered, f"builtin.module({pipeline})", reproducer=False)
            del lowered
        enter("compile")
        kwargs = {"filename": FILENAME}
        bounds_checked = _compile_accepts("check_bounds")
        if bounds_checked:
            kwargs["check_bounds"] = True
        exe = dlvm_mlir.compile(text, **kwargs)
    except Exception as exc:  # noqa: BLE001 - classified
        cls, message = classify_exception(exc, text.count("\n") + 1, text)
        return fail(cls, message)

    # run and compare every public function
    from mlir import ir

    functions = {}
    for top in differentiated.body.operations:
        op = top.operation
        if op.name == "func.func" and len(op.regions[0].blocks):
            ftype = ir.FunctionType(ir.TypeAttr(op.attributes["function_type"]).value)
            functions[ir.StringAttr(op.attributes["sym_name"]).value] = [str(t) for t in ftype.inputs]
    interpreter = Interpreter(differentiated)
    interpreter64 = Interpreter(differentiated, dtype=np.float64)
    compared: list[tuple[str, list[Any], Any, np.random.Generator]] = []
    for name in sorted(exe.function_names):
        if name not in functions:
            continue
        nrng = np.random.default_rng([seed, zlib.crc32(name.encode())])
        args = make_inputs(functions[name], nrng)
        if args is None:
            outcome["notes"].append(f"@{name}: unsupported argument types")
            continue
        # the interpreter first: a program that does not terminate or that indexes out of
        # bounds on these inputs is not run compiled (it would overflow the stack or
        # corrupt the heap) unless the compiled code checks bounds
        reference, interp_error = None, None
        try:
            enter("interpret")
            reference = interpreter.run(name, *args)
        except InterpreterError as exc:
            interp_error = exc
        except Exception as exc:  # noqa: BLE001
            cls, message = classify_exception(exc, n_lines, text)
            return fail(cls, message)
        if interp_error is not None:
            gist = str(interp_error).splitlines()[0][:200]
            outcome["notes"].append(f"@{name}: interpreter: {gist}")
            if "recursion" in gist or not bounds_checked:
                continue
        try:
            enter("run")
            compiled = exe[name](*[np.copy(a) if isinstance(a, np.ndarray) else a for a in args])
            outcome["calls"] += 1
        except OutOfMemoryError as exc:
            # a limit of the machine (the worker's address space), as the interpreter's MemoryError
            outcome["notes"].append(f"@{name}: {exc}")
            continue
        except Exception as exc:  # noqa: BLE001 - classified
            cls, message = classify_exception(exc, n_lines, text)
            if interp_error is not None and cls == "located":
                outcome["notes"].append(f"@{name}: both raised")
                continue
            return fail(cls, message)
        if interp_error is not None:
            # the compiled code ran where the interpreter failed: a Python error in an
            # interpreter handler is a bug there; an InterpreterError of its own is a
            # difference in what the two accept (reported, not a failure)
            cls, message = classify_exception(interp_error, n_lines, text)
            if cls == "traceback":
                enter("interpret")
                return fail(cls, message)
            outcome["notes"].append(f"@{name}: the compiled code returned where the interpreter raised")
            continue
        enter("compare")

        def rerun(new_args: list[Any] | None, name: str = name, args: list[Any] = args) -> Any:
            return interpreter64.run(name, *(args if new_args is None else new_args))

        try:
            problem = compare_results(name, compiled, reference, rerun, args, text, nrng)
        except Exception as exc:  # noqa: BLE001 - a bug in the comparison is the fuzzer's
            cls, message = classify_exception(exc, n_lines, text)
            return fail(cls, message)
        if problem and _reads_uninitialized(differentiated, name, args, reference):
            # undefined behaviour, not a miscompile (seed 606: a load from a fresh memref.alloca)
            outcome["notes"].append(f"@{name}: the result depends on memory nothing wrote")
            continue
        if problem and _another_order_agrees(differentiated, name, args, compiled, text):
            # seeds 707, 1616: an scf.while whose trip count compares a float sum with a limit;
            # another summation order crosses it one iteration earlier (or overflows)
            outcome["notes"].append(f"@{name}: the interpreter agrees when it sums in another order")
            continue
        if problem:
            outcome["inputs"] = _describe_inputs(args)
            return fail("miscompile", problem)
        compared.append((name, args, reference, nrng))
    if compared and gpu_rng.random() < gpu_emulate:
        failed = _emulated_gpu(text, differentiated, compared, interpreter64, n_lines, enter, outcome)
        if failed is not None:
            return fail(*failed)
    outcome["stage"] = stage
    return outcome


def _emulated_gpu(text: str, differentiated: Any, compared: list[tuple[str, list[Any], Any, np.random.Generator]],
                  interpreter64: Any, n_lines: int, enter: Callable[[str], None],
                  outcome: dict[str, Any]) -> tuple[str, str] | None:
    """The stages ``gpu-emulate`` and ``gpu-compare``: (class, message) of a failure, or None."""
    from dlvm_mlir.backend.gpu import GpuOptions
    from dlvm_mlir.backend.gpu_emulator import EmulatedGpuProgram, NotEmulable
    from dlvm_mlir.backend.gpu_schedule import GpuScheduleOptions
    from dlvm_mlir.backend.runtime import OutOfMemoryError
    from dlvm_mlir.compiler import CompileOptions, lower

    try:
        enter("gpu-emulate")
        module = lower(text, options=CompileOptions(target="cuda", check_bounds=False), filename=FILENAME)
        # the matmul kernels synchronize their threads, which the emulator cannot run
        program = EmulatedGpuProgram(module, GpuOptions(schedule=GpuScheduleOptions(matmul_kernels=False)))
    except NotEmulable as exc:
        outcome["notes"].append(f"gpu: {exc}")
        return None
    except Exception as exc:  # noqa: BLE001 - classified
        return classify_exception(exc, n_lines, text)
    for name, args, reference, nrng in compared:
        enter("gpu-emulate")
        try:
            got = program(name, *[np.copy(a) if isinstance(a, np.ndarray) else a for a in args])
        except OutOfMemoryError as exc:
            outcome["notes"].append(f"@{name}: gpu: {exc}")
            continue
        except Exception as exc:  # noqa: BLE001 - classified
            return classify_exception(exc, n_lines, text)
        enter("gpu-compare")

        def rerun(new_args: list[Any] | None, name: str = name, args: list[Any] = args) -> Any:
            return interpreter64.run(name, *(args if new_args is None else new_args))

        try:
            problem = compare_results(name, got, reference, rerun, args, text, nrng)
        except Exception as exc:  # noqa: BLE001
            return classify_exception(exc, n_lines, text)
        if problem and (_reads_uninitialized(differentiated, name, args, reference)
                        or _another_order_agrees(differentiated, name, args, got, text)):
            outcome["notes"].append(f"@{name}: gpu: not compared (uninitialized memory, or summation order)")
            problem = ""
        if problem:
            outcome["inputs"] = _describe_inputs(args)
            return "miscompile", f"emulated GPU: {problem}"
        outcome["gpu_calls"] = outcome.get("gpu_calls", 0) + 1
    return None


def _reads_uninitialized(module: Any, name: str, args: list[Any], reference: Any) -> bool:
    """Whether the interpreter's result changes with what fresh buffers hold."""
    from dlvm_mlir.interpreter import Interpreter

    try:
        other = Interpreter(module, uninitialized=7).run(name, *[np.copy(a) if isinstance(a, np.ndarray) else a
                                                                  for a in args])
    except Exception:  # noqa: BLE001 - it ran once: a failure now is a dependence on those values
        return True
    got = other if isinstance(other, tuple) else (other,)
    want = reference if isinstance(reference, tuple) else (reference,)
    return any(not np.array_equal(np.asarray(g), np.asarray(w), equal_nan=True) for g, w in zip(got, want))


def _another_order_agrees(module: Any, name: str, args: list[Any], compiled: Any, text: str) -> bool:
    """Whether the interpreter reproduces each compiled result element in some order of summing
    (``dlvm.reduce`` and float32 ``dlvm.dot``: pairwise, reversed, sequential, or in SIMD lanes):
    a legal evaluation, not a miscompile.

    Element by element: every element of a reduction or a dot is a sum of its own, and
    compiled code may sum its parts in blocks (seed 3838: a dot over 33 = 32 + 1 products whose
    last one, 1e60, was added to the first 32's -inf: NaN, where one chain gives -inf)."""
    from dlvm_mlir.interpreter import Interpreter

    rtol, atol, _ = tolerance_for(text)
    got = _as_list(compiled)
    matched = [np.zeros(np.shape(g), bool) for g in got]
    for order in Interpreter.SUM_ORDERS:
        try:
            other = _as_list(Interpreter(module, sum_order=order).run(
                name, *[np.copy(a) if isinstance(a, np.ndarray) else a for a in args]))
        except Exception:  # noqa: BLE001 - this order does not run: no evidence
            continue
        if len(other) != len(got) or any(g.shape != o.shape for g, o in zip(got, other)):
            continue
        for seen, g, o in zip(matched, got, other):
            seen |= ~np.asarray(_mismatch(g, o, rtol, atol), bool)
        if all(seen.all() for seen in matched):
            return True
    return False


def _describe_inputs(args: list[Any]) -> list[Any]:
    out = []
    for a in args:
        arr = np.asarray(a)
        out.append({"dtype": str(arr.dtype), "shape": list(arr.shape), "values": arr.reshape(-1)[:64].tolist()})
    return out
