#!/usr/bin/env python3
# Other people in a chat for the smoke tests: smoke-irc-peers.py PORT CHANNEL SCRIPT STATUS connects one raw IRC
# client per nick of SCRIPT (lines "nick<TAB>text") to 127.0.0.1:PORT, joins CHANNEL, says the lines in order
# (below the server's flood limit), writes "sent" to STATUS once the server has taken every line, then stays
# connected (so that the nicks stay in the room) until killed.
import socket
import sys
import time

port, channel, script, status = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
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
    s.sendall(("JOIN %s\r\n" % channel).encode())
    wait_for(s, buf, "366")
    clients[nick] = (s, buf)
for nick, text in lines:
    clients[nick][0].sendall(("PRIVMSG %s :%s\r\n" % (channel, text)).encode("utf-8"))
    time.sleep(0.4)
for nick, (s, buf) in clients.items():
    s.sendall(b"PING :done\r\n")
    wait_for(s, buf, "PONG")
open(status, "w").write("sent\n")
time.sleep(300)
