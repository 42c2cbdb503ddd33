"""Config: the options a port runs with (CLI options merged over ``[tool.ipu-port]``)."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Tuple


@dataclass(frozen=True)
class Config:
    select: Tuple[str, ...] = ()
    ignore: Tuple[str, ...] = ()
    ipus: int = 1

    def with_changes(self, **changes) -> "Config":
        return replace(self, **changes)
