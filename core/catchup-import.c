#include "config.h"

#include <stdlib.h>
#include <string.h>

#include <glib/gi18n-lib.h>
#include <json-glib/json-glib.h>

#include "catchup-error.h"
#include "catchup-import.h"
#include "catchup-index.h"
#include "catchup-json.h"
#include "catchup-records.h"
#include "catchup-text.h"

/* ---------- results ---------- */

static void
problem_free (CatchupImportProblem *problem)
{
  g_free (problem->message);
  g_free (problem);
}

CatchupImportResult *
catchup_import_result_new (void)
{
  CatchupImportResult *result = g_new0 (CatchupImportResult, 1);

  result->problems = g_ptr_array_new_with_free_func ((GDestroyNotify) problem_free);
  return result;
}

void
catchup_import_result_free (CatchupImportResult *result)
{
  if (result == NULL)
    return;
  g_ptr_array_unref (result->problems);
  g_free (result);
}

static void
add_problem (CatchupImportResult *result, guint64 line, const char *message)
{
  CatchupImportProblem *problem = g_new0 (CatchupImportProblem, 1);

  problem->line = line;
  problem->message = g_strdup (message);
  g_ptr_array_add (result->problems, problem);
  result->malformed++;
}

static gint
problem_cmp (gconstpointer a, gconstpointer b)
{
  const CatchupImportProblem *x = *(CatchupImportProblem *const *) a, *y = *(CatchupImportProblem *const *) b;

  return x->line < y->line ? -1 : x->line > y->line;
}

/* ---------- batching: pending messages per room, written in one transaction ---------- */

typedef struct {
  CatchupStore *store;
  CatchupImportResult *result;
  GHashTable *batches; /* gint64 room -> GPtrArray of CatchupMessage */
  GHashTable *sourced; /* CatchupMessage of the batches whose id the source gave -> its line */
  guint pending;
  gboolean in_txn;
  guint64 line;       /* the line being read */
  guint64 txn_line;   /* the first line of the open transaction */
  /* What the open transaction has written: counted into result only once it is committed, so that a batch
   * rolled back (a full disk) is not reported as imported. */
  guint64 txn_inserted, txn_duplicates, txn_events;
} Importer;

static void
importer_init (Importer *imp, CatchupStore *store, CatchupImportResult *result)
{
  imp->store = store;
  imp->result = result;
  imp->batches = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free, (GDestroyNotify) g_ptr_array_unref);
  imp->sourced = g_hash_table_new (g_direct_hash, g_direct_equal);
  imp->pending = 0;
  imp->in_txn = FALSE;
}

/* A database failure ends the import: it says from which line on nothing was saved. */
static gboolean
stopped_at (guint64 line, GError **error)
{
  g_autofree char *from = g_strdup_printf ("%" G_GUINT64_FORMAT, line);

  g_prefix_error (error, _("nothing from line %s on was saved: "), from);
  return FALSE;
}

static gboolean
importer_failed (Importer *imp, GError **error)
{
  return stopped_at (imp->in_txn ? imp->txn_line : imp->line, error);
}

/* Drops whatever the current batch wrote: nothing of it may stay half-written. */
static void
importer_clear (Importer *imp)
{
  if (imp->in_txn)
    catchup_store_rollback (imp->store);
  imp->in_txn = FALSE;
  g_clear_pointer (&imp->sourced, g_hash_table_unref);
  g_clear_pointer (&imp->batches, g_hash_table_unref);
}

static gboolean
importer_ensure_txn (Importer *imp, GError **error)
{
  if (imp->in_txn)
    return TRUE;
  imp->in_txn = catchup_store_begin (imp->store, error);
  if (!imp->in_txn)
    return importer_failed (imp, error);
  imp->txn_line = imp->line;
  imp->txn_inserted = imp->txn_duplicates = imp->txn_events = 0;
  return TRUE;
}

