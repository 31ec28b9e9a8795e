"""Train the big detector (``big_detector.BigDetector``) on a photo pack: on the
accelerator (CUDA, bf16, every augmentation on the GPU), or slowly on the CPU to try it.

    python -m reader_lab photo-pack .lab/pack
    python -m reader_lab train-detector --pack .lab/pack --out .lab/det --minutes 8

Each call trains for at most ``--minutes`` of wall time, then writes into OUT:
``resume.pt`` (the weights' moving average, half precision, and the step reached: about
6 MB, small enough to come back from the accelerator and travel to it again),
``detector.onnx`` (that average, the companion's detector format: ``image`` -> ``hm``,
``wh``), ``val.json`` (recall and precision on the pack's validation sets, appended per
call) and ``train.log``. ``--resume FILE`` continues from a ``resume.pt``: the learning
rate follows one cosine schedule over ``--steps`` across calls, with a short warm-up after
each resume (the optimiser's moments are not kept: they would not travel).

Augmentation, all on the device: a scale drawn from ``--scales`` (die size against the
pack's 512 px photos), a random crop of ``--size`` px, flips and transposes (a die seen
from above has no up), brightness, contrast, channel order, grey, inversion, noise and
blur. ``--rendered N`` also draws N scenes of table clutter (``reader_lab.clutter``: coins,
buttons, tokens, cards, stone; a quarter with no die) on every core at the start and
trains on them beside the photos. Targets as the committed detector's
(``train_reader._det_sample``): a Gaussian peak per labelled die at stride 4, its log box
size at the peak.

Validation decodes the heat map as the companion does (3x3 peaks) on the validation
photos at the pack's size and counts a labelled die found when a peak above the
threshold falls inside its box; a peak inside no box is a false box (table-mixed does not
box every die, so its precision is a floor).
"""

from __future__ import annotations

import argparse
import copy
import json
import math
import os
import time
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F

from companion.errors import CompanionError
from reader_lab.big_detector import BigDetector, count_macs, parameters
from reader_lab.clutter import clutter_scene
from reader_lab.every_core import map_on_every_core
from reader_lab.photo_pack import PackError, load_pack
from reader_lab.train_reader import _focal

PAD = 114 / 255
STRIDE = 4
TRAIN_WEIGHTS = {"webcam-white": 1.0, "table-train": 2.0, "trays-train": 2.0}
VAL_SETS = ("table-val", "trays-val")
THRESHOLDS = (0.3, 0.5, 0.7)
WARMUP = 300  # steps, at the start and after each resume
EMA_DECAY = 0.999
RESUME_VERSION = 1


class TrainError(CompanionError, ValueError):
    """A training call that cannot start (a bad option, a foreign resume file)."""


class DeviceData:
    """The pack's photos on the device as one uint8 tensor (each letterboxed into the
    pack's side), their boxes padded to the most dice a photo holds."""

    def __init__(self, imgs: list[np.ndarray], boxes: list[np.ndarray], device: torch.device,
                 side: int) -> None:
        n = len(imgs)
        most = max(1, max(len(b) for b in boxes))
        canvas = np.full((n, side, side, 3), 114, np.uint8)
        self.wh = torch.zeros(n, 2, device=device)
        box_t = np.zeros((n, most, 4), np.float32)
        valid = np.zeros((n, most), bool)
        for i, (img, b) in enumerate(zip(imgs, boxes, strict=True)):
            h, w = img.shape[:2]
            canvas[i, :h, :w] = img[:side, :side]
            self.wh[i, 0], self.wh[i, 1] = float(w), float(h)
            box_t[i, :len(b)] = b
            valid[i, :len(b)] = True
        self.images = torch.from_numpy(canvas).to(device).permute(0, 3, 1, 2).contiguous()
        self.boxes = torch.from_numpy(box_t).to(device)
        self.valid = torch.from_numpy(valid).to(device)
        self.side = side
        self.device = device

    def __len__(self) -> int:
        return self.images.shape[0]


