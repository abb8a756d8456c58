#!/usr/bin/env python3
"""The image-to-image bars against PyTorch on the same machine, data, network, solver, schedule
and epochs: a denoiser on Fashion-MNIST (clgrad-train --denoise; test PSNR and SSIM of the
denoised images, the noisy ones and the best Gaussian blur's) or a segmenter on the scenes of
clgrad-make-segmentation (test mean IoU and global accuracy), with each side's training
images/s, and the largest difference between clgrad's trained model and ONNX Runtime running
its ONNX export. The PyTorch network is built from the same text file (bench_pytorch.Net) and set up
as clgrad sets up its own: He-normal weights before ReLUs, Glorot-uniform elsewhere, zero
biases; Adam with clgrad-train's L2 of 1e-4 on the weights only; reshuffled every epoch; the
same losses (bench_pytorch.Net.loss). A benchmark peer only: clgrad never needs PyTorch.

    python3 tools/peers/dense_quality.py denoise --build build [--epochs 5] [--sigma 0.1]
    python3 tools/peers/dense_quality.py segment --build build --data /tmp/seg [--epochs 10]
"""
import argparse, gzip, json, math, os, re, subprocess, sys, time

import numpy as np
import torch
import torch.nn as nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_pytorch import Net  # noqa: E402

FASHION = "/usr/share/datasets/fashion-mnist"
A = None  # the command line


def idx_images(path):
    for p in (path, path + ".gz"):
        if os.path.exists(p):
            data = (gzip.open if p.endswith(".gz") else open)(p, "rb").read()
            n, h, w = np.frombuffer(data[4:16], ">u4")
            return np.frombuffer(data[16:], np.uint8).reshape(n, 1, h, w).astype(np.float32) / 255
    sys.exit(f"dense_quality: no {path}")


def set_up_like_clgrad(net):
    """clg_net_init's choice: He normal for a layer whose output feeds a ReLU (through batch
    norm), else Glorot uniform; biases 0; batch norm 1 and 0 (PyTorch's own)."""
    nodes = list(net.nodes)

    def feeds_relu(i):
        for j in range(i + 1, len(nodes)):
            if i in nodes[j].inputs:
                m = nodes[j].module
                if isinstance(m, (nn.BatchNorm2d, nn.Dropout)):
                    return feeds_relu(j)
                return isinstance(m, nn.ReLU)
        return False

    for i, node in enumerate(nodes):
        layers = [c for c in (node.module.modules() if node.module is not None else [])
                  if isinstance(c, (nn.Conv2d, nn.ConvTranspose2d, nn.Linear))]
        for c in layers:
            if feeds_relu(i):
                nn.init.kaiming_normal_(c.weight, nonlinearity="relu")
            else:
                nn.init.xavier_uniform_(c.weight)
            if c.bias is not None:
                nn.init.zeros_(c.bias)


def optimizer(net, lr):
    decay = [p for n, p in net.named_parameters() if p.dim() > 1]
    rest = [p for n, p in net.named_parameters() if p.dim() <= 1]
    return torch.optim.Adam([{"params": decay, "weight_decay": 1e-4},
                             {"params": rest, "weight_decay": 0.0}], lr=lr)


