"""dlvm-opt: mlir-opt's everyday interface over dlvm-mlir's pass registry.

    dlvm-opt [options] [input.mlir|-] [-o output.mlir]

Passes come from ``--pass-pipeline=...`` or from one flag per pass, applied in
command-line order (``--canonicalize --dlvm-x="a=1 b=2"``); every Python pass
and named pipeline of the registry is a flag, and so is every upstream MLIR
pass. Errors go to stderr as ``file:line:col: error: message`` and make the
exit status 1; a Python traceback is only ever shown for a bug in dlvm-mlir.
"""

from __future__ import annotations

import importlib.metadata
import io
import shlex
import sys
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

import dlvm_mlir  # noqa: F401  (registers the dlvm dialect)
from dlvm_mlir.compiler_process import direct_mode
from dlvm_mlir import crash_guard
from mlir import ir
from mlir.passmanager import PassManager

from dlvm_mlir.errors import (
    Diagnostic,
    DLVMError,
    ParseError,
    PassPipelineFailure,
    PipelineError,
)
from dlvm_mlir.passes import Pipeline, is_upstream_pass, registry
from dlvm_mlir.parsing import ANONYMOUS_BUFFER, parse_alone, parse_module
from dlvm_mlir.passes.options import Option
from dlvm_mlir.tools.diagnostics import DiagnosticPrinter, DiagnosticVerifier
from dlvm_mlir.tools.source import DEFAULT_SPLIT_MARKER, SourceChunk, split_source

__all__ = ["main"]

PROG = "dlvm-opt"


class UsageError(DLVMError):
    """The command line itself is wrong."""


# --------------------------------------------------------------------------
# Command line
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class Flag:
    """A driver option. ``kind``: "bool" (``--x`` or ``--x=false``), "value"
    (``--x=V`` or ``--x V``), "optional" (``--x`` or ``--x=V``)."""

    name: str
    help: str
    kind: str = "bool"
    metavar: str = ""


FLAGS = (
    Flag("o", "Output file (default: stdout)", "value", "FILE"),
    Flag(
        "pass-pipeline",
        "Pass pipeline to run, e.g. 'builtin.module(canonicalize,func.func(cse))'",
        "value",
        "TEXT",
    ),
    Flag(
        "split-input-file",
        f"Process each part between '{DEFAULT_SPLIT_MARKER}' lines on its own",
        "optional",
        "MARKER",
    ),
    Flag(
        "verify-diagnostics",
        "Check the diagnostics against the input's expected-* comments",
    ),
    Flag("verify-each", "Verify the IR after each pass (default: true)"),
    Flag("allow-unregistered-dialect", "Accept operations of unregistered dialects"),
    Flag(
        "load-pass-plugin",
        "Run a Python file that registers passes (repeatable)",
        "value",
        "FILE",
    ),
    Flag(
        "dump-pass-pipeline",
        "Print the pass pipeline, named pipelines expanded, to stderr",
    ),
    Flag(
        "reproducer-dir",
        "Where to save the input of a failing pipeline (default: a new temp dir)",
        "value",
        "DIR",
    ),
    Flag("mlir-print-ir-before-all", "Print the IR before each pass"),
    Flag("mlir-print-ir-after-all", "Print the IR after each pass"),
    Flag("mlir-print-ir-after-change", "With --mlir-print-ir-after-all: only when the pass changed it"),
    Flag("mlir-print-ir-after-failure", "Print the IR after a pass fails"),
    Flag("mlir-print-debuginfo", "Print locations in the output"),
    Flag("mlir-print-generic-op-form", "Print operations in generic form"),
    Flag(
        "mlir-elide-elementsattrs-if-larger",
        "Elide elements attributes with more elements",
        "value",
        "N",
    ),
    Flag("mlir-timing", "Report the time spent in each pass"),
    Flag("mlir-pass-statistics", "Report pass statistics"),
    Flag("mlir-disable-threading", "Run passes on one thread"),
    Flag("help", "Show this help and exit"),
    Flag("version", "Show the version and exit"),
)
_FLAGS_BY_NAME = {flag.name: flag for flag in FLAGS} | {"h": Flag("help", "")}
_TRUE_WORDS = {"", "true", "True", "TRUE", "1"}
_FALSE_WORDS = {"false", "False", "FALSE", "0"}


