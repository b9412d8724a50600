"""Mutations of DLVM programs, at token and tree level (pure Python, no MLIR).

Each mutator takes a :class:`Target` (the text, the annotation of the corpus
piece it came from, the corpus, a ``random.Random``) and returns new text, or
None when it does not apply. Token-level mutators work on any text; the
structured ones (``ssa_use``, ``splice``, ``wrap_if``, ``wrap_for``,
``dup_op``, ``swap_operands``) use the piece's annotation, which describes the
unmutated text, so :func:`mutate` applies at most one of them and applies it
first.

:data:`MUTATORS` lists them with their weights; :func:`mutate` stacks one to
three of them and returns the text and the names applied.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .corpus import Corpus

__all__ = ["MAX_ELEMENTS", "MUTATORS", "Target", "libc_names", "mutate", "too_large"]

MAX_ELEMENTS = 1 << 20
"""Programs with a tensor type of more elements are not generated (memory, time)."""

DIM_VALUES = (0, 1, 2, 3, 5, 7, 8, 9, 16, 31, 32, 33, 63, 64, 65, 127, 128, 129, 1000, 1024)
ELEMENT_TYPES = ("f16", "bf16", "f32", "f64", "i1", "i8", "i32", "i64", "ui8", "ui32")
INT_SPECIALS = (0, 1, -1, 2, 3, 4, 7, 8, 9, 31, 32, 33, 64, 1000,
                2**31 - 1, -(2**31), 2**32, 2**63 - 1, -(2**63), 2**64)
FLOAT_SPECIALS = ("0.0", "-0.0", "1.0", "-1.0", "2.0", "0.5", "3.0", "1.0e-07", "1.0e-30",
                  "1.0e+30", "-1.0e+30", "6.5504e+04", "3.4e+38", "1.0e+300", "1.0e-45")
LIBC_NAMES = ("powf", "pow", "fmodf", "fmod", "free", "malloc", "calloc", "realloc", "memcpy",
              "memset", "expf", "exp", "logf", "log", "sin", "sinf", "cos", "tanhf", "sqrt",
              "sqrtf", "fabs", "floorf", "abort", "exit", "printf", "puts", "main",
              "mlirAsyncRuntimeCreateToken", "mlirAsyncRuntimeAwaitToken", "_mlir_ciface_f",
              "_mlir_ciface_main", "erff", "lgammaf", "expm1f", "log1pf", "__powidf2",
              "atan2f", "llvm.memcpy", "dlvm_alloc")
CMP_PREDICATES = ("lt", "le", "gt", "ge", "eq", "ne")
REDUCTION_KINDS = ("add", "mul", "max", "min", "and", "or", "mean")
WINDOW_PADDINGS = ("none", "half", "full")
ARITH_CMPF = ("oeq", "ogt", "oge", "olt", "ole", "one", "ord", "ueq", "ugt", "uge", "ult", "ule",
              "une", "uno", "false", "true")
ARITH_CMPI = ("eq", "ne", "slt", "sle", "sgt", "sge", "ult", "ule", "ugt", "uge")

_TENSOR = re.compile(r"tensor<((?:[0-9?]+x)*)([a-z][a-z0-9]*)>")
_ELEM = re.compile(r"(?:(?<![\w.])|(?<=[0-9?]x))(f16|bf16|f32|f64|i1|i8|i16|i32|i64|ui8|ui16|ui32|ui64)(?![\w.])")
_SSA = re.compile(r"%[A-Za-z0-9_$.-]+(?:#\d+)?")
_SYMBOL = re.compile(r"@([A-Za-z_][A-Za-z0-9_$.]*)")
_FUNC_DEF = re.compile(r"func\.func\s+(?:private\s+|public\s+|nested\s+)?@([A-Za-z_][A-Za-z0-9_$.]*)")
_FLOAT = re.compile(r"(?<![\w.#%])-?\d+\.\d*(?:e[-+]?\d+)?(?![\w.])")
_INT_IN_LIST = re.compile(r"(?<=[\[,(<\s])-?\d+(?=\s*[\],)>])")
_INT_AFTER_KEYWORD = re.compile(r"\b(dims|dim|axis|at|groups|seed|perm|to|from|upto|window|strides|padding|offsets|sizes)\s+(\[?)(-?\d+)")
_ARITH_CONST = re.compile(r"arith\.constant\s+(-?\d+)\s*:\s*(index|i\d+)")


def libc_names() -> tuple[str, ...]:
    return LIBC_NAMES


@dataclass
class Target:
    """What a mutator works on."""

    text: str
    piece: dict[str, Any]
    corpus: Corpus
    rng: random.Random
    fresh: list[int] = field(default_factory=lambda: [0])

    @property
    def lines(self) -> list[str]:
        return self.text.split("\n")

    def fresh_name(self, base: str = "fz") -> str:
        while True:
            self.fresh[0] += 1
            name = f"%{base}{self.fresh[0]}"
            if name not in self.text:
                return name


def too_large(text: str, limit: int = MAX_ELEMENTS) -> bool:
    """True when some static tensor type in ``text`` has more than ``limit`` elements."""
    for match in _TENSOR.finditer(text):
        count = 1
        for dim in match.group(1).split("x")[:-1]:
            if dim != "?":
                count *= int(dim)
        if count > limit:
            return True
    return False


def _replace_span(text: str, start: int, end: int, new: str) -> str:
    return text[:start] + new + text[end:]


def _pick_match(pattern: re.Pattern[str], text: str, rng: random.Random) -> re.Match[str] | None:
    matches = list(pattern.finditer(text))
    return rng.choice(matches) if matches else None


def _indent(line: str) -> str:
    return line[: len(line) - len(line.lstrip())]


# --------------------------------------------------------------------------
# Token level
# --------------------------------------------------------------------------


def op_name(t: Target) -> str | None:
    """Swap an op's name for another op of the same syntax (same skeleton or operand count)."""
    lines = t.lines
    ops = [op for op in t.piece.get("ops", []) if op["line"] < len(lines)]
    if not ops:
        return None
    op = t.rng.choice(ops)
    line = lines[op["line"]]
    if op["name"] not in line:
        return None
    partners = t.corpus.partners(op["name"], op["skeleton"])
    if not partners:
        return None
    lines[op["line"]] = line.replace(op["name"], t.rng.choice(partners), 1)
    return "\n".join(lines)


