"""Internals of `lazyloop.onnx`: types, reference kernels, the lowering of graphs and loops."""
