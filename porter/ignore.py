"""gitignore-style patterns: ``.gitignore`` files, and the ``exclude`` settings, which use the same
syntax so that one set of rules is learnt once.

The matching follows git's documentation (gitignore(5)): blank lines and ``#`` comments are
skipped, ``\\#``/``\\!`` escape, trailing spaces are dropped unless escaped, ``!`` re-includes, a
trailing ``/`` matches directories only, a pattern with a ``/`` at the start or in the middle is
anchored to the folder of its file (else it matches at any depth), ``*`` and ``?`` and ``[...]``
never match ``/``, ``**/`` at the start matches any leading folders, ``/**`` at the end everything
inside, ``/**/`` zero or more folders; the last matching pattern wins, patterns of a deeper file
win over those above it, and nothing inside an ignored folder can be re-included.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import Iterable, List, Optional, Sequence, Tuple


@dataclass(frozen=True)
class Pattern:
    text: str
    regex: "re.Pattern[str]"
    negated: bool
    dir_only: bool

    def matches(self, relative: str, is_dir: bool) -> bool:
        if self.dir_only and not is_dir:
            return False
        return self.regex.match(relative) is not None


def _strip_trailing_spaces(line: str) -> str:
    end = len(line)
    while end > 0 and line[end - 1] == " ":
        backslashes = 0
        index = end - 2
        while index >= 0 and line[index] == "\\":
            backslashes += 1
            index -= 1
        if backslashes % 2:  # an escaped space stays
            break
        end -= 1
    return line[:end]


def _translate(glob: str) -> str:
    """The regex body for a glob without its anchoring (``*`` etc. never cross ``/``)."""
    out: List[str] = []
    index, length = 0, len(glob)
    while index < length:
        char = glob[index]
        if char == "*":
            stars = 1
            while index + stars < length and glob[index + stars] == "*":
                stars += 1
            at_start = index == 0 or glob[index - 1] == "/"
            at_end = index + stars == length or glob[index + stars] == "/"
            if stars >= 2 and at_start and at_end:
                if index + stars == length:  # trailing "**": everything below
                    out.append(".*")
                    index += stars
                else:  # "**/": zero or more folders
                    out.append("(?:.*/)?")
                    index += stars + 1
                continue
            out.append("[^/]*")
            index += stars
        elif char == "?":
            out.append("[^/]")
            index += 1
        elif char == "[":
            end = index + 1
            if end < length and glob[end] in "!^":
                end += 1
            if end < length and glob[end] == "]":
                end += 1
            while end < length and glob[end] != "]":
                end += 1
            if end >= length:  # no closing bracket: a literal "["
                out.append(re.escape(char))
                index += 1
                continue
            body = glob[index + 1:end]
            negate = body[:1] in ("!", "^")
            if negate:
                body = body[1:]
            body = body.replace("\\", "\\\\").replace("]", "\\]") if body else body
            body = body.replace("[", "\\[")
            out.append(f"(?!/)[{'^' if negate else ''}{body}]")
            index = end + 1
        elif char == "\\" and index + 1 < length:
            out.append(re.escape(glob[index + 1]))
            index += 2
        else:
            out.append(re.escape(char))
            index += 1
    return "".join(out)


def compile_pattern(line: str) -> Optional[Pattern]:
    """One gitignore line as a Pattern, or None for a blank line or a comment."""
    text = line.rstrip("\n").rstrip("\r")
    if not text or text.startswith("#"):
        return None
    text = _strip_trailing_spaces(text)
    negated = text.startswith("!")
    if negated:
        text = text[1:]
    elif text.startswith(("\\#", "\\!")):
        text = text[1:]
    dir_only = text.endswith("/")
    body = text.rstrip("/") if dir_only else text
    if not body:
        return None
    anchored = "/" in body
    body = body.lstrip("/") if body.startswith("/") else body
    regex = _translate(body)
    if not anchored:
        regex = "(?:.*/)?" + regex
    return Pattern(line.strip(), re.compile(f"^{regex}$", re.DOTALL), negated, dir_only)


def parse(lines: Iterable[str]) -> List[Pattern]:
    return [pattern for pattern in (compile_pattern(line) for line in lines) if pattern is not None]


@dataclass(frozen=True)
class PatternSet:
    """Patterns relative to one folder (the folder of a ``.gitignore``, or of a ``pyproject.toml``)."""

    base: str  # an absolute, normalised folder
    patterns: Tuple[Pattern, ...]

    def match(self, path: str, is_dir: bool) -> Optional[bool]:
        """True (ignored), False (re-included) or None (no pattern says anything) for ``path``,
        an absolute normalised path."""
        relative = _relative(path, self.base)
        if relative is None:
            return None
        verdict = None
        for pattern in self.patterns:
            if pattern.matches(relative, is_dir):
                verdict = not pattern.negated
        return verdict


def _relative(path: str, base: str) -> Optional[str]:
    if path == base:
        return None
    prefix = base if base.endswith(os.sep) else base + os.sep
    if not path.startswith(prefix):
        return None
    relative = path[len(prefix):]
    return relative.replace(os.sep, "/") if os.sep != "/" else relative


def load(folder: str, name: str = ".gitignore") -> Optional[PatternSet]:
    path = os.path.join(folder, name)
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            patterns = parse(handle.read().splitlines())
    except OSError:
        return None
    return PatternSet(folder, tuple(patterns)) if patterns else None


def is_ignored(sets: Sequence[PatternSet], path: str, is_dir: bool) -> bool:
    """The verdict of the sets, outermost first: a later (deeper) set overrides an earlier one."""
    verdict = None
    for pattern_set in sets:
        found = pattern_set.match(path, is_dir)
        if found is not None:
            verdict = found
    return bool(verdict)


def git_root(folder: str) -> Optional[str]:
    """The working tree root above ``folder`` (a folder holding ``.git``), if any."""
    current = folder
    while True:
        if os.path.exists(os.path.join(current, ".git")):
            return current
        parent = os.path.dirname(current)
        if parent == current:
            return None
        current = parent


def _user_excludes() -> Optional[PatternSet]:
    """The user's own ignore file at git's default place (``$XDG_CONFIG_HOME/git/ignore`` or
    ``~/.config/git/ignore``); a ``core.excludesFile`` set elsewhere is not read (that would mean
    running git)."""
    config_home = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    return load(os.path.join(config_home, "git"), "ignore")


def gitignores_above(folder: str) -> List[PatternSet]:
    """The user's git ignore file, ``.git/info/exclude`` and the ``.gitignore`` files from the
    repository root down to ``folder`` (included), weakest first; nothing outside a git working
    tree."""
    root = git_root(folder)
    if root is None:
        return []
    sets: List[PatternSet] = []
    user = _user_excludes()
    if user is not None:
        sets.append(PatternSet(root, user.patterns))
    info = load(os.path.join(root, ".git", "info"), "exclude")
    if info is not None:
        sets.append(PatternSet(root, info.patterns))
    chain = [folder]
    while chain[-1] != root:
        chain.append(os.path.dirname(chain[-1]))
    for current in reversed(chain):
        found = load(current)
        if found is not None:
            sets.append(found)
    return sets
