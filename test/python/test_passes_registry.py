"""The pass registry, option parsing, pipeline parsing and the pipeline runner."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from mlir import ir

import dlvm_mlir  # noqa: F401  (registers the dlvm dialect)
from dlvm_mlir.errors import (
    Diagnostic,
    DLVMError,
    PassPipelineFailure,
    PipelineError,
    RegistryError,
)
from dlvm_mlir.passes import (
    ModulePass,
    Option,
    PassError,
    Pipeline,
    get_pass,
    get_pipeline,
    pass_text,
    register_pass,
    register_pipeline,
    registered_passes,
    registered_pipelines,
    run_pipeline,
    unregister,
)
from dlvm_mlir.passes.options import parse_option_text, resolve_options

SOURCE = """\
func.func @f(%a: i32) -> i32 {
  %c0 = arith.constant 0 : i32
  %b = arith.addi %a, %c0 : i32
  %c = arith.addi %b, %a : i32
  return %c : i32
}
"""


class CountAdds(ModulePass):
    name = "test-registry-count-adds"
    summary = "Store the number of arith.addi ops in test.adds"
    options = (
        Option("limit", int, 100, "fail at the first add beyond this many"),
        Option("attr", str, "test.adds", "attribute to store the count in"),
        Option("weights", float, (), "unused list option", is_list=True),
        Option("verbose", bool, False, "unused flag"),
    )

    def run(self, module: ir.Operation) -> None:
        count = 0
        for op in _ops(module):
            if op.name != "arith.addi":
                continue
            count += 1
            if count > self.limit:
                raise PassError(f"more than {self.limit} additions", at=op)
        module.attributes[self.attr] = ir.IntegerAttr.get(
            ir.IntegerType.get_signless(64), count
        )


class RejectAdds(ModulePass):
    name = "test-registry-reject-adds"
    summary = "Report every arith.addi as an error"

    def run(self, module: ir.Operation) -> None:
        for op in _ops(module):
            if op.name == "arith.addi":
                self.emit_error(op, "additions are rejected")


class RemarkAdds(ModulePass):
    name = "test-registry-remark-adds"
    summary = "Report every arith.addi as a remark, and warn once"

    def run(self, module: ir.Operation) -> None:
        for op in _ops(module):
            if op.name == "arith.addi":
                self.emit_remark(op, "an addition")
        self.emit_warning(module, "done")


class Crash(ModulePass):
    name = "test-registry-crash"
    summary = "Raise an unexpected exception"

    def run(self, module: ir.Operation) -> None:
        raise ZeroDivisionError("bug")


def _ops(module: ir.Operation) -> list[ir.Operation]:
    found: list[ir.Operation] = []
    module.walk(
        lambda op: found.append(op) or ir.WalkResult.ADVANCE, ir.WalkOrder.PRE_ORDER
    )
    return found


def _cleanup_pipeline(limit: int) -> str:
    return f"canonicalize,{pass_text(CountAdds.name, limit=limit)},func.func(cse)"


def _self_pipeline() -> str:
    return "test-registry-self"


@pytest.fixture(autouse=True)
def test_passes() -> Iterator[None]:
    for cls in (CountAdds, RejectAdds, RemarkAdds, Crash):
        register_pass(cls)
    register_pipeline(
        "test-registry-cleanup",
        "canonicalize, count, cse",
        options=(Option("limit", int, 100, "limit for the count"),),
    )(_cleanup_pipeline)
    register_pipeline("test-registry-self", "expands to itself")(_self_pipeline)
    yield
    for name in (
        CountAdds.name,
        RejectAdds.name,
        RemarkAdds.name,
        Crash.name,
        "test-registry-cleanup",
        "test-registry-self",
    ):
        unregister(name)


@pytest.fixture
def module() -> ir.Module:
    return ir.Module.parse(SOURCE, ir.Context())


# -- registry ---------------------------------------------------------------


def test_lookup_and_listing() -> None:
    assert get_pass(CountAdds.name) is CountAdds
    assert get_pipeline("test-registry-cleanup").summary == "canonicalize, count, cse"
    assert get_pass("canonicalize") is None
    assert CountAdds in registered_passes()
    names = [pass_cls.name for pass_cls in registered_passes()]
    assert names == sorted(names)
    assert "test-registry-cleanup" in [spec.name for spec in registered_pipelines()]


def test_duplicate_name_is_rejected() -> None:
    with pytest.raises(RegistryError, match="already registered"):
        register_pass(CountAdds)
    with pytest.raises(RegistryError, match="already registered"):
        register_pipeline(CountAdds.name, "clash")(_self_pipeline)


@pytest.mark.parametrize(
    ("attrs", "message"),
    [
        ({"name": "Bad_Name", "summary": "s"}, "lower-case words"),
        ({"name": "test-registry-no-summary", "summary": ""}, "summary is missing"),
        ({"summary": "s"}, "'name'"),
        (
            {
                "name": "test-registry-x",
                "summary": "s",
                "options": (Option("n", int, "zero", "h"),),
            },
            "bad default",
        ),
        (
            {
                "name": "test-registry-x",
                "summary": "s",
                "options": (Option("n", list, [], "h"),),
            },
            "type must be",
        ),
        (
            {
                "name": "test-registry-x",
                "summary": "s",
                "options": (Option("n", int, 0, ""),),
            },
            "help text",
        ),
        (
            {
                "name": "test-registry-x",
                "summary": "s",
                "options": (Option("n", int, 0, "h", choices=("a",)),),
            },
            "choices need type str",
        ),
        (
            {
                "name": "test-registry-x",
                "summary": "s",
                "options": (Option("n", int, 0, "h"), Option("n", int, 0, "h")),
            },
            "share a name",
        ),
    ],
)
def test_malformed_declarations(attrs: dict[str, object], message: str) -> None:
    cls = type("Malformed", (ModulePass,), {"run": lambda self, module: None, **attrs})
    with pytest.raises(RegistryError, match=message):
        register_pass(cls)


def test_only_module_passes_register() -> None:
    with pytest.raises(RegistryError, match="only ModulePass subclasses"):
        register_pass(int)  # type: ignore[arg-type]


def test_unregister_unknown_name() -> None:
    with pytest.raises(RegistryError, match="nothing named"):
        unregister("test-registry-never-registered")


def test_errors_share_one_base() -> None:
    for cls in (RegistryError, PipelineError, PassError, PassPipelineFailure):
        assert issubclass(cls, DLVMError)


# -- options ----------------------------------------------------------------


def test_option_text_splitting() -> None:
    text = "a=1 b='x y' c=\"p q\" d={1, 2} flag"
    assert parse_option_text(text) == [
        ("a", "1"),
        ("b", "'x y'"),
        ("c", '"p q"'),
        ("d", "{1, 2}"),
        ("flag", None),
    ]
    with pytest.raises(PipelineError, match="unbalanced"):
        parse_option_text("a={1,2")
    with pytest.raises(PipelineError, match="missing option name"):
        parse_option_text("=3")


def test_option_values_are_typed() -> None:
    values = resolve_options(
        CountAdds.name,
        CountAdds.options,
        "limit=0x10 attr='test.n' weights={0.5,2} verbose",
    )
    assert values == {
        "limit": 16,
        "attr": "test.n",
        "weights": (0.5, 2.0),
        "verbose": True,
    }
    defaults = resolve_options(CountAdds.name, CountAdds.options, "")
    assert defaults == {
        "limit": 100,
        "attr": "test.adds",
        "weights": (),
        "verbose": False,
    }


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("limit=many", "option 'limit' expects an integer, got 'many'"),
        ("verbose=perhaps", "option 'verbose' expects a boolean, got 'perhaps'"),
        ("weights=1,x", "option 'weights' expects a number, got 'x'"),
        (
            "colour=red",
            "has no option 'colour' \\(options: limit, attr, weights, verbose\\)",
        ),
        ("limit=1 limit=2", "given more than once"),
        ("limit", "needs a value"),
    ],
)
def test_bad_option_values(text: str, message: str) -> None:
    with pytest.raises(PipelineError, match=message):
        resolve_options(CountAdds.name, CountAdds.options, text)


def test_choices() -> None:
    option = Option("mode", str, "fast", "speed", choices=("fast", "safe"))
    assert option.parse("safe") == "safe"
    with pytest.raises(PipelineError, match="expects one of fast, safe; got 'slow'"):
        option.parse("slow")


def test_pass_instances_from_python() -> None:
    instance = CountAdds(limit=3, weights=[1, 2])
    assert (instance.limit, instance.attr, instance.weights) == (
        3,
        "test.adds",
        (1.0, 2.0),
    )
    assert (
        instance.pipeline_text() == "test-registry-count-adds{limit=3 weights=1.0,2.0}"
    )
    with pytest.raises(PipelineError, match="has no option 'speed'"):
        CountAdds(speed=1)
    with pytest.raises(PipelineError, match="expects an integer"):
        CountAdds(limit="3")


def test_pass_text() -> None:
    assert pass_text("canonicalize") == "canonicalize"
    assert pass_text(
        "x", max_iterations=3, flag=True, tag="two words", sizes=(1, 2)
    ) == ('x{max-iterations=3 flag=true tag="two words" sizes=1,2}')


# -- pipeline parsing -------------------------------------------------------


def test_canonical_and_expanded_text() -> None:
    pipeline = Pipeline.parse(
        " builtin.module( canonicalize{max-iterations=3}, test-registry-count-adds{limit=0x2}, "
        "func.func(cse), test-registry-cleanup{limit=1} )"
    )
    assert pipeline.text == (
        "builtin.module(canonicalize{max-iterations=3},test-registry-count-adds{limit=2},"
        "func.func(cse),test-registry-cleanup{limit=1})"
    )
    assert pipeline.expanded_text() == (
        "builtin.module(canonicalize{max-iterations=3},test-registry-count-adds{limit=2},func.func(cse),"
        "canonicalize,test-registry-count-adds{limit=1},func.func(cse))"
    )
    assert [p.limit for p in pipeline.python_passes] == [2, 1]


def test_bare_and_empty_pipelines() -> None:
    assert Pipeline.parse("canonicalize,cse").text == "builtin.module(canonicalize,cse)"
    assert Pipeline.parse("").text == "builtin.module()"
    assert Pipeline.parse("builtin.module()").text == "builtin.module()"
    assert Pipeline.parse("func.func(cse)").text == "builtin.module(func.func(cse))"


@pytest.mark.parametrize(
    ("text", "message", "caret_at"),
    [
        ("canonicalize,no-such-pass", "unknown pass or pipeline 'no-such-pass'", 13),
        ("func.func(cse,no-such-pass)", "unknown pass or pipeline 'no-such-pass'", 14),
        (
            "func.func(test-registry-count-adds)",
            "Python pass 'test-registry-count-adds' cannot run nested",
            10,
        ),
        (
            "cse,func.func(test-registry-cleanup)",
            "in the expansion of 'test-registry-cleanup'",
            14,
        ),
        ("test-registry-self", "pipeline 'test-registry-self' expands to itself", 0),
        ("test-registry-count-adds{limit=x}", "expects an integer, got 'x'", 0),
        ("canonicalize{no-such-option=1}", "no such option no-such-option", 0),
        ("canonicalize{max-iterations=x}", "'x' value invalid", 0),
        ("func.func()", "empty pipeline for 'func.func'", 0),
        ("builtin.module(cse", "expected ')'", 18),
        ("cse,,canonicalize", "expected a pass or pipeline name", 4),
        ("canonicalize{max-iterations=3", "missing '}'", 12),
    ],
)
def test_pipeline_errors_point_into_the_text(
    text: str, message: str, caret_at: int
) -> None:
    with pytest.raises(PipelineError) as info:
        Pipeline.parse(text)
    first, shown, caret = str(info.value).split("\n")
    assert message in first
    assert shown == f"  {text}"
    assert caret == " " * (2 + caret_at) + "^"


# -- running ----------------------------------------------------------------


def test_run_mixes_python_and_upstream_passes(module: ir.Module) -> None:
    run_pipeline(
        module, "builtin.module(canonicalize,test-registry-count-adds{attr=test.n})"
    )
    assert ir.IntegerAttr(module.operation.attributes["test.n"]).value == 1
    run_pipeline(module, Pipeline.parse("test-registry-cleanup"))
    assert ir.IntegerAttr(module.operation.attributes["test.adds"]).value == 1


def test_pass_error_becomes_a_located_diagnostic(module: ir.Module, tmp_path) -> None:
    with pytest.raises(PassPipelineFailure) as info:
        run_pipeline(
            module, "test-registry-count-adds{limit=1}", reproducer_dir=tmp_path
        )
    failure = info.value
    [diag] = failure.diagnostics
    assert (diag.severity, diag.message) == ("error", "more than 1 additions")
    assert (diag.location.line, diag.location.column) == (4, 8)
    assert failure.reproducer.input_path == tmp_path / "input.mlir"
    assert "arith.addi" in failure.reproducer.input_path.read_text()
    # The pass is defined outside dlvm_mlir, so the replay loads its file as a plugin.
    assert failure.reproducer.command() == (
        f"dlvm-opt --load-pass-plugin={__file__} "
        f"'--pass-pipeline=builtin.module(test-registry-count-adds{{limit=1}})' {tmp_path}/input.mlir"
    )
    assert "reproduce with: dlvm-opt" in str(failure)


def test_reproducer_is_narrowed_to_the_failing_element(module: ir.Module, tmp_path) -> None:
    """The reproducer replays only the first failing top-level element, on the IR it got."""
    with pytest.raises(PassPipelineFailure) as info:
        run_pipeline(module, "test-registry-count-adds{attr=test.first},test-registry-count-adds{limit=1}",
                     reproducer_dir=tmp_path)
    failure = info.value
    assert failure.reproducer.pipeline == "builtin.module(test-registry-count-adds{limit=1})"
    saved = failure.reproducer.input_path.read_text()
    assert "test.first" in saved  # the IR after the elements that ran before it
    assert "at builtin.module(test-registry-count-adds{limit=1})" in str(failure)
    assert [d.message for d in failure.diagnostics] == ["more than 1 additions"]


def test_emit_error_reports_every_error(module: ir.Module) -> None:
    with pytest.raises(PassPipelineFailure) as info:
        run_pipeline(module, "test-registry-reject-adds", reproducer=False)
    assert [d.location.line for d in info.value.diagnostics] == [3, 4]
    assert info.value.reproducer is None


def test_remarks_and_warnings_do_not_fail_the_pass(module: ir.Module) -> None:
    seen: list[Diagnostic] = []

    def record(diag: ir.Diagnostic) -> bool:
        seen.append(Diagnostic.from_mlir(diag))
        return True

    handler = module.context.attach_diagnostic_handler(record)
    try:
        run_pipeline(module, "test-registry-remark-adds", reproducer=False)
    finally:
        handler.detach()
    assert [(d.severity, d.message, d.location.line) for d in seen] == [
        ("remark", "an addition", 3),
        ("remark", "an addition", 4),
        ("warning", "done", 0),  # the module: line 0 of the parsed string
    ]


def test_failed_pass_can_run_again(module: ir.Module) -> None:
    pipeline = Pipeline.parse("test-registry-count-adds{limit=1}")
    for _ in range(2):
        with pytest.raises(PassPipelineFailure):
            pipeline.run(module, reproducer=False)
    Pipeline.parse("test-registry-count-adds").run(module)


def test_unexpected_exception_keeps_its_type_and_gets_a_reproducer(
    module: ir.Module, tmp_path
) -> None:
    with pytest.raises(ZeroDivisionError) as info:
        run_pipeline(module, "test-registry-crash", reproducer_dir=tmp_path)
    assert any("reproduce with: dlvm-opt" in note for note in info.value.__notes__)


def test_verifier_failure_after_a_pass(module: ir.Module) -> None:
    class BreakReturn(ModulePass):
        name = "test-registry-break-return"
        summary = "Make the function return type wrong"

        def run(self, module: ir.Operation) -> None:
            func = _ops(module)[1]
            func.attributes["function_type"] = ir.TypeAttr.get(
                ir.FunctionType.get([], [])
            )

    register_pass(BreakReturn)
    try:
        with pytest.raises(PassPipelineFailure) as info:
            run_pipeline(module, "test-registry-break-return", reproducer=False)
        assert info.value.diagnostics
        assert info.value.diagnostics[0].severity == "error"
        run_pipeline(
            ir.Module.parse(SOURCE, ir.Context()),
            "test-registry-break-return",
            verify_each=False,
        )
    finally:
        unregister(BreakReturn.name)


def test_reproducers_stay_bounded(tmp_path, monkeypatch) -> None:
    """Failing pipelines write reproducers under $DLVM_MLIR_REPRO_DIR (else the cache
    directory); only the newest reproducers.KEEP stay, the one just written among them."""
    from dlvm_mlir import reproducers

    monkeypatch.setenv("DLVM_MLIR_REPRO_DIR", str(tmp_path))
    monkeypatch.setattr(reproducers, "KEEP", 3)
    made = [reproducers.new_directory("dlvm-repro") for _ in range(5)]
    left = sorted(tmp_path.iterdir())
    assert len(left) == 3 and made[-1] in left and all(p.name.startswith("dlvm-repro-") for p in left)
    monkeypatch.delenv("DLVM_MLIR_REPRO_DIR")
    monkeypatch.setenv("DLVM_MLIR_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("DLVM_MLIR_DISK_CACHE", "1")
    assert reproducers.root() == tmp_path / "cache" / "reproducers"
    monkeypatch.setenv("DLVM_MLIR_DISK_CACHE", "0")  # no cache directory: the system's temp dir
    assert reproducers.root().name == "reproducers" and reproducers.root().parent.name == "dlvm-mlir"
