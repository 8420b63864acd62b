#!/bin/sh
# What a user sees of the plugin in the real Finch, in a terminal: Finch runs inside a detached tmux session
# (120x50) with a throwaway config folder that loads the built catchup.so and an IRC account on a local ngircd
# whose chat #smoke joins on sign-on. Three others say tests/data/smoke-conversation.txt; then, typed into the
# chat: "/catchup 30" (the catch-up must not be dim and keeps the window's border straight), "/catchup settings"
# (the dialog shows the stored values, buttons without underscores), and "/catchup post 30" (a Post/Cancel
# preview; Post sends it, and the posted lines keep the border straight as well). Each screen is kept as a
# capture in tests/artifacts/finch-*.txt (plain) and finch-*.ansi (with colours and attributes).
# Skipped (77) without finch, tmux, ngircd or python3.

srcdir=${top_srcdir:-$(dirname "$0")/..}
. "$srcdir/tests/smoke-lib.sh"

for tool in finch tmux python3; do
  command -v "$tool" >/dev/null 2>&1 || skip "$tool not found"
done
smoke_setup
[ -n "$port" ] || skip "ngircd not found"
session=catchup-smoke-$$
smoke_on_exit='tmux kill-session -t "$session" 2>/dev/null'

# The chat window fills the screen right of the buddy list; posting is allowed, automatic catch-ups are off.
smoke_write_prefs finch "
		<pref name='conversations'>
			<pref name='size'><pref name='width' type='int' value='96'/><pref name='height' type='int' value='46'/></pref>
			<pref name='position'><pref name='x' type='int' value='22'/><pref name='y' type='int' value='0'/></pref>
		</pref>" "
	<pref name='plugins'><pref name='core'><pref name='catchup'>
		<pref name='post_interval_ms' type='int' value='300'/>
		<pref name='defaults'>
			<pref name='allow_post' type='bool' value='1'/><pref name='auto' type='bool' value='0'/>
		</pref>
	</pref></pref></pref>"
smoke_write_account gnt-purple gnt-autojoin

# ---- Finch in a terminal of known size ----
# Unicode box drawing (not the terminal's alternate character set), so that a capture shows the borders as drawn
tmux new-session -d -s "$session" -x 120 -y 50 \
  "TERM=screen-256color LANG=C.UTF-8 LC_ALL=C.UTF-8 NCURSES_NO_UTF8_ACS=1 finch -c '$dir' 2>'$dir/finch.log'"
screen() { tmux capture-pane -p -t "$session" -J; }
capture() {
  tmux capture-pane -p -t "$session" >"$artifacts/finch-$1.txt"
  tmux capture-pane -p -e -t "$session" >"$artifacts/finch-$1.ansi"
  echo "capture: $artifacts/finch-$1.txt"
}
shows() { screen | grep -qF -- "$1"; }
type_line() { focus_chat; tmux send-keys -t "$session" -l "$1"; tmux send-keys -t "$session" Enter; }

wait_for 300 test -f "$dir/catchup/history.db" && echo "ok: Finch loaded the plugin" || fail "the plugin was not loaded"
wait_for 300 shows '#smoke' || { fail "the chat #smoke was not joined"; screen; exit 1; }
sleep 1
# Focus the chat: Alt+n goes to the next window until the task bar (the last row) marks #smoke as the focused one,
# in white on blue.
focused() { tmux capture-pane -p -e -t "$session" | tail -n 1 | grep -qF "$(printf '\033[37m\033[44m')$1"; }
focus() {
  n=0
  until focused "$1" || [ $n -ge 6 ]; do
    tmux send-keys -t "$session" Escape n
    sleep 0.5; n=$((n + 1))
  done
  focused "$1" || fail "the window $1 could not be focused"
}
focus_chat() { focus '#smoke'; }

smoke_say_conversation
sleep 1

zwj=$(printf '\342\200\215')   # U+200D ZERO WIDTH JOINER
dim=$(printf '\033[2m')          # SGR 2: dim

