#include "config.h"

#include "catchup-plugin-private.h"

#include <stdlib.h>

#include <core.h>
#include <debug.h>
#include <prefs.h>
#include <request.h>
#include <util.h>

/* Set on a chat's buddy-list node once the user saved its settings; until then the defaults apply. */
#define NODE_CONFIGURED "catchup-configured"

typedef enum { KIND_BOOL, KIND_INT, KIND_LANGUAGE, KIND_LENGTH } SettingKind;

/* One setting: its key (buddy-list node key, and the store's key without the prefix), default pref, place. */
typedef struct {
  const char *node_key;
  const char *pref;
  SettingKind kind;
  gsize offset;
  const char *label;
  int min, max;
} Setting;

#define FIELD(f) G_STRUCT_OFFSET (CatchupRoomSettings, f)

static const Setting settings[] = {
  { "catchup-index", CATCHUP_PREF_DEF_INDEX, KIND_BOOL, FIELD (index), N_("Keep a history index of this room"), 0, 0 },
  { "catchup-auto", CATCHUP_PREF_DEF_AUTO, KIND_BOOL, FIELD (auto_catchup),
    N_("Catch up automatically when I rejoin"), 0, 0 },
  { "catchup-threshold", CATCHUP_PREF_DEF_THRESHOLD, KIND_INT, FIELD (threshold),
    N_("…if at least this many messages arrived"), 1, 100000 },
  { "catchup-budget", CATCHUP_PREF_DEF_BUDGET, KIND_INT, FIELD (budget), N_("Memory budget (tokens)"), 64, 65536 },
  { "catchup-max-window", CATCHUP_PREF_DEF_MAX_WINDOW, KIND_INT, FIELD (max_window),
    N_("Catch up on at most this many messages"), 1, 100000 },
  { "catchup-language", CATCHUP_PREF_DEF_LANGUAGE, KIND_LANGUAGE, FIELD (language), N_("Summary language"), 0, 0 },
  { "catchup-length", CATCHUP_PREF_DEF_LENGTH, KIND_LENGTH, FIELD (length), N_("Summary length"), 0, 0 },
  { "catchup-allow-post", CATCHUP_PREF_DEF_ALLOW_POST, KIND_BOOL, FIELD (allow_post),
    N_("Allow /catchup post to send summaries to this room"), 0, 0 },
};

#define SLOT(s, setting, type) (*(type *) G_STRUCT_MEMBER_P ((s), (setting)->offset))

/* The summary languages offered: the English name is what is stored and what the model is asked for (older
 * versions stored whatever was typed, often the code). Choice 0 is the room's own language. */
static const struct {
  const char *code;
  const char *name;
} languages[] = {
  { "ar", N_("Arabic") }, { "zh", N_("Chinese") }, { "cs", N_("Czech") }, { "da", N_("Danish") },
  { "nl", N_("Dutch") }, { "en", N_("English") }, { "fi", N_("Finnish") }, { "fr", N_("French") },
  { "de", N_("German") }, { "el", N_("Greek") }, { "he", N_("Hebrew") }, { "hi", N_("Hindi") },
  { "hu", N_("Hungarian") }, { "it", N_("Italian") }, { "ja", N_("Japanese") }, { "ko", N_("Korean") },
  { "nb", N_("Norwegian") }, { "pl", N_("Polish") }, { "pt", N_("Portuguese") }, { "ro", N_("Romanian") },
  { "ru", N_("Russian") }, { "es", N_("Spanish") }, { "sv", N_("Swedish") }, { "tr", N_("Turkish") },
  { "uk", N_("Ukrainian") },
};

/* The index in languages of a stored value (its English name or code, any case), or -1. */
static int
language_index (const char *text)
{
  for (guint i = 0; text != NULL && i < G_N_ELEMENTS (languages); i++)
    if (g_ascii_strcasecmp (text, languages[i].name) == 0 || g_ascii_strcasecmp (text, languages[i].code) == 0)
      return (int) i;
  return -1;
}

void
catchup_room_settings_language_choices (PurplePluginPref *pref)
{
  purple_plugin_pref_add_choice (pref, _("The room's own"), (gpointer) "");
  for (guint i = 0; i < G_N_ELEMENTS (languages); i++)
    purple_plugin_pref_add_choice (pref, _(languages[i].name), (gpointer) languages[i].name);
}

