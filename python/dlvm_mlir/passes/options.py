"""Pass options: declaration, parsing of ``{a=1 b=foo}`` text, printing back.

The text follows MLIR's pass-option syntax: space-separated ``key=value``
pairs, a bare ``key`` meaning ``key=true``; a value may be quoted with ``'``
or ``"`` or wrapped in ``{...}`` to hold spaces; list values are
comma-separated.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from dlvm_mlir.errors import PipelineError, RegistryError

__all__ = [
    "Option",
    "OptionValue",
    "format_options",
    "format_scalar",
    "parse_option_text",
    "resolve_options",
]

OptionValue = bool | int | float | str | tuple[Any, ...]

_SCALAR_TYPES = (bool, int, float, str)
_TRUE = frozenset({"true", "True", "TRUE", "1"})
_FALSE = frozenset({"false", "False", "FALSE", "0"})
_TYPE_WORDS = {bool: "a boolean", int: "an integer", float: "a number", str: "a string"}
_CLOSERS = {"{": "}", "'": "'", '"': '"'}


@dataclass(frozen=True)
class Option:
    """One option of a pass or pipeline, written ``name=value`` in a pipeline.

    ``type`` is ``bool``, ``int``, ``float`` or ``str``; with ``is_list`` the
    value is a tuple of that type, written ``a,b,c``. ``choices`` restricts a
    ``str`` option to the listed words. The Python attribute holding the
    value is ``name`` with ``-`` replaced by ``_``.
    """

    name: str
    type: type
    default: OptionValue
    help: str
    choices: tuple[str, ...] = ()
    is_list: bool = False
    #: how docs/Passes.md states a default that depends on the machine (``threads``)
    default_doc: str = ""

    @property
    def attr(self) -> str:
        return self.name.replace("-", "_")

    def check_declaration(self, owner: str) -> None:
        """Raise RegistryError when the declaration itself is inconsistent."""
        where = f"option '{self.name}' of '{owner}'"
        if self.type not in _SCALAR_TYPES:
            raise RegistryError(
                f"{where}: type must be bool, int, float or str, not {self.type!r}"
            )
        if not self.name or not self.attr.isidentifier():
            raise RegistryError(f"{where}: name must be a word with '-' separators")
        if self.choices and self.type is not str:
            raise RegistryError(f"{where}: choices need type str")
        if not self.help:
            raise RegistryError(f"{where}: help text is missing")
        try:
            self.validate(self.default)
        except PipelineError as err:
            raise RegistryError(f"{where}: bad default: {err}") from None

    def parse(self, text: str) -> OptionValue:
        """Convert the option's text to its typed value (PipelineError when it does not fit)."""
        if not self.is_list:
            return self._parse_scalar(_unwrap(text))
        unwrapped = _unwrap(text)
        if not unwrapped:
            return ()
        return tuple(
            self._parse_scalar(_unwrap(item))
            for item in _split_top_level(unwrapped, ",")
        )

    def validate(self, value: object) -> OptionValue:
        """Check a value given from Python; return it as stored (lists become tuples)."""
        if not self.is_list:
            return self._validate_scalar(value)
        if isinstance(value, (str, bytes)) or not hasattr(value, "__iter__"):
            raise PipelineError(f"option '{self.name}' expects a list, got {value!r}")
        return tuple(self._validate_scalar(item) for item in value)

    def format(self, value: OptionValue) -> str:
        """The option's value as pipeline text, parseable by ``parse``."""
        if self.is_list:
            return ",".join(format_scalar(item) for item in value)
        return format_scalar(value)

    def describe_type(self) -> str:
        """A short type description for help output, e.g. ``list<int>``."""
        base = "|".join(self.choices) if self.choices else self.type.__name__
        return f"list<{base}>" if self.is_list else base

    def _parse_scalar(self, text: str) -> OptionValue:
        if self.type is bool:
            if text in _TRUE:
                return True
            if text in _FALSE:
                return False
            return self._reject(text)
        if self.type is int:
            try:
                return int(text, 0)
            except ValueError:
                return self._reject(text)
        if self.type is float:
            try:
                return float(text)
            except ValueError:
                return self._reject(text)
        return self._validate_scalar(text)

    def _validate_scalar(self, value: object) -> OptionValue:
        wrong_kind = not isinstance(value, self.type) or (
            self.type is not bool and isinstance(value, bool)
        )
        if (
            self.type is float
            and isinstance(value, int)
            and not isinstance(value, bool)
        ):
            value, wrong_kind = float(value), False
        if wrong_kind:
            return self._reject(value)
        if self.choices and value not in self.choices:
            raise PipelineError(
                f"option '{self.name}' expects one of {', '.join(self.choices)}; got '{value}'"
            )
        return value

    def _reject(self, value: object) -> OptionValue:
        shown = value if isinstance(value, str) else repr(value)
        raise PipelineError(
            f"option '{self.name}' expects {_TYPE_WORDS[self.type]}, got '{shown}'"
        )


