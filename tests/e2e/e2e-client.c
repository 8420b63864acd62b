#include "config.h"

#include <signal.h>
#include <string.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

#include <gio/gio.h>
#include <glib/gstdio.h>

#include <cmds.h>
#include <connection.h>
#include <core.h>
#include <debug.h>
#include <eventloop.h>
#include <plugin.h>
#include <prefs.h>
#include <prpl.h>
#include <savedstatuses.h>
#include <server.h>
#include <util.h>

#include "e2e-client.h"
#include "../test-util.h"

#define UI_ID "catchup-e2e"

GPtrArray *e2e_lines;
GPtrArray *e2e_notices;
E2eRequests e2e_requests = { .action = 0 };

/* ---------- the GLib event loop for libpurple ---------- */

typedef struct {
  PurpleInputFunction function;
  gpointer data;
} IoClosure;

static gboolean
io_invoke (GIOChannel *source, GIOCondition condition, gpointer data)
{
  IoClosure *closure = data;
  PurpleInputCondition cond = 0;

  if (condition & (G_IO_IN | G_IO_HUP | G_IO_ERR))
    cond |= PURPLE_INPUT_READ;
  if (condition & (G_IO_OUT | G_IO_HUP | G_IO_ERR | G_IO_NVAL))
    cond |= PURPLE_INPUT_WRITE;
  closure->function (closure->data, g_io_channel_unix_get_fd (source), cond);
  return TRUE;
}

static guint
input_add (gint fd, PurpleInputCondition condition, PurpleInputFunction function, gpointer data)
{
  IoClosure *closure = g_new0 (IoClosure, 1);
  GIOChannel *channel = g_io_channel_unix_new (fd);
  GIOCondition cond = 0;
  guint id;

  closure->function = function;
  closure->data = data;
  if (condition & PURPLE_INPUT_READ)
    cond |= G_IO_IN | G_IO_HUP | G_IO_ERR;
  if (condition & PURPLE_INPUT_WRITE)
    cond |= G_IO_OUT | G_IO_HUP | G_IO_ERR | G_IO_NVAL;
  id = g_io_add_watch_full (channel, G_PRIORITY_DEFAULT, cond, io_invoke, closure, g_free);
  g_io_channel_unref (channel);
  return id;
}

static PurpleEventLoopUiOps loop_ops = {
  g_timeout_add, g_source_remove, input_add, g_source_remove, NULL, g_timeout_add_seconds,
  NULL, NULL, NULL
};

/* ---------- conversations: capture everything written ---------- */

static void
write_conv (PurpleConversation *conv, const char *who, const char *alias, const char *message,
            PurpleMessageFlags flags, time_t mtime)
{
  E2eLine *line = g_new0 (E2eLine, 1);

  line->conv = g_strdup (purple_conversation_get_name (conv));
  line->who = g_strdup (who);
  line->message = g_strdup (message);
  line->flags = flags;
  line->when = mtime;
  g_ptr_array_add (e2e_lines, line);
  if (g_getenv ("E2E_VERBOSE"))
    g_printerr ("[%s] %s (%#x): %s\n", line->conv, who ? who : "-", flags, message);
}

static PurpleConversationUiOps conv_ops = {
  .write_conv = write_conv,
};

static void
line_free (gpointer data)
{
  E2eLine *line = data;

  g_free (line->conv);
  g_free (line->who);
  g_free (line->message);
  g_free (line);
}

int
e2e_find_line (const char *conv, guint from, PurpleMessageFlags flags, const char *substring)
{
  for (guint i = from; i < e2e_lines->len; i++)
    {
      E2eLine *line = e2e_lines->pdata[i];

      if (g_strcmp0 (line->conv, conv) == 0 && (line->flags & flags) == flags
          && (substring == NULL || strstr (line->message, substring) != NULL))
        return i;
    }
  return -1;
}

typedef struct {
  const char *conv;
  guint from;
  PurpleMessageFlags flags;
  const char *substring;
} LineQuery;

