#include "config.h"

#include <string.h>

#include <glib/gi18n-lib.h>

#include "catchup-db.h"
#include "catchup-nicks.h"

struct _CatchupNicks {
  GHashTable *parent;   /* nick -> a nick of the same person, towards the person's representative */
  GPtrArray *order;     /* every renamed nick once, in the order of the renames */
};

void
catchup_nicks_free (CatchupNicks *nicks)
{
  if (nicks == NULL)
    return;
  g_hash_table_unref (nicks->parent);
  g_ptr_array_unref (nicks->order);
  g_free (nicks);
}

/* The person's representative: the root of the nick's tree (a room's renames are few, its trees shallow). */
static const char *
root_of (const CatchupNicks *nicks, const char *nick)
{
  const char *at = nick;
  const char *up;

  while ((up = g_hash_table_lookup (nicks->parent, at)) != NULL && strcmp (up, at) != 0)
    at = up;
  return at;
}

static void
note (CatchupNicks *nicks, const char *nick)
{
  if (g_hash_table_contains (nicks->parent, nick))
    return;
  g_hash_table_insert (nicks->parent, g_strdup (nick), g_strdup (nick));
  g_ptr_array_add (nicks->order, g_strdup (nick));
}

static void
link_nicks (CatchupNicks *nicks, const char *old_nick, const char *new_nick)
{
  g_autofree char *a = NULL, *b = NULL;

  note (nicks, old_nick);
  note (nicks, new_nick);
  a = g_strdup (root_of (nicks, old_nick));
  b = g_strdup (root_of (nicks, new_nick));
  if (g_strcmp0 (a, b) != 0)
    g_hash_table_insert (nicks->parent, g_steal_pointer (&a), g_steal_pointer (&b));
}

CatchupNicks *
catchup_nicks_load (CatchupStore *store, gint64 room, GError **error)
{
  CatchupDb *db = catchup_store_db (store);
  g_autoptr (CatchupDbStmt) st =
    catchup_db_prepare (db, "SELECT old_nick, new_nick FROM nicks WHERE room = ?1 ORDER BY ts, rowid", error);
  g_autoptr (CatchupNicks) nicks = NULL;
  int rc;

  if (st == NULL)
    return NULL;
  nicks = g_new0 (CatchupNicks, 1);
  nicks->parent = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  nicks->order = g_ptr_array_new_with_free_func (g_free);
  sqlite3_bind_int64 (st, 1, room);
  while ((rc = sqlite3_step (st)) == SQLITE_ROW)
    {
      const char *old_nick = (const char *) sqlite3_column_text (st, 0);
      const char *new_nick = (const char *) sqlite3_column_text (st, 1);

      /* a rename to nothing, or to itself, links nobody */
      if (old_nick != NULL && new_nick != NULL && *old_nick != '\0' && *new_nick != '\0')
        link_nicks (nicks, old_nick, new_nick);
    }
  if (rc != SQLITE_DONE)
    {
      catchup_db_set_error (db, rc, error, _("Could not read the history database"));
      return NULL;
    }
  return g_steal_pointer (&nicks);
}

gboolean
catchup_nicks_same (const CatchupNicks *nicks, const char *a, const char *b)
{
  if (a == NULL || b == NULL)
    return FALSE;
  if (g_strcmp0 (a, b) == 0)
    return TRUE;
  if (nicks == NULL || !g_hash_table_contains (nicks->parent, a) || !g_hash_table_contains (nicks->parent, b))
    return FALSE;
  return g_strcmp0 (root_of (nicks, a), root_of (nicks, b)) == 0;
}

char **
catchup_nicks_aliases (const CatchupNicks *nicks, const char *nick)
{
  g_autoptr (GStrvBuilder) b = g_strv_builder_new ();

  g_strv_builder_add (b, nick);
  for (guint i = 0; nicks != NULL && i < nicks->order->len; i++)
    {
      const char *other = nicks->order->pdata[i];

      if (g_strcmp0 (other, nick) != 0 && catchup_nicks_same (nicks, nick, other))
        g_strv_builder_add (b, other);
    }
  return g_strv_builder_end (b);
}
