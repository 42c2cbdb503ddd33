"""Per-file facts shared by all rules, and the edits and findings they ask for.

Everything here is computed once per file and cheaply: one walk over the tree builds the parent
links and the lists of nodes by type, and names are resolved through the file's imports (an
import/alias table, with function scopes consulted only for names a function rebinds). libcst's
metadata providers would give the same answers at several times the cost of the parse itself.

Rules never rebuild the tree. They ask the context to replace a node, to remove or insert
statements, or to wrap statements in a ``with`` block; the engine applies every request in one
pass at the end (see ``porter.edits``).
"""

from __future__ import annotations

import builtins
import dataclasses
from collections import Counter
from typing import (Any, Callable, Dict, Generic, Hashable, Iterable, Iterator, List, Optional, Sequence, Set, Tuple,
                    Type, TypeVar, Union)

import libcst as cst

from porter.config import Config
from porter.keras_exports import KERAS_EXPORTS
from porter.markers import SHELL_LINE
from porter.project import ALONE, Project
from porter.rule import KERAS, SEVERITIES, TF1, TORCH, Finding

NodeT = TypeVar("NodeT", bound=cst.CSTNode)
T = TypeVar("T")
Replacement = Union[cst.CSTNode, Callable[[cst.CSTNode], cst.CSTNode]]

# Nodes that never matter to a rule: skipping them makes the walk about ten times cheaper.
_SKIPPED_NODES = (
    cst.BaseParenthesizableWhitespace,
    cst.Newline,
    cst.EmptyLine,
    cst.TrailingWhitespace,
    cst.Comment,
    cst.LeftParen,
    cst.RightParen,
    cst.Comma,
    cst.Dot,
    cst.Colon,
    cst.AssignEqual,
    cst.Semicolon,
)
_SKIPPED_FIELDS = frozenset(
    {"lpar", "rpar", "leading_lines", "lines_after_decorators", "header", "footer", "comma",
     "whitespace_before", "whitespace_after", "trailing_whitespace", "semicolon", "equal"}
)
_fields_by_type: Dict[type, Tuple[str, ...]] = {}

_SCOPES = (cst.FunctionDef, cst.Lambda, cst.ClassDef)
_COMPOUND_BLOCKS = (cst.Module, cst.IndentedBlock)


def _child_fields(node_type: type) -> Tuple[str, ...]:
    names = _fields_by_type.get(node_type)
    if names is None:
        names = tuple(
            field.name for field in dataclasses.fields(node_type) if field.name not in _SKIPPED_FIELDS
        )
        _fields_by_type[node_type] = names
    return names


_kept_types: Dict[type, bool] = {}


def _kept(value_type: type) -> bool:
    """Whether values of this type are child nodes worth visiting (cached: isinstance checks
    against libcst's abstract base classes are slow)."""
    kept = _kept_types.get(value_type)
    if kept is None:
        kept = _kept_types[value_type] = issubclass(value_type, cst.CSTNode) and not issubclass(
            value_type, _SKIPPED_NODES)
    return kept


def _child_list(node: cst.CSTNode) -> List[cst.CSTNode]:
    """The child nodes that carry code, in source order. Every walk of the porter goes through
    here, for every node it visits: the kept types are read from their cache without a call."""
    children = []
    kept_types = _kept_types
    for name in _fields_by_type.get(type(node)) or _child_fields(type(node)):
        value = getattr(node, name)
        value_type = type(value)
        if value_type is tuple or value_type is list:
            for item in value:
                kept = kept_types.get(type(item))
                if kept or (kept is None and _kept(type(item))):
                    children.append(item)
        else:
            kept = kept_types.get(value_type)
            if kept or (kept is None and _kept(value_type)):
                children.append(value)
    return children


def iter_children(node: cst.CSTNode) -> Iterator[cst.CSTNode]:
    """The child nodes that carry code, in source order."""
    return iter(_child_list(node))


def walk(root: cst.CSTNode, skip: Tuple[type, ...] = ()) -> Iterator[cst.CSTNode]:
    """Pre-order walk in source order; nodes of the ``skip`` types below the root are left out,
    with everything under them."""
    stack = [root]
    pop, extend = stack.pop, stack.extend
    # libcst's concrete node classes have no subclasses: for them a set lookup of the type answers
    # what isinstance answers through ABCMeta, several times slower
    exact = frozenset(skip) if skip and not any(node_type.__subclasses__() for node_type in skip) else None
    while stack:
        node = pop()
        yield node
        children = _child_list(node)
        if exact is not None:
            children = [child for child in children if type(child) not in exact]
        elif skip:
            children = [child for child in children if not isinstance(child, skip)]
        children.reverse()
        extend(children)


def dotted_name(node: cst.CSTNode) -> Optional[str]:
    """``a.b.c`` for a Name/Attribute chain, else None."""
    # type() checks: isinstance against libcst's node classes goes through ABCMeta, several times
    # slower, and nothing subclasses Name or Attribute.
    parts = []
    while type(node) is cst.Attribute:
        parts.append(node.attr.value)
        node = node.value
    if type(node) is not cst.Name:
        return None
    parts.append(node.value)
    return ".".join(reversed(parts))


def import_bindings(node: Union[cst.Import, cst.ImportFrom]) -> Iterator[Tuple[str, str]]:
    """(local name, qualified name) for each name an import statement binds."""
    if isinstance(node, cst.Import):
        for alias in node.names:
            full = dotted_name(alias.name)
            if full is None:
                continue
            local = bound_name(alias)
            yield local, full if alias.asname is not None else local  # `import a.b` binds `a`
        return
    if node.relative or node.module is None or isinstance(node.names, cst.ImportStar):
        return
    base = dotted_name(node.module)
    if base is None:
        return
    for alias in node.names:
        name = dotted_name(alias.name)
        if name is None:
            continue
        yield bound_name(alias), f"{base}.{name}"


def bound_name(alias: cst.ImportAlias) -> str:
    """The local name an import alias binds: ``K`` of ``keras as K``, ``keras`` of ``keras.utils``."""
    if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
        return alias.asname.name.value
    return (dotted_name(alias.name) or "").split(".")[0]


def code_of(ctx: "FileContext", node: cst.CSTNode) -> str:
    """The source text of ``node`` as the file writes it."""
    return ctx.module.code_for_node(node)


def in_loop(ctx: "FileContext", node: cst.CSTNode, owner: cst.CSTNode) -> bool:
    """Whether ``node`` runs inside a ``for``/``while`` loop of ``owner`` (a function or module)."""
    for ancestor in ctx.ancestors(node):
        if ancestor is owner:
            return False
        if isinstance(ancestor, (cst.For, cst.While)):
            return True
    return False