static gboolean
line_written (gpointer data)
{
  LineQuery *q = data;

  return e2e_find_line (q->conv, q->from, q->flags, q->substring) >= 0;
}

gboolean
e2e_wait_line (const char *conv, guint from, PurpleMessageFlags flags, const char *substring, guint timeout_ms)
{
  LineQuery q = { conv, from, flags, substring };

  return e2e_wait (line_written, &q, timeout_ms);
}

/* The message of that line, once written. */
const char *
e2e_wait_message (const char *conv, guint from, PurpleMessageFlags flags, const char *substring, guint timeout_ms)
{
  if (!e2e_wait_line (conv, from, flags, substring, timeout_ms))
    return NULL;
  return ((E2eLine *) e2e_lines->pdata[e2e_find_line (conv, from, flags, substring)])->message;
}

void
e2e_command (PurpleConversation *conv, const char *cmdline)
{
  g_autofree char *error = NULL;
  g_autofree char *markup = g_markup_escape_text (cmdline, -1);

  g_assert_cmpint (purple_cmd_do_command (conv, cmdline, markup, &error), ==, PURPLE_CMD_STATUS_OK);
}

guint
e2e_count_lines (const char *needle)
{
  guint n = 0;

  for (guint i = 0; i < e2e_lines->len; i++)
    if (strstr (((E2eLine *) e2e_lines->pdata[i])->message, needle) != NULL)
      n++;
  return n;
}

/* ---------- requests: answered as a user would, from the main loop ---------- */

typedef struct {
  PurpleRequestType type;
  void *handle;
  GCallback cb;
  void *user_data;
  int action;
  PurpleRequestFields *fields;
} Answer;

static gboolean
answer (gpointer data)
{
  Answer *a = data;

  if (a->type == PURPLE_REQUEST_ACTION && a->cb != NULL)
    ((PurpleRequestActionCb) a->cb) (a->user_data, a->action);
  else if (a->type == PURPLE_REQUEST_FIELDS && a->cb != NULL)
    ((PurpleRequestFieldsCb) a->cb) (a->user_data, a->fields);
  purple_request_close (a->type, a->handle);
  e2e_requests.n_answered++;
  g_free (a);
  return G_SOURCE_REMOVE;
}

static void
remember_text (const char *title, const char *primary, const char *secondary)
{
  g_free (e2e_requests.last_text);
  e2e_requests.last_text = g_strdup_printf ("%s\n%s\n%s", title ? title : "", primary ? primary : "",
                                            secondary ? secondary : "");
}

static void *
request_action (const char *title, const char *primary, const char *secondary, int default_action,
                PurpleAccount *account, const char *who, PurpleConversation *conv, void *user_data,
                size_t action_count, va_list actions)
{
  Answer *a = g_new0 (Answer, 1);

  remember_text (title, primary, secondary);

  e2e_requests.n_action_dialogs++;
  a->type = PURPLE_REQUEST_ACTION;
  a->handle = a;
  a->user_data = user_data;
  a->action = e2e_requests.action;
  for (size_t i = 0; i < action_count; i++)
    {
      G_GNUC_UNUSED const char *label = va_arg (actions, const char *);
      GCallback cb = va_arg (actions, GCallback);

      if ((int) i == a->action)
        a->cb = cb;
    }
  if (e2e_requests.action >= 0)
    g_idle_add (answer, a);
  return a;
}

static char *
field_text (PurpleRequestField *field)
{
  switch (purple_request_field_get_type (field))
    {
    case PURPLE_REQUEST_FIELD_BOOLEAN:
      return g_strdup (purple_request_field_bool_get_value (field) ? "1" : "0");
    case PURPLE_REQUEST_FIELD_INTEGER:
      return g_strdup_printf ("%d", purple_request_field_int_get_value (field));
    case PURPLE_REQUEST_FIELD_STRING:
      return g_strdup (purple_request_field_string_get_value (field));
    case PURPLE_REQUEST_FIELD_CHOICE:
      return g_strdup_printf ("%d", purple_request_field_choice_get_value (field));
    default:
      return g_strdup ("");
    }
}

