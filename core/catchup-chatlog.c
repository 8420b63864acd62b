#include "config.h"

#include "catchup-chatlog.h"

#include <stdlib.h>
#include <string.h>

#include "catchup-message.h"
#include "catchup-text.h"

/* libpurple's loggers date a line ("%x %X") when it was older than this at writing time (log.c,
 * log_get_timestamp): a line with a bare time was written at most this long after it was said. */
#define UNDATED_MAX_AGE (20 * 60)
/* A stamp is short: "(11/30/2026 07:31:46 AM)" in the longest common locales. */
#define MAX_STAMP_BYTES 64
/* A speaker in a text log: longer or wordier "name: " prefixes are notices ("Unable to send message: ..."). */
#define MAX_NICK_BYTES 64
#define MAX_NICK_SPACES 2

/* The HTML logger's colours (log.c, html_logger_write). */
#define COLOR_SEND    "#16569E"
#define COLOR_ACTION  "#062585"
#define COLOR_ERROR   "#FF0000"

void
catchup_chatlog_line_free (CatchupChatlogLine *line)
{
  if (line == NULL)
    return;
  g_free (line->nick);
  g_free (line->text);
  g_free (line);
}

/* ---------- markup ---------- */

static const struct {
  const char *name;
  const char *text;
} entities[] = {
  { "amp;", "&" }, { "lt;", "<" }, { "gt;", ">" }, { "nbsp;", " " }, { "copy;", "\302\251" },
  { "quot;", "\"" }, { "reg;", "\302\256" }, { "apos;", "'" },
};

/* The entity at p (after its '&'), appended to out; its length, or 0 when p is no entity. */
static gsize
decode_entity (const char *p, GString *out)
{
  for (guint i = 0; i < G_N_ELEMENTS (entities); i++)
    if (g_ascii_strncasecmp (p, entities[i].name, strlen (entities[i].name)) == 0)
      {
        g_string_append (out, entities[i].text);
        return strlen (entities[i].name);
      }
  if (p[0] == '#' && (g_ascii_isxdigit (p[1]) || p[1] == 'x'))
    {
      gboolean hex = p[1] == 'x';
      char *end = NULL;
      guint64 code = g_ascii_strtoull (p + 1 + hex, &end, hex ? 16 : 10);

      if (code == 0 || code > 0x10FFFF || end == NULL || *end != ';' || !g_unichar_validate ((gunichar) code))
        return 0;
      g_string_append_unichar (out, (gunichar) code);
      return end - p + 1;
    }
  return 0;
}

static char *
unescape (const char *text, gsize len)
{
  GString *out = g_string_sized_new (len);

  for (gsize i = 0; i < len; i++)
    {
      gsize n;

      if (text[i] == '&' && i + 1 < len && (n = decode_entity (text + i + 1, out)) > 0 && i + 1 + n <= len)
        i += n;
      else
        g_string_append_c (out, text[i]);
    }
  return g_string_free (out, FALSE);
}

/* The value of href="..." inside the tag [tag, end). */
static char *
tag_href (const char *tag, const char *end)
{
  const char *p = tag;
  char delim = ' ';
  const char *stop;

  while (p < end && g_ascii_strncasecmp (p, "href=", 5) != 0)
    p++;
  if (p >= end)
    return NULL;
  p += 5;
  if (*p == '"' || *p == '\'')
    delim = *p++;
  for (stop = p; stop < end && *stop != delim; stop++)
    ;
  return unescape (p, stop - p);
}

static gboolean
tag_is (const char *tag, const char *name)
{
  gsize n = strlen (name);

  return g_ascii_strncasecmp (tag + 1, name, n) == 0 && !g_ascii_isalnum (tag[1 + n]);
}