def is_under(name: Optional[str], prefixes: Iterable[str]) -> bool:
    """Whether the dotted ``name`` is one of ``prefixes`` or lies under one (``numpy.random`` under
    ``numpy``, not ``numpyro``); False for None."""
    return name is not None and any(name == prefix or name.startswith(prefix + ".") for prefix in prefixes)


def bound_names(target: cst.CSTNode) -> List[str]:
    """The names an assignment target binds: ``a``, ``a, (b, *c)``; not ``a.b`` or ``a[0]``."""
    if isinstance(target, cst.Name):
        return [target.value]
    if isinstance(target, (cst.Tuple, cst.List)):
        return [name for element in target.elements for name in bound_names(element.value)]
    if isinstance(target, cst.StarredElement):
        return bound_names(target.value)
    return []


# Prefixes under which TensorFlow exposes Keras, mapped to one canonical spelling.
_KERAS_PREFIXES = (
    "tensorflow.python.keras.",
    "tensorflow.compat.v1.keras.",
    "tensorflow.compat.v2.keras.",
    "tensorflow.keras.",
    "tf_keras.",
    "keras_core.",  # the preview of Keras 3
    "keras.",
)


# The modules whose star imports bring names the analyses resolve.
_TENSORFLOW_MODULES = ("tensorflow", "keras", "tf_keras", "keras_core")


def _star_source(name: str, modules: Sequence[str]) -> Optional[str]:
    """Which of the star-imported ``modules`` (in file order) binds ``name`` last, as far as their
    known contents tell; None when a module of unknown contents may be the one."""
    candidates = []
    for module in modules:
        exports = KERAS_EXPORTS.get((canonical_keras(module + ".") or "")[:-1])
        if exports is None or name in exports:
            candidates.append((module, exports is not None))
    if not candidates:
        return None
    module, known = candidates[-1]
    return module if known or len(candidates) == 1 else None


def canonical_keras(qualified: Optional[str]) -> Optional[str]:
    """``tensorflow.keras.layers.LSTM`` -> ``keras.layers.LSTM``; None if not Keras."""
    if qualified is None:
        return None
    for prefix in _KERAS_PREFIXES:
        if qualified.startswith(prefix):
            return "keras." + qualified[len(prefix):]
    return None


@dataclasses.dataclass(frozen=True, eq=False)
class SharedKey(Generic[T]):
    """The key of one piece of per-file state that rules and analyses share through
    ``FileContext.shared``: defined once, beside the code that fills it, and imported by every
    reader, so who writes and who reads it is a grep away and ``ctx.shared(KEY)`` has KEY's type.

    Keys compare by identity: two keys never meet in the store, even under one ``name`` (which
    only names the state in messages). ``make`` builds the empty value (``set``, ``dict``) for
    users that fill it; keys of a computed result leave it out and each ``shared`` call passes
    the computation instead.
    """

    name: str
    make: Optional[Callable[[], T]] = None

    def __repr__(self) -> str:
        return f"SharedKey({self.name!r})"


# ``shared`` without ``per``: one value for the whole file.
_WHOLE_FILE = object()


@dataclasses.dataclass
class _Scope:
    imports: Dict[str, str]
    other_bindings: Set[str]


@dataclasses.dataclass
class _Report:
    code: str
    anchor: cst.CSTNode
    message: str
    fixed: bool
    severity: Optional[str] = None


def _rule_severity(code: str) -> str:
    from porter.rule import WARNING, rule_by_code

    rule = rule_by_code(code)
    return rule.severity if rule is not None else WARNING


def _is_shell_line(statement: cst.BaseStatement) -> bool:
    """The placeholder of a notebook's shell escape or magic that runs no Python (porter.notebook)."""
    return (type(statement) is cst.SimpleStatementLine and len(statement.body) == 1
            and type(statement.body[0]) is cst.Expr and type(statement.body[0].value) is cst.Name
            and statement.body[0].value.value.startswith(SHELL_LINE))


def _without_edges(body: Sequence[cst.BaseStatement], low: int, high: int,
                   edges: Callable[[cst.BaseStatement], bool]) -> Tuple[int, int]:
    """The piece ``low..high`` of ``body`` without the statements ``edges`` accepts at its start
    and end."""
    while low <= high and edges(body[low]):
        low += 1
    while high >= low and edges(body[high]):
        high -= 1
    return low, high


