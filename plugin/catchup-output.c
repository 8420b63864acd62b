#include "config.h"

#include "catchup-plugin-private.h"

#include <string.h>

#include <debug.h>
#include <eventloop.h>
#include <prefs.h>

/* Bytes of text per line posted to IRC: 512 minus the command, channel and the sender prefix servers add. */
#define IRC_LINE_BYTES 400
/* Elsewhere lines are only kept readable. */
#define OTHER_LINE_BYTES 2000
/* Inserted into nicks so that posting a summary does not highlight everyone it mentions. */
#define ZERO_WIDTH_JOINER "\xe2\x80\x8d"

/* ---------- local output ---------- */

static void
write_local (PurpleConversation *conv, const char *html)
{
  /* A system line: no sound, no notification, never logged, never indexed. */
  purple_conversation_write (conv, NULL, html, PURPLE_MESSAGE_SYSTEM | PURPLE_MESSAGE_NO_LOG, time (NULL));
}

/* Chat, model or file text as conversation markup: the one sanitiser (control characters, ESC, bidi overrides,
 * line breaks inside a field), then escaped. */
static char *
escape_field (const char *text)
{
  g_autofree char *safe = catchup_text_sanitize (text);

  return g_markup_escape_text (safe, -1);
}

static void
append_escaped_lines (GString *html, const char *plain)
{
  g_auto (GStrv) lines = g_strsplit (plain, "\n", -1);

  for (guint i = 0; lines[i] != NULL; i++)
    {
      g_autofree char *escaped = escape_field (lines[i]);

      g_string_append_printf (html, "%s%s", i ? "<br>" : "", escaped);
    }
}

void
catchup_output_local (PurpleConversation *conv, const char *plain_text)
{
  g_autoptr (GString) html = g_string_new (NULL);

  append_escaped_lines (html, plain_text);
  write_local (conv, html->str);
}

static char *
clock_time (gint64 ts)
{
  g_autoptr (GDateTime) dt = g_date_time_new_from_unix_local (ts);

  return dt ? g_date_time_format (dt, "%H:%M") : g_strdup ("?");
}

static void
append_item_html (GString *html, const char *label, const CatchupSummaryItem *item)
{
  g_autofree char *text = escape_field (item->text);
  g_autofree char *ref = item->ref ? escape_field (item->ref) : NULL;

  g_string_append (html, "<br>&nbsp;&nbsp;&nbsp;↳ ");
  if (label != NULL)
    g_string_append_printf (html, "%s ", label);
  if (ref != NULL)
    g_string_append_printf (html, "“%s” → ", ref);
  g_string_append (html, text);
  if (item->speaker != NULL)
    {
      g_autofree char *speaker = escape_field (item->speaker);
      g_autofree char *when = clock_time (item->ts);

      g_string_append_printf (html, " (%s, %s)", speaker, when);
    }
}

static void
append_items_html (GString *html, const char *label, GPtrArray *items)
{
  g_autofree char *escaped = label ? g_markup_escape_text (label, -1) : NULL;

  for (guint i = 0; items != NULL && i < items->len; i++)
    append_item_html (html, escaped, items->pdata[i]);
}

static void
append_line_html (GString *html, const CatchupSummaryLine *line)
{
  g_autofree char *speaker = escape_field (line->speaker);
  g_autofree char *when = clock_time (line->ts);

  g_string_append (html, "<br>");
  if (line->speaker != NULL)
    g_string_append_printf (html, "<b>%s</b> (%s): ", speaker, when);
  append_escaped_lines (html, line->text ? line->text : "");
  append_items_html (html, NULL, line->context);
  /* Translators: label of an earlier state that a catch-up line revises */
  append_items_html (html, _("was:"), line->supersedes);
  /* Translators: label of an answer under a catch-up line */
  append_items_html (html, _("reply:"), line->reply);
  /* Translators: label of an assent under a catch-up line */
  append_items_html (html, _("agreed:"), line->agreed);
  if (line->no_reply)
    {
      g_autofree char *none = g_markup_escape_text (_("no reply yet"), -1);

      g_string_append_printf (html, "<br>&nbsp;&nbsp;&nbsp;↳ %s", none);
    }
}

static void
append_section_html (GString *html, CatchupSection section)
{
  g_autofree char *title = g_markup_escape_text (catchup_section_title (section), -1);

  g_string_append_printf (html, "<br><i>%s</i>", title);
}

/* One debug line per catch-up shown, with a stable wording that the Pidgin smoke test waits for. */
static void
log_written (PurpleConversation *conv, const CatchupResult *result)
{
  const CatchupSummary *summary = result->summary;
  g_autoptr (GPtrArray) speakers = g_ptr_array_new ();
  g_autofree char *joined = NULL;

  for (guint i = 0; summary != NULL && summary->lines != NULL && i < summary->lines->len; i++)
    {
      const CatchupSummaryLine *line = summary->lines->pdata[i];

      if (line->speaker != NULL && !g_ptr_array_find_with_equal_func (speakers, line->speaker, g_str_equal, NULL))
        g_ptr_array_add (speakers, line->speaker);
    }
  g_ptr_array_add (speakers, NULL);
  joined = g_strjoinv (", ", (char **) speakers->pdata);
  purple_debug_info ("catchup", "catch-up written to %s: %u messages, %u summary lines, speakers: %s\n",
                     purple_conversation_get_name (conv), result->window ? result->window->len : 0,
                     summary && summary->lines ? summary->lines->len : 0, joined);
}