void
catchup_room_settings_bounds (const char *pref, int *min, int *max)
{
  for (guint i = 0; i < G_N_ELEMENTS (settings); i++)
    if (strcmp (settings[i].pref, pref) == 0)
      {
        *min = settings[i].min;
        *max = settings[i].max;
        return;
      }
  g_return_if_reached ();
}

/* Settings of rooms outside the buddy list, as read from the store: room spec -> (node key -> text). */
static GHashTable *fallback_cache;

static const char *
store_key (const Setting *setting)
{
  return setting->node_key + strlen ("catchup-");
}

static void
set_from_text (CatchupRoomSettings *out, const Setting *setting, const char *text)
{
  switch (setting->kind)
    {
    case KIND_BOOL:
      SLOT (out, setting, gboolean) = g_strcmp0 (text, "1") == 0;
      break;
    case KIND_INT:
      SLOT (out, setting, int) = CLAMP (atoi (text), setting->min, setting->max);
      break;
    case KIND_LENGTH:
      SLOT (out, setting, CatchupLength) = CLAMP (atoi (text), CATCHUP_LENGTH_SHORT, CATCHUP_LENGTH_DETAILED);
      break;
    case KIND_LANGUAGE:
      {
        int i = language_index (text);

        /* a language no longer offered (or never valid) falls back on the room's own */
        g_free (SLOT (out, setting, char *));
        SLOT (out, setting, char *) = i >= 0 ? g_strdup (languages[i].name) : NULL;
      }
      break;
    }
}

static char *
to_text (const CatchupRoomSettings *in, const Setting *setting)
{
  switch (setting->kind)
    {
    case KIND_BOOL:
      return g_strdup (SLOT (in, setting, gboolean) ? "1" : "0");
    case KIND_INT:
      return g_strdup_printf ("%d", SLOT (in, setting, int));
    case KIND_LENGTH:
      return g_strdup_printf ("%d", (int) SLOT (in, setting, CatchupLength));
    case KIND_LANGUAGE:
      return g_strdup (SLOT (in, setting, char *) ? SLOT (in, setting, char *) : "");
    }
  g_return_val_if_reached (NULL);
}

static void
read_defaults (CatchupRoomSettings *out)
{
  for (guint i = 0; i < G_N_ELEMENTS (settings); i++)
    {
      const Setting *s = &settings[i];
      g_autofree char *text = NULL;

      if (s->kind == KIND_BOOL)
        text = g_strdup (purple_prefs_get_bool (s->pref) ? "1" : "0");
      else if (s->kind == KIND_LANGUAGE)
        text = g_strdup (purple_prefs_get_string (s->pref));
      else
        text = g_strdup_printf ("%d", purple_prefs_get_int (s->pref));
      set_from_text (out, s, text ? text : "");
    }
}

static void
read_node (PurpleBlistNode *node, CatchupRoomSettings *out)
{
  for (guint i = 0; i < G_N_ELEMENTS (settings); i++)
    {
      const Setting *s = &settings[i];
      g_autofree char *text = NULL;

      if (s->kind == KIND_BOOL)
        text = g_strdup (purple_blist_node_get_bool (node, s->node_key) ? "1" : "0");
      else if (s->kind == KIND_LANGUAGE)
        text = g_strdup (purple_blist_node_get_string (node, s->node_key));
      else
        text = g_strdup_printf ("%d", purple_blist_node_get_int (node, s->node_key));
      set_from_text (out, s, text ? text : "");
    }
}

static void
write_node (PurpleBlistNode *node, const CatchupRoomSettings *in)
{
  for (guint i = 0; i < G_N_ELEMENTS (settings); i++)
    {
      const Setting *s = &settings[i];

      if (s->kind == KIND_BOOL)
        purple_blist_node_set_bool (node, s->node_key, SLOT (in, s, gboolean));
      else if (s->kind == KIND_LANGUAGE)
        purple_blist_node_set_string (node, s->node_key, SLOT (in, s, char *) ? SLOT (in, s, char *) : "");
      else if (s->kind == KIND_INT)
        purple_blist_node_set_int (node, s->node_key, SLOT (in, s, int));
      else
        purple_blist_node_set_int (node, s->node_key, SLOT (in, s, CatchupLength));
    }
  purple_blist_node_set_bool (node, NODE_CONFIGURED, TRUE);
}

