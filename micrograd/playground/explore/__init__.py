"""The explorer's room: the backprop explorer (`explorer.Explorer`), its passes and Predict mode
(`walkthrough`, `predict`, `softmax`), its drawing (`drawing`), a learner's own Value (`foreign`).
It may import micrograd below the playground and `playground.errors`; no other room.
"""
