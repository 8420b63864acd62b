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
smoke_start_pidgin "$log"
smoke_wait_ready
smoke_wait_chat || { fail "the chat #smoke was not joined"; exit 1; }

# ---- the others: one IRC connection each; writes "sent" once the server has taken every line ----
cat >"$dir/conversation.txt" <<'EOF'
mira	morning all. the deploy of the search service failed again at 07:40
tomas	same error as yesterday? the index migration timing out?
mira	yes, the migration holds the lock for more than 10 minutes & the health check gives up
jon	I tried the fallback this morning: serve the old index read-only while the new one builds
jon	it worked on staging, queries stayed under 200 ms
tomas	the fallback doubles the disk usage for an hour though
mira	disk is fine, we have 40% free on every node
tomas	ok. what about writes during that hour?
jon	they go to a queue and are replayed when the new index is live
mira	the replay took 3 minutes on staging for about 50k documents
tomas	and if the new index fails to build?
jon	then we drop it and keep serving the old one, nothing lost
mira	I like that better than raising the health check timeout again
tomas	agreed, raising the timeout only hides the problem
jon	one catch: titles with <br> or & in them broke the old parser last week
mira	that was fixed in 2.3, the fallback runs 2.4
tomas	fine by me then
mira	so, decision: let's go with the fallback from this morning for tonight's deploy & the <old> index stays warm
jon	great, I'll write it up in the runbook
tomas	jon, can you also add the rollback steps? "drop new index, keep old" in plain words
jon	sure, rollback steps go in the same page
mira	tomas, could you watch the disk graphs during the deploy tonight?
tomas	yes, I'll be around from 20:00
mira	thanks. deploy window is 21:00 to 22:00
jon	I'll ping the support team so they know searches may be slow
tomas	do we tell customers?
mira	no, read-only search keeps working, nobody should notice
jon	runbook updated: fallback, queue replay, rollback
tomas	looks good, I added the disk alert thresholds (85% warn, 95% page)
mira	perfect, see you all at 21:00
EOF
python3 - "$port" "$dir/conversation.txt" "$dir/others.status" >"$dir/others.log" 2>&1 <<'EOF' &
import socket, sys, time
port, script, status = int(sys.argv[1]), sys.argv[2], sys.argv[3]
lines = [l.rstrip("\n").split("\t", 1) for l in open(script, encoding="utf-8") if "\t" in l]
clients = {}

def wait_for(sock, buf, word):
    # Reads until a line whose command is word; answers PINGs on the way.
    while True:
        while b"\r\n" not in buf[0]:
            data = sock.recv(4096)
            if not data:
                raise SystemExit("connection closed")
            buf[0] += data
        line, buf[0] = buf[0].split(b"\r\n", 1)
        parts = line.decode("utf-8", "replace").split(" ")
        if parts[0] == "PING":
            sock.sendall(("PONG " + " ".join(parts[1:]) + "\r\n").encode())
        elif len(parts) > 1 and parts[1] == word:
            return

for nick in dict.fromkeys(n for n, _ in lines):
    s = socket.create_connection(("127.0.0.1", port))
    buf = [b""]
    s.sendall(("NICK %s\r\nUSER %s 0 * :%s\r\n" % (nick, nick, nick)).encode())
    wait_for(s, buf, "001")
    s.sendall(b"JOIN #smoke\r\n")
    wait_for(s, buf, "366")
    clients[nick] = (s, buf)
for nick, text in lines:
    clients[nick][0].sendall(("PRIVMSG #smoke :%s\r\n" % text).encode("utf-8"))
    time.sleep(0.4)  # below the server's flood limit, so that lines arrive in order
for nick, (s, buf) in clients.items():
    s.sendall(b"PING :done\r\n")
    wait_for(s, buf, "PONG")
open(status, "w").write("sent\n")
time.sleep(300)
EOF
extra_pids=$!

if wait_for 400 grep -q sent "$dir/others.status"; then
  echo "ok: mira, tomas and jon said $(grep -c '	' "$dir/conversation.txt") lines in #smoke"
else
  fail "the scripted conversation was not sent"; cat "$dir/others.log"
fi
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
