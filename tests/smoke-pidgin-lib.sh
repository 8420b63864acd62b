# Shared set-up of the smoke tests with the real Pidgin, sourced by tests/smoke-pidgin*.sh (not a test itself).
# Starts Xvfb on a free display, an ngircd on 127.0.0.1 (when installed) and writes a throwaway Pidgin config
# folder whose plugins/ holds the built catchup.so, whose prefs load it, with an IRC account alice@127.0.0.1 and
# the chat #smoke that joins on sign-on. smoke_start_pidgin LOG then starts Pidgin with -d, its debug output in
# LOG; smoke_wait_ready waits for the plugin and the buddy list, smoke_wait_chat for the chat window. Set
# smoke_plugin_prefs before sourcing it for prefs of the plugin (XML under the root).
# Sets what tests/smoke-lib.sh sets (dir, port, artifacts, status, extra_pids: killed on exit too), and DISPLAY.
# Skips (77) without pidgin, Xvfb, xdotool, ImageMagick's import, xdpyinfo, or when no X server starts.

. "${top_srcdir:-$(dirname "$0")/..}/tests/smoke-lib.sh"

for tool in pidgin Xvfb xdotool import xdpyinfo; do
  command -v "$tool" >/dev/null 2>&1 || skip "$tool not found"
done
smoke_setup
xvfb_pid= pidgin_pid=
smoke_on_exit='for pid in $pidgin_pid $xvfb_pid; do kill "$pid" 2>/dev/null; done'

# ---- an X server of our own: Xvfb picks a free display itself, so that smoke tests may run in parallel ----
Xvfb -displayfd 3 -screen 0 1280x800x24 -nolisten tcp 3>"$dir/display" >"$dir/xvfb.log" 2>&1 &
xvfb_pid=$!
if wait_for 100 test -s "$dir/display" && DISPLAY=":$(head -n 1 "$dir/display")" \
   && wait_for 50 xdpyinfo -display "$DISPLAY"; then
  export DISPLAY
else
  skip "no X server could be started"
fi

# ---- the Pidgin config folder ----
smoke_write_prefs pidgin "" "$smoke_plugin_prefs"
smoke_write_account gtk-gaim gtk-autojoin

# ---- Pidgin ----
smoke_start_pidgin() {
  pidgin_log=$1
  pidgin -m -d -c "$dir" >"$pidgin_log" 2>&1 &
  pidgin_pid=$!
}

# Loading the plugin opens (creates) its history database inside the config folder.
smoke_wait_ready() {
  if wait_for 300 test -f "$dir/catchup/history.db"; then
    echo "ok: Pidgin loaded the plugin"
  else
    fail "the plugin was not loaded (see $pidgin_log)"
  fi
  wait_for 300 xdotool search --name '^Buddy List$' || fail "no buddy list window"
}

# Waits for the window of the chat #smoke and focuses it; its id in conv. Fails without a chat.
smoke_wait_chat() {
  conv=
  wait_for 300 xdotool search --name '^#smoke' || return 1
  conv=$(xdotool search --name '^#smoke' | head -n 1)
  xdotool windowfocus --sync "$conv" 2>/dev/null || xdotool windowfocus "$conv"
  sleep 0.5
}

# Pidgin started (debug log in $1), its plugin loaded and the chat #smoke open and focused; exits the test when the
# chat is not joined.
smoke_pidgin_in_chat() {
  smoke_start_pidgin "$1"
  smoke_wait_ready
  smoke_wait_chat || { fail "the chat #smoke was not joined"; exit 1; }
}
