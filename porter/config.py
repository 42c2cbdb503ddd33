"""Config: the options a port runs with (CLI options merged over ``[tool.ipu-port]``).

``Config`` holds what the engine needs for one file. ``Project`` adds what the command needs around
it: where the settings came from, which files to leave out (``exclude``/``extend-exclude``) and the
codes to ignore in some files (``per-file-ignores``). Settings come from the nearest
``pyproject.toml`` above each file that has a ``[tool.ipu-port]`` table (or the one ``--config``
names); every key of the table is checked, and an unknown key or a bad value is a ``ConfigError``
with a one-line message. Every ``Config`` field is a key, spelt with dashes.
"""

from __future__ import annotations

import dataclasses
import os
import re
import sys
from dataclasses import dataclass, field, replace
from typing import Any, Dict, Mapping, Optional, Tuple, Union

from porter.ignore import PatternSet, compile_pattern, parse


@dataclass(frozen=True)
class Config:
    select: Tuple[str, ...] = ()
    ignore: Tuple[str, ...] = ()
    ipus: int = field(default=1, metadata={"min": 1})
    # TF1: split the compiled computation over this many IPUs (`ipu_shard`), a power of two <= ipus.
    shards: int = field(default=1, metadata={"min": 1})
    # Insert `# TODO(ipu-port CODE): ...` above each line that needs manual work.
    annotate: bool = False
    # Report `# ipu-port: ignore` comments that suppress nothing (IPU802).
    show_unused_suppressions: bool = False
    # Speed options, checked together by porter.throughput.validate. None (or False) means not
    # asked for: the rules that use them then change nothing.
    steps_per_execution: Optional[Union[int, str]] = None  # K, or "auto"
    device_iterations: Optional[int] = None  # PopTorch
    pipeline_stages: Optional[int] = None
    gradient_accumulation: Optional[int] = None
    pipeline_schedule: str = field(default="grouped", metadata={"choices": ("grouped", "interleaved", "sequential")})
    executable_cache: Optional[str] = None
    ipu_model: bool = False

    def with_changes(self, **changes) -> "Config":
        return replace(self, **changes)


class ConfigError(Exception):
    """A bad setting; the message is one line, starting with the file it comes from."""


# Folders never searched when a folder is given (as ruff and black skip them); ``exclude`` replaces
# this list, ``extend-exclude`` adds to it.
DEFAULT_EXCLUDE = (
    ".git/", ".hg/", ".svn/", ".venv/", "venv/", ".tox/", ".nox/", ".mypy_cache/", ".pytest_cache/",
    ".ruff_cache/", "__pycache__/", "node_modules/", "build/", "dist/", "site-packages/", ".eggs/",
    "*.egg-info/", ".ipynb_checkpoints/",
)

# Keys of [tool.ipu-port] that are not Config fields.
PROJECT_KEYS = ("exclude", "extend-exclude", "per-file-ignores", "force-exclude")

_CODE = re.compile(r"^IPU\d{0,3}$")


def key_of(field_name: str) -> str:
    return field_name.replace("_", "-")


def config_keys() -> Dict[str, dataclasses.Field]:
    return {key_of(item.name): item for item in dataclasses.fields(Config)}


def known_keys() -> Tuple[str, ...]:
    return tuple(sorted((*config_keys(), *PROJECT_KEYS)))


def parse_codes(values, where: str) -> Tuple[str, ...]:
    """Rule codes or prefixes from a list or a comma-separated string; upper-cased, checked."""
    if isinstance(values, str):
        values = [values]
    if not isinstance(values, (list, tuple)) or not all(isinstance(value, str) for value in values):
        raise ConfigError(f"{where}: expected a list of rule codes, got {values!r}")
    codes = []
    for value in values:
        for part in value.split(","):
            code = part.strip().upper()
            if not code:
                continue
            if not _CODE.match(code):
                raise ConfigError(f"{where}: {part.strip()!r} is not a rule code or prefix (like IPU1 or IPU103)")
            codes.append(code)
    return tuple(codes)


