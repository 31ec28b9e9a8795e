"""`python -m reader_lab train [--out DIR] [--seed N]`: train the learned die reader.

Needs the optional training extra (``pip install -e ".[train]"``: torch CPU, onnx) and
the shared photo sets (../shared/datasets/dice-photos/). Writes detector.onnx,
classifier.onnx and reader.json (thresholds chosen on the validation splits).

A network cut short goes on from its last checkpoint (DIR/<network>.resume.pt, every
500 steps) when the same command runs again; other options are refused, naming them.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from companion.vision.learned_spec import CROP, CROP_SPAN
from reader_lab.train_spec import (
    INIT_LR,
    LOW_RES_SHARE,
    PART_NETWORKS,
    TRAIN_PARTS,
    feature_side,
    grid_tiles,
)

PARTS = TRAIN_PARTS
PROG = "reader_lab train"  # how its one-line errors begin


def bad_args(args: argparse.Namespace) -> str | None:
    """One line naming what is wrong with the options, before hours of training."""
    for option, value in (("--det-steps", args.det_steps), ("--cls-steps", args.cls_steps),
                          ("--upright-steps", args.upright_steps),
                          ("--threads", args.threads)):
        if value < 1:
            return f"{option} {value}: needs at least 1"
    if not 0.25 <= args.cls_width <= 4:
        return f"--cls-width {args.cls_width:g}: needs a multiplier from 0.25 to 4"
    if args.rendered < 0:
        return f"--rendered {args.rendered}: needs 0 or more scenes"
    lo, hi = args.det_scale
    if not 0 < lo <= hi:
        return f"--det-scale {lo:g} {hi:g}: needs 0 < LO <= HI"
    if args.small_weight < 1:
        return f"--small-weight {args.small_weight}: needs at least 1"
    if any(not 64 <= px <= 2048 or px % 32 for px in args.tune_sizes):
        return (f"--tune-sizes {' '.join(map(str, args.tune_sizes))}: each a multiple of 32 "
                "from 64 to 2048")
    if any(v not in (1, 2, 4, 8) for v in args.tune_views):
        return f"--tune-views {' '.join(map(str, args.tune_views))}: each 1, 2, 4 or 8"
    if not 0 <= args.part_negatives <= 1:
        return f"--part-negatives {args.part_negatives:g}: needs a share from 0 to 1"
    if not 0 <= args.unreadable_share < 1:
        return f"--unreadable-share {args.unreadable_share:g}: needs a share from 0 to below 1"
    if not 0 <= args.dye_share <= 1:
        return f"--dye-share {args.dye_share:g}: needs a share from 0 to 1"
    if not 1 <= args.det_stretch <= 4:
        return f"--det-stretch {args.det_stretch:g}: needs a ratio from 1 to 4"
    if args.hard_weight < 1:
        return f"--hard-weight {args.hard_weight}: needs at least 1"
    if not 0 <= args.ema < 1:
        return f"--ema {args.ema:g}: needs a decay from 0 (off) to below 1"
    if not 16 <= args.cls_crop <= 256:
        return f"--cls-crop {args.cls_crop}: needs a side from 16 to 256 px"
    if not 0.8 <= args.cls_span <= 4:
        return f"--cls-span {args.cls_span:g}: needs from 0.8 to 4 die sides"
    if not grid_tiles(args.cls_crop, args.cls_grid):
        return (f"--cls-grid {args.cls_grid}: needs a whole divisor of the "
                f"{feature_side(args.cls_crop)} cells across a {args.cls_crop} px crop's "
                "last feature map (e.g. 1)")
    if args.wide_box_jitter and not args.die_boxes:
        return "--wide-box-jitter: spreads crops on --die-boxes DIR's boxes; give that too"
    for option, folder in (("--hard-dice", args.hard_dice), ("--soft-dice", args.soft_dice),
                           ("--sure-phantoms", args.sure_phantoms)):
        if folder and not (Path(folder) / "reader.json").is_file():
            return f"{option} {folder}: no reader.json there"
    if not 0 < args.soft_share <= 1:
        return f"--soft-share {args.soft_share:g}: needs a share above 0, at most 1"
    if not 0 <= args.low_res_share <= 1:
        return f"--low-res-share {args.low_res_share:g}: needs a share from 0 to 1"
    if not 0 < args.hard_share <= 1:
        return f"--hard-share {args.hard_share:g}: needs a share above 0, at most 1"
    for option, folder in (("--false-peaks", args.false_peaks),
                           ("--die-boxes", args.die_boxes),
                           ("--hard-photos", args.hard_photos)):
        if folder and not (Path(folder) / "detector.onnx").is_file():
            return f"{option} {folder}: no detector.onnx there"
    if args.init_lr is not None and not args.init:
        return "--init-lr: sets a fine-tune's rate; give --init DIR too"
    if args.init_lr is not None and not 0 < args.init_lr <= 0.01:
        return f"--init-lr {args.init_lr:g}: needs a rate above 0, at most 0.01"
    if args.cache and Path(args.cache).exists() and not Path(args.cache).is_dir():
        return f"--cache {args.cache}: not a folder"
    if args.rated_negatives:
        from reader_lab.rated_boxes import RatedNegativesError, read_rated_negatives

        try:
            read_rated_negatives(args.rated_negatives)
        except RatedNegativesError as exc:
            return str(exc)
    if args.init:
        for part in args.part or PARTS:
            name = PART_NETWORKS.get(part)
            d = Path(args.init)
            if name and not (d / f"{name}.pt").is_file() and not (d / f"{name}.onnx").is_file():
                return f"--init {d}: neither {name}.pt nor {name}.onnx there"
    from reader_lab.dice_photos import SplitMismatch, resolve_split

    try:
        resolve_split(args.out, args.val_tenths, args.webcam_val or None,
                      args.tray_small_val or None)
    except SplitMismatch as exc:
        return str(exc)
    return None


def run(args: argparse.Namespace) -> int:
    problem = bad_args(args)
    if problem:
        print(f"{PROG}: {problem}", file=sys.stderr)
        return 2
    try:
        from reader_lab.train_reader import CheckpointUnusable, InitUnusable, train
    except ImportError as exc:
        print(f"{PROG}: needs the [train] extra (pip install -e '.[train]'): {exc}",
              file=sys.stderr)
        return 2
    from companion.vision.learned import ModelMissing
    from reader_lab import dice_photos

    if not dice_photos.available(args.photos):
        print(f"{PROG}: photo sets not found under {dice_photos.photo_root(args.photos)}",
              file=sys.stderr)
        return 2
    try:
        train(args.out, seed=args.seed, root=args.photos, det_steps=args.det_steps,
              cls_steps=args.cls_steps, rendered=args.rendered, threads=args.threads,
              parts=tuple(args.part or PARTS), log=lambda m: print(m, flush=True),
              init=args.init, cls_width=args.cls_width, upright_steps=args.upright_steps,
              upright_render=args.upright_render, det_scales=tuple(args.det_scale),
              small_weight=args.small_weight, val_tenths=args.val_tenths,
              webcam_val=args.webcam_val or None,
              tray_small_val=args.tray_small_val or None,
              render_cube=args.render_cube, false_peaks=args.false_peaks,
              part_negatives=args.part_negatives, die_boxes=args.die_boxes,
              tune_sizes=tuple(args.tune_sizes), tune_views=tuple(args.tune_views),
              det_stretch=args.det_stretch, det_colour=args.det_colour,
              dye_share=args.dye_share, rated_negatives=args.rated_negatives,
              hard_photos=args.hard_photos,
              hard_share=args.hard_share, hard_dice=args.hard_dice,
              hard_weight=args.hard_weight, camera_aug=args.camera_aug,
              ema=args.ema, area_crops=args.area_crops, cls_crop=args.cls_crop,
              cls_span=args.cls_span, cls_grid=args.cls_grid,
              wide_box_jitter=args.wide_box_jitter, soft_dice=args.soft_dice,
              soft_share=args.soft_share, low_res_share=args.low_res_share,
              cache_dir=args.cache, unreadable_share=args.unreadable_share,
              sure_phantoms=args.sure_phantoms,
              init_lr=INIT_LR if args.init_lr is None else args.init_lr)
    except (InitUnusable, CheckpointUnusable, ModelMissing) as exc:  # also ModelUnreadable
        print(f"{PROG}: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:  # Ctrl-C: a person stopping it, not a fault
        print(f"{PROG}: stopped; the same command goes on from the last checkpoint "
              f"(every 500 steps) in {args.out}", file=sys.stderr)
        return 130
    return 0


def register(subparsers) -> None:
    p = subparsers.add_parser("train", help="train the learned die reader (needs [train] extra)",
                              description=__doc__,
                              formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out", default="companion/data/models", help="model folder to write")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--photos", default=None, help="photo sets root (default: ../shared/...)")
    p.add_argument("--det-steps", type=int, default=7000)
    p.add_argument("--cls-steps", type=int, default=16000)
    p.add_argument("--part", action="append", choices=PARTS,
                   help="train only this part (repeatable; default: det, cls, cls-upright, "
                        "tune in turn; the first three may run as processes at once, then "
                        "tune)")
    p.add_argument("--cls-width", type=float, default=1.0,
                   help="classifier channel width multiplier (1: the committed model's)")
    p.add_argument("--upright-steps", type=int, default=14000,
                   help="steps of the upright classifier (part cls-upright: its crops keep "
                        "the photo's up, so an oblique view's top face stays above its sides)")
    p.add_argument("--upright-render", action="store_true",
                   help="the upright classifier's rendered dice show their sides below "
                        "the top face (as a camera looking down and forward sees them)")
    p.add_argument("--render-cube", action="store_true",
                   help="the rendered dice are cubes seen from 20-90 degrees above the "
                        "table, a low camera seeing a side larger than the top (the upright "
                        "classifier's camera stands below the scene)")
    p.add_argument("--small-weight", type=int, default=1, metavar="K",
                   help="classifiers: a die under 32 px gives K times as many training crops "
                        "(default 1)")
    p.add_argument("--false-peaks", default=None, metavar="DIR",
                   help="classifiers: the boxes DIR's detector finds on the fully labelled "
                        "train photos where no die is labelled are taught as 'not a die'")
    p.add_argument("--rated-negatives", default=None, metavar="DIR",
                   help="classifiers: the boxes on the train photos that a box audit's two "
                        "raters (DIR: key.csv and two rater-*.csv, python -m reader_lab "
                        "box-audit) "
                        "both called not a die are taught as 'not a die' (issue 9v)")
    p.add_argument("--sure-phantoms", default=None, metavar="DIR",
                   help="classifiers: the faint boxes (detector 0.1 up to its threshold) "
                        "DIR's reader reads at least 0.8 sure where no die is labelled, on "
                        "table-train, are taught as 'not a die' (issue 9y: a board's round "
                        "number tokens read as ones)")
    p.add_argument("--cache", default=None, metavar="DIR",
                   help="keep the rendered scenes and what --false-peaks, --die-boxes, "
                        "--hard-dice, --soft-dice and --hard-photos mine in DIR, and read "
                        "them back when the same inputs come again (issue 9w); the networks "
                        "come out the same")
    p.add_argument("--part-negatives", type=float, default=0.0, metavar="SHARE",
                   help="classifiers: this share of the dice also gives a crop of part of "
                        "the die (a side, a corner) as 'not a die' (default 0)")
    p.add_argument("--die-boxes", default=None, metavar="DIR",
                   help="classifiers: half the crops of each train die are centred on a box "
                        "DIR's detector gives it (as the reader crops it at run time)")
    p.add_argument("--det-stretch", type=float, default=1.0, metavar="RATIO",
                   help="detector: each photo is also squeezed to another aspect ratio, "
                        "width to height scaled by 1/RATIO..RATIO (default 1: not at all)")
    p.add_argument("--det-colour", action="store_true",
                   help="detector: half its crops are hue-turned (saturation scaled) and a "
                        "tenth inverted, as the classifiers' are: die and table colours "
                        "nobody photographed (issue 9r)")
    p.add_argument("--dye-share", type=float, default=0.0, metavar="SHARE",
                   help="every network: this share of the real photos drawn (of sets whose "
                        "boxes hold whole dice) have their dice repainted other die and "
                        "pip colours, a dark die with light pips as often as a light one "
                        "(default 0: as before; issue 9s)")
    p.add_argument("--unreadable-share", type=float, default=0.0, metavar="SHARE",
                   help="classifiers: this share of the die crops are shrunk or blurred "
                        "until no pip shows and learnt as a die whose face is unknown, so "
                        "the reader says 'unknown' on dice nobody could read (default 0: "
                        "as before; issue 9x)")
    p.add_argument("--hard-photos", default=None, metavar="DIR",
                   help="detector: --hard-share of its real photos are drawn in proportion "
                        "to the labelled dice DIR's detector misses on them (score < 0.5)")
    p.add_argument("--hard-share", type=float, default=0.3, metavar="SHARE",
                   help="with --hard-photos: the share of real draws so chosen (default 0.3)")
    p.add_argument("--hard-dice", default=None, metavar="DIR",
                   help="classifiers: the train dice DIR's reader reads wrong, or right but "
                        "below 0.9, in their labelled boxes give --hard-weight times as many "
                        "crops")
    p.add_argument("--hard-weight", type=int, default=3, metavar="K",
                   help="with --hard-dice: how many times as many crops (default 3)")
    p.add_argument("--camera-aug", action="store_true",
                   help="classifiers: crops are also squeezed or stretched top to bottom, "
                        "dotted with salt-and-pepper noise and JPEG-encoded, as other "
                        "cameras would show the dice")
    p.add_argument("--low-res-share", type=float, default=LOW_RES_SHARE, metavar="SHARE",
                   help="classifiers: the share of crops shrunk to 10 px .. three quarters "
                        "of their side and scaled back, as a die seen small looks (default "
                        f"{LOW_RES_SHARE:g}, as every network before issue 9g)")
    p.add_argument("--ema", type=float, default=0.0, metavar="DECAY",
                   help="classifiers: export the running average of the weights (and batch "
                        "norm statistics) taken each step with this decay, e.g. 0.999 (0: "
                        "the last weights, as before)")
    p.add_argument("--area-crops", action="store_true",
                   help="classifiers: crops of large dice are shrunk with an area filter "
                        "(each crop pixel the mean of the photo pixels it covers) instead "
                        "of sampled, and the network file says so: the reader then cuts "
                        "its crops the same way")
    p.add_argument("--wide-box-jitter", action="store_true",
                   help="classifiers, with --die-boxes: a crop on a detector box spans "
                        "0.75-1.25x its side and moves by 5%% of it (instead of 0.9-1.1x "
                        "and 3%%), as far as a detector's boxes miss dice it never saw")
    p.add_argument("--soft-dice", default=None, metavar="DIR",
                   help="classifiers: DIR's reader reads every labelled train die once, and "
                        "each die's crops learn toward its reading as well as the label "
                        "(--soft-share of the weight), so dice it finds unclear are not "
                        "pushed to full confidence")
    p.add_argument("--soft-share", type=float, default=0.5, metavar="SHARE",
                   help="with --soft-dice: how much of a die's label is DIR's reading "
                        "(default 0.5)")
    p.add_argument("--cls-grid", type=int, default=1, metavar="G",
                   help="classifiers: the last feature map is averaged over G x G parts "
                        "kept side by side instead of whole (default 1), so the network "
                        "knows where in the crop it saw what (a side below the top face); "
                        "G divides the crop's side / 16, rounded up")
    p.add_argument("--cls-crop", type=int, default=CROP, metavar="PX",
                   help=f"classifiers: the crop's side in pixels (default {CROP}); a "
                        "larger one keeps more of a large die's detail and costs more")
    p.add_argument("--cls-span", type=float, default=CROP_SPAN, metavar="SIDES",
                   help=f"classifiers: the crop's side in die sides (default {CROP_SPAN}); "
                        "a larger one shows more around the die; the network file says so")
    p.add_argument("--rendered", type=int, default=3000, help="rendered scenes to train on")
    p.add_argument("--init", default=None, metavar="DIR",
                   help="fine-tune each part from DIR's model at a lower rate: its .pt file, "
                        "else its ONNX file (batch norm folded in, so kept frozen)")
    p.add_argument("--init-lr", type=float, default=None, metavar="LR",
                   help=f"with --init: the fine-tune's peak learning rate (one cycle; default "
                        f"{INIT_LR:g}; issue 9w)")
    p.add_argument("--det-scale", type=float, nargs=2, default=[0.7, 1.5],
                   metavar=("LO", "HI"),
                   help="the detector sees each photo at its input size times a factor "
                        "drawn from LO..HI (default 0.7 1.5)")
    p.add_argument("--val-tenths", type=int, choices=(1, 2), default=None,
                   help="tenths of the source photos held back for validation (1: the "
                        "split up to issue 8e; 2: about twice the dice to choose "
                        "thresholds on). Default: the one the --out folder's networks "
                        "were trained with (split.json, or reader.json val_sets), else 1; "
                        "another is refused")
    p.add_argument("--webcam-val", action="store_true",
                   help="also hold back webcam-white-d6's Valid/ frames for validation "
                        "(webcam-val; train on its Train/ frames). Default: as the --out "
                        "folder's networks were trained, else not")
    p.add_argument("--tray-small-val", action="store_true",
                   help="also move half of the train part's tray source photos whose dice "
                        "are small (median under 32 px) to validation (trays-val-small), "
                        "so thresholds are chosen on small dice too; with --val-tenths 1. "
                        "Default: as the --out folder's networks were trained, else not")
    p.add_argument("--tune-sizes", type=int, nargs="+", default=[416, 512, 640],
                   metavar="PX", help="tune: the detector input sides it may choose from "
                                      "(default 416 512 640; fewer for a speed budget)")
    p.add_argument("--tune-views", type=int, nargs="+", default=[1, 4], metavar="N",
                   help="tune: the test-time views of the turned classifier it may choose "
                        "from (default 1 4)")
    p.add_argument("--threads", type=int, default=1,
                   help="torch threads (default 1: on a busy machine more threads wait on "
                        "each other)")
    p.set_defaults(func=run)
