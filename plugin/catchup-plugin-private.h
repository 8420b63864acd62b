#pragma once

/* Shared between the plugin's modules only; nothing here is exported from catchup.so. */

#define PURPLE_PLUGINS
#include <glib/gi18n-lib.h>

#include <account.h>
#include <blist.h>
#include <conversation.h>
#include <plugin.h>
#include <pluginpref.h>

#include "catchup.h"
#include "catchup-writer.h"

#define CATCHUP_PLUGIN_ID "core-purple-catchup-catchup"

/* Preferences: every path is spelled once, here. */
#define CATCHUP_PREFS_ROOT           "/plugins/core/catchup"
#define CATCHUP_PREF_ENDPOINT        CATCHUP_PREFS_ROOT "/endpoint"
#define CATCHUP_PREF_CHAT_MODEL      CATCHUP_PREFS_ROOT "/chat_model"
#define CATCHUP_PREF_EMBED_MODEL     CATCHUP_PREFS_ROOT "/embedding_model"
#define CATCHUP_PREF_API_KEY         CATCHUP_PREFS_ROOT "/api_key"
#define CATCHUP_PREF_TIMEOUT         CATCHUP_PREFS_ROOT "/timeout"
#define CATCHUP_PREF_THINKING        CATCHUP_PREFS_ROOT "/thinking"
#define CATCHUP_PREF_INDEX_IMS       CATCHUP_PREFS_ROOT "/index_ims"
#define CATCHUP_PREF_RETENTION_DAYS  CATCHUP_PREFS_ROOT "/retention_days"
#define CATCHUP_PREF_DB_PATH         CATCHUP_PREFS_ROOT "/database"
/* Whether to index while libpurple's chat logging is off: CATCHUP_INDEX_UNLOGGED_*. */
#define CATCHUP_PREF_INDEX_UNLOGGED  CATCHUP_PREFS_ROOT "/index_unlogged"
/* Quiet period after a join before the automatic catch-up looks at what arrived (history playback settles). */
#define CATCHUP_PREF_SETTLE_MS       CATCHUP_PREFS_ROOT "/settle_ms"
/* Minimum time between two automatic catch-ups of one room. */
#define CATCHUP_PREF_COOLDOWN        CATCHUP_PREFS_ROOT "/cooldown_seconds"
/* How often the rooms the client is in are recorded as such (what a crash leaves behind). */
#define CATCHUP_PREF_HEARTBEAT       CATCHUP_PREFS_ROOT "/heartbeat_seconds"
/* Pause between two lines posted to a room. */
#define CATCHUP_PREF_POST_INTERVAL   CATCHUP_PREFS_ROOT "/post_interval_ms"
/* Defaults for rooms without settings of their own. */
#define CATCHUP_PREFS_DEFAULTS       CATCHUP_PREFS_ROOT "/defaults"
#define CATCHUP_PREF_DEF_INDEX       CATCHUP_PREFS_DEFAULTS "/index"
#define CATCHUP_PREF_DEF_AUTO        CATCHUP_PREFS_DEFAULTS "/auto"
#define CATCHUP_PREF_DEF_THRESHOLD   CATCHUP_PREFS_DEFAULTS "/threshold"
#define CATCHUP_PREF_DEF_BUDGET      CATCHUP_PREFS_DEFAULTS "/budget"
#define CATCHUP_PREF_DEF_MAX_WINDOW  CATCHUP_PREFS_DEFAULTS "/max_window"
#define CATCHUP_PREF_DEF_LANGUAGE    CATCHUP_PREFS_DEFAULTS "/language"
#define CATCHUP_PREF_DEF_LENGTH      CATCHUP_PREFS_DEFAULTS "/length"
#define CATCHUP_PREF_DEF_ALLOW_POST  CATCHUP_PREFS_DEFAULTS "/allow_post"

/* State the modules share while the plugin is loaded. */
typedef struct {
  PurplePlugin *plugin;
  CatchupWriter *writer;        /* NULL when the database could not be opened */
  GCancellable *cancellable;    /* cancelled on unload: every async callback checks it first */
} CatchupPlugin;

extern CatchupPlugin catchup_plugin;

/* A room's identity in the store; survives the conversation it was taken from. */
typedef struct {
  char *protocol;
  char *account;
  char *name;
  PurpleConversationType type;
} CatchupRoomKey;

