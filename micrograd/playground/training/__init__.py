"""The Train view's room: a run (`trainer.Trainer`, `run_view.RunView`) and its parts (`train_*`:
settings, kinds, data, mlp, pacer, publish, frames, graph, point, health, js), `engines`, the
runner (`train_thread`). It may import micrograd below the playground and `playground.errors`.
"""
