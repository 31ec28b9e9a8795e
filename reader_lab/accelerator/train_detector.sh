#!/usr/bin/env bash
# One call on the accelerator (the device tool's `run`), from the repository root:
#
#   run  command: bash reader_lab/accelerator/train_detector.sh
#        carry:   [".lab/pack", ".lab/det/resume.pt", ".lab/det/val.json"]   timeout_s: 600
#   (`python -m reader_lab device-call detector` checks and prints these)
#
# Trains the big detector for MINUTES (default 8) on the carried photo pack (python -m
# reader_lab photo-pack .lab/pack), resuming from .lab/det/resume.pt when it was carried,
# and leaves in $OUT/det what comes back: resume.pt, detector.onnx, val.json (the history,
# one record per call), train.log, console.log (CONSOLE names another file for it). Copy
# that folder to .lab/det for the next call (and to a model folder to measure it:
# docs/reader.md); the next call carries only .lab/det/resume.pt and .lab/det/val.json.
# `python -m reader_lab device-call detector --try` checks what travels and tries this
# script on the CPU (LAB=<a folder holding a --limit pack> DEVICE=cpu MINUTES=0.3 ...).
set -euo pipefail
cd "$(dirname "$0")/../.."
: "${OUT:?OUT names the folder whose files come back}"
export PYTHONUNBUFFERED=1 PYTHONPATH=.
mkdir -p "$OUT/det"
command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,memory.total --format=csv,noheader
python3 -c "import torch; print('torch', torch.__version__, 'cuda', torch.cuda.is_available())"
lab=${LAB:-.lab}
resume=()
if [ -f "$lab/det/resume.pt" ]; then resume=(--resume "$lab/det/resume.pt"); fi
if [ -f "$lab/det/val.json" ]; then cp "$lab/det/val.json" "$OUT/det/val.json"; fi
python3 -m reader_lab train-detector --pack "$lab/pack" --out "$OUT/det" "${resume[@]}" \
  --minutes "${MINUTES:-8}" --steps "${STEPS:-60000}" --batch "${BATCH:-64}" \
  --size "${SIZE:-512}" --device "${DEVICE:-auto}" --rendered "${RENDERED:-3000}" 2>&1 | tee "${CONSOLE:-$OUT/det/console.log}"
ls -la "$OUT/det"