char *
catchup_chatlog_strip_markup (const char *html)
{
  GString *out = g_string_sized_new (strlen (html));
  g_autofree char *href = NULL;
  gsize href_start = 0;
  const char *p = html;

  while (*p != '\0')
    {
      if (*p == '<' && p[1] != '\0' && !g_ascii_isspace (p[1]))
        {
          const char *end = p + 1;

          while (*end != '\0' && *end != '>' && *end != '<')
            end++;
          if (tag_is (p, "a") && g_ascii_isspace (p[2]))
            {
              g_free (href);
              href = tag_href (p, end);
              href_start = out->len;
            }
          else if (tag_is (p, "/a") && href != NULL)
            {
              /* As libpurple: the address only when the link's text is not the address itself. */
              const char *shown = out->str + href_start;
              gsize shown_len = out->len - href_start;

              if (!(strlen (href) == shown_len && strncmp (shown, href, shown_len) == 0)
                  && !(g_str_has_prefix (href, "http://") && strlen (href) - 7 == shown_len
                       && strncmp (shown, href + 7, shown_len) == 0))
                g_string_append_printf (out, " (%s)", href);
              g_clear_pointer (&href, g_free);
            }
          else if (tag_is (p, "br") || tag_is (p, "br/") || tag_is (p, "/table")
                   || (out->len > 0 && (tag_is (p, "p") || tag_is (p, "div") || tag_is (p, "li")
                                        || tag_is (p, "tr") || tag_is (p, "hr"))))
            g_string_append_c (out, '\n');
          p = *end == '>' ? end + 1 : end;
          continue;
        }
      if (*p == '&')
        {
          gsize n = decode_entity (p + 1, out);

          if (n > 0)
            {
              p += n + 1;
              continue;
            }
        }
      g_string_append_c (out, g_ascii_isspace (*p) ? ' ' : *p);
      p++;
    }
  return g_string_free (out, FALSE);
}

/* ---------- libpurple's notices ---------- */

typedef struct {
  const char *format;
  CatchupChatlogKind kind;
  int nick_arg, text_arg;   /* 1-based; 0: none */
} NoticeFormat;

/* The notices of libpurple 2.x (conversation.c) that are events. Every other notice (topics, kicks, modes,
 * errors) is told apart by its form: in the HTML log by its markup, in the text log by being "said" by the
 * room itself or by a full IRC mask, or by a prefix no nick has. */
static const NoticeFormat notice_formats[] = {
  /* Before the plain form, which would take "nick [extra]" for the nick. */
  { "%s [<I>%s</I>] entered the room.", CATCHUP_CHATLOG_JOIN, 1, 0 },
  { "%s entered the room.", CATCHUP_CHATLOG_JOIN, 1, 0 },
  { "%s left the room.", CATCHUP_CHATLOG_PART, 1, 0 },
  { "%s left the room (%s).", CATCHUP_CHATLOG_PART, 1, 2 },
  { "%s is now known as %s", CATCHUP_CHATLOG_NICK, 1, 2 },
  /* The user's own rename: the old nick is the one they had. */
  { "You are now known as %s", CATCHUP_CHATLOG_NICK, 0, 1 },
};

const char *const *
catchup_chatlog_notice_formats (void)
{
  static const char *formats[G_N_ELEMENTS (notice_formats) + 1];

  if (formats[0] == NULL)
    for (guint i = 0; i < G_N_ELEMENTS (notice_formats); i++)
      formats[i] = notice_formats[i].format;
  return formats;
}

typedef struct {
  GRegex *re;
  const NoticeFormat *format;
  int groups[4];   /* argument number of each capture group */
} Notice;

static void
notice_free (gpointer data)
{
  Notice *n = data;

  g_regex_unref (n->re);
  g_free (n);
}

/* A printf format with "%s" and "%N$s" as an anchored pattern; NULL for one with other conversions. */
static Notice *
notice_compile (const NoticeFormat *format, const char *text)
{
  g_autofree char *plain = catchup_chatlog_strip_markup (text);
  GString *pattern = g_string_new ("^");
  Notice *n = g_new0 (Notice, 1);
  const char *literal = plain;
  int group = 0;

  n->format = format;
  for (const char *p = plain; *p != '\0'; p++)
    {
      char *end = NULL;
      guint64 arg = 0;
      g_autofree char *escaped = NULL;

      if (*p != '%')
        continue;
      escaped = g_regex_escape_string (literal, p - literal);
      g_string_append (pattern, escaped);
      if (p[1] == 's')
        arg = group + 1, end = (char *) p + 1;
      else if (g_ascii_isdigit (p[1]) && (arg = g_ascii_strtoull (p + 1, &end, 10)) > 0 && end[0] == '$'
               && end[1] == 's')
        end++;
      else if (p[1] == '%')
        {
          g_string_append_c (pattern, '%');
          literal = p + 2;
          p++;
          continue;
        }
      if (end == NULL || arg == 0 || arg > G_N_ELEMENTS (n->groups) || group >= (int) G_N_ELEMENTS (n->groups))
        {
          g_string_free (pattern, TRUE);
          g_free (n);
          return NULL;
        }
      n->groups[group++] = (int) arg;
      g_string_append (pattern, "(.*?)");
      literal = end + 1;
      p = end;
    }
  {
    g_autofree char *escaped = g_regex_escape_string (literal, -1);

    g_string_append_printf (pattern, "%s$", escaped);
  }
  n->re = g_regex_new (pattern->str, G_REGEX_OPTIMIZE | G_REGEX_DOTALL, 0, NULL);
  g_string_free (pattern, TRUE);
  if (n->re == NULL)
    {
      g_free (n);
      return NULL;
    }
  return n;
}

