"""The contracts between rules: the typed keys of the state they share through the
``FileContext``, the order a rule declares it needs, and the one helper for new names."""

import libcst as cst
import pytest

from porter.config import Config
from porter.context import FileContext, SharedKey


def _context(source: str = "x = 1\n") -> FileContext:
    return FileContext(cst.parse_module(source), Config())


# ------------------------------------------------------------------------------ shared state
def test_shared_builds_the_value_once_with_the_keys_make():
    key: SharedKey[set] = SharedKey("seen", set)
    ctx = _context()
    first = ctx.shared(key)
    first.add(3)
    assert ctx.shared(key) is first
    assert ctx.shared(key) == {3}


def test_shared_prefers_the_make_it_is_given():
    key: SharedKey[list] = SharedKey("computed")
    ctx = _context()
    calls = []
    assert ctx.shared(key, lambda: calls.append(1) or ["made"]) == ["made"]
    assert ctx.shared(key, lambda: calls.append(2) or ["again"]) == ["made"]
    assert calls == [1]


def test_shared_keeps_one_value_per_part():
    key: SharedKey[str] = SharedKey("per-node")
    ctx = _context()
    assert ctx.shared(key, lambda: "a", per=1) == "a"
    assert ctx.shared(key, lambda: "b", per=2) == "b"
    assert ctx.shared(key, lambda: "c", per=1) == "a"
    assert ctx.shared(key, lambda: "whole") == "whole"
    assert ctx.shared(key, lambda: "none", per=None) == "none"


def test_keys_of_one_name_never_meet():
    ctx = _context()
    one, other = SharedKey("same", list), SharedKey("same", list)
    ctx.shared(one).append("one")
    assert ctx.shared(other) == []
    assert repr(one) == "SharedKey('same')"


def test_each_file_has_its_own_state():
    key: SharedKey[set] = SharedKey("seen", set)
    ctx, other = _context(), _context()
    ctx.shared(key).add(1)
    assert other.shared(key) == set()


def test_shared_refuses_string_keys_and_keys_without_make():
    ctx = _context()
    with pytest.raises(TypeError, match="takes a SharedKey"):
        ctx.shared("_old_string_key", set)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="has no make"):
        ctx.shared(SharedKey("bare"))
