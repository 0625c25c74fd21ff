#!/bin/sh
# Plain-text stdout: context for UserPromptSubmit and SessionStart.
cat >/dev/null
echo "branch: main"