static GPtrArray *
notices_compile (const CatchupChatlogContext *ctx)
{
  GPtrArray *notices = g_ptr_array_new_with_free_func (notice_free);

  for (guint i = 0; i < G_N_ELEMENTS (notice_formats); i++)
    {
      const char *english = notice_formats[i].format;
      const char *local = ctx->translate ? ctx->translate (english, ctx->translate_data) : NULL;
      Notice *n;

      /* The user's language first: an English log of a German user is the rarer case. */
      if (local != NULL && strcmp (local, english) != 0 && (n = notice_compile (&notice_formats[i], local)))
        g_ptr_array_add (notices, n);
      if ((n = notice_compile (&notice_formats[i], english)) != NULL)
        g_ptr_array_add (notices, n);
    }
  return notices;
}

/* ---------- parsing state ---------- */

typedef struct {
  const CatchupChatlogContext *ctx;
  GTimeZone *zone;
  gint64 reference;      /* the latest undated line; the log's start at first */
  GRegex *date_re, *time_re;
  GPtrArray *notices;
  GHashTable *own;       /* names the user's lines are written under */
  GHashTable *aliases;   /* of those, the ones that are no nick (the account's alias) */
  GHashTable *speakers;  /* every name seen so far as the logger wrote it */
  char *own_nick;        /* the user's current nick, as the lines go */
  GPtrArray *lines;
  CatchupChatlogLine *last;
} Parser;

static void
parser_init (Parser *p, const CatchupChatlogContext *ctx)
{
  p->ctx = ctx;
  p->zone = ctx->zone ? g_time_zone_ref (ctx->zone) : g_time_zone_new_offset (ctx->utc_offset);
  if (p->zone == NULL)
    p->zone = g_time_zone_new_utc ();
  p->reference = ctx->start;
  /* %x in the locales that matter: ISO and Japanese Y-M-D or Y/M/D, US and the C locale's M/D/Y, the
   * British and French D/M/Y, German and Russian D.M.Y; years of two or four digits. */
  p->date_re = g_regex_new ("(\\d{4})[-/.](\\d{1,2})[-/.](\\d{1,2})|(\\d{1,2})([/.-])(\\d{1,2})[/.-](\\d{2,4})",
                            G_REGEX_OPTIMIZE, 0, NULL);
  p->time_re = g_regex_new ("(\\d{1,2}):(\\d\\d)(?::(\\d\\d))?\\s*(?:([AaPp])\\.?\\s?[Mm]\\.?)?", G_REGEX_OPTIMIZE,
                            0, NULL);
  p->notices = notices_compile (ctx);
  p->own = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  if (ctx->own_nick != NULL && *ctx->own_nick != '\0')
    {
      g_hash_table_add (p->own, g_strdup (ctx->own_nick));
      p->own_nick = g_strdup (ctx->own_nick);
    }
  p->aliases = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  p->speakers = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  for (guint i = 0; ctx->own_names != NULL && ctx->own_names[i] != NULL; i++)
    if (*ctx->own_names[i] != '\0' && g_strcmp0 (ctx->own_names[i], ctx->own_nick) != 0)
      {
        g_hash_table_add (p->own, g_strdup (ctx->own_names[i]));
        g_hash_table_add (p->aliases, g_strdup (ctx->own_names[i]));
        g_hash_table_add (p->speakers, g_strdup (ctx->own_names[i]));
      }
  if (ctx->nicks != NULL)
    {
      GHashTableIter iter;
      gpointer name;

      g_hash_table_iter_init (&iter, ctx->nicks);
      while (g_hash_table_iter_next (&iter, &name, NULL))
        g_hash_table_add (p->speakers, g_strdup (name));
    }
  p->lines = g_ptr_array_new_with_free_func ((GDestroyNotify) catchup_chatlog_line_free);
}

