#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "catchup-chatlog.h"
#include "catchup-message.h"

/* A speaker in a text log: longer or wordier "name: " prefixes are system lines ("The topic is: ..."). */
#define MAX_NICK_BYTES 64
#define MAX_NICK_SPACES 2
/* The HTML logger's colour of the user's own lines. */
#define HTML_OWN_COLOR "#16569E"

/* ---------- markup ---------- */

/* The entity at p ("&amp;", "&#233;", "&#xe9;") appended to out; its length, or 0 when p starts none. A
 * numeric entity for NUL, a surrogate or beyond Unicode is none: it stays as written, never a cut string. */
static gsize
decode_entity (const char *p, GString *out)
{
  static const struct { const char *name; const char *text; } named[] = {
    { "&amp;", "&" }, { "&lt;", "<" }, { "&gt;", ">" }, { "&quot;", "\"" }, { "&apos;", "'" },
    { "&nbsp;", " " }, { "&copy;", "\302\251" }, { "&reg;", "\302\256" },
  };
  const char *q;
  gunichar c = 0;
  gboolean hex;

  for (guint i = 0; i < G_N_ELEMENTS (named); i++)
    if (g_ascii_strncasecmp (p, named[i].name, strlen (named[i].name)) == 0)
      {
        g_string_append (out, named[i].text);
        return strlen (named[i].name);
      }
  if (p[1] != '#')
    return 0;
  hex = p[2] == 'x' || p[2] == 'X';
  for (q = p + (hex ? 3 : 2); g_ascii_isxdigit (*q) && (hex || g_ascii_isdigit (*q)) && c <= 0x10FFFF; q++)
    c = c * (hex ? 16 : 10) + (hex ? g_ascii_xdigit_value (*q) : g_ascii_digit_value (*q));
  if (*q != ';' || q == p + (hex ? 3 : 2) || c == 0 || !g_unichar_validate (c))
    return 0;
  g_string_append_unichar (out, c);
  return q + 1 - p;
}

static char *
unescape_entities (const char *text)
{
  GString *out = g_string_sized_new (strlen (text));

  while (*text)
    {
      gsize n = *text == '&' ? decode_entity (text, out) : 0;

      if (n == 0)
        g_string_append_c (out, *text);
      text += n ? n : 1;
    }
  return g_string_free (out, FALSE);
}

static gboolean
tag_is (const char *tag, const char *name)
{
  gsize n = strlen (name);

  return g_ascii_strncasecmp (tag + 1, name, n) == 0 && !g_ascii_isalnum (tag[n + 1]);
}

/* The address of an <a href=...> tag (tag..end, end at its '>'), or NULL. */
static char *
link_target (const char *tag, const char *end)
{
  g_autofree char *attrs = g_strndup (tag, end - tag);
  g_autofree char *lower = g_ascii_strdown (attrs, -1);
  const char *found = strstr (lower, "href=");
  const char *href = found ? attrs + (found - lower) : NULL;
  char quote = ' ';
  const char *stop;
  g_autofree char *raw = NULL;

  if (href == NULL)
    return NULL;
  href += 5;
  if (*href == '"' || *href == '\'')
    quote = *href++;
  for (stop = href; *stop && *stop != quote && (quote != ' ' || !g_ascii_isspace (*stop)); stop++)
    ;
  raw = g_strndup (href, stop - href);
  return unescape_entities (raw);
}

/* After a link's text: its address in parentheses, unless the text already says it. */
static void
close_link (GString *out, gsize text_start, char **href)
{
  const char *text = out->str + text_start;

  if (*href == NULL)
    return;
  if (strcmp (text, *href) != 0 && !(g_str_has_prefix (*href, "http://") && strcmp (text, *href + 7) == 0))
    g_string_append_printf (out, " (%s)", *href);
  g_clear_pointer (href, g_free);
}

char *
catchup_chatlog_strip_markup (const char *html)
{
  GString *out = g_string_sized_new (strlen (html));
  g_autofree char *href = NULL;
  gsize href_start = 0;
  const char *skip_until = NULL; /* the end tag of <script> or <style> */

  for (const char *p = html; *p;)
    {
      const char *end;

      if (skip_until != NULL)
        {
          const char *close = strstr (p, skip_until);
          p = close ? close + strlen (skip_until) : p + strlen (p);
          skip_until = NULL;
          continue;
        }
      if (*p == '&')
        {
          gsize n = decode_entity (p, out);
          if (n > 0)
            {
              p += n;
              continue;
            }
        }
      if (*p != '<' || (end = strchr (p, '>')) == NULL || g_ascii_isspace (p[1]))
        {
          g_string_append_c (out, g_ascii_isspace (*p) ? ' ' : *p);
          p++;
          continue;
        }
      if (tag_is (p, "br") || (out->len > 0 && (tag_is (p, "p") || tag_is (p, "div") || tag_is (p, "li")
                                                 || tag_is (p, "tr") || tag_is (p, "hr"))))
        g_string_append_c (out, '\n');
      else if (tag_is (p, "a"))
        {
          g_free (href);
          href = link_target (p, end);
          href_start = out->len;
        }
      else if (tag_is (p, "/a"))
        close_link (out, href_start, &href);
      else if (tag_is (p, "script"))
        skip_until = "</script>";
      else if (tag_is (p, "style"))
        skip_until = "</style>";
      p = end + 1;
    }
  return g_string_free (out, FALSE);
}

