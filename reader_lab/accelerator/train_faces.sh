#!/usr/bin/env bash
# One call on the accelerator (the device tool's `run`), from the repository root:
#
#   run  command: bash reader_lab/accelerator/train_faces.sh
#        carry:   [".lab/pack", ".lab/faces/resume.pt", ".lab/faces/val.json"]   timeout_s: 600
#   (`python -m reader_lab device-call faces` checks and prints these)
#
# Trains the face classifier (python -m reader_lab train-faces: width 1.5, 64 px crops)
# for MINUTES (default 8) on the carried photo pack, resuming from .lab/faces/resume.pt
# when it was carried, and leaves in $OUT/faces what comes back: resume.pt,
# classifier_upright_dev.onnx, val.json (the history, one record per call), train.log,
# console.log (CONSOLE names another file for it). With METRIC > 0 the embedding is
# taught too, for few-shot (GLYPHS dice with made-up symbols, drawn at the start on
# every core; METRIC=0 GLYPHS=0: the face loss alone). Copy that folder to .lab/faces
# for the next call (and the network into a model folder to measure it:
# docs/reader.md); the next call carries only
# .lab/faces/resume.pt and .lab/faces/val.json. `python -m reader_lab device-call faces
# --try` checks what travels and tries this script on the CPU (LAB=<a folder holding a
# --limit pack> DEVICE=cpu MINUTES=0.3 ...).
set -euo pipefail
cd "$(dirname "$0")/../.."
: "${OUT:?OUT names the folder whose files come back}"
export PYTHONUNBUFFERED=1 PYTHONPATH=.
mkdir -p "$OUT/faces"
command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,memory.total --format=csv,noheader
python3 -c "import torch; print('torch', torch.__version__, 'cuda', torch.cuda.is_available())"
lab=${LAB:-.lab}
pack=${PACK:-$lab/pack}
resume=()
if [ -f "$lab/faces/resume.pt" ]; then resume=(--resume "$lab/faces/resume.pt"); fi
# BOXES=1: half the dice cut in a detector's boxes (PACK/boxes.json, python -m reader_lab
# pack-boxes); off by default: the CPU check of HISTORY round 64d did not pass its rule
boxes=()
if [ "${BOXES:-0}" = 1 ]; then
  boxes=(--boxes "$pack/boxes.json" --box-share "${BOX_SHARE:-0.5}")
fi
if [ -f "$lab/faces/val.json" ]; then cp "$lab/faces/val.json" "$OUT/faces/val.json"; fi
python3 -m reader_lab train-faces --pack "$pack" --out "$OUT/faces" "${resume[@]}" \
  --minutes "${MINUTES:-8}" --steps "${STEPS:-12000}" --batch "${BATCH:-512}" \
  --width "${WIDTH:-1.5}" --crop "${CROP:-64}" --device "${DEVICE:-auto}" \
  --rendered "${RENDERED:-2000}" --metric "${METRIC:-0.5}" --glyphs "${GLYPHS:-4000}" \
  --glyph-views "${GLYPH_VIEWS:-8}" "${boxes[@]}" 2>&1 | tee "${CONSOLE:-$OUT/faces/console.log}"
ls -la "$OUT/faces"
