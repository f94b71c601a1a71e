"""The GPT view's room: `gpt_view.GPTView`, microgpt as a Train run's kind (`train_gpt.GPTKind`),
its engines (`train_gpt_engines`: Python, jit, JavaScript) and what a frame shows (`gpt_frames`).
It may import micrograd below the playground, `playground.errors` and the training room.
"""
