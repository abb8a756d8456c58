#!/usr/bin/env python3
"""torchvision's classification architectures through ONNX into clgrad (a check, not a
dependency of clgrad): each model (random weights: no hub is reachable) exported by the
installed PyTorch with torch.onnx.export's defaults and with the TorchScript exporter at
opset 13, imported by clgrad-predict, run on the same random images: the logits (the output
of the model's last layer, clgrad-predict --activations) must agree within 1e-4 of their
norm and the top class must be the same.

    python3 tools/peers/torchvision_check.py --build build [--work DIR] [--only NAME,..]

Prints one line per architecture and exporter: pass (with the largest difference), refused
(clgrad's reason) or FAILED. Exits 77 (skipped) where torch, torchvision or onnx is missing.
"""
import argparse, os, subprocess, sys, tempfile, time, warnings

try:
    import numpy as np
    import torch
    import torchvision
except ImportError as e:
    print(f"skipped: {e.name} is not installed (pip install torch torchvision onnx onnxscript)")
    sys.exit(77)

# (torchvision name, input size): the 11 architectures
ARCHS = [("resnet18", 224), ("resnet50", 224), ("googlenet", 224), ("regnet_x_400mf", 224),
         ("mobilenet_v2", 224), ("efficientnet_b0", 224), ("mnasnet1_0", 224),
         ("shufflenet_v2_x1_0", 224), ("densenet121", 224), ("squeezenet1_0", 224),
         ("inception_v3", 299)]


def build_model(name):
    kw = {"weights": None}
    if name in ("googlenet", "inception_v3"):
        kw.update(aux_logits=False, init_weights=True)
    model = getattr(torchvision.models, name)(**kw).eval()
    with torch.no_grad():  # running statistics other than 0 and 1, as a trained model has
        g = torch.Generator().manual_seed(1)
        for m in model.modules():
            if isinstance(m, torch.nn.BatchNorm2d):
                m.running_mean.copy_(0.1 * torch.randn(m.running_mean.shape, generator=g))
                m.running_var.copy_(0.5 + torch.rand(m.running_var.shape, generator=g))
    return model


def export(model, x, path, how):
    warnings.filterwarnings("ignore", category=DeprecationWarning)
    if how == "default":
        torch.onnx.export(model, (x,), path, input_names=["input"], output_names=["logits"])
    else:
        torch.onnx.export(model, (x,), path, input_names=["input"], output_names=["logits"],
                          opset_version=13, dynamo=False)


def clgrad_logits(build, model, x, work):
    path, out = os.path.join(work, "x.npy"), os.path.join(work, "logits.npy")
    np.save(path, x)
    r = subprocess.run([os.path.join(build, "clgrad-predict"), "--activations", "logits",
                        "--out", out, "--npy", path, model], capture_output=True, text=True)
    if r.returncode != 0:
        return None, (r.stderr.strip().splitlines() or ["exit %d" % r.returncode])[-1]
    return np.load(out).reshape(len(x), -1), None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build")
    ap.add_argument("--work", default=None)
    ap.add_argument("--only", default="")
    ap.add_argument("--images", type=int, default=2)
    args = ap.parse_args()
    work = args.work or tempfile.mkdtemp(prefix="clgrad-torchvision-")
    os.makedirs(work, exist_ok=True)
    torch.manual_seed(0)
    torch.set_num_threads(2)
    only = set(filter(None, args.only.split(",")))
    print(f"PyTorch {torch.__version__}, torchvision {torchvision.__version__}")
    passed = total = 0
    for name, size in ARCHS:
        if only and name not in only:
            continue
        model = build_model(name)
        x = torch.randn(args.images, 3, size, size)
        with torch.no_grad():
            want = model(x).numpy()
        for how in ("default", "opset13"):
            total += 1
            path = os.path.join(work, f"{name}-{how}.onnx")
            t0 = time.time()
            try:
                export(model, x, path, how)
            except Exception as e:  # an exporter's failure is PyTorch's, not clgrad's
                print(f"{name:20s} {how:8s} export failed: {type(e).__name__}: {str(e)[:120]}")
                continue
            got, why = clgrad_logits(args.build, path, x.numpy(), work)
            if got is None:
                print(f"{name:20s} {how:8s} refused: {why[:300]}")
                continue
            rel = float(np.linalg.norm(got - want) / np.linalg.norm(want))
            same = bool((got.argmax(1) == want.argmax(1)).all())
            ok = rel <= 1e-4 and same
            passed += ok
            print(f"{name:20s} {how:8s} {'pass' if ok else 'FAILED'}: logits' relative L2 error "
                  f"{rel:.1e} (norm {np.linalg.norm(want):.3g}), top-1 "
                  f"{'same' if same else 'differs'} ({time.time() - t0:.0f} s)")
    print(f"torchvision_check: {passed} of {total} pass")
    return 0


if __name__ == "__main__":
    sys.exit(main())
