"""What users read cites documents they can find: `--explain`, the rules' texts and every finding
name Graphcore's public documentation (a guide's title and section) or say the fact in their own
words, never numbered notes or documents that only the project's authors have ("reference 1.4",
"seed 003"). The sources under porter/ and rules/ are held to the same standard: a contributor
does not have those notes either."""

import re
from pathlib import Path

import pytest
from click.testing import CliRunner
from test_fixtures import INPUTS, fixture_config

from porter.cli import main
from porter.config import Config
from porter.engine import port
from porter.rule import all_rules

ROOT = Path(__file__).resolve().parent.parent
PRIVATE_CITATION = re.compile(
    r"reference\s+\d"  # "reference 1.4", "reference 4"
    r"|reference\s+sections?\b"  # "reference section 6 item 25"
    r"|reference\b[^.\n]{0,40}\bitems?\s+\d+"  # "reference 1.4 item 3", "reference 3.2 and 6 item 19"
    r"|\bsection\s+\d+\s+items?\s+\d+"  # "section 6 item 7"
    r"|\bseeds?\s+\d{3}"  # "seed 003", "seeds 000 and 003"
    r"|\bseed\s+documents?"
    r"|\bthe\s+seed's",
    re.IGNORECASE,
)
SOURCES = sorted([*(ROOT / "porter").rglob("*.py"), *(ROOT / "rules").rglob("*.py")])


def citations(text: str):
    return [match.group(0) for match in PRIVATE_CITATION.finditer(text)]


@pytest.mark.parametrize("text", [
    "as the guide says (reference 1.4, rule 6)",
    "fails (reference section 6 item 25)",
    "created on the CPU (reference 3.2 and 6 item\n19)",
    "compilation fail (section 6 item 7)",
    "the Keras tutorial (seed 003)",
    "(seeds 000 and 003)",
    "see the seed documents",
    "(the seed's pattern)",
])
def test_the_pattern_finds_private_citations(text):
    assert citations(text)


@pytest.mark.parametrize("text", [
    '(Targeting the IPU from TensorFlow 2, "Keras with IPUs")',
    '(PopTorch User Guide, "Options")',
    "tf.keras.layers.Dropout(0.5, seed=1234)",
    "tf.random.set_seed(42)",
    "a reference to the model is kept",
])
def test_the_pattern_leaves_public_citations_and_code_alone(text):
    assert not citations(text)


@pytest.mark.parametrize("rule", all_rules(), ids=lambda rule: rule.code)
def test_rule_texts_cite_public_documents(rule):
    texts = {"summary": rule.summary, "rationale": rule.rationale}
    for index, example in enumerate(rule.examples):
        texts[f"example {index} before"] = example.before
        texts[f"example {index} after"] = example.after or ""
    found = {where: citations(text) for where, text in texts.items() if citations(text)}
    assert found == {}


@pytest.mark.parametrize("rule", all_rules(), ids=lambda rule: rule.code)
def test_explain_cites_public_documents(rule):
    result = CliRunner().invoke(main, ["--explain", rule.code])
    assert result.exit_code == 0, result.output
    assert rule.rationale.split()[0] in result.output
    assert citations(result.output) == []


@pytest.mark.parametrize("rule", all_rules(), ids=lambda rule: rule.code)
def test_findings_of_rule_examples_cite_public_documents(rule):
    messages = []
    for example in rule.examples:
        result = port(example.before, Config(select=(rule.code,), **(example.options or {})))
        messages += [finding.message for finding in result.findings]
    assert [message for message in messages if citations(message)] == []


@pytest.mark.parametrize("path", INPUTS, ids=lambda path: f"{path.parent.name}/{path.stem}")
def test_findings_of_fixtures_cite_public_documents(path):
    result = port(path.read_text(encoding="utf-8"), fixture_config(path))
    assert [finding.message for finding in result.findings if citations(finding.message)] == []


@pytest.mark.parametrize("path", SOURCES, ids=lambda path: str(path.relative_to(ROOT)))
def test_sources_cite_public_documents(path):
    lines = path.read_text(encoding="utf-8").splitlines()
    # A citation may be wrapped over two lines, so each line is read with the next one.
    found = {number: citations(line + "\n" + after)
             for number, (line, after) in enumerate(zip(lines, lines[1:] + [""]), start=1)}
    assert {number: found for number, found in found.items() if found} == {}


def test_every_source_is_checked():
    assert ROOT / "porter" / "cli.py" in SOURCES
    assert ROOT / "rules" / "keras" / "strategy_scope.py" in SOURCES
    assert any("_analysis" in path.parts for path in SOURCES)