@dataclass
class Config:
    """The command line, read."""

    input: str = "-"
    output: str = "-"
    #: the flags as given, without the input file (for reproducers)
    argv: list[str] = field(default_factory=list)
    pipeline: str | None = None
    pass_flags: list[tuple[str, str | None]] = field(default_factory=list)
    split_marker: str | None = None
    verify_diagnostics: bool = False
    verify_each: bool = True
    allow_unregistered_dialect: bool = False
    plugins: list[str] = field(default_factory=list)
    dump_pass_pipeline: bool = False
    reproducer_dir: str | None = None
    print_ir_before_all: bool = False
    print_ir_after_all: bool = False
    print_ir_after_change: bool = False
    print_ir_after_failure: bool = False
    print_debuginfo: bool = False
    print_generic: bool = False
    elide_elements_limit: int | None = None
    timing: bool = False
    statistics: bool = False
    disable_threading: bool = False
    help: bool = False
    version: bool = False

    @property
    def prints_ir(self) -> bool:
        return (
            self.print_ir_before_all
            or self.print_ir_after_all
            or self.print_ir_after_failure
        )


_BOOL_FIELDS = {
    "verify-diagnostics": "verify_diagnostics",
    "verify-each": "verify_each",
    "allow-unregistered-dialect": "allow_unregistered_dialect",
    "dump-pass-pipeline": "dump_pass_pipeline",
    "mlir-print-ir-before-all": "print_ir_before_all",
    "mlir-print-ir-after-all": "print_ir_after_all",
    "mlir-print-ir-after-change": "print_ir_after_change",
    "mlir-print-ir-after-failure": "print_ir_after_failure",
    "mlir-print-debuginfo": "print_debuginfo",
    "mlir-print-generic-op-form": "print_generic",
    "mlir-timing": "timing",
    "mlir-pass-statistics": "statistics",
    "mlir-disable-threading": "disable_threading",
    "help": "help",
    "version": "version",
}


def parse_command_line(argv: list[str]) -> Config:
    """Read argv; pass flags are kept in order, unchecked, as (name, options)."""
    config = Config()
    inputs: list[str] = []
    args = iter(argv)
    for arg in args:
        if arg == "--":
            inputs += list(args)
            break
        if arg == "-" or not arg.startswith("-"):
            inputs.append(arg)
            continue
        name, eq, value = arg.lstrip("-").partition("=")
        flag = _FLAGS_BY_NAME.get(name)
        if flag is None:
            config.pass_flags.append((name, value if eq else None))
            continue
        if flag.kind == "value" and not eq:
            value = next(args, None)
            if value is None:
                raise UsageError(f"option '{arg}' needs a value")
        _apply_flag(config, flag, value, bool(eq) or flag.kind == "value")
    if len(inputs) > 1:
        raise UsageError(f"only one input file may be given, got: {' '.join(inputs)}")
    config.input = inputs[0] if inputs else "-"
    config.argv = [arg for arg in argv if arg not in inputs and arg != "--"]
    return config


def _apply_flag(config: Config, flag: Flag, value: str, has_value: bool) -> None:
    if flag.kind == "bool":
        setattr(config, _BOOL_FIELDS[flag.name], _bool_value(flag, value))
    elif flag.name == "o":
        config.output = value
    elif flag.name == "pass-pipeline":
        config.pipeline = value
    elif flag.name == "split-input-file":
        config.split_marker = value if has_value and value else DEFAULT_SPLIT_MARKER
    elif flag.name == "load-pass-plugin":
        config.plugins.append(value)
    elif flag.name == "reproducer-dir":
        config.reproducer_dir = value
    elif flag.name == "mlir-elide-elementsattrs-if-larger":
        config.elide_elements_limit = _int_value(flag, value)


def _bool_value(flag: Flag, value: str) -> bool:
    if value in _TRUE_WORDS:
        return True
    if value in _FALSE_WORDS:
        return False
    raise UsageError(f"option '--{flag.name}' takes true or false, not '{value}'")


def _int_value(flag: Flag, value: str) -> int:
    try:
        return int(value)
    except ValueError:
        raise UsageError(
            f"option '--{flag.name}' takes an integer, not '{value}'"
        ) from None