static void
set_field (PurpleRequestField *field, const char *text)
{
  switch (purple_request_field_get_type (field))
    {
    case PURPLE_REQUEST_FIELD_BOOLEAN:
      purple_request_field_bool_set_value (field, g_strcmp0 (text, "1") == 0);
      break;
    case PURPLE_REQUEST_FIELD_INTEGER:
      purple_request_field_int_set_value (field, atoi (text));
      break;
    case PURPLE_REQUEST_FIELD_STRING:
      purple_request_field_string_set_value (field, text);
      break;
    case PURPLE_REQUEST_FIELD_CHOICE:
      purple_request_field_choice_set_value (field, atoi (text));
      break;
    default:
      break;
    }
}

/* Puts field_values into the dialog's fields, as typing would. */
static void
type_values (PurpleRequestFields *fields)
{
  for (GList *g = purple_request_fields_get_groups (fields); g != NULL; g = g->next)
    for (GList *f = purple_request_field_group_get_fields (g->data); f != NULL; f = f->next)
      {
        PurpleRequestField *field = f->data;
        const char *id = purple_request_field_get_id (field);
        const char *wanted = e2e_requests.field_values ? g_hash_table_lookup (e2e_requests.field_values, id) : NULL;

        if (wanted != NULL)
          set_field (field, wanted);
      }
}

static Answer *open_fields; /* the fields dialog left open, if any */

static void *
request_fields (const char *title, const char *primary, const char *secondary, PurpleRequestFields *fields,
                const char *ok_text, GCallback ok_cb, const char *cancel_text, GCallback cancel_cb,
                PurpleAccount *account, const char *who, PurpleConversation *conv, void *user_data)
{
  Answer *a = g_new0 (Answer, 1);

  e2e_requests.n_fields_dialogs++;
  remember_text (title, primary, secondary);
  g_hash_table_remove_all (e2e_requests.seen_fields);
  for (GList *g = purple_request_fields_get_groups (fields); g != NULL; g = g->next)
    for (GList *f = purple_request_field_group_get_fields (g->data); f != NULL; f = f->next)
      g_hash_table_insert (e2e_requests.seen_fields, g_strdup (purple_request_field_get_id (f->data)),
                           field_text (f->data));
  a->type = PURPLE_REQUEST_FIELDS;
  a->handle = a;
  a->cb = ok_cb;
  a->user_data = user_data;
  a->fields = fields;
  if (e2e_requests.leave_fields_open)
    open_fields = a;
  else
    {
      type_values (fields);
      g_idle_add (answer, a);
    }
  return a;
}

void
e2e_answer_fields (void)
{
  Answer *a = open_fields;

  g_assert_nonnull (a);
  open_fields = NULL;
  type_values (a->fields);
  answer (a);
}

static void
close_request (PurpleRequestType type, void *ui_handle)
{
  Answer *a = ui_handle;

  if (a == open_fields)
    open_fields = NULL;
  if (type == PURPLE_REQUEST_FIELDS && a != NULL && a->fields != NULL)
    {
      purple_request_fields_destroy (a->fields);
      a->fields = NULL;
    }
}

static PurpleRequestUiOps request_ops = {
  .request_action = request_action,
  .request_fields = request_fields,
  .close_request = close_request,
};

/* ---------- notifications: recorded, closed at once ---------- */

static void *
notify_message (PurpleNotifyMsgType type, const char *title, const char *primary, const char *secondary)
{
  g_ptr_array_add (e2e_notices, g_strdup_printf ("%s\n%s", primary ? primary : "", secondary ? secondary : ""));
  if (g_getenv ("E2E_VERBOSE"))
    g_printerr ("[notify] %s: %s\n", primary, secondary);
  return NULL;
}

static PurpleNotifyUiOps notify_ops = {
  .notify_message = notify_message,
};

/* ---------- buddy list ---------- */

