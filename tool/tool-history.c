#include "config.h"

#include <glib/gi18n.h>
#include <string.h>

#include "catchup-embed-cache.h"
#include "catchup-llm-embed.h"
#include "tool.h"

/* catchup rooms, import and embed: what the history holds, what goes into it, and its model vectors. */

static void
json_add_room (JsonBuilder *b, const CatchupRoomInfo *info)
{
  json_builder_begin_object (b);
  json_member_string (b, "name", info->name);
  json_member_string (b, "protocol", info->protocol);
  json_member_string (b, "account", info->account);
  json_member_int (b, "messages", info->n_messages);
  if (info->n_messages > 0)
    {
      json_member_time (b, "first_ts", info->first_ts);
      json_member_time (b, "last_ts", info->last_ts);
    }
  json_builder_end_object (b);
}

static void
print_room (const CatchupRoomInfo *info)
{
  g_autofree char *first = info->n_messages > 0 ? catchup_time_format_iso (info->first_ts) : g_strdup ("-");
  g_autofree char *last = info->n_messages > 0 ? catchup_time_format_iso (info->last_ts) : g_strdup ("-");
  g_autofree char *where_raw = g_strdup_printf ("%s/%s", info->protocol != NULL ? info->protocol : "",
                                                info->account != NULL ? info->account : "");
  SAFE (where, where_raw);
  SAFE (name, info->name);

  g_print ("%-24s %8" G_GINT64_FORMAT "  %-20s  %-20s  %s\n", name, info->n_messages, first, last, where);
}

int
cmd_rooms (int argc, char **argv)
{
  g_autofree char *db = NULL;
  gboolean json = FALSE;
  const GOptionEntry entries[] = {
    { "db", 0, 0, G_OPTION_ARG_FILENAME, &db, DB_HELP, N_("DB") },
    { "json", 0, 0, G_OPTION_ARG_NONE, &json, N_("Print JSON instead of text"), NULL },
    G_OPTION_ENTRY_NULL
  };
  g_autoptr (GError) error = NULL;
  g_autoptr (CatchupStore) store = NULL;
  g_autoptr (GPtrArray) rooms = NULL;

  if (!tool_parse (&argc, &argv, NULL, _("List the rooms of the history database."),
                   _("Each room with its number of messages and the time of its first and last message."),
                   entries, &error)
      || (store = tool_open_store (db, FALSE, &error)) == NULL
      || (rooms = catchup_store_list_rooms (store, &error)) == NULL)
    return tool_fail (error);

  if (json)
    {
      g_autoptr (JsonBuilder) b = json_builder_new ();

      json_builder_begin_object (b);
      json_builder_set_member_name (b, "rooms");
      json_builder_begin_array (b);
      for (guint i = 0; i < rooms->len; i++)
        json_add_room (b, g_ptr_array_index (rooms, i));
      json_builder_end_array (b);
      return json_emit (b);
    }
  /* Translators: column headings of "catchup rooms"; keep the widths */
  g_print ("%-24s %8s  %-20s  %-20s  %s\n", _("ROOM"), _("MESSAGES"), _("FIRST"), _("LAST"), _("PROTOCOL/ACCOUNT"));
  for (guint i = 0; i < rooms->len; i++)
    print_room (g_ptr_array_index (rooms, i));
  return TOOL_EXIT_OK;
}

typedef struct {
  char *db;
  char *format;
  char *room;
  char *date;
  char **files;
  ModelArgs model;
} ImportArgs;

static void
import_args_clear (ImportArgs *a)
{
  g_free (a->db);
  g_free (a->format);
  g_free (a->room);
  g_free (a->date);
  g_strfreev (a->files);
  model_args_clear (&a->model);
}
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (ImportArgs, import_args_clear)

static gboolean
is_blank_name (const char *name)
{
  for (; *name; name = g_utf8_next_char (name))
    if (!g_unichar_isspace (g_utf8_get_char (name)))
      return FALSE;
  return TRUE;
}

static gboolean
import_check_args (const ImportArgs *a, gboolean *irc, GError **error)
{
  int y, m, d;
  char tail;

  if (!tool_require (a->format, "--format", error))
    return FALSE;
  /* a room of a blank name could never be named again by --room */
  if (a->room != NULL && is_blank_name (a->room))
    return usage_error (error, _("--room wants a room name, not an empty one"));
  *irc = g_strcmp0 (a->format, "irc") == 0;
  if (!*irc && g_strcmp0 (a->format, "jsonl") != 0)
    return usage_error (error, _("unknown format “%s” (known: jsonl, irc)"), a->format);
  if (a->files == NULL || a->files[0] == NULL)
    return usage_error (error, _("no FILE to import"));
  if (!*irc)
    return a->date == NULL || usage_error (error, _("--date is only for --format irc"));
  if (!tool_require (a->room, "--room", error) || !tool_require (a->date, "--date", error))
    return FALSE;
  if (sscanf (a->date, "%4d-%2d-%2d%c", &y, &m, &d, &tail) != 3 || strlen (a->date) != 10
      || !g_date_valid_dmy ((GDateDay) d, (GDateMonth) m, (GDateYear) y))
    return usage_error (error, _("--date wants a day as YYYY-MM-DD, not “%s”"), a->date);
  return TRUE;
}