/* A source's id already stored with another text is two messages under one id, not a duplicate: the line
 * is reported (and skipped) instead of vanishing into the duplicate count. Derived ids hash the text, so only
 * ids the source gave can clash. Returns how many clashed, or -1 with error. */
static gint64
importer_conflicts (Importer *imp, GPtrArray *batch, guint n_inserted, GError **error)
{
  gint64 conflicts = 0;

  if (n_inserted == batch->len || g_hash_table_size (imp->sourced) == 0)
    return 0;
  for (guint i = 0; i < batch->len; i++)
    {
      CatchupMessage *msg = batch->pdata[i];
      guint64 line = GPOINTER_TO_SIZE (g_hash_table_lookup (imp->sourced, msg));
      g_autoptr (CatchupMessage) stored = NULL;

      if (line == 0)
        continue;
      stored = catchup_store_get_message_by_row (imp->store, msg->row, error);
      if (stored == NULL)
        return -1;
      if (g_strcmp0 (stored->text, msg->text) != 0 || g_strcmp0 (stored->speaker, msg->speaker) != 0)
        {
          g_autofree char *problem =
            g_strdup_printf (_("the id “%s” is already stored with another text; this line was not imported"),
                             msg->id);

          add_problem (imp->result, line, problem);
          conflicts++;
        }
    }
  return conflicts;
}

static gboolean
importer_flush (Importer *imp, GError **error)
{
  GHashTableIter iter;
  gpointer key, value;

  if (!imp->in_txn)
    return TRUE;
  g_hash_table_iter_init (&iter, imp->batches);
  while (g_hash_table_iter_next (&iter, &key, &value))
    {
      GPtrArray *batch = value;
      guint n_inserted;
      gint64 conflicts;

      if (!catchup_store_add_batch (imp->store, *(gint64 *) key, batch, &n_inserted, error)
          || !catchup_index_update (imp->store, *(gint64 *) key, error)
          || (conflicts = importer_conflicts (imp, batch, n_inserted, error)) < 0
          || !catchup_records_update (imp->store, *(gint64 *) key, 0, NULL, error))
        return importer_failed (imp, error);
      imp->txn_inserted += n_inserted;
      imp->txn_duplicates += batch->len - n_inserted - (guint64) conflicts;
    }
  /* a failed COMMIT has already ended the transaction: nothing is left to roll back */
  imp->in_txn = FALSE;
  if (!catchup_store_commit (imp->store, error))
    return stopped_at (imp->txn_line, error);
  imp->result->inserted += imp->txn_inserted;
  imp->result->duplicates += imp->txn_duplicates;
  imp->result->events += imp->txn_events;
  g_hash_table_remove_all (imp->sourced);
  g_hash_table_remove_all (imp->batches);
  imp->pending = 0;
  return TRUE;
}

/* Counts an event written into the open transaction, or ends the import when it could not be. */
static gboolean
importer_event_stored (Importer *imp, gboolean ok, GError **error)
{
  if (!ok)
    return importer_failed (imp, error);
  imp->txn_events++;
  return TRUE;
}

/* Takes msg; sourced says that its id is the source's, not derived. */
static gboolean
importer_add (Importer *imp, gint64 room, CatchupMessage *msg, gboolean sourced, GError **error)
{
  GPtrArray *batch;

  if (!importer_ensure_txn (imp, error))
    {
      catchup_message_free (msg);
      return FALSE;
    }
  batch = g_hash_table_lookup (imp->batches, &room);
  if (batch == NULL)
    {
      batch = g_ptr_array_new_with_free_func ((GDestroyNotify) catchup_message_free);
      g_hash_table_insert (imp->batches, g_memdup2 (&room, sizeof room), batch);
    }
  g_ptr_array_add (batch, msg);
  if (sourced)
    g_hash_table_insert (imp->sourced, msg, GSIZE_TO_POINTER ((gsize) imp->line));
  return ++imp->pending < CATCHUP_IMPORT_BATCH || importer_flush (imp, error);
}

