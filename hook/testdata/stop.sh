#!/bin/sh
# Stops the run and warns the user; echoes the project dir it was given.
cat >/dev/null
printf '{"continue":false,"stopReason":"budget reached","systemMessage":"project %s","suppressOutput":true}\n' "$GANTRY_PROJECT_DIR"
