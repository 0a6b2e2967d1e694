#!/usr/bin/env bash
# Creates, under a LocalController host root, every host path the examples use: dataset files with a
# few samples, placeholder model files and output directories. The quickstart calls it for each
# edge node's host root; run it by hand before applying the examples to a real cluster (with ROOT=/
# on the edge nodes). Idempotent: existing files are left unchanged, so samples you append survive.
#
#   examples/prepare-host-root.sh ROOT
set -euo pipefail

if [[ $# -ne 1 || -z "$1" ]]; then
  echo "usage: $0 ROOT   (e.g. /tmp/nereid-quickstart/edge-0/rootfs)" >&2
  exit 2
fi
root="${1%/}"

# write_once PATH CONTENT: creates PATH with CONTENT unless it exists.
write_once() {
  local path="$root$1"
  mkdir -p "$(dirname "$path")"
  if [[ ! -e "$path" ]]; then
    printf '%s' "$2" > "$path"
    echo "created $path"
  fi
}

lines() {  # lines PREFIX N: N sample lines "PREFIX-i.jpg label".
  local i out=""
  for ((i = 1; i <= $2; i++)); do out+="$1/$i.jpg $((i % 2))"$'\n'; done
  printf '%s' "$out"
}

# Datasets (examples/dataset.yaml): 10 samples each.
write_once /data/helmet_detection/train_data/train_data.txt "$(lines images/helmet 10)"$'\n'
write_once /data/surface_defect/edge-0/train_data.txt "$(lines images/defect0 10)"$'\n'
write_once /data/surface_defect/edge-1/train_data.txt "$(lines images/defect1 10)"$'\n'
atcii=$'Season,Age,Sex,Air temperature (C),Relative humidity (%),Thermal sensation\n'
for ((i = 1; i <= 10; i++)); do atcii+="Summer,$((20 + i)),$((i % 2)),2$((i % 10)).5,5$i,$((i % 3 - 1))"$'\n'; done
write_once /data/atcii/trainData.csv "$atcii"
write_once /data/atcii/testData.csv "$atcii"

# Models (examples/model.yaml). The little model's content is fixed: model.yaml pins its sha256.
write_once /data/models/joint_inference/little/yolov3_resnet18.pb $'nereid example model: helmet-detection-little-model\n'
write_once /data/models/joint_inference/big/yolov3_darknet.pb $'nereid example model: helmet-detection-big-model\n'
write_once /data/models/surface_defect/model.pb $'nereid example model: surface-defect-detection-model\n'
write_once /data/models/helmet_detection/initial/model.pb $'nereid example model: helmet-detection-initial-model\n'
write_once /data/models/helmet_detection/deploy/model.pb $'nereid example model: helmet-detection-deploy-model\n'
write_once /data/ai_models/m3l/m3l.pth $'nereid example model: feature-extraction-m3l\n'
write_once /data/ai_models/object_detection/pedestrians/yolox.pth $'nereid example model: pedestrian-detection-model\n'

# Output and working directories of the jobs.
for dir in /data/output/helmet_detection /data/output/atcii /data/joint_inference/output \
  /data/incremental_learning/video /data/incremental_learning/he /data/lifelong_learning/unseen_task; do
  mkdir -p "$root$dir"
done