static PurpleBlistNode *
chat_node (PurpleAccount *account, const char *name)
{
  PurpleChat *chat = purple_blist_find_chat (account, name);

  return chat ? (PurpleBlistNode *) chat : NULL;
}

static void
settings_for (PurpleAccount *account, const char *name, CatchupRoomSettings *out)
{
  PurpleBlistNode *node = chat_node (account, name);
  g_autoptr (CatchupRoomKey) key = NULL;
  g_autofree char *spec = NULL;
  GHashTable *stored;

  memset (out, 0, sizeof *out);
  read_defaults (out);
  if (node != NULL && purple_blist_node_get_bool (node, NODE_CONFIGURED))
    {
      read_node (node, out);
      return;
    }
  key = catchup_room_key_new_for (account, name, PURPLE_CONV_TYPE_CHAT);
  spec = catchup_room_key_spec (key);
  stored = fallback_cache ? g_hash_table_lookup (fallback_cache, spec) : NULL;
  for (guint i = 0; stored != NULL && i < G_N_ELEMENTS (settings); i++)
    {
      const char *text = g_hash_table_lookup (stored, settings[i].node_key);

      if (text != NULL)
        set_from_text (out, &settings[i], text);
    }
}

void
catchup_room_settings_get (PurpleConversation *conv, CatchupRoomSettings *out)
{
  if (purple_conversation_get_type (conv) != PURPLE_CONV_TYPE_CHAT)
    {
      memset (out, 0, sizeof *out);
      read_defaults (out);
      return;
    }
  settings_for (purple_conversation_get_account (conv), purple_conversation_get_name (conv), out);
}

void
catchup_room_settings_clear (CatchupRoomSettings *settings_)
{
  g_clear_pointer (&settings_->language, g_free);
}

/* ---------- the store fallback (rooms outside the buddy list) ---------- */

typedef struct {
  CatchupRoomKey *key;
  GHashTable *values;   /* node key -> text; NULL when reading */
} FallbackJob;

static void
fallback_job_free (gpointer data)
{
  FallbackJob *job = data;

  catchup_room_key_free (job->key);
  g_clear_pointer (&job->values, g_hash_table_unref);
  g_free (job);
}

static gpointer
read_fallback (CatchupStore *store, gpointer data, GError **error)
{
  FallbackJob *job = data;
  g_autoptr (GHashTable) values = g_hash_table_new_full (g_str_hash, g_str_equal, NULL, g_free);
  gint64 room = catchup_store_ensure_room (store, job->key->protocol, job->key->account, job->key->name, error);

  if (room == 0)
    return NULL;
  for (guint i = 0; i < G_N_ELEMENTS (settings); i++)
    {
      GError *local = NULL;
      char *text = catchup_store_get_setting (store, room, store_key (&settings[i]), &local);

      if (local != NULL)
        {
          g_propagate_error (error, local);
          return NULL;
        }
      if (text != NULL)
        g_hash_table_insert (values, (gpointer) settings[i].node_key, text);
    }
  return g_steal_pointer (&values);
}

static gpointer
write_fallback (CatchupStore *store, gpointer data, GError **error)
{
  FallbackJob *job = data;
  gint64 room = catchup_store_ensure_room (store, job->key->protocol, job->key->account, job->key->name, error);

  if (room == 0)
    return NULL;
  for (guint i = 0; i < G_N_ELEMENTS (settings); i++)
    {
      const char *text = g_hash_table_lookup (job->values, settings[i].node_key);

      if (!catchup_store_set_setting (store, room, store_key (&settings[i]), text, error))
        return NULL;
    }
  return NULL;
}

static void
cache_values (const CatchupRoomKey *key, GHashTable *values)
{
  if (fallback_cache == NULL)
    return;
  g_hash_table_insert (fallback_cache, catchup_room_key_spec (key), g_hash_table_ref (values));
}

