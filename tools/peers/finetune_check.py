#!/usr/bin/env python3
"""Fine-tuning an imported ImageNet model at 224 px (a check, not a dependency of clgrad):

1. torchvision's MobileNet-v2 with random weights (no hub is reachable), its batch norms'
   running statistics set from the photos as a trained model's would be (PyTorch's
   exporter folds them into the convolutions in eval mode), exported by PyTorch with
   torch.onnx.export's defaults (opset 20, weights in model.onnx.data);
2. a 10-class folder of 224 px RGB JPEG photos (patterns of a colour and a stripe width
   per class, with noise), 16 a class to train, 4 to test;
3. clgrad-train --net mobilenet_v2.onnx on the folder (its 1,000-class output replaced for
   10 classes, input normalisation from the photos, SGDM): the loss falls over 2 epochs;
   and two steps on one device and on two (--split-cpu 2 --worker-load 1,1) end with the
   same weights within the suite's tolerance (relative L2 1e-5). Longer runs drift apart as
   any change of summation order makes them (two 2-device splits, 1:1 and 3:1, drift as far:
   the training of this random network is that sensitive), so the comparison is short;
4. the fine-tuned model exported to ONNX and run by ONNX Runtime: clgrad's probabilities
   within 1e-4.

    python3 tools/peers/finetune_check.py --build build [--work DIR] [--epochs N]

Exits 77 (skipped) where torch, torchvision, onnx, onnxruntime or Pillow is missing.
"""
import argparse, glob, json, os, re, subprocess, sys, tempfile

try:
    import numpy as np
    import onnx
    import onnxruntime as ort
    import torch
    import torchvision
    from PIL import Image
except ImportError as e:
    print(f"skipped: {e.name} is not installed (pip install torch torchvision onnx onnxscript "
          "onnxruntime pillow)")
    sys.exit(77)


def photos(root):
    rng = np.random.default_rng(0)
    yy, xx = np.mgrid[0:256, 0:256]
    for split, n in (("train", 16), ("test", 4)):
        for k in range(10):
            d = os.path.join(root, split, f"class{k}")
            os.makedirs(d, exist_ok=True)
            for i in range(n):
                img = np.zeros((256, 256, 3), np.float32)
                img[..., k % 3] = 0.3 + 0.07 * k
                img[..., (k + 1) % 3] += 0.4 * (np.sin((xx + 13 * i) / (6 + 2 * k)) > 0)
                img = np.clip(img + rng.normal(0, 0.08, img.shape), 0, 1)
                Image.fromarray((img * 255).astype(np.uint8)).resize((224, 224)).save(
                    os.path.join(d, f"{i:03d}.jpg"), quality=90)


def load(files):
    return np.stack([np.asarray(Image.open(f), np.float32).transpose(2, 0, 1) / 255
                     for f in files])


def export_model(path, train_files):
    torch.manual_seed(0)
    m = torchvision.models.mobilenet_v2(weights=None)
    x = torch.from_numpy(load(train_files))
    mean, std = x.mean((0, 2, 3), keepdim=True), x.std((0, 2, 3), keepdim=True)
    for mod in m.modules():  # running statistics as a trained model's: cumulative averages
        if isinstance(mod, torch.nn.BatchNorm2d):
            mod.momentum = None
            mod.reset_running_stats()
    m.train()
    with torch.no_grad():
        for i in range(0, len(x), 32):
            m((x[i:i + 32] - mean) / std)
    m.eval()
    torch.onnx.export(m, (torch.randn(1, 3, 224, 224),), path, input_names=["input"],
                      output_names=["logits"])


def train(build, work, tag, epochs, extra):
    args = [os.path.join(build, "clgrad-train"), "--net", os.path.join(work, "mobilenet_v2.onnx"),
            "--data", os.path.join(work, "photos"), "--channels", "3", "--image-size", "224x224",
            "--epochs", str(epochs), "--batch", "16", "--seed", "1", "--normalize", "zscore",
            "--validation-split", "0",
            "--solver", "sgdm", "--verbose-frequency", "1",
            "--save", os.path.join(work, f"{tag}.clgm"),
            "--export-onnx", os.path.join(work, f"{tag}.onnx")] + extra
    out = subprocess.run(args, check=True, capture_output=True, text=True).stdout
    losses = [float(m.group(1)) for m in re.finditer(
        r"^\|\s+\d+ \|\s+\d+ \|\s+[\d:]+ \|\s+[\d.]+% \|[^|]*\|\s+([\d.]+) \|", out, re.M)]
    speed = re.search(r"Trained .* ([\d.]+) images/s", out)
    return losses, speed.group(1) if speed else "?"


def weights(path):
    return {t.name: onnx.numpy_helper.to_array(t) for t in onnx.load(path).graph.initializer
            if t.data_type == onnx.TensorProto.FLOAT}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build")
    ap.add_argument("--work", default=None)
    ap.add_argument("--epochs", type=int, default=2)
    args = ap.parse_args()
    work = args.work or tempfile.mkdtemp(prefix="clgrad-finetune-")
    os.makedirs(work, exist_ok=True)
    torch.set_num_threads(2)
    photos(os.path.join(work, "photos"))
    train_files = sorted(glob.glob(os.path.join(work, "photos", "train", "*", "*.jpg")))
    export_model(os.path.join(work, "mobilenet_v2.onnx"), train_files)
    print(f"PyTorch {torch.__version__}: MobileNet-v2 exported (opset 20, external data)")
    l1, s1 = train(args.build, work, "one", args.epochs, [])
    first, last = np.mean(l1[:3]), np.mean(l1[-3:])
    print(f"1 device: loss {first:.3f} over the first 3 steps, {last:.3f} over the last 3 "
          f"({len(l1)} steps, {s1} images/s)")
    short = ["--limit-train", "32"]  # 2 steps
    train(args.build, work, "one2", 1, short)
    _, s2 = train(args.build, work, "two2", 1, short + ["--split-cpu", "2", "--worker-load", "1,1"])
    a, b = weights(os.path.join(work, "one2.onnx")), weights(os.path.join(work, "two2.onnx"))
    num = sum(float(((a[k] - b[k]) ** 2).sum()) for k in a)
    den = sum(float((a[k] ** 2).sum()) for k in a)
    rel = (num / den) ** 0.5
    print(f"2 steps, 1 against 2 devices ({s2} images/s): weights' relative L2 difference "
          f"{rel:.2e} over {len(a)} tensors")
    files = sorted(glob.glob(os.path.join(work, "photos", "test", "*", "*.jpg")))
    x = load(files)
    np.save(os.path.join(work, "x.npy"), x)
    want = ort.InferenceSession(os.path.join(work, "one.onnx"),
                                providers=["CPUExecutionProvider"]).run(None, {"input": x})[0]
    out = subprocess.run([os.path.join(args.build, "clgrad-predict"), "--top", "10", "--json",
                          "--npy", os.path.join(work, "x.npy"), os.path.join(work, "one.clgm")],
                         check=True, capture_output=True, text=True).stdout
    got = np.zeros_like(want)
    for i, line in enumerate(out.splitlines()):
        for t in json.loads(line)["top"]:
            got[i, t["class"]] = t["probability"]
    diff = float(np.abs(got - want).max())
    print(f"clgrad against ONNX Runtime {ort.__version__} on the fine-tuned export: max "
          f"|p - p_ort| {diff:.2e} on {len(x)} test photos")
    ok = last < first and rel <= 1e-5 and diff <= 1e-4
    print("finetune_check: every check passed" if ok else "finetune_check: FAILED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