def pipeline_text(config: Config) -> str:
    """The pipeline to run: ``--pass-pipeline`` or the pass flags, in order."""
    if config.pipeline is not None and config.pass_flags:
        flag = config.pass_flags[0][0]
        raise UsageError(
            f"'--pass-pipeline' cannot be combined with pass flags such as '--{flag}'"
        )
    if config.pipeline is not None:
        return config.pipeline
    elements = []
    for name, options in config.pass_flags:
        if not _is_pass_name(name):
            shown = name if options is None else f"{name}={options}"
            raise UsageError(
                f"unknown command line argument '--{shown}'; see '{PROG} --help'"
            )
        element = name if not options else f"{name}{{{options}}}"
        Pipeline.parse(element)  # report a bad flag on its own
        elements.append(element)
    return ",".join(elements)


def _is_pass_name(name: str) -> bool:
    if registry.get_pass(name) or registry.get_pipeline(name):
        return True
    return is_upstream_pass(name)


# --------------------------------------------------------------------------
# Processing
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class ChunkResult:
    ok: bool
    output: str | None


class Driver:
    """Runs one pipeline over the chunks of one input."""

    def __init__(
        self,
        config: Config,
        pipeline: Pipeline,
        sources: dict[str, list[str]],
        stderr: TextIO,
    ):
        self.config = config
        self.pipeline = pipeline
        self.printer = DiagnosticPrinter(stderr, sources)

    def process(self, chunk: SourceChunk, index: int) -> ChunkResult:
        """Parse, run and print one chunk (``index`` counts from 1), under the crash guard.

        If the compiler crashes on the chunk (an upstream assertion), the
        crash is reported as an internal compiler error at the input line
        that triggers it when that can be found, with a reproducer file.
        """
        def work() -> tuple[ChunkResult, str]:
            # the diagnostics go back to the parent with the result
            stream, self.printer.stream = self.printer.stream, io.StringIO()
            try:
                return self._process(chunk, index), self.printer.stream.getvalue()
            finally:
                self.printer.stream = stream

        try:
            result, printed = crash_guard.isolated(
                work,
                source=chunk.text,
                filename=chunk.name,
                parse=parse_alone,
                reproduce="reproduce with: " + shlex.join([PROG, *self.config.argv, "<this file>"]),
            )
            self.printer.stream.write(printed)
            self.printer.stream.flush()
            return result
        except crash_guard.InternalCompilerError as err:
            where = f"{err.location}: " if err.location else f"{chunk.name}: "
            self.printer.stream.write(f"{where}error: internal compiler error: {err.assertion}\n")
            if err.stage:
                self.printer.message(None, "note", f"while running stage '{err.stage}'")
            if err.reproducer is not None:
                self.printer.message(None, "note", f"reproducer: {err.reproducer} (see README beside it)")
            return ChunkResult(False, None)

    def _process(self, chunk: SourceChunk, index: int) -> ChunkResult:
        context = self._context()
        verifier = (
            DiagnosticVerifier(chunk, self.printer)
            if self.config.verify_diagnostics
            else None
        )
        errors: list[Diagnostic] = []

        def on_diagnostic(mlir_diag: ir.Diagnostic) -> bool:
            diag = Diagnostic.from_mlir(mlir_diag, {ANONYMOUS_BUFFER: chunk.name})
            if diag.severity == "error":
                errors.append(diag)
            if verifier is not None:
                verifier.process(diag)
            else:
                self.printer.print(diag)
            return True

        handler = context.attach_diagnostic_handler(on_diagnostic)
        try:
            output = self._run(
                chunk, context, errors, index, report_failure=verifier is None
            )
        finally:
            handler.detach()
        if verifier is not None:
            return ChunkResult(verifier.finish(), output)
        return ChunkResult(output is not None, output)

    def _context(self) -> ir.Context:
        context = ir.Context()
        context.emit_error_diagnostics = True
        context.allow_unregistered_dialects = self.config.allow_unregistered_dialect
        if self.config.disable_threading or self.config.prints_ir:
            context.enable_multithreading(False)
        return context

    def _run(
        self,
        chunk: SourceChunk,
        context: ir.Context,
        errors: list[Diagnostic],
        index: int,
        report_failure: bool,
    ) -> str | None:
        """The printed result, or None when parsing or a pass failed (diagnostics already out)."""
        try:
            crash_guard.report_stage("parse")
            module = parse_module(chunk.text, context, chunk.name)
        except ParseError:
            return None
        crash_guard.report_stage("pass pipeline")
        try:
            self.pipeline.run(
                module,
                verify_each=self.config.verify_each,
                reproducer=report_failure,
                reproducer_dir=self._reproducer_dir(index),
                configure=self._instrument,
                configure_nested=self._print_ir,
            )
        except PassPipelineFailure as failure:
            if report_failure:
                self._report(failure, errors)
            return None
        return self._print(module)

    def _reproducer_dir(self, index: int) -> str | None:
        """``--reproducer-dir``, with one sub-folder per part of a split input."""
        if self.config.reproducer_dir is None or self.config.split_marker is None:
            return self.config.reproducer_dir
        return str(Path(self.config.reproducer_dir) / f"part-{index}")

    def _print_ir(self, pm: PassManager) -> None:
        """IR printing, also for the pass managers that Python passes run
        (``run_passes``: a back-end step that runs passes only when needed)."""
        config = self.config
        if config.prints_ir:
            pm.enable_ir_printing(
                print_before_all=config.print_ir_before_all,
                print_after_all=config.print_ir_after_all,
                print_after_change=config.print_ir_after_change,
                print_after_failure=config.print_ir_after_failure,
                enable_debug_info=config.print_debuginfo,
                print_generic_op_form=config.print_generic,
                large_elements_limit=config.elide_elements_limit,
            )

    def _instrument(self, pm: PassManager) -> None:
        """IR printing, timing and statistics of the pass manager running the pipeline.

        A pass that expands into steps (``dlvm-cpu-pipeline``,
        ``dlvm-gpu-pipeline``) is one pass of it per step, so the timing
        report lists each step and upstream pass of the back end.
        """
        config = self.config
        self._print_ir(pm)
        if config.timing:
            pm.enable_timing()
        if config.statistics:
            pm.enable_statistics()

    def _report(self, failure: PassPipelineFailure, errors: list[Diagnostic]) -> None:
        if not errors:
            self.printer.message(
                None, "error", "a pass failed without reporting an error"
            )
        if failure.reproducer is not None:
            self.printer.message(
                None, "note", f"reproduce with: {failure.reproducer.command()}"
            )

    def _print(self, module: ir.Module) -> str:
        return module.operation.get_asm(
            enable_debug_info=self.config.print_debuginfo,
            print_generic_op_form=self.config.print_generic,
            large_elements_limit=self.config.elide_elements_limit,
        )