def parse_option_text(text: str) -> list[tuple[str, str | None]]:
    """Split ``a=1 b="x y" c`` into ``[("a", "1"), ("b", '"x y"'), ("c", None)]``.

    Values keep their quotes or braces; ``Option.parse`` removes them.
    """
    pairs: list[tuple[str, str | None]] = []
    for word in _split_top_level(text, " "):
        name, eq, value = word.partition("=")
        if not name:
            raise PipelineError(f"malformed option '{word}': missing option name")
        pairs.append((name, value if eq else None))
    return pairs


def resolve_options(
    owner: str, declared: tuple[Option, ...], text: str
) -> dict[str, OptionValue]:
    """Typed option values keyed by Python attribute, defaults filled in."""
    by_name = {option.name: option for option in declared}
    values = {option.attr: option.default for option in declared}
    seen: set[str] = set()
    for name, raw in parse_option_text(text):
        option = by_name.get(name)
        if option is None:
            known = ", ".join(by_name) or "none"
            raise PipelineError(f"'{owner}' has no option '{name}' (options: {known})")
        if name in seen:
            raise PipelineError(f"option '{name}' of '{owner}' is given more than once")
        seen.add(name)
        if raw is None and option.type is not bool:
            raise PipelineError(f"option '{name}' of '{owner}' needs a value")
        try:
            values[option.attr] = option.parse("true" if raw is None else raw)
        except PipelineError as err:
            raise PipelineError(f"'{owner}': {err}") from None
    return values


def format_options(declared: tuple[Option, ...], values: dict[str, OptionValue]) -> str:
    """``{a=1 b=foo}`` for the options that differ from their default ("" when none)."""
    words = [
        f"{option.name}={option.format(values[option.attr])}"
        for option in declared
        if values[option.attr] != option.default
    ]
    return "{" + " ".join(words) + "}" if words else ""


def format_scalar(value: OptionValue) -> str:
    """One option value as pipeline text, quoted when it holds spaces or punctuation."""
    if isinstance(value, bool):
        return "true" if value else "false"
    text = str(value)
    if text == "" or any(ch in text for ch in " ,{}'\""):
        return "{" + text + "}" if '"' in text else f'"{text}"'
    return text


def _unwrap(text: str) -> str:
    """Remove one level of surrounding quotes or braces."""
    if len(text) >= 2 and text[0] in _CLOSERS and text[-1] == _CLOSERS[text[0]]:
        return text[1:-1]
    return text


def _split_top_level(text: str, separator: str) -> list[str]:
    """Split on ``separator`` outside quotes and braces; drop empty pieces when splitting on spaces."""
    pieces: list[str] = []
    current: list[str] = []
    closers: list[str] = []
    for ch in text:
        if closers and ch == closers[-1]:
            closers.pop()
        elif ch in _CLOSERS and (not closers or closers[-1] == "}"):
            closers.append(_CLOSERS[ch])
        elif ch == separator and not closers:
            pieces.append("".join(current))
            current = []
            continue
        current.append(ch)
    if closers:
        raise PipelineError(f"unbalanced '{closers[-1]}' in option text '{text}'")
    pieces.append("".join(current))
    if separator == " ":
        return [piece for piece in pieces if piece]
    return pieces
