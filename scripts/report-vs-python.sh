#!/usr/bin/env bash
# CPU and peak memory of `passk report` against the reference's Python analysis on the same
# records: the reference's run 2, imported once, then each analysis run in turn (passk, Python,
# passk, ...) so that both see the same load. Prints one line per run and the medians, then each
# command's own peak RSS by GNU time where /usr/bin/time is GNU's.
#
# Usage: scripts/report-vs-python.sh [--pairs N] [--reference-repo DIR]
#   --pairs           alternating pairs (default 7, at least 5)
#   --reference-repo  a checkout of the reference repository (MohanVishe/product-case-studies);
#                     its cheaper-per-token/experiment/analyze.py is run as its README says,
#                     `EVAL_RESULTS=results-run2 python analyze.py`. Without it (the records in
#                     ../shared/reference come without the analysis scripts) only passk is timed,
#                     and the script says so.
# Needs ../shared/reference (the reference's records) and python3.
set -euo pipefail
cd "$(dirname "$0")/.."

pairs=7
repo=""
while [ $# -gt 0 ]; do
  case "$1" in
    --pairs) pairs="$2"; shift 2 ;;
    --reference-repo) repo="$2"; shift 2 ;;
    *) echo "unknown argument: $1" >&2; exit 2 ;;
  esac
done
if [ "$pairs" -lt 5 ]; then echo "--pairs must be at least 5" >&2; exit 2; fi
records=../shared/reference/cheaper-per-token/experiment/results-run2
if [ ! -d "$records" ]; then echo "skipped: $records is absent" >&2; exit 0; fi

cargo build --release --quiet --bin passk
passk="${CARGO_TARGET_DIR:-target}/release/passk"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$passk" import --reference "$records" --out "$work/run2" >/dev/null 2>&1

python_dir=""
if [ -n "$repo" ]; then
  python_dir="$repo/cheaper-per-token/experiment"
  if [ ! -f "$python_dir/analyze.py" ]; then
    echo "no analyze.py under $python_dir" >&2; exit 2
  fi
  # The Python analysis reads its records beside itself: give it the very files passk imported.
  mkdir -p "$work/python"
  cp -r "$python_dir/." "$work/python/"
  rm -rf "$work/python/results-run2"
  cp -r "$records" "$work/python/results-run2"
else
  echo "the reference's Python analysis (analyze.py) is not in ../shared/reference: timing passk only" >&2
fi

# The interpreter itself, not a version manager's shim: a shim (pyenv's `python3`) runs helper
# processes before it execs Python, and their tens of milliseconds would be counted as the
# measured command's.
python=$(python3 -c 'import sys; print(sys.executable)')

# One run: prints "user+sys seconds  peak RSS KiB" of the command alone (wait4 on its process,
# microsecond resolution; GNU time rounds to 10 ms, which is most of a passk report). Not
# getrusage(RUSAGE_CHILDREN): that also counts whatever the measuring process waited for before.
measure() {
  "$python" - "$@" <<'PY'
import os, subprocess, sys
child = subprocess.Popen(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
_, status, r = os.wait4(child.pid, 0)
if status != 0:
    sys.exit(f"{' '.join(sys.argv[1:])} failed (wait status {status})")
print(f"{r.ru_utime + r.ru_stime:.4f} {r.ru_maxrss}")
PY
}

echo "load: $(uptime)"
# A process's peak RSS counts the pages of the process it was forked from until its exec, so no
# command measured this way reads below the measuring interpreter's own size: said once.
read -r _ floor < <(measure /bin/true)
echo "peak RSS floor of this measurement (/bin/true): $(echo "scale=1; $floor / 1024" | bc) MiB"
printf "%-4s  %-8s  %10s  %14s\n" pair analysis "CPU (s)" "peak RSS (MiB)"
: >"$work/passk.txt"; : >"$work/python.txt"
for i in $(seq 1 "$pairs"); do
  read -r cpu rss < <(measure "$passk" report "$work/run2")
  echo "$cpu $rss" >>"$work/passk.txt"
  printf "%-4s  %-8s  %10s  %14.1f\n" "$i" passk "$cpu" "$(echo "$rss / 1024" | bc -l)"
  if [ -n "$python_dir" ]; then
    read -r cpu rss < <(cd "$work/python" && EVAL_RESULTS=results-run2 measure "$python" analyze.py)
    echo "$cpu $rss" >>"$work/python.txt"
    printf "%-4s  %-8s  %10s  %14.1f\n" "$i" python "$cpu" "$(echo "$rss / 1024" | bc -l)"
  fi
done

median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
p_cpu=$(cut -d' ' -f1 "$work/passk.txt" | median)
p_rss=$(cut -d' ' -f2 "$work/passk.txt" | median)
echo "median passk:  ${p_cpu} s CPU, $(echo "scale=1; $p_rss / 1024" | bc) MiB"
if [ -n "$python_dir" ]; then
  y_cpu=$(cut -d' ' -f1 "$work/python.txt" | median)
  y_rss=$(cut -d' ' -f2 "$work/python.txt" | median)
  echo "median python: ${y_cpu} s CPU, $(echo "scale=1; $y_rss / 1024" | bc) MiB"
  echo "passk uses $(echo "scale=1; $y_cpu / $p_cpu" | bc)x less CPU (target: at least 100x)"
fi

# GNU time, forked from this small shell rather than from the interpreter, reads each command's
# own peak (its CPU is 10 ms coarse, so only the memory is taken from it): once each, when present.
if [ -x /usr/bin/time ] && /usr/bin/time -f %M true >/dev/null 2>&1; then
  own_peak() { /usr/bin/time -f %M -o "$work/peak" "$@" >/dev/null 2>&1 && tail -1 "$work/peak"; }
  echo "peak RSS by GNU time: passk $(echo "scale=1; $(own_peak "$passk" report "$work/run2") / 1024" | bc) MiB"
  if [ -n "$python_dir" ]; then
    peak=$(cd "$work/python" && EVAL_RESULTS=results-run2 own_peak "$python" analyze.py)
    echo "peak RSS by GNU time: python $(echo "scale=1; $peak / 1024" | bc) MiB"
  fi
fi
