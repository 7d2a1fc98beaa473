#!/usr/bin/env bash
# Long no-panic run of the property tests over the four parsers that take model or user text:
# the text tool-call parser, tool-argument checking, the record loader and the experiment-file
# loader (tests/fuzz.rs), plus the `passk run` flag parser (src/commands/run.rs).
#
#   scripts/fuzz.sh [CASES_PER_TARGET]     # default 250000: 10^6 inputs over the four targets
#
# These are proptest properties run long rather than cargo-fuzz targets (which need a nightly
# toolchain, libFuzzer and a separate fuzz crate): each case is a fresh random input built from the
# shapes each parser looks for, and a failure prints the shrunk input. Any panic fails the run, and
# so does a hang: one case over 2 s fails its property (tests/fuzz.rs, CASE_LIMIT), and a case
# that never returns is stopped by the overall time limit below.
set -euo pipefail
cd "$(dirname "$0")/.."
cases="${1:-250000}"
export PASSK_FUZZ_CASES="$cases"
start=$(date +%s)
cargo build --tests -q
timeout 3600 cargo test -q --test tests -- --test-threads 4 fuzz::
timeout 3600 cargo test -q --bin passk -- the_flag_parser_never_panics
end=$(date +%s)
echo "fuzz: ${cases} cases per target, 5 targets ($((cases * 5)) inputs), 0 panics, 0 hangs, $((end - start)) s"