def shape_dim(t: Target) -> str | None:
    """Change a dimension: in one type, or the same size everywhere (keeps programs valid)."""
    matches = [m for m in _TENSOR.finditer(t.text) if m.group(1)]
    if not matches:
        return None
    match = t.rng.choice(matches)
    dims = match.group(1).split("x")[:-1]
    index = t.rng.randrange(len(dims))
    new = str(t.rng.choice(DIM_VALUES)) if t.rng.random() > 0.05 else "?"
    mode = t.rng.random()
    if mode < 0.8 and dims[index] != "?":
        old = dims[index]
        # every type: the same size replaced in every shape
        def sub(m: re.Match[str]) -> str:
            ds = m.group(1).split("x")[:-1]
            ds = [new if d == old else d for d in ds]
            return "tensor<" + "".join(d + "x" for d in ds) + m.group(2) + ">"
        text = _TENSOR.sub(sub, t.text)
        # sizes written in attributes (reshape/broadcast targets, slice sizes)
        if t.rng.random() < 0.5:
            text = re.sub(r"(?<=[\[,\s])" + re.escape(old) + r"(?=[\],])", new, text)
        return text
    if mode < 0.92:
        dims[index] = new
    elif mode < 0.96 or len(dims) == 1:
        dims.insert(index, new)
    else:
        del dims[index]
    replacement = "tensor<" + "".join(d + "x" for d in dims) + match.group(2) + ">"
    return _replace_span(t.text, match.start(), match.end(), replacement)


def element_type(t: Target) -> str | None:
    """Replace an element type: everywhere (consistently) or at one place."""
    matches = list(_ELEM.finditer(t.text))
    if not matches:
        return None
    match = t.rng.choice(matches)
    old = match.group(1)
    new = t.rng.choice([e for e in ELEMENT_TYPES if e != old])
    if t.rng.random() < 0.7:
        return _ELEM.sub(lambda m: new if m.group(1) == old else m.group(1), t.text)
    return _replace_span(t.text, match.start(1), match.end(1), new)