void
catchup_output_result (PurpleConversation *conv, const CatchupResult *result)
{
  const CatchupSummary *summary = result->summary;
  g_autoptr (GString) html = g_string_new (NULL);
  g_autofree char *title = g_markup_escape_text (_("Catch-up"), -1);

  log_written (conv, result);
  g_string_append_printf (html, "<b>%s</b>: ", title);
  if (summary == NULL || (summary->headline == NULL && (summary->lines == NULL || summary->lines->len == 0)))
    {
      append_escaped_lines (html, _("nothing worth summarising."));
      write_local (conv, html->str);
      return;
    }
  append_escaped_lines (html, summary->headline ? summary->headline : "");
  for (guint i = 0; summary->lines != NULL && i < summary->lines->len; i++)
    {
      const CatchupSummaryLine *line = summary->lines->pdata[i];

      if (i == 0 || line->section != ((CatchupSummaryLine *) summary->lines->pdata[i - 1])->section)
        append_section_html (html, line->section);
      append_line_html (html, line);
    }
  if (summary->notice != NULL)
    {
      g_autofree char *notice = escape_field (summary->notice);

      g_string_append_printf (html, "<br><i>%s</i>", notice);
    }
  write_local (conv, html->str);
}

/* ---------- posting to the room ---------- */

typedef struct {
  CatchupRoomKey *key;
  GQueue lines;         /* plain text, already split and defused */
  guint timer;
} PostQueue;

static GHashTable *post_queues;   /* room spec -> PostQueue */
static GHashTable *echoes;        /* "spec\nline" -> pending count: our posted lines coming back */

static void
post_queue_free (PostQueue *queue)
{
  if (queue->timer != 0)
    purple_timeout_remove (queue->timer);
  g_queue_clear_full (&queue->lines, g_free);
  catchup_room_key_free (queue->key);
  g_free (queue);
}

static gboolean
is_nick_char (gunichar c)
{
  return g_unichar_isalnum (c) || strchr ("_-[]\\`^{}|", c) != NULL;
}

/* Length of the nick that starts at p as a whole word (compared without case), 0 if none. */
static gsize
nick_at (const char *text, const char *p, GPtrArray *nicks)
{
  if (p > text && is_nick_char (g_utf8_get_char (g_utf8_find_prev_char (text, p))))
    return 0;
  for (guint i = 0; i < nicks->len; i++)
    {
      const char *nick = nicks->pdata[i];
      gsize len = strlen (nick);

      if (len > 0 && g_ascii_strncasecmp (p, nick, len) == 0 && !is_nick_char (g_utf8_get_char (p + len)))
        return len;
    }
  return 0;
}

static char *
defuse (const char *text, GPtrArray *nicks)
{
  GString *out = g_string_new (NULL);

  for (const char *p = text; *p != '\0';)
    {
      gsize len = nick_at (text, p, nicks);
      const char *next = g_utf8_next_char (p);

      g_string_append_len (out, p, next - p);
      if (len > (gsize) (next - p))
        {
          g_string_append (out, ZERO_WIDTH_JOINER);
          g_string_append_len (out, next, len - (next - p));
          next = p + len;
        }
      p = next;
    }
  return g_string_free (out, FALSE);
}

static GPtrArray *
room_nicks (PurpleConversation *conv, const CatchupSummary *summary)
{
  GPtrArray *nicks = g_ptr_array_new ();

  for (GList *l = purple_conv_chat_get_users (PURPLE_CONV_CHAT (conv)); l != NULL; l = l->next)
    g_ptr_array_add (nicks, (gpointer) purple_conv_chat_cb_get_name (l->data));
  /* Speakers who left may still be highlighted on their return (bouncers). */
  for (guint i = 0; summary->lines != NULL && i < summary->lines->len; i++)
    {
      const CatchupSummaryLine *line = summary->lines->pdata[i];

      if (line->speaker != NULL)
        g_ptr_array_add (nicks, line->speaker);
    }
  return nicks;
}

/* Splits at spaces, never inside a UTF-8 character; continuation pieces start with an ellipsis so that no
 * piece can begin with '/' (IRC would take it as a command). */
static void
split_into (GQueue *out, const char *line, gsize limit)
{
  const char *p = line;

  while (*p != '\0')
    {
      gsize len = strlen (p);
      const char *cut;

      if (len > limit)
        {
          cut = p + limit;
          while (cut > p && (*cut & 0xC0) == 0x80)
            cut--;
          for (const char *space = cut; space > p + limit / 2; space--)
            if (*space == ' ')
              {
                cut = space;
                break;
              }
        }
      else
        cut = p + len;
      g_queue_push_tail (out, g_strdup_printf ("%s%.*s", p == line ? "" : "… ", (int) (cut - p), p));
      p = cut;
      while (*p == ' ')
        p++;
    }
}

