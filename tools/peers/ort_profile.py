#!/usr/bin/env python3
"""ONNX Runtime's own per-node profile of a model (its CPU provider), for reading beside
`clgrad-bench infer --net MODEL --batch N --profile`: the run's time by kind of layer
(convolutions by kernel size, stride and depthwise-ness, from the weights' shapes in the
profile) and the longest convolutions with their weight, input and output shapes.

Usage: python3 tools/peers/ort_profile.py MODEL.onnx [--batch 32] [--size 224]
       [--threads 2] [--runs 5] [--top 30]
(in a venv with onnxruntime and numpy; clgrad never needs them)"""
import argparse
import collections
import json
import os
import sys


def conv_kind(weight, x, y):
    """'conv RxS s1|s2 [dw]' from the shapes ORT records (NCHW or its blocked form)."""
    strided = len(x) > 2 and len(y) > 2 and x[2] > 1 and y[2] * 2 <= x[2]
    kind = "conv %dx%d %s" % (weight[2], weight[3], "s2" if strided else "s1")
    return kind + (" dw" if weight[1] == 1 and weight[0] > 1 else "")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("model")
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--size", type=int, default=224)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--top", type=int, default=30)
    a = ap.parse_args()
    import numpy as np
    import onnxruntime as ort

    so = ort.SessionOptions()
    so.intra_op_num_threads = a.threads
    so.inter_op_num_threads = 1
    so.enable_profiling = True
    so.profile_file_prefix = os.path.join(os.environ.get("TMPDIR", "/tmp"), "ort_profile")
    s = ort.InferenceSession(a.model, so, providers=["CPUExecutionProvider"])
    inp = s.get_inputs()[0]
    x = np.random.default_rng(1).random((a.batch, 3, a.size, a.size), dtype=np.float32)
    for _ in range(a.runs):
        s.run(None, {inp.name: x})
    path = s.end_profiling()
    with open(path) as f:
        events = json.load(f)
    os.remove(path)
    runs = [e for e in events if e.get("cat") == "Session" and e["name"] == "model_run"]
    print("ONNX Runtime %s, %d threads, batch %d: runs %s ms" %
          (ort.__version__, a.threads, a.batch, ", ".join("%.1f" % (e["dur"] / 1e3) for e in runs)))
    last = runs[-1]  # the warmest run
    t0, t1 = last["ts"], last["ts"] + last["dur"]
    nodes = [e for e in events if e.get("cat") == "Node" and e["name"].endswith("_kernel_time")
             and t0 <= e["ts"] <= t1]
    by_kind = collections.defaultdict(float)
    convs = []
    for e in nodes:
        args, ms = e["args"], e["dur"] / 1e3
        kind = args.get("op_name", "?")
        shapes = [list(d.values())[0] for d in args.get("input_type_shape", [])]
        if kind == "Conv" and len(shapes) > 1:
            out = [list(d.values())[0] for d in args.get("output_type_shape", [])][0]
            kind = conv_kind(shapes[1], shapes[0], out)
            convs.append((ms, shapes[1], shapes[0][1:], out[1:]))
        by_kind[kind] += ms
    print("last run by kind (ms):")
    for kind, ms in sorted(by_kind.items(), key=lambda kv: -kv[1]):
        print("%9.1f  %s" % (ms, kind))
    print("longest convolutions (ms, weight, input CxHxW, output):")
    for ms, w, xin, out in sorted(convs, key=lambda c: -c[0])[:a.top]:
        print("%9.2f  %s %s %s" % (ms, w, xin, out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