def enum_keyword(t: Target) -> str | None:
    """Change a comparison predicate, a reduction kind or a window padding."""
    choices: list[tuple[re.Match[str], tuple[str, ...]]] = []
    for pattern, values in (
        (re.compile(r"dlvm\.cmp\s+(\w+)"), CMP_PREDICATES),
        (re.compile(r"dlvm\.(?:reduce|scan|reduce_window)\s+(\w+)"), REDUCTION_KINDS),
        (re.compile(r"\bpadding\s+(none|half|full)\b"), WINDOW_PADDINGS),
        (re.compile(r"arith\.cmpf\s+(\w+)"), ARITH_CMPF),
        (re.compile(r"arith\.cmpi\s+(\w+)"), ARITH_CMPI),
    ):
        choices += [(m, values) for m in pattern.finditer(t.text)]
    if not choices:
        return None
    match, values = t.rng.choice(choices)
    new = t.rng.choice([v for v in values if v != match.group(1)])
    return _replace_span(t.text, match.start(1), match.end(1), new)


def int_literal(t: Target) -> str | None:
    """Change an integer in an attribute, a list or an ``arith.constant`` (incl. 2^63-1, -1)."""
    spans = []
    for m in _INT_IN_LIST.finditer(t.text):
        before = t.text[max(0, m.start() - 8): m.start()]
        if "tensor<" in before and ">" not in before:
            continue
        spans.append((m.start(), m.end()))
    spans += [(m.start(3), m.end(3)) for m in _INT_AFTER_KEYWORD.finditer(t.text)]
    spans += [(m.start(1), m.end(1)) for m in _ARITH_CONST.finditer(t.text)]
    spans = [s for s in spans if not t.text[s[0] - 1: s[0]] in ("%", "#", "x")]
    if not spans:
        return None
    start, end = t.rng.choice(spans)
    old = int(t.text[start:end])
    roll = t.rng.random()
    if roll < 0.5:
        new = t.rng.choice(INT_SPECIALS)
    elif roll < 0.8:
        new = old + t.rng.choice((-2, -1, 1, 2))
    else:
        new = -old
    if new == old:
        new = old + 1
    return _replace_span(t.text, start, end, str(new))


def float_literal(t: Target) -> str | None:
    """Change a float literal (constants, dense splats) to 0, -0, tiny, huge, ..."""
    match = _pick_match(_FLOAT, t.text, t.rng)
    if not match:
        return None
    return _replace_span(t.text, match.start(), match.end(), t.rng.choice(FLOAT_SPECIALS))


def func_name(t: Target) -> str | None:
    """Rename a function (definition and every reference) to a C library / runtime name or another function's."""
    names = sorted(set(_FUNC_DEF.findall(t.text)))
    if not names:
        return None
    old = t.rng.choice(names)
    pool = list(LIBC_NAMES) + ([n for n in names if n != old] if t.rng.random() < 0.15 else [])
    new = t.rng.choice(pool)
    return re.sub(r"@" + re.escape(old) + r"(?![A-Za-z0-9_$.])", "@" + new, t.text)


def visibility(t: Target) -> str | None:
    """Make a function private, or a private one public."""
    matches = list(re.finditer(r"func\.func\s+(private\s+)?@", t.text))
    if not matches:
        return None
    m = t.rng.choice(matches)
    if m.group(1):
        return _replace_span(t.text, m.start(1), m.end(1), "")
    return _replace_span(t.text, m.end() - 1, m.end() - 1, "private ")


def line_delete(t: Target) -> str | None:
    """Delete one to three lines."""
    lines = t.lines
    if len(lines) < 3:
        return None
    start = t.rng.randrange(len(lines))
    count = t.rng.choice((1, 1, 1, 2, 3))
    del lines[start: start + count]
    return "\n".join(lines)


def line_duplicate(t: Target) -> str | None:
    """Duplicate a line as it is (usually a redefinition error)."""
    lines = t.lines
    candidates = [i for i, line in enumerate(lines) if line.strip()]
    if not candidates:
        return None
    i = t.rng.choice(candidates)
    lines.insert(i + 1, lines[i])
    return "\n".join(lines)


# --------------------------------------------------------------------------
# Tree level (use the piece's annotation; only as the first mutation)
# --------------------------------------------------------------------------