/* ---------- reading lines ---------- */

/* Handles one line (valid UTF-8 without NUL, control characters or line breaks: a lone CR, VT, FF, NEL, LS or PS
 * inside it is a space); FALSE with error only for fatal problems. */
typedef gboolean (*LineFunc) (const char *line, guint64 number, gpointer data, GError **error);

static gboolean
is_blank (const char *line)
{
  for (; *line; line++)
    if (!g_ascii_isspace (*line))
      return FALSE;
  return TRUE;
}

static gboolean
read_lines (GInputStream *input, LineFunc func, gpointer data, GCancellable *cancellable, GError **error)
{
  g_autoptr (GDataInputStream) lines = g_data_input_stream_new (input);
  guint64 number = 0;

  g_data_input_stream_set_newline_type (lines, G_DATA_STREAM_NEWLINE_TYPE_LF);
  for (;;)
    {
      g_autoptr (GError) read_error = NULL;
      gsize len = 0;
      g_autofree char *raw = g_data_input_stream_read_line (lines, &len, cancellable, &read_error);
      g_autofree char *line = NULL;

      if (raw == NULL)
        {
          if (read_error == NULL)
            return TRUE;
          gboolean cancelled = g_error_matches (read_error, G_IO_ERROR, G_IO_ERROR_CANCELLED);

          g_set_error (error, cancelled ? G_IO_ERROR : CATCHUP_ERROR,
                       cancelled ? G_IO_ERROR_CANCELLED : CATCHUP_ERROR_IO,
                       _("Could not read line %" G_GUINT64_FORMAT ": %s"), number + 1, read_error->message);
          return FALSE;
        }
      number++;
      if (g_cancellable_is_cancelled (cancellable))
        {
          g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_CANCELLED, _("The import was cancelled"));
          return FALSE;
        }
      if (len > 0 && raw[len - 1] == '\r')
        raw[--len] = '\0';
      /* A byte-order mark opens a file, not its first line. */
      if (number == 1 && len >= 3 && memcmp (raw, "\xef\xbb\xbf", 3) == 0)
        line = catchup_text_clean (raw + 3, (gssize) len - 3, CATCHUP_TEXT_ONE_LINE);
      else
        line = catchup_text_clean (raw, (gssize) len, CATCHUP_TEXT_ONE_LINE);
      if (is_blank (line))
        continue;
      if (!func (line, number, data, error))
        return FALSE;
    }
}

typedef gboolean (*StreamImport) (CatchupStore *store, GInputStream *input, gint64 room, const char *date,
                                  CatchupImportResult *result, GCancellable *cancellable, GError **error);

static gboolean
import_file (StreamImport import, CatchupStore *store, const char *path, gint64 room, const char *date,
             CatchupImportResult *result, GCancellable *cancellable, GError **error)
{
  g_autoptr (GFile) file = g_file_new_for_path (path);
  g_autoptr (GError) open_error = NULL;
  g_autoptr (GFileInputStream) input = g_file_read (file, cancellable, &open_error);

  if (input == NULL)
    {
      g_set_error (error, CATCHUP_ERROR,
                   g_error_matches (open_error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND) ? CATCHUP_ERROR_NOT_FOUND
                                                                                  : CATCHUP_ERROR_IO,
                   _("Could not open %s: %s"), path, open_error->message);
      return FALSE;
    }
  return import (store, G_INPUT_STREAM (input), room, date, result, cancellable, error);
}

/* ---------- JSON Lines ---------- */

typedef struct {
  Importer imp;
  gint64 room;        /* override, or 0 */
  GHashTable *rooms;  /* room name -> gint64 id */
  JsonParser *parser; /* one for the whole file: a parser per line cost a tenth of the import */
} JsonImport;

/* A string member, cleaned as text entering the store; absent is fine when optional (*out = NULL), a non-string
 * value never is. */
