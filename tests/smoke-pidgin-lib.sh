# Shared set-up of the smoke tests with the real Pidgin, sourced by tests/smoke-pidgin*.sh (not a test itself).
# Starts Xvfb on a free display, an ngircd on 127.0.0.1 (when installed) and writes a throwaway Pidgin config
# folder whose plugins/ holds the built catchup.so, whose prefs load it, with an IRC account alice@127.0.0.1 and
# the chat #smoke that joins on sign-on. smoke_start_pidgin LOG then starts Pidgin with -d, its debug output in
# LOG; smoke_wait_ready waits for the plugin and the buddy list, smoke_wait_chat for the chat window.
# Sets: dir (the config folder), extra_pids (killed on exit too, with Pidgin and the servers), artifacts, port (empty without ngircd), DISPLAY, status (0 until a check fails).
# Skips (77) without pidgin, Xvfb, xdotool, ImageMagick's import, xdpyinfo, or when no X server starts.

so=${CATCHUP_PLUGIN_SO:?CATCHUP_PLUGIN_SO is not set}
artifacts=${G_TEST_BUILDDIR:-$(pwd)/tests}/artifacts
status=0
skip() { echo "skipped: $*"; exit 77; }
fail() { echo "FAIL: $*"; status=1; }

for tool in pidgin Xvfb xdotool import xdpyinfo; do
  command -v "$tool" >/dev/null 2>&1 || skip "$tool not found"
done
[ -f "$so" ] || { echo "the built plugin $so is missing"; exit 1; }

dir=$(mktemp -d "${TMPDIR:-/tmp}/catchup-smoke-XXXXXX") || exit 99
xvfb_pid= ngircd_pid= pidgin_pid= extra_pids=
cleanup() {
  for pid in $extra_pids $pidgin_pid $ngircd_pid $xvfb_pid; do kill "$pid" 2>/dev/null; done
  wait 2>/dev/null
  rm -rf "$dir"
}
trap cleanup EXIT
mkdir -p "$artifacts" "$dir/plugins"
ln -s "$so" "$dir/plugins/catchup.so"

# Waits up to $1 tenths of a second for the command after it to succeed.
wait_for() {
  n=$1; shift
  while [ "$n" -gt 0 ]; do
    "$@" >/dev/null 2>&1 && return 0
    sleep 0.1; n=$((n - 1))
  done
  return 1
}

# ---- an X server of our own: Xvfb picks a free display itself, so that smoke tests may run in parallel ----
Xvfb -displayfd 3 -screen 0 1280x800x24 -nolisten tcp 3>"$dir/display" >"$dir/xvfb.log" 2>&1 &
xvfb_pid=$!
if wait_for 100 test -s "$dir/display" && DISPLAY=":$(head -n 1 "$dir/display")" \
   && wait_for 50 xdpyinfo -display "$DISPLAY"; then
  export DISPLAY
else
  skip "no X server could be started"
fi

# ---- a local IRC server, so that the chat is joined (loopback only) ----
ngircd=$(command -v ngircd || echo /usr/sbin/ngircd)
port=
if [ -x "$ngircd" ]; then
  port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  cat >"$dir/ngircd.conf" <<EOF
[Global]
	Name = irc.smoke.test
	Info = smoke test
	Listen = 127.0.0.1
	Ports = $port
	MotdPhrase = smoke
[Options]
	DNS = no
	Ident = no
	PAM = no
EOF
  "$ngircd" -n -f "$dir/ngircd.conf" >"$dir/ngircd.log" 2>&1 &
  ngircd_pid=$!
fi

# ---- the Pidgin config folder ----
cat >"$dir/prefs.xml" <<EOF
<?xml version='1.0' encoding='UTF-8' ?>
<pref version='1' name='/'>
	<pref name='pidgin'>
		<pref name='plugins'>
			<pref name='loaded' type='pathlist'>
				<item value='$dir/plugins/catchup.so'/>
			</pref>
		</pref>
	</pref>
</pref>
EOF
cat >"$dir/accounts.xml" <<EOF
<?xml version='1.0' encoding='UTF-8' ?>
<account version='1.0'>
	<account>
		<protocol>prpl-irc</protocol>
		<name>alice@127.0.0.1</name>
		<settings>
			<setting name='port' type='int'>${port:-6667}</setting>
			<setting name='ssl' type='bool'>0</setting>
		</settings>
		<settings ui='gtk-gaim'>
			<setting name='auto-login' type='bool'>$([ -n "$port" ] && echo 1 || echo 0)</setting>
		</settings>
	</account>
</account>
EOF
cat >"$dir/blist.xml" <<EOF
<?xml version='1.0' encoding='UTF-8' ?>
<purple version='1.0'>
	<blist>
		<group name='Chats'>
			<chat proto='prpl-irc' account='alice@127.0.0.1'>
				<component name='channel'>#smoke</component>
				<setting name='gtk-autojoin' type='bool'>1</setting>
			</chat>
		</group>
	</blist>
	<privacy/>
</purple>
EOF

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
