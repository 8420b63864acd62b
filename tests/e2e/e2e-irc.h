#pragma once

/* IRC for the end-to-end tests: a real ngircd on 127.0.0.1 and other participants as raw IRC connections, so
 * that a test sees exactly the bytes a plain IRC client would. */

#include <gio/gio.h>

G_BEGIN_DECLS

typedef struct {
  char *nick;
  char *channel;
  GSocketConnection *conn;
  GDataInputStream *in;
  GPtrArray *received;   /* texts of the PRIVMSGs seen on channel, as sent */
  gboolean registered, joined;
} E2eIrcPeer;

/* Starts ngircd (ended with the test) with its configuration in dir; its port, or 0 when ngircd is missing. */
guint16 e2e_irc_start_server (const char *dir, GSubprocess **server);
/* Ends the server e2e_irc_start_server started. */
void e2e_irc_stop_server (GSubprocess *server);
/* A participant connected, registered and in channel. */
E2eIrcPeer *e2e_irc_peer_new (guint16 port, const char *nick, const char *channel);
/* One raw IRC line (without CRLF). */
void e2e_irc_peer_send (E2eIrcPeer *peer, const char *line);
/* PRIVMSG to the peer's channel. */
void e2e_irc_peer_say (E2eIrcPeer *peer, const char *text);

G_END_DECLS
