"""What the emulated IPU saw during one run: configuration, strategies, wrappers, errors, losses.

The emulation records every error it raises here *before* raising it, so a script that catches
the exception still shows up as having hit an IPU constraint."""


class EmulationState:
    def __init__(self):
        self.reset()

    def reset(self):
        self.configured = []          # IPUConfig objects passed to configure_ipu_system
        self.strategies = []          # IPUStrategy objects created
        self.scopes_entered = 0       # IPUStrategy.scope() / ipu_scope entries
        self.keras_ipu_calls = []     # ("fit" | "evaluate" | "predict", model name) run under IPUStrategy
        self.compiled = 0             # ipu_compiler.compile calls
        self.strategy_runs = 0        # IPUStrategy.run calls
        self.poptorch_options = []    # poptorch.Options created
        self.dataloaders = []         # poptorch.DataLoader objects
        self.training_models = []     # poptorch.trainingModel executors
        self.inference_models = []    # poptorch.inferenceModel executors
        self.training_losses = []     # losses returned by poptorch training executors
        self.outfeed_items = 0        # values enqueued to IPUOutfeedQueues
        self.ipu_executions = 0       # steps run on the emulated IPU (Keras steps under IPUStrategy,
                                      # strategy.run calls, compiled TF1 computations run in a session,
                                      # PopTorch model calls)
        self.cpu_training_steps = 0   # training steps run on the CPU (Keras fit outside the IPU scope,
                                      # a torch optimizer step, Session.run of an uncompiled training op)
        self.errors = []              # emulated IPU errors raised (exception objects)
        self.notes = []               # documented behaviour differences (replication, accumulation)

    def error(self, exc):
        """Record an emulated IPU error and return it, for `raise state.error(...)`."""
        self.errors.append(exc)
        return exc

    @property
    def used_ipu(self):
        return bool(self.keras_ipu_calls or self.compiled or self.strategy_runs or self.training_models
                    or self.inference_models)


STATE = EmulationState()
