#include "config.h"

#include <sqlite3.h>

#include "catchup.h"
#include "fuzz.h"

/* The FTS5 query builder: whatever the text, the expression it builds is accepted by a real FTS5 MATCH on
 * both tokenizers the store has used (the chunk index's, and the diacritics-folding one of the message index),
 * and when one of its terms is a plain ASCII word it finds the row holding the text's own terms. The first
 * byte is the term limit. */

static sqlite3 *
fts_db (void)
{
  static sqlite3 *db;

  if (db == NULL)
    {
      char *message = NULL;

      if (sqlite3_open (":memory:", &db) != SQLITE_OK
          || sqlite3_exec (db, "CREATE VIRTUAL TABLE t0 USING fts5(body, tokenize = 'unicode61 remove_diacritics 0');"
                           "CREATE VIRTUAL TABLE t2 USING fts5(body, tokenize = 'unicode61 remove_diacritics 2');"
                           "INSERT INTO t0 VALUES ('the quick brown fox');"
                           "INSERT INTO t2 VALUES ('the quick brown fox');", NULL, NULL, &message) != SQLITE_OK)
        g_error ("in-memory FTS5 table: %s", message ? message : sqlite3_errmsg (db));
    }
  return db;
}

/* Rows of table that query matches, after replacing its one row's body by body. */
static int
match_count (const char *table, const char *body, const char *query)
{
  sqlite3 *db = fts_db ();
  sqlite3_stmt *st = NULL;
  g_autofree char *update = g_strdup_printf ("UPDATE %s SET body = ?1 WHERE rowid = 1", table);
  g_autofree char *select = g_strdup_printf ("SELECT count(*) FROM %s WHERE %s MATCH ?1", table, table);
  int n = -1;

  if (sqlite3_prepare_v2 (db, update, -1, &st, NULL) != SQLITE_OK)
    g_error ("prepare: %s", sqlite3_errmsg (db));
  sqlite3_bind_text (st, 1, body, -1, SQLITE_TRANSIENT);
  if (sqlite3_step (st) != SQLITE_DONE)
    g_error ("update: %s", sqlite3_errmsg (db));
  sqlite3_finalize (st);
  if (sqlite3_prepare_v2 (db, select, -1, &st, NULL) != SQLITE_OK)
    g_error ("prepare: %s", sqlite3_errmsg (db));
  sqlite3_bind_text (st, 1, query, -1, SQLITE_TRANSIENT);
  if (sqlite3_step (st) != SQLITE_ROW)
    g_error ("FTS5 refused the query %s: %s", query, sqlite3_errmsg (db));
  n = sqlite3_column_int (st, 0);
  sqlite3_finalize (st);
  return n;
}

/* A term FTS5's unicode61 surely keeps as one token. */
static gboolean
plain_word (const char *term)
{
  for (const char *p = term; *p; p++)
    if (!g_ascii_isalnum (*p))
      return FALSE;
  return *term != '\0';
}

static int
fuzz_one (const guint8 *data, gsize size)
{
  g_autofree char *text = NULL;
  g_autofree char *query = NULL;
  g_autofree char *joined = NULL;
  g_autoptr (GPtrArray) terms = NULL;
  gboolean plain = FALSE;
  guint max_terms;

  if (size == 0)
    return 0;
  max_terms = data[0] % 40;
  text = catchup_fuzz_string (data + 1, size - 1);
  query = catchup_text_fts_query (text, max_terms);
  if (query == NULL)
    return 0;
  /* The chunk index holds the terms as catchup_text_terms_joined cuts them, the message index the text. */
  joined = catchup_text_terms_joined (text, TRUE);
  terms = catchup_text_terms (text, TRUE);
  for (guint i = 0; i < terms->len && i < max_terms; i++)
    plain = plain || plain_word (terms->pdata[i]);
  if (plain)
    g_assert_cmpint (match_count ("t0", joined, query), ==, 1);
  else
    g_assert_cmpint (match_count ("t0", joined, query), <=, 1);
  g_assert_cmpint (match_count ("t2", text, query), <=, 1);
  return 0;
}

CATCHUP_FUZZ_TARGET ("fts-query")