CatchupRoomKey *catchup_room_key_new (PurpleConversation *conv);
CatchupRoomKey *catchup_room_key_new_for (PurpleAccount *account, const char *name, PurpleConversationType type);
CatchupRoomKey *catchup_room_key_copy (const CatchupRoomKey *key);
void catchup_room_key_free (CatchupRoomKey *key);
/* "protocol/account/name", as catchup_store_find_room takes it. */
char *catchup_room_key_spec (const CatchupRoomKey *key);
/* The open conversation of key, or NULL when it was closed or its account went away. */
PurpleConversation *catchup_room_key_find_conv (const CatchupRoomKey *key);
/* The result of a writer call made for key's room (catchup_writer_call_finish), with the room's conversation in
 * *conv; *conv is NULL when the conversation was closed meanwhile or the plugin unloaded (then nothing was
 * finished). */
gpointer catchup_room_call_finish (GAsyncResult *res, const CatchupRoomKey *key, PurpleConversation **conv,
                                   GError **error);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (CatchupRoomKey, catchup_room_key_free)

/* Core log messages (GLib domain "catchup") go to purple_debug, on the main loop, while the plugin is loaded. */
void catchup_log_start (void);
void catchup_log_stop (void);

/* The language model (catchup-model.c): settings from the preferences (NULL without an endpoint), and the
 * background embedding of the history while an embedding model is configured. */
CatchupLlmConfig *catchup_model_config_from_prefs (void);
void catchup_model_start (void);
void catchup_model_stop (void);

/* Per-room settings. */
typedef struct {
  gboolean index;
  gboolean auto_catchup;
  int threshold;
  int budget;
  int max_window;
  char *language;     /* NULL: the room's own */
  CatchupLength length;
  gboolean allow_post;
} CatchupRoomSettings;

/* IMs (and unknown rooms) get the defaults from the preferences. */
void catchup_room_settings_get (PurpleConversation *conv, CatchupRoomSettings *out);
void catchup_room_settings_clear (CatchupRoomSettings *settings);
void catchup_room_settings_dialog (PurpleAccount *account, const char *name, PurpleConversation *conv);
/* The range a number setting accepts, by its default's pref path: the room dialog and the preferences share it. */
void catchup_room_settings_bounds (const char *pref, int *min, int *max);
/* The summary languages as the choices of a string pref: "" for the room's own, else the English name. */
void catchup_room_settings_language_choices (PurplePluginPref *pref);
/* Reads the store's settings of a room outside the buddy list into the cache. */
void catchup_room_settings_prefetch (PurpleConversation *conv);
void catchup_room_settings_start (PurplePlugin *plugin);
void catchup_room_settings_stop (void);

/* Preferences. */
void catchup_prefs_init (void);
PurplePluginPrefFrame *catchup_prefs_frame (PurplePlugin *plugin);
char *catchup_prefs_db_path (void);

/* Signals (catchup-signals.c): connects the modules below to libpurple's signals; presence as the user comes
 * and goes. */
void catchup_signals_start (PurplePlugin *plugin);
void catchup_signals_stop (void);
void catchup_signals_mark_present (PurpleConversation *conv);

/* Indexing (catchup-indexing.c): a line written into a conversation becomes a message of its room's history. */
void catchup_indexing_add (PurpleConversation *conv, const char *who, const char *markup, PurpleMessageFlags flags);
/* Whether conv's room is indexed: its settings, the IM preference and the consent to index unlogged chats. */
gboolean catchup_indexing_wanted (PurpleConversation *conv);

/* The automatic catch-up on rejoin (catchup-rejoin.c): a quiet period after the join lets history playback
 * arrive, then a catch-up runs when enough was said since the user was last present. */
void catchup_rejoin_joined (PurpleConversation *conv);
/* A line arrived: a quiet period still running starts again. */
void catchup_rejoin_activity (PurpleConversation *conv);
void catchup_rejoin_left (PurpleConversation *conv);
/* Monotonic microseconds of conv's last join in this session; 0 when none was seen. */
gint64 catchup_rejoin_joined_at (PurpleConversation *conv);
void catchup_rejoin_start (void);
void catchup_rejoin_stop (void);

/* Renames (catchup-nicks.c): libpurple 2.x tells none, so they are inferred from the chat buddies and kept in the
 * room's nick history. */
void catchup_nicks_buddy_joined (PurpleConversation *conv, const char *name);
void catchup_nicks_buddy_leaving (PurpleConversation *conv, const char *name);
void catchup_nicks_buddy_deleting (PurpleConvChatBuddy *cb);
void catchup_nicks_conversation_closed (PurpleConversation *conv);
void catchup_nicks_start (void);
void catchup_nicks_stop (void);

/* The /catchup command (catchup-commands.c): its words, its help, and which module answers. */
void catchup_commands_start (PurplePlugin *plugin);
void catchup_commands_stop (void);
/* /catchup ask QUESTION and /catchup @nick (catchup-social.c); FALSE when words are neither. */
gboolean catchup_social_dispatch (PurpleConversation *conv, char **words);
/* /catchup status and /catchup forget (catchup-status.c). */
void catchup_status_show (PurpleConversation *conv);
void catchup_status_ask_forget (PurpleConversation *conv);