def _values_in_scope(piece: dict[str, Any], op: dict[str, Any]) -> list[dict[str, Any]]:
    """Values usable just before ``op``: the function's arguments and earlier top-level results of its block."""
    fn = next((f for f in piece["funcs"] if f["name"] == op["func"]), None)
    out = []
    for value in piece["values"]:
        if value["func"] != op["func"] or value["line"] >= op["line"]:
            continue
        if value["line"] == (fn or {}).get("line"):
            if op["block"] == 0:
                out.append(value)
            continue
        if value["depth"] == 0 and value["block"] == op["block"] and op["depth"] == 0:
            out.append(value)
    return out


def _top_level_ops(t: Target, *, single: bool = True) -> list[dict[str, Any]]:
    return [
        op
        for op in t.piece.get("ops", [])
        if op["depth"] == 0 and (op["single_line"] or not single) and op["line"] < len(t.lines)
    ]


def _rename_result(line: str, names: list[str], new: str) -> str | None:
    """``line`` with its single result ``names[0]`` renamed to ``new``."""
    if len(names) != 1 or "#" in names[0]:
        return None
    head, sep, rest = line.partition("=")
    if not sep or names[0] not in head:
        return None
    return head.replace(names[0], new, 1) + sep + rest


def ssa_use(t: Target) -> str | None:
    """Replace an operand by another value in scope (mostly one of the same type)."""
    lines = t.lines
    ops = [op for op in t.piece.get("ops", []) if op["operands"] and op["depth"] == 0]
    if not ops:
        return None
    op = t.rng.choice(ops)
    index = t.rng.randrange(len(op["operands"]))
    old, old_type = op["operands"][index], op["operand_types"][index]
    values = [v for v in _values_in_scope(t.piece, op) if v["name"] != old]
    same = [v for v in values if v["type"] == old_type]
    pool = same if same and t.rng.random() < 0.85 else values
    if not pool:
        return None
    new = t.rng.choice(pool)["name"]
    line = lines[op["line"]]
    occurrences = [m for m in _SSA.finditer(line) if m.group() == old]
    head_end = line.find("=") + 1 if op["results"] else 0
    occurrences = [m for m in occurrences if m.start() >= head_end]
    if not occurrences:
        return None
    m = t.rng.choice(occurrences)
    lines[op["line"]] = _replace_span(line, m.start(), m.end(), new)
    return "\n".join(lines)


def swap_operands(t: Target) -> str | None:
    """Swap the first two operands of an op, and their types after the colon."""
    lines = t.lines
    ops = [op for op in t.piece.get("ops", []) if op["operands"] and len(op["operands"]) >= 2 and op["single_line"]]
    ops = [op for op in ops if op["operands"][0] != op["operands"][1]]
    if not ops:
        return None
    op = t.rng.choice(ops)
    line = lines[op["line"]]
    a, b = op["operands"][0], op["operands"][1]
    marker = "\0"
    body, colon, types = line.rpartition(" : ")
    if not colon:
        body, types = line, ""
    body = re.sub(re.escape(a) + r"(?![\w$.#-])", marker, body, count=1)
    body = re.sub(re.escape(b) + r"(?![\w$.#-])", a, body, count=1)
    body = body.replace(marker, b, 1)
    ta, tb = op["operand_types"][0], op["operand_types"][1]
    if types.startswith(f"{ta}, {tb}"):
        types = f"{tb}, {ta}" + types[len(f"{ta}, {tb}"):]
    lines[op["line"]] = body + colon + types
    return "\n".join(lines)


def dup_op(t: Target) -> str | None:
    """Duplicate an op under a fresh result name, and maybe use the copy for a later operand."""
    ops = [op for op in _top_level_ops(t) if len(op["results"]) == 1]
    if not ops:
        return None
    op = t.rng.choice(ops)
    lines = t.lines
    new = t.fresh_name()
    copy = _rename_result(lines[op["line"]], op["results"], new)
    if copy is None:
        return None
    lines.insert(op["line"] + 1, copy)
    text = "\n".join(lines)
    return _use_later(t, text, op, op["line"] + 2, new, op["result_types"][0]) or text


