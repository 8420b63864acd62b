#include "config.h"

#include <string.h>

#include "catchup-message.h"

CatchupMessage *
catchup_message_new (const char *id, gint64 ts, const char *speaker, const char *text)
{
  CatchupMessage *msg = g_new0 (CatchupMessage, 1);

  msg->id = g_strdup (id);
  msg->ts = ts;
  msg->speaker = g_strdup (speaker ? speaker : "");
  msg->text = g_strdup (text ? text : "");
  return msg;
}

CatchupMessage *
catchup_message_copy (const CatchupMessage *msg)
{
  CatchupMessage *copy = catchup_message_new (msg->id, msg->ts, msg->speaker, msg->text);

  copy->row = msg->row;
  copy->alias = g_strdup (msg->alias);
  copy->flags = msg->flags;
  return copy;
}

void
catchup_message_free (CatchupMessage *msg)
{
  if (msg == NULL)
    return;
  g_free (msg->id);
  g_free (msg->speaker);
  g_free (msg->alias);
  g_free (msg->text);
  g_free (msg);
}

char *
catchup_message_derive_id (gint64 ts, const char *speaker, const char *text)
{
  g_autoptr (GChecksum) sum = g_checksum_new (G_CHECKSUM_SHA256);
  g_autofree char *stamp = g_strdup_printf ("%" G_GINT64_FORMAT, ts);

  /* NUL separators keep "a" + "bc" apart from "ab" + "c". */
  g_checksum_update (sum, (const guchar *) stamp, strlen (stamp) + 1);
  g_checksum_update (sum, (const guchar *) speaker, strlen (speaker) + 1);
  g_checksum_update (sum, (const guchar *) text, strlen (text));
  return g_strdup_printf ("h:%.20s", g_checksum_get_string (sum));
}

gboolean
catchup_time_parse_iso (const char *text, gint64 *out)
{
  g_autoptr (GTimeZone) utc = g_time_zone_new_utc ();
  g_autoptr (GDateTime) dt = NULL;

  if (text == NULL || *text == '\0')
    return FALSE;
  dt = g_date_time_new_from_iso8601 (text, utc);
  if (dt == NULL)
    return FALSE;
  *out = g_date_time_to_unix (dt);
  return TRUE;
}

char *
catchup_time_format_iso (gint64 ts)
{
  g_autoptr (GDateTime) dt = g_date_time_new_from_unix_utc (ts);

  if (dt == NULL)
    return g_strdup_printf ("@%" G_GINT64_FORMAT, ts);
  /* %Y does not pad: year 999 would come out as "999-…", which ISO 8601 (and our parser) does not read */
  return g_strdup_printf ("%04d-%02d-%02dT%02d:%02d:%02dZ", g_date_time_get_year (dt), g_date_time_get_month (dt),
                          g_date_time_get_day_of_month (dt), g_date_time_get_hour (dt), g_date_time_get_minute (dt),
                          g_date_time_get_second (dt));
}
