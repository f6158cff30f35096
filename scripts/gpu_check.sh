#!/usr/bin/env bash
# One check for a lent NVIDIA GPU: the gpu-marked tests on the real device (not the
# emulator), then the GPU benchmarks; writes a JSON report. Finishes in under 8 minutes
# (each step has its own time limit).
#
#   scripts/gpu_check.sh [--out DIR] [--dry-run]
#
# --dry-run prints the steps and writes the report skeleton without running anything
# (it checks the script and its report writer on a machine without a GPU).
# Exit status: 0 when the tests passed (benchmarks never fail the check), 1 otherwise.
set -u -o pipefail

cd "$(dirname "$0")/.."
OUT="${OUT:-${TMPDIR:-/tmp}/funcgrad-gpu-check}"
DRY=0
while [ $# -gt 0 ]; do
  case "$1" in
    --dry-run) DRY=1 ;;
    --out) OUT="$2"; shift ;;
    -h|--help) sed -n '2,10p' "$0"; exit 0 ;;
    *) echo "unknown argument: $1" >&2; exit 2 ;;
  esac
  shift
done
mkdir -p "$OUT"
PY="${PYTHON:-python}"
if [ -x .venv/bin/python ] && [ -z "${PYTHON:-}" ]; then PY=.venv/bin/python; fi

TESTS=(tests/backends/test_cuda_codegen.py tests/backends/test_devices.py
       tests/backends/test_emulated_gpu.py)
TEST_CMD=("$PY" -m pytest -q -p no:cacheprovider -m gpu --fake-cupy=never
          --junitxml="$OUT/gpu_tests.xml" "${TESTS[@]}")
BENCH_CMD=("$PY" benchmarks/bench_gpu.py --sizes "2**24,2**26,2**28" --repeat 10
           --copy-gib 2 --json "$OUT/bench_gpu.json")
TEST_LIMIT=270
BENCH_LIMIT=200

run_step() {  # name limit command...
  local name="$1" limit="$2"; shift 2
  if [ "$DRY" = 1 ]; then
    echo "[dry-run] $name (limit ${limit}s): $*"
    echo "skipped (dry run)" > "$OUT/$name.log"
    echo "dry-run" > "$OUT/$name.rc"
    echo 0 > "$OUT/$name.seconds"
    return 0
  fi
  echo "== $name (limit ${limit}s)"
  local start end rc
  start=$(date +%s)
  timeout --kill-after=10 "$limit" "$@" > "$OUT/$name.log" 2>&1
  rc=$?
  end=$(date +%s)
  echo "$rc" > "$OUT/$name.rc"
  echo $((end - start)) > "$OUT/$name.seconds"
  tail -n 5 "$OUT/$name.log"
  return 0
}

if [ "$DRY" = 0 ]; then
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader \
    > "$OUT/device.txt" 2>&1 || echo "nvidia-smi not available" > "$OUT/device.txt"
else
  echo "dry run: no device queried" > "$OUT/device.txt"
fi
run_step gpu_tests "$TEST_LIMIT" "${TEST_CMD[@]}"
run_step bench_gpu "$BENCH_LIMIT" "${BENCH_CMD[@]}"

"$PY" - "$OUT" "$DRY" <<'EOF'
import json, os, sys, time
import xml.etree.ElementTree as ET

out, dry = sys.argv[1], sys.argv[2] == "1"


def read(name, default=""):
    try:
        with open(os.path.join(out, name)) as f:
            return f.read().strip()
    except OSError:
        return default


tests = {"passed": 0, "failed": 0, "errors": 0, "skipped": 0, "failures": []}
xml_path = os.path.join(out, "gpu_tests.xml")
if os.path.exists(xml_path) and not dry:
    for case in ET.parse(xml_path).getroot().iter("testcase"):
        name = f"{case.get('classname')}::{case.get('name')}"
        kinds = {child.tag for child in case}
        if "failure" in kinds or "error" in kinds:
            tests["failed" if "failure" in kinds else "errors"] += 1
            tests["failures"].append(name)
        elif "skipped" in kinds:
            tests["skipped"] += 1
        else:
            tests["passed"] += 1
report = {
    "when": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    "dry_run": dry,
    "device": read("device.txt"),
    "gpu_tests": {"exit_status": read("gpu_tests.rc"), "seconds": read("gpu_tests.seconds"),
                  **tests, "log_tail": read("gpu_tests.log")[-4000:]},
    "bench_gpu": {"exit_status": read("bench_gpu.rc"), "seconds": read("bench_gpu.seconds"),
                  "output": read("bench_gpu.log")[-8000:],
                  "report": json.loads(read("bench_gpu.json", "null") or "null")},
}
with open(os.path.join(out, "gpu_check.json"), "w") as f:
    json.dump(report, f, indent=2)
print(f"report: {os.path.join(out, 'gpu_check.json')}")
EOF

if [ "$DRY" = 1 ]; then exit 0; fi
[ "$(cat "$OUT/gpu_tests.rc")" = 0 ]
