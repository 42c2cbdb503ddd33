"""Source text to a libcst module, with clean errors, and large files parsed in pieces.

libcst's native parser needs about 500 bytes of memory per byte of source while it parses (a
2 MB file peaks near 1 GB), though the tree it returns is a tenth of that. A large file is
therefore cut between top-level statements into pieces of about ``PIECE_SIZE`` characters, each
piece is parsed on its own (the memory of one is reused by the next), and the pieces' statements
are joined into one module. The joined module must render the source byte for byte; otherwise, or
when the file cannot be cut safely, it is parsed whole.
"""

from __future__ import annotations

import ast
import re
import warnings
from itertools import accumulate
from typing import List, Optional

import libcst as cst

from porter.positions import render

LARGE_FILE = 256 * 1024  # characters; smaller files are parsed whole
PIECE_SIZE = 64 * 1024

_NOT_BRACKETS = re.compile(r"[^()\[\]{}]+")
_MAX_NESTING = 200  # CPython's tokenizer limit on nested brackets, in every version
# Lines as Python counts them (str.splitlines also splits at form feeds and other characters).
_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")


class ParseError(Exception):
    """A source that cannot be parsed, with a one-line message for the user."""


def python_rejects(source: str) -> Optional[Exception]:
    """Why Python's own parser rejects ``source``, or None when it accepts it."""
    try:
        _python_ast(source)
    except (SyntaxError, RecursionError, MemoryError, ValueError) as error:
        return error
    return None


def compiler_rejects(source: str) -> Optional[Exception]:
    """Why Python rejects ``source`` when it compiles it, parser and compiler both (a repeated
    keyword argument, ``return`` outside a function...), or None when it compiles."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            compile(source, "<port>", "exec", dont_inherit=True)
    except (SyntaxError, RecursionError, MemoryError, ValueError) as error:
        return error
    return None


def python_syntax_error(source: str) -> Optional[str]:
    """Python's own message and position for a source it rejects (libcst's position can be lines
    off, e.g. for ``def f(:``); None when Python accepts the source."""
    error = python_rejects(source)
    if isinstance(error, SyntaxError) and error.lineno:
        return f"syntax error at line {error.lineno}, column {error.offset or 1}: {error.msg}"
    return None


def parse(source: str) -> cst.Module:
    if _nesting(source) > _MAX_NESTING:
        # libcst's native parser can overflow the C stack (a crash, not an exception) on brackets
        # nested a few thousand deep; Python rejects more than 200 anyway.
        message = python_syntax_error(source)
        if message:
            raise ParseError(message)
    if len(source) > LARGE_FILE:
        module = _parse_in_pieces(source)
        if module is not None:
            return module
    return _parse_whole(source)


def _python_ast(source: str) -> ast.Module:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return compile(source, "<port>", "exec", ast.PyCF_ONLY_AST, dont_inherit=True)


def _nesting(source: str) -> int:
    """The bracket nesting, roughly: brackets in strings and comments count too (0 when it cannot
    exceed the limit)."""
    if source.count("(") + source.count("[") + source.count("{") <= _MAX_NESTING:
        return 0
    steps = (1 if char in "([{" else -1 for char in _NOT_BRACKETS.sub("", source))
    return max(accumulate(steps), default=0)


def _parse_whole(source: str) -> cst.Module:
    try:
        return cst.parse_module(source)
    except cst.ParserSyntaxError as error:
        message = str(error.message).splitlines()[0] if error.message else "invalid syntax"
        raise ParseError(python_syntax_error(source) or (
            f"syntax error at line {error.raw_line}, column {error.raw_column + 1}: {message}"))
    except RecursionError:
        raise ParseError("too deeply nested for the parser")


def _parse_in_pieces(source: str) -> Optional[cst.Module]:
    """The module, parsed piece by piece; None when the file cannot be cut or joined exactly."""
    pieces = _pieces(source)
    if pieces is None or len(pieces) < 2:
        return None
    try:
        modules = [cst.parse_module(piece) for piece in pieces]
    except (cst.ParserSyntaxError, RecursionError):
        return None  # the whole parse gives the error its right line
    module = _joined(modules)
    if module is None or render(module) != source:
        return None
    return module


def _pieces(source: str) -> Optional[List[str]]:
    """The source cut before top-level statements (with the blank and comment lines above them)
    into pieces of at least PIECE_SIZE characters; None if Python cannot parse it."""
    try:
        statements = _python_ast(source).body
    except (SyntaxError, RecursionError, MemoryError, ValueError):
        return None
    lines = _LINE.findall(source)
    offsets = list(accumulate(map(len, lines), initial=0))  # where each line starts
    cuts = [0]
    for previous, statement in zip(statements, statements[1:]):
        start = min([statement.lineno] + [decorator.lineno for decorator in
                                          getattr(statement, "decorator_list", ())]) - 1
        end = previous.end_lineno  # the line after the previous statement, 0-based
        if start < end:
            continue  # on the line where the previous statement ends (``a = 1; b = 2``)
        cut = start
        while cut > end and _blank_or_top_comment(lines[cut - 1]):
            cut -= 1
        # Lines left between the statements (an indented comment closing the previous block)
        # belong to that block: no cut here.
        if cut != end:
            continue
        if offsets[cut] - offsets[cuts[-1]] >= PIECE_SIZE:
            cuts.append(cut)
    cuts.append(len(lines))
    return ["".join(lines[begin:end]) for begin, end in zip(cuts, cuts[1:])]


def _blank_or_top_comment(line: str) -> bool:
    return line in ("\n", "\r\n", "\r") or line.startswith("#")


def _joined(modules: List[cst.Module]) -> Optional[cst.Module]:
    """One module of the pieces' statements: a piece's leading lines go back to its first
    statement, where a parse of the whole file puts them."""
    first, last = modules[0], modules[-1]
    if any(module.footer for module in modules[:-1]) or any(not module.body for module in modules[1:]):
        return None
    if len({module.default_newline for module in modules}) > 1:
        return None
    indents = {module.default_indent for module in modules if _indents(module)}
    if len(indents) > 1:
        return None
    body: List[cst.BaseStatement] = list(first.body)
    for module in modules[1:]:
        head, *rest = module.body
        if module.header:
            head = head.with_changes(leading_lines=[*module.header, *head.leading_lines])
        body += [head, *rest]
    return first.with_changes(
        body=body,
        footer=last.footer,
        default_indent=indents.pop() if indents else first.default_indent,
        has_trailing_newline=last.has_trailing_newline,
    )


def _indents(module: cst.Module) -> bool:
    """Whether the module has an indented block (only then did libcst see its indentation)."""
    return any(isinstance(getattr(statement, "body", None), cst.IndentedBlock) for statement in module.body)