# Every row that ends in a window border ends in the same column: a character the terminal and Finch count
# differently (a zero-width joiner) shifts the right border of its row.
border_straight() {
  python3 - "$1" <<'PY'
import sys, unicodedata
rows = [r.rstrip("\n") for r in open(sys.argv[1], encoding="utf-8")]
def width(s):
    return sum(0 if unicodedata.category(c) in ("Mn", "Cf") else 2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in s)
framed = [r.rstrip() for r in rows if r.rstrip().endswith("│")]
ends = {width(r) for r in framed}
print("rows ending in a border: %d, at column(s) %s" % (len(framed), sorted(ends)))
sys.exit(0 if len(framed) > 3 and len(ends) == 1 else 1)
PY
}

# ---- the catch-up ----
type_line '/catchup 30'
if wait_for 300 shows 'messages from 3 people'; then
  sleep 1
  capture catchup
  echo "ok: the catch-up was written"
  if grep -q "$zwj" "$artifacts/finch-catchup.txt"; then fail "a zero-width joiner is on screen"; fi
  # the catch-up's first line comes from the sender "catch-up", and none of its lines is dim
  first=$(grep -n 'catch-up: .* messages from' "$artifacts/finch-catchup.txt" | head -n 1 | cut -d: -f1)
  if [ -z "$first" ]; then
    fail "no line from the sender catch-up"
  elif sed -n "${first},\$p" "$artifacts/finch-catchup.ansi" | grep -qF "$dim"; then
    fail "the catch-up is dim"
  else
    echo "ok: the catch-up is in the normal colour, from the sender catch-up"
  fi
  border_straight "$artifacts/finch-catchup.txt" && echo "ok: the border is straight" || fail "the border is broken"
else
  capture catchup; fail "no catch-up appeared"
fi

# ---- the settings dialog shows what is stored ----
type_line '/catchup settings'
if wait_for 100 shows 'Catch-up settings for #smoke'; then
  sleep 0.5
  capture settings
  grep -q 'Summary length.*Normal' "$artifacts/finch-settings.txt" && echo "ok: the stored length (Normal) is shown" \
    || fail "the dialog does not show the stored length Normal"
  grep -q 'Summary language.*The room' "$artifacts/finch-settings.txt" && echo "ok: the language is the room's own" \
    || fail "the dialog does not show the room's own language"
  if grep -q '_Save\|_Cancel' "$artifacts/finch-settings.txt"; then fail "button labels with underscores"; \
    else echo "ok: buttons without underscores"; fi
  tmux send-keys -t "$session" Escape c   # closes the dialog, as Cancel
  sleep 0.5
else
  capture settings; fail "the settings dialog did not open"
fi

# ---- posting: the preview, then Post ----
type_line '/catchup post 30'
# Finch opens the preview behind the chat (it was not opened by a key press), marked in the task bar.
if wait_for 300 sh -c "tmux capture-pane -p -t '$session' | tail -n 1 | grep -qF 'Post catch-up'" && focus 'Post catch-up' \
   && wait_for 50 shows 'Send this catch-up to #smoke'; then
  sleep 0.5
  capture post-preview
  echo "ok: the post preview opened"
  # Cancel has the focus; one step back is Post
  tmux send-keys -t "$session" BTab
  sleep 0.3
  tmux send-keys -t "$session" Enter
  if wait_for 300 shows 'alice: [catch-up]'; then
    sleep 4
    capture posted
    echo "ok: Post sent the catch-up to the room"
    if grep -q "$zwj" "$artifacts/finch-posted.txt"; then fail "a zero-width joiner was posted"; fi
    border_straight "$artifacts/finch-posted.txt" && echo "ok: the border is straight after posting" \
      || fail "the posted lines break the border"
  else
    capture posted; fail "nothing was posted after Post"
  fi
else
  capture post-preview; fail "no post preview"
fi
exit $status
