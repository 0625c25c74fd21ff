#!/usr/bin/env bash
# Times ripgrep and grep on Go's source tree, the corpus of
# BenchmarkGrepGoroot and BenchmarkGlobGoroot, to compute the ratios in
# docs/tools-search.md. Uses hyperfine when installed, else a loop of `time`.
#   builtin/search/bench.sh            # external tools
#   go test -run '^$' -bench Goroot -count 5 ./builtin/search   # Gantry
set -euo pipefail
SRC="$(go env GOROOT)/src"
RG=(rg --no-config --no-messages --no-ignore-global --no-ignore-dot --no-require-git)
cmds=(
  "${RG[*]} -l 'errors.New' $SRC"
  "${RG[*]} -l 'func \\w+Error\\(' $SRC"
  "${RG[*]} --json 'errors.New' $SRC"
  "${RG[*]} --json 'func \\w+Error\\(' $SRC"
  "${RG[*]} -n 'errors.New' $SRC"
  "grep -rl 'errors.New' $SRC"
  "grep -rnE 'func [[:alnum:]_]+Error\\(' $SRC"
  "${RG[*]} --files -g '*.go' $SRC"
)
if command -v hyperfine >/dev/null; then
  hyperfine --warmup 2 --runs 10 -N --export-markdown /dev/stdout "${cmds[@]/%/ >/dev/null}" 2>/dev/null ||
    hyperfine --warmup 2 --runs 10 "${cmds[@]/%/ >/dev/null}"
else
  for c in "${cmds[@]}"; do
    echo "== $c"
    for _ in 1 2; do bash -c "$c" >/dev/null; done # warm up
    time (for _ in 1 2 3 4 5; do bash -c "$c" >/dev/null; done)
  done
fi