static gboolean
member_string (JsonObject *obj, const char *name, gboolean required, CatchupTextLines lines, char **out,
               GError **error)
{
  JsonNode *node = json_object_get_member (obj, name);

  *out = NULL;
  if (node == NULL || JSON_NODE_HOLDS_NULL (node))
    {
      if (!required)
        return TRUE;
      g_set_error (error, CATCHUP_ERROR, CATCHUP_ERROR_INVALID, _("the field “%s” is missing"), name);
      return FALSE;
    }
  if (!JSON_NODE_HOLDS_VALUE (node) || json_node_get_value_type (node) != G_TYPE_STRING)
    {
      g_set_error (error, CATCHUP_ERROR, CATCHUP_ERROR_INVALID, _("the field “%s” is not a string"), name);
      return FALSE;
    }
  *out = catchup_text_clean (json_node_get_string (node), -1, lines);
  return TRUE;
}

/* Sources number their messages as often as they name them. A number is kept exactly as written: json-glib
 * would turn one beyond int64 into another number, and two such ids into duplicates. */
static gboolean
member_id (JsonObject *obj, const char *record, gsize len, char **out, GError **error)
{
  JsonNode *node = json_object_get_member (obj, "id");

  *out = NULL;
  if (node != NULL && JSON_NODE_HOLDS_VALUE (node)
      && (json_node_get_value_type (node) == G_TYPE_INT64 || json_node_get_value_type (node) == G_TYPE_DOUBLE))
    {
      *out = catchup_json_raw_member (record, len, "id");
      if (*out == NULL)
        *out = g_strdup_printf ("%" G_GINT64_FORMAT, json_node_get_int (node));
      return TRUE;
    }
  return member_string (obj, "id", FALSE, CATCHUP_TEXT_ONE_LINE, out, error);
}

static gboolean
parse_time (const char *text, gint64 *ts, GError **error)
{
  if (catchup_time_parse_iso (text, ts))
    return TRUE;
  g_set_error (error, CATCHUP_ERROR, CATCHUP_ERROR_INVALID, _("“%s” is not an ISO 8601 time"), text);
  return FALSE;
}

/* The message of one JSON value, and its room name when the record must name one. */
static CatchupMessage *
parse_record (JsonParser *parser, const char *record, gsize len, gboolean need_room, char **room_name, GError **error)
{
  g_autoptr (GError) json_error = NULL;
  g_autofree char *id = NULL, *room = NULL, *ts_text = NULL, *speaker = NULL, *text = NULL, *alias = NULL;
  g_autoptr (JsonNode) root = catchup_json_parse (parser, record, (gssize) len, &json_error);
  JsonObject *obj;
  CatchupMessage *msg;
  gint64 ts;

  if (root == NULL)
    {
      g_set_error (error, CATCHUP_ERROR, CATCHUP_ERROR_INVALID, _("not valid JSON: %s"), json_error->message);
      return NULL;
    }
  if (!JSON_NODE_HOLDS_OBJECT (root))
    {
      g_set_error_literal (error, CATCHUP_ERROR, CATCHUP_ERROR_INVALID, _("not a JSON object"));
      return NULL;
    }
  obj = json_node_get_object (root);
  if (!member_id (obj, record, len, &id, error)
      || !member_string (obj, "room", need_room, CATCHUP_TEXT_ONE_LINE, &room, error)
      || !member_string (obj, "ts", TRUE, CATCHUP_TEXT_ONE_LINE, &ts_text, error)
      || !member_string (obj, "speaker", TRUE, CATCHUP_TEXT_ONE_LINE, &speaker, error)
      || !member_string (obj, "text", TRUE, CATCHUP_TEXT_MULTI_LINE, &text, error)
      || !member_string (obj, "alias", FALSE, CATCHUP_TEXT_ONE_LINE, &alias, error)
      || !parse_time (ts_text, &ts, error))
    return NULL;
  if (need_room && *g_strstrip (room) == '\0')
    {
      g_set_error_literal (error, CATCHUP_ERROR, CATCHUP_ERROR_INVALID, _("the field “room” is empty"));
      return NULL;
    }
  msg = catchup_message_new (id, ts, speaker, text);
  msg->alias = g_steal_pointer (&alias);
  *room_name = g_steal_pointer (&room);
  return msg;
}

