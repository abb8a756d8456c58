#!/usr/bin/env python3
"""Inference of imported ImageNet models, clgrad beside PyTorch and ONNX Runtime on the same
machine and run (a benchmark, not a dependency of clgrad): torchvision's ResNet-50,
MobileNet-v2 and EfficientNet-b0 (random weights), exported by torch.onnx.export's defaults,
run at a batch of 224 px images: PyTorch eval (no_grad), ONNX Runtime's CPU provider and
`clgrad-bench infer` on the ONNX file, each the median of --runs after two warm-up runs, in
alternating rounds (the machine's noise hits all three), images/s and clgrad's ratios.

    python3 tools/peers/bench_imported.py --build build [--batch 32] [--runs 3] [--rounds 3]

With --train, training steps instead (ONNX Runtime has none): torchvision's model in train
mode (its batch norms kept: PyTorch's exporter folds them into the convolutions in eval mode,
so clgrad's imported network has none and does less work), cross-entropy, SGD with momentum,
beside `clgrad-bench train --net MODEL.onnx` at the same batch.
"""
import argparse, json, os, platform, statistics, subprocess, sys, tempfile, time, warnings

try:
    import numpy as np
    import onnxruntime as ort
    import torch
    import torchvision
except ImportError as e:
    print(f"skipped: {e.name} is not installed (pip install torch torchvision onnx onnxscript "
          "onnxruntime)")
    sys.exit(77)

MODELS = ["resnet50", "mobilenet_v2", "efficientnet_b0"]


def cpu_name():
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    return platform.processor()


def timed(fn, runs):
    fn(), fn()
    t = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        t.append(time.perf_counter() - t0)
    return statistics.median(t)


def train_round(args, name, path, model, x):
    model.train()
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    y = torch.randint(0, 1000, (args.batch,))
    loss_fn = torch.nn.CrossEntropyLoss()

    def step():
        opt.zero_grad()
        loss_fn(model(x), y).backward()
        opt.step()

    rows = []
    for _ in range(args.rounds):
        tp = timed(step, args.runs)
        out = subprocess.run([os.path.join(args.build, "clgrad-bench"), "train", "--net", path,
                              "--batch", str(args.batch), "--runs", str(args.runs), "--json"],
                             check=True, capture_output=True, text=True).stdout
        ips = next(json.loads(l)["images_per_s"] for l in out.splitlines()
                   if l.startswith('{"bench":"train",'))
        rows.append((ips, args.batch / tp))
    c, p = (statistics.median(r[i] for r in rows) for i in range(2))
    rp = statistics.median(r[0] / r[1] for r in rows)
    print(f"{name:16s} {c:9.1f} {p:9.1f}  {rp:.2f}x", flush=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build")
    ap.add_argument("--work", default=None)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--only", default="")
    ap.add_argument("--train", action="store_true")
    args = ap.parse_args()
    warnings.filterwarnings("ignore")
    work = args.work or tempfile.mkdtemp(prefix="clgrad-bench-imported-")
    os.makedirs(work, exist_ok=True)
    torch.set_num_threads(args.threads)
    print(f"CPU {cpu_name()}, {os.cpu_count()} threads; PyTorch {torch.__version__} "
          f"(CPU capability {torch.backends.cpu.get_cpu_capability()}, {args.threads} threads), "
          f"ONNX Runtime {ort.__version__} ({args.threads} threads); batch {args.batch}")
    if args.train:
        print(f"{'model':16s} {'clgrad':>9s} {'PyTorch':>9s}  training images/s; clgrad/PyTorch "
              "(median of the rounds' ratios)")
    else:
        print(f"{'model':16s} {'clgrad':>9s} {'PyTorch':>9s} {'ORT':>9s}  images/s; "
              "clgrad/PyTorch, clgrad/ORT (medians of the rounds' ratios)")
    for name in args.only.split(",") if args.only else MODELS:  # any torchvision model
        model = getattr(torchvision.models, name)(weights=None).eval()
        path = os.path.join(work, f"{name}.onnx")
        torch.onnx.export(model, (torch.randn(1, 3, 224, 224),), path, input_names=["input"],
                          output_names=["logits"], dynamic_shapes=({0: "N"},))
        x = torch.rand(args.batch, 3, 224, 224)
        if args.train:
            train_round(args, name, path, model, x)
            continue
        so = ort.SessionOptions()
        so.intra_op_num_threads, so.inter_op_num_threads = args.threads, 1
        sess = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
        xn = x.numpy()
        rows = []
        for _ in range(args.rounds):
            with torch.no_grad():
                tp = timed(lambda: model(x), args.runs)
            to = timed(lambda: sess.run(None, {"input": xn}), args.runs)
            out = subprocess.run([os.path.join(args.build, "clgrad-bench"), "infer", "--net", path,
                                  "--batch", str(args.batch), "--runs", str(args.runs), "--json"],
                                 check=True, capture_output=True, text=True).stdout
            ips = json.loads(out.strip().splitlines()[-1])["images_per_s"]
            rows.append((ips, args.batch / tp, args.batch / to))
        c, p, o = (statistics.median(r[i] for r in rows) for i in range(3))
        rp = statistics.median(r[0] / r[1] for r in rows)
        ro = statistics.median(r[0] / r[2] for r in rows)
        print(f"{name:16s} {c:9.1f} {p:9.1f} {o:9.1f}  {rp:.2f}x, {ro:.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
