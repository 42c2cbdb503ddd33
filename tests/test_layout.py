"""The project's layout, as the rule contract states it: each rule module is named after its rule
and sits in the folder of its code's framework range."""

import pytest

from porter.rule import all_rules

# The hundreds digit of a code -> the folder of rules/ its rule lives in.
FOLDER_OF_RANGE = {"0": "common", "1": "keras", "2": "tf1", "3": "torch"}


@pytest.mark.parametrize("rule", all_rules(), ids=lambda rule: rule.code)
def test_a_rule_module_is_named_after_its_rule_in_the_folder_of_its_range(rule):
    package, folder, module = type(rule).__module__.rsplit(".", 2)
    assert package == "porter.rules"
    assert module == rule.name.replace("-", "_")
    assert folder == FOLDER_OF_RANGE[rule.code[3]]