def _check_value(key: str, item: dataclasses.Field, value: Any, where: str) -> Any:
    default = item.default
    label = f"{where}: {key}"
    if isinstance(default, tuple):
        return parse_codes(value, label)
    if isinstance(default, bool):
        if not isinstance(value, bool):
            raise ConfigError(f"{label}: expected true or false, got {value!r}")
        return value
    if isinstance(default, int):
        if isinstance(value, bool) or not isinstance(value, int):
            raise ConfigError(f"{label}: expected an integer, got {value!r}")
        minimum = item.metadata.get("min")
        if minimum is not None and value < minimum:
            raise ConfigError(f"{label}: must be at least {minimum}, got {value}")
        return value
    if isinstance(default, str):
        if not isinstance(value, str):
            raise ConfigError(f"{label}: expected a string, got {value!r}")
        choices = item.metadata.get("choices")
        if choices and value not in choices:
            raise ConfigError(f"{label}: expected one of {', '.join(choices)}, got {value!r}")
        return value
    return value


def _patterns(value: Any, where: str) -> Tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise ConfigError(f"{where}: expected a list of patterns, got {value!r}")
    return tuple(value)


@dataclass(frozen=True)
class Project:
    """The settings for the files below one ``pyproject.toml`` (or the defaults)."""

    root: str  # absolute folder the patterns are relative to
    path: Optional[str] = None  # the settings file, None for the defaults
    config: Config = Config()
    exclude: Tuple[str, ...] = DEFAULT_EXCLUDE
    extend_exclude: Tuple[str, ...] = ()
    per_file_ignores: Tuple[Tuple[str, Tuple[str, ...]], ...] = ()
    force_exclude: bool = False

    @property
    def excludes(self) -> PatternSet:
        cached = self.__dict__.get("_excludes")
        if cached is None:
            cached = PatternSet(self.root, tuple(parse((*self.exclude, *self.extend_exclude))))
            object.__setattr__(self, "_excludes", cached)
        return cached

    def config_for(self, path: str) -> Config:
        """The config for one file: ``per-file-ignores`` whose pattern matches add their codes."""
        if not self.per_file_ignores or path == "-":
            return self.config
        absolute = os.path.abspath(path)
        extra = []
        for pattern_text, codes in self.per_file_ignores:
            pattern = compile_pattern(pattern_text)
            if pattern is not None and matches_path(PatternSet(self.root, (pattern,)), absolute):
                extra.extend(codes)
        if not extra:
            return self.config
        return self.config.with_changes(ignore=(*self.config.ignore, *extra))


def matches_path(patterns: PatternSet, absolute: str, stop: Optional[str] = None) -> bool:
    """Whether the patterns match a file or one of the folders above it, below their base (and
    below ``stop``, when given)."""
    if patterns.match(absolute, False):
        return True
    top = stop if stop is not None and len(stop) > len(patterns.base) else patterns.base
    folder = os.path.dirname(absolute)
    while folder.startswith(top) and folder != top:
        if patterns.match(folder, True):
            return True
        parent = os.path.dirname(folder)
        if parent == folder:
            break
        folder = parent
    return False


def _load_toml(path: str) -> Dict[str, Any]:
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - exercised on 3.9/3.10
        import tomli as tomllib
    try:
        with open(path, "rb") as handle:
            return tomllib.load(handle)
    except OSError as error:
        raise ConfigError(f"{path}: cannot read: {error.strerror or error}") from None
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(f"{path}: invalid TOML: {str(error).splitlines()[0]}") from None


def tool_table(path: str) -> Optional[Dict[str, Any]]:
    """The ``[tool.ipu-port]`` table of a TOML file, or None when it has none."""
    data = _load_toml(path)
    table = data.get("tool", {}).get("ipu-port") if isinstance(data.get("tool"), dict) else None
    if table is not None and not isinstance(table, dict):
        raise ConfigError(f"{path}: [tool.ipu-port] must be a table")
    return table


