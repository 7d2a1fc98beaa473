#!/usr/bin/env bash
# The researcher's workflow of seed 004's second run: does documenting every tool parameter change
# what a smaller model costs per successful task?
#
#   run A: bare tool docs (one parameter described)
#   run B: every parameter documented, router in front of the agent
#
# Both runs use the same frozen graders (passk refuses to run otherwise), the same models, tasks and
# seeds; then `passk compare` sets them side by side with paired bootstrap CIs. The script ends by
# printing the comparison's directory.
#
# Usage: scripts/schema-docs-experiment.sh [--stub] [--trials N] [--models A,B] [-- extra run flags]
#   --stub     run against the built-in stub server instead of Ollama (no GPU needed)
#   --trials   trials per task (default 5)
#   --models   models (default qwen2.5-coder:3b,qwen2.5-coder:7b; with --stub: text-calls,oracle)
set -euo pipefail
cd "$(dirname "$0")/.."

stub=0
trials=5
models=""
extra=()
while [ $# -gt 0 ]; do
  case "$1" in
    --stub) stub=1 ;;
    --trials) trials="$2"; shift ;;
    --models) models="$2"; shift ;;
    --) shift; extra=("$@"); break ;;
    *) echo "unknown argument: $1" >&2; exit 2 ;;
  esac
  shift
done

cargo build --release --quiet
passk=target/release/passk
"$passk" verify >&2

host_args=()
tag=ollama
if [ "$stub" = 1 ]; then
  tag=stub
  [ -n "$models" ] || models="text-calls,oracle"
  log=$(mktemp)
  "$passk" serve-stub --port 0 >"$log" 2>/dev/null &
  stub_pid=$!
  trap 'kill "$stub_pid" 2>/dev/null || true; rm -f "$log"' EXIT
  for _ in $(seq 50); do [ -s "$log" ] && break; sleep 0.1; done
  host_args=(--host "$(head -n 1 "$log")")
fi
[ -n "$models" ] || models="qwen2.5-coder:3b,qwen2.5-coder:7b"

common=(--models "$models" --trials "$trials" --no-progress "${host_args[@]}" "${extra[@]}")
run_a=$("$passk" run "${common[@]}" --tool-docs bare --run-id "schema-docs-$tag-bare-k$trials")
run_b=$("$passk" run "${common[@]}" --tool-docs documented --router-in-front --run-id "schema-docs-$tag-documented-k$trials")
"$passk" report "$run_a" >&2
"$passk" report "$run_b" >&2
out="$run_b/compare-$(basename "$run_a")"
"$passk" compare "$run_a" "$run_b" --out "$out" >&2
echo "$out"
