"""Runtime flags a port switches on: ``TF_POPLAR_FLAGS`` for TensorFlow (Targeting the IPU from
TensorFlow 2, "TF_POPLAR_FLAGS environment variable") and the matching ``poptorch.Options`` calls
for PopTorch (PopTorch User Guide, "Options"). Shared by IPU012 and IPU013.

TensorFlow reads ``TF_POPLAR_FLAGS`` once, when it is imported, so the flag is appended to the
variable (other flags the user set are kept) in a statement placed just before the first
TensorFlow or Keras import at the top of the script.
"""

from __future__ import annotations

import json
from typing import Dict, Optional

import libcst as cst

from porter.context import FileContext, SharedKey, import_bindings
from porter.cstutil import statement

TF_MODULES = ("tensorflow", "keras", "tf_keras", "ipu_tensorflow_addons")

# Whether a flag added in this port already brought ``import os``: the rules adding flags (IPU012,
# IPU013) import it once between them.
OS_IMPORTED: SharedKey[Dict[str, bool]] = SharedKey("poplar-flags-os", lambda: {"os": False})


def _imports_tensorflow(line: cst.BaseStatement) -> bool:
    if not isinstance(line, cst.SimpleStatementLine):
        return False
    for small in line.body:
        if isinstance(small, (cst.Import, cst.ImportFrom)):
            for _, full in import_bindings(small):
                if full.split(".")[0] in TF_MODULES:
                    return True
    return False


def _binds_os(line: cst.BaseStatement) -> bool:
    if not isinstance(line, cst.SimpleStatementLine):
        return False
    return any(
        isinstance(small, cst.Import) and ("os", "os") in set(import_bindings(small)) for small in line.body
    )


def first_tensorflow_import(ctx: FileContext) -> Optional[cst.BaseStatement]:
    for line in ctx.module.body:
        if _imports_tensorflow(line):
            return line
    return None


def flag_is_set(ctx: FileContext, flag: str) -> bool:
    """True when a string of the file already mentions the flag (set by hand or by an earlier port)."""
    for node in ctx.nodes(cst.SimpleString):
        value = node.evaluated_value
        if isinstance(value, str) and flag in value:
            return True
    return False


def flag_literal(flag: str) -> str:
    return json.dumps(" " + flag)


def add_tf_flag(ctx: FileContext, flag: str) -> Optional[cst.BaseStatement]:
    """Append ``flag`` to ``TF_POPLAR_FLAGS`` before TensorFlow is imported; the import statement
    it goes above, or None when the file imports TensorFlow only inside functions."""
    anchor = first_tensorflow_import(ctx)
    if anchor is None:
        return None
    lines = []
    state = ctx.shared(OS_IMPORTED)
    body = list(ctx.module.body)
    if not state["os"] and not any(_binds_os(line) for line in body[:body.index(anchor)]):
        lines.append(statement("import os"))
        state["os"] = True
    lines.append(statement(
        f'os.environ["TF_POPLAR_FLAGS"] = os.environ.get("TF_POPLAR_FLAGS", "") + {flag_literal(flag)}'))
    ctx.insert_before(anchor, lines)
    return anchor
