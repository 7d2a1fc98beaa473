#!/usr/bin/env bash
# Drives the official Ollama clients, PyPI `ollama` and npm `ollama`, against `passk serve-stub` on
# 127.0.0.1: every request a real Ollama v0.33 accepts must be accepted, every request it refuses
# must come back as the client's error with Ollama's status and text (docs/stub.md, "Fidelity to Ollama").
#
#   scripts/official-clients.sh            # the client versions docs/stub.md names
#   PY_OLLAMA=0.6.3 JS_OLLAMA=0.6.4 scripts/official-clients.sh
#
# The clients are installed into a temporary directory (a venv and a node_modules), never into the
# project or the system. When a registry cannot be reached (or python3 / npm is missing) that
# client is skipped, and the script says so; it fails only on a mismatch.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
py_version="${PY_OLLAMA:-0.6.3}"
js_version="${JS_OLLAMA:-0.6.4}"
work=$(mktemp -d)
stub_pid=""
cleanup() {
    if [[ -n "$stub_pid" ]]; then kill "$stub_pid" 2>/dev/null || true; fi
    rm -rf "$work"
}
trap cleanup EXIT

cargo build -q --bin passk
# The names the checks use besides the stub's convention names; any other name is Ollama's 404.
cat >"$work/stub.toml" <<'TOML'
[models."llama3.2"]
behaviour = "oracle"

[models."myns/tiny:1b"]
behaviour = "oracle"
TOML
./target/debug/passk serve-stub --root "$root" --config "$work/stub.toml" --port 0 >"$work/stub.log" 2>&1 &
stub_pid=$!
port=""
for _ in $(seq 100); do
    port=$(grep -oE '127\.0\.0\.1:[0-9]+' "$work/stub.log" | head -1 | cut -d: -f2 || true)
    [[ -n "$port" ]] && break
    sleep 0.1
done
if [[ -z "$port" ]]; then
    echo "official-clients: serve-stub did not start:" >&2
    cat "$work/stub.log" >&2
    exit 1
fi
host="http://127.0.0.1:$port"
echo "official-clients: passk serve-stub at $host"

status=0
ran=0
if command -v python3 >/dev/null && python3 -m venv "$work/venv" >/dev/null 2>&1 &&
    "$work/venv/bin/pip" install -q --disable-pip-version-check "ollama==$py_version" >"$work/pip.log" 2>&1; then
    ran=$((ran + 1))
    "$work/venv/bin/python" scripts/official-clients/check.py "$host" "$root" || status=1
else
    echo "official-clients: SKIPPED PyPI ollama $py_version (python3 or PyPI not reachable: $(tail -1 "$work/pip.log" 2>/dev/null))"
fi
if command -v npm >/dev/null && mkdir -p "$work/js" &&
    (cd "$work/js" && npm init -y >/dev/null && npm install --silent --no-audit --no-fund "ollama@$js_version") >"$work/npm.log" 2>&1; then
    ran=$((ran + 1))
    cp scripts/official-clients/check.mjs "$work/js/"
    node "$work/js/check.mjs" "$host" "$root" || status=1
else
    echo "official-clients: SKIPPED npm ollama $js_version (npm or the npm registry not reachable: $(tail -1 "$work/npm.log" 2>/dev/null))"
fi
if [[ $ran -eq 0 ]]; then
    echo "official-clients: SKIPPED: neither client could be installed; nothing was checked"
elif [[ $status -eq 0 ]]; then
    echo "official-clients: $ran client(s) checked, no mismatch"
else
    echo "official-clients: MISMATCH (see FAIL lines above)"
fi
exit $status
