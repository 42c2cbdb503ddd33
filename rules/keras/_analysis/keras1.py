"""The Keras 1 keywords of Keras layers: their Keras 2 names (IPU115 renames them), and those whose
values changed meaning (IPU115 reports them). The IPU layer swaps read a layer's arguments by their
Keras 2 names."""

from typing import Dict

# Keras 1 layer keywords and their Keras 2 names, as Keras 2.0 to 2.2 renamed them (its legacy
# interfaces): the same argument under another name, so the rename is exact.
_WEIGHTS = {"init": "kernel_initializer", "W_regularizer": "kernel_regularizer",
            "b_regularizer": "bias_regularizer", "W_constraint": "kernel_constraint",
            "b_constraint": "bias_constraint", "bias": "use_bias"}
_CONVOLUTION = {**_WEIGHTS, "nb_filter": "filters", "border_mode": "padding", "subsample": "strides",
                "filter_length": "kernel_size", "subsample_length": "strides"}
_POOLING = {"pool_length": "pool_size", "stride": "strides", "border_mode": "padding"}
_RECURRENT = {**_WEIGHTS, "output_dim": "units", "inner_init": "recurrent_initializer",
              "U_regularizer": "recurrent_regularizer", "dropout_W": "dropout", "dropout_U": "recurrent_dropout"}
LAYER_KEYWORDS: Dict[str, Dict[str, str]] = {
    "Dense": {**_WEIGHTS, "output_dim": "units"},
    "Dropout": {"p": "rate"},
    "Embedding": {"init": "embeddings_initializer", "W_regularizer": "embeddings_regularizer",
                  "W_constraint": "embeddings_constraint"},
    "BatchNormalization": {"beta_init": "beta_initializer", "gamma_init": "gamma_initializer"},
    **{name: _CONVOLUTION for name in ("Conv1D", "Conv2D", "Conv3D", "Convolution1D", "Convolution2D",
                                       "Convolution3D")},
    **{name: _POOLING for name in ("MaxPooling1D", "AveragePooling1D", "MaxPooling2D", "AveragePooling2D",
                                   "MaxPooling3D", "AveragePooling3D")},
    **{name: _RECURRENT for name in ("LSTM", "GRU", "SimpleRNN")},
}
# Keras 1 keywords whose value changes meaning in Keras 2 (`dim_ordering="th"` is
# `data_format="channels_first"`, `consume_less` picks an `implementation` number, the `mode` of a
# batch normalisation is gone, and `nb_row`/`nb_col` are one `kernel_size`): reported, with what to write
# where IPU115 does not rename them.
CHANGED_KEYWORDS = {
    "dim_ordering": "`data_format=` (\"tf\" is \"channels_last\", \"th\" is \"channels_first\")",
    "consume_less": "`implementation=` (\"cpu\" is 1, \"mem\" and \"gpu\" are 2)",
    "mode": "nothing: Keras 2 has only the feature-wise mode 0; remove it (other modes need a layer of your own)",
    "nb_row": "`kernel_size=(rows, columns)` with `nb_col`",
    "nb_col": "`kernel_size=(rows, columns)` with `nb_row`",
}