def run(config: Config, stdin: TextIO, stdout: TextIO, stderr: TextIO) -> int:
    """Everything after the command line is read; returns the exit status."""
    for plugin in config.plugins:
        registry.load_plugin(plugin)
    if config.help:
        stdout.write(help_text())
        return 0
    if config.version:
        stdout.write(version_text())
        return 0
    pipeline = Pipeline.parse(pipeline_text(config))
    if config.dump_pass_pipeline:
        stderr.write(pipeline.expanded_text() + "\n")
    name, text = _read_input(config.input, stdin)
    chunks = split_source(name, text, config.split_marker)
    driver = Driver(config, pipeline, {name: text.split("\n")}, stderr)
    results = [
        driver.process(chunk, index) for index, chunk in enumerate(chunks, start=1)
    ]
    outputs = [result.output for result in results if result.output is not None]
    ok = all(result.ok for result in results)
    if ok or config.output == "-":
        _write_output(config.output, f"{DEFAULT_SPLIT_MARKER}\n".join(outputs), stdout)
    return 0 if ok else 1


def _read_input(path: str, stdin: TextIO) -> tuple[str, str]:
    if path == "-":
        return "<stdin>", stdin.read()
    try:
        return path, Path(path).read_text()
    except OSError as err:
        raise UsageError(
            f"cannot read input file '{path}': {err.strerror or err}"
        ) from None
    except UnicodeDecodeError:
        raise UsageError(f"input file '{path}' is not UTF-8 text") from None


