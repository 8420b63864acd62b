#!/bin/sh
# The plugin's dialogs in the real Pidgin, as a user meets them (set-up of smoke-pidgin.sh: Xvfb, a local ngircd,
# a throwaway config folder with the built plugin): after three others said tests/data/smoke-conversation.txt,
# "/catchup post 30" opens the Post/Cancel preview (Return answers Cancel: nothing is posted); "/catchup settings"
# with a memory budget of 999999999 typed in comes back refused, naming the field and its range; and the plugin's
# preferences (Tools → Plugins → Configure Plugin) open. Screenshots in tests/artifacts/pidgin-post-preview.png,
# pidgin-settings-refused.png and pidgin-prefs.png.
# Skipped (77) like smoke-pidgin.sh, and without ngircd or python3.

smoke_plugin_prefs="
	<pref name='plugins'><pref name='core'><pref name='catchup'>
		<pref name='defaults'>
			<pref name='allow_post' type='bool' value='1'/><pref name='auto' type='bool' value='0'/>
		</pref>
	</pref></pref></pref>"
. "${top_srcdir:-$(dirname "$0")/..}/tests/smoke-pidgin-lib.sh"

[ -n "$port" ] || skip "ngircd not found"
command -v python3 >/dev/null 2>&1 || skip "python3 not found"

log=$artifacts/pidgin-ux.log
smoke_pidgin_in_chat "$log"
xdotool windowmove "$conv" 0 0; xdotool windowsize "$conv" 1000 780
smoke_say_conversation
sleep 1

# Types text into the window $1 and presses Return.
type_into() {
  xdotool windowfocus --sync "$1" 2>/dev/null || xdotool windowfocus "$1"
  sleep 0.3
  xdotool type --delay 30 "$2"
  xdotool key Return
}
shot() { import -window "$1" "$artifacts/pidgin-$2.png" && echo "screenshot: $artifacts/pidgin-$2.png"; }

# ---- the post preview ----
type_into "$conv" '/catchup post 30'
if wait_for 300 xdotool search --name '^Post catch-up$'; then
  preview=$(xdotool search --name '^Post catch-up$' | head -n 1)
  sleep 1
  shot "$preview" post-preview
  echo "ok: the post preview opened"
  xdotool windowfocus --sync "$preview" 2>/dev/null; xdotool key Return   # the default: Cancel
  wait_for 100 sh -c "! xdotool search --name '^Post catch-up\$'" && echo "ok: Return answered the preview" \
    || fail "the preview stayed open"
  sleep 1
  grep -q 'catchup: catch-up written to #smoke' "$log" || fail "no catch-up was written"
else
  fail "no post preview opened"
fi

# ---- the settings dialog refuses what it cannot take ----
type_into "$conv" '/catchup settings'
if wait_for 100 xdotool search --name '^Catch-up settings$'; then
  settings=$(xdotool search --name '^Catch-up settings$' | head -n 1)
  sleep 1
  shot "$settings" settings
  # the first check box has the focus; three steps on is the memory budget
  xdotool windowfocus --sync "$settings" 2>/dev/null
  xdotool key Tab Tab Tab ctrl+a
  xdotool type --delay 30 '999999999'
  xdotool key alt+s
  sleep 1
  refused=$(xdotool search --name '^Catch-up settings$' | head -n 1)
  if [ -n "$refused" ]; then
    shot "$refused" settings-refused
    echo "ok: the dialog came back after Save"
    xdotool windowfocus --sync "$refused" 2>/dev/null; xdotool key Escape
    sleep 1
    if grep -q 999999999 "$dir/blist.xml" 2>/dev/null; then fail "the refused budget was saved"; \
      else echo "ok: nothing was saved"; fi
  else
    fail "the dialog did not come back refused"
  fi
else
  fail "the settings dialog did not open"
fi

# ---- the preferences: Tools > Plugins (Ctrl+U), the plugin found by typing its name, Configure Plugin ----
blist=$(xdotool search --name '^Buddy List$' | head -n 1)
xdotool windowfocus --sync "$blist" 2>/dev/null; xdotool key ctrl+u
if wait_for 100 xdotool search --name '^Plugins$'; then
  plugins=$(xdotool search --name '^Plugins$' | head -n 1)
  xdotool windowfocus --sync "$plugins" 2>/dev/null
  sleep 0.5
  xdotool type --delay 50 'Catch-up'
  sleep 0.5
  xdotool key Return alt+u
  if wait_for 100 xdotool search --name '^Catch-up$'; then
    prefs=$(xdotool search --name '^Catch-up$' | head -n 1)
    sleep 1
    shot "$prefs" prefs
    echo "ok: the preferences opened"
    # all of it, in a taller window
    xdotool windowsize "$prefs" 404 1000; sleep 1
    shot "$prefs" prefs-all
  else
    shot "$plugins" plugins; fail "the preferences did not open"
  fi
else
  fail "no plugins window"
fi

exit $status
