"""The rule contract: what a rule declares, what it reports, and the registry of rules.

A rule is one module under the ``porter.rules`` package that defines ``RULE``, an instance of a
``Rule`` subclass. The rule declares its code, name, kind, summary, rationale and examples as
data; its ``run`` method looks at the shared ``FileContext`` and asks it for edits and findings.
"""

from __future__ import annotations

import importlib
import pkgutil
import textwrap
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, FrozenSet, Iterable, List, Mapping, Optional, Tuple

if TYPE_CHECKING:  # pragma: no cover
    from porter.context import FileContext

FIX = "fix"
WARN = "warn"

# How much a finding left for a person matters (``--check`` fails on the first two).
ERROR = "error"  # the port is not a complete IPU program
WARNING = "warning"  # likely to fail or misbehave on the IPU
NOTE = "note"  # an optional improvement
SEVERITIES = (ERROR, WARNING, NOTE)

# The frameworks a file can use, as detected from its imports.
KERAS = "keras"  # TensorFlow 2 / Keras
TF1 = "tf1"  # TensorFlow 1 graph mode (tf.compat.v1 sessions)
TORCH = "torch"


@dataclass(frozen=True)
class Finding:
    """One thing a rule changed (``fixed``) or left for a person (not ``fixed``), with how much
    that matters (``severity``: error, warning or note; None for what was fixed)."""

    code: str
    line: int
    column: int
    message: str
    fixed: bool
    cell: Optional[int] = None
    severity: Optional[str] = None

    def sort_key(self) -> Tuple[int, int, int, str, str]:
        return (self.cell or 0, self.line, self.column, self.code, self.message)

    @property
    def status(self) -> str:
        """``fixed``, or the severity of what is left for a person."""
        return "fixed" if self.fixed else (self.severity or WARNING)

    @property
    def blocking(self) -> bool:
        """Left for a person and not only advice: ``--check`` fails on it (notes too with ``--strict``)."""
        return not self.fixed and self.severity != NOTE


def snippet(text: str) -> str:
    """Source text written as an indented triple-quoted string (opened with a backslash, so it
    starts with its first line), as the code it is: the common indentation is removed
    (``textwrap.dedent``). Used for the pieces of an example joined with ``+``."""
    return textwrap.dedent(text)


@dataclass(frozen=True)
class Example:
    """A before/after pair. ``after=None`` means the code must come back unchanged.

    ``reported`` says whether the rule must report a finding on ``before``. ``options`` are Config
    fields the example is ported with (``{"steps_per_execution": 8}``), for rules driven by options.

    ``before`` and ``after`` go through ``snippet()``: an example is written where it is declared, as
    an indented triple-quoted string, and reads as the code it is. Text at column 0 is unchanged.
    """

    before: str
    after: Optional[str] = None
    reported: bool = True
    options: Optional[Mapping[str, Any]] = None

    def __post_init__(self) -> None:
        # frozen: the normalised text is set the way dataclasses set fields themselves
        object.__setattr__(self, "before", snippet(self.before))
        if self.after is not None:
            object.__setattr__(self, "after", snippet(self.after))


class Rule:
    code: ClassVar[str]
    name: ClassVar[str]
    kind: ClassVar[str]
    frameworks: ClassVar[FrozenSet[str]]
    summary: ClassVar[str]
    rationale: ClassVar[str]
    examples: ClassVar[Tuple[Example, ...]] = ()
    # The severity of what the rule leaves for a person (a report may say otherwise).
    severity: ClassVar[str] = WARNING
    # The codes of the rules this one relies on having run before it in the same port: it reads
    # state they fill (a ``SharedKey``) or the edits they asked for, or its edits must land after
    # theirs. Rules run in code order; ``all_rules`` refuses an order that breaks this.
    after: ClassVar[Tuple[str, ...]] = ()

    def run(self, ctx: "FileContext") -> None:
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"<{self.code} {self.name}>"


_registry: Optional[List[Rule]] = None


def all_rules() -> List[Rule]:
    """Every rule, sorted by code: the fixed order in which rules run, which must satisfy each
    rule's ``after``.

    Rule modules are discovered under the ``porter.rules`` package, so adding a rule is adding a
    file. Private packages (``_analysis``: what a framework's rules share) hold no rules and are
    skipped. Modules are imported on first use only: a run that parses no file never pays for them.
    """
    global _registry
    if _registry is None:
        import porter.rules as rules

        found = []
        for info in pkgutil.walk_packages(rules.__path__, prefix=rules.__name__ + "."):
            if info.ispkg or _private(info.name):
                continue
            module = importlib.import_module(info.name)
            rule = getattr(module, "RULE", None)
            if isinstance(rule, Rule):
                found.append(rule)
        codes = [rule.code for rule in found]
        duplicated = {code for code in codes if codes.count(code) > 1}
        if duplicated:
            raise RuntimeError(f"duplicate rule codes: {sorted(duplicated)}")
        ordered = sorted(found, key=lambda rule: rule.code)
        check_order(ordered)
        _registry = ordered
    return _registry


def check_order(rules: List[Rule]) -> None:
    """Raise when a rule names in ``after`` a code that no rule has or that runs after it."""
    position = {rule.code: index for index, rule in enumerate(rules)}
    for index, rule in enumerate(rules):
        for code in rule.after:
            if code not in position:
                raise RuntimeError(f"{rule.code} runs after {code}, which is no rule")
            if position[code] > index:
                raise RuntimeError(f"{rule.code} runs after {code}, but rules run in code order: "
                                   f"{code} would run later")


def _private(module: str) -> bool:
    return any(part.startswith("_") for part in module.split("."))


def rule_by_code(code: str) -> Optional[Rule]:
    for rule in all_rules():
        if rule.code == code.upper() or rule.name == code:
            return rule
    return None


def code_matches(code: str, patterns: Iterable[str]) -> bool:
    """True when ``code`` equals one of ``patterns`` or starts with one (``IPU1`` selects IPU1xx)."""
    return any(code.startswith(pattern) for pattern in patterns)


def is_selected(code: str, select: Iterable[str], ignore: Iterable[str]) -> bool:
    select = tuple(select)
    if select and not code_matches(code, select):
        return False
    return not code_matches(code, ignore)