static GPtrArray *
summary_lines (const CatchupSummary *summary)
{
  GPtrArray *lines = g_ptr_array_new_with_free_func (g_free);

  /* Translators: prefix of summaries posted to a room, so that readers know where they come from. */
  g_ptr_array_add (lines, g_strdup_printf (_("[catch-up] %s"), summary->headline ? summary->headline : ""));
  for (guint i = 0; summary->lines != NULL && i < summary->lines->len; i++)
    {
      const CatchupSummaryLine *line = summary->lines->pdata[i];
      g_autofree char *flat = g_strdelimit (g_strdup (line->text ? line->text : ""), "\r\n", ' ');

      g_ptr_array_add (lines, line->speaker ? g_strdup_printf ("%s: %s", line->speaker, flat)
                                            : g_steal_pointer (&flat));
    }
  return lines;
}

static char *
echo_key (const CatchupRoomKey *key, const char *line)
{
  g_autofree char *spec = catchup_room_key_spec (key);
  g_autofree char *stripped = g_strstrip (g_strdup (line));

  return g_strdup_printf ("%s\n%s", spec, stripped);
}

gboolean
catchup_output_take_echo (PurpleConversation *conv, const char *plain_text)
{
  g_autoptr (CatchupRoomKey) key = NULL;
  g_autofree char *ekey = NULL;
  guint pending;

  if (echoes == NULL || g_hash_table_size (echoes) == 0)
    return FALSE;
  key = catchup_room_key_new (conv);
  ekey = echo_key (key, plain_text);
  pending = GPOINTER_TO_UINT (g_hash_table_lookup (echoes, ekey));
  if (pending == 0)
    return FALSE;
  if (pending == 1)
    g_hash_table_remove (echoes, ekey);
  else
    g_hash_table_insert (echoes, g_steal_pointer (&ekey), GUINT_TO_POINTER (pending - 1));
  return TRUE;
}

static gboolean
send_next (gpointer data)
{
  PostQueue *queue = data;
  PurpleConversation *conv = catchup_room_key_find_conv (queue->key);
  g_autofree char *line = g_queue_pop_head (&queue->lines);
  g_autofree char *escaped = NULL;
  char *ekey;

  if (conv == NULL || line == NULL || purple_conv_chat_has_left (PURPLE_CONV_CHAT (conv)))
    goto done;
  ekey = echo_key (queue->key, line);
  g_hash_table_insert (echoes, ekey, GUINT_TO_POINTER (GPOINTER_TO_UINT (g_hash_table_lookup (echoes, ekey)) + 1));
  /* Outgoing chat text is markup to libpurple. */
  escaped = escape_field (line);
  purple_conv_chat_send (PURPLE_CONV_CHAT (conv), escaped);
  if (!g_queue_is_empty (&queue->lines))
    return TRUE;
done:
  queue->timer = 0;
  {
    g_autofree char *spec = catchup_room_key_spec (queue->key);
    g_hash_table_remove (post_queues, spec);
  }
  return FALSE;
}

void
catchup_output_post (PurpleConversation *conv, const CatchupResult *result)
{
  g_autoptr (CatchupRoomKey) key = catchup_room_key_new (conv);
  g_autofree char *spec = catchup_room_key_spec (key);
  g_autoptr (GPtrArray) nicks = NULL;
  g_autoptr (GPtrArray) lines = NULL;
  gsize limit = g_strcmp0 (key->protocol, "prpl-irc") == 0 ? IRC_LINE_BYTES : OTHER_LINE_BYTES;
  PostQueue *queue;

  if (result->summary == NULL || purple_conversation_get_type (conv) != PURPLE_CONV_TYPE_CHAT)
    return;
  if (post_queues == NULL)
    {
      post_queues = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, (GDestroyNotify) post_queue_free);
      echoes = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
    }
  queue = g_hash_table_lookup (post_queues, spec);
  if (queue == NULL)
    {
      queue = g_new0 (PostQueue, 1);
      queue->key = g_steal_pointer (&key);
      g_hash_table_insert (post_queues, g_strdup (spec), queue);
    }
  nicks = room_nicks (conv, result->summary);
  lines = summary_lines (result->summary);
  for (guint i = 0; i < lines->len; i++)
    {
      g_autofree char *safe = defuse (lines->pdata[i], nicks);

      split_into (&queue->lines, safe, limit);
    }
  /* Rate limit: one line now, the rest spaced out so that servers do not throttle or kick us. */
  if (queue->timer == 0 && send_next (queue))
    queue->timer = purple_timeout_add (MAX (purple_prefs_get_int (CATCHUP_PREF_POST_INTERVAL), 1), send_next, queue);
}

void
catchup_output_stop (void)
{
  g_clear_pointer (&post_queues, g_hash_table_unref);
  g_clear_pointer (&echoes, g_hash_table_unref);
}