def _use_later(t: Target, text: str, at: dict[str, Any], from_line: int, name: str, typ: str) -> str | None:
    """``text`` with one later use (same function and block) of a ``typ`` value replaced by ``name``."""
    if t.rng.random() < 0.25:
        return None
    lines = text.split("\n")
    fn = next((f for f in t.piece["funcs"] if f["name"] == at["func"]), None)
    if fn is None or fn["blocks"] != 1:
        return None
    same_type = {v["name"] for v in t.piece["values"] if v["func"] == at["func"] and v["type"] == typ}
    candidates = []
    for i in range(from_line, len(lines)):
        line = lines[i]
        if line.startswith("}") or line.startswith("func.func") or line.lstrip().startswith("func.func"):
            break
        head_end = line.find("=") + 1 if re.match(r"\s*%[^=]*=", line) else 0
        for m in _SSA.finditer(line):
            if m.start() >= head_end and m.group() in same_type:
                candidates.append((i, m.start(), m.end()))
    if not candidates:
        return None
    i, s, e = t.rng.choice(candidates)
    lines[i] = _replace_span(lines[i], s, e, name)
    return "\n".join(lines)


def splice(t: Target) -> str | None:
    """Insert an op taken from another program, its operands renamed to values in scope of the same types."""
    anchors = _top_level_ops(t, single=False)
    if not anchors or not t.corpus.donors:
        return None
    anchor = t.rng.choice(anchors)
    scope = _values_in_scope(t.piece, anchor)
    by_type: dict[str, list[str]] = {}
    for value in scope:
        by_type.setdefault(value["type"], []).append(value["name"])
    donors = [
        (piece, op)
        for piece, op in t.corpus.donors
        if len(op["results"]) == 1 and all(typ in by_type for typ in op["operand_types"])
    ]
    if not donors:
        donors = [d for d in t.corpus.donors if len(d[1]["results"]) == 1 and not d[1]["operands"]]
        if not donors:
            return None
    piece, op = t.rng.choice(donors)
    line = piece["text"].split("\n")[op["line"]]
    new = t.fresh_name()
    line = _rename_result(line, op["results"], new)
    if line is None:
        return None
    head, _, rest = line.partition("=")
    pieces = []
    pos = 0
    tokens = list(_SSA.finditer(rest))
    if len(tokens) != len(op["operands"]):
        return None
    for m, typ in zip(tokens, op["operand_types"]):
        pieces.append(rest[pos: m.start()])
        pieces.append(t.rng.choice(by_type[typ]))
        pos = m.end()
    pieces.append(rest[pos:])
    lines = t.lines
    anchor_line = lines[anchor["line"]]
    lines.insert(anchor["line"], _indent(anchor_line) + head.strip() + " =" + "".join(pieces))
    text = "\n".join(lines)
    return _use_later(t, text, anchor, anchor["line"] + 1, new, op["result_types"][0]) or text


def _wrappable(t: Target) -> list[dict[str, Any]]:
    return [
        op
        for op in _top_level_ops(t)
        if len(op["results"]) == 1 and "#" not in op["results"][0] and op["name"] not in ("arith.constant",)
        and not op["result_types"][0].startswith(("!", "memref"))
    ]


def wrap_if(t: Target) -> str | None:
    """Put an op into both branches of an ``scf.if`` (constant or data-dependent condition)."""
    ops = _wrappable(t)
    if not ops:
        return None
    op = t.rng.choice(ops)
    lines = t.lines
    line = lines[op["line"]]
    ind = _indent(line)
    result, typ = op["results"][0], op["result_types"][0]
    then_name, else_name, cond = t.fresh_name(), t.fresh_name(), t.fresh_name()
    then_line = _rename_result(line, op["results"], then_name)
    else_line = _rename_result(line, op["results"], else_name)
    if then_line is None or else_line is None:
        return None
    scope = [v for v in _values_in_scope(t.piece, op) if v["type"] == "i1"]
    if scope and t.rng.random() < 0.5:
        cond_lines = []
        cond = t.rng.choice(scope)["name"]
    else:
        cond_lines = [f"{ind}{cond} = arith.constant {t.rng.choice(('true', 'false'))}"]
    if t.rng.random() < 0.5:
        # the else branch passes an operand of the same type through, when there is one
        same = [n for n, ty in zip(op["operands"] or [], op["operand_types"]) if ty == typ]
        if same:
            else_line = None
            else_value = t.rng.choice(same)
    block = cond_lines + [
        f"{ind}{result} = scf.if {cond} -> ({typ}) {{",
        "  " + then_line,
        f"{ind}  scf.yield {then_name} : {typ}",
        f"{ind}}} else {{",
    ]
    if else_line is not None:
        block += ["  " + else_line, f"{ind}  scf.yield {else_name} : {typ}"]
    else:
        block += [f"{ind}  scf.yield {else_value} : {typ}"]
    block.append(f"{ind}}}")
    lines[op["line"]: op["line"] + 1] = block
    return "\n".join(lines)