def _augment(data: DeviceData, idx: torch.Tensor, size: int, scales: tuple[float, float],
             gen: torch.Generator, photometric: bool = True
             ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """A batch of crops (n x 3 x size x size, 0-1) and their boxes (n x D x 4) and
    validity, drawn for the photos ``idx`` (``photometric``: colours changed too)."""
    dev = data.device
    n = idx.shape[0]

    def uniform(lo: float, hi: float, shape=(n,)) -> torch.Tensor:
        return torch.rand(shape, generator=gen, device=dev) * (hi - lo) + lo

    w, h = data.wh[idx, 0], data.wh[idx, 1]
    s = torch.exp(uniform(math.log(scales[0]), math.log(scales[1])))
    sw, sh = w * s, h * s
    # the crop's offset in the scaled photo: anywhere it overlaps the photo
    ox = torch.minimum(sw - size, torch.zeros_like(sw)) + uniform(0, 1) * (sw - size).abs()
    oy = torch.minimum(sh - size, torch.zeros_like(sh)) + uniform(0, 1) * (sh - size).abs()
    # output pixel centre u -> source x = (u + 0.5 + ox) / s; normalised for grid_sample
    u = torch.arange(size, device=dev, dtype=torch.float32) + 0.5
    gx = ((u[None, :] + ox[:, None]) / s[:, None]) * 2 / data.side - 1
    gy = ((u[None, :] + oy[:, None]) / s[:, None]) * 2 / data.side - 1
    grid = torch.stack([gx[:, None, :].expand(n, size, size),
                        gy[:, :, None].expand(n, size, size)], -1)
    src = data.images[idx].float() / 255 - PAD
    x = F.grid_sample(src, grid, mode="bilinear", padding_mode="zeros",
                      align_corners=False) + PAD
    boxes = data.boxes[idx] * s[:, None, None]
    boxes = boxes - torch.stack([ox, oy, ox, oy], 1)[:, None, :]
    valid = data.valid[idx].clone()
    # flips and transposes, per photo
    flip_x = uniform(0, 1) < 0.5
    flip_y = uniform(0, 1) < 0.5
    trans = uniform(0, 1) < 0.5
    x = torch.where(flip_x[:, None, None, None], x.flip(-1), x)
    x = torch.where(flip_y[:, None, None, None], x.flip(-2), x)
    x = torch.where(trans[:, None, None, None], x.transpose(-1, -2), x)
    x0, y0, x1, y1 = boxes.unbind(-1)
    fx, fy = flip_x[:, None], flip_y[:, None]
    x0, x1 = torch.where(fx, size - x1, x0), torch.where(fx, size - x0, x1)
    y0, y1 = torch.where(fy, size - y1, y0), torch.where(fy, size - y0, y1)
    t = trans[:, None]
    x0, y0, x1, y1 = (torch.where(t, y0, x0), torch.where(t, x0, y0),
                      torch.where(t, y1, x1), torch.where(t, x1, y1))
    boxes = torch.stack([x0, y0, x1, y1], -1)
    return (_photometric(x, gen) if photometric else x), boxes, valid


def _photometric(x: torch.Tensor, gen: torch.Generator) -> torch.Tensor:
    n, dev = x.shape[0], x.device

    def chance(p: float) -> torch.Tensor:
        return (torch.rand(n, generator=gen, device=dev) < p)[:, None, None, None]

    def uniform(lo: float, hi: float) -> torch.Tensor:
        return (torch.rand(n, generator=gen, device=dev) * (hi - lo) + lo)[:, None, None, None]

    # a channel order per image, drawn at once (a randperm per image is a launch each)
    perm = torch.rand(n, 3, generator=gen, device=dev).argsort(1)
    shuffled = torch.gather(x, 1, perm[:, :, None, None].expand_as(x))
    x = torch.where(chance(0.3), shuffled, x)
    x = torch.where(chance(0.15), x.mean(1, keepdim=True).expand_as(x), x)
    mean = x.mean((1, 2, 3), keepdim=True)
    x = (x - mean) * uniform(0.6, 1.4) + mean * uniform(0.6, 1.4) + uniform(-0.15, 0.15)
    x = torch.where(chance(0.05), 1 - x, x)
    blurred = F.avg_pool2d(x, 3, 1, 1, count_include_pad=False)
    x = torch.where(chance(0.2), blurred, x)
    noise = torch.randn(x.shape, generator=gen, device=dev) * uniform(0.004, 0.03)
    x = torch.where(chance(0.3), x + noise, x)
    return x.clamp(0, 1)


def targets(boxes: torch.Tensor, valid: torch.Tensor, size: int
            ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Heat map (n x 1 x o x o), log sizes (n x 2 x o x o) and their mask at stride 4."""
    n, dev, out = boxes.shape[0], boxes.device, size // STRIDE
    x0, y0, x1, y1 = boxes.unbind(-1)
    cx, cy = (x0 + x1) / 2 / STRIDE - 0.5, (y0 + y1) / 2 / STRIDE - 0.5
    bw, bh = (x1 - x0) / STRIDE, (y1 - y0) / STRIDE
    ok = valid & (cx >= 0) & (cx < out) & (cy >= 0) & (cy < out) & (bw >= 0.5) & (bh >= 0.5)
    sigma = torch.clamp(torch.minimum(bw, bh) / 6, min=0.6)
    grid = torch.arange(out, device=dev, dtype=torch.float32)
    hm = torch.zeros(n, out, out, device=dev)
    for d in range(boxes.shape[1]):  # one die slot at a time: n x o x o at most
        g = torch.exp(-((grid[None, None, :] - cx[:, d, None, None]) ** 2
                        + (grid[None, :, None] - cy[:, d, None, None]) ** 2)
                      / (2 * sigma[:, d, None, None] ** 2))
        hm = torch.maximum(hm, g * ok[:, d, None, None])
    b, d = ok.nonzero(as_tuple=True)
    ix = cx[b, d].round().long().clamp(0, out - 1)
    iy = cy[b, d].round().long().clamp(0, out - 1)
    hm[b, iy, ix] = 1.0
    wh = torch.zeros(n, 2, out, out, device=dev)
    mask = torch.zeros(n, 1, out, out, device=dev)
    wh[b, 0, iy, ix] = torch.log(bw[b, d])
    wh[b, 1, iy, ix] = torch.log(bh[b, d])
    mask[b, 0, iy, ix] = 1.0
    return hm[:, None], wh, mask


def loss_of(model: torch.nn.Module, x: torch.Tensor, hm: torch.Tensor, wh: torch.Tensor,
            mask: torch.Tensor, autocast: bool) -> tuple[torch.Tensor, float, float]:
    with torch.autocast(x.device.type, dtype=torch.bfloat16, enabled=autocast):
        hm_p, wh_p = model(x)
    hm_p, wh_p = hm_p.float(), wh_p.float()
    loss_hm = _focal(hm_p, hm)
    loss_wh = F.l1_loss(wh_p * mask, wh * mask, reduction="sum") / mask.sum().clamp(min=1)
    return loss_hm + 0.5 * loss_wh, loss_hm.item(), loss_wh.item()


def learning_rate(step: int, steps: int, since_start: int, peak: float) -> float:
    """One cosine over ``steps``, a linear warm-up over the first WARMUP steps of a call."""
    cosine = 0.5 * (1 + math.cos(math.pi * min(step, steps) / steps))
    warm = min(1.0, (since_start + 1) / WARMUP)
    return peak * max(0.02, cosine) * warm


@torch.no_grad()
def evaluate(model: torch.nn.Module, imgs: list[np.ndarray], boxes: list[np.ndarray],
             device: torch.device, thresholds: tuple[float, ...] = THRESHOLDS) -> dict:
    """Recall and precision of the heat map's peaks on whole photos (padded to a
    multiple of 32), as ``{threshold: {"recall", "precision", "dice", "found", "false"}}``."""
    model.eval()
    counts = {t: [0, 0, 0] for t in thresholds}  # found, false, dice
    for img, b in zip(imgs, boxes, strict=True):
        h, w = img.shape[:2]
        ph, pw = -(-h // 32) * 32, -(-w // 32) * 32
        canvas = np.full((ph, pw, 3), 114, np.uint8)
        canvas[:h, :w] = img
        x = torch.from_numpy(canvas).to(device).permute(2, 0, 1)[None].float() / 255
        hm, _ = model(x)
        heat = hm[0, 0]
        peaks = (heat == F.max_pool2d(heat[None, None], 3, 1, 1)[0, 0])
        for t in thresholds:
            ys, xs = torch.nonzero(peaks & (heat >= t), as_tuple=True)
            px = ((xs.float() + 0.5) * STRIDE).cpu().numpy()
            py = ((ys.float() + 0.5) * STRIDE).cpu().numpy()
            inside = ((px[None, :] >= b[:, 0:1]) & (px[None, :] <= b[:, 2:3])
                      & (py[None, :] >= b[:, 1:2]) & (py[None, :] <= b[:, 3:4]))
            counts[t][0] += int(inside.any(1).sum())
            counts[t][1] += int((~inside.any(0)).sum()) if len(b) else len(px)
            counts[t][2] += len(b)
    model.train()
    out = {}
    for t, (found, false, dice) in counts.items():
        kept = found + false
        out[f"{t:.1f}"] = {"recall": round(found / max(1, dice), 4),
                           "precision": round(found / max(1, kept), 4),
                           "dice": dice, "found": found, "false": false}
    return out



class OnnxDetector:
    """An ONNX detector (the companion's format) called as ``evaluate`` calls a network:
    ``model(x)`` -> (hm, wh) tensors, on one thread of ONNX Runtime."""

    def __init__(self, path: str | Path) -> None:
        import onnxruntime as ort

        opts = ort.SessionOptions()
        opts.intra_op_num_threads = opts.inter_op_num_threads = 1
        try:
            self.session = ort.InferenceSession(str(path), opts,
                                                providers=["CPUExecutionProvider"])
        except Exception as exc:  # noqa: BLE001 - ONNX Runtime's own kinds: one line
            raise TrainError(f"{path}: cannot load the detector "
                             f"({str(exc).strip().splitlines()[0]})") from None

    def __call__(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        hm, wh = self.session.run(["hm", "wh"], {"image": x.cpu().numpy()})
        return torch.from_numpy(hm), torch.from_numpy(wh)

    def eval(self) -> OnnxDetector:
        return self

    def train(self, mode: bool = True) -> OnnxDetector:
        return self


def baseline(pack: str | Path, detector: str | Path) -> dict:
    """``evaluate``'s figures for an ONNX detector on the pack's validation photos: the
    bar a trained big detector's ``val.json`` is read against."""
    imgs, labels = load_pack(pack, VAL_SETS)
    if not imgs:
        raise TrainError(f"{pack}: no photos of the validation sets {', '.join(VAL_SETS)}")
    return evaluate(OnnxDetector(detector), imgs, [lab.boxes for lab in labels],
                    torch.device("cpu"))


def _scene(seed: int) -> tuple[np.ndarray, np.ndarray]:
    return clutter_scene(seed, 512)


def rendered_scenes(n: int, seed: int, workers: int | None = None
                    ) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """``n`` clutter scenes (``clutter.clutter_scene``, 512 px), drawn on every core."""
    if n <= 0:
        return [], []
    seeds = [seed * 1_000_003 + 7_919 * k for k in range(n)]
    scenes = map_on_every_core(_scene, seeds, workers=workers)
    return [img for img, _ in scenes], [boxes for _, boxes in scenes]


def _half(state: dict) -> dict:
    return {k: (v.half() if v.is_floating_point() and "running" not in k else v).cpu()
            for k, v in state.items()}


def load_resume(path: Path, model: torch.nn.Module) -> dict:
    try:
        blob = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as exc:  # noqa: BLE001 - any unreadable file: one line
        raise TrainError(f"{path}: not a resume file ({str(exc).splitlines()[0]})") from None
    if not isinstance(blob, dict) or blob.get("version") != RESUME_VERSION:
        raise TrainError(f"{path}: not a version {RESUME_VERSION} resume file")
    state = {k: v.float() if v.is_floating_point() else v for k, v in blob["weights"].items()}
    try:
        model.load_state_dict(state)
    except RuntimeError:
        raise TrainError(f"{path}: its weights are for another architecture") from None
    return blob


def save_resume(path: Path, ema: torch.nn.Module, step: int, steps: int, seed: int) -> None:
    tmp = path.with_suffix(".tmp")
    torch.save({"version": RESUME_VERSION, "step": step, "steps": steps, "seed": seed,
                "weights": _half(ema.state_dict())}, tmp)
    os.replace(tmp, path)


def export(model: torch.nn.Module, path: Path) -> None:
    model = model.float().eval().cpu()
    torch.onnx.export(model, torch.zeros(1, 3, 416, 416), str(path), input_names=["image"],
                      output_names=["hm", "wh"],
                      dynamic_axes={"image": {2: "h", 3: "w"}, "hm": {2: "oh", 3: "ow"},
                                    "wh": {2: "oh", 3: "ow"}},
                      opset_version=17, do_constant_folding=True, dynamo=False)



def pick_device(device: str) -> torch.device:
    """``auto`` (CUDA when there is one), ``cuda`` or ``cpu``; on CUDA, TF32 and cuDNN's
    own search for the fastest convolutions are on."""
    dev = torch.device(("cuda" if torch.cuda.is_available() else "cpu")
                       if device == "auto" else device)
    if dev.type == "cuda":
        torch.backends.cudnn.benchmark = True
        torch.backends.cuda.matmul.allow_tf32 = True
        torch.backends.cudnn.allow_tf32 = True
    return dev


def device_name(dev: torch.device) -> str:
    """What trained: the GPU's own name (for the model card's device time), or the CPU."""
    if dev.type == "cuda":
        return torch.cuda.get_device_name(dev)
    return f"cpu, {torch.get_num_threads()} threads"



def training_parts(model: torch.nn.Module, dev: torch.device, lr: float, seed: int,
                   start: int):
    """A call's model (channels last on CUDA), the weights' average (a copy of it), the
    optimiser and the random generator (seeded by ``seed`` and the step it starts at)."""
    ema = copy.deepcopy(model).eval()
    if dev.type == "cuda":
        model = model.to(memory_format=torch.channels_last)
    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=5e-4)
    gen = torch.Generator(device=dev)
    gen.manual_seed(seed * 1_000_003 + start)
    return model, ema, opt, gen



def optimise(model: torch.nn.Module, ema: torch.nn.Module, opt, loss: torch.Tensor,
             step: int, steps: int, start: int, peak: float) -> None:
    """One step at the schedule's rate (``learning_rate``), gradients clipped at norm
    10, then the weights' average (``average_into``)."""
    for group in opt.param_groups:
        group["lr"] = learning_rate(step, steps, step - start, peak)
    opt.zero_grad(set_to_none=True)
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 10.0)
    opt.step()
    average_into(ema, model, step - start)