static void
parser_clear (Parser *p)
{
  g_time_zone_unref (p->zone);
  g_regex_unref (p->date_re);
  g_regex_unref (p->time_re);
  g_ptr_array_unref (p->notices);
  g_hash_table_unref (p->own);
  g_hash_table_unref (p->aliases);
  g_hash_table_unref (p->speakers);
  g_free (p->own_nick);
}

/* ---------- times ---------- */

static int
fetch_int (GMatchInfo *m, int group)
{
  g_autofree char *s = g_match_info_fetch (m, group);

  return s && *s ? atoi (s) : -1;
}

static gint64
local_time (Parser *p, int y, int mo, int d, int h, int mi, int s)
{
  g_autoptr (GDateTime) dt = NULL;

  if (y < 100)
    y += 2000;
  dt = g_date_time_new (p->zone, y, mo, d, h, mi, s);
  return dt ? g_date_time_to_unix (dt) : G_MININT64;
}

/* The date of a dated stamp; a day-month ambiguity (01/02/26) goes to the reading nearer the log's start,
 * which the dated line precedes by at most the server's playback. */
static gboolean
stamp_date (Parser *p, const char *stamp, int h, int mi, int s, gint64 *ts)
{
  g_autoptr (GMatchInfo) m = NULL;
  int a, b, y;
  g_autofree char *sep = NULL;
  gint64 first, second;

  if (!g_regex_match (p->date_re, stamp, 0, &m))
    return FALSE;
  if ((y = fetch_int (m, 1)) >= 0)
    {
      *ts = local_time (p, y, fetch_int (m, 2), fetch_int (m, 3), h, mi, s);
      return *ts != G_MININT64;
    }
  a = fetch_int (m, 4);
  b = fetch_int (m, 6);
  y = fetch_int (m, 7);
  sep = g_match_info_fetch (m, 5);
  /* Dots are day first everywhere; slashes are month first in the C locale and the US, day first elsewhere. */
  first = *sep == '.' ? G_MININT64 : local_time (p, y, a, b, h, mi, s);
  second = local_time (p, y, b, a, h, mi, s);
  if (first == G_MININT64 && second == G_MININT64)
    return FALSE;
  if (first == G_MININT64 || (second != G_MININT64 && ABS (second - p->ctx->start) < ABS (first - p->ctx->start)))
    *ts = second;
  else
    *ts = first;
  return TRUE;
}

/* A line's "(%X)" or "(%x %X)" as seconds. Undated lines are in writing order and were written less than the
 * undated age after they were said. */
static gboolean
parse_stamp (Parser *p, const char *stamp, gint64 *ts)
{
  g_autoptr (GMatchInfo) m = NULL;
  g_autoptr (GDateTime) ref_utc = NULL;
  g_autoptr (GDateTime) ref = NULL;
  g_autofree char *ampm = NULL;
  int h, mi, s, y, mo, d;

  if (!g_regex_match (p->time_re, stamp, 0, &m))
    return FALSE;
  h = fetch_int (m, 1);
  mi = fetch_int (m, 2);
  s = MAX (fetch_int (m, 3), 0);
  ampm = g_match_info_fetch (m, 4);
  if (ampm != NULL && *ampm != '\0')
    {
      if (h < 1 || h > 12)
        return FALSE;
      h = h % 12 + (g_ascii_tolower (*ampm) == 'p' ? 12 : 0);
    }
  if (h > 23 || mi > 59 || s > 60)
    return FALSE;
  {
    /* The time's digits may not be read as a date's: look for the date in what precedes or follows. */
    gint start, end;
    g_autofree char *rest = NULL;

    g_match_info_fetch_pos (m, 0, &start, &end);
    rest = g_strdup_printf ("%.*s %s", start, stamp, stamp + end);
    if (stamp_date (p, rest, h, mi, s, ts))
      return TRUE;
  }
  ref_utc = g_date_time_new_from_unix_utc (p->reference);
  ref = ref_utc ? g_date_time_to_timezone (ref_utc, p->zone) : NULL;
  if (ref == NULL)
    return FALSE;
  g_date_time_get_ymd (ref, &y, &mo, &d);
  if ((*ts = local_time (p, y, mo, d, h, mi, s)) == G_MININT64)
    return FALSE;
  /* The earliest day that puts the line no more than the undated age before the latest line (or the log's
   * start): past midnight the next day, and a line said just before a log that began after midnight the day
   * before. (A log silent for more than a day loses count of the days; its lines carry no more.) */
  while (*ts < p->reference - UNDATED_MAX_AGE)
    *ts += 86400;
  while (*ts - 86400 >= p->reference - UNDATED_MAX_AGE)
    *ts -= 86400;
  p->reference = MAX (p->reference, *ts);
  return TRUE;
}

