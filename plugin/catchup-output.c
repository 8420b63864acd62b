#include "config.h"

#include "catchup-plugin-private.h"

#include <string.h>

#include <core.h>
#include <debug.h>
#include <eventloop.h>
#include <prefs.h>
#include <request.h>

/* Bytes of text per line posted to IRC: 512 minus the command, channel and the sender prefix servers add. */
#define IRC_LINE_BYTES 400
/* Elsewhere lines are only kept readable. */
#define OTHER_LINE_BYTES 2000
/* Inserted after a nick's first character so that posting a summary does not highlight everyone it mentions.
 * A visible character of width one (U+00B7 MIDDLE DOT): zero-width joiners or spaces are counted differently by
 * terminal clients (Finch's window border, irssi) and by the terminal, which breaks their layout. */
#define DEFUSE_MARK "\xc2\xb7"
/* Columns of the post preview in Finch, whose dialogs do not wrap. */
#define PREVIEW_COLUMNS 72

/* ---------- local output ---------- */

static void
write_local (PurpleConversation *conv, const char *html)
{
  /* A system line: no sound, no notification, never logged, never indexed. */
  purple_conversation_write (conv, NULL, html, PURPLE_MESSAGE_SYSTEM | PURPLE_MESSAGE_NO_LOG, time (NULL));
}

/* Plain text as conversation markup, each line through the one sanitiser (control characters, ESC, bidi
 * overrides) on its own, then escaped. */
