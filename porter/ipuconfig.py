"""The IPU system configuration: recognising it in a file (current and pre-SDK-2.4 API) and
writing it. Shared by the rules that add a configuration (TF1 IPU203) and upgrade old ones (IPU010).
"""

from __future__ import annotations

from typing import List

import libcst as cst

from porter.context import FileContext
from porter.tf1util import calls_by_last_name as find_calls_by_last_name, find_calls

IPU = "tensorflow.python.ipu."
# Calls that configure the IPU system, in the current API and the one SDK 2.4 removed.
CONFIGURING = frozenset({
    IPU + "config.IPUConfig", IPU + "utils.IPUConfig", IPU + "config.configure_ipu_system",
    IPU + "utils.configure_ipu_system", IPU + "utils.create_ipu_config",
})


def has_ipu_configuration(ctx: FileContext) -> bool:
    """True when the file already configures the IPU system (``IPUConfig``, ``configure_ipu_system``,
    or the old ``ipu.utils.create_ipu_config``)."""
    if find_calls(ctx, *CONFIGURING):
        return True
    # `cfg.configure_ipu_system()` on a config object made elsewhere
    return any(isinstance(call.func, cst.Attribute) for call in find_calls_by_last_name(ctx, "configure_ipu_system"))


def configuration_statements(ipus: int, name: str = "ipu_config") -> List[cst.BaseStatement]:
    """``name = ipu.config.IPUConfig()``, ``name.auto_select_ipus = ipus``,
    ``name.configure_ipu_system()`` (reference 1.2)."""
    return list(cst.parse_module(
        f"{name} = ipu.config.IPUConfig()\n"
        f"{name}.auto_select_ipus = {ipus}\n"
        f"{name}.configure_ipu_system()\n"
    ).body)