/* The catch-up itself (catchup-run.c): window (catchup-window.h, capped here by the room's maximum) resolved on
 * the writer after the lines still queued, a first line saying what it covers, the engine, the result. arg is
 * the window as typed, for the answer to an empty one (NULL: none typed); automatic ones say nothing when there is
 * nothing to say. */
void catchup_run (PurpleConversation *conv, const CatchupWindow *window, const char *arg, gboolean post,
                  gboolean automatic);

/* "Last present" per room on the main loop (the XMPP join asks for the history since then). */
void catchup_presence_note (const CatchupRoomKey *key, gint64 ts);
/* On a join: since when the client was not in the room (0: unknown); on IRC, tells an absence it could not see,
 * once. */
gint64 catchup_presence_joined (PurpleConversation *conv);
/* "Nothing new since you rejoined at 10:02; the 48 minutes before were not received." while that holds, else
 * NULL. */
char *catchup_presence_gap_text (PurpleConversation *conv);
/* A bouncer played the room's backlog back after the join: the absence was not a gap after all. */
void catchup_presence_played_back (PurpleConversation *conv);
void catchup_presence_start (PurplePlugin *plugin);
void catchup_presence_stop (void);

/* Privacy (catchup-privacy.c): with libpurple's chat logging off, nothing is indexed until the user says so. */
enum {
  CATCHUP_INDEX_UNLOGGED_ASK,
  CATCHUP_INDEX_UNLOGGED_YES,
  CATCHUP_INDEX_UNLOGGED_NO,
};
/* Asks (once a session) while undecided. */
gboolean catchup_privacy_allows_index (void);
void catchup_privacy_add_pref (PurplePluginPrefFrame *frame);
/* Where the history is kept, its size, its retention, and whether conv's room is indexed. */
char *catchup_privacy_status_text (PurpleConversation *conv);
void catchup_privacy_stop (void);

/* History retention: prunes what is older than the preference keeps, on load, daily and after a change. */
void catchup_retention_start (PurplePlugin *plugin);
void catchup_retention_stop (void);

/* Backfill from the user's chat logs. conv (may be NULL) is where the progress goes; without it, a
 * notification tells the result. */
void catchup_backfill_room (PurpleAccount *account, const char *name, PurpleConversation *conv);
void catchup_backfill_all (void);
GList *catchup_backfill_actions (PurplePlugin *plugin, gpointer context);
void catchup_backfill_stop (void);

/* Faults of the history writer told in the conversations whose messages it keeps; at unload, what it could not
 * write is told too. stop stops and frees the writer. */
void catchup_save_status_start (void);
void catchup_save_status_stop (void);

/* A catch-up in words (catchup-render.c): rows of plain, sanitised text, times in the user's zone. for_room
 * leaves out what is for the user alone (topics left out, the model notice). */
typedef enum {
  CATCHUP_ROW_HEADLINE,   /* "45 messages from 6 people, Tue 14:43 – Wed 10:23" */
  CATCHUP_ROW_SECTION,    /* a section's title */
  CATCHUP_ROW_LINE,       /* speaker (may be NULL), when (may be NULL), text */
  CATCHUP_ROW_ITEM,       /* under the line before: a resolved reference, a reply, an assent, a replaced state */
  CATCHUP_ROW_NOTE,
} CatchupRowKind;

typedef struct {
  CatchupRowKind kind;
  char *speaker;
  char *when;
  char *text;
} CatchupRow;

GPtrArray *catchup_render_rows (const CatchupSummary *summary, gboolean for_room);
/* A time of the room's history for a notice, in the user's zone: the clock alone today, the weekday within the
 * last six days, else the date too. */
char *catchup_render_time (gint64 ts);
/* A count for a translated notice: numbers are formatted outside the strings, as xgettext cannot read
 * G_GINT64_FORMAT. */
char *catchup_render_count (gint64 n);
/* n for ngettext, clamped to what it takes. */
gulong catchup_render_plural (gint64 n);

/* Output into conversations. */
/* Whether the UI is Finch (its text view and request fields differ from Pidgin's). */
gboolean catchup_output_in_finch (void);
void catchup_output_local (PurpleConversation *conv, const char *plain_text);
void catchup_output_result (PurpleConversation *conv, const CatchupResult *result);
/* Shows the exact lines /catchup post would send, and sends them (rate-limited) only when the user presses Post. */
void catchup_output_ask_post (PurpleConversation *conv, const CatchupResult *result);
/* TRUE (once) when text is a line this plugin posted to the room: its echo must not be indexed. */
gboolean catchup_output_take_echo (PurpleConversation *conv, const char *plain_text);
void catchup_output_stop (void);
