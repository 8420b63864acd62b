#include "config.h"

#include <glib/gi18n-lib.h>

#include "catchup-db.h"
#include "catchup-error.h"
#include "catchup-store-private.h"

/* The history database: its schema on one connection. */
struct _CatchupStore {
  CatchupDb *db;
};

/* ---------- schema ---------- */

typedef gboolean (*MigrationStep) (CatchupStore *store, GError **error);

static gboolean
migrate_to_v1 (CatchupStore *store, GError **error)
{
  return catchup_db_exec (store->db, CATCHUP_STORE_SCHEMA_V1, error);
}

static gboolean
migrate_to_v2 (CatchupStore *store, GError **error)
{
  return catchup_db_exec (store->db, CATCHUP_STORE_SCHEMA_V2, error);
}

static gboolean
migrate_to_v3 (CatchupStore *store, GError **error)
{
  /* the index gives the chunks already there their text hashes as it next updates their room */
  return catchup_db_exec (store->db, CATCHUP_STORE_SCHEMA_V3, error);
}

/* migrations[i] takes a database from version i to i + 1. */
static gboolean
migrate_to_v4 (CatchupStore *store, GError **error)
{
  return catchup_db_exec (store->db, CATCHUP_STORE_SCHEMA_V4, error);
}

static gboolean
migrate_to_v5 (CatchupStore *store, GError **error)
{
  return catchup_db_exec (store->db, CATCHUP_STORE_SCHEMA_V5, error);
}

static gboolean
migrate_to_v6 (CatchupStore *store, GError **error)
{
  return catchup_db_exec (store->db, CATCHUP_STORE_SCHEMA_V6, error);
}

static gboolean
migrate_to_v7 (CatchupStore *store, GError **error)
{
  return catchup_db_exec (store->db, CATCHUP_STORE_SCHEMA_V7, error);
}

static const MigrationStep migrations[] = { migrate_to_v1, migrate_to_v2, migrate_to_v3, migrate_to_v4,
                                            migrate_to_v5, migrate_to_v6, migrate_to_v7 };
G_STATIC_ASSERT (G_N_ELEMENTS (migrations) == CATCHUP_STORE_SCHEMA_VERSION);

static gboolean
read_user_version (CatchupStore *store, gint64 *version, GError **error)
{
  g_autoptr (CatchupDbStmt) stmt = catchup_db_prepare (store->db, "PRAGMA user_version", error);
  gboolean found;

  *version = 0;
  return stmt != NULL && catchup_db_query_int64 (store->db, stmt, version, &found, error);
}

/* Each step and its version bump commit together, so a crash leaves a database at a known version. */
static gboolean
run_migration (CatchupStore *store, guint from, GError **error)
{
  g_autofree char *bump = g_strdup_printf ("PRAGMA user_version = %u", from + 1);

  if (!catchup_store_begin (store, error))
    return FALSE;
  if (!migrations[from](store, error) || !catchup_db_exec (store->db, bump, error))
    {
      catchup_store_rollback (store);
      return FALSE;
    }
  return catchup_store_commit (store, error);
}

static gboolean
migrate (CatchupStore *store, GError **error)
{
  gint64 version;

  if (!read_user_version (store, &version, error))
    return FALSE;
  if (version > CATCHUP_STORE_SCHEMA_VERSION || version < 0)
    {
      g_set_error (error, CATCHUP_ERROR, CATCHUP_ERROR_DB,
                   _("The history database %s has schema version %" G_GINT64_FORMAT
                     ", newer than this version of Catch-up understands (%d); please upgrade Catch-up"),
                   catchup_store_get_path (store), version, CATCHUP_STORE_SCHEMA_VERSION);
      return FALSE;
    }
  for (guint v = (guint) version; v < CATCHUP_STORE_SCHEMA_VERSION; v++)
    if (!run_migration (store, v, error))
      return FALSE;
  return TRUE;
}

/* ---------- open / close ---------- */

CatchupStore *
catchup_store_open (const char *path, GError **error)
{
  g_autoptr (CatchupStore) store = NULL;
  CatchupDb *db;

  g_return_val_if_fail (path != NULL, NULL);

  if ((db = catchup_db_open (path, error)) == NULL)
    return NULL;
  store = g_new0 (CatchupStore, 1);
  store->db = db;
  if (!migrate (store, error))
    {
      g_prefix_error (error, _("Could not open the history database %s: "), path);
      return NULL;
    }
  return g_steal_pointer (&store);
}

void
catchup_store_close (CatchupStore *store)
{
  if (store == NULL)
    return;
  g_clear_pointer (&store->db, catchup_db_close);
  g_free (store);
}

CatchupDb *
catchup_store_db (CatchupStore *store)
{
  g_return_val_if_fail (store != NULL, NULL);
  return store->db;
}

const char *
catchup_store_get_path (CatchupStore *store)
{
  g_return_val_if_fail (store != NULL, NULL);
  return catchup_db_get_path (store->db);
}

void
catchup_store_hand_over (CatchupStore *store)
{
  g_return_if_fail (store != NULL);
  catchup_db_hand_over (store->db);
}

void
catchup_store_take_over (CatchupStore *store)
{
  g_return_if_fail (store != NULL);
  catchup_db_take_over (store->db);
}

/* ---------- transactions, interruption: the connection's ---------- */

gboolean
catchup_store_begin (CatchupStore *store, GError **error)
{
  g_return_val_if_fail (store != NULL, FALSE);
  return catchup_db_begin (store->db, error);
}

gboolean
catchup_store_commit (CatchupStore *store, GError **error)
{
  g_return_val_if_fail (store != NULL, FALSE);
  return catchup_db_commit (store->db, error);
}

void
catchup_store_rollback (CatchupStore *store)
{
  g_return_if_fail (store != NULL);
  catchup_db_rollback (store->db);
}

gboolean
catchup_store_in_transaction (CatchupStore *store)
{
  g_return_val_if_fail (store != NULL, FALSE);
  return catchup_db_in_transaction (store->db);
}

void
catchup_store_set_abort (CatchupStore *store, GCancellable *abort)
{
  g_return_if_fail (store != NULL);
  catchup_db_set_abort (store->db, abort);
}

void
catchup_store_set_cancellable (CatchupStore *store, GCancellable *cancellable)
{
  g_return_if_fail (store != NULL);
  catchup_db_set_cancellable (store->db, cancellable);
}

void
catchup_store_set_busy_timeout (CatchupStore *store, guint timeout_ms)
{
  g_return_if_fail (store != NULL);
  catchup_db_set_busy_timeout (store->db, timeout_ms);
}
