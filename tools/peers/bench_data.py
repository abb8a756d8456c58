#!/usr/bin/env python3
"""Photos decoded and augmented for training, clgrad beside a PyTorch DataLoader on the same
folder, machine and run (a benchmark, not a dependency of clgrad).

The folder: --count RGB JPEG photos (quality 90, shorter side 256, longer 256 to 384 px, as
ImageNet's are usually stored for training), in 10 class folders, made once in --work: smooth
random fields, textures, shapes and sensor noise, so that they cost a JPEG decoder what a
photo does. Both sides read every photo once per pass, in a shuffled order, in batches of 64,
as training does: a random resized crop to 224 x 224 (area 0.08-1, aspect 3/4-4/3) and a
random mirror, to planar floats in [0, 1]:

- clgrad: `clgrad-bench data --folder DIR --crop 224 --json` (the image folder store under
  an augmentation, read by the batch reader with 0, 1 and 2 worker threads; JPEG through
  libjpeg-turbo);
- PyTorch: torchvision's ImageFolder (Pillow) with RandomResizedCrop(224),
  RandomHorizontalFlip and ToTensor, a DataLoader with num_workers 0, 1 and 2.

Rounds alternate between the two (the machine's noise hits both); each figure is the median
over rounds, in images/s, with clgrad's ratio.

    python3 tools/peers/bench_data.py --build build [--work DIR] [--count 1280] [--rounds 3]
"""
import argparse, json, os, platform, statistics, subprocess, sys, tempfile, time

try:
    import numpy as np
    import PIL
    import torch
    import torchvision
    from PIL import Image, ImageDraw
    from torchvision import datasets, transforms
except ImportError as e:
    print(f"skipped: {e.name} is not installed (pip install torch torchvision pillow)")
    sys.exit(77)

WORKERS = [0, 1, 2]
BATCH = 64


def cpu_name():
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    return platform.processor()


def field(rng, h, w, cells):
    """A smooth random field in [0, 1]: cells x cells noise, resized bicubically."""
    small = Image.fromarray((rng.random((cells, cells)) * 255).astype(np.uint8))
    return np.asarray(small.resize((w, h), Image.BICUBIC), np.float32) / 255


def make_photos(root, count):
    rng = np.random.default_rng(7)
    longer = [256, 288, 320, 341, 384]
    for i in range(count):
        k = i % 10
        d = os.path.join(root, f"class{k}")
        os.makedirs(d, exist_ok=True)
        lo = int(longer[rng.integers(len(longer))])
        h, w = (256, lo) if rng.random() < 0.7 else (lo, 256)
        img = np.stack([0.6 * field(rng, h, w, 4) + 0.4 * field(rng, h, w, 24) for _ in range(3)], -1)
        img = Image.fromarray((np.clip(img, 0, 1) * 255).astype(np.uint8))
        draw = ImageDraw.Draw(img)
        for _ in range(int(rng.integers(3, 9))):
            x0, y0 = int(rng.integers(0, w)), int(rng.integers(0, h))
            x1, y1 = x0 + int(rng.integers(10, 120)), y0 + int(rng.integers(10, 120))
            fill = tuple(int(v) for v in rng.integers(0, 256, 3))
            (draw.ellipse if rng.random() < 0.5 else draw.rectangle)((x0, y0, x1, y1), fill=fill)
        noisy = np.asarray(img, np.float32) + rng.normal(0, 6, (h, w, 3))
        Image.fromarray(np.clip(noisy, 0, 255).astype(np.uint8)).save(
            os.path.join(d, f"{i:05d}.jpg"), quality=90)


def torch_rate(folder, workers, passes=1):
    t = transforms.Compose([transforms.RandomResizedCrop(224), transforms.RandomHorizontalFlip(),
                            transforms.ToTensor()])
    ds = datasets.ImageFolder(folder, transform=t)
    n = len(ds) // BATCH * BATCH
    dl = torch.utils.data.DataLoader(torch.utils.data.Subset(ds, range(n)), batch_size=BATCH,
                                     shuffle=True, num_workers=workers,
                                     persistent_workers=False)
    t0 = time.perf_counter()
    seen = 0
    for _ in range(passes):
        for x, _ in dl:
            seen += x.shape[0]
    return seen / (time.perf_counter() - t0)


def clgrad_rates(bench, folder):
    out = subprocess.run([bench, "data", "--folder", folder, "--crop", "224", "--json",
                          "--runs", "1"], check=True, capture_output=True, text=True).stdout
    rates = {}
    for line in out.splitlines():
        if line.startswith("{"):
            r = json.loads(line)
            if r.get("bench") == "data":
                rates[r["workers"]] = r["images_per_s"]
    return rates


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build")
    ap.add_argument("--work", default=None)
    ap.add_argument("--count", type=int, default=1280)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    work = args.work or os.path.join(tempfile.gettempdir(), "clgrad-bench-photos")
    folder = os.path.join(work, f"photos-{args.count}")
    if not os.path.isdir(folder):
        print(f"making {args.count} photos in {folder} ...", flush=True)
        make_photos(folder, args.count)
    bench = os.path.join(args.build, "clgrad-bench")
    torch.set_num_threads(1)  # the DataLoader's own threads are its workers
    print(f"CPU {cpu_name()}, {os.cpu_count()} threads; PyTorch {torch.__version__}, "
          f"torchvision {torchvision.__version__}, Pillow {PIL.__version__}; {args.count} photos "
          f"(JPEG, shorter side 256), RandomResizedCrop 224 + mirror, batch {BATCH}")
    ours = {w: [] for w in WORKERS}
    theirs = {w: [] for w in WORKERS}
    for r in range(args.rounds):
        for w, v in clgrad_rates(bench, folder).items():
            if w in ours:
                ours[w].append(v)
        for w in WORKERS:
            theirs[w].append(torch_rate(folder, w))
        print(f"round {r + 1}: clgrad " + ", ".join(f"{ours[w][-1]:.0f}" for w in WORKERS) +
              "; PyTorch " + ", ".join(f"{theirs[w][-1]:.0f}" for w in WORKERS), flush=True)
    print(f"{'reader threads':<34}{'clgrad':>10}{'PyTorch':>10}{'ratio':>8}")
    for w in WORKERS:
        a, b = statistics.median(ours[w]), statistics.median(theirs[w])
        label = f"{w} (caller's thread)" if w == 0 else f"{w} worker{'s' if w > 1 else ''}"
        print(f"{label:<34}{a:>10.0f}{b:>10.0f}{a / b:>7.2f}x")


if __name__ == "__main__":
    main()
