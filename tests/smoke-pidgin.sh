#!/bin/sh
# Smoke test with the real Pidgin: under Xvfb, with a throwaway config folder whose plugins/ holds the built
# catchup.so and whose prefs load it, an IRC account on a local ngircd and a chat that joins on sign-on. Checks
# that Pidgin starts with the plugin loaded (it creates its history database) and that "/catchup settings" typed
# into the chat opens the settings dialog; keeps a screenshot in tests/artifacts/pidgin-smoke.png.
# Skipped (77) without pidgin, Xvfb, xdotool, ImageMagick's import, or when no X server starts.

. "${top_srcdir:-$(dirname "$0")/..}/tests/smoke-pidgin-lib.sh"

smoke_start_pidgin "$artifacts/pidgin-smoke.log"
smoke_wait_ready

if [ -n "$port" ] && smoke_wait_chat; then
  xdotool type --delay 30 '/catchup settings'
  xdotool key Return
  if wait_for 100 xdotool search --name '^Catch-up settings$'; then
    echo "ok: /catchup settings opened the settings dialog"
  else
    fail "the settings dialog did not open"
  fi
elif [ -n "$port" ]; then
  fail "the chat #smoke was not joined"
else
  echo "note: no ngircd, so no chat to open the settings dialog from"
fi

sleep 1
import -window root "$artifacts/pidgin-smoke.png" && echo "screenshot: $artifacts/pidgin-smoke.png"
exit $status
