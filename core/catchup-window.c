#include "config.h"

#include <string.h>

#include <glib/gi18n-lib.h>

#include "catchup-error.h"
#include "catchup-window.h"

gboolean
catchup_window_parse_age (const char *text, gint64 now, gint64 *since)
{
  static const struct {
    char unit;
    gint64 seconds;
  } units[] = {
    { 'm', 60 }, { 'h', 3600 }, { 'd', 86400 }, { 'w', 7 * 86400 },
  };
  char *end = NULL;
  guint64 n;

  if (text == NULL || !g_ascii_isdigit (text[0]))
    return FALSE;
  /* saturates at G_MAXUINT64, which the comparison below reads as "beyond the epoch" */
  n = g_ascii_strtoull (text, &end, 10);
  if (n == 0 || end == NULL || end[0] == '\0' || end[1] != '\0')
    return FALSE;
  for (guint i = 0; i < G_N_ELEMENTS (units); i++)
    if (g_ascii_tolower (end[0]) == units[i].unit)
      {
        *since = now > 0 && n <= (guint64) (now / units[i].seconds) ? now - (gint64) n * units[i].seconds : 0;
        return TRUE;
      }
  return FALSE;
}

static gboolean
parse_count (const char *text, guint *n)
{
  char *end = NULL;
  guint64 value;

  if (!g_ascii_isdigit (text[0]))
    return FALSE;
  value = g_ascii_strtoull (text, &end, 10);
  if (end == NULL || *end != '\0' || value == 0)
    return FALSE;
  *n = (guint) MIN (value, CATCHUP_WINDOW_MAX_LAST);
  return TRUE;
}

gboolean
catchup_window_parse (const char *arg, gint64 now, CatchupWindow *window)
{
  CatchupWindow parsed = { .kind = CATCHUP_WINDOW_UNREAD };

  if (arg != NULL && parse_count (arg, &parsed.last_n))
    parsed.kind = CATCHUP_WINDOW_LAST;
  else if (arg != NULL && catchup_window_parse_age (arg, now, &parsed.since))
    parsed.kind = CATCHUP_WINDOW_SINCE;
  else if (arg != NULL)
    return FALSE;
  *window = parsed;
  return TRUE;
}

void
catchup_window_cap (CatchupWindow *window, guint room_max)
{
  if (window->max_messages != 0)
    return;
  /* "/catchup 500" in a room whose maximum is 100 means the 500: the hint after a capped catch-up says so */
  window->max_messages = window->kind == CATCHUP_WINDOW_LAST ? window->last_n : room_max;
}

static CatchupMessage *
message_or_error (CatchupStore *store, gint64 room, const char *id, GError **error)
{
  g_autoptr (GError) local = NULL;
  CatchupMessage *m = catchup_store_get_message (store, room, id, &local);

  if (m == NULL && (local == NULL || g_error_matches (local, CATCHUP_ERROR, CATCHUP_ERROR_NOT_FOUND)))
    g_set_error (error, CATCHUP_ERROR, CATCHUP_ERROR_NOT_FOUND, _("No message with id “%s” in this room."), id);
  else if (m == NULL)
    g_propagate_error (error, g_steal_pointer (&local));
  return m;
}

static GPtrArray *
window_between (CatchupStore *store, gint64 room, const char *first_id, const char *last_id, GError **error)
{
  g_autoptr (CatchupMessage) a = NULL, b = NULL;
  CatchupPos pa, pb;

  if (first_id == NULL || last_id == NULL)
    {
      g_set_error (error, CATCHUP_ERROR, CATCHUP_ERROR_INVALID, _("A window needs a first and a last message id."));
      return NULL;
    }
  if ((a = message_or_error (store, room, first_id, error)) == NULL ||
      (b = message_or_error (store, room, last_id, error)) == NULL)
    return NULL;
  pa = catchup_pos_of (a);
  pb = catchup_pos_of (b);
  if (catchup_pos_cmp (&pa, &pb) > 0)
    {
      g_set_error (error, CATCHUP_ERROR, CATCHUP_ERROR_INVALID, _("The window's first message (%s) comes after its "
                   "last (%s)."), first_id, last_id);
      return NULL;
    }
  return catchup_store_range (store, room, &pa, &pb, 0, error);
}

