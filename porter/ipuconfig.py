"""The IPU system configuration: recognising it in a file (current and pre-SDK-2.4 API) and
writing it. Shared by the rules that add a configuration (TF1 IPU203) and upgrade old ones (IPU010).
"""

from __future__ import annotations

from typing import List

import libcst as cst

from porter.context import FileContext

IPU = "tensorflow.python.ipu."
# Calls that configure the IPU system, in the current API and the one SDK 2.4 removed.
CONFIGURING = frozenset({
    IPU + "config.IPUConfig", IPU + "utils.IPUConfig", IPU + "config.configure_ipu_system",
    IPU + "utils.configure_ipu_system", IPU + "utils.create_ipu_config",
})


def has_ipu_configuration(ctx: FileContext) -> bool:
    """True when the file already configures the IPU system (``IPUConfig``, ``configure_ipu_system``,
    or the old ``ipu.utils.create_ipu_config``)."""
    if any(True for _ in ctx.calls_to(*CONFIGURING)):
        return True
    # `cfg.configure_ipu_system()` on a config object made elsewhere
    return any(isinstance(call.func, cst.Attribute) and call.func.attr.value == "configure_ipu_system"
               for call in ctx.nodes(cst.Call))


def configuration_statements(ipus: int, name: str = "ipu_config") -> List[cst.BaseStatement]:
    """``name = ipu.config.IPUConfig()``, ``name.auto_select_ipus = ipus``,
    ``name.configure_ipu_system()`` (reference 1.2)."""
    return list(cst.parse_module(
        f"{name} = ipu.config.IPUConfig()\n"
        f"{name}.auto_select_ipus = {ipus}\n"
        f"{name}.configure_ipu_system()\n"
    ).body)