def population_statistics(net, x, t_fn, batch, seed):
    """clgrad-train's --batchnorm-statistics population, as torch.optim.swa_utils.update_bn:
    every batch norm's statistics the mean of the training batches' under the final weights."""
    inputs = []
    g = torch.Generator().manual_seed(seed + 99)
    for b in range(x.shape[0] // batch):
        xb, _ = t_fn(torch.arange(b * batch, (b + 1) * batch), g)
        inputs.append(xb)
    with torch.no_grad():
        torch.optim.swa_utils.update_bn(inputs, net)


def train(net, x, t_fn, epochs, batch, lr, seed):
    """Returns training images/s (the steps alone)."""
    g = torch.Generator().manual_seed(seed)
    opt = optimizer(net, lr)
    net.train()
    steps_time, images = 0.0, 0
    n = x.shape[0]
    for epoch in range(epochs):
        order = torch.randperm(n, generator=g)
        for b in range(n // batch):
            idx = order[b * batch:(b + 1) * batch]
            xb, tb = t_fn(idx, g)
            t0 = time.perf_counter()
            opt.zero_grad()
            loss = net.loss(net(xb), tb)
            loss.backward()
            opt.step()
            steps_time += time.perf_counter() - t0
            images += batch
        print(f"  PyTorch epoch {epoch + 1}: loss {loss.item():.5f}", file=sys.stderr)
    return images / steps_time


def gaussian_blur(x, sigma):
    r = max(1, int(math.ceil(3 * sigma)))
    k = torch.exp(-torch.arange(-r, r + 1, dtype=torch.float32) ** 2 / (2 * sigma * sigma))
    k = k / k.sum()
    x = nn.functional.pad(x, (r, r, r, r), mode="replicate")
    x = nn.functional.conv2d(x, k.view(1, 1, 1, -1))
    return nn.functional.conv2d(x, k.view(1, 1, -1, 1))


def psnr(a, b):
    mse = ((a - b) ** 2).flatten(1).mean(1)
    return (10 * torch.log10(1 / mse)).mean().item()


def ssim(a, b):
    """Wang et al.'s SSIM with an 11 x 11 Gaussian window of sigma 1.5 over the windows that
    fit (as clg_ssim), averaged per image and then over images."""
    k = torch.exp(-torch.arange(-5, 6, dtype=torch.float32) ** 2 / (2 * 1.5 ** 2))
    w = (k[:, None] * k[None, :]) / (k.sum() ** 2)
    w = w.view(1, 1, 11, 11)
    f = lambda z: nn.functional.conv2d(z, w)
    ma, mb = f(a), f(b)
    sa, sb, sab = f(a * a) - ma * ma, f(b * b) - mb * mb, f(a * b) - ma * mb
    c1, c2 = 0.01 ** 2, 0.03 ** 2
    m = ((2 * ma * mb + c1) * (2 * sab + c2)) / ((ma * ma + mb * mb + c1) * (sa + sb + c2))
    return m.flatten(1).mean(1).mean().item()


def onnx_agreement(build, x):
    """clgrad's trained model (saved and exported by clgrad_train) on x against ONNX Runtime
    running its ONNX export: the largest difference of their outputs."""
    try:
        import onnxruntime as ort
    except ImportError:
        return None
    np.save("/tmp/dense_quality_x.npy", x.numpy())
    layers = sum(1 for l in open(A.net) if l.split("#")[0].strip()) - 1
    subprocess.run([os.path.join(build, "clgrad-predict"), "--activations", f"l{layers}", "--out",
                    "/tmp/dense_quality_y.npy", "--npy", "/tmp/dense_quality_x.npy",
                    "/tmp/dense_quality.clgm"], check=True, capture_output=True)
    mine = np.load("/tmp/dense_quality_y.npy")
    s = ort.InferenceSession("/tmp/dense_quality.onnx", providers=["CPUExecutionProvider"])
    theirs = s.run(None, {"input": x.numpy()})[0]
    return float(np.abs(mine.reshape(theirs.shape) - theirs).max())


def clgrad_train(build, args):
    cmd = [os.path.join(build, "clgrad-train")] + args + ["--export-onnx", "/tmp/dense_quality.onnx"]
    print("  " + " ".join(cmd), file=sys.stderr)
    out = subprocess.run(cmd, capture_output=True, text=True)
    if out.returncode:
        sys.exit(f"dense_quality: clgrad-train failed:\n{out.stdout}\n{out.stderr}")
    return out.stdout


def denoise(a):
    torch.manual_seed(a.seed)
    text = open(a.net).read()
    x = torch.from_numpy(idx_images(f"{FASHION}/train-images-idx3-ubyte"))[:a.limit]
    xt = torch.from_numpy(idx_images(f"{FASHION}/t10k-images-idx3-ubyte"))
    net = Net(text)
    set_up_like_clgrad(net)

    def pairs(idx, g):  # fresh noise every epoch, as clgrad's store
        clean = x[idx]
        noise = torch.randn(clean.shape, generator=g) * a.sigma
        return clean + noise, noise

    ips = train(net, x, pairs, a.epochs, a.batch, a.lr, a.seed)
    if a.bn == "population":
        population_statistics(net, x, pairs, a.batch, a.seed)
    net.eval()
    g = torch.Generator().manual_seed(a.seed + 1)
    noisy = xt + torch.randn(xt.shape, generator=g) * a.sigma
    with torch.no_grad():
        den = torch.cat([noisy[i:i + 500] - net(noisy[i:i + 500]) for i in range(0, len(xt), 500)])
    blur = max((psnr(gaussian_blur(noisy, s), xt), s) for s in (0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 1.0, 1.2, 1.5))
    torch_r = {"psnr": psnr(den, xt), "ssim": ssim(den, xt), "images_per_s": ips}
    noisy_r = {"psnr": psnr(noisy, xt), "ssim": ssim(noisy, xt)}
    out = clgrad_train(a.build, ["--denoise", str(a.sigma), "--net", a.net, "--epochs",
                                 str(a.epochs), "--batch", str(a.batch), "--learn-rate", str(a.lr),
                                 "--limit-train", str(a.limit), "--save", "/tmp/dense_quality.clgm",
                                 "--seed", str(a.seed), "--batchnorm-statistics", a.bn, "--quiet"])
    m = re.search(r"Denoised PSNR ([0-9.]+) dB, SSIM ([0-9.]+); the noisy inputs: ([0-9.]+) dB", out)
    s = re.search(r"([0-9.]+) images/s", out)
    clg = {"psnr": float(m.group(1)), "ssim": float(m.group(2)), "noisy_psnr": float(m.group(3)),
           "images_per_s": float(s.group(1)), "onnx_runtime_max_diff": onnx_agreement(a.build, noisy[:8])}
    return {"task": "denoise", "sigma": a.sigma, "epochs": a.epochs, "batch": a.batch, "bn": a.bn,
            "train_images": len(x), "clgrad": clg, "pytorch": torch_r, "noisy": noisy_r,
            "gaussian_blur": {"psnr": blur[0], "sigma": blur[1]}}


def load_scenes(folder):
    from PIL import Image
    names = sorted(os.listdir(os.path.join(folder, "images")))
    img = np.stack([np.asarray(Image.open(os.path.join(folder, "images", n)).convert("L"))
                    for n in names]).astype(np.float32)[:, None] / 255
    lab = np.stack([np.asarray(Image.open(os.path.join(folder, "labels", n)))
                    for n in names]).astype(np.int64)
    return torch.from_numpy(img), torch.from_numpy(lab)


def segment(a):
    torch.manual_seed(a.seed)
    x, t = load_scenes(os.path.join(a.data, "train"))
    xt, tt = load_scenes(os.path.join(a.data, "test"))
    net = Net(open(a.net).read())
    set_up_like_clgrad(net)
    pairs = lambda idx, g: (x[idx], t[idx])
    ips = train(net, x, pairs, a.epochs, a.batch, a.lr, a.seed)
    if a.bn == "population":
        population_statistics(net, x, pairs, a.batch, a.seed)
    net.eval()
    with torch.no_grad():
        pred = torch.cat([net(xt[i:i + 100]).argmax(1) for i in range(0, len(xt), 100)])
    K = int(max(t.max(), tt.max())) + 1
    conf = torch.bincount(tt.flatten() * K + pred.flatten(), minlength=K * K).view(K, K).double()
    tp, row, col = conf.diag(), conf.sum(1), conf.sum(0)
    present = row > 0
    iou = tp[present] / (row + col - tp)[present]
    torch_r = {"mean_iou": iou.mean().item(), "global_accuracy": (tp.sum() / conf.sum()).item(),
               "images_per_s": ips}
    out = clgrad_train(a.build, ["--data", a.data, "--net", a.net, "--epochs", str(a.epochs),
                                 "--batch", str(a.batch), "--learn-rate", str(a.lr),
                                 "--save", "/tmp/dense_quality.clgm", "--seed", str(a.seed),
                                 "--batchnorm-statistics", a.bn, "--quiet"])
    m = re.search(r"Global accuracy ([0-9.]+)%, mean accuracy [0-9.]+%, mean IoU ([0-9.]+)", out)
    s = re.search(r"([0-9.]+) images/s", out)
    clg = {"mean_iou": float(m.group(2)), "global_accuracy": float(m.group(1)) / 100,
           "images_per_s": float(s.group(1)), "onnx_runtime_max_diff": onnx_agreement(a.build, xt[:8])}
    return {"task": "segment", "epochs": a.epochs, "batch": a.batch, "bn": a.bn, "train_images": len(x),
            "clgrad": clg, "pytorch": torch_r}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("task", choices=["denoise", "segment"])
    ap.add_argument("--build", default="build")
    ap.add_argument("--net")
    ap.add_argument("--data", default="/tmp/clgrad-seg")
    ap.add_argument("--epochs", type=int, default=5)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--sigma", type=float, default=0.1)
    ap.add_argument("--limit", type=int, default=60000)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--bn", choices=["population", "moving"], default="population",
                    help="batch norm's statistics at the end on both sides (clgrad-train's "
                         "--batchnorm-statistics; PyTorch's update_bn for population)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--seeds", type=int, default=1,
                    help="repeat with seeds seed, seed + 1, ...: each side's mean and range "
                         "(a short run's result depends on its initial weights and order)")
    a = ap.parse_args()
    global A
    A = a
    here = os.path.dirname(os.path.abspath(__file__))
    a.net = a.net or os.path.join(here, "..", "nets", "dncnn.net" if a.task == "denoise" else "unet.net")
    torch.set_num_threads(a.threads)
    runs = []
    first = a.seed
    for k in range(a.seeds):
        a.seed = first + k
        runs.append(denoise(a) if a.task == "denoise" else segment(a))
        print(json.dumps(runs[-1]), file=sys.stderr)
    r = dict(runs[0])
    if a.seeds > 1:  # each figure: its mean over the seeds, and the runs themselves
        for side in ("clgrad", "pytorch"):
            for key in runs[0][side]:
                vals = [run[side][key] for run in runs if run[side][key] is not None]
                r[side] = dict(r[side])
                r[side][key] = sum(vals) / len(vals) if vals else None
        r["seeds"] = list(range(first, first + a.seeds))
        r["runs"] = runs
    cap = getattr(getattr(torch.backends, "cpu", None), "get_cpu_capability", lambda: "?")()
    r["peer"] = f"PyTorch {torch.__version__} (CPU capability {cap}, {torch.get_num_threads()} threads)"
    print(json.dumps(r, indent=1))


if __name__ == "__main__":
    main()