def _write_output(path: str, text: str, stdout: TextIO) -> None:
    if path == "-":
        stdout.write(text)
        stdout.flush()
        return
    try:
        Path(path).write_text(text)
    except OSError as err:
        raise UsageError(
            f"cannot write output file '{path}': {err.strerror or err}"
        ) from None


# --------------------------------------------------------------------------
# Help and version
# --------------------------------------------------------------------------


CPP_PASSES = (("dlvm-to-linalg", "Lower dlvm ops to linalg, tensor, arith, math and scf"),)
"""The passes written in C++ (name, summary as in Passes.td; test_dlvm_opt checks they agree)."""


def help_text() -> str:
    """Usage, driver options, then every registered pass and pipeline."""
    lines = [
        f"usage: {PROG} [options] [input-file|-] [-o output-file]",
        "",
        "Runs passes over MLIR text, like mlir-opt. Pass flags apply in command-line order.",
        "",
        "Options:",
    ]
    lines += [_flag_line(flag) for flag in FLAGS]
    lines += [
        "",
        "Python passes (pass options as --NAME='opt=value ...' or NAME{opt=value} in a pipeline):",
    ]
    for pass_cls in registry.registered_passes():
        lines += _entry_lines(pass_cls.name, pass_cls.summary, pass_cls.options)
    if not registry.registered_passes():
        lines.append("  (none registered)")
    lines += ["", "C++ passes (the dialect's library, dialect/include/dlvm/Passes.td):"]
    for name, summary in CPP_PASSES:
        lines += _entry_lines(name, summary, ())
    lines += ["", "Pass pipelines:"]
    for spec in registry.registered_pipelines():
        lines += _entry_lines(spec.name, spec.summary, spec.options)
    if not registry.registered_pipelines():
        lines.append("  (none registered)")
    lines += [
        "",
        "Upstream MLIR passes and pipelines are accepted too, as flags (--canonicalize, --cse,",
        "--convert-to-llvm, ...) and in --pass-pipeline; 'mlir-opt --help' lists them.",
        "",
    ]
    return "\n".join(lines)


def _flag_line(flag: Flag) -> str:
    usage = "-o" if flag.name == "o" else f"--{flag.name}"
    if flag.kind == "value":
        usage += f"{' ' if flag.name == 'o' else '='}{flag.metavar}"
    elif flag.kind == "optional":
        usage += f"[={flag.metavar}]"
    return f"  {usage:<44} {flag.help}"


def _entry_lines(name: str, summary: str, options: tuple[Option, ...]) -> list[str]:
    lines = [f"  --{name:<42} {summary}"]
    for option in options:
        default = option.format(option.default) or ("empty" if option.is_list else '""')
        lines.append(
            f"      {option.name}=<{option.describe_type()}>  {option.help} (default: {default})"
        )
    return lines


def version_text() -> str:
    return f"{PROG} from dlvm-mlir {_version('dlvm-mlir')}, MLIR {_version('xtc-mlir-python-bindings')}\n"


def _version(distribution: str) -> str:
    try:
        return importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:
        return "(not installed; running from a source tree)"


# --------------------------------------------------------------------------
# Entry point
# --------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    """Console entry point; returns the exit status (0 ok, 1 error, 2 internal error)."""
    args = sys.argv[1:] if argv is None else argv
    with direct_mode():
        return _guarded(lambda: run(parse_command_line(args), sys.stdin, sys.stdout, sys.stderr))


def _guarded(body: Callable[[], int]) -> int:
    try:
        return body()
    except PipelineError as err:
        _print_error(f"invalid pass pipeline: {err}")
    except DLVMError as err:
        _print_error(str(err))
    except KeyboardInterrupt:
        return 130
    except Exception:
        sys.stdout.flush()
        print(
            f"{PROG}: internal error (a bug in dlvm-mlir, not in the input); please report:",
            file=sys.stderr,
        )
        traceback.print_exc()
        return 2
    return 1


def _print_error(message: str) -> None:
    sys.stdout.flush()
    print(f"error: {message}", file=sys.stderr)
    sys.stderr.flush()


if __name__ == "__main__":
    sys.exit(main())
