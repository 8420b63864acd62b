#!/bin/sh
# Smoke test with the real Pidgin: under Xvfb, with a throwaway config folder whose plugins/ holds the built
# catchup.so and whose prefs load it, an IRC account on a local ngircd and a chat that joins on sign-on. Checks
# that Pidgin starts with the plugin loaded (it creates its history database) and that "/catchup settings" typed
# into the chat opens the settings dialog; keeps a screenshot in tests/artifacts/pidgin-smoke.png.
# Skipped (77) without pidgin, Xvfb, xdotool, ImageMagick's import, or when no X server starts.

so=${CATCHUP_PLUGIN_SO:?CATCHUP_PLUGIN_SO is not set}
artifacts=${G_TEST_BUILDDIR:-$(pwd)/tests}/artifacts
skip() { echo "skipped: $*"; exit 77; }

for tool in pidgin Xvfb xdotool import xdpyinfo; do
  command -v "$tool" >/dev/null 2>&1 || skip "$tool not found"
done
[ -f "$so" ] || { echo "the built plugin $so is missing"; exit 1; }

dir=$(mktemp -d "${TMPDIR:-/tmp}/catchup-smoke-XXXXXX") || exit 99
xvfb_pid= ngircd_pid= pidgin_pid=
cleanup() {
  for pid in $pidgin_pid $ngircd_pid $xvfb_pid; do kill "$pid" 2>/dev/null; done
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

# ---- an X server of our own ----
for d in 91 92 93 94 95 96 97 98 99; do
  [ -e "/tmp/.X$d-lock" ] && continue
  Xvfb ":$d" -screen 0 1280x800x24 -nolisten tcp >"$dir/xvfb.log" 2>&1 &
  xvfb_pid=$!
  if wait_for 50 xdpyinfo -display ":$d"; then DISPLAY=":$d"; break; fi
  kill "$xvfb_pid" 2>/dev/null; xvfb_pid=
done
[ -n "$xvfb_pid" ] || skip "no X server could be started"
export DISPLAY

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
pidgin -m -d -c "$dir" >"$artifacts/pidgin-smoke.log" 2>&1 &
pidgin_pid=$!
status=0

# Loading the plugin opens (creates) its history database inside the config folder.
if wait_for 300 test -f "$dir/catchup/history.db"; then
  echo "ok: Pidgin loaded the plugin"
else
  echo "FAIL: the plugin was not loaded (see $artifacts/pidgin-smoke.log)"; status=1
fi
wait_for 300 xdotool search --name '^Buddy List$' || { echo "FAIL: no buddy list window"; status=1; }

if [ -n "$port" ] && wait_for 300 xdotool search --name '^#smoke'; then
  conv=$(xdotool search --name '^#smoke' | head -n 1)
  xdotool windowfocus --sync "$conv" 2>/dev/null || xdotool windowfocus "$conv"
  sleep 0.5
  xdotool type --delay 30 '/catchup settings'
  xdotool key Return
  if wait_for 100 xdotool search --name '^Catch-up settings$'; then
    echo "ok: /catchup settings opened the settings dialog"
  else
    echo "FAIL: the settings dialog did not open"; status=1
  fi
elif [ -n "$port" ]; then
  echo "FAIL: the chat #smoke was not joined"; status=1
else
  echo "note: no ngircd, so no chat to open the settings dialog from"
fi

sleep 1
import -window root "$artifacts/pidgin-smoke.png" && echo "screenshot: $artifacts/pidgin-smoke.png"
exit $status
