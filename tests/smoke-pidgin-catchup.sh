#!/bin/sh
# What a user sees of a catch-up in the real Pidgin: with the set-up of smoke-pidgin.sh (Xvfb, a local ngircd,
# a throwaway config folder with the built plugin), once Pidgin has joined #smoke three other people say a short
# scripted conversation over raw IRC connections on 127.0.0.1; then "/catchup 30" is typed into the chat. Waits
# for the plugin's debug line "catch-up written to #smoke: …", checks that it covers the 30 messages and names
# the speakers, and keeps a screenshot of the conversation window in tests/artifacts/pidgin-catchup.png.
# Skipped (77) like smoke-pidgin.sh, and without ngircd or python3.

. "${top_srcdir:-$(dirname "$0")/..}/tests/smoke-pidgin-lib.sh"

[ -n "$port" ] || skip "ngircd not found"
command -v python3 >/dev/null 2>&1 || skip "python3 not found"

log=$artifacts/pidgin-catchup.log
smoke_pidgin_in_chat "$log"
smoke_say_conversation
sleep 1

# A larger window at the top left, above the buddy list (there is no window manager).
xdotool windowmove "$conv" 0 0; xdotool windowsize "$conv" 1000 780; xdotool windowraise "$conv"
xdotool windowfocus --sync "$conv" 2>/dev/null || xdotool windowfocus "$conv"
sleep 0.5
xdotool type --delay 30 '/catchup 30'
xdotool key Return

if wait_for 300 grep -q 'catchup: catch-up written to #smoke:' "$log"; then
  written=$(grep 'catchup: catch-up written to #smoke:' "$log" | tail -n 1)
  echo "ok: ${written#*catchup: }"
  case $written in
    *": 30 messages,"*) echo "ok: the catch-up covers the 30 messages" ;;
    *) fail "the catch-up does not cover the 30 messages" ;;
  esac
  for nick in mira tomas jon; do
    case ${written#*speakers: } in
      *"$nick"*) echo "ok: the summary names $nick" ;;
      *) fail "the summary does not name $nick" ;;
    esac
  done
else
  fail "no catch-up was written (see $log)"
fi

sleep 1
import -window "$conv" "$artifacts/pidgin-catchup.png" && echo "screenshot: $artifacts/pidgin-catchup.png"
exit $status