static void
fallback_read_done (GObject *source, GAsyncResult *result, gpointer data)
{
  g_autoptr (CatchupRoomKey) key = data;
  g_autoptr (GError) error = NULL;
  g_autoptr (GHashTable) values = NULL;

  if (g_cancellable_is_cancelled (g_task_get_cancellable (G_TASK (result))))
    return;
  values = catchup_writer_call_finish (catchup_plugin.writer, result, &error);
  if (values == NULL)
    {
      if (error != NULL)
        purple_debug_warning ("catchup", "room settings: %s\n", error->message);
      return;
    }
  cache_values (key, values);
}

/* Every stored room's settings, read once at load: rooms rejoined at start-up then find theirs before their
 * first message is indexed, instead of a moment after the join. GPtrArray of (spec, values) pairs, flat. */
static gpointer
read_all_fallbacks (CatchupStore *store, gpointer data, GError **error)
{
  g_autoptr (GPtrArray) rooms = catchup_store_list_rooms (store, error);
  g_autoptr (GPtrArray) out = g_ptr_array_new ();

  if (rooms == NULL)
    return NULL;
  for (guint r = 0; r < rooms->len; r++)
    {
      CatchupRoomInfo *info = rooms->pdata[r];
      CatchupRoomKey key = { info->protocol, info->account, info->name, PURPLE_CONV_TYPE_CHAT };
      FallbackJob job = { &key, NULL };
      GHashTable *values = read_fallback (store, &job, error);

      if (values == NULL)
        return NULL;
      if (g_hash_table_size (values) == 0)
        {
          g_hash_table_unref (values);
          continue;
        }
      g_ptr_array_add (out, catchup_room_key_spec (&key));
      g_ptr_array_add (out, values);
    }
  return g_steal_pointer (&out);
}

static void
free_fallback_pairs (gpointer data)
{
  GPtrArray *pairs = data;

  for (guint i = 0; i + 1 < pairs->len; i += 2)
    {
      g_free (pairs->pdata[i]);
      g_hash_table_unref (pairs->pdata[i + 1]);
    }
  g_ptr_array_unref (pairs);
}

static void
preload_done (GObject *source, GAsyncResult *result, gpointer data)
{
  g_autoptr (GError) error = NULL;
  GPtrArray *pairs;

  if (g_cancellable_is_cancelled (g_task_get_cancellable (G_TASK (result))))
    return;
  pairs = catchup_writer_call_finish (catchup_plugin.writer, result, &error);
  if (pairs == NULL)
    {
      if (error != NULL)
        purple_debug_warning ("catchup", "room settings: %s\n", error->message);
      return;
    }
  /* a room read or saved since the preload was queued has fresher values than these */
  for (guint i = 0; fallback_cache != NULL && i + 1 < pairs->len; i += 2)
    if (!g_hash_table_contains (fallback_cache, pairs->pdata[i]))
      g_hash_table_insert (fallback_cache, g_strdup (pairs->pdata[i]), g_hash_table_ref (pairs->pdata[i + 1]));
  free_fallback_pairs (pairs);
}

void
catchup_room_settings_prefetch (PurpleConversation *conv)
{
  FallbackJob *job;

  if (catchup_plugin.writer == NULL || purple_conversation_get_type (conv) != PURPLE_CONV_TYPE_CHAT)
    return;
  if (chat_node (purple_conversation_get_account (conv), purple_conversation_get_name (conv)) != NULL)
    return;
  job = g_new0 (FallbackJob, 1);
  job->key = catchup_room_key_new (conv);
  catchup_writer_call_async (catchup_plugin.writer, read_fallback, job, fallback_job_free,
                             (GDestroyNotify) g_hash_table_unref, catchup_plugin.cancellable, fallback_read_done,
                             catchup_room_key_copy (job->key));
}

static void
save_fallback (PurpleAccount *account, const char *name, const CatchupRoomSettings *in)
{
  FallbackJob *job = g_new0 (FallbackJob, 1);

  job->key = catchup_room_key_new_for (account, name, PURPLE_CONV_TYPE_CHAT);
  job->values = g_hash_table_new_full (g_str_hash, g_str_equal, NULL, g_free);
  for (guint i = 0; i < G_N_ELEMENTS (settings); i++)
    g_hash_table_insert (job->values, (gpointer) settings[i].node_key, to_text (in, &settings[i]));
  cache_values (job->key, job->values);
  /* Not cancelled by an unload right after the save: the writer still runs what was queued before it stops. */
  if (catchup_plugin.writer != NULL)
    catchup_writer_call_async (catchup_plugin.writer, write_fallback, job, fallback_job_free, NULL, NULL, NULL,
                               NULL);
  else
    fallback_job_free (job);
}

