"""Pipeline stage splits (porter.rules.common._analysis.pipeline): contiguous, non-empty, balanced; Keras parameter counts."""

import libcst as cst
import pytest

from porter.rules.common._analysis.pipeline import balanced, layer_parameters, split


def test_split_is_contiguous_and_balanced():
    assert split([1, 1, 1, 1], 2) == [0, 0, 1, 1]
    assert split([5, 1, 1, 1, 1, 1], 2) == [0, 1, 1, 1, 1, 1]
    assert split([1, 2, 3, 4, 5], 2) == [0, 0, 0, 1, 1]
    assert split([1, 1, 1], 3) == [0, 1, 2]
    assert split([1, 1], 3) is None


def test_balanced_prefers_parameters_and_breaks_ties_by_count():
    # Flatten (0), Dense 784->256, Dense 256->128, Dense 128->10
    assert balanced([0, 200960, 32896, 1290], 4, 2) == [0, 0, 1, 1]
    assert balanced(None, 5, 4) == [0, 1, 2, 3, 3]
    assert balanced([0, 0, 0, 0], 4, 2) == [0, 0, 1, 1]


@pytest.mark.parametrize("code, kind, shape, expected", [
    ("keras.layers.Dense(10)", "Dense", (784,), (7850, (10,))),
    ("keras.layers.Dense(10, use_bias=False)", "Dense", (784,), (7840, (10,))),
    ("keras.layers.Conv2D(32, 3, activation='relu')", "Conv2D", (28, 28, 1), (320, (26, 26, 32))),
    ("keras.layers.Conv2D(32, (3, 3), padding='same')", "Conv2D", (32, 32, 3), (896, (32, 32, 32))),
    ("keras.layers.MaxPooling2D()", "MaxPooling2D", (26, 26, 32), (0, (13, 13, 32))),
    ("keras.layers.Flatten()", "Flatten", (5, 5, 64), (0, (1600,))),
    ("keras.layers.Embedding(1000, 64)", "Embedding", (20,), (64000, (20, 64))),
    ("keras.layers.Dense(units)", "Dense", (784,), None),
    ("keras.layers.LSTM(64)", "LSTM", (20, 8), None),
])
def test_layer_parameters(code, kind, shape, expected):
    assert layer_parameters(cst.parse_expression(code), kind, shape) == expected
