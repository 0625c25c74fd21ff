#!/bin/sh
# Allows every call, with a reason, and checks it got the call's JSON.
input=$(cat)
case "$input" in
  *'"hook_event_name":"PreToolUse"'*) ;;
  *) echo "unexpected input: $input" >&2; exit 1 ;;
esac
printf '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow","permissionDecisionReason":"allow.sh approves"}}\n'