/* What the protocol needs to join room, as its "Join a Chat" dialog would fill in. */
static GHashTable *
chat_components (PurpleAccount *account, const char *room)
{
  PurpleConnection *gc = purple_account_get_connection (account);
  PurplePluginProtocolInfo *prpl = PURPLE_PLUGIN_PROTOCOL_INFO (purple_connection_get_prpl (gc));

  return prpl->chat_info_defaults (gc, room);
}

/* Pidgin and Finch leave the save hooks empty, so libpurple fills in its own, which write blist.xml after every
 * change. With no blist UI ops at all it never writes it, and nothing of the buddy list outlives the client. */
static PurpleBlistUiOps blist_ops;

PurpleChat *
e2e_blist_add_chat (PurpleAccount *account, const char *room)
{
  PurpleChat *chat = purple_chat_new (account, NULL, chat_components (account, room));

  purple_blist_add_chat (chat, NULL, NULL);
  return chat;
}

/* ---------- sanitizer builds ---------- */

/* LeakSanitizer reads this when the tests are built with --enable-sanitizers. What libpurple, GStreamer and
 * PulseAudio allocate once while the core starts (prpl and ssl plugin types, media devices, pref callbacks),
 * libpurple's media device watch (GStreamer bus callbacks) and library constructors are never freed by design; the plugin is loaded later, outside these frames, so
 * its leaks are still reported. */
const char *__lsan_default_suppressions (void);
const char *__asan_default_options (void);

const char *
__lsan_default_suppressions (void)
{
  return "leak:purple_core_init\n"
         "leak:_dl_init\n"
         "leak:libgstreamer-1.0.so\n";
}

/* The suppressions match whole stacks: the fast unwinder stops at libpurple, built without frame pointers. */
const char *
__asan_default_options (void)
{
  return "fast_unwind_on_malloc=0";
}

/* ---------- setup ---------- */

void
e2e_client_init (const char *user_dir)
{
  e2e_lines = g_ptr_array_new_with_free_func (line_free);
  e2e_notices = g_ptr_array_new_with_free_func (g_free);
  e2e_requests.seen_fields = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  purple_util_set_user_dir (user_dir);
  purple_debug_set_enabled (g_getenv ("E2E_PURPLE_DEBUG") != NULL);
  purple_core_set_ui_ops (NULL);
  purple_eventloop_set_ui_ops (&loop_ops);
  purple_conversations_set_ui_ops (&conv_ops);
  purple_request_set_ui_ops (&request_ops);
  purple_notify_set_ui_ops (&notify_ops);
  purple_blist_set_ui_ops (&blist_ops);
  g_assert_true (purple_core_init (UI_ID));
  purple_set_blist (purple_blist_new ());
  purple_blist_load ();
  purple_prefs_load ();
  purple_savedstatus_activate (purple_savedstatus_new (NULL, PURPLE_STATUS_AVAILABLE));
}

void
e2e_client_quit (void)
{
  purple_core_quit ();
  g_clear_pointer (&e2e_lines, g_ptr_array_unref);
  g_clear_pointer (&e2e_notices, g_ptr_array_unref);
  g_clear_pointer (&e2e_requests.seen_fields, g_hash_table_unref);
  g_clear_pointer (&e2e_requests.last_text, g_free);
}

PurplePlugin *
e2e_load_plugin (void)
{
  const char *path = g_getenv ("CATCHUP_PLUGIN_SO");
  PurplePlugin *plugin;

  g_assert_nonnull (path);
  plugin = purple_plugin_probe (path);
  g_assert_nonnull (plugin);
  g_assert_true (purple_plugin_load (plugin));
  return plugin;
}

static gboolean
timed_out (gpointer data)
{
  *(gboolean *) data = TRUE;
  return G_SOURCE_REMOVE;
}

