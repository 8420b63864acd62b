#include "config.h"

#include <signal.h>
#include <string.h>

#include "e2e-client.h"
#include "e2e-irc.h"
#include "../test-util.h"

void
e2e_irc_stop_server (GSubprocess *server)
{
  g_subprocess_send_signal (server, SIGTERM);
  g_subprocess_wait (server, NULL, NULL);
  g_object_unref (server);
}

static void peer_read (E2eIrcPeer *peer);

void
e2e_irc_peer_send (E2eIrcPeer *peer, const char *line)
{
  g_autofree char *crlf = g_strconcat (line, "\r\n", NULL);
  GOutputStream *out = g_io_stream_get_output_stream (G_IO_STREAM (peer->conn));

  g_assert_true (g_output_stream_write_all (out, crlf, strlen (crlf), NULL, NULL, NULL));
}

void
e2e_irc_peer_say (E2eIrcPeer *peer, const char *text)
{
  g_autofree char *cmd = g_strdup_printf ("PRIVMSG %s :%s", peer->channel, text);

  e2e_irc_peer_send (peer, cmd);
}

static void
peer_line (E2eIrcPeer *peer, const char *line)
{
  g_auto (GStrv) parts = g_strsplit (line, " ", 4);

  if (g_str_has_prefix (line, "PING "))
    {
      g_autofree char *pong = g_strdup_printf ("PONG %s", line + 5);
      e2e_irc_peer_send (peer, pong);
    }
  else if (g_strv_length (parts) >= 2 && strcmp (parts[1], "001") == 0)
    peer->registered = TRUE;
  else if (g_strv_length (parts) >= 2 && strcmp (parts[1], "366") == 0)
    peer->joined = TRUE;
  else if (g_strv_length (parts) == 4 && strcmp (parts[1], "PRIVMSG") == 0 && strcmp (parts[2], peer->channel) == 0)
    g_ptr_array_add (peer->received, g_strdup (parts[3][0] == ':' ? parts[3] + 1 : parts[3]));
}

static void
peer_read_done (GObject *source, GAsyncResult *res, gpointer data)
{
  E2eIrcPeer *peer = data;
  g_autofree char *line = g_data_input_stream_read_line_finish (peer->in, res, NULL, NULL);

  if (line == NULL)
    return;
  g_strchomp (line);
  peer_line (peer, line);
  peer_read (peer);
}

static void
peer_read (E2eIrcPeer *peer)
{
  g_data_input_stream_read_line_async (peer->in, G_PRIORITY_DEFAULT, NULL, peer_read_done, peer);
}

static gboolean
peer_registered (gpointer data)
{
  return ((E2eIrcPeer *) data)->registered;
}

static gboolean
peer_joined (gpointer data)
{
  return ((E2eIrcPeer *) data)->joined;
}

E2eIrcPeer *
e2e_irc_peer_new (guint16 port, const char *nick, const char *channel)
{
  E2eIrcPeer *peer = g_new0 (E2eIrcPeer, 1);
  g_autoptr (GSocketClient) sc = g_socket_client_new ();
  g_autofree char *cmd = NULL;

  peer->nick = g_strdup (nick);
  peer->channel = g_strdup (channel);
  peer->received = g_ptr_array_new_with_free_func (g_free);
  peer->conn = g_socket_client_connect_to_host (sc, "127.0.0.1", port, NULL, NULL);
  g_assert_nonnull (peer->conn);
  peer->in = g_data_input_stream_new (g_io_stream_get_input_stream (G_IO_STREAM (peer->conn)));
  g_data_input_stream_set_newline_type (peer->in, G_DATA_STREAM_NEWLINE_TYPE_ANY);
  peer_read (peer);
  cmd = g_strdup_printf ("NICK %s", nick);
  e2e_irc_peer_send (peer, cmd);
  g_free (cmd);
  cmd = g_strdup_printf ("USER %s 0 * :%s", nick, nick);
  e2e_irc_peer_send (peer, cmd);
  g_assert_true (e2e_wait (peer_registered, peer, 10000));
  g_free (cmd);
  cmd = g_strdup_printf ("JOIN %s", channel);
  e2e_irc_peer_send (peer, cmd);
  g_assert_true (e2e_wait (peer_joined, peer, 10000));
  return peer;
}