class FileContext:
    """What rules know about one file, and what they ask to change in it."""

    def __init__(self, module: cst.Module, config: Config, project: Project = ALONE) -> None:
        """``project``: what the files of its project ported with the module tell about it
        (``porter.project``): Keras code it imports (a model builder) makes it Keras code whatever
        it imports itself."""
        self.module = module
        self.config = config
        self._parents: Dict[int, cst.CSTNode] = {}
        self._by_type: Dict[type, List[cst.CSTNode]] = {}
        self._scopes: Dict[int, _Scope] = {}
        self._index()
        self._bindings = self._local_bindings()
        self._star_imported = self._star_import_bindings()
        self.aliases: Dict[str, str] = self._scope(module).imports
        # Every name any import of the file binds: a quick "no" for all other names.
        self.imported_names: Set[str] = {
            local for node_type in (cst.Import, cst.ImportFrom) for node in self.nodes(node_type)
            for local, _ in import_bindings(node)
        }
        self._unshadowed: Dict[str, str] = self._unshadowed_imports()
        self.imported_names |= self._unshadowed.keys()
        frameworks = self._detect_frameworks()
        self.frameworks = frameworks if frameworks or not project.keras_import else frozenset({KERAS})
        self.project = project
        self._relative: Optional[Dict[str, str]] = None  # what relative imports bind, read once
        # Requests collected from the rules, applied by porter.edits.
        self.replacements: Dict[int, List[Tuple[cst.CSTNode, Replacement]]] = {}
        self.removed: Set[int] = set()
        # The removed, unwrapped and replaced nodes, by id, with the code of the first rule that asked.
        self.removed_by: Dict[int, Tuple[cst.CSTNode, Optional[str]]] = {}
        self.unwrapped: Set[int] = set()
        self.inserted_before: Dict[int, List[cst.BaseStatement]] = {}
        self.inserted_after: Dict[int, List[cst.BaseStatement]] = {}
        self.wraps: Dict[int, List["Wrap"]] = {}
        self.imports: List[Tuple[str, Optional[str], Optional[str], str]] = []
        # Names a top-level import binds, to be imported from another module (``move_import``), or
        # (None) not at all (``drop_import``).
        self.moved_imports: List[Tuple[cst.ImportAlias, Optional[str]]] = []
        self.reports: List[_Report] = []
        self.dirty: Set[int] = set()
        # Suppression comments (porter.suppress): the code of the rule running, set by the engine,
        # and what was refused or accepted for each code (imports of a rule that only had refused
        # edits are dropped).
        self.rule_code: Optional[str] = None
        self._suppressed: Dict[int, list] = {}
        self._refused: Set[str] = set()
        self._accepted: Set[str] = set()
        self._import_requesters: Dict[Tuple[str, Optional[str], Optional[str], str], Set[Optional[str]]] = {}
        # Notebook cell markers: module-level statements that separate the cells (never edited,
        # never wrapped into a block).
        self.barriers: Set[int] = set()
        # The rendered (edited) version of each dirty node, filled in while edits are applied.
        self.latest: Dict[int, cst.CSTNode] = {}
        self._shared: Dict[Hashable, Any] = {}

    def shared(self, key: SharedKey[T], make: Optional[Callable[[], T]] = None, per: Hashable = _WHOLE_FILE) -> T:
        """Per-file state that rules and analyses share (an analysis computed once, edits held
        until a later rule, what one rule did for another to read): ``make()`` (else
        ``key.make()``) on first use, the same object afterwards.

        The contract: ``key`` is a ``SharedKey`` defined beside the analysis or rule that fills
        the state, and imported from there by every other user. With ``per`` (a node's ``id``,
        an option), the key holds one value per ``per``: ``ctx.shared(KEY, ..., per=id(scope))``.
        When a rule reads state that another rule fills in its ``run``, the reading rule names
        the writer in its ``after`` (see ``porter.rule.Rule``); state that any user computes the
        same way (a cache of the original tree) needs no order.
        """
        if type(key) is not SharedKey:
            raise TypeError(f"FileContext.shared takes a SharedKey, not {key!r}")
        slot: Hashable = key if per is _WHOLE_FILE else (key, per)
        store = self._shared
        if slot not in store:
            build = make if make is not None else key.make
            if build is None:
                raise TypeError(f"{key!r} has no make: pass one to FileContext.shared")
            store[slot] = build()
        return store[slot]

    # ----------------------------------------------------------------------------- the index
    def _index(self) -> None:
        parents = self._parents
        by_type = self._by_type
        stack: List[cst.CSTNode] = [self.module]
        pop, push = stack.pop, stack.append
        while stack:
            node = pop()
            node_type = type(node)
            same_type = by_type.get(node_type)
            if same_type is None:
                same_type = by_type[node_type] = []
            same_type.append(node)
            for child in reversed(_child_list(node)):
                parents[id(child)] = node
                push(child)
        # One node object in two places of the tree (edits can do that; a parse never does)
        # leaves one of them without its parent: porter.engine then verifies on a fresh parse.
        self.shared_nodes = sum(map(len, by_type.values())) != len(parents) + 1

    def nodes(self, node_type: Type[NodeT]) -> List[NodeT]:
        """All nodes of exactly this type, in source order."""
        return self._by_type.get(node_type, [])  # type: ignore[return-value]

    def parent(self, node: cst.CSTNode) -> Optional[cst.CSTNode]:
        return self._parents.get(id(node))

    def ancestors(self, node: cst.CSTNode) -> Iterator[cst.CSTNode]:
        parent = self.parent(node)
        while parent is not None:
            yield parent
            parent = self.parent(parent)

    def statement_of(self, node: cst.CSTNode) -> Optional[cst.BaseStatement]:
        """The statement (a line or a compound statement) that holds ``node``."""
        if isinstance(node, cst.BaseStatement):
            return node
        for ancestor in self.ancestors(node):
            if isinstance(ancestor, cst.BaseStatement):
                return ancestor
        return None

    def block_of(self, statement: cst.BaseStatement) -> Optional[Union[cst.Module, cst.IndentedBlock]]:
        parent = self.parent(statement)
        return parent if isinstance(parent, _COMPOUND_BLOCKS) else None

    def siblings(self, statement: cst.BaseStatement) -> Sequence[cst.BaseStatement]:
        block = self.block_of(statement)
        return block.body if block is not None else ()

    def enclosing_function(self, node: cst.CSTNode) -> Optional[cst.FunctionDef]:
        parents = self._parents
        ancestor = parents.get(id(node))
        while ancestor is not None:
            if type(ancestor) is cst.FunctionDef:  # not isinstance: see dotted_name
                return ancestor
            ancestor = parents.get(id(ancestor))
        return None

    def enclosing(self, node: cst.CSTNode, node_type: Type[NodeT]) -> Optional[NodeT]:
        for ancestor in self.ancestors(node):
            if isinstance(ancestor, node_type):
                return ancestor
        return None

    # ------------------------------------------------------------------------ name resolution
    def _scope(self, owner: cst.CSTNode) -> _Scope:
        """Names bound directly in a module or function (not in nested functions or classes)."""
        scope = self._scopes.get(id(owner))
        if scope is not None:
            return scope
        scope = _Scope({}, set())
        if isinstance(owner, (cst.FunctionDef, cst.Lambda)):
            params = owner.params
            for param in (*params.posonly_params, *params.params, *params.kwonly_params):
                scope.other_bindings.add(param.name.value)
            for star in (params.star_arg, params.star_kwarg):
                if isinstance(star, cst.Param):
                    scope.other_bindings.add(star.name.value)
        if isinstance(owner, cst.Module):
            stack: List[cst.CSTNode] = list(owner.body)
        elif isinstance(owner, cst.Lambda):
            stack = []
        else:
            stack = [owner.body]
        while stack:
            node = stack.pop()
            if isinstance(node, (cst.Import, cst.ImportFrom)):
                for local, full in import_bindings(node):
                    scope.imports.setdefault(local, full)
                continue
            if isinstance(node, (cst.FunctionDef, cst.ClassDef)):
                scope.other_bindings.add(node.name.value)
                continue
            if isinstance(node, cst.Lambda):
                continue
            if isinstance(node, (cst.AssignTarget, cst.AnnAssign, cst.AugAssign, cst.For, cst.NamedExpr)):
                scope.other_bindings.update(bound_names(node.target))
            elif isinstance(node, cst.AsName):
                scope.other_bindings.update(bound_names(node.name))
            stack.extend(iter_children(node))
        if isinstance(owner, cst.Module):
            for local, full in self._star_imported.items():
                scope.imports.setdefault(local, full)
        self._scopes[id(owner)] = scope
        return scope

    def project_function(self, func: cst.BaseExpression) -> Optional[str]:
        """``utils.get_strategy``: the module (by its last name) and the function that ``func``
        names through an import of the file, relative ones included (``get_strategy`` of ``from
        .utils import get_strategy``, ``U.get_strategy`` of ``from . import utils as U`` or of
        ``import pkg.utils as U``), to match against the functions of the files ported with it
        (``self.project``). None for any other expression."""
        full = self.qualified_name(func)
        if full is None:
            dotted = dotted_name(func)
            head, _, rest = (dotted or "").partition(".")
            target = self._relative_imports().get(head) if self._bindings[head] == 0 else None
            full = f"{target}.{rest}" if target and rest else target
        parts = full.split(".") if full else []
        return ".".join(parts[-2:]) if len(parts) >= 2 else None

    def _relative_imports(self) -> Dict[str, str]:
        """What each name a relative import binds stands for, dots dropped: ``get_strategy`` ->
        ``utils.get_strategy`` for ``from .utils import get_strategy``, ``U`` -> ``utils`` for
        ``from . import utils as U``."""
        if self._relative is not None:
            return self._relative
        found = {}
        for node in self.nodes(cst.ImportFrom):
            if not node.relative or isinstance(node.names, cst.ImportStar):
                continue
            base = dotted_name(node.module) if node.module is not None else ""
            for alias in node.names:
                name = dotted_name(alias.name)
                if base is not None and name is not None:
                    found[bound_name(alias)] = f"{base}.{name}" if base else name
        self._relative = found
        return found

    def qualified_name(self, node: cst.CSTNode) -> Optional[str]:
        """The full name an expression refers to through the imports, e.g. ``layers.LSTM`` ->
        ``tensorflow.keras.layers.LSTM``; None when it is not an imported name or is rebound."""
        # Most expressions asked about name no import: the head of the chain says so before the
        # dotted name is built (type() checks, as in dotted_name).
        head_node = node
        while type(head_node) is cst.Attribute:
            head_node = head_node.value
        if type(head_node) is not cst.Name or head_node.value not in self.imported_names:
            return None
        dotted = dotted_name(node)
        if dotted is None:
            return None
        head, _, rest = dotted.partition(".")
        target = self._unshadowed.get(head)
        if target is not None:
            return f"{target}.{rest}" if rest else target
        for owner in self._owners(node):
            scope = self._scope(owner)
            target = scope.imports.get(head)
            if head in scope.other_bindings:
                return None
            if target is not None:
                return f"{target}.{rest}" if rest else target
        return None

    def _unshadowed_imports(self) -> Dict[str, str]:
        """Module-level imports whose name the file binds nowhere else (no parameter, assignment,
        definition, ``as`` target, nor an import of something different): such a name means the
        same everywhere, so ``qualified_name`` can skip the scope lookup (the same answer, found
        once instead of walking every function around every use)."""
        bindings = self._bindings
        targets = self._import_targets()
        unshadowed = {local: full for local, full in self.aliases.items()
                      if local not in bindings and targets.get(local) == {full}}
        unshadowed.update(self._star_imported)  # bound nowhere else, by their definition
        unshadowed.update(self._module_aliases(unshadowed, bindings, targets))
        return unshadowed

    def _local_bindings(self) -> Counter:
        """How many times the file binds each name other than by an import: parameters,
        definitions, assignment, loop and ``as`` targets."""
        bindings: Counter = Counter(param.name.value for param in self.nodes(cst.Param))
        for node_type in (cst.FunctionDef, cst.ClassDef):
            bindings.update(node.name.value for node in self.nodes(node_type))
        for node_type in (cst.AssignTarget, cst.AnnAssign, cst.AugAssign, cst.For, cst.NamedExpr, cst.CompFor):
            for node in self.nodes(node_type):
                bindings.update(bound_names(node.target))
        for node in self.nodes(cst.AsName):
            if not isinstance(self.parent(node), cst.ImportAlias):
                bindings.update(bound_names(node.name))
        return bindings

    def _import_targets(self) -> Dict[str, Set[str]]:
        """The qualified names each local name is imported as, anywhere in the file."""
        targets: Dict[str, Set[str]] = {}
        for node_type in (cst.Import, cst.ImportFrom):
            for node in self.nodes(node_type):
                for local, full in import_bindings(node):
                    targets.setdefault(local, set()).add(full)
        return targets

    def _star_import_bindings(self) -> Dict[str, str]:
        """``Dense`` -> ``tensorflow.keras.layers.Dense`` after ``from tensorflow.keras.layers import *``:
        each name the file uses and binds nowhere else (no import, assignment, definition nor
        builtin), bound to the TensorFlow/Keras module a star import takes it from, so that model
        code written with such names is seen as Keras code. As in Python, the last star import
        whose module defines the name wins (``porter.keras_exports`` tells what a Keras module
        defines); a name that a TensorFlow/Keras module of unknown contents may shadow is left
        alone. Star imports of other modules (``from numpy import *``) are taken to bind none of
        them: a Keras layer left unresolved would be built outside the IPU strategy's scope, which
        is worse than reading numpy's ``concatenate`` as the Keras one."""
        modules = [dotted_name(node.module) for node in self.nodes(cst.ImportFrom)
                   if isinstance(node.names, cst.ImportStar) and node.module is not None and not node.relative]
        modules = [module for module in modules if is_under(module, _TENSORFLOW_MODULES)]
        if not modules:
            return {}
        unbound = (set(self._used_names()) - self._bindings.keys() - self._import_targets().keys()
                   - set(dir(builtins)))
        found = {}
        for name in unbound:
            module = _star_source(name, modules)
            if module is not None:
                found[name] = f"{module}.{name}"
        return found

    def _used_names(self) -> Iterator[str]:
        """The names the file reads (not attribute names nor keywords)."""
        for node in self.nodes(cst.Name):
            parent = self.parent(node)
            if isinstance(parent, cst.Attribute) and parent.attr is node:
                continue
            if isinstance(parent, cst.Arg) and parent.keyword is node:
                continue
            yield node.value

    def _module_aliases(self, unshadowed: Dict[str, str], bindings: Counter,
                        targets: Dict[str, Set[str]]) -> Dict[str, str]:
        """``Net = keras.applications.ResNet50`` at module level, the only binding of ``Net`` in
        the file: ``Net`` names ``keras.applications.ResNet50`` everywhere, as an import would (a
        constructor or a function picked once, then called: ``model = Net(weights=None)``)."""
        found: Dict[str, str] = {}
        for line in self.module.body:
            if not isinstance(line, cst.SimpleStatementLine):
                continue
            for small in line.body:
                if not (isinstance(small, cst.Assign) and len(small.targets) == 1
                        and isinstance(small.targets[0].target, cst.Name)):
                    continue
                local = small.targets[0].target.value
                dotted = dotted_name(small.value)
                if dotted is None or bindings[local] != 1 or local in targets:
                    continue
                head, _, rest = dotted.partition(".")
                target = unshadowed.get(head) or found.get(head)
                if target is not None:
                    found[local] = f"{target}.{rest}" if rest else target
        return found

    def _owners(self, node: cst.CSTNode) -> Iterator[cst.CSTNode]:
        """The function scopes around ``node``, innermost first, then the module."""
        for ancestor in self.ancestors(node):
            if isinstance(ancestor, (cst.FunctionDef, cst.Lambda)):
                yield ancestor
        yield self.module

    def keras_name(self, node: cst.CSTNode) -> Optional[str]:
        """``keras.layers.LSTM`` for any spelling of a Keras name (``tf.keras``, ``keras``...)."""
        return canonical_keras(self.qualified_name(node))

    def call_name(self, call: cst.Call) -> Optional[str]:
        return self.qualified_name(call.func)

    def calls_to(self, *names: str) -> Iterator[Tuple[cst.Call, str]]:
        """Calls whose function resolves to one of ``names`` (qualified or Keras-canonical)."""
        wanted = set(names)
        for call in self.nodes(cst.Call):
            qualified = self.qualified_name(call.func)
            if qualified is None:
                continue
            if qualified in wanted:
                yield call, qualified
                continue
            keras = canonical_keras(qualified)
            if keras is not None and keras in wanted:
                yield call, keras

    def imports_module(self, *prefixes: str, besides: Tuple[str, ...] = ()) -> bool:
        """True when the file imports any module under one of ``prefixes`` (not counting those
        under one of ``besides``)."""
        for node_type in (cst.Import, cst.ImportFrom):
            for node in self.nodes(node_type):
                for _, full in import_bindings(node):
                    if is_under(full, prefixes) and not is_under(full, besides):
                        return True
                if isinstance(node, cst.ImportFrom) and node.module is not None and not node.relative:
                    base = dotted_name(node.module) or ""
                    if is_under(base, prefixes) and not is_under(base, besides):
                        return True
        return False

    def _detect_frameworks(self) -> frozenset:
        found = set()
        if self.imports_module("torch"):
            found.add(TORCH)
        if self.imports_module("tensorflow", "keras", "tf_keras", "keras_core"):
            found.add(TF1 if self._is_tf1() else KERAS)
        return frozenset(found)

    # Graph-mode code: a file that uses any of these is a TF1 file.
    _TF1_MARKERS = frozenset({"tensorflow.Session", "tensorflow.placeholder", "tensorflow.InteractiveSession"})
    # Eager execution switched off: a TF1 file, unless it trains Keras and needs graph mode nowhere else.
    EAGER_OFF = frozenset({"tensorflow.disable_v2_behavior", "tensorflow.disable_eager_execution"})
    # Keras backend calls written for graph mode (`K.gradients` raises under eager execution).
    _GRAPH_MODE_BACKEND = frozenset({"keras.backend.gradients", "keras.backend.function", "keras.backend.placeholder",
                                     "keras.backend.get_session", "keras.backend.get_graph"})
    # Keras 2 optimizers' graph-mode update ops; TF1 dataset iterators.
    _GRAPH_MODE_METHODS = frozenset({"get_updates", "make_one_shot_iterator", "make_initializable_iterator"})
    # TensorFlow 1 API (by the first name after `tf.`) that needs graph mode: it raises, or does nothing,
    # under eager execution (the variables, collections and initializers of a TF1 graph).
    _GRAPH_MODE_TF = frozenset({
        "Session", "InteractiveSession", "placeholder", "placeholder_with_default", "gradients", "get_default_session",
        "global_variables_initializer", "local_variables_initializer", "variables_initializer", "tables_initializer",
        "initialize_all_variables", "get_collection", "add_to_collection", "GraphKeys", "get_variable",
        "variable_scope", "assign", "assign_add", "contrib"})
    # ... and under names that TensorFlow 2 keeps for other API (`tf.train.Checkpoint`, `tf.summary.scalar`).
    _GRAPH_MODE_TF_PARTS = frozenset({
        "train.Saver", "train.MonitoredTrainingSession", "train.get_or_create_global_step", "train.get_global_step",
        "train.start_queue_runners", "train.Coordinator", "summary.FileWriter", "summary.merge_all", "summary.merge"})
    _COMPAT_V1 = "tensorflow.compat.v1."
    _COMPAT_V1_KERAS = "tensorflow.compat.v1.keras"
    # Keras training calls: with them, the `compat.v1` alias alone does not make a TF1 file.
    _KERAS_TRAINING = frozenset({"fit", "fit_generator", "train_on_batch"})
    _KERAS_RUNNING = _KERAS_TRAINING | {"evaluate", "evaluate_generator", "test_on_batch", "predict",
                                        "predict_generator", "predict_on_batch"}
    # Eager execution switched on: TensorFlow 2 code whatever alias it is written with.
    _EAGER = frozenset({"tensorflow.enable_eager_execution"})

    def _is_tf1(self) -> bool:
        """Graph-mode TensorFlow: sessions, placeholders. A file that only reaches TensorFlow
        through the ``compat.v1`` alias, or trains with a v1 optimizer (``tf.train.AdamOptimizer``),
        is TF1 too, unless it trains a Keras model or runs eagerly (switches eager execution on, or
        reads tensors' values with ``.numpy()``)."""
        # `compat.v1.keras` is Keras (`CuDNNLSTM` of a model-building module): not graph mode by itself.
        graph_mode = self.imports_module("tensorflow.compat.v1", besides=(self._COMPAT_V1_KERAS,))
        eager = False
        for node in self.nodes(cst.Attribute):
            qualified = self.qualified_name(node)
            if qualified is None:
                continue
            if qualified.startswith(self._COMPAT_V1):
                graph_mode = graph_mode or not (qualified + ".").startswith(self._COMPAT_V1_KERAS + ".")
                qualified = "tensorflow." + qualified[len(self._COMPAT_V1):]
            if qualified in self._TF1_MARKERS and not self._keras_session(node):
                return True
            if qualified.startswith("tensorflow.train.") and qualified.endswith("Optimizer"):
                graph_mode = True
            eager = eager or qualified in self._EAGER
        if self.eager_off_calls():
            # Keras that only fits, evaluates and predicts runs as TensorFlow 2 once the switch is removed.
            return not self.runs_keras() or self.graph_mode_code() is not None
        return graph_mode and not eager and not self._reads_eager_values() and not self.trains_keras()

    def eager_off_calls(self) -> List[cst.Call]:
        """The calls that switch eager execution off (``tf.compat.v1.disable_eager_execution()``,
        ``disable_v2_behavior()`` imported from ``tensorflow.compat.v1``...)."""
        return [call for call in self.nodes(cst.Call)
                if self._without_compat(self.qualified_name(call.func)) in self.EAGER_OFF]

    def _without_compat(self, qualified: Optional[str]) -> str:
        qualified = qualified or ""
        if qualified.startswith(self._COMPAT_V1):
            return "tensorflow." + qualified[len(self._COMPAT_V1):]
        return qualified

    def graph_mode_code(self) -> Optional[Tuple[cst.CSTNode, str]]:
        """The first code, with its name, that needs TensorFlow 1 graph mode (or is TensorFlow 1 API)
        besides the switch itself: sessions, placeholders, ``tf.gradients``, graph-mode Keras backend
        calls, ``optimizer.get_updates``, TF1 savers, summaries, collections... None if none."""
        for node in self.nodes(cst.Attribute):
            parent = self.parent(node)
            if isinstance(parent, cst.Attribute) and parent.value is node:
                continue  # the whole dotted name is checked, not its prefixes
            qualified = self.qualified_name(node)
            if isinstance(parent, cst.Call) and parent.func is node and node.attr.value in self._GRAPH_MODE_METHODS:
                return node, node.attr.value
            if qualified is None:
                continue
            name = self._graph_mode_name(node, qualified)
            if name is not None:
                return node, name
        for call in self.nodes(cst.Call):  # `from tensorflow.compat.v1 import Session`, then `Session()`
            if isinstance(call.func, cst.Name):
                name = self._graph_mode_name(call.func, self.qualified_name(call.func))
                if name is not None:
                    return call.func, name
        return None

    def _graph_mode_name(self, node: cst.CSTNode, qualified: Optional[str]) -> Optional[str]:
        if qualified is None:
            return None
        plain = self._without_compat(qualified)
        if plain in self.EAGER_OFF:
            return None
        if canonical_keras(plain) in self._GRAPH_MODE_BACKEND or plain == "tensorflow.gradients":
            return plain
        if plain in self._TF1_MARKERS and isinstance(node, cst.Attribute) and self._keras_session(node):
            return None  # a session that only sets GPU options up for Keras
        parts = plain.split(".")
        if parts[0] == "tensorflow" and len(parts) > 1 and (
                parts[1] in self._GRAPH_MODE_TF or ".".join(parts[1:3]) in self._GRAPH_MODE_TF_PARTS):
            return plain
        return None

    def _keras_session(self, node: cst.Attribute) -> bool:
        """``set_session(tf.compat.v1.Session(config=config))`` in a file that trains with Keras:
        the session only sets GPU options up for Keras (directly, or through a name that only
        ``set_session`` reads), so the file is Keras code, not a TF1 graph."""
        call = self.parent(node)
        if not (isinstance(call, cst.Call) and call.func is node and self.trains_keras()):
            return False
        holder = self.parent(call)
        if isinstance(holder, cst.Assign) and len(holder.targets) == 1 and isinstance(holder.targets[0].target, cst.Name):
            name = holder.targets[0].target.value
            uses = [used for used in self.nodes(cst.Name) if used.value == name and used is not holder.targets[0].target]
            return bool(uses) and all(self._given_to_set_session(used) for used in uses)
        return self._given_to_set_session(call)

    def _given_to_set_session(self, node: cst.CSTNode) -> bool:
        arg = self.parent(node)
        call = self.parent(arg) if isinstance(arg, cst.Arg) else None
        func = call.func if isinstance(call, cst.Call) else None
        return (isinstance(func, cst.Attribute) and func.attr.value == "set_session"
                or isinstance(func, cst.Name) and func.value == "set_session")

    def _reads_eager_values(self) -> bool:
        """``x.numpy()``: a tensor's value read right away, which only eager TensorFlow 2 has (a
        ``compat.v1`` import for one name, ``estimator`` say, does not make such code a graph)."""
        return any(isinstance(call.func, cst.Attribute) and call.func.attr.value == "numpy" and not call.args
                   for call in self.nodes(cst.Call))

    def trains_keras(self) -> bool:
        """Whether the file imports Keras and calls ``fit``, ``fit_generator`` or ``train_on_batch``."""
        return self._calls_keras(self._KERAS_TRAINING)

    def runs_keras(self) -> bool:
        """Whether the file imports Keras and trains, evaluates or predicts with a model."""
        return self._calls_keras(self._KERAS_RUNNING)

    def _calls_keras(self, methods: frozenset) -> bool:
        if not self.imports_module("keras", "tf_keras", "keras_core", "tensorflow.keras", "tensorflow.compat.v1.keras") and \
                not any(self.qualified_name(node) in ("tensorflow.keras", "tensorflow.compat.v1.keras")
                        for node in self.nodes(cst.Attribute)):
            return False
        return any(isinstance(call.func, cst.Attribute) and call.func.attr.value in methods
                   for call in self.nodes(cst.Call))

    # ---------------------------------------------------------------------------- suppression
    def suppress(self, suppressions) -> None:
        """Honour these ``porter.suppress.Suppression`` comments from now on."""
        for suppression in suppressions:
            if suppression.owner is not None:
                self._suppressed.setdefault(id(suppression.owner), []).append(suppression)

    def _covering(self, node: cst.CSTNode, code: str, inside: bool):
        """The suppression that covers ``node`` (or, with ``inside``, a statement inside it)
        for ``code``, or None."""
        for candidate in (node, *self.ancestors(node)):
            for suppression in self._suppressed.get(id(candidate), ()):
                if suppression.covers(code):
                    return suppression
        if inside:
            for suppression_list in self._suppressed.values():
                for suppression in suppression_list:
                    if suppression.covers(code) and any(
                            ancestor is node for ancestor in self.ancestors(suppression.owner)):
                        return suppression
        return None

    def allowed(self, node: cst.CSTNode, code: Optional[str] = None, inside: bool = True) -> bool:
        """False when a suppression comment covers ``node`` for ``code`` (default: the running
        rule's code); the suppression is then marked used. Always True outside a rule run."""
        code = code or self.rule_code
        if code is None:
            return True
        if not self._suppressed:
            self._accepted.add(code)
            return True
        suppression = self._covering(node, code, inside)
        if suppression is None:
            self._accepted.add(code)
            return True
        suppression.used = True
        self._refused.add(code)
        return False

    def drop_orphan_imports(self) -> None:
        """Forget the imports asked for by rules whose every edit was suppressed."""
        orphans = self._refused - self._accepted
        if not orphans:
            return
        self.imports = [
            request for request in self.imports
            if not self._import_requesters.get(request) or not self._import_requesters[request] <= orphans
        ]

    # -------------------------------------------------------------------------- edit requests
    def _mark_dirty(self, node: cst.CSTNode) -> None:
        self.dirty.add(id(node))
        for ancestor in self.ancestors(node):
            if id(ancestor) in self.dirty:
                break
            self.dirty.add(id(ancestor))

    def replace(self, node: cst.CSTNode, replacement: Replacement) -> bool:
        """Replace ``node`` by a new node, or by ``replacement(updated_node)``. Several rules may
        replace the same node: their replacements are applied in rule order."""
        if id(node) in self.barriers or not self.allowed(node):
            return False
        self.replacements.setdefault(id(node), []).append((node, replacement))
        self.removed_by.setdefault(id(node), (node, self.rule_code))
        self._mark_dirty(node)
        return True

    def _block_request(self, statement: cst.BaseStatement, inside: bool = True) -> bool:
        """``inside``: the request changes the statement itself (not only what is around it)."""
        block = self.block_of(statement)
        if block is None or (inside and id(statement) in self.barriers):
            return False
        if not self.allowed(statement, inside=inside):
            return False
        self._mark_dirty(block)
        return True

    def remove(self, statement: cst.BaseStatement) -> bool:
        if not self._block_request(statement):
            return False
        self.removed.add(id(statement))
        self.removed_by.setdefault(id(statement), (statement, self.rule_code))
        return True

    def unwrap(self, statement: cst.BaseCompoundStatement) -> bool:
        """Replace a compound statement (a ``with`` block, say) by the statements of its body."""
        if not isinstance(getattr(statement, "body", None), cst.IndentedBlock):
            return False
        if not self._block_request(statement):
            return False
        self.unwrapped.add(id(statement))
        self.removed_by.setdefault(id(statement), (statement, self.rule_code))
        return True

    def is_removed(self, statement: cst.BaseStatement) -> bool:
        return id(statement) in self.removed

    def insert_before(self, statement: cst.BaseStatement, new: Sequence[cst.BaseStatement],
                      first: bool = False) -> bool:
        """Insert ``new`` before ``statement``, after what other rules inserted there already, or
        ahead of it when ``first`` (definitions that belong right after the imports)."""
        if not self._block_request(statement, inside=False):
            return False
        inserted = self.inserted_before.setdefault(id(statement), [])
        inserted[0 if first else len(inserted):0 if first else len(inserted)] = list(new)
        return True

    def insert_after(self, statement: cst.BaseStatement, new: Sequence[cst.BaseStatement]) -> bool:
        if not self._block_request(statement, inside=False):
            return False
        self.inserted_after.setdefault(id(statement), []).extend(new)
        return True

    def move_before(self, target: cst.BaseStatement, statements: Sequence[cst.BaseStatement],
                    build: Callable[[List[cst.BaseStatement]], Sequence[cst.BaseStatement]]) -> bool:
        """Remove ``statements`` (from any block) and insert ``build(their edited versions)``
        before ``target``. The statements keep the edits other rules ask for inside them; they
        must be in ``target`` or in its block (rebuilt after theirs). ``statements`` is read when
        the edits are applied: a list the caller extends later (with ``remove`` called on each
        new statement) moves them all into one ``build``."""
        if self.block_of(target) is None or any(self.block_of(s) is None for s in statements):
            return False
        for moved in statements:
            self.remove(moved)
        self._block_request(target)
        self.inserted_before.setdefault(id(target), []).append(
            _Deferred(lambda: list(build([self.updated(s) for s in statements]))))  # type: ignore[arg-type]
        return True

    def updated(self, node: cst.CSTNode) -> cst.CSTNode:
        """While edits are applied: the edited version of ``node`` (``node`` itself if unedited)."""
        return self.latest.get(id(node), node)

    def requested(self, node: cst.CSTNode) -> cst.CSTNode:
        """While rules run: ``node`` as the replacements asked for so far rewrite it (the node
        itself, its children as they are), so that a rule reads what an earlier rule wrote there."""
        for _, replacement in self.replacements.get(id(node), ()):
            node = replacement(node) if callable(replacement) else replacement
        return node

    def wrap(self, first: cst.BaseStatement, last: cst.BaseStatement,
             build: Callable[[List[cst.BaseStatement]], cst.BaseCompoundStatement],
             display: Optional[Callable[[cst.BaseStatement], bool]] = None,
             keep_out: Optional[Callable[[cst.BaseStatement], bool]] = None,
             edges: Optional[Callable[[cst.BaseStatement], bool]] = None,
             shows: Optional[Callable[[cst.BaseStatement], bool]] = None, shown_as: str = "output",
             idle: Optional[Callable[[cst.BaseStatement], bool]] = None) -> bool:
        """Put the statements from ``first`` to ``last`` (siblings) into the block of the
        compound statement ``build(statements)`` returns. Statements inserted before ``first``
        stay outside, in front of it. In a notebook, a range that spans cells becomes one block
        per cell: a block cannot cross a cell boundary. ``display(statement)``, when given, says
        that a statement only shows a value: at the end of a notebook cell, such statements stay
        after the block, where the cell still shows what the last one gives. ``keep_out(statement)``,
        when given, says that a statement is the same inside the block or out (a definition): it
        stays out, between two blocks, and so does a notebook's shell escape (``!mkdir out``), at
        the margin where it was. ``edges(statement)``, when given, says the same of statements
        that stay out only where they begin or end a block (prose in a string). ``shows(statement)``,
        when given, says that a bare expression which ends a notebook cell gives the value the cell
        shows (``model.evaluate(x, y)``) and must run in the block: it is assigned to ``shown_as``
        there, and ``shown_as`` alone follows the block, so that the cell still shows it.
        ``idle(statement)``, when given, says that a statement needs no block (it creates nothing
        and runs nothing the block is for): in a notebook, such statements that begin or end a
        cell's part stay out of its block, and a part made only of them (a cell of imports, of host
        data preparation, of definitions) is left as it is."""
        block = self.block_of(first)
        if block is None or block is not self.block_of(last):
            return False
        body = list(block.body)
        start, end = body.index(first), body.index(last)
        if end < start:
            return False
        for others in self.wraps.get(id(block), []):
            if not (end < others.start or start > others.end):
                return False
        pieces: List[Tuple[int, int]] = []
        piece_start = None
        for index in range(start, end + 1):
            if id(body[index]) in self.barriers or keep_out is not None and keep_out(body[index]) or (
                    self.barriers and _is_shell_line(body[index])):
                if piece_start is not None:
                    pieces.append((piece_start, index - 1))
                piece_start = None
                continue
            if not self.allowed(body[index]):
                return False
            if piece_start is None:
                piece_start = index
        if piece_start is not None:
            pieces.append((piece_start, end))
        if display is not None and block is self.module and self.barriers:
            pieces = [(low, self._before_display(body, low, high, display)) for low, high in pieces]
            pieces = [(low, high) for low, high in pieces if high >= low]
        if idle is not None and block is self.module and self.barriers:
            pieces = [_without_edges(body, low, high, idle) for low, high in pieces]
            pieces = [(low, high) for low, high in pieces if high >= low]
        if edges is not None:
            pieces = [_without_edges(body, low, high, edges) for low, high in pieces]
            pieces = [(low, high) for low, high in pieces if high >= low]
        if not pieces:
            return False
        self._mark_dirty(block)
        notebook = block is self.module and bool(self.barriers)
        self.wraps.setdefault(id(block), []).extend(
            Wrap(low, high, build, shown_as if notebook and shows is not None and self._ends_cell(body, high)
                 and shows(body[high]) else None) for low, high in pieces)
        return True

    def _ends_cell(self, body: Sequence[cst.BaseStatement], index: int) -> bool:
        return index + 1 == len(body) or id(body[index + 1]) in self.barriers

    def _before_display(self, body: Sequence[cst.BaseStatement], low: int, high: int,
                        display: Callable[[cst.BaseStatement], bool]) -> int:
        """The end of the piece ``low..high`` of a notebook's module without the statements that
        only display, when they end a cell (the next statement starts another cell)."""
        if high + 1 < len(body) and id(body[high + 1]) not in self.barriers:
            return high
        while high >= low and display(body[high]):
            high -= 1
        return high

    def add_import(self, module: str, name: Optional[str] = None, asname: Optional[str] = None, *,
                   code: str) -> None:
        """Ask for ``from module import name [as asname]`` (or ``import module``), reported under
        ``code``: the rule that asks, or the rule that owns the import (``ipu-import`` for ``ipu``)."""
        request = (module, name, asname, code)
        self._import_requesters.setdefault(request, set()).add(self.rule_code)
        if request not in self.imports:
            self.imports.append(request)

    def move_import(self, alias: cst.ImportAlias, module: str) -> bool:
        """Ask for the name that ``alias`` of a module-level import binds (``import keras``,
        ``from keras.utils import to_categorical as onehot``) to be imported from ``module`` instead,
        in the same place and under the same local name: ``from module import keras``, ``from
        module import to_categorical as onehot``. The rule that asks reports why."""
        return self._request_import_change(alias, module)

    def drop_import(self, alias: cst.ImportAlias) -> bool:
        """Ask for the name that ``alias`` of a module-level import binds to be imported no more (a
        name the IPU's libraries lack, whose uses the rule removed); an import left with no name
        goes. The rule that asks reports why."""
        statement = self.statement_of(alias)
        if isinstance(statement, cst.SimpleStatementLine) and len(statement.body) > 1 and len(
                getattr(self.parent(alias), "names", ())) == 1:
            return False  # `import a; from b import c`: the line keeps the other statement
        return self._request_import_change(alias, None)

    def _request_import_change(self, alias: cst.ImportAlias, module: Optional[str]) -> bool:
        owner = self.parent(alias)
        if not isinstance(owner, (cst.Import, cst.ImportFrom)) or not isinstance(alias.name, cst.Name):
            return False  # `import keras.utils` binds `keras`, not what it names
        statement = self.statement_of(owner)
        if statement is None or self.block_of(statement) is not self.module or not self.allowed(alias):
            return False
        if all(moved is not alias for moved, _ in self.moved_imports):
            self.moved_imports.append((alias, module))
        return True

    # ------------------------------------------------------------------------------- findings
    def report(self, code: str, anchor: cst.CSTNode, message: str, fixed: bool,
               severity: Optional[str] = None) -> None:
        """Record a finding at ``anchor``, a node of the original tree (unless a suppression
        comment covers it). What is not ``fixed`` has the reporting rule's severity, unless
        ``severity`` says otherwise."""
        if severity is not None and severity not in SEVERITIES:
            raise ValueError(f"{code}: unknown severity {severity!r} (one of {', '.join(SEVERITIES)})")
        if self.rule_code is not None and self._suppressed and not self.allowed(anchor, code, inside=False):
            return
        self.reports.append(_Report(code, anchor, message, fixed, severity))

    def findings(self, statement_lines: Optional[Dict[int, int]] = None) -> List[Finding]:
        """The reports, placed. ``statement_lines``: the line count of top-level statements (by
        id) known from another render (porter.positions.render_counting_lines); those that hold
        no anchor are not rendered again."""
        from porter.positions import positions

        anchors = [report.anchor for report in self.reports]
        skipped = None
        if statement_lines:
            skipped = dict(statement_lines)
            for anchor in anchors:
                skipped.pop(id(self._top_level(anchor)), None)
        where = positions(self.module, anchors, skipped)
        found = {
            Finding(report.code, *where.get(id(report.anchor), (1, 1)), report.message, report.fixed,
                    severity=None if report.fixed else report.severity or _rule_severity(report.code))
            for report in self.reports
        }
        return sorted(found, key=Finding.sort_key)

    def _top_level(self, node: cst.CSTNode) -> cst.CSTNode:
        """The statement of the module that holds ``node`` (the module for the module)."""
        for ancestor in self.ancestors(node):
            if ancestor is self.module:
                return node
            node = ancestor
        return node

    @property
    def changed(self) -> bool:
        return bool(self.dirty or self.imports or self.moved_imports)


class _Deferred:
    """Statements built only when the edits are applied (see ``FileContext.move_before``)."""

    def __init__(self, build: Callable[[], List[cst.BaseStatement]]) -> None:
        self.build = build


@dataclasses.dataclass
class Wrap:
    start: int
    end: int
    build: Callable[[List[cst.BaseStatement]], cst.BaseCompoundStatement]
    shown_as: Optional[str] = None  # the name the cell's last value is kept in, to show after the block