static gint64
json_room (JsonImport *job, const char *name, GError **error)
{
  gint64 *cached = g_hash_table_lookup (job->rooms, name);
  gint64 id;

  if (cached != NULL)
    return *cached;
  id = catchup_store_ensure_room (job->imp.store, CATCHUP_IMPORT_PROTOCOL, CATCHUP_IMPORT_ACCOUNT, name, error);
  if (id != 0)
    g_hash_table_insert (job->rooms, g_strdup (name), g_memdup2 (&id, sizeof id));
  return id;
}

static gboolean
json_record (JsonImport *job, const char *record, gsize len, guint64 number, GError **error)
{
  g_autoptr (GError) bad = NULL;
  g_autofree char *room_name = NULL;
  CatchupMessage *msg;
  gint64 room = job->room;

  job->imp.result->read++;
  msg = parse_record (job->parser, record, len, job->room == 0, &room_name, &bad);
  if (msg == NULL)
    {
      add_problem (job->imp.result, number, bad->message);
      return TRUE;
    }
  if (room == 0 && (room = json_room (job, room_name, error)) == 0)
    {
      catchup_message_free (msg);
      return importer_failed (&job->imp, error);
    }
  return importer_add (&job->imp, room, msg, msg->id != NULL && *msg->id != '\0', error);
}

/* A line normally holds one record; when a writer left out a line break ("{…} {…}", or a lone CR that reading
 * made a space), each value is a record of that line, so none is dropped unseen. What follows a value that is
 * not one is handed to the parser whole, which reports it. */
static gboolean
json_line (const char *line, guint64 number, gpointer data, GError **error)
{
  JsonImport *job = data;
  const char *p = line;

  job->imp.line = number;
  while (*p != '\0')
    {
      gsize rest = strlen (p);
      gsize len = catchup_json_value_length (p, rest);

      if (len == 0)
        len = rest;
      if (!json_record (job, p, len, number, error))
        return FALSE;
      for (p += len; g_ascii_isspace (*p); p++)
        ;
    }
  return TRUE;
}

static gboolean
jsonl_stream (CatchupStore *store, GInputStream *input, gint64 room, const char *date G_GNUC_UNUSED,
              CatchupImportResult *result, GCancellable *cancellable, GError **error)
{
  JsonImport job = { .room = room };
  gboolean ok;

  importer_init (&job.imp, store, result);
  job.rooms = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  job.parser = json_parser_new ();
  ok = read_lines (input, json_line, &job, cancellable, error) && importer_flush (&job.imp, error);
  importer_clear (&job.imp);
  /* clashing ids are found when a batch is written, after later lines' problems */
  g_ptr_array_sort (result->problems, problem_cmp);
  g_hash_table_unref (job.rooms);
  g_object_unref (job.parser);
  return ok;
}

gboolean
catchup_import_jsonl_stream (CatchupStore *store, GInputStream *input, gint64 room, CatchupImportResult *result,
                             GCancellable *cancellable, GError **error)
{
  g_return_val_if_fail (store != NULL && G_IS_INPUT_STREAM (input) && result != NULL, FALSE);
  return jsonl_stream (store, input, room, NULL, result, cancellable, error);
}

gboolean
catchup_import_jsonl (CatchupStore *store, const char *path, gint64 room, CatchupImportResult *result,
                      GCancellable *cancellable, GError **error)
{
  g_return_val_if_fail (store != NULL && path != NULL && result != NULL, FALSE);
  return import_file (jsonl_stream, store, path, room, NULL, result, cancellable, error);
}

