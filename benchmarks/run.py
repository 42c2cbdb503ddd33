"""The benchmarks of ipu-port, each a ratio against a baseline measured in the same run.

    .venv/bin/python benchmarks/run.py [--runs 5] [--corpus DIR] [--markdown]

Generates the corpus (benchmarks/corpus.py, fixed seed) in a temporary folder unless --corpus names
one, then measures (median of --runs runs each) and prints every ratio beside its target:

- port time of the ML files (engine.port, in process) over bare ``libcst.parse_module(text).code``,
  on the corpus and on 90 small scripts of 1 to 3 KB (``corpus.generate_small``), where the fixed
  costs per file weigh most;
- time on the non-ML files (read, decode, detect) over just reading their bytes;
- ``ipu-port --check -j 2`` over ``-j 1`` wall time on the whole corpus (when the CLI has -j);
- start-up of ``ipu-port --check`` on one non-ML file over ``python -c "import click"``, and on one
  7 KB ML file over ``python -c "import libcst"``;
- peak memory of ``ipu-port --check`` on one generated 2 MB ML file;
- ``tf_upgrade_v2 --intree`` on the TensorFlow part of the corpus, when TensorFlow is installed.

Not part of the test suite: timings depend on the machine. Run it on a quiet machine.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Callable, List, Optional, Sequence

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

import corpus  # noqa: E402  (benchmarks/corpus.py)

PYTHON = sys.executable
IPU_PORT = str(Path(PYTHON).with_name("ipu-port"))


class Row:
    def __init__(self, measure: str, baseline: str, value: str, ratio: str, target: str, met: Optional[bool]):
        self.cells = (measure, baseline, value, ratio, target, {True: "yes", False: "NO", None: "-"}[met])


def median_of(runs: int, measure: Callable[[], float]) -> float:
    return statistics.median(measure() for _ in range(runs))


def timed(function: Callable[[], object]) -> float:
    started = time.perf_counter()
    function()
    return time.perf_counter() - started


def wall(command: Sequence[str], cwd: Optional[Path] = None) -> float:
    started = time.perf_counter()
    subprocess.run(command, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    return time.perf_counter() - started


def peak_memory_mb(command: Sequence[str]) -> float:
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, _, usage = os.wait4(process.pid, 0)
    return usage.ru_maxrss / 1024  # kilobytes on Linux


def interleaved(runs: int, baseline: Callable[[], float], subject: Callable[[], float]):
    """Medians of the baseline and the subject, measured alternately so that both see the same
    machine (a busy neighbour slows both)."""
    base, value = [], []
    for _ in range(runs):
        base.append(baseline())
        value.append(subject())
    return statistics.median(base), statistics.median(value)


def ratio_row(measure, base, value, target):
    ratio = value / base if base else float("inf")
    return Row(measure, f"{base:.3f} s", f"{value:.3f} s", f"{ratio:.2f}x", f"<= {target}x", ratio <= target)


def bench_ml_port(files: List[Path], runs: int, kind: str = "ML") -> Row:
    import libcst

    from porter.config import Config
    from porter.engine import port

    texts = [path.read_text(encoding="utf-8") for path in files]
    config = Config()
    for text in texts[:5]:  # warm up: rule modules imported, caches filled
        port(text, config)

    def parse_render():
        return timed(lambda: [libcst.parse_module(text).code for text in texts])

    def port_all():
        return timed(lambda: [port(text, config) for text in texts])

    base, value = interleaved(runs, parse_render, port_all)
    size = sum(map(len, texts)) / 1e6
    return ratio_row(f"port {len(texts)} {kind} files ({size:.1f} MB) vs libcst parse + render", base, value, 2.0)


def bench_plain(files: List[Path], runs: int) -> Row:
    from porter.api import port_file
    from porter.config import Config

    config = Config()
    paths = [str(path) for path in files]

    def read_all():
        def work():
            for path in paths:
                with open(path, "rb") as handle:
                    handle.read()
        return timed(work)

    def port_all():
        return timed(lambda: [port_file(path, config) for path in paths])

    base, value = interleaved(max(runs, 5), read_all, port_all)
    return ratio_row(f"{len(paths)} non-ML files vs reading them", base, value, 3.0)


def cli_has_jobs() -> bool:
    completed = subprocess.run([IPU_PORT, "--help"], capture_output=True, text=True)
    return "--jobs" in completed.stdout


def bench_jobs(folder: Path, runs: int) -> Row:
    measure = "ipu-port --check on the corpus: -j 1 over -j 2 wall time"
    if not cli_has_jobs():
        return Row(measure, "-", "-", "not available", ">= 1.6x", None)
    one, two = interleaved(
        runs,
        lambda: wall([IPU_PORT, "--check", "-j", "1", str(folder)]),
        lambda: wall([IPU_PORT, "--check", "-j", "2", str(folder)]),
    )
    return Row(measure, f"{one:.3f} s (-j 1)", f"{two:.3f} s (-j 2)", f"{one / two:.2f}x faster", ">= 1.6x",
               one / two >= 1.6)


def bench_startup(plain: Path, ml7k: Path, runs: int) -> List[Row]:
    rows = []
    base, value = interleaved(
        max(runs, 7),
        lambda: wall([PYTHON, "-c", "import click"]),
        lambda: wall([IPU_PORT, "--check", str(plain)]),
    )
    rows.append(ratio_row("start-up: --check one non-ML file vs python -c 'import click'", base, value, 2.0))
    base, value = interleaved(
        max(runs, 7),
        lambda: wall([PYTHON, "-c", "import libcst"]),
        lambda: wall([IPU_PORT, "--check", str(ml7k)]),
    )
    size = ml7k.stat().st_size / 1024
    rows.append(ratio_row(f"start-up: --check one {size:.0f} KB ML file vs python -c 'import libcst'",
                          base, value, 2.5))
    return rows


def bench_memory(big: Path) -> Row:
    """The baseline is libcst's own parse of the file: most of the peak is the parser's."""
    parse_only = peak_memory_mb([PYTHON, "-c", "import libcst, sys; libcst.parse_module(open(sys.argv[1]).read())",
                                 str(big)])
    peak = peak_memory_mb([IPU_PORT, "--check", str(big)])
    size = big.stat().st_size / 1e6
    return Row(f"peak memory, --check one {size:.1f} MB ML file (baseline: libcst parse alone)",
               f"{parse_only:.0f} MB", f"{peak:.0f} MB", f"{peak / parse_only:.2f}x", "< 1024 MB", peak < 1024)


def bench_tf_upgrade(folder: Path, runs: int) -> Row:
    measure = "tf_upgrade_v2 --intree --inplace vs ipu-port --write on the TF files"
    # beside this Python (a virtual environment's bin is not always on PATH), else on PATH
    beside = Path(PYTHON).with_name("tf_upgrade_v2")
    tool = str(beside) if beside.exists() else shutil.which("tf_upgrade_v2")
    if tool is None:
        return Row(measure, "-", "-", "skipped (no TensorFlow)", "report", None)
    tf_files = [p for group in ("keras", "tf1") for p in sorted((folder / group).glob("*.py"))]

    def fresh_copy() -> Path:
        target = Path(tempfile.mkdtemp(prefix="ipu-port-bench-tf-"))
        for path in tf_files:
            shutil.copy(path, target / path.name)
        return target

    def run_tool(command_for):
        copy = fresh_copy()
        try:
            return wall(command_for(copy))
        finally:
            shutil.rmtree(copy, ignore_errors=True)

    base, value = interleaved(
        runs,
        lambda: run_tool(lambda copy: [tool, "--intree", str(copy), "--inplace", "--reportfile", os.devnull]),
        lambda: run_tool(lambda copy: [IPU_PORT, "--write", str(copy)]),
    )
    # reported, not a target: the two tools do different work
    return Row(measure, f"{base:.3f} s", f"{value:.3f} s", f"{value / base:.2f}x", "report", None)


def print_table(rows: List[Row], markdown: bool) -> None:
    header = ("measure", "baseline", "ipu-port", "ratio", "target", "met")
    if markdown:
        print("| " + " | ".join(header) + " |")
        print("|" + "---|" * len(header))
        for row in rows:
            print("| " + " | ".join(row.cells) + " |")
        return
    widths = [max(len(cells[i]) for cells in [header] + [row.cells for row in rows]) for i in range(len(header))]
    for cells in [header] + [row.cells for row in rows]:
        print("  ".join(cell.ljust(width) for cell, width in zip(cells, widths)).rstrip())


def main() -> None:
    parser = argparse.ArgumentParser(description="ipu-port benchmarks (ratios against baselines).")
    parser.add_argument("--runs", type=int, default=5, help="runs per measure; the median is reported")
    parser.add_argument("--corpus", type=Path, help="use (or create) the corpus in this folder")
    parser.add_argument("--markdown", action="store_true", help="print the table as Markdown")
    parser.add_argument("--only", nargs="*", default=(),
                        choices=("ml", "small", "plain", "jobs", "startup", "memory", "tf_upgrade"))
    args = parser.parse_args()

    work = Path(tempfile.mkdtemp(prefix="ipu-port-bench-"))
    try:
        folder = args.corpus or work / "corpus"
        if not (folder / "plain").is_dir():
            corpus.generate(folder)
        groups = {group: sorted((folder / group).glob("*.py")) for group in corpus.COUNTS}
        ml_files = groups["keras"] + groups["tf1"] + groups["torch"]
        ml7k = work / "train_7k.py"
        ml7k.write_text(corpus.ml_file_of_size(7 * 1024))
        big = work / "train_2mb.py"
        big.write_text(corpus.big_ml_file(2 * 1024 * 1024))
        small = corpus.generate_small(work / "small")  # outside the corpus: -j runs on the corpus alone
        print(f"corpus: {folder} ({sum(len(v) for v in groups.values())} files); "
              f"{args.runs} runs per measure, medians", file=sys.stderr)
        wanted = set(args.only) or {"ml", "small", "plain", "jobs", "startup", "memory", "tf_upgrade"}
        rows: List[Row] = []
        steps = [
            ("ml", lambda: [bench_ml_port(ml_files, args.runs)]),
            ("small", lambda: [bench_ml_port(small, args.runs, "small (1-3 KB) ML")]),
            ("plain", lambda: [bench_plain(groups["plain"], args.runs)]),
            ("jobs", lambda: [bench_jobs(folder, args.runs)]),
            ("startup", lambda: bench_startup(groups["plain"][0], ml7k, args.runs)),
            ("memory", lambda: [bench_memory(big)]),
            ("tf_upgrade", lambda: [bench_tf_upgrade(folder, args.runs)]),
        ]
        for name, step in steps:
            if name in wanted:
                print(f"measuring {name}...", file=sys.stderr)
                rows.extend(step())
        print_table(rows, args.markdown)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
