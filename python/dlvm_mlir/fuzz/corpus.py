"""The fuzzer's corpus: the project's own ``.mlir`` tests, cut into programs.

:func:`load_pieces` (pure Python) splits every ``.mlir`` file under a
directory at ``// -----`` markers and drops comment lines (RUN, CHECK,
``expected-error``, prose). :func:`annotate` (needs MLIR; the fuzzer runs it
in a worker process) parses each piece and records what the structured
mutators need: the functions, and for each single-line op its line, its
result names and types and its operand names and types; every SSA value with
the line that defines it. Pieces that do not parse and verify are kept, with
``valid = False``, as a smaller source of programs (they exercise the error
paths).

Everything here is plain data (dicts, lists, strings) so that it can cross a
pipe between processes and be written as JSON.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

__all__ = ["Corpus", "annotate", "clean_piece", "load_pieces", "op_skeleton"]

SPLIT_MARKER = "// -----"
_RESULTS = re.compile(r"^\s*(%[^=\"]+?)\s*=\s*(?=[\"a-z_])")
_OP_NAME = re.compile(r"^\s*(?:%[^=\"]*=\s*)?\"?([a-z_][a-z0-9_]*\.[a-z_][a-z0-9_.]*)\"?")
_SSA = re.compile(r"%[A-Za-z0-9_$.-]+(?:#\d+)?")
_ARG = re.compile(r"(%[A-Za-z0-9_$.-]+)\s*:")


def clean_piece(text: str) -> str:
    """``text`` without comment lines, trailing spaces and runs of blank lines."""
    lines = []
    for line in text.split("\n"):
        if line.strip().startswith("//"):
            continue
        line = line.rstrip()
        if not line and (not lines or not lines[-1]):
            continue
        lines.append(line)
    while lines and not lines[-1]:
        lines.pop()
    return "\n".join(lines) + "\n" if lines else ""


def load_pieces(root: str | Path) -> list[dict[str, Any]]:
    """Every ``// -----`` part of every ``.mlir`` file under ``root``, cleaned, in a fixed order."""
    root = Path(root)
    pieces = []
    for path in sorted(root.rglob("*.mlir")):
        try:
            text = path.read_text()
        except (OSError, UnicodeDecodeError):
            continue
        parts = re.split(r"(?m)^[ \t]*" + re.escape(SPLIT_MARKER) + r".*$", text)
        for index, part in enumerate(parts):
            cleaned = clean_piece(part)
            if "func.func" not in cleaned and "dlvm." not in cleaned:
                continue
            name = f"{path.relative_to(root.parent) if root.parent != path else path}#{index}"
            pieces.append({"id": name, "text": cleaned})
    return pieces


def op_skeleton(line: str, op_name: str) -> str:
    """The shape of an op's text: its name, SSA names, types and numbers blanked.

    Ops with equal skeletons can trade names and still parse (``dlvm.add`` and
    ``dlvm.dot``; ``dlvm.exp`` and ``dlvm.tanh``).
    """
    text = line.strip()
    text = text.replace(op_name, "OP", 1)
    text = re.sub(r"tensor<[^>]*>", "T", text)
    text = _SSA.sub("%", text)
    text = re.sub(r"-?\d+(\.\d*)?(e[-+]?\d+)?", "N", text)
    text = re.sub(r"\b(f16|bf16|f32|f64|i1|i8|i16|i32|i64|index)\b", "E", text)
    return text


def result_names(line: str) -> list[str]:
    """The SSA names an op line defines: ``%a, %b = ...`` or ``%r:2 = ...`` (as ``%r#0``, ``%r#1``)."""
    match = _RESULTS.match(line)
    if not match:
        return []
    names = []
    for part in match.group(1).split(","):
        part = part.strip()
        if ":" in part:
            base, _, count = part.partition(":")
            if not count.strip().isdigit():
                return []
            names += [f"{base.strip()}#{i}" for i in range(int(count))]
        elif part.startswith("%"):
            names.append(part)
        else:
            return []
    return names


def op_name_of(line: str) -> str | None:
    match = _OP_NAME.match(line)
    return match.group(1) if match else None


def operand_tokens(line: str) -> list[str]:
    """SSA uses on an op line, in textual order (after the ``=`` of the results)."""
    match = _RESULTS.match(line)
    rest = line[match.end():] if match else line
    return [m.group() for m in _SSA.finditer(rest)]


# --------------------------------------------------------------------------
# Annotation (needs MLIR)
# --------------------------------------------------------------------------


