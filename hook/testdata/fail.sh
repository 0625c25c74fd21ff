#!/bin/sh
# A non-blocking error: exit 1 with a message for the user.
cat >/dev/null
echo "lint server unreachable" >&2
exit 1