@torch.no_grad()
def average_into(ema: torch.nn.Module, model: torch.nn.Module, since_start: int) -> None:
    """One step of the weights' moving average (``EMA_DECAY``, faster over a call's first
    steps); batch norm's counters are copied."""
    decay = min(EMA_DECAY, (1 + since_start) / (10 + since_start))
    for e, m in zip(ema.state_dict().values(), model.state_dict().values(), strict=True):
        if e.is_floating_point():
            e.lerp_(m.detach(), 1 - decay)
        else:
            e.copy_(m)


def append_history(path: Path, record: dict) -> None:
    """``val.json``: one record per call, appended."""
    history = json.loads(path.read_text()) if path.exists() else []
    history.append(record)
    path.write_text(json.dumps(history, indent=1))


def logger(out: Path):
    """A log function printing a line and appending it to OUT/train.log, and the file
    to close."""
    logfile = (out / "train.log").open("a")

    def log(line: str) -> None:
        print(line, flush=True)
        logfile.write(line + "\n")
        logfile.flush()

    return log, logfile


def train(pack: str | Path, out: str | Path, *, minutes: float, steps: int, batch: int,
          size: int, lr: float, scales: tuple[float, float], seed: int,
          resume: str | Path | None = None, device: str = "auto",
          weights: dict[str, float] | None = None, rendered: int = 0,
          rendered_weight: float = 1.0, log=print) -> dict:
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    weights = dict(weights or TRAIN_WEIGHTS)
    dev = pick_device(device)
    cuda = dev.type == "cuda"
    t_start = time.time()
    imgs, labels = load_pack(pack)
    side = max(max(i.shape[:2]) for i in imgs)
    train_i = [k for k, lab in enumerate(labels) if lab.set in weights]
    val_i = [k for k, lab in enumerate(labels) if lab.set in VAL_SETS]
    if not train_i:
        raise TrainError(f"{pack}: no photos of the training sets {', '.join(weights)}")
    t_scenes = time.time()
    scenes, scene_boxes = rendered_scenes(rendered, seed)
    if scenes:
        weights["rendered"] = rendered_weight
        side = max(side, 512)
        log(f"{len(scenes)} clutter scenes drawn in {time.time() - t_scenes:.0f}s")
    sets = [labels[k].set for k in train_i] + ["rendered"] * len(scenes)
    data = DeviceData([imgs[k] for k in train_i] + scenes,
                      [labels[k].boxes for k in train_i] + scene_boxes, dev, side)
    share = torch.tensor([weights[name] for name in sets], dtype=torch.float64)
    for name in weights:  # each set's weight is shared by its photos
        members = [j for j, got in enumerate(sets) if got == name]
        if members:
            share[members] /= len(members)
    share = (share / share.sum()).to(dev)
    model = BigDetector().to(dev)
    start = 0
    if resume is not None:
        blob = load_resume(Path(resume), model)
        start = int(blob["step"])
        log(f"resumed at step {start} from {resume}")
    model, ema, opt, gen = training_parts(model, dev, lr, seed, start)
    log(f"{parameters(model):,} parameters, {count_macs(ema, 640) / 1e9:.2f} GMAC at 640x640; "
        f"{len(train_i)} training photos, {len(scenes)} scenes, {len(val_i)} validation "
        f"photos on {dev}; "
        f"loaded in {time.time() - t_start:.0f}s")
    deadline = t_start + minutes * 60
    step, t0, losses = start, time.time(), []
    while step < steps and time.time() < deadline:
        idx = torch.multinomial(share, batch, replacement=True, generator=gen)
        x, boxes, valid = _augment(data, idx, size, scales, gen)
        hm, wh, mask = targets(boxes, valid, size)
        if cuda:
            x = x.contiguous(memory_format=torch.channels_last)
        loss, l_hm, l_wh = loss_of(model, x, hm, wh, mask, cuda)
        optimise(model, ema, opt, loss, step, steps, start, lr)
        losses.append(l_hm + 0.5 * l_wh)
        step += 1
        if step % 200 == 0 or step == start + 1:
            took = max(1e-6, time.time() - t0)  # lines 200 steps apart give the rate between
            log(f"step {step}/{steps} loss {np.mean(losses[-200:]):.3f} (hm {l_hm:.3f} "
                f"wh {l_wh:.3f}) lr {opt.param_groups[0]['lr']:.2e} "
                f"{(step - start) / took:.1f} steps/s, {took:.1f} s")
    trained = time.time() - t0
    save_resume(out / "resume.pt", ema, step, steps, seed)
    val = evaluate(ema, [imgs[k] for k in val_i], [labels[k].boxes for k in val_i], dev)
    cpu_ema = BigDetector()
    cpu_ema.load_state_dict({k: v.cpu() for k, v in ema.state_dict().items()})
    export(cpu_ema, out / "detector.onnx")
    record = {"steps_done": step, "steps": steps, "this_call_steps": step - start,
              "train_seconds": round(trained, 1), "device": str(dev),
              "device_name": device_name(dev),
              "loss_last_200": round(float(np.mean(losses[-200:])), 4) if losses else None,
              "val": val, "batch": batch, "size": size, "lr": lr, "scales": list(scales),
              "rendered": rendered, "rendered_weight": rendered_weight}
    append_history(out / "val.json", record)
    best = val[f"{THRESHOLDS[0]:.1f}"]
    log(f"val: step {step}, recall {best['recall']:.1%} precision {best['precision']:.1%} "
        f"at {THRESHOLDS[0]} ({best['dice']} dice); " + "; ".join(
            f"{t}: {v['recall']:.1%}/{v['precision']:.1%}" for t, v in val.items()))
    return record


