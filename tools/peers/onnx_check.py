#!/usr/bin/env python3
"""ONNX round trips against the tools others use (a check, not a dependency of clgrad):

1. PyTorch -> clgrad: a small CNN (conv, batch norm, ReLU, max pooling, a residual add, global
   pooling, a linear layer; zero, reflection and replication padding as F.pad writes them; a
   transposed convolution, nearest and bilinear up-sampling by F.interpolate) trained briefly in PyTorch on Fashion-MNIST, exported with
   torch.onnx.export, imported by clgrad-predict: the same class probabilities on 1,000 test
   images within 1e-4.
2. clgrad -> ONNX Runtime: a network trained by clgrad-train and exported with --export-onnx
   passes onnx.checker and, run by ONNX Runtime, gives clgrad's probabilities within 1e-4.

    python3 tools/peers/onnx_check.py --build build [--work DIR]

Exits 77 (skipped, saying why) where PyTorch, onnx or onnxruntime is not installed.
"""
import argparse, gzip, json, os, subprocess, sys, tempfile

try:
    import numpy as np
    import onnx
    import onnxruntime as ort
    import torch
    import torch.nn as nn
except ImportError as e:
    print(f"skipped: {e.name} is not installed (pip install torch onnx onnxruntime)")
    sys.exit(77)

FM = "/usr/share/datasets/fashion-mnist"


def idx(name):
    with gzip.open(os.path.join(FM, name)) as f:
        data = f.read()
    dims = data[3]
    shape = [int.from_bytes(data[4 + 4 * i:8 + 4 * i], "big") for i in range(dims)]
    return np.frombuffer(data, np.uint8, offset=4 + 4 * dims).reshape(shape)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.c1 = nn.Conv2d(1, 16, 3, padding=0, bias=False)
        self.b1 = nn.BatchNorm2d(16)
        self.c2 = nn.Conv2d(16, 16, 3, padding=0)
        self.up = nn.ConvTranspose2d(16, 16, 3, stride=2, padding=1, output_padding=1)
        self.fc = nn.Linear(16, 10)

    def forward(self, x):
        pad = nn.functional.pad
        a = torch.relu(self.b1(self.c1(pad(x, (1, 1, 1, 1)))))  # a zero Pad: joins the conv
        a = nn.functional.max_pool2d(a, 2)
        a = torch.relu(self.c2(pad(a, (1, 1, 1, 1), mode="reflect")) + a)
        a = a + nn.functional.max_pool2d(self.up(a), 2)  # 14 -> 28 -> 14
        a = a + nn.functional.interpolate(nn.functional.max_pool2d(a, 2), scale_factor=2,
                                          mode="nearest")
        a = nn.functional.interpolate(a, scale_factor=2, mode="bilinear")
        a = pad(a, (0, 1, 0, 1), mode="replicate")
        a = nn.functional.adaptive_avg_pool2d(a, 1).flatten(1)
        return torch.softmax(self.fc(a), 1)


def clgrad_probs(build, model, images, work):
    path = os.path.join(work, "images.npy")
    np.save(path, images.astype(np.float32))
    out = subprocess.run([os.path.join(build, "clgrad-predict"), "--top", "10", "--json", "--npy",
                          path, model], check=True, capture_output=True, text=True).stdout
    probs = np.zeros((len(images), 10))
    for i, line in enumerate(out.splitlines()):
        for t in json.loads(line)["top"]:
            probs[i, t["class"]] = t["probability"]
    return probs


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build")
    ap.add_argument("--work", default=None)
    args = ap.parse_args()
    work = args.work or tempfile.mkdtemp(prefix="clgrad-onnx-check-")
    os.makedirs(work, exist_ok=True)
    torch.manual_seed(0)
    torch.set_num_threads(2)
    x = idx("train-images-idx3-ubyte.gz")[:4000].astype(np.float32)[:, None] / 255
    y = idx("train-labels-idx1-ubyte.gz")[:4000].astype(np.int64)
    test = idx("t10k-images-idx3-ubyte.gz")[:1000].astype(np.float32)[:, None] / 255
    ok = True

    # 1. PyTorch -> clgrad
    net = Net()
    opt = torch.optim.Adam(net.parameters(), 1e-3)
    for i in range(0, len(x), 64):
        opt.zero_grad()
        p = net(torch.from_numpy(x[i:i + 64]))
        loss = nn.functional.nll_loss(torch.log(p + 1e-12), torch.from_numpy(y[i:i + 64]))
        loss.backward()
        opt.step()
    net.eval()
    model = os.path.join(work, "torch.onnx")
    torch.onnx.export(net, torch.zeros(1, 1, 28, 28), model, opset_version=13,
                      input_names=["input"], output_names=["probabilities"],
                      dynamic_axes={"input": {0: "N"}, "probabilities": {0: "N"}},
                      dynamo=False)  # the TorchScript exporter: no onnxscript needed
    with torch.no_grad():
        want = net(torch.from_numpy(test)).numpy()
    got = clgrad_probs(args.build, model, test, work)
    diff = float(np.abs(got - want).max())
    agree = float((got.argmax(1) == want.argmax(1)).mean())
    print(f"PyTorch {torch.__version__} -> ONNX -> clgrad: max |p - p_torch| {diff:.2e} on "
          f"{len(test)} test images, top class agrees on {100 * agree:.1f}%")
    ok &= diff <= 1e-4

    # 2. clgrad -> ONNX Runtime
    model = os.path.join(work, "clgrad.onnx")
    subprocess.run([os.path.join(args.build, "clgrad-train"), "--limit-train", "4000",
                    "--epochs", "1", "--quiet", "--save", os.path.join(work, "m.clgm"),
                    "--export-onnx", model], check=True, capture_output=True)
    onnx.checker.check_model(onnx.load(model))
    sess = ort.InferenceSession(model, providers=["CPUExecutionProvider"])
    want = sess.run(None, {"input": test})[0]
    got = clgrad_probs(args.build, model, test, work)
    diff = float(np.abs(got - want).max())
    meta = onnx.load(model).metadata_props
    names = {p.key: p.value for p in meta}.get("clgrad.classes", "").split("\n")
    print(f"clgrad -> ONNX -> ONNX Runtime {ort.__version__}: onnx.checker passes, max "
          f"|p - p_ort| {diff:.2e} on {len(test)} test images, class names {names[:2]}...")
    ok &= diff <= 1e-4 and names[0] == "T-shirt/top"
    print("onnx_check: every check passed" if ok else "onnx_check: FAILED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
