#!/usr/bin/env bash
# Plays the store, router and triage suites with the real models that scripts/real-models.sh
# started, each turn's first call constrained to a tool call (--force-first-tool-call), once over
# each wire:
#   openai  passk's OpenAI-compatible client straight against each llama-server;
#   ollama  passk's native Ollama client against `passk serve-stub --upstream`, which keeps
#           Ollama's validation, shapes and timing fields and takes its tokens from llama-server.
# Then `passk report` on every run. tests/real_models.rs checks the runs against llama-server's
# own log.
#
#   scripts/real-play.sh          every task at k = 2
#   scripts/real-play.sh --ci     6 store conversations (3 multi-turn) and 6 triage tickets per
#                                 model and wire, k = 1; the router plays all its messages (its
#                                 suite takes no subset: --tasks picks conversations and tickets)
#
# Needs `scripts/real-models.sh start` first (its servers.tsv). Writes the runs under
# ${PASSK_REAL_PLAY:-$CACHE/play} and a plan.tsv there, one line per run, tab-separated:
# `wire model dir store router triage k log`. PASSK_PLAY_MODELS (comma-separated) plays only
# those models; PASSK_PLAY_STORE / PASSK_PLAY_TRIAGE override the subset's sizes. Exit codes: 0 done; 1 failed; 2 usage; 3 SKIPPED (no servers started).
set -euo pipefail
cd "$(dirname "$0")/.."

CACHE=${PASSK_CACHE:-$HOME/.cache/passk}
STATE=${PASSK_REAL_STATE:-$CACHE/state}
STATE_FILE=$STATE/servers.tsv
PLAY=${PASSK_REAL_PLAY:-$CACHE/play}
PASSK=${PASSK_BIN:-target/release/passk}
# Output caps: Gemma's base model rarely stops by itself (docs/decisions.md).
NUM_PREDICT=${PASSK_PLAY_NUM_PREDICT:-96}
CONTEXT=${PASSK_REAL_CTX:-8192}

say() { printf '%s\n' "$*" >&2; }
die() { say "real-play: $*"; exit 1; }
now() { date +%s.%N; }
since() { python3 -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):.1f}')" "$1" "$(now)"; }

ci=0
case ${1:-} in
  --ci) ci=1 ;;
  "") ;;
  *) say "usage: scripts/real-play.sh [--ci]"; exit 2 ;;
esac
if [[ ! -f $STATE_FILE ]]; then
  printf 'SKIPPED: no real models started (%s absent; run scripts/real-models.sh start)\n' "$STATE_FILE"
  exit 3
fi
[[ -x $PASSK ]] || die "no passk binary at $PASSK (cargo build --release, or set PASSK_BIN)"

mkdir -p "$PLAY"
rm -rf "${PLAY:?}"/*
if ((ci)); then
  K=1 n_store=${PASSK_PLAY_STORE:-6} n_triage=${PASSK_PLAY_TRIAGE:-6}
else
  K=2 n_store=${PASSK_PLAY_STORE:-0} n_triage=${PASSK_PLAY_TRIAGE:-0}
fi
# The subset (0: everything): store conversations half single-turn, half multi-turn; the first
# triage tickets. Prints the --tasks list (empty: all) and the three suites' sizes.
read -r tasks n_store n_router n_triage < <(python3 - "$n_store" "$n_triage" <<'PY'
import json, sys
n_store, n_triage = map(int, sys.argv[1:])
store = json.load(open("tasks/store/conversations.json"))
triage = json.load(open("tasks/triage/tickets.json"))
router = json.load(open("tasks/router/messages.json"))
single = [c["id"] for c in store if len(c["customer"]) == 1]
multi = [c["id"] for c in store if len(c["customer"]) > 1]
half = n_store // 2
s = single[: n_store - half] + multi[:half] if n_store else [c["id"] for c in store]
t = [x["id"] for x in (triage[:n_triage] if n_triage else triage)]
subset = ",".join(s + t) if (n_store or n_triage) else "-"
print(subset, len(s), len(router), len(t))
PY
)
[[ $tasks == - ]] && tasks=

stub_pid=
stop_stub() { [[ -n $stub_pid ]] && kill -TERM "$stub_pid" 2>/dev/null && wait "$stub_pid" 2>/dev/null; stub_pid=; }
trap stop_stub EXIT

# One passk serve-stub for every model, each model's replies from its llama-server.
upstreams=()
models=()
while IFS=$'\t' read -r name url pid log gguf; do
  if [[ -n ${PASSK_PLAY_MODELS:-} && ",$PASSK_PLAY_MODELS," != *",$name,"* ]]; then continue; fi
  upstreams+=(--upstream "$name=$url")
  models+=("$name	$url	$log")
done <"$STATE_FILE"
((${#models[@]})) || die "no model of $STATE_FILE is in PASSK_PLAY_MODELS=${PASSK_PLAY_MODELS:-}"
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"$PASSK" serve-stub --port "$port" "${upstreams[@]}" >"$PLAY/stub.log" 2>&1 &
stub_pid=$!
for ((i = 0; i < 100; i++)); do
  curl -fsS -m 2 "http://127.0.0.1:$port/api/version" >/dev/null 2>&1 && break
  kill -0 "$stub_pid" 2>/dev/null || die "passk serve-stub exited; see $PLAY/stub.log"
  sleep 0.1
done

# Each turn's first call is constrained to a tool call (docs/decisions.md): these models never
# call a tool unasked, and the point of playing them is that real arguments reach the tools.
flags=(--suite store,router,triage -k "$K" --num-ctx "$CONTEXT"
  --num-predict "$NUM_PREDICT" --timeout 900 --no-progress --force-first-tool-call)
[[ -n $tasks ]] && flags+=(--tasks "$tasks")
t_all=$(now)
for line in "${models[@]}"; do
  IFS=$'\t' read -r name url log <<<"$line"
  for wire in openai ollama; do
    dir=$PLAY/$wire-$name
    t0=$(now)
    if [[ $wire == openai ]]; then
      "$PASSK" run --api openai --host "$url" --models "$name" --out "$dir" "${flags[@]}" >/dev/null 2>"$dir.log" ||
        die "$wire $name failed; see $dir.log"
    else
      "$PASSK" run --host "127.0.0.1:$port" --models "$name" --out "$dir" "${flags[@]}" >/dev/null 2>"$dir.log" ||
        die "$wire $name failed; see $dir.log"
    fi
    "$PASSK" report "$dir" >/dev/null 2>>"$dir.log" || die "report of $dir failed; see $dir.log"
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$wire" "$name" "$dir" "$n_store" "$n_router" "$n_triage" "$K" "$log" >>"$PLAY/plan.tsv"
    say "$wire $name: $dir ($(since "$t0") s)"
  done
done
say "played ${#models[@]} model(s) over both wires in $(since "$t_all") s; plan: $PLAY/plan.tsv"