/* ---------- IRC logs ---------- */

#define SECONDS_PER_DAY 86400

typedef struct {
  Importer imp;
  gint64 room;
  GRegex *timed;     /* [channel date] [HH:MM(:SS)] rest */
  GRegex *say;       /* <nick> text */
  GRegex *action;    /* * nick text */
  GRegex *notice;    /* -nick- text */
  GRegex *event;     /* === nick rest */
  GRegex *presence;  /* [user@host] has joined|left|quit ... */
  GRegex *renamed;   /* is now known as new */
  gboolean have_day;
  gint64 day;        /* midnight (UTC) of the current line's day */
  gint prev_time;    /* seconds into the day of the previous timed line; -1 before the first */
  gboolean have_ts;
  gint64 ts;         /* time of the previous line: untimed lines inherit it */
  GHashTable *ids;   /* derived id -> times used: repeated identical lines stay distinct messages */
} IrcImport;

static GRegex *
compile (const char *pattern)
{
  g_autoptr (GError) error = NULL;
  GRegex *regex = g_regex_new (pattern, 0, 0, &error);

  g_assert_no_error (error); /* the patterns are constants */
  return regex;
}

static void
irc_init (IrcImport *job)
{
  job->timed = compile ("^(?:[^\\s<\\[*=-]\\S*\\s+(\\d{4}-\\d\\d-\\d\\d)\\s+)?"
                        "(?:\\[(\\d\\d?):(\\d\\d)(?::(\\d\\d))?\\]\\s*)?(.*)$");
  job->say = compile ("^<\\s*[@+%~&]?([^>\\s]+)\\s*>\\s*(.*)$");
  job->action = compile ("^\\*\\s*([^\\s*]\\S*)\\s*(.*)$");
  job->notice = compile ("^-([^\\s!-]\\S*?)-\\s+(.*)$");
  job->event = compile ("^(?:===|\\*\\*\\*|-!-)\\s+(\\S+)\\s+(.*)$");
  job->presence = compile ("^(?:\\[[^\\]]*\\]|\\([^)]*\\))?\\s*has (joined|left|quit)\\s*(\\S*?)\\s*"
                           "(?:\\[(.*)\\]|\\((.*)\\))?$");
  job->renamed = compile ("^is now known as\\s+(\\S+)$");
  job->prev_time = -1;
  job->ids = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
}

static void
irc_clear (IrcImport *job)
{
  g_regex_unref (job->timed);
  g_regex_unref (job->say);
  g_regex_unref (job->action);
  g_regex_unref (job->notice);
  g_regex_unref (job->event);
  g_regex_unref (job->presence);
  g_regex_unref (job->renamed);
  g_hash_table_unref (job->ids);
}

static gboolean
parse_day (const char *text, gint64 *out)
{
  g_autofree char *iso = g_strconcat (text, "T00:00:00Z", NULL);

  return strlen (text) == 10 && catchup_time_parse_iso (iso, out);
}

static gboolean
no_date (GError **error)
{
  g_set_error_literal (error, CATCHUP_ERROR, CATCHUP_ERROR_INVALID, _("no date is known for this line"));
  return FALSE;
}

/* A "channel YYYY-MM-DD" prefix names the line's day: no rollover guess is needed for it. */
static gboolean
irc_day (IrcImport *job, const char *date, GError **error)
{
  gint64 day;

  if (!parse_day (date, &day))
    {
      g_set_error (error, CATCHUP_ERROR, CATCHUP_ERROR_INVALID, _("“%s” is not a date"), date);
      return FALSE;
    }
  if (!job->have_day || day != job->day)
    {
      job->day = day;
      job->prev_time = -1;
      job->have_ts = FALSE;
    }
  job->have_day = TRUE;
  return TRUE;
}