gboolean
e2e_wait (gboolean (*cond) (gpointer), gpointer data, guint timeout_ms)
{
  gboolean expired = FALSE;
  guint timer = g_timeout_add (timeout_ms, timed_out, &expired);
  gboolean ok;

  while (!(ok = cond (data)) && !expired)
    g_main_context_iteration (NULL, TRUE);
  if (!expired)
    g_source_remove (timer);
  return ok;
}

static gboolean
never (gpointer data)
{
  return FALSE;
}

void
e2e_spin (guint ms)
{
  e2e_wait (never, NULL, ms);
}

static gboolean
account_connected (gpointer data)
{
  return purple_account_is_connected (data);
}

PurpleAccount *
e2e_account_online (const char *username, const char *protocol, const char *password,
                    void (*configure) (PurpleAccount *, gpointer), gpointer data)
{
  PurpleAccount *account = purple_accounts_find (username, protocol);

  if (account == NULL)
    {
      account = purple_account_new (username, protocol);
      purple_accounts_add (account);
    }
  if (password != NULL)
    {
      purple_account_set_password (account, password);
      purple_account_set_remember_password (account, TRUE);
    }
  if (configure != NULL)
    configure (account, data);
  purple_account_set_enabled (account, UI_ID, TRUE);
  if (!purple_account_is_connected (account))
    purple_account_connect (account);
  g_assert_true (e2e_wait (account_connected, account, 20000));
  return account;
}

typedef struct {
  PurpleAccount *account;
  const char *name;
} ConvQuery;

static gboolean
conv_joined (gpointer data)
{
  ConvQuery *q = data;
  PurpleConversation *conv = purple_find_conversation_with_account (PURPLE_CONV_TYPE_CHAT, q->name, q->account);

  return conv != NULL && !purple_conv_chat_has_left (PURPLE_CONV_CHAT (conv));
}

PurpleConversation *
e2e_join (PurpleAccount *account, const char *room, const char *conv_name)
{
  GHashTable *components = chat_components (account, room);
  ConvQuery q = { account, conv_name };

  serv_join_chat (purple_account_get_connection (account), components);
  g_hash_table_destroy (components);
  g_assert_true (e2e_wait (conv_joined, &q, 20000));
  return purple_find_conversation_with_account (PURPLE_CONV_TYPE_CHAT, conv_name, account);
}

/* ---------- a second client process ---------- */

static void
client_exited (GObject *source, GAsyncResult *res, gpointer data)
{
  g_autoptr (GError) error = NULL;

  *(int *) data = g_subprocess_wait_check_finish (G_SUBPROCESS (source), res, &error) ? 1 : 2;
  if (error != NULL)
    g_printerr ("second client: %s\n", error->message);
}

static gboolean
client_done (gpointer data)
{
  return *(int *) data != 0;
}

gboolean
e2e_run_client (const char *self, const char *const *args, guint timeout_ms)
{
  g_autoptr (GPtrArray) argv = g_ptr_array_new ();
  g_autoptr (GError) error = NULL;
  g_autoptr (GSubprocess) client = NULL;
  int outcome = 0;

  g_ptr_array_add (argv, (gpointer) self);
  for (guint i = 0; args[i] != NULL; i++)
    g_ptr_array_add (argv, (gpointer) args[i]);
  g_ptr_array_add (argv, NULL);
  client = g_subprocess_newv ((const char *const *) argv->pdata, G_SUBPROCESS_FLAGS_NONE, &error);
  if (client == NULL)
    {
      g_printerr ("second client: %s\n", error->message);
      return FALSE;
    }
  g_subprocess_wait_check_async (client, NULL, client_exited, &outcome);
  return e2e_wait (client_done, &outcome, timeout_ms) && outcome == 1;
}

/* ---------- servers and data ---------- */

static void
die_with_test (gpointer data)
{
#ifdef __linux__
  /* A failed assertion aborts the test before its cleanup: the servers must not outlive it. */
  prctl (PR_SET_PDEATHSIG, SIGTERM);
#endif
}

