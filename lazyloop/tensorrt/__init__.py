"""Replay onto `tensorrt`: a core program's builder calls, made again on TensorRT's own builder
(spec/51-difftest.md). Needs `tensorrt` and a GPU; everything else in lazyloop runs without."""
