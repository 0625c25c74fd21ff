#!/bin/sh
# Rewrites the command to a fixed one and adds context.
cat >/dev/null
printf '{"hookSpecificOutput":{"hookEventName":"PreToolUse","updatedInput":{"command":"%s"},"additionalContext":"rewritten by rewrite.sh"}}\n' "${REWRITE_TO:-echo safe}"