static void
append_escaped_lines (GString *html, const char *plain)
{
  g_auto (GStrv) lines = g_strsplit (plain ? plain : "", "\n", -1);

  for (guint i = 0; lines[i] != NULL; i++)
    {
      g_autofree char *safe = catchup_text_sanitize (lines[i]);
      g_autofree char *escaped = g_markup_escape_text (safe, -1);

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

/* Finch strips markup and dims every line that has no sender; Pidgin shows a SYSTEM line all bold. */
gboolean
catchup_output_in_finch (void)
{
  return g_strcmp0 (purple_core_get_ui (), "gnt-purple") == 0;
}

/* The catch-up itself, for the user alone and never logged: in Pidgin a RAW line, whose markup is shown as it is
 * (names bold, text in normal weight); in Finch a line from the sender "catch-up", which Finch shows in the
 * terminal's normal colour instead of dim (it dims a SYSTEM line whatever its sender). */
static void
write_catchup (PurpleConversation *conv, const char *html)
{
  if (catchup_output_in_finch ())
    /* TRANSLATORS: the sender shown before a catch-up in Finch. */
    purple_conversation_write (conv, _("catch-up"), html, PURPLE_MESSAGE_RECV | PURPLE_MESSAGE_NO_LOG, time (NULL));
  else
    purple_conversation_write (conv, NULL, html, PURPLE_MESSAGE_SYSTEM | PURPLE_MESSAGE_NO_LOG | PURPLE_MESSAGE_RAW,
                               time (NULL));
}

/* One row of the catch-up as conversation markup; Finch shows the text without the markup. */
static void
append_row_html (GString *html, const CatchupRow *row)
{
  g_autofree char *text = g_markup_escape_text (row->text, -1);
  g_autofree char *speaker = row->speaker ? g_markup_escape_text (row->speaker, -1) : NULL;

  switch (row->kind)
    {
    case CATCHUP_ROW_HEADLINE:
      g_string_append (html, text);
      break;
    case CATCHUP_ROW_SECTION:
      g_string_append_printf (html, "<br><i>%s:</i>", text);
      break;
    case CATCHUP_ROW_LINE:
      g_string_append (html, "<br>• ");
      if (speaker != NULL)
        g_string_append_printf (html, "<b>%s</b> ", speaker);
      if (row->when != NULL)
        g_string_append_printf (html, "<font color=\"#777777\">%s</font>", row->when);
      g_string_append_printf (html, "%s%s", speaker || row->when ? ": " : "", text);
      break;
    case CATCHUP_ROW_ITEM:
      g_string_append_printf (html, "<br>&nbsp;&nbsp;&nbsp;↳ %s", text);
      break;
    case CATCHUP_ROW_NOTE:
      g_string_append_printf (html, "<br><i>%s</i>", text);
      break;
    }
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
  g_autoptr (GPtrArray) rows = NULL;

  log_written (conv, result);
  /* Finch names the sender already */
  if (!catchup_output_in_finch ())
    g_string_append_printf (html, "<b>%s</b>: ", title);
  if (summary == NULL)
    {
      append_escaped_lines (html, _("nothing worth summarising."));
      write_catchup (conv, html->str);
      return;
    }
  rows = catchup_render_rows (summary, FALSE);
  for (guint i = 0; i < rows->len; i++)
    append_row_html (html, rows->pdata[i]);
  if (summary->lines == NULL || summary->lines->len == 0)
    {
      g_autofree char *nothing = g_markup_escape_text (_("nothing worth summarising."), -1);

      g_string_append_printf (html, "<br>%s", nothing);
    }
  write_catchup (conv, html->str);
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
  /* strchr finds the terminator too: the end of the text is no nick character */
  return g_unichar_isalnum (c) || (c != 0 && strchr ("_-[]\\`^{}|", c) != NULL);
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
          g_string_append (out, DEFUSE_MARK);
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

/* The lines posted: the headline, each section's title, and each line with what resolves it in words after it
 * on the same line ("— “that fallback” → …; reply: …"). */
static GPtrArray *
summary_lines (const CatchupSummary *summary)
{
  GPtrArray *lines = g_ptr_array_new_with_free_func (g_free);
  g_autoptr (GPtrArray) rows = catchup_render_rows (summary, TRUE);
  GString *current = NULL;
  gboolean first_item = TRUE;

  for (guint i = 0; i < rows->len; i++)
    {
      const CatchupRow *row = rows->pdata[i];

      if (row->kind == CATCHUP_ROW_ITEM && current != NULL)
        {
          /* Translators: joins a posted summary line and the first of what resolves it */
          g_string_append_printf (current, "%s%s", first_item ? _(" — ") : "; ", row->text);
          first_item = FALSE;
          continue;
        }
      if (current != NULL)
        g_ptr_array_add (lines, g_string_free (g_steal_pointer (&current), FALSE));
      first_item = TRUE;
      if (row->kind == CATCHUP_ROW_HEADLINE)
        /* Translators: prefix of summaries posted to a room, so that readers know where they come from. */
        g_ptr_array_add (lines, g_strdup_printf (_("[catch-up] %s"), row->text));
      else if (row->kind == CATCHUP_ROW_SECTION)
        g_ptr_array_add (lines, g_strdup_printf ("%s:", row->text));
      else if (row->kind == CATCHUP_ROW_LINE && row->speaker != NULL)
        {
          current = g_string_new (NULL);
          g_string_printf (current, "%s: %s", row->speaker, row->text);
        }
      else if (row->kind == CATCHUP_ROW_LINE)
        current = g_string_new (row->text);
    }
  if (current != NULL)
    g_ptr_array_add (lines, g_string_free (current, FALSE));
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
  escaped = g_markup_escape_text (line, -1);
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

static PostQueue *
post_queue_for (const CatchupRoomKey *key)
{
  g_autofree char *spec = catchup_room_key_spec (key);
  PostQueue *queue;

  if (post_queues == NULL)
    {
      post_queues = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, (GDestroyNotify) post_queue_free);
      echoes = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
    }
  queue = g_hash_table_lookup (post_queues, spec);
  if (queue == NULL)
    {
      queue = g_new0 (PostQueue, 1);
      queue->key = catchup_room_key_copy (key);
      g_hash_table_insert (post_queues, g_steal_pointer (&spec), queue);
    }
  return queue;
}

/* Rate limit: one line now, the rest spaced out so that servers do not throttle or kick us. */
static void
send_lines (const CatchupRoomKey *key, GPtrArray *lines)
{
  PostQueue *queue = post_queue_for (key);

  for (guint i = 0; i < lines->len; i++)
    g_queue_push_tail (&queue->lines, g_strdup (lines->pdata[i]));
  if (queue->timer == 0 && send_next (queue))
    queue->timer = purple_timeout_add (MAX (purple_prefs_get_int (CATCHUP_PREF_POST_INTERVAL), 1), send_next, queue);
}

/* ---------- consent: the exact lines, shown before anything is sent ---------- */

typedef struct {
  CatchupRoomKey *key;
  GPtrArray *lines;     /* exactly what Post sends: defused, split to the protocol's limit */
} PendingPost;

/* Closing a request does not run its callbacks: posts still waiting for an answer are freed on unload. */
static GList *pending_posts;

static void
pending_post_free (PendingPost *pending)
{
  catchup_room_key_free (pending->key);
  g_ptr_array_unref (pending->lines);
  g_free (pending);
}

static void
post_confirmed (PendingPost *pending, int action)
{
  PurpleConversation *conv = catchup_room_key_find_conv (pending->key);

  if (conv != NULL && !purple_conv_chat_has_left (PURPLE_CONV_CHAT (conv)))
    send_lines (pending->key, pending->lines);
  else if (conv != NULL)
    catchup_output_local (conv, _("Not posted: you are no longer in this room."));
  pending_posts = g_list_remove (pending_posts, pending);
  pending_post_free (pending);
}

static void
post_cancelled (PendingPost *pending, int action)
{
  PurpleConversation *conv = catchup_room_key_find_conv (pending->key);

  if (conv != NULL)
    catchup_output_local (conv, _("Not posted."));
  pending_posts = g_list_remove (pending_posts, pending);
  pending_post_free (pending);
}

/* text broken at spaces into lines of at most columns characters (a longer word stays whole), each after the
 * first starting with indent. */
static char *
wrap_text (const char *text, glong columns, const char *indent)
{
  g_auto (GStrv) words = g_strsplit (text, " ", -1);
  g_autoptr (GString) out = g_string_new (NULL);
  glong width = 0;

  for (guint i = 0; words[i] != NULL; i++)
    {
      glong len = g_utf8_strlen (words[i], -1);

      if (*words[i] == '\0')
        continue;
      if (width > 0 && width + 1 + len > columns)
        {
          g_string_append_printf (out, "\n%s", indent);
          width = g_utf8_strlen (indent, -1);
        }
      else if (width > 0)
        {
          g_string_append_c (out, ' ');
          width++;
        }
      g_string_append (out, words[i]);
      width += len;
    }
  return g_string_free (g_steal_pointer (&out), FALSE);
}

/* The lines to send, as the preview shows them, one row each. Pidgin wraps the dialog's text itself (a second
 * wrap would break rows twice); Finch does not, so there each is wrapped at spaces, its continuations indented by
 * two spaces. */
static char *
preview_text (GPtrArray *lines)
{
  g_autoptr (GString) text = g_string_new (NULL);

  for (guint i = 0; i < lines->len; i++)
    {
      g_autofree char *wrapped = catchup_output_in_finch () ? wrap_text (lines->pdata[i], PREVIEW_COLUMNS, "  ")
                                             : g_strdup (lines->pdata[i]);

      g_string_append_printf (text, "%s%s", i ? "\n" : "", wrapped);
    }
  return g_string_free (g_steal_pointer (&text), FALSE);
}

void
catchup_output_ask_post (PurpleConversation *conv, const CatchupResult *result)
{
  g_autoptr (CatchupRoomKey) key = catchup_room_key_new (conv);
  g_autoptr (GPtrArray) nicks = NULL;
  g_autoptr (GPtrArray) lines = NULL;
  g_autoptr (GQueue) split = g_queue_new ();
  g_autofree char *primary = NULL;
  g_autofree char *preview = NULL;
  gsize limit = g_strcmp0 (key->protocol, "prpl-irc") == 0 ? IRC_LINE_BYTES : OTHER_LINE_BYTES;
  PendingPost *pending;

  if (result->summary == NULL || purple_conversation_get_type (conv) != PURPLE_CONV_TYPE_CHAT)
    return;
  nicks = room_nicks (conv, result->summary);
  lines = summary_lines (result->summary);
  for (guint i = 0; i < lines->len; i++)
    {
      g_autofree char *safe = defuse (lines->pdata[i], nicks);

      split_into (split, safe, limit);
    }
  pending = g_new0 (PendingPost, 1);
  pending->key = g_steal_pointer (&key);
  pending->lines = g_ptr_array_new_with_free_func (g_free);
  while (!g_queue_is_empty (split))
    g_ptr_array_add (pending->lines, g_queue_pop_head (split));
  pending_posts = g_list_prepend (pending_posts, pending);
  preview = preview_text (pending->lines);
  primary = g_strdup_printf (ngettext ("Send this catch-up to %s as %u line?", "Send this catch-up to %s as %u lines?",
                                       pending->lines->len),
                             purple_conversation_get_name (conv), pending->lines->len);
  /* Cancel is the default: pressing Enter by habit sends nothing. */
  purple_request_action (catchup_plugin.plugin, _("Post catch-up"), primary, preview, 1,
                         purple_conversation_get_account (conv), NULL, conv, pending, 2,
                         _("Post"), PURPLE_CALLBACK (post_confirmed),
                         _("Cancel"), PURPLE_CALLBACK (post_cancelled));
  /* Finch opens a window that was not asked for by a key press behind the others, only marked in the task bar. */
  catchup_output_local (conv, _("The lines to post wait in the window “Post catch-up”: nothing is sent before you "
                                "press Post there."));
}

void
catchup_output_stop (void)
{
  purple_request_close_with_handle (catchup_plugin.plugin);
  g_list_free_full (g_steal_pointer (&pending_posts), (GDestroyNotify) pending_post_free);
  g_clear_pointer (&post_queues, g_hash_table_unref);
  g_clear_pointer (&echoes, g_hash_table_unref);
}