def annotate(piece: dict[str, Any]) -> dict[str, Any]:
    """``piece`` plus ``valid``, ``funcs``, ``ops`` and ``values`` (see the module docstring)."""
    import dlvm_mlir
    from mlir import ir

    from dlvm_mlir.errors import DLVMError, source_location
    from dlvm_mlir.parsing import parse_module

    out = dict(piece, valid=False, funcs=[], ops=[], values=[])
    text = piece["text"]
    lines = text.split("\n")
    try:
        module = parse_module(text, dlvm_mlir.make_context(), "corpus.mlir")
    except DLVMError:
        return out
    out["valid"] = True
    for top in module.body.operations:
        op = top.operation
        if op.name != "func.func":
            continue
        name = ir.StringAttr(op.attributes["sym_name"]).value
        ftype = ir.FunctionType(ir.TypeAttr(op.attributes["function_type"]).value)
        loc = source_location(op.location)
        fline = loc.line - 1 if loc else -1
        has_body = len(op.regions[0].blocks) > 0
        visibility = ir.StringAttr(op.attributes["sym_visibility"]).value if "sym_visibility" in op.attributes else "public"
        decl = any(a in op.attributes for a in ("dlvm.gradient", "dlvm.tangent"))
        info = {
            "name": name,
            "line": fline,
            "inputs": [str(t) for t in ftype.inputs],
            "results": [str(t) for t in ftype.results],
            "body": has_body,
            "public": visibility == "public",
            "decl": decl,
            "blocks": len(op.regions[0].blocks) if has_body else 0,
        }
        out["funcs"].append(info)
        if not has_body:
            continue
        if 0 <= fline < len(lines):
            arg_names = [m.group(1) for m in _ARG.finditer(lines[fline].split("->")[0])]
            if len(arg_names) == len(info["inputs"]):
                for arg, typ in zip(arg_names, info["inputs"]):
                    out["values"].append({"name": arg, "type": typ, "line": fline, "func": name, "depth": 0, "block": 0})
        _annotate_body(op, name, lines, out)
    return out


def _annotate_body(fn: Any, fname: str, lines: list[str], out: dict[str, Any]) -> None:
    from dlvm_mlir.errors import source_location

    for block_index, block in enumerate(fn.regions[0].blocks):
        for child in block.operations:
            _annotate_op(child.operation, fname, block_index, 0, lines, out, source_location)


def _annotate_op(op: Any, fname: str, block: int, depth: int, lines: list[str], out: dict[str, Any], locate: Any) -> None:
    loc = locate(op.location)
    line = loc.line - 1 if loc else -1
    if 0 <= line < len(lines) and op_name_of(lines[line]) == op.name:
        text = lines[line]
        results = result_names(text)
        result_types = [str(r.type) for r in op.results]
        operands = operand_tokens(text)
        operand_types = [str(v.type) for v in op.operands]
        single = len(op.regions) == 0 and text.count("{") == text.count("}")
        entry = {
            "line": line,
            "name": op.name,
            "func": fname,
            "block": block,
            "depth": depth,
            "regions": len(op.regions),
            "single_line": single,
            "results": results if len(results) == len(result_types) else [],
            "result_types": result_types,
            "operands": operands if len(operands) == len(operand_types) else None,
            "operand_types": operand_types,
            "skeleton": op_skeleton(text, op.name),
        }
        out["ops"].append(entry)
        if entry["results"]:
            for name, typ in zip(entry["results"], result_types):
                out["values"].append({"name": name, "type": typ, "line": line, "func": fname, "depth": depth, "block": block})
    for region in op.regions:
        for inner in region.blocks:
            for child in inner.operations:
                _annotate_op(child.operation, fname, block, depth + 1, lines, out, locate)


class Corpus:
    """Annotated pieces plus what the mutators look up across programs."""

    def __init__(self, pieces: list[dict[str, Any]]):
        self.pieces = pieces
        self.valid = [p for p in pieces if p.get("valid")]
        self.invalid = [p for p in pieces if not p.get("valid")]
        #: skeleton -> op names sharing it; op name -> its skeletons
        self.by_skeleton: dict[str, set[str]] = {}
        self.operand_counts: dict[str, set[int]] = {}
        #: single-line ops with known operand names/types (splice material)
        self.donors: list[tuple[dict[str, Any], dict[str, Any]]] = []
        for piece in self.valid:
            for op in piece["ops"]:
                self.by_skeleton.setdefault(op["skeleton"], set()).add(op["name"])
                self.operand_counts.setdefault(op["name"], set()).add(len(op["operand_types"]))
                if op["single_line"] and op["operands"] is not None and op["results"] and op["name"] != "func.return":
                    self.donors.append((piece, op))
        self.op_names = sorted(self.operand_counts)

    def partners(self, op_name: str, skeleton: str) -> list[str]:
        """Other op names that fit ``skeleton``, else ops of the same dialect and operand count."""
        same = sorted(self.by_skeleton.get(skeleton, set()) - {op_name})
        if same:
            return same
        dialect = op_name.split(".")[0]
        counts = self.operand_counts.get(op_name, set())
        return [n for n in self.op_names if n != op_name and n.split(".")[0] == dialect and self.operand_counts[n] & counts]
