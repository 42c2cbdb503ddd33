"""The text check that decides whether a file is worth parsing at all.

It runs on every file before anything heavy is imported: a file without a TensorFlow, Keras or
PyTorch import comes back byte for byte without a parse.
"""

import re
from typing import List, Set

# A framework import, matched from the start of a line that has the word ``import`` in it.
_FRAMEWORK_IMPORT = re.compile(
    r"[ \t]*(?:from[ \t]+(?:tensorflow|keras|keras_core|tf_keras|torch)\b"
    r"|import[ \t][^\n#]*\b(?:tensorflow|keras|keras_core|tf_keras|torch)\b)"
)


# An import line: ``from MODULE import NAMES`` (MODULE may be relative) or ``import NAMES``.
_FROM_IMPORT = re.compile(r"[ \t]*from[ \t]+(\.*)([\w.]*)[ \t]+import[ \t]+\(?([^#\n]*)")
_IMPORT = re.compile(r"[ \t]*import[ \t]+([^#\n]*)")


def imported_modules(source: str) -> Set[str]:
    """Every part of the module names the import lines of ``source`` name: ``proj`` and
    ``models`` of ``from proj.models import build``, ``models`` of ``from . import models`` or
    ``import models as M``."""
    found: Set[str] = set()
    for line in source.splitlines():
        if "import" not in line:
            continue
        match = _FROM_IMPORT.match(line)
        if match:
            dots, module, names = match.groups()
            found.update(part for part in module.split(".") if part)
            if dots and not module:  # ``from . import models``: the names are modules
                found.update(_first_words(names))
            continue
        match = _IMPORT.match(line)
        if match:
            for name in _first_words(match.group(1)):
                found.update(name.split("."))
    return found


def _first_words(names: str) -> List[str]:
    """``a.b`` and ``c`` of ``a.b as x, c``."""
    return [part.split()[0] for part in names.split(",") if part.split()]


def uses_framework(source: str) -> bool:
    """Whether a line of ``source`` imports a framework.

    Every import line has the word ``import``: one str.find pass over the file finds those lines,
    which is several times faster than searching for each framework's name, or than a regex
    trying every line.
    """
    found = source.find("import")
    while found >= 0:
        line_start = source.rfind("\n", 0, found) + 1
        line_end = source.find("\n", found)
        line = source[line_start:] if line_end < 0 else source[line_start:line_end]
        # ("tf_keras" and "keras_core" contain "keras")
        if ("torch" in line or "keras" in line or "tensorflow" in line) and _FRAMEWORK_IMPORT.match(line):
            return True
        if line_end < 0:
            return False
        found = source.find("import", line_end)
    return False
