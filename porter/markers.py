"""What the porter writes and reports of its own, apart from the rules: the line that stands for a
notebook cell boundary while the cells are ported as one program, and the codes of its notices.

A leaf module: the engine, the notebook support and the renderers all read it, and it reads none of
them, so none of them has to import another just for a name.
"""

# ``__ipu_port_cell__(N)``: the line put before code cell N when a notebook's cells are joined
# (porter.notebook); the engine keeps these lines and wraps no block across them.
CELL_MARKER = "__ipu_port_cell__"

# ``__ipu_port_shell_N__``: a masked IPython line that runs no Python of the notebook (a shell
# escape, ``%matplotlib``, help); the engine wraps no block around it, so it stays at the margin
# where it was (tools that read notebooks line by line take an indented one for Python).
SHELL_LINE = "__ipu_port_shell_"

# ``__ipu_port_magic_N__``: a masked IPython line that runs Python of the notebook (``%time
# model.fit(x, y)``); the engine cannot see what it runs, so it is taken for model code.
PYTHON_MAGIC = "__ipu_port_magic_"

# ``#__ipu_port_local_cell__``: the comment that stands for the first line of a cell magic whose
# cell keeps none of the names it binds (``%%timeit`` runs the cell as a function body), so that
# the port puts nothing there that a later cell reads (the IPU configuration and its strategy).
LOCAL_CELL_MAGIC = "#__ipu_port_local_cell__"

UNPARSABLE = "IPU801"  # a notebook cell that is not Python, left as it is
UNUSED_SUPPRESSION = "IPU802"  # an ``# ipu-port: ignore`` comment that suppresses nothing
HIDDEN_RUN = "IPU803"  # a line magic (``%time model.fit(...)``) that runs model code out of the port's sight

# Findings the porter itself reports (not rules): code -> (name, summary, help).
NOTICES = {
    UNPARSABLE: ("unparsable-cell", "A notebook code cell that is not valid Python is left as it is.",
                 "The cell could not be parsed, even with its IPython magics, shell escapes and help "
                 "syntax masked, so it was not ported. Fix the cell (or port it by hand)."),
    HIDDEN_RUN: ("hidden-run", "A line magic runs model code that the port cannot see.",
                 "A line magic such as `%time` or `%timeit` runs the Python after it, but the port reads "
                 "the line as IPython syntax: the `fit`, `evaluate`, `predict` or step it runs, or the "
                 "model it makes (`%time model = build()`), is not checked (the IPU strategy's scope, "
                 "whole batches). Write the call as Python (time the "
                 "cell with `%%time` instead), or check it by hand."),
    UNUSED_SUPPRESSION: ("unused-suppression", "An `# ipu-port: ignore` comment that suppresses nothing.",
                         "No rule edited or reported anything the comment covers (the comment is on a line "
                         "by itself, or the codes it names do not apply there). Remove it."),
}
