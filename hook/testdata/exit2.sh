#!/bin/sh
# Blocks with exit status 2; stderr is the reason for the model.
cat >/dev/null
echo "policy: this tool is blocked here" >&2
exit 2