def wrap_for(t: Target) -> str | None:
    """Put an op into an ``scf.for`` that carries its result (the op applied 0-3 times)."""
    ops = [op for op in _wrappable(t) if op["operands"]]
    if not ops:
        return None
    op = t.rng.choice(ops)
    lines = t.lines
    line = lines[op["line"]]
    ind = _indent(line)
    result, typ = op["results"][0], op["result_types"][0]
    same = [i for i, ty in enumerate(op["operand_types"]) if ty == typ]
    inner, acc, iv = t.fresh_name(), t.fresh_name("acc"), t.fresh_name("iv")
    lb, ub, step = t.fresh_name("lb"), t.fresh_name("ub"), t.fresh_name("st")
    body_line = _rename_result(line, op["results"], inner)
    if body_line is None:
        return None
    pre = []
    if same:
        index = t.rng.choice(same)
        init = op["operands"][index]
        # the loop-carried value replaces that operand in the body
        head, sep, rest = body_line.partition("=")
        occurrences = [m for m in _SSA.finditer(rest) if m.group() == init]
        if occurrences:
            m = t.rng.choice(occurrences)
            rest = _replace_span(rest, m.start(), m.end(), acc)
        body_line = head + sep + rest
    else:
        init = t.fresh_name()
        pre = [_rename_result(line, op["results"], init)]
    trips = t.rng.choice((0, 1, 1, 2, 3, 5))
    block = pre + [
        f"{ind}{lb} = arith.constant 0 : index",
        f"{ind}{ub} = arith.constant {trips} : index",
        f"{ind}{step} = arith.constant 1 : index",
        f"{ind}{result} = scf.for {iv} = {lb} to {ub} step {step} iter_args({acc} = {init}) -> ({typ}) {{",
        "  " + body_line,
        f"{ind}  scf.yield {inner} : {typ}",
        f"{ind}}}",
    ]
    lines[op["line"]: op["line"] + 1] = block
    return "\n".join(lines)


Mutator = Callable[[Target], "str | None"]

MUTATORS: dict[str, tuple[Mutator, float, bool]] = {
    # name: (function, weight, structured)
    "op_name": (op_name, 3.0, True),
    "shape_dim": (shape_dim, 4.0, False),
    "element_type": (element_type, 2.5, False),
    "enum_keyword": (enum_keyword, 1.5, False),
    "int_literal": (int_literal, 2.0, False),
    "float_literal": (float_literal, 1.5, False),
    "func_name": (func_name, 1.0, False),
    "visibility": (visibility, 0.7, False),
    "line_delete": (line_delete, 1.0, False),
    "line_duplicate": (line_duplicate, 0.3, False),
    "ssa_use": (ssa_use, 2.0, True),
    "swap_operands": (swap_operands, 1.0, True),
    "dup_op": (dup_op, 1.0, True),
    "splice": (splice, 3.0, True),
    "wrap_if": (wrap_if, 1.5, True),
    "wrap_for": (wrap_for, 1.5, True),
}


def _weighted(rng: random.Random, names: list[str]) -> str:
    weights = [MUTATORS[n][1] for n in names]
    return rng.choices(names, weights)[0]


def mutate(piece: dict[str, Any], corpus: Corpus, rng: random.Random, *, max_steps: int = 3) -> tuple[str, list[str]]:
    """A mutant of ``piece``: one to ``max_steps`` mutations; returns the text and the mutators applied."""
    text = piece["text"]
    applied: list[str] = []
    steps = rng.choices((1, 2, 3), (0.55, 0.3, 0.15))[0]
    steps = min(steps, max_steps)
    names = list(MUTATORS)
    token_level = [n for n in names if not MUTATORS[n][2]]
    for step in range(steps):
        pool = names if step == 0 and piece.get("valid") else token_level
        for _attempt in range(8):
            name = _weighted(rng, pool)
            fn = MUTATORS[name][0]
            candidate = fn(Target(text, piece, corpus, rng))
            if candidate is None or candidate == text or too_large(candidate):
                continue
            text = candidate
            applied.append(name)
            break
    return text, applied
