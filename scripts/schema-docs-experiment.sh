#!/usr/bin/env bash
# The researcher's workflow of seed 004's second run, as a design that separates its factors: does
# documenting every tool parameter change what a smaller model achieves, and is that the docs' doing
# or the router's?
#
#   one run, every cell played: tool docs (bare, documented) x router in front (off, on) x the two
#   models, same frozen graders, tasks and seeds
#
# The report gives each model's documentation effect (documented - bare), router effect (on - off)
# and their docs x router interaction, and how much more each factor helps one model than the
# other (model x docs, model x router), all with paired task-bootstrap CIs (docs/reference/metrics.md,
# "Factorial effects"). The script ends by printing the run's directory.
#
# Usage: scripts/schema-docs-experiment.sh [--stub [--stub-config FILE]] [--trials N] [--models A,B]
#                                           [-- extra run flags]
#   --stub         run against the built-in stub server instead of Ollama (no GPU needed); its
#                  docs-reactive model makes mistakes more often under bare tool docs than
#                  documented ones (docs/stub.md), so the documentation effect is not 0
#   --stub-config  a stub configuration (TOML, docs/stub.md) for `passk serve-stub --config`,
#                  e.g. a docs_reactive model with rates of its own
#   --trials       trials per task and cell (default 5)
#   --models       models (default qwen2.5-coder:3b,qwen2.5-coder:7b; with --stub:
#                  docs-reactive,oracle)
set -euo pipefail
cd "$(dirname "$0")/.."

stub=0
stub_config=""
trials=5
models=""
extra=()
while [ $# -gt 0 ]; do
  case "$1" in
    --stub) stub=1 ;;
    --stub-config) stub_config="$2"; shift ;;
    --trials) trials="$2"; shift ;;
    --models) models="$2"; shift ;;
    --) shift; extra=("$@"); break ;;
    *) echo "unknown argument: $1" >&2; exit 2 ;;
  esac
  shift
done

# Cargo's own progress shows on stderr: a cold release build takes minutes (docs/benchmarks.md, "Build times").
echo "building passk (release)..." >&2
cargo build --release
passk="${CARGO_TARGET_DIR:-target}/release/passk"
"$passk" verify >&2

host_args=()
tag=ollama
if [ "$stub" = 1 ]; then
  tag=stub
  [ -n "$models" ] || models="docs-reactive,oracle"
  config_args=()
  [ -z "$stub_config" ] || config_args=(--config "$stub_config")
  log=$(mktemp)
  "$passk" serve-stub --port 0 "${config_args[@]}" >"$log" 2>/dev/null &
  stub_pid=$!
  trap 'kill "$stub_pid" 2>/dev/null || true; rm -f "$log"' EXIT
  for _ in $(seq 50); do [ -s "$log" ] && break; sleep 0.1; done
  host_args=(--host "$(head -n 1 "$log")")
fi
[ -n "$models" ] || models="qwen2.5-coder:3b,qwen2.5-coder:7b"

# `--report` writes the report and leaves its table on stderr once.
run=$("$passk" run --models "$models" --trials "$trials" --no-progress "${host_args[@]}" \
  --tool-docs bare,documented --router-in-front off,on --report \
  --run-id "schema-docs-$tag-factorial-k$trials" "${extra[@]}")
awk '/^## /{on = /^## Factorial effects/} on' "$run/report/report.md" >&2
echo "$run"
