"""dlvm-opt, called in-process through main(argv) and as ``python -m dlvm_mlir.tools.opt``."""

from __future__ import annotations

import io
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from mlir import ir

from dlvm_mlir.passes import ModulePass, Option, PassError, register_pass, unregister
from dlvm_mlir.tools.opt import CPP_PASSES, main, parse_command_line

PLUGIN = (
    Path(__file__).resolve().parents[1]
    / "Tools"
    / "dlvm-opt"
    / "Inputs"
    / "test_passes.py"
)

ADD_ZERO = """\
func.func @add_zero(%a: i32) -> i32 {
  %c0 = arith.constant 0 : i32
  %b = arith.addi %a, %c0 : i32
  return %b : i32
}
"""


class Stamp(ModulePass):
    name = "test-opt-stamp"
    summary = "Set test.stamp on the module"
    options = (Option("value", str, "on", "the stamp"),)

    def run(self, module: ir.Operation) -> None:
        module.attributes["test.stamp"] = ir.StringAttr.get(self.value)


class RejectFuncs(ModulePass):
    name = "test-opt-reject-funcs"
    summary = "Reject every function"

    def run(self, module: ir.Operation) -> None:
        for op in module.regions[0].blocks[0].operations:
            raise PassError("no functions please", at=op)


class Crash(ModulePass):
    name = "test-opt-crash"
    summary = "Raise an unexpected exception"

    def run(self, module: ir.Operation) -> None:
        raise KeyError("bug")


@pytest.fixture(autouse=True)
def test_passes() -> Iterator[None]:
    for cls in (Stamp, RejectFuncs, Crash):
        register_pass(cls)
    yield
    for cls in (Stamp, RejectFuncs, Crash):
        unregister(cls.name)


@pytest.fixture
def add_zero(tmp_path: Path) -> Path:
    path = tmp_path / "add_zero.mlir"
    path.write_text(ADD_ZERO)
    return path


def run_opt(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    status = main([str(arg) for arg in argv])
    out, err = capsys.readouterr()
    return status, out, err


# -- command line -----------------------------------------------------------


def test_command_line_keeps_pass_flags_in_order() -> None:
    config = parse_command_line(
        ["-o", "out.mlir", "--cse", "in.mlir", "-canonicalize=max-iterations=2", "--x="]
    )
    assert config.input == "in.mlir"
    assert config.output == "out.mlir"
    assert config.pass_flags == [
        ("cse", None),
        ("canonicalize", "max-iterations=2"),
        ("x", ""),
    ]


def test_command_line_flag_forms() -> None:
    config = parse_command_line(
        ["--split-input-file", "--verify-each=false", "--pass-pipeline", "cse", "-"]
    )
    assert (config.split_marker, config.verify_each, config.pipeline, config.input) == (
        "// -----",
        False,
        "cse",
        "-",
    )
    assert (
        parse_command_line(["--split-input-file=// ====="]).split_marker == "// ====="
    )


# -- running ----------------------------------------------------------------


def test_round_trip(capsys, add_zero: Path) -> None:
    status, out, err = run_opt(capsys, add_zero)
    assert (status, err) == (0, "")
    assert "arith.addi %arg0, %c0_i32 : i32" in out


def test_pass_flags_run_in_order(capsys, add_zero: Path) -> None:
    status, out, _ = run_opt(
        capsys,
        add_zero,
        "--test-opt-stamp=value=first",
        "--canonicalize",
        "--test-opt-stamp=value=last",
    )
    assert status == 0
    assert 'test.stamp = "last"' in out
    assert "arith.addi" not in out


def test_pass_pipeline(capsys, add_zero: Path) -> None:
    status, out, _ = run_opt(
        capsys,
        add_zero,
        "--pass-pipeline=builtin.module(func.func(canonicalize),test-opt-stamp{value=p})",
    )
    assert status == 0
    assert 'test.stamp = "p"' in out
    assert "arith.addi" not in out


def test_stdin_and_output_file(capsys, monkeypatch, tmp_path: Path) -> None:
    monkeypatch.setattr(sys, "stdin", io.StringIO(ADD_ZERO))
    output = tmp_path / "out.mlir"
    status, out, _ = run_opt(capsys, "-", "--canonicalize", "-o", output)
    assert (status, out) == (0, "")
    assert "return %arg0 : i32" in output.read_text()


def test_output_file_not_written_on_failure(
    capsys, add_zero: Path, tmp_path: Path
) -> None:
    output = tmp_path / "out.mlir"
    status, _, _ = run_opt(
        capsys,
        add_zero,
        "--test-opt-reject-funcs",
        "-o",
        output,
        "--reproducer-dir",
        tmp_path / "r",
    )
    assert status == 1
    assert not output.exists()


def test_split_input_file_joins_outputs(capsys, tmp_path: Path) -> None:
    path = tmp_path / "split.mlir"
    path.write_text(
        "func.func @a() {\n  return\n}\n// -----\nfunc.func @b() {\n  return\n}\n"
    )
    status, out, _ = run_opt(capsys, path, "--split-input-file")
    assert status == 0
    first, second = out.split("// -----\n")
    assert "@a" in first and "@b" in second


# -- errors -----------------------------------------------------------------


def test_pass_error_is_located_and_has_a_reproducer(
    capsys, add_zero: Path, tmp_path: Path
) -> None:
    status, out, err = run_opt(
        capsys, add_zero, "--test-opt-reject-funcs", "--reproducer-dir", tmp_path
    )
    assert (status, out) == (1, "")
    lines = err.splitlines()
    assert lines[0] == f"{add_zero}:1:1: error: no functions please"
    assert lines[1] == "func.func @add_zero(%a: i32) -> i32 {"
    assert lines[2] == "^"
    assert lines[3] == (
        f"note: reproduce with: dlvm-opt --load-pass-plugin={__file__} "
        f"'--pass-pipeline=builtin.module(test-opt-reject-funcs)' {tmp_path}/input.mlir"
    )
    assert (tmp_path / "input.mlir").is_file()


def test_parse_error_names_file_line_and_column(capsys, tmp_path: Path) -> None:
    path = tmp_path / "bad.mlir"
    path.write_text("func.func @f() {\n  %x = arith.bogus\n}\n")
    status, out, err = run_opt(capsys, path)
    assert (status, out) == (1, "")
    assert err.startswith(f"{path}:2:8: error: custom op 'arith.bogus' is unknown\n")


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--no-such-flag"], "error: unknown command line argument '--no-such-flag'"),
        (["--test-opt-stamp=colour=red"], "'test-opt-stamp' has no option 'colour'"),
        (
            ["--pass-pipeline=func.func(test-opt-stamp)"],
            "Python pass 'test-opt-stamp' cannot run nested",
        ),
        (
            ["--pass-pipeline=cse", "--canonicalize"],
            "cannot be combined with pass flags",
        ),
        (["-o"], "option '-o' needs a value"),
        (["a.mlir", "b.mlir"], "only one input file"),
        (
            ["--load-pass-plugin=/no/such/plugin.py"],
            "pass plugin '/no/such/plugin.py' is not a file",
        ),
        (["--mlir-elide-elementsattrs-if-larger=many"], "takes an integer"),
    ],
)
def test_user_errors_exit_1_without_traceback(
    capsys, add_zero: Path, argv: list[str], message: str
) -> None:
    status, _, err = run_opt(capsys, add_zero, *argv)
    assert status == 1
    assert message in err
    assert err.startswith("error: ")
    assert "Traceback" not in err