/* ---------- lines and stamps ---------- */

/* libpurple's loggers write a line's date too when the line is older than this at writing time (history
 * playback), so a line with a bare time was written at most this long after it was said. */
#define UNDATED_MAX_AGE (20 * 60)

typedef struct {
  GTimeZone *zone;      /* the log's own offset when the logger kept it */
  gint64 reference;     /* the latest line with a bare time; the log's start at first */
  GRegex *stamp_re;
} Clock;

static int
year_of (const char *text)
{
  int y = atoi (text);

  return y < 100 ? 2000 + y : y;
}

/* A date as the logger wrote it with %x: ISO (Y-M-D), US and the C locale's (M/D/Y) or European (D.M.Y); the
 * stamp pattern has three groups for each, in that order. */
static gboolean
match_date (GMatchInfo *m, int *y, int *mo, int *d)
{
  static const struct { int year, month, day; } orders[] = { { 1, 2, 3 }, { 6, 4, 5 }, { 9, 8, 7 } };

  for (guint i = 0; i < G_N_ELEMENTS (orders); i++)
    {
      g_autofree char *year = g_match_info_fetch (m, orders[i].year);
      g_autofree char *month = g_match_info_fetch (m, orders[i].month);
      g_autofree char *day = g_match_info_fetch (m, orders[i].day);

      if (year == NULL || *year == '\0')
        continue;
      *y = year_of (year);
      *mo = atoi (month);
      *d = atoi (day);
      return TRUE;
    }
  return FALSE;
}

/* A line's "(HH:MM:SS)" or "(date HH:MM:SS)" as seconds. Lines with a bare time are in writing order, give or
 * take playback of the last minutes: one clearly earlier than the latest such line is on the next day. */
static gboolean
parse_stamp (Clock *clock, const char *stamp, gint64 *ts)
{
  g_autoptr (GMatchInfo) m = NULL;
  g_autoptr (GDateTime) ref_utc = NULL;
  g_autoptr (GDateTime) ref = NULL;
  g_autoptr (GDateTime) when = NULL;
  g_autofree char *hs = NULL, *ms = NULL, *ss = NULL, *ampm = NULL;
  int y, mo, d, h;
  gboolean dated;

  if (!g_regex_match (clock->stamp_re, stamp, 0, &m))
    return FALSE;
  hs = g_match_info_fetch (m, 10);
  ms = g_match_info_fetch (m, 11);
  ss = g_match_info_fetch (m, 12);
  ampm = g_match_info_fetch (m, 13);
  h = atoi (hs);
  if (ampm != NULL && *ampm != '\0')
    h = h % 12 + (g_ascii_tolower (*ampm) == 'p' ? 12 : 0);
  ref_utc = g_date_time_new_from_unix_utc (clock->reference);
  ref = ref_utc ? g_date_time_to_timezone (ref_utc, clock->zone) : NULL;
  if (ref == NULL)
    return FALSE;
  dated = match_date (m, &y, &mo, &d);
  if (!dated)
    g_date_time_get_ymd (ref, &y, &mo, &d);
  when = g_date_time_new (clock->zone, y, mo, d, h, atoi (ms), atoi (ss));
  if (when == NULL)
    return FALSE;
  *ts = g_date_time_to_unix (when);
  if (dated)
    return TRUE;
  if (*ts < clock->reference - UNDATED_MAX_AGE)
    *ts += 86400;
  else if (*ts > clock->reference + 12 * 3600)
    *ts -= 86400; /* said just before a log that started after midnight */
  clock->reference = MAX (clock->reference, *ts);
  return TRUE;
}

static CatchupMessage *
new_message (gint64 ts, const char *nick, const char *body, guint flags)
{
  g_autofree char *text = g_strstrip (g_strdup (body));
  CatchupMessage *msg;

  if (*nick == '\0' || *text == '\0')
    return NULL;
  msg = catchup_message_new (NULL, ts, nick, text);
  msg->flags = flags;
  return msg;
}

static gboolean
plausible_nick (const char *nick)
{
  guint spaces = 0;

  if (*nick == '\0' || strlen (nick) > MAX_NICK_BYTES || strpbrk (nick, "()<>[]") != NULL)
    return FALSE;
  for (const char *p = nick; *p; p++)
    if (*p == ' ')
      spaces++;
  return spaces <= MAX_NICK_SPACES;
}