/* An unread window: since the start the caller knew, else since the store's last presence, else (whole_room) the
 * room's newest turns up to the cap. */
static GPtrArray *
window_unread (CatchupStore *store, gint64 room, const CatchupWindow *window, CatchupWindowInfo *info,
               gboolean *whole_room, GError **error)
{
  g_autoptr (CatchupRoomInfo) room_info = NULL;

  /* The join's view wins: after a crash the store's last presence is older than the client's last heartbeat. */
  info->since = window->since;
  if (info->since <= 0)
    {
      if ((room_info = catchup_store_room_info (store, room, error)) == NULL)
        return NULL;
      info->since = room_info->last_present;
    }
  if (info->since > 0)
    return catchup_store_since (store, room, info->since, error);
  info->since = 0;
  *whole_room = TRUE;
  return catchup_store_before (store, room, NULL, window->max_messages ? window->max_messages
                                                                       : CATCHUP_WINDOW_MAX_LAST, error);
}

/* Without a known presence the window's turns are the room's: their number and first time. */
static gboolean
count_whole_room (CatchupStore *store, gint64 room, CatchupWindowInfo *info, GError **error)
{
  g_autoptr (CatchupRoomInfo) room_info = catchup_store_room_info (store, room, error);
  gint64 n = room_info ? room_info->n_messages : -1;

  if (n < 0)
    return FALSE;
  info->total = (guint) MIN (n, G_MAXUINT);
  if (info->total != 0)
    info->start_ts = room_info->first_ts;
  return TRUE;
}

/* Counts the window's turns; the cap keeps the newest. */
static void
count_and_cap (GPtrArray *msgs, guint max, CatchupWindowInfo *info)
{
  info->total = msgs->len;
  info->start_ts = msgs->len ? ((CatchupMessage *) msgs->pdata[0])->ts : 0;
  for (guint i = 0; i < msgs->len; i++)
    if (!(((CatchupMessage *) msgs->pdata[i])->flags & CATCHUP_MESSAGE_OWN))
      info->others++;
  if (max != 0 && msgs->len > max)
    g_ptr_array_remove_range (msgs, 0, msgs->len - max);
}

GPtrArray *
catchup_window_resolve (CatchupStore *store, gint64 room, const CatchupWindow *window, CatchupWindowInfo *info,
                        GError **error)
{
  CatchupWindowInfo unused;
  g_autoptr (GPtrArray) msgs = NULL;
  gboolean whole_room = FALSE;

  if (info == NULL)
    info = &unused;
  memset (info, 0, sizeof *info);
  switch (window->kind)
    {
    case CATCHUP_WINDOW_LAST:
      msgs = catchup_store_before (store, room, NULL, MAX (window->last_n, 1), error);
      break;
    case CATCHUP_WINDOW_SINCE:
      msgs = catchup_store_since (store, room, window->since, error);
      break;
    case CATCHUP_WINDOW_BETWEEN:
      msgs = window_between (store, room, window->first_id, window->last_id, error);
      break;
    case CATCHUP_WINDOW_UNREAD:
      msgs = window_unread (store, room, window, info, &whole_room, error);
      break;
    }
  if (msgs == NULL)
    return NULL;
  count_and_cap (msgs, window->max_messages, info);
  if (whole_room && !count_whole_room (store, room, info, error))
    return NULL;
  info->room_empty = msgs->len == 0 && catchup_store_count (store, room, NULL) <= 0;
  return g_steal_pointer (&msgs);
}

void
catchup_window_settle (CatchupWindow *window, const CatchupWindowInfo *info)
{
  if (window->kind != CATCHUP_WINDOW_UNREAD)
    return;
  if (info->since != 0)
    {
      window->kind = CATCHUP_WINDOW_SINCE;
      window->since = info->since;
      return;
    }
  window->kind = CATCHUP_WINDOW_LAST;
  window->last_n = window->max_messages ? window->max_messages : CATCHUP_WINDOW_MAX_LAST;
}
