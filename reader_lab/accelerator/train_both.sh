#!/usr/bin/env bash
# One call on the accelerator that trains the big detector and the face classifier at
# once, on the one GPU, for a session that may be the only one lent (the device tool's
# `run`, from the repository root):
#
#   run  command: bash reader_lab/accelerator/train_both.sh
#        carry:   [".lab/pack", ".lab/det/resume.pt", ".lab/det/val.json",
#                  ".lab/faces/resume.pt", ".lab/faces/val.json"]   timeout_s: 600
#   (`python -m reader_lab device-call both` checks and prints these)
#
# train_detector.sh and train_faces.sh run side by side: the detector for DET_MINUTES
# (default 7.5), the faces for FACES_MINUTES (default 7) from FACES_DELAY seconds later
# (default 60), so that the detector's first steps, alone on the GPU, give its rate
# without the faces beside it. `python -m reader_lab device-call both --rates DIR` reads
# both rates from what came back. Other settings: DET_BATCH, DET_STEPS, DET_SIZE,
# DET_RENDERED; FACES_BATCH, FACES_STEPS, FACES_RENDERED; the faces' WIDTH, CROP, METRIC,
# GLYPHS, GLYPH_VIEWS, BOXES and BOX_SHARE as they are. Each network's lines come
# prefixed with "det" or "faces"; one that fails prints the end of its console last.
# What comes back fits the device's 8 files: det/ and faces/ each hold resume.pt, the
# network, val.json and train.log (no console.log); the GPU's load, read every 10 s,
# ends det/train.log as "gpu:" lines.
set -euo pipefail
cd "$(dirname "$0")/../.."
: "${OUT:?OUT names the folder whose files come back}"
mkdir -p "$OUT/det" "$OUT/faces"
logs=$(mktemp -d)
gpu=
if command -v nvidia-smi >/dev/null; then
  nvidia-smi --query-gpu=timestamp,utilization.gpu,utilization.memory,memory.used \
    --format=csv,noheader -l 10 -f "$logs/gpu.csv" &
  gpu=$!
fi
unset MINUTES STEPS BATCH RENDERED SIZE
# half the cores each for what runs on the CPU: two trainers each using every core's
# thread would spin against each other
half=$(( $(nproc) / 2 ))
export OMP_NUM_THREADS="${OMP_NUM_THREADS:-$(( half > 0 ? half : 1 ))}"
(set -o pipefail; MINUTES="${DET_MINUTES:-7.5}" STEPS="${DET_STEPS:-60000}" \
  BATCH="${DET_BATCH:-64}" SIZE="${DET_SIZE:-512}" RENDERED="${DET_RENDERED:-3000}" \
  CONSOLE="$logs/det.log" bash reader_lab/accelerator/train_detector.sh 2>&1 \
  | sed -u 's/^/det    /') &
det=$!
(set -o pipefail; sleep "${FACES_DELAY:-60}"; MINUTES="${FACES_MINUTES:-7}" STEPS="${FACES_STEPS:-12000}" \
  BATCH="${FACES_BATCH:-512}" RENDERED="${FACES_RENDERED:-2000}" \
  CONSOLE="$logs/faces.log" bash reader_lab/accelerator/train_faces.sh 2>&1 \
  | sed -u 's/^/faces  /') &
faces=$!
det_rc=0 faces_rc=0
wait "$det" || det_rc=$?
wait "$faces" || faces_rc=$?
if [ -n "$gpu" ]; then
  kill "$gpu" 2>/dev/null || true
  sed 's/^/gpu: /' "$logs/gpu.csv" >> "$OUT/det/train.log" || true
fi
for name in det faces; do
  rc_name=${name}_rc
  if [ "${!rc_name}" != 0 ]; then
    echo "== $name failed (exit ${!rc_name}); the end of its console:"
    tail -n 40 "$logs/$name.log" 2>/dev/null || echo "(it printed nothing)"
  fi
done
echo "det exit $det_rc, faces exit $faces_rc"
[ "$det_rc" = 0 ] && [ "$faces_rc" = 0 ]
