#!/bin/sh
# Denies Bash commands that mention curl; says nothing otherwise.
input=$(cat)
case "$input" in
  *curl*) printf '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"no network from hooks test"}}\n' ;;
esac
exit 0