def _scales(text: str) -> tuple[float, float]:
    lo, _, hi = text.partition(",")
    try:
        a, b = float(lo), float(hi)
    except ValueError:
        raise argparse.ArgumentTypeError(f"scales are two numbers LO,HI, not {text!r}") from None
    if not 0.1 <= a < b <= 5:
        raise argparse.ArgumentTypeError(f"scales must satisfy 0.1 <= LO < HI <= 5, not {text!r}")
    return a, b


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m reader_lab train-detector",
                                 description=__doc__.split("\n\n")[0])
    ap.add_argument("--pack", required=True, help="a photo pack (python -m reader_lab photo-pack)")
    ap.add_argument("--out", help="where the call's files go")
    ap.add_argument("--baseline", metavar="ONNX", help="print a detector's figures on the "
                    "pack's validation photos, and train nothing")
    ap.add_argument("--resume", default=None, help="a resume.pt to continue from")
    ap.add_argument("--minutes", type=float, default=8.0, help="wall time for training")
    ap.add_argument("--steps", type=int, default=60000, help="the whole schedule's steps")
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--size", type=int, default=512, help="training crop side (px, /32)")
    ap.add_argument("--lr", type=float, default=2e-3)
    ap.add_argument("--scales", type=_scales, default=(0.5, 2.0))
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--device", default="auto", help="auto, cuda or cpu")
    ap.add_argument("--rendered", type=int, default=0, help="clutter scenes to draw at "
                    "the start (reader_lab.clutter; on every core) and train on too")
    ap.add_argument("--rendered-weight", type=float, default=1.0,
                    help="their share of the draws, against webcam 1, table 2, trays 2")
    args = ap.parse_args(argv)
    if args.size % 32 or not 64 <= args.size <= 1024:
        ap.error("--size must be a multiple of 32 in 64-1024")
    if args.batch < 1 or args.steps < 1 or args.minutes <= 0:
        ap.error("--batch, --steps and --minutes must be positive")
    if not 0 <= args.rendered <= 20000 or args.rendered_weight < 0:
        ap.error("--rendered must be 0-20000 and --rendered-weight at least 0")
    if not args.out and not args.baseline:
        ap.error("--out is needed to train (or --baseline ONNX to measure a detector)")
    try:
        if args.baseline:
            for t, v in baseline(args.pack, args.baseline).items():
                print(f"threshold {t}: recall {v['recall']:.1%} ({v['found']} of {v['dice']} "
                      f"dice), precision {v['precision']:.1%} ({v['false']} peaks on no "
                      "labelled die)")
            return 0
        out = Path(args.out)
        out.mkdir(parents=True, exist_ok=True)
        log, logfile = logger(out)
        with logfile:
            train(args.pack, out, minutes=args.minutes, steps=args.steps, batch=args.batch,
                  size=args.size, lr=args.lr, scales=args.scales, seed=args.seed,
                  resume=args.resume, device=args.device, rendered=args.rendered,
                  rendered_weight=args.rendered_weight, log=log)
    except (TrainError, PackError) as exc:
        print(f"train-detector: {exc}")
        return 2
    return 0