static gboolean
irc_clock (IrcImport *job, const char *hh, const char *mm, const char *ss, gboolean dated, GError **error)
{
  gint h = atoi (hh), m = atoi (mm), sec = *ss ? atoi (ss) : 0;
  gint secs = h * 3600 + m * 60 + sec;

  if (h > 23 || m > 59 || sec > 60)
    {
      g_set_error (error, CATCHUP_ERROR, CATCHUP_ERROR_INVALID, _("“%s:%s” is not a time of day"), hh, mm);
      return FALSE;
    }
  if (!job->have_day)
    return no_date (error);
  if (!dated && secs < job->prev_time)
    {
      /* logs are chronological: an earlier time is past midnight; but no date is printed after 9999-12-31 */
      if (job->day + SECONDS_PER_DAY > CATCHUP_TIME_MAX)
        {
          g_set_error_literal (error, CATCHUP_ERROR, CATCHUP_ERROR_INVALID, _("the line is dated after 9999-12-31"));
          return FALSE;
        }
      job->day += SECONDS_PER_DAY;
    }
  job->prev_time = secs;
  job->ts = job->day + secs;
  job->have_ts = TRUE;
  return TRUE;
}

/* Sets job->ts from the line's day and time (an untimed line keeps the previous time) and returns the rest. */
static char *
irc_time (IrcImport *job, const char *line, GError **error)
{
  g_autoptr (GMatchInfo) match = NULL;
  g_autofree char *date = NULL, *hh = NULL, *mm = NULL, *ss = NULL;

  /* Every part of the pattern is optional and the line holds no line break, so only a failing match engine
   * can refuse it: the line is then malformed, not the import. */
  if (!g_regex_match (job->timed, line, 0, &match))
    {
      g_set_error_literal (error, CATCHUP_ERROR, CATCHUP_ERROR_INVALID, _("not a recognised IRC log line"));
      return NULL;
    }
  date = g_match_info_fetch (match, 1);
  hh = g_match_info_fetch (match, 2);
  mm = g_match_info_fetch (match, 3);
  ss = g_match_info_fetch (match, 4);
  if (*date && !irc_day (job, date, error))
    return NULL;
  if (*hh)
    {
      if (!irc_clock (job, hh, mm, ss, *date != '\0', error))
        return NULL;
    }
  else if (!job->have_ts)
    {
      if (!job->have_day)
        {
          no_date (error);
          return NULL;
        }
      job->ts = job->day;
      job->have_ts = TRUE;
    }
  return g_match_info_fetch (match, 5);
}

/* The derived id, made unique within the file for lines repeated in the same second. */
static char *
irc_message_id (IrcImport *job, gint64 ts, const char *speaker, const char *text)
{
  g_autofree char *id = catchup_message_derive_id (ts, speaker, text);
  guint seen = GPOINTER_TO_UINT (g_hash_table_lookup (job->ids, id));

  g_hash_table_replace (job->ids, g_strdup (id), GUINT_TO_POINTER (seen + 1));
  if (seen == 0)
    return g_steal_pointer (&id);
  return g_strdup_printf ("%s:%u", id, seen + 1);
}

static gboolean
irc_message (IrcImport *job, const char *speaker, const char *text, guint flags, GError **error)
{
  g_autofree char *id = irc_message_id (job, job->ts, speaker, text);
  CatchupMessage *msg = catchup_message_new (id, job->ts, speaker, text);

  msg->flags = flags;
  return importer_add (&job->imp, job->room, msg, FALSE, error);
}

