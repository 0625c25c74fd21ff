#!/bin/sh
# Starts a child that would outlive it, records both pids, then hangs.
cat >/dev/null
sleep 300 &
echo "$$ $!" > "$PIDFILE"
sleep 300