/* "nick: text" or "***nick text" (an action) after the time of a plain-text line; NULL for system lines. */
static CatchupMessage *
parse_text_rest (gint64 ts, const char *rest)
{
  const char *colon;

  if (g_str_has_prefix (rest, "***"))
    {
      const char *space = strchr (rest + 3, ' ');
      g_autofree char *nick = space ? g_strndup (rest + 3, space - rest - 3) : NULL;

      return nick ? new_message (ts, nick, space + 1, CATCHUP_MESSAGE_ACTION) : NULL;
    }
  colon = strstr (rest, ": ");
  if (colon == NULL)
    return NULL;
  {
    g_autofree char *nick = g_strndup (rest, colon - rest);

    return plausible_nick (nick) ? new_message (ts, nick, colon + 2, 0) : NULL;
  }
}

/* The HTML logger's line after the time: ' <b>nick:</b></font> text' or ' <b>***nick</b></font> text';
 * system lines have '<b> text</b>'. */
static CatchupMessage *
parse_html_rest (GRegex *re, gint64 ts, const char *line, const char *rest)
{
  g_autoptr (GMatchInfo) m = NULL;
  g_autofree char *who = NULL, *body_html = NULL, *nick = NULL, *body = NULL;
  guint flags = 0;
  gsize len;

  if (!g_regex_match (re, rest, 0, &m))
    return NULL;
  who = g_match_info_fetch (m, 1);
  body_html = g_match_info_fetch (m, 2);
  len = strlen (who);
  if (g_str_has_prefix (who, "***"))
    {
      flags |= CATCHUP_MESSAGE_ACTION;
      nick = unescape_entities (who + 3);
    }
  else if (len > 1 && who[len - 1] == ':' && who[0] != ' ')
    {
      who[len - 1] = '\0';
      nick = unescape_entities (who);
    }
  else
    return NULL;
  if (strstr (line, HTML_OWN_COLOR) != NULL)
    flags |= CATCHUP_MESSAGE_OWN;
  body = catchup_chatlog_strip_markup (body_html);
  return new_message (ts, nick, body, flags);
}

GPtrArray *
catchup_chatlog_parse (const char *text, gboolean html, gint64 start, GTimeZone *zone)
{
  g_autoptr (GRegex) line_re = NULL;
  g_autoptr (GRegex) html_re = NULL;
  GPtrArray *msgs = g_ptr_array_new_with_free_func ((GDestroyNotify) catchup_message_free);
  g_auto (GStrv) lines = g_strsplit (text, "\n", -1);
  Clock clock = { zone, start, NULL };
  CatchupMessage *last = NULL;   /* a multi-line message continues on lines without a time */

  if (html)
    {
      line_re = g_regex_new ("^(?:<[^>]+>)*\\(([^()]{5,40})\\)</font>(.*)$", 0, 0, NULL);
      html_re = g_regex_new ("^ <b>([^<]+)</b></font> ?(.*?)(<br ?/?>)?$", 0, 0, NULL);
    }
  else
    line_re = g_regex_new ("^\\(([^()]{5,40})\\) (.*)$", 0, 0, NULL);
  clock.stamp_re = g_regex_new ("^(?:(\\d{4})-(\\d\\d)-(\\d\\d)|(\\d{1,2})/(\\d{1,2})/(\\d{2,4})"
                                "|(\\d{1,2})\\.(\\d{1,2})\\.(\\d{2,4}))?\\s*"
                                "(\\d{1,2}):(\\d\\d):(\\d\\d)\\s*([AaPp])?\\.?[Mm]?\\.?$",
                                0, 0, NULL);
  for (guint i = 0; lines[i] != NULL; i++)
    {
      g_autoptr (GMatchInfo) m = NULL;
      g_autofree char *stamp = NULL, *rest = NULL;
      gint64 ts = 0;

      /* Text logs come back escaped and linkified; stripping turns newlines into spaces, so line by line. */
      if (!html)
        {
          char *plain = catchup_chatlog_strip_markup (lines[i]);
          g_free (lines[i]);
          lines[i] = plain;
        }
      g_strchomp (lines[i]);
      if (!g_regex_match (line_re, lines[i], 0, &m))
        {
          if (!html && last != NULL && *lines[i] != '\0')
            {
              char *joined = g_strconcat (last->text, "\n", lines[i], NULL);
              g_free (last->text);
              last->text = joined;
            }
          continue;
        }
      stamp = g_match_info_fetch (m, 1);
      rest = g_match_info_fetch (m, 2);
      last = NULL;
      if (!parse_stamp (&clock, stamp, &ts))
        continue;
      last = html ? parse_html_rest (html_re, ts, lines[i], rest) : parse_text_rest (ts, rest);
      if (last != NULL)
        g_ptr_array_add (msgs, last);
    }
  g_regex_unref (clock.stamp_re);
  return msgs;
}

