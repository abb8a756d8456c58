#!/usr/bin/env python3
"""PyTorch peer for `clgrad-bench train --net FILE`: builds the same network from clgrad's
text format (classifiers, segmenters and regression nets), trains it on synthetic data of its
input shape (Adam, lr 0.001, batch 64 by
default) on the CPU and prints training and inference images/s (median step after 10 warm-up
steps), so that the two run on the same machine in the same session. A benchmark peer only:
clgrad never needs PyTorch.

    python3 tools/peers/bench_pytorch.py tools/nets/fashion-resnet20.net [--batch 64] [--threads 2]
        [--steps 30] [--json]
"""
import argparse, json, re, statistics, sys, time

import torch
import torch.nn as nn


def sizes(word):
    return [int(v) for v in word.split("x")]


def pair(v):
    p = [int(x) for x in v.split(",")]
    return (p[0], p[-1])


def pads(v, k):
    """clgrad's pad=N | H,W | T,B,L,R | same, as (top, bottom, left, right)."""
    if v == "same":
        th, tw = k[0] - 1, k[1] - 1
        return (th // 2, th - th // 2, tw // 2, tw - tw // 2)
    p = [int(x) for x in v.split(",")]
    if len(p) == 1:
        return (p[0],) * 4
    if len(p) == 2:
        return (p[0], p[0], p[1], p[1])
    return tuple(p)


class Node(nn.Module):
    """One layer: a module applied to its inputs (summed or stacked for add and concat)."""

    def __init__(self, kind, module, inputs, relu=False):
        super().__init__()
        self.kind, self.module, self.inputs, self.relu = kind, module, inputs, relu

    def forward(self, xs):
        if self.kind == "add":
            y = xs[0]
            for x in xs[1:]:
                y = y + x
            return torch.relu(y) if self.relu else y
        if self.kind == "concat":
            return torch.cat(xs, dim=1)
        return self.module(xs[0])


class Net(nn.Module):
    def __init__(self, text):
        super().__init__()
        self.nodes = nn.ModuleList()
        self.task, self.loss_opts = "softmax", {}
        names, shapes = {"input": -1}, {}
        lines = [l.split("#")[0].split() for l in text.splitlines()]
        lines = [l for l in lines if l]
        h, w, c = sizes(lines[0][1])
        self.input = (c, h, w)
        shapes[-1] = (c, h, w)
        for i, words in enumerate(lines[1:]):
            kind, args = words[0], words[1:]
            opts = dict(a.split("=", 1) for a in args if "=" in a)
            pos = [a for a in args if "=" not in a]
            if "from" in opts:
                inputs = [names[n] for n in opts["from"].split(",")]
            else:
                inputs = [i - 1]
            if kind in ("add", "concat") and pos:
                inputs += [names[n] for n in pos[0].split(",")]
            cin, hin, win = shapes[inputs[0]]
            relu = False
            if kind == "conv":
                kh, kw, k = sizes(pos[0])
                s = pair(opts.get("stride", "1"))
                d = pair(opts.get("dilation", "1"))
                t, b, l, r = pads(opts.get("pad", "0"), ((kh - 1) * d[0] + 1, (kw - 1) * d[1] + 1))
                g = int(opts.get("groups", "1"))
                m = nn.Sequential(nn.ZeroPad2d((l, r, t, b)),
                                  nn.Conv2d(cin, k, (kh, kw), s, 0, d, g, opts.get("bias", "1") == "1"))
                out = (k, (hin + t + b - (kh - 1) * d[0] - 1) // s[0] + 1,
                       (win + l + r - (kw - 1) * d[1] - 1) // s[1] + 1)
            elif kind in ("maxpool", "avgpool"):
                kh, kw = sizes(pos[0])
                s = pair(opts.get("stride", f"{kh},{kw}"))
                t, b, l, r = pads(opts.get("pad", "0"), (kh, kw))
                ceil = opts.get("ceil", "0") == "1"
                if kind == "maxpool":
                    m = nn.Sequential(nn.ConstantPad2d((l, r, t, b), float("-inf")),
                                      nn.MaxPool2d((kh, kw), s, 0, ceil_mode=ceil))
                else:
                    m = nn.Sequential(nn.ZeroPad2d((l, r, t, b)),
                                      nn.AvgPool2d((kh, kw), s, 0, ceil_mode=ceil))
                out = (cin, (hin + t + b - kh) // s[0] + 1, (win + l + r - kw) // s[1] + 1)
            elif kind == "gap":
                m, out = nn.AdaptiveAvgPool2d(1), (cin, 1, 1)
            elif kind == "fc":
                n = int(pos[0])
                m, out = nn.Sequential(nn.Flatten(), nn.Linear(cin * hin * win, n)), (n, 1, 1)
            elif kind == "batchnorm":
                m = nn.BatchNorm2d(cin, float(opts.get("eps", "1e-5")), float(opts.get("momentum", "0.1")))
                out = (cin, hin, win)
            elif kind == "dropout":
                m, out = nn.Dropout(float(pos[0]) if pos else float(opts.get("p", "0.5"))), (cin, hin, win)
            elif kind in ("relu", "sigmoid", "tanh"):
                m, out = {"relu": nn.ReLU(), "sigmoid": nn.Sigmoid(), "tanh": nn.Tanh()}[kind], (cin, hin, win)
            elif kind == "leaky":
                m, out = nn.LeakyReLU(float(opts.get("alpha", "0.01"))), (cin, hin, win)
            elif kind == "elu":
                m, out = nn.ELU(float(opts.get("alpha", "1"))), (cin, hin, win)
            elif kind == "add":
                m, out, relu = None, (cin, hin, win), opts.get("relu", "0") == "1"
            elif kind == "concat":
                m, out = None, (sum(shapes[j][0] for j in inputs), hin, win)
            elif kind == "convt":
                kh, kw, k = sizes(pos[0])
                s = pair(opts.get("stride", "1"))
                t, b, l, r = pads(opts.get("pad", "0"), (kh, kw))
                assert (t, l) == (b, r), "bench_pytorch: symmetric transposed padding only"
                m = nn.ConvTranspose2d(cin, k, (kh, kw), s, (t, l),
                                       bias=opts.get("bias", "1") == "1")
                out = (k, (hin - 1) * s[0] - t - b + kh, (win - 1) * s[1] - l - r + kw)
            elif kind == "upsample":
                f = pair(pos[0])
                mode = opts.get("mode", "nearest")
                m = nn.Upsample(scale_factor=f, mode=mode,
                                align_corners=False if mode == "bilinear" else None)
                out = (cin, hin * f[0], win * f[1])
            elif kind in ("softmax", "pixelsoftmax", "regression"):
                self.task = kind  # the loss reads the logits (or the prediction)
                self.loss_opts = opts
                break
            else:
                sys.exit(f"bench_pytorch: unknown layer {kind}")
            self.nodes.append(Node(kind, m, inputs, relu))
            names[opts.get("name", f"l{i + 1}")] = i
            names[f"l{i + 1}"] = i
            shapes[i] = out

    def forward(self, x):
        outs = {-1: x}
        for i, node in enumerate(self.nodes):
            outs[i] = node([outs[j] for j in node.inputs])
        return outs[len(self.nodes) - 1]

    def loss(self, y, t):
        """clgrad's losses: softmax cross-entropy per sample; per pixel (each sample's sum over
        its pixels / H W, weighted by class); regression's half mean squared error or mean
        absolute error."""
        if self.task == "regression":
            if self.loss_opts.get("loss", "mse") == "l1":
                return (y - t).abs().mean()
            return 0.5 * ((y - t) ** 2).mean()
        if self.task == "pixelsoftmax":
            w = self.loss_opts.get("weights")
            w = torch.tensor([float(v) for v in w.split(",")]) if w else None
            n, _, h, ww = y.shape
            return nn.functional.cross_entropy(y, t, weight=w, ignore_index=-1,
                                               reduction="sum") / (n * h * ww)
        return nn.functional.cross_entropy(y, t)

    def targets(self, y):
        """Synthetic targets of the output's task for outputs shaped as y."""
        if self.task == "regression":
            return torch.rand_like(y)
        if self.task == "pixelsoftmax":
            n, k, h, w = y.shape
            return torch.randint(0, k, (n, h, w))
        return torch.randint(0, y.shape[1], (y.shape[0],))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("net")
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--steps", type=int, default=30)
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    torch.manual_seed(1)
    net = Net(open(a.net).read())
    c, h, w = net.input
    x = torch.rand(a.batch, c, h, w)
    with torch.no_grad():
        y = net.targets(net(x))
    opt = torch.optim.Adam(net.parameters(), lr=1e-3)
    times = []
    net.train()
    for step in range(10 + a.steps):
        t0 = time.perf_counter()
        opt.zero_grad()
        loss = net.loss(net(x), y)
        loss.backward()
        opt.step()
        if step >= 10:
            times.append(time.perf_counter() - t0)
    train = a.batch / statistics.median(times)
    net.eval()
    xi = torch.rand(256, c, h, w)
    with torch.no_grad():
        net(xi)
        it = []
        for _ in range(5):
            t0 = time.perf_counter()
            net(xi)
            it.append(time.perf_counter() - t0)
    infer = 256 / statistics.median(it)
    # the peer's build, said beside its figures: its CPU kernels (DEFAULT means no AVX2 ones)
    # and the threads it really used
    capability = getattr(getattr(torch.backends, "cpu", None), "get_cpu_capability",
                         lambda: "unknown")()
    threads = torch.get_num_threads()
    if a.json:
        print(json.dumps({"bench": "pytorch_train", "net": a.net, "torch": torch.__version__,
                          "cpu_capability": capability, "threads": threads, "batch": a.batch,
                          "images_per_s": round(train, 1), "infer_images_per_s": round(infer, 1)}))
    else:
        print(f"PyTorch {torch.__version__} (CPU capability {capability}), {threads} threads, "
              f"{a.net}")
        print(f"train  batch {a.batch:3d}: {train:8.1f} images/s (median of {a.steps} steps)")
        print(f"infer  batch 256: {infer:8.1f} images/s")


if __name__ == "__main__":
    main()
