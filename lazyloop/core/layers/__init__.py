"""Non-loop layers: one small module per family.

Each layer class knows two things: the static type of its outputs (`infer`, run when the layer
is added and whenever its inputs or parameters change: `stream/shape`) and the function it
applies to one element of each input stream (`kernel`, applied sequence-wise: `stream/map`).
"""