/* Every file is checked before the first is imported, so a typo in the last name leaves the database as it
 * was. */
static gboolean
import_check_files (char **files, GError **error)
{
  for (guint i = 0; files[i] != NULL; i++)
    {
      g_autoptr (GFile) file = g_file_new_for_commandline_arg (files[i]);
      g_autoptr (GFileInputStream) in = g_file_read (file, NULL, error);

      if (in == NULL)
        return FALSE;
    }
  return TRUE;
}

static void
import_add (CatchupImportResult *total, const CatchupImportResult *part)
{
  total->read += part->read;
  total->inserted += part->inserted;
  total->duplicates += part->duplicates;
  total->events += part->events;
  total->malformed += part->malformed;
}

static void
import_report_problems (const char *path, const CatchupImportResult *result)
{
  for (guint i = 0; result->problems != NULL && i < result->problems->len; i++)
    {
      const CatchupImportProblem *p = g_ptr_array_index (result->problems, i);
      SAFE (message, p->message);

      g_printerr ("%s:%" G_GUINT64_FORMAT ": %s\n", path, p->line, message);
    }
}

static gboolean
import_files (CatchupStore *store, const ImportArgs *a, gboolean irc, CatchupImportResult *total,
              GError **error)
{
  gint64 room = 0;

  if (a->room != NULL)
    {
      room = catchup_store_ensure_room (store, CATCHUP_IMPORT_PROTOCOL, CATCHUP_IMPORT_ACCOUNT, a->room, error);
      if (room <= 0)
        return FALSE;
    }
  for (guint i = 0; a->files[i] != NULL; i++)
    {
      g_autoptr (CatchupImportResult) part = catchup_import_result_new ();
      gboolean ok = irc ? catchup_import_irc (store, a->files[i], room, a->date, part, NULL, error)
                        : catchup_import_jsonl (store, a->files[i], room, part, NULL, error);

      import_report_problems (a->files[i], part);
      import_add (total, part);
      if (!ok)
        {
          g_prefix_error (error, "%s: ", a->files[i]);
          return FALSE;
        }
    }
  return TRUE;
}

static void
import_print_summary (const CatchupImportResult *r)
{
  g_printerr (_("%s: %" G_GUINT64_FORMAT " read, %" G_GUINT64_FORMAT " inserted, %" G_GUINT64_FORMAT
                " duplicates, %" G_GUINT64_FORMAT " malformed, %" G_GUINT64_FORMAT " events\n"),
              g_get_prgname (), r->read, r->inserted, r->duplicates, r->malformed, r->events);
}

/* Imported rooms get their model vectors right away when an embedding model is configured, as the plugin's
 * rooms get them in the background; the import itself stands even when the model server does not answer. */
static void
import_embed (CatchupStore *store, const ModelArgs *m)
{
  g_auto (CatchupLlmConfig) config = { 0 };
  g_autoptr (GError) error = NULL;
  g_autoptr (GArray) rooms = NULL;
  gboolean configured = FALSE;
  guint computed = 0;

  if (model_config (m, &config, &configured, &error) && !has_embed_model (&config, configured))
    return;
  if (error != NULL || (rooms = all_rooms (store, &error)) == NULL ||
      !embed_rooms (store, rooms, &config, FALSE, &computed, &error))
    {
      SAFE (message, error->message);

      g_printerr (_("%s: the history is imported, but its embeddings are not: %s\n"), g_get_prgname (), message);
      return;
    }
  g_printerr (ngettext ("%s: %u text embedded with %s\n", "%s: %u texts embedded with %s\n", computed),
              g_get_prgname (), computed, config.embed_model);
}

