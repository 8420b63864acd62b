#pragma once

/* A headless libpurple client for end-to-end tests: real accounts, the built plugin, captured output. */

#include <gio/gio.h>

#include <account.h>
#include <blist.h>
#include <conversation.h>
#include <notify.h>
#include <plugin.h>
#include <request.h>

G_BEGIN_DECLS

/* One line the client wrote into a conversation. */
typedef struct {
  char *conv;
  char *who;
  char *message;
  PurpleMessageFlags flags;
  time_t when;
} E2eLine;

/* What the request UI answers. */
typedef struct {
  int action;                 /* index chosen in purple_request_action (-1: leave open) */
  GHashTable *field_values;   /* field id -> text to put in before pressing OK (may be NULL) */
  GHashTable *seen_fields;    /* filled: field id -> text shown in the last fields dialog */
  guint n_fields_dialogs;
  guint n_action_dialogs;
  guint n_answered;           /* dialogs whose callback ran */
  gboolean leave_fields_open; /* fields dialogs wait for e2e_answer_fields instead of being answered at once */
  char *last_text;            /* "title\nprimary\nsecondary" of the last dialog shown */
} E2eRequests;

extern GPtrArray *e2e_lines;  /* E2eLine, everything written */
extern GPtrArray *e2e_notices; /* "primary\nsecondary" of every notification shown */
extern E2eRequests e2e_requests;

/* Answers the fields dialog left open (leave_fields_open) with field_values typed in, as OK. */
void e2e_answer_fields (void);

/* Temp user dir, core, buddy list. */
void e2e_client_init (const char *user_dir);
void e2e_client_quit (void);
PurplePlugin *e2e_load_plugin (void);

/* Iterates the main loop until cond(data) or timeout; returns cond's last value. */
gboolean e2e_wait (gboolean (*cond) (gpointer), gpointer data, guint timeout_ms);
void e2e_spin (guint ms);

PurpleAccount *e2e_account_online (const char *username, const char *protocol, const char *password,
                                   void (*configure) (PurpleAccount *, gpointer), gpointer data);
PurpleConversation *e2e_join (PurpleAccount *account, const char *room, const char *conv_name);
/* Puts room into the buddy list, as "Add Chat" does. */
PurpleChat *e2e_blist_add_chat (PurpleAccount *account, const char *room);

/* Lines written into conv (by name) after index from with all of flags; returns the first index or -1. */
int e2e_find_line (const char *conv, guint from, PurpleMessageFlags flags, const char *substring);
/* Runs the main loop until such a line is written or timeout_ms pass; TRUE when it was. */
gboolean e2e_wait_line (const char *conv, guint from, PurpleMessageFlags flags, const char *substring,
                        guint timeout_ms);
/* The same, returning the line's message (NULL when none came). */
const char *e2e_wait_message (const char *conv, guint from, PurpleMessageFlags flags, const char *substring,
                              guint timeout_ms);
/* Runs cmdline ("catchup 20", without the slash) in conv as if typed, asserting libpurple took it. */
void e2e_command (PurpleConversation *conv, const char *cmdline);

/* How many lines written so far (into any conversation) contain needle. */
guint e2e_count_lines (const char *needle);

/* Runs this test program (self) again with args as a client of its own, waited for from the main loop so that
 * this one's connections stay answered; TRUE when it exited with status 0. */
gboolean e2e_run_client (const char *self, const char *const *args, guint timeout_ms);

/* Servers and data shared by the end-to-end tests. */
/* Whether something accepts connections on 127.0.0.1:port (a wait condition: pass the port as pointer). */
gboolean e2e_port_open (gpointer port);
/* Starts a server (output silenced) that is ended with the test even when an assertion aborts it. */
GSubprocess *e2e_spawn_server (GError **error, const char *const *argv);
/* Ends a server (may be NULL) and waits for it. */
void e2e_stop_server (GSubprocess *server);
/* ngircd on a free port of 127.0.0.1 (port set), its configuration in dir; NULL when it is not installed or
 * does not come up. */
GSubprocess *e2e_start_ngircd (const char *dir, guint16 *port);
/* The same with lines added to its [Limits] section ("\tMaxPenaltyTime = 0\n"); limits may be NULL. */
GSubprocess *e2e_start_ngircd_with (const char *dir, const char *limits, guint16 *port);
/* prosody on a free port of 127.0.0.1 (port set) with the MUC conference.localhost (muc_options: lines added to
 * its component, may be NULL), the NULL-terminated users registered with the password "secret"; NULL when it
 * is not installed or does not come up. */
GSubprocess *e2e_start_prosody (const char *dir, const char *muc_options, const char *const *users, guint16 *port);
/* [nick, text] pairs (GStrv) of real IRC log lines; empty when the shared data is absent. */
GPtrArray *e2e_log_lines (guint max);

/* Runs the plugin's first action ("Import all chat logs into catch-up") and returns the notice it shows. */
const char *e2e_run_import_action (PurplePlugin *plugin);

G_END_DECLS