/* ---------- the dialog ---------- */

typedef struct {
  PurpleAccount *account;
  char *name;
  PurpleConversation *conv;   /* only as the dialog's parent; may be gone by the time it is answered */
} DialogTarget;

/* Closing a request does not run its callbacks: the targets of dialogs still open are freed on unload. */
static GList *open_targets;

static void
dialog_target_free (DialogTarget *target)
{
  open_targets = g_list_remove (open_targets, target);
  g_free (target->name);
  g_free (target);
}

/* Finch 2.x numbers a choice field's entries from 1 when it shows and reads them, libpurple and Pidgin from 0:
 * without this its dialog showed "Short" for a room stored as Normal, and saved the next entry. */
static int
choice_offset (void)
{
  return catchup_output_in_finch () ? 1 : 0;
}

static char *
int_label (const Setting *s)
{
  /* Translators: a number field of the room settings and its range, e.g. "Memory budget (tokens) (64–65536)". */
  return g_strdup_printf (_("%s (%d–%d)"), _(s->label), s->min, s->max);
}

/* current holds the values to show: the stored ones, or what was typed when the dialog comes back refused. */
static PurpleRequestField *
field_for (const Setting *s, const CatchupRoomSettings *current, GHashTable *typed)
{
  PurpleRequestField *field = NULL;
  const char *text = typed ? g_hash_table_lookup (typed, s->node_key) : NULL;

  switch (s->kind)
    {
    case KIND_BOOL:
      field = purple_request_field_bool_new (s->node_key, _(s->label), SLOT (current, s, gboolean));
      break;
    case KIND_INT:
      {
        /* A text field: an integer field reads "abc" as 0, so what was wrong could not be told. */
        g_autofree char *label = int_label (s);
        g_autofree char *value = g_strdup_printf ("%d", SLOT (current, s, int));

        field = purple_request_field_string_new (s->node_key, label, text ? text : value, FALSE);
      }
      break;
    case KIND_LANGUAGE:
      field = purple_request_field_choice_new (s->node_key, _(s->label),
                                               language_index (SLOT (current, s, char *)) + 1 + choice_offset ());
      purple_request_field_choice_add (field, _("The room's own"));
      for (guint i = 0; i < G_N_ELEMENTS (languages); i++)
        purple_request_field_choice_add (field, _(languages[i].name));
      break;
    case KIND_LENGTH:
      field = purple_request_field_choice_new (s->node_key, _(s->label),
                                               SLOT (current, s, CatchupLength) + choice_offset ());
      purple_request_field_choice_add (field, _("Short"));
      purple_request_field_choice_add (field, _("Normal"));
      purple_request_field_choice_add (field, _("Detailed"));
      break;
    }
  return field;
}

/* A whole number in [min, max] and nothing else (no sign, no fraction, no unit); FALSE otherwise. */
static gboolean
parse_int_input (const char *text, int min, int max, int *out)
{
  g_autofree char *trimmed = g_strstrip (g_strdup (text ? text : ""));
  guint64 value;

  if (*trimmed == '\0' || !g_ascii_string_to_unsigned (trimmed, 10, 0, G_MAXINT, &value, NULL)
      || value < (guint64) MAX (min, 0) || value > (guint64) max)
    return FALSE;
  *out = (int) value;
  return TRUE;
}

/* Reads the dialog into out. Every field that is not acceptable gets a line in problems, and the text typed into
 * every field goes into typed, so that a refused dialog comes back as it was left. */
