"""IPU165: the `BackupAndRestore` callback, which Keras 2.6 does not run under the IPU strategy."""

from porter.rule import KERAS, WARN, Example, Rule

_EXPERIMENTAL = "keras.callbacks.experimental.BackupAndRestore"
_NEWER = "keras.callbacks.BackupAndRestore"


class BackupAndRestore(Rule):
    code = "IPU165"
    name = "backup-and-restore"
    kind = WARN
    frameworks = frozenset({KERAS})
    summary = ("Report `BackupAndRestore`, which Keras 2.6 runs only under the default, mirrored, TPU and "
               "parameter-server strategies: `fit` in the IPU strategy stops at once.")
    rationale = (
        "`BackupAndRestore` saves the training state at the end of each epoch and restores it when `fit` "
        "starts again after an interruption. The IPU's TensorFlow is Graphcore's port of TensorFlow 2.6, "
        "with Keras 2.6 (Targeting the IPU from TensorFlow 2, \"API changes\", release 2.6), whose callback "
        "(`tf.keras.callbacks.experimental.BackupAndRestore`; `tf.keras.callbacks.BackupAndRestore` is the "
        "name of Keras 2.8 and later) checks the model's distribution strategy when training begins and "
        "raises NotImplementedError for any strategy but the default, `MirroredStrategy`, "
        "`MultiWorkerMirroredStrategy`, `TPUStrategy` and `ParameterServerStrategy` (Keras 2.6, "
        "`keras/callbacks.py`, `BackupAndRestore.on_train_begin`). A model trained in `IPUStrategy` is "
        "not one of them, so `fit` stops before its first step. The port keeps the callback and reports it: "
        "resume from a `ModelCheckpoint` instead (`model.load_weights(path)` when the file exists, and "
        "`fit(..., initial_epoch=...)`), or from a `tf.train.CheckpointManager`."
    )
    examples = (
        Example(
            """\
            import tensorflow as tf

            backup = tf.keras.callbacks.BackupAndRestore(backup_dir="/tmp/backup")
            model.fit(dataset, epochs=10, callbacks=[backup])
            """,
        ),
        Example(
            """\
            from tensorflow import keras

            callbacks = [keras.callbacks.experimental.BackupAndRestore("/tmp/backup")]
            """,
        ),
        # Resuming from a checkpoint the script writes itself runs on the IPU.
        Example(
            """\
            import tensorflow as tf

            saver = tf.keras.callbacks.ModelCheckpoint("weights.h5", save_weights_only=True)
            model.fit(dataset, epochs=10, initial_epoch=start, callbacks=[saver])
            """,
            reported=False,
        ),
    )

    def run(self, ctx) -> None:
        for call, name in ctx.calls_to(_EXPERIMENTAL, _NEWER):
            qualified = ctx.qualified_name(call.func) or ""
            # Keras 2.6's own `keras` package holds the callback at the top of `keras.callbacks`;
            # its public API (`tf.keras`) only under `experimental`.
            renamed = name == _NEWER and qualified.startswith("tensorflow.")
            spelling = (" (and Keras 2.6 names it `tf.keras.callbacks.experimental.BackupAndRestore`: "
                        "`tf.keras.callbacks.BackupAndRestore` is Keras 2.8's name)") if renamed else ""
            ctx.report(self.code, call, "`BackupAndRestore` does not run in the IPU strategy: Keras 2.6 supports "
                       "it only under the default, mirrored, TPU and parameter-server strategies, and `fit` raises "
                       f"NotImplementedError when training begins{spelling}; remove it and resume from a "
                       "`ModelCheckpoint` file (`model.load_weights(path)` and `fit(..., initial_epoch=...)`) or a "
                       "`tf.train.CheckpointManager`", fixed=False)


RULE = BackupAndRestore()