/* ---------- lines ---------- */

static CatchupChatlogLine *
add_line (Parser *p, CatchupChatlogKind kind, gint64 ts, const char *nick, char *text, guint flags)
{
  CatchupChatlogLine *line = g_new0 (CatchupChatlogLine, 1);
  const char *known = nick && p->ctx->nicks ? g_hash_table_lookup (p->ctx->nicks, nick) : NULL;

  /* The logger writes a buddy's alias where the live lines have the nick. */
  if (known != NULL && *known != '\0')
    nick = known;
  line->kind = kind;
  line->ts = ts;
  line->nick = nick ? g_strdup (nick) : NULL;
  line->text = text;
  line->flags = flags;
  g_ptr_array_add (p->lines, line);
  return line;
}

static char *
group_text (GMatchInfo *m, const Notice *n, int arg)
{
  for (guint g = 0; g < G_N_ELEMENTS (n->groups); g++)
    if (n->groups[g] == arg)
      return g_match_info_fetch (m, g + 1);
  return NULL;
}

/* A notice's text: an event when it is a join, part or nick change, else a system line. */
static void
add_notice (Parser *p, gint64 ts, char *text)
{
  g_strstrip (text);
  for (guint i = 0; i < p->notices->len; i++)
    {
      const Notice *n = p->notices->pdata[i];
      g_autoptr (GMatchInfo) m = NULL;
      g_autofree char *nick = NULL;
      char *detail;

      if (!g_regex_match (n->re, text, 0, &m))
        continue;
      nick = n->format->nick_arg ? group_text (m, n, n->format->nick_arg)
                                 : g_strdup (p->own_nick); /* "You are now known as" */
      detail = n->format->text_arg ? group_text (m, n, n->format->text_arg) : NULL;
      if (nick == NULL || *nick == '\0' || (n->format->kind == CATCHUP_CHATLOG_NICK && (detail == NULL || *detail == '\0')))
        {
          g_free (detail);
          break;
        }
      if (n->format->kind == CATCHUP_CHATLOG_NICK && g_hash_table_contains (p->own, nick))
        {
          g_hash_table_add (p->own, g_strdup (detail));
          g_free (p->own_nick);
          p->own_nick = g_strdup (detail);
        }
      add_line (p, n->format->kind, ts, nick, detail, 0);
      g_free (text);
      return;
    }
  add_line (p, CATCHUP_CHATLOG_SYSTEM, ts, NULL, text, 0);
}

static void
add_message (Parser *p, gint64 ts, const char *nick, char *text, guint flags)
{
  g_autofree char *stripped = g_strstrip (text);

  if (*nick == '\0' || *stripped == '\0')
    return;
  g_hash_table_add (p->speakers, g_strdup (nick));
  /* The logger's colour of one's own lines names one of the user's nicks. */
  if ((flags & CATCHUP_MESSAGE_OWN) && !g_hash_table_contains (p->own, nick))
    g_hash_table_add (p->own, g_strdup (nick));
  if ((flags & CATCHUP_MESSAGE_OWN) && p->own_nick == NULL)
    p->own_nick = g_strdup (nick);
  if (g_hash_table_contains (p->own, nick))
    flags |= CATCHUP_MESSAGE_OWN;
  /* Stored as live lines are, under the nick: the logger may write the account's alias for one's own lines. */
  if (p->own_nick != NULL && g_hash_table_contains (p->aliases, nick))
    nick = p->own_nick;
  p->last = add_line (p, CATCHUP_CHATLOG_MESSAGE, ts, nick, g_steal_pointer (&stripped), flags);
}

/* A line without a time continues the message before it (a multi-line message). */
static void
continue_message (Parser *p, const char *plain)
{
  char *joined;

  if (p->last == NULL || *plain == '\0')
    return;
  joined = g_strconcat (p->last->text, "\n", plain, NULL);
  g_free (p->last->text);
  p->last->text = g_strchomp (joined);
}

