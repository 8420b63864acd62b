# Shared set-up of the smoke tests with the real Pidgin and Finch, sourced by tests/smoke-pidgin-lib.sh and
# tests/smoke-finch.sh (not a test itself). Makes a throwaway config folder whose plugins/ holds the built
# catchup.so, starts an ngircd on 127.0.0.1 (when installed), and writes the IRC account alice@127.0.0.1 and the
# chat #smoke that joins on sign-on, for the UI named. Everything started is ended on exit, and the folder removed.
# smoke_setup sets dir, port (empty without ngircd); status is 0 until a check fails; extra_pids and smoke_pids
# (add to them what else must be killed on exit) and smoke_on_exit (a command run first on exit).

smoke_srcdir=${top_srcdir:-$(dirname "$0")/..}
so=${CATCHUP_PLUGIN_SO:?CATCHUP_PLUGIN_SO is not set}
artifacts=${G_TEST_BUILDDIR:-$(pwd)/tests}/artifacts
status=0
skip() { echo "skipped: $*"; exit 77; }
fail() { echo "FAIL: $*"; status=1; }

# Waits up to $1 tenths of a second for the command after it to succeed.
wait_for() {
  n=$1; shift
  while [ "$n" -gt 0 ]; do
    "$@" >/dev/null 2>&1 && return 0
    sleep 0.1; n=$((n - 1))
  done
  return 1
}

smoke_pids= smoke_on_exit= extra_pids=
smoke_cleanup() {
  [ -n "$smoke_on_exit" ] && eval "$smoke_on_exit"
  for pid in $extra_pids $smoke_pids; do kill "$pid" 2>/dev/null; done
  wait 2>/dev/null
  rm -rf "$dir"
}

# Makes the folder and starts the server; call it once the tools the test needs were found.
smoke_setup() {
  [ -f "$so" ] || { echo "the built plugin $so is missing"; exit 1; }
  dir=$(mktemp -d "${TMPDIR:-/tmp}/catchup-smoke-XXXXXX") || exit 99
  trap smoke_cleanup EXIT
  mkdir -p "$artifacts" "$dir/plugins"
  ln -s "$so" "$dir/plugins/catchup.so"

  # ---- a local IRC server, so that the chat is joined (loopback only) ----
  ngircd=$(command -v ngircd || echo /usr/sbin/ngircd)
  port=
  if [ -x "$ngircd" ]; then
    port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
    cat >"$dir/ngircd.conf" <<EOF_CONF
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
EOF_CONF
    "$ngircd" -n -f "$dir/ngircd.conf" >"$dir/ngircd.log" 2>&1 &
    smoke_pids="$smoke_pids $!"
  fi
}

# The account and the chat, for the UI $1 ("gtk-gaim" for Pidgin, "gnt-purple" for Finch) whose autojoin
# setting of a chat is $2 ("gtk-autojoin", "gnt-autojoin").
smoke_write_account() {
  cat >"$dir/accounts.xml" <<EOF_XML
<?xml version='1.0' encoding='UTF-8' ?>
<account version='1.0'>
	<account>
		<protocol>prpl-irc</protocol>
		<name>alice@127.0.0.1</name>
		<settings>
			<setting name='port' type='int'>${port:-6667}</setting>
			<setting name='ssl' type='bool'>0</setting>
		</settings>
		<settings ui='$1'>
			<setting name='auto-login' type='bool'>$([ -n "$port" ] && echo 1 || echo 0)</setting>
		</settings>
	</account>
</account>
EOF_XML
  cat >"$dir/blist.xml" <<EOF_XML
<?xml version='1.0' encoding='UTF-8' ?>
<purple version='1.0'>
	<blist>
		<group name='Chats'>
			<chat proto='prpl-irc' account='alice@127.0.0.1'>
				<component name='channel'>#smoke</component>
				<setting name='$2' type='bool'>1</setting>
			</chat>
		</group>
	</blist>
	<privacy/>
</purple>
EOF_XML
}

# prefs.xml: the UI's pref root $1 ("pidgin", "finch") loads the plugin; $2 is more XML inside the UI's root (its
# window sizes), $3 more inside the document's (the plugin's own prefs); both may be empty.
smoke_write_prefs() {
  cat >"$dir/prefs.xml" <<EOF_XML
<?xml version='1.0' encoding='UTF-8' ?>
<pref version='1' name='/'>
	<pref name='$1'>
		<pref name='plugins'>
			<pref name='loaded' type='pathlist'>
				<item value='$dir/plugins/catchup.so'/>
			</pref>
		</pref>
$2
	</pref>
$3
</pref>
EOF_XML
}

# mira, tomas and jon (raw IRC connections) say tests/data/smoke-conversation.txt in #smoke; returns once the server
# has taken every line. They stay in the room until the test ends.
smoke_say_conversation() {
  conversation=$smoke_srcdir/tests/data/smoke-conversation.txt
  python3 "$smoke_srcdir/tests/smoke-irc-peers.py" "$port" '#smoke' "$conversation" "$dir/others.status" \
    >"$dir/others.log" 2>&1 &
  extra_pids="$extra_pids $!"
  if wait_for 400 grep -q sent "$dir/others.status"; then
    echo "ok: mira, tomas and jon said $(grep -c '	' "$conversation") lines in #smoke"
  else
    fail "the scripted conversation was not sent"; cat "$dir/others.log"
  fi
}
