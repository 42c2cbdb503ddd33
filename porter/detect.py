"""The text check that decides whether a file is worth parsing at all.

It runs on every file before anything heavy is imported: a file without a TensorFlow, Keras or
PyTorch import comes back byte for byte without a parse.
"""

import re

_FRAMEWORK_IMPORT = re.compile(
    r"^[ \t]*(?:from[ \t]+(?:tensorflow|keras|tf_keras|torch)\b"
    r"|import[ \t][^\n#]*\b(?:tensorflow|keras|tf_keras|torch)\b)",
    re.MULTILINE,
)


def uses_framework(source: str) -> bool:
    # The regex tries every line; a substring check rules most files out several times faster.
    # ("tf_keras" contains "keras".)
    if "torch" not in source and "keras" not in source and "tensorflow" not in source:
        return False
    return _FRAMEWORK_IMPORT.search(source) is not None
