"""Generated parts of the README: the rule table and the option list, made from the rules and the
CLI themselves. ``python -m porter.docs README.md`` rewrites them; a test checks they are current."""

from __future__ import annotations

import re
import sys


def rule_table() -> str:
    from porter.rule import all_rules

    lines = ["| code | name | kind | summary |", "|---|---|---|---|"]
    for rule in all_rules():
        summary = rule.summary.replace("|", "\\|")
        lines.append(f"| {rule.code} | `{rule.name}` | {rule.kind} | {summary} |")
    return "\n".join(lines)


def option_list() -> str:
    from click.testing import CliRunner

    from porter.cli import main

    result = CliRunner().invoke(main, ["--help"], prog_name="ipu-port", terminal_width=100)
    return "```text\n" + result.output.rstrip() + "\n```"


SECTIONS = {"rules": rule_table, "options": option_list}


def render(readme: str) -> str:
    for name, make in SECTIONS.items():
        pattern = re.compile(rf"(<!-- {name}:start -->\n).*?(<!-- {name}:end -->)", re.DOTALL)
        if not pattern.search(readme):
            raise ValueError(f"README has no <!-- {name}:start/end --> section")
        readme = pattern.sub(lambda match: match.group(1) + make() + "\n" + match.group(2), readme)
    return readme


if __name__ == "__main__":
    path = sys.argv[1] if len(sys.argv) > 1 else "README.md"
    with open(path, encoding="utf-8") as handle:
        text = handle.read()
    rendered = render(text)  # before the file is opened for writing: an error leaves it whole
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(rendered)