GSubprocess *
e2e_spawn_server (GError **error, const char *const *argv)
{
  g_autoptr (GSubprocessLauncher) launcher =
    g_subprocess_launcher_new (G_SUBPROCESS_FLAGS_STDOUT_SILENCE | G_SUBPROCESS_FLAGS_STDERR_SILENCE);

  g_subprocess_launcher_set_child_setup (launcher, die_with_test, NULL, NULL);
  return g_subprocess_launcher_spawnv (launcher, argv, error);
}

gboolean
e2e_port_open (gpointer data)
{
  g_autoptr (GSocketClient) client = g_socket_client_new ();
  g_autoptr (GSocketConnection) conn = g_socket_client_connect_to_host (client, "127.0.0.1",
                                                                        GPOINTER_TO_UINT (data), NULL, NULL);
  if (conn == NULL)
    g_usleep (100000);
  return conn != NULL;
}

static char *
shared_dir (void)
{
  const char *env = g_getenv ("CATCHUP_SHARED_DIR");
  const char *top = g_getenv ("top_srcdir");

  if (env != NULL)
    return g_strdup (env);
  return g_build_filename (top ? top : ".", "..", "shared", NULL);
}

/* Lines "[HH:MM] <nick> text" of a real log, restricted to its three most active speakers. */
GPtrArray *
e2e_log_lines (guint max)
{
  g_autofree char *shared = shared_dir ();
  g_autofree char *path = g_build_filename (shared, "data", "irc-ubuntu", "dev", "2004-11-15_03.raw.txt", NULL);
  g_autofree char *text = NULL;
  g_auto (GStrv) lines = NULL;
  g_autoptr (GRegex) re = g_regex_new ("^\\[\\d\\d:\\d\\d\\] <([^>]+)> (.+)$", 0, 0, NULL);
  GPtrArray *out = g_ptr_array_new_with_free_func ((GDestroyNotify) g_strfreev);

  if (!g_file_get_contents (path, &text, NULL, NULL))
    return out;
  lines = g_strsplit (text, "\n", -1);
  for (guint i = 1000; lines[i] != NULL && out->len < max; i++)
    {
      g_autoptr (GMatchInfo) m = NULL;

      if (g_regex_match (re, lines[i], 0, &m) && g_utf8_validate (lines[i], -1, NULL))
        {
          char **pair = g_new0 (char *, 3);
          pair[0] = g_match_info_fetch (m, 1);
          pair[1] = g_match_info_fetch (m, 2);
          g_ptr_array_add (out, pair);
        }
    }
  return out;
}

GSubprocess *
e2e_start_ngircd_with (const char *dir, const char *limits, guint16 *port)
{
  g_autofree char *conf = g_build_filename (dir, "ngircd.conf", NULL);
  g_autofree char *text = NULL;
  g_autoptr (GError) error = NULL;
  g_autofree char *exe = g_find_program_in_path ("ngircd");
  GSubprocess *server;

  if (exe == NULL)
    exe = g_strdup ("/usr/sbin/ngircd");
  if (!g_file_test (exe, G_FILE_TEST_IS_EXECUTABLE))
    return NULL;
  *port = test_free_port ();
  text = g_strdup_printf ("[Global]\n\tName = irc.catchup.test\n\tInfo = catch-up test\n\tListen = 127.0.0.1\n"
                          "\tPorts = %u\n\tMotdPhrase = test\n"
                          "[Limits]\n\tMaxConnectionsIP = 0\n\tMaxNickLength = 30\n%s"
                          "[Options]\n\tDNS = no\n\tIdent = no\n\tPAM = no\n",
                          *port, limits ? limits : "");
  g_assert_true (g_file_set_contents (conf, text, -1, NULL));
  server = e2e_spawn_server (&error, (const char *const[]) { exe, "-n", "-f", conf, NULL });
  g_assert_no_error (error);
  if (!e2e_wait (e2e_port_open, GUINT_TO_POINTER (*port), 10000))
    {
      g_subprocess_force_exit (server);
      g_object_unref (server);
      return NULL;
    }
  return server;
}