def project_from_table(table: Mapping[str, Any], root: str, path: Optional[str],
                       overrides: Mapping[str, Any]) -> Project:
    """Check a ``[tool.ipu-port]`` table and merge the CLI ``overrides`` (Config field -> value,
    or project field -> value) over it."""
    where = f"{path or 'settings'}: [tool.ipu-port]"
    fields = config_keys()
    config_values: Dict[str, Any] = {}
    project_values: Dict[str, Any] = {}
    for key, value in table.items():
        if key in fields:
            config_values[fields[key].name] = _check_value(key, fields[key], value, where)
        elif key in ("exclude", "extend-exclude"):
            project_values[key.replace("-", "_")] = _patterns(value, f"{where} {key}")
        elif key == "force-exclude":
            if not isinstance(value, bool):
                raise ConfigError(f"{where} force-exclude: expected true or false, got {value!r}")
            project_values["force_exclude"] = value
        elif key == "per-file-ignores":
            if not isinstance(value, dict):
                raise ConfigError(f"{where} per-file-ignores: expected a table of pattern = [codes]")
            project_values["per_file_ignores"] = tuple(
                (pattern, parse_codes(codes, f"{where} per-file-ignores {pattern!r}"))
                for pattern, codes in value.items()
            )
        else:
            hint = _closest(key, known_keys())
            raise ConfigError(f"{where}: unknown key {key!r}" + (f" (did you mean {hint!r}?)" if hint else "")
                              + f"; known keys: {', '.join(known_keys())}")
    for name, value in overrides.items():
        if name in {item.name for item in dataclasses.fields(Config)}:
            config_values[name] = value
        else:
            project_values[name] = value
    from porter.throughput import OptionError, implied_ipus, validate

    try:
        config = validate(Config(**implied_ipus(config_values)))  # the speed options, checked together
    except OptionError as error:
        raise ConfigError(f"{where}: {error.option.lstrip('-')}: {error.message}") from None
    _check_shards(config, "--shards" if "shards" in overrides or "ipus" in overrides else f"{where}: shards")
    return Project(root=root, path=path, config=config, **project_values)


def _check_shards(config: Config, label: str) -> None:
    """``shards`` is a power of two and at most the IPUs selected."""
    shards = config.shards
    if shards & (shards - 1):
        raise ConfigError(f"{label}: must be a power of two (1, 2, 4, 8...), got {shards}")
    if shards > config.ipus:
        raise ConfigError(f"{label}: {shards} shards need at least {shards} IPUs, but ipus is {config.ipus}")


def _closest(key: str, keys) -> Optional[str]:
    import difflib

    found = difflib.get_close_matches(key, keys, n=1)
    return found[0] if found else None


class Projects:
    """Finds and caches the settings that apply to each path."""

    def __init__(self, overrides: Mapping[str, Any], config_file: Optional[str] = None) -> None:
        self.overrides = dict(overrides)
        self._by_folder: Dict[str, Project] = {}
        self._by_file: Dict[str, Project] = {}
        self.fixed: Optional[Project] = None
        if config_file is not None:
            self.fixed = self._load(os.path.abspath(config_file), required=True)

    def _load(self, path: str, required: bool = False) -> Optional[Project]:
        project = self._by_file.get(path)
        if project is None:
            if required and not os.path.isfile(path):
                raise ConfigError(f"{path}: no such settings file")
            table = tool_table(path)
            if table is None and not required:
                return None
            project = project_from_table(table or {}, os.path.dirname(path), path, self.overrides)
            self._by_file[path] = project
        return project

    def default(self) -> Project:
        return project_from_table({}, os.path.abspath(os.sep), None, self.overrides)

    def for_folder(self, folder: str) -> Project:
        """The project of the nearest ``pyproject.toml`` with a ``[tool.ipu-port]`` table at or
        above ``folder`` (absolute); the defaults when there is none."""
        if self.fixed is not None:
            return self.fixed
        found = self._by_folder.get(folder)
        if found is not None:
            return found
        candidate = os.path.join(folder, "pyproject.toml")
        project = self._load(candidate) if os.path.isfile(candidate) else None
        if project is None:
            parent = os.path.dirname(folder)
            project = self.default() if parent == folder else self.for_folder(parent)
        self._by_folder[folder] = project
        return project

    def for_path(self, path: str) -> Project:
        if path == "-":
            return self.for_folder(os.getcwd())
        absolute = os.path.abspath(path)
        folder = absolute if os.path.isdir(absolute) else os.path.dirname(absolute)
        return self.for_folder(folder)