static void
read_fields (PurpleRequestFields *fields, CatchupRoomSettings *out, GString *problems, GHashTable *typed)
{
  int offset = choice_offset ();

  for (guint i = 0; i < G_N_ELEMENTS (settings); i++)
    {
      const Setting *s = &settings[i];
      int choice;

      switch (s->kind)
        {
        case KIND_BOOL:
          SLOT (out, s, gboolean) = purple_request_fields_get_bool (fields, s->node_key);
          break;
        case KIND_INT:
          {
            const char *text = purple_request_fields_get_string (fields, s->node_key);

            g_hash_table_insert (typed, (gpointer) s->node_key, g_strdup (text ? text : ""));
            if (!parse_int_input (text, s->min, s->max, &SLOT (out, s, int)))
              {
                g_autofree char *shown = catchup_text_sanitize (text);

                /* Translators: why a room setting was refused: the field's label, what was typed, the range. */
                g_string_append_printf (problems, _("%s: “%s” is not a whole number from %d to %d.\n"), _(s->label),
                                        shown, s->min, s->max);
              }
          }
          break;
        case KIND_LANGUAGE:
          choice = purple_request_fields_get_choice (fields, s->node_key) - offset;
          g_free (SLOT (out, s, char *));
          SLOT (out, s, char *) = choice >= 1 && choice <= (int) G_N_ELEMENTS (languages)
                                    ? g_strdup (languages[choice - 1].name)
                                    : NULL;
          break;
        case KIND_LENGTH:
          choice = purple_request_fields_get_choice (fields, s->node_key) - offset;
          SLOT (out, s, CatchupLength) = CLAMP (choice, CATCHUP_LENGTH_SHORT, CATCHUP_LENGTH_DETAILED);
          break;
        }
    }
}

static gboolean
account_exists (PurpleAccount *account)
{
  return g_list_find (purple_accounts_get_all (), account) != NULL;
}

static void open_dialog (PurpleAccount *account, const char *name, PurpleConversation *conv,
                         const CatchupRoomSettings *current, GHashTable *typed, const char *problems);

static void
dialog_saved (DialogTarget *target, PurpleRequestFields *fields)
{
  CatchupRoomSettings chosen = { 0 };
  g_autoptr (GString) problems = g_string_new (NULL);
  g_autoptr (GHashTable) typed = g_hash_table_new_full (g_str_hash, g_str_equal, NULL, g_free);
  PurpleBlistNode *node;

  if (account_exists (target->account))
    {
      read_fields (fields, &chosen, problems, typed);
      if (problems->len != 0)
        {
          /* Refused as a whole: nothing is saved until every field is acceptable. */
          g_strchomp (problems->str);
          open_dialog (target->account, target->name,
                       g_list_find (purple_get_conversations (), target->conv) ? target->conv : NULL, &chosen, typed,
                       problems->str);
        }
      else if ((node = chat_node (target->account, target->name)) != NULL)
        write_node (node, &chosen);
      else
        save_fallback (target->account, target->name, &chosen);
      catchup_room_settings_clear (&chosen);
    }
  dialog_target_free (target);
}

static void
dialog_cancelled (DialogTarget *target, PurpleRequestFields *fields)
{
  dialog_target_free (target);
}

static void
open_dialog (PurpleAccount *account, const char *name, PurpleConversation *conv, const CatchupRoomSettings *current,
             GHashTable *typed, const char *problems)
{
  PurpleRequestFields *fields = purple_request_fields_new ();
  PurpleRequestFieldGroup *group = purple_request_field_group_new (NULL);
  DialogTarget *target = g_new0 (DialogTarget, 1);
  g_autofree char *primary = g_strdup_printf (_("Catch-up settings for %s"), name);

  for (guint i = 0; i < G_N_ELEMENTS (settings); i++)
    purple_request_field_group_add_field (group, field_for (&settings[i], current, typed));
  purple_request_fields_add_group (fields, group);

  target->account = account;
  target->name = g_strdup (name);
  target->conv = conv;
  open_targets = g_list_prepend (open_targets, target);
  /* Labels without mnemonics: Finch shows the underscore. */
  purple_request_fields (catchup_plugin.plugin, _("Catch-up settings"), primary, problems, fields,
                         _("Save"), G_CALLBACK (dialog_saved), _("Cancel"), G_CALLBACK (dialog_cancelled),
                         account, NULL, conv, target);
}