/* "(stamp)" at s; the stamp, with *rest after the closing parenthesis. */
static char *
take_stamp (const char *s, const char **rest)
{
  const char *close;

  if (*s != '(' || (close = strchr (s, ')')) == NULL || close - s - 1 > MAX_STAMP_BYTES || close - s - 1 < 4)
    return NULL;
  *rest = close + 1;
  return g_strndup (s + 1, close - s - 1);
}

/* ---------- the text logger ---------- */

static gboolean
plausible_nick (Parser *p, const char *nick)
{
  guint spaces = 0;

  if (*nick == '\0' || strlen (nick) > MAX_NICK_BYTES || strpbrk (nick, "()<>[]") != NULL)
    return FALSE;
  /* Notices the protocol writes "from" the room, or from a sender's full IRC mask (a topic change). */
  if (p->ctx->room != NULL && g_ascii_strcasecmp (nick, p->ctx->room) == 0)
    return FALSE;
  if (strchr (nick, '!') != NULL && strchr (nick, '@') != NULL)
    return FALSE;
  for (const char *c = nick; *c; c++)
    if (*c == ' ')
      spaces++;
  return spaces <= MAX_NICK_SPACES;
}

/* Where the name in "***name text" ends: names may have spaces (an alias), so the longest name seen so far
 * that fits, else the first word. */
static const char *
action_nick_end (Parser *p, const char *s)
{
  GHashTableIter iter;
  gpointer name;
  gsize best = 0;

  g_hash_table_iter_init (&iter, p->speakers);
  while (g_hash_table_iter_next (&iter, &name, NULL))
    {
      gsize len = strlen (name);

      if (len > best && strncmp (s, name, len) == 0 && s[len] == ' ')
        best = len;
    }
  return best > 0 ? s + best : strchr (s, ' ');
}

/* After "(stamp) ": "nick: text", "***nick text" (an action), or a notice. */
static void
parse_text_rest (Parser *p, gint64 ts, const char *rest)
{
  const char *colon = strstr (rest, ": ");

  if (g_str_has_prefix (rest, "***"))
    {
      const char *space = action_nick_end (p, rest + 3);
      g_autofree char *nick = space ? g_strndup (rest + 3, space - rest - 3) : NULL;

      if (nick != NULL && plausible_nick (p, nick))
        {
          add_message (p, ts, nick, g_strdup (space + 1), CATCHUP_MESSAGE_ACTION);
          return;
        }
    }
  if (colon != NULL)
    {
      g_autofree char *nick = g_strndup (rest, colon - rest);

      if (plausible_nick (p, nick))
        {
          gsize len = strlen (nick);

          if (len > 13 && g_str_has_suffix (nick, " <AUTO-REPLY>"))
            nick[len - 13] = '\0';
          add_message (p, ts, nick, g_strdup (colon + 2), 0);
          return;
        }
      /* "#room: The topic for #room is: ...": the notice after its sender. */
      if (p->ctx->room != NULL && g_ascii_strcasecmp (nick, p->ctx->room) == 0)
        rest = colon + 2;
      else if (strchr (nick, '!') != NULL && strchr (nick, '@') != NULL)
        rest = colon + 2;
    }
  add_notice (p, ts, g_strdup (rest));
}

static void
parse_text_line (Parser *p, const char *line)
{
  const char *rest = NULL;
  g_autofree char *stamp = take_stamp (line, &rest);
  gint64 ts;

  if (stamp == NULL || !parse_stamp (p, stamp, &ts))
    {
      continue_message (p, line);
      return;
    }
  p->last = NULL;
  if (*rest == ' ')
    rest++;
  parse_text_rest (p, ts, rest);
}

/* ---------- the HTML logger ---------- */

/* Skips the opening tags before a stamp: '<span style="color: #A82F2F">', '<font color="#A82F2F">',
 * '<span style="font-size: smaller">', '<font size="2">'; the first colour seen goes to color. */
static const char *
skip_open_tags (const char *s, char color[8])
{
  while (*s == '<' && (g_ascii_strncasecmp (s, "<span", 5) == 0 || g_ascii_strncasecmp (s, "<font", 5) == 0))
    {
      const char *end = strchr (s, '>');
      const char *hash;

      if (end == NULL)
        return s;
      hash = memchr (s, '#', end - s);
      if (hash != NULL && end - hash >= 7 && color[0] == '\0')
        {
          memcpy (color, hash, 7);
          color[7] = '\0';
        }
      s = end + 1;
    }
  return s;
}