void
e2e_stop_server (GSubprocess *server)
{
  if (server == NULL)
    return;
  g_subprocess_send_signal (server, SIGTERM);
  g_subprocess_wait (server, NULL, NULL);
  g_object_unref (server);
}

GSubprocess *
e2e_start_ngircd (const char *dir, guint16 *port)
{
  return e2e_start_ngircd_with (dir, NULL, port);
}

static gboolean
register_xmpp_user (const char *config, const char *user)
{
  g_autoptr (GSubprocess) p = g_subprocess_new (G_SUBPROCESS_FLAGS_STDOUT_SILENCE | G_SUBPROCESS_FLAGS_STDERR_SILENCE,
                                                NULL, "prosodyctl", "--config", config, "register", user,
                                                "localhost", "secret", NULL);

  return p != NULL && g_subprocess_wait_check (p, NULL, NULL);
}

GSubprocess *
e2e_start_prosody (const char *dir, const char *muc_options, const char *const *users, guint16 *port)
{
  g_autofree char *config = g_build_filename (dir, "prosody.cfg.lua", NULL);
  g_autofree char *data = g_build_filename (dir, "prosody-data", NULL);
  g_autofree char *exe = g_find_program_in_path ("prosody");
  g_autofree char *ctl = g_find_program_in_path ("prosodyctl");
  g_autofree char *text = NULL;
  GSubprocess *server;

  if (exe == NULL || ctl == NULL)
    return NULL;
  *port = test_free_port ();
  g_mkdir_with_parents (data, 0700);
  /* Loopback only, no TLS, plain passwords, no rate limits (mod_limits is not loaded): a throwaway server.
   * Root is allowed because CI runs the suite as root. */
  text = g_strdup_printf ("run_as_root = true\n"
                          "pidfile = \"%s/prosody.pid\"\n"
                          "data_path = \"%s\"\n"
                          "interfaces = { \"127.0.0.1\" }\n"
                          "c2s_ports = { %u }\n"
                          "c2s_direct_tls_ports = {}\n"
                          "s2s_ports = {}\nhttp_ports = {}\nhttps_ports = {}\n"
                          "c2s_require_encryption = false\n"
                          "allow_unencrypted_plain_auth = true\n"
                          "authentication = \"internal_plain\"\n"
                          "modules_enabled = { \"roster\", \"saslauth\", \"disco\", \"ping\" }\n"
                          "modules_disabled = { \"s2s\", \"tls\" }\n"
                          "log = { warn = \"%s/prosody.log\" }\n"
                          "VirtualHost \"localhost\"\n"
                          "Component \"conference.localhost\" \"muc\"\n"
                          "  muc_room_locking = false\n%s",
                          dir, data, *port, dir, muc_options ? muc_options : "");
  g_assert_true (g_file_set_contents (config, text, -1, NULL));
  for (guint i = 0; users[i] != NULL; i++)
    if (!register_xmpp_user (config, users[i]))
      return NULL;
  server = e2e_spawn_server (NULL, (const char *const[]) { exe, "--config", config, "-F", NULL });
  if (server != NULL && !e2e_wait (e2e_port_open, GUINT_TO_POINTER (*port), 15000))
    {
      g_subprocess_force_exit (server);
      g_clear_object (&server);
    }
  return server;
}

static gboolean
notice_after (gpointer data)
{
  return e2e_notices->len > GPOINTER_TO_UINT (data);
}

const char *
e2e_run_import_action (PurplePlugin *plugin)
{
  GList *actions = PURPLE_PLUGIN_ACTIONS (plugin, NULL);
  PurplePluginAction *action;
  guint n = e2e_notices->len;

  g_assert_nonnull (actions);
  action = actions->data;
  action->plugin = plugin;
  action->callback (action);
  g_list_free_full (actions, (GDestroyNotify) purple_plugin_action_free);
  g_assert_true (e2e_wait (notice_after, GUINT_TO_POINTER (n), 20000));
  return e2e_notices->pdata[n];
}
