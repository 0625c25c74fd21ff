#!/usr/bin/env bash
# Regenerates types_table.go from the installed ripgrep's type table.
set -euo pipefail
cd "$(dirname "$0")"
{
  echo "// Code generated from \`rg --type-list\` ($(rg --version | head -1)); DO NOT EDIT."
  echo '// Regenerate with: internal/grep/gen_types.sh'
  echo
  echo 'package search'
  echo
  echo "// fileTypes is ripgrep's default file type table, sorted by name. A file"
  echo '// has a type when its base name matches one of the globs.'
  echo 'var fileTypes = [...]fileType{'
  rg --type-list | LC_ALL=C sort | awk -F': ' '{n=split($2,g,", "); s=""; for(i=1;i<=n;i++){ s = s (i>1?", ":"") "\"" g[i] "\"" }; printf "\t{%s, []string{%s}},\n", "\"" $1 "\"", s}'
  echo '}'
} > types_table.go
gofmt -w types_table.go