void
catchup_room_settings_dialog (PurpleAccount *account, const char *name, PurpleConversation *conv)
{
  CatchupRoomSettings current;

  settings_for (account, name, &current);
  open_dialog (account, name, conv, &current, NULL, NULL);
  catchup_room_settings_clear (&current);
}

/* ---------- menus ---------- */

/* The room's name as its conversation will carry it. */
static char *
chat_room_name (PurpleChat *chat)
{
  PurpleAccount *account = purple_chat_get_account (chat);
  PurplePluginProtocolInfo *prpl = NULL;
  PurplePlugin *plugin = purple_find_prpl (purple_account_get_protocol_id (account));
  char *name = NULL;

  if (plugin != NULL)
    prpl = PURPLE_PLUGIN_PROTOCOL_INFO (plugin);
  if (prpl != NULL && prpl->get_chat_name != NULL)
    name = prpl->get_chat_name (purple_chat_get_components (chat));
  return name != NULL ? name : g_strdup (purple_chat_get_name (chat));
}

static void
menu_activated (PurpleBlistNode *node, gpointer data)
{
  g_autofree char *name = chat_room_name ((PurpleChat *) node);

  catchup_room_settings_dialog (purple_chat_get_account ((PurpleChat *) node), name, NULL);
}

static void
import_activated (PurpleBlistNode *node, gpointer data)
{
  g_autofree char *name = chat_room_name ((PurpleChat *) node);
  PurpleAccount *account = purple_chat_get_account ((PurpleChat *) node);

  catchup_backfill_room (account, name, purple_find_conversation_with_account (PURPLE_CONV_TYPE_CHAT, name, account));
}

static void
on_blist_menu (PurpleBlistNode *node, GList **menu, gpointer data)
{
  if (!PURPLE_BLIST_NODE_IS_CHAT (node))
    return;
  *menu = g_list_append (*menu, purple_menu_action_new (_("Catch-up settings…"), PURPLE_CALLBACK (menu_activated),
                                                        NULL, NULL));
  *menu = g_list_append (*menu, purple_menu_action_new (_("Import chat logs into catch-up"),
                                                        PURPLE_CALLBACK (import_activated), NULL, NULL));
}

static void
conv_menu_activated (PurpleConversation *conv, gpointer data)
{
  catchup_room_settings_dialog (purple_conversation_get_account (conv), purple_conversation_get_name (conv), conv);
}

static void
conv_import_activated (PurpleConversation *conv, gpointer data)
{
  catchup_backfill_room (purple_conversation_get_account (conv), purple_conversation_get_name (conv), conv);
}

static void
on_conv_menu (PurpleConversation *conv, GList **menu, gpointer data)
{
  if (purple_conversation_get_type (conv) != PURPLE_CONV_TYPE_CHAT)
    return;
  *menu = g_list_append (*menu, purple_menu_action_new (_("Catch-up settings…"),
                                                        PURPLE_CALLBACK (conv_menu_activated), NULL, NULL));
  *menu = g_list_append (*menu, purple_menu_action_new (_("Import chat logs into catch-up"),
                                                        PURPLE_CALLBACK (conv_import_activated), NULL, NULL));
}

void
catchup_room_settings_start (PurplePlugin *plugin)
{
  fallback_cache = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, (GDestroyNotify) g_hash_table_unref);
  purple_signal_connect (purple_blist_get_handle (), "blist-node-extended-menu", plugin,
                         PURPLE_CALLBACK (on_blist_menu), NULL);
  purple_signal_connect (purple_conversations_get_handle (), "conversation-extended-menu", plugin,
                         PURPLE_CALLBACK (on_conv_menu), NULL);
  if (catchup_plugin.writer != NULL)
    catchup_writer_call_async (catchup_plugin.writer, read_all_fallbacks, NULL, NULL, free_fallback_pairs,
                               catchup_plugin.cancellable, preload_done, NULL);
  for (GList *l = purple_get_chats (); l != NULL; l = l->next)
    catchup_room_settings_prefetch (l->data);
}

void
catchup_room_settings_stop (void)
{
  purple_request_close_with_handle (catchup_plugin.plugin);
  while (open_targets != NULL)
    dialog_target_free (open_targets->data);
  g_clear_pointer (&fallback_cache, g_hash_table_unref);
}