static const char *
skip_close_tag (const char *s)
{
  if (g_ascii_strncasecmp (s, "</span>", 7) == 0 || g_ascii_strncasecmp (s, "</font>", 7) == 0)
    return s + 7;
  return s;
}

/* The message after the speaker: up to the line's closing <br>. */
static char *
html_body (const char *s)
{
  g_autofree char *copy = g_strchomp (g_strdup (s));
  gsize len = strlen (copy);

  for (const char *const *br = (const char *const[]) { "<br>", "<br/>", "<br />", NULL }; *br; br++)
    if (len >= strlen (*br) && g_ascii_strcasecmp (copy + len - strlen (*br), *br) == 0)
      {
        copy[len - strlen (*br)] = '\0';
        break;
      }
  return catchup_chatlog_strip_markup (copy);
}

/* After the stamp: ' <b>nick:</b></span> text<br>', ' <b>***nick</b></span> text<br>', or a notice,
 * '<b> text</b><br>' (red for errors), ' text<br>' (raw). */
static void
parse_html_rest (Parser *p, gint64 ts, const char *color, const char *rest)
{
  const char *who_end;

  rest = skip_close_tag (rest);
  if (g_ascii_strncasecmp (rest, " <b>", 4) == 0 && (who_end = strstr (rest + 4, "</b>")) != NULL
      && g_ascii_strcasecmp (color, COLOR_ERROR) != 0)
    {
      g_autofree char *who = unescape (rest + 4, who_end - rest - 4);
      gsize len = strlen (who);
      const char *after = skip_close_tag (who_end + 4);
      guint flags = g_ascii_strcasecmp (color, COLOR_SEND) == 0 ? CATCHUP_MESSAGE_OWN : 0;

      if (*after == ' ')
        after++;
      if (g_str_has_prefix (who, "***") && len > 3)
        {
          add_message (p, ts, who + 3, html_body (after), flags | CATCHUP_MESSAGE_ACTION);
          return;
        }
      if (len > 1 && who[len - 1] == ':')
        {
          who[len - 1] = '\0';
          if (len > 14 && g_str_has_suffix (who, " <AUTO-REPLY>"))
            who[len - 14] = '\0';
          add_message (p, ts, who, html_body (after), flags);
          return;
        }
    }
  add_notice (p, ts, html_body (rest));
}

static void
parse_html_line (Parser *p, const char *line)
{
  char color[8] = "";
  const char *s = skip_open_tags (line, color);
  const char *rest = NULL;
  g_autofree char *stamp = take_stamp (s, &rest);
  gint64 ts;

  if (stamp == NULL || !parse_stamp (p, stamp, &ts))
    {
      g_autofree char *plain = NULL;

      /* The document's end and header are no continuation. */
      if (g_str_has_prefix (line, "</") || g_str_has_prefix (line, "<!DOCTYPE") || g_str_has_prefix (line, "<html"))
        return;
      plain = html_body (line);
      continue_message (p, g_strstrip (plain));
      return;
    }
  p->last = NULL;
  parse_html_rest (p, ts, color, rest);
}

GPtrArray *
catchup_chatlog_parse (const char *text, CatchupChatlogFormat format, const CatchupChatlogContext *ctx)
{
  static const CatchupChatlogContext empty;
  /* a log is untrusted like the chat it records: no NUL or control character, and no line break but LF, which
   * the line patterns below could not match across */
  g_autofree char *valid = catchup_text_clean (text, -1, CATCHUP_TEXT_MULTI_LINE);
  g_auto (GStrv) lines = NULL;
  Parser p = { 0 };

  parser_init (&p, ctx ? ctx : &empty);
  lines = g_strsplit (valid, "\n", -1);
  /* The first line is the logger's header ("Conversation with ... at ..."), never a turn. */
  for (guint i = 1; lines[0] != NULL && lines[i] != NULL; i++)
    {
      g_strchomp (lines[i]);
      if (format == CATCHUP_CHATLOG_HTML)
        parse_html_line (&p, lines[i]);
      else
        parse_text_line (&p, lines[i]);
    }
  parser_clear (&p);
  return p.lines;
}
