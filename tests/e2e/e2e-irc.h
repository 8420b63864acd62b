#pragma once

/* IRC for the end-to-end tests: other participants as raw IRC connections to the ngircd of e2e_start_ngircd,
 * so that a test sees exactly the bytes a plain IRC client would. */

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

/* Ends the server e2e_start_ngircd started. */
void e2e_irc_stop_server (GSubprocess *server);
/* A participant connected, registered and in channel. */
E2eIrcPeer *e2e_irc_peer_new (guint16 port, const char *nick, const char *channel);
/* One raw IRC line (without CRLF). */
void e2e_irc_peer_send (E2eIrcPeer *peer, const char *line);
/* PRIVMSG to the peer's channel. */
void e2e_irc_peer_say (E2eIrcPeer *peer, const char *text);

G_END_DECLS