def test_internal_error_shows_traceback(capsys, add_zero: Path, tmp_path: Path) -> None:
    status, _, err = run_opt(
        capsys, add_zero, "--test-opt-crash", "--reproducer-dir", tmp_path
    )
    assert status == 2
    assert err.startswith("dlvm-opt: internal error")
    assert "Traceback (most recent call last):" in err
    assert "KeyError: 'bug'" in err
    assert "reproduce with: dlvm-opt" in err


# -- verify-diagnostics ------------------------------------------------------

VERIFIED = """\
func.func @f() {
  return
}
// -----
// expected-error @below {{no functions please}}
func.func @g() {
  return
}
"""


def test_verify_diagnostics_pass(capsys, tmp_path: Path) -> None:
    path = tmp_path / "v.mlir"
    path.write_text(
        VERIFIED.replace(
            "func.func @f() {\n  return\n}\n",
            "// expected-error @below {{no functions}}\nfunc.func @f() {\n  return\n}\n",
        )
    )
    status, _, err = run_opt(
        capsys,
        path,
        "--split-input-file",
        "--verify-diagnostics",
        "--test-opt-reject-funcs",
    )
    assert (status, err) == (0, "")


def test_verify_diagnostics_reports_unexpected(capsys, tmp_path: Path) -> None:
    path = tmp_path / "v.mlir"
    path.write_text(VERIFIED)
    status, _, err = run_opt(
        capsys,
        path,
        "--split-input-file",
        "--verify-diagnostics",
        "--test-opt-reject-funcs",
    )
    assert status == 1
    assert (
        err.splitlines()[0]
        == f"{path}:1:1: error: unexpected error: no functions please"
    )
    assert "reproduce" not in err


# -- help and version --------------------------------------------------------


def test_help_lists_registry(capsys) -> None:
    status, out, _ = run_opt(capsys, "--help")
    assert status == 0
    assert "--test-opt-stamp" in out and "Set test.stamp on the module" in out
    assert "value=<str>  the stamp (default: on)" in out
    assert "--verify-diagnostics" in out


def test_help_lists_the_cpp_passes_of_passes_td(capsys) -> None:
    import re

    td = (Path(__file__).resolve().parents[2] / "dialect" / "include" / "dlvm" / "Passes.td").read_text()
    declared = re.findall(r'def \w+ : Pass<"([\w-]+)">\s*\{\s*let summary = "([^"]*)";', td)
    assert declared and tuple(declared) == CPP_PASSES
    status, out, _ = run_opt(capsys, "--help")
    assert status == 0
    for name, summary in declared:
        assert f"--{name}" in out and summary in out


def test_plugin_passes_show_in_help(capsys) -> None:
    status, out, _ = run_opt(capsys, "--help", f"--load-pass-plugin={PLUGIN}")
    assert status == 0
    assert "--test-annotate" in out and "--test-cleanup" in out


# -- as a module -------------------------------------------------------------


def _python_m(*argv: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "dlvm_mlir.tools.opt", *argv]
    return subprocess.run(
        command, input=stdin, capture_output=True, text=True, check=False
    )


def test_python_m_runs_the_driver() -> None:
    result = _python_m("--canonicalize", stdin=ADD_ZERO)
    assert result.returncode == 0, result.stderr
    assert "return %arg0 : i32" in result.stdout


def test_python_m_reports_errors_without_traceback() -> None:
    result = _python_m("--pass-pipeline=builtin.module(no-such-pass)", stdin=ADD_ZERO)
    assert result.returncode == 1
    assert result.stderr.startswith(
        "error: invalid pass pipeline: unknown pass or pipeline 'no-such-pass'"
    )
    assert "Traceback" not in result.stderr


def test_python_m_version() -> None:
    result = _python_m("--version")
    assert result.returncode == 0
    assert result.stdout.startswith("dlvm-opt from dlvm-mlir ")