int
cmd_import (int argc, char **argv)
{
  g_auto (ImportArgs) a = { 0 };
  const GOptionEntry entries[] = {
    { "db", 0, 0, G_OPTION_ARG_FILENAME, &a.db,
      N_("History database, created when missing (default: $CATCHUP_DB, else ~/.purple/catchup/history.db)"),
      N_("DB") },
    { "format", 'f', 0, G_OPTION_ARG_STRING, &a.format, N_("jsonl or irc"), N_("FORMAT") },
    { "room", 'r', 0, G_OPTION_ARG_STRING, &a.room,
      N_("Room to import into (required for irc; for jsonl it overrides each line's \"room\")"), N_("NAME") },
    { "date", 'd', 0, G_OPTION_ARG_STRING, &a.date, N_("Day of the first line of an irc log"),
      N_("YYYY-MM-DD") },
    { G_OPTION_REMAINING, 0, 0, G_OPTION_ARG_FILENAME_ARRAY, &a.files, NULL, N_("FILE…") },
    ENTRIES_MODEL (a.model),
    G_OPTION_ENTRY_NULL
  };
  g_autoptr (GError) error = NULL;
  g_autoptr (CatchupStore) store = NULL;
  g_autoptr (CatchupImportResult) total = catchup_import_result_new ();
  gboolean irc = FALSE, ok;

  if (!tool_parse (&argc, &argv, NULL, _("Import chat logs into the history database."),
                   _("Formats:\n"
                     "  jsonl  one JSON object a line: {\"id\", \"room\", \"ts\" (ISO 8601), \"speaker\", \"text\"}\n"
                     "  irc    plain logs, \"[HH:MM] <nick> text\" a line; needs --room and --date\n\n"
                     "Importing is idempotent: messages already stored are counted as duplicates.\n"
                     "A malformed line is reported as FILE:LINE and skipped; the rest is imported.\n\n"
                     "Examples:\n"
                     "  catchup import --format jsonl room.jsonl\n"
                     "  catchup import --format irc --room '#ubuntu' --date 2009-02-23 ubuntu.log"),
                   entries, &error)
      || !import_check_args (&a, &irc, &error)
      || !import_check_files (a.files, &error)
      || (store = tool_open_store (a.db, TRUE, &error)) == NULL)
    return tool_fail (error);

  ok = import_files (store, &a, irc, total, &error);
  import_print_summary (total);
  if (ok)
    import_embed (store, &a.model);
  return ok ? TOOL_EXIT_OK : tool_fail (error);
}

int
cmd_embed (int argc, char **argv)
{
  g_autofree char *db = NULL, *room_name = NULL;
  g_auto (ModelArgs) m = { 0 };
  gboolean prune = FALSE;
  const GOptionEntry entries[] = {
    { "db", 0, 0, G_OPTION_ARG_FILENAME, &db, DB_HELP, N_("DB") },
    { "room", 'r', 0, G_OPTION_ARG_STRING, &room_name, N_("Room name, or PROTOCOL/ACCOUNT/NAME (default: every room)"),
      N_("ROOM") },
    { "prune", 0, 0, G_OPTION_ARG_NONE, &prune, N_("Delete the stored vectors of every other model"), NULL },
    ENTRIES_MODEL (m),
    G_OPTION_ENTRY_NULL
  };
  g_autoptr (GError) error = NULL;
  g_autoptr (CatchupStore) store = NULL;
  g_autoptr (GArray) rooms = NULL;
  g_auto (CatchupLlmConfig) config = { 0 };
  gboolean configured = FALSE;
  guint computed = 0;

  if (!tool_parse (&argc, &argv, NULL, _("Compute the embedding model's vectors of a room's history."),
                   _("A catch-up with an embedding model reads stored vectors and embeds only its own queries. The "
                     "plugin computes them as messages arrive; this command does it for imported history.\n\n"
                     "Example:\n  catchup embed --room larkspur-ops --endpoint http://localhost:11434/v1 "
                     "--embed-model nomic-embed-text"),
                   entries, &error)
      || !model_config (&m, &config, &configured, &error))
    return tool_fail (error);
  if (!has_embed_model (&config, configured))
    {
      usage_error (&error, _("no embedding model: give --endpoint and --embed-model, or set them in the config file"));
      return tool_fail (error);
    }
  if ((store = tool_open_store (db, FALSE, &error)) == NULL)
    return tool_fail (error);
  if (room_name != NULL)
    {
      gint64 room = catchup_store_find_room (store, room_name, &error);

      if (room <= 0)
        return tool_fail (error);
      rooms = g_array_new (FALSE, FALSE, sizeof (gint64));
      g_array_append_val (rooms, room);
    }
  else if ((rooms = all_rooms (store, &error)) == NULL)
    return tool_fail (error);
  if (!embed_rooms (store, rooms, &config, prune, &computed, &error))
    return tool_fail (error);
  g_print (ngettext ("%u text embedded with %s\n", "%u texts embedded with %s\n", computed), computed,
           config.embed_model);
  return TOOL_EXIT_OK;
}