/* "=== nick ...": a presence event, a nick change, or (older logs) an action. */
static gboolean
irc_event (IrcImport *job, const char *nick, const char *rest, GError **error)
{
  g_autoptr (GMatchInfo) match = NULL;

  /* Joins, parts and quits are no turns and are not kept (schema version 7): counted as read events only. */
  if (g_regex_match (job->presence, rest, 0, NULL))
    return importer_ensure_txn (&job->imp, error) && importer_event_stored (&job->imp, TRUE, error);
  if (g_regex_match (job->renamed, rest, 0, &match))
    {
      g_autofree char *new_nick = g_match_info_fetch (match, 1);

      if (!importer_ensure_txn (&job->imp, error))
        return FALSE;
      return importer_event_stored (
        &job->imp, catchup_store_add_nick_change (job->imp.store, job->room, job->ts, nick, new_nick, error), error);
    }
  return irc_message (job, nick, rest, CATCHUP_MESSAGE_ACTION, error);
}

typedef enum { IRC_SAY, IRC_NOTICE, IRC_ACTION, IRC_EVENT } IrcKind;

static gboolean
irc_line (const char *line, guint64 number, gpointer data, GError **error)
{
  IrcImport *job = data;
  g_autoptr (GError) bad = NULL;
  g_autofree char *rest = NULL;
  GRegex *forms[] = {
    [IRC_SAY] = job->say, [IRC_NOTICE] = job->notice, [IRC_ACTION] = job->action, [IRC_EVENT] = job->event,
  };

  job->imp.line = number;
  /* Logger banners ("--- Log opened ...", "--- Day changed ...") carry nothing to store. */
  if (g_str_has_prefix (line, "--- "))
    return TRUE;
  job->imp.result->read++;
  rest = irc_time (job, line, &bad);
  if (rest == NULL)
    {
      add_problem (job->imp.result, number, bad->message);
      return TRUE;
    }
  g_strchomp (rest);
  /* Events first: "*** nick has joined" also looks like an action. */
  for (int kind = IRC_EVENT; kind >= IRC_SAY; kind--)
    {
      g_autoptr (GMatchInfo) match = NULL;
      g_autofree char *nick = NULL, *text = NULL;

      if (!g_regex_match (forms[kind], rest, 0, &match))
        continue;
      nick = g_match_info_fetch (match, 1);
      text = g_match_info_fetch (match, 2);
      if (kind == IRC_EVENT)
        return irc_event (job, nick, text, error);
      return irc_message (job, nick, text, kind == IRC_ACTION ? CATCHUP_MESSAGE_ACTION : 0, error);
    }
  add_problem (job->imp.result, number, _("not a recognised IRC log line"));
  return TRUE;
}

static gboolean
irc_stream (CatchupStore *store, GInputStream *input, gint64 room, const char *date, CatchupImportResult *result,
            GCancellable *cancellable, GError **error)
{
  IrcImport job = { .room = room };
  gboolean ok;

  if (date != NULL && !parse_day (date, &job.day))
    {
      g_set_error (error, CATCHUP_ERROR, CATCHUP_ERROR_INVALID, _("“%s” is not a date (YYYY-MM-DD)"), date);
      return FALSE;
    }
  job.have_day = date != NULL;
  importer_init (&job.imp, store, result);
  irc_init (&job);
  ok = read_lines (input, irc_line, &job, cancellable, error) && importer_flush (&job.imp, error);
  importer_clear (&job.imp);
  irc_clear (&job);
  return ok;
}

gboolean
catchup_import_irc_stream (CatchupStore *store, GInputStream *input, gint64 room, const char *date,
                           CatchupImportResult *result, GCancellable *cancellable, GError **error)
{
  g_return_val_if_fail (store != NULL && G_IS_INPUT_STREAM (input) && room > 0 && result != NULL, FALSE);
  return irc_stream (store, input, room, date, result, cancellable, error);
}

gboolean
catchup_import_irc (CatchupStore *store, const char *path, gint64 room, const char *date,
                    CatchupImportResult *result, GCancellable *cancellable, GError **error)
{
  g_return_val_if_fail (store != NULL && path != NULL && room > 0 && result != NULL, FALSE);
  return import_file (irc_stream, store, path, room, date, result, cancellable, error);
}
