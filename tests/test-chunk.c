#include "config.h"

#include <string.h>

#include "catchup.h"
#include "catchup-store-private.h"
#include "test-util.h"

/* ---------- catchup_chunk_spans ---------- */

static guint
span_end (const CatchupChunkSpan *s)
{
  return s->first + s->n;
}

static guint
sum_tokens (const guint *tokens, guint from, guint to)
{
  guint t = 0;

  for (guint i = from; i < to; i++)
    t += tokens[i];
  return t;
}

/* Every property the index relies on, for one input. */
static void
check_spans (const guint *tokens, guint n, guint target, guint overlap)
{
  g_autoptr (GArray) spans = catchup_chunk_spans (tokens, n, target, overlap);

  if (n == 0)
    {
      g_assert_cmpuint (spans->len, ==, 0);
      return;
    }
  g_assert_cmpuint (spans->len, >, 0);
  g_assert_cmpuint (g_array_index (spans, CatchupChunkSpan, 0).first, ==, 0);
  g_assert_cmpuint (span_end (&g_array_index (spans, CatchupChunkSpan, spans->len - 1)), ==, n);
  for (guint c = 0; c < spans->len; c++)
    {
      const CatchupChunkSpan *s = &g_array_index (spans, CatchupChunkSpan, c);
      guint end = span_end (s);

      g_assert_cmpuint (s->n, >, 0);
      g_assert_cmpuint (end, <=, n);
      g_assert_cmpuint (s->tokens, ==, sum_tokens (tokens, s->first, end));
      /* never over the target, unless one turn alone is */
      if (s->n > 1)
        g_assert_cmpuint (s->tokens, <=, target);
      /* a turn longer than the target is a chunk of its own */
      for (guint i = s->first; i < end; i++)
        if (tokens[i] > target)
          g_assert_cmpuint (s->n, ==, 1);
      /* greedy: the turn after a chunk did not fit */
      if (end < n)
        g_assert_cmpuint (s->tokens + tokens[end], >, target);
      if (c > 0)
        {
          const CatchupChunkSpan *p = &g_array_index (spans, CatchupChunkSpan, c - 1);
          guint pend = span_end (p);
          guint ov;

          /* in order, no turn skipped, and every chunk brings at least one turn its predecessor lacks */
          g_assert_cmpuint (s->first, >, p->first);
          g_assert_cmpuint (s->first, <=, pend);
          g_assert_cmpuint (end, >, pend);
          ov = sum_tokens (tokens, s->first, pend);
          g_assert_cmpuint (ov, <=, overlap);
          /* never more overlap than needed, but as much as fits: one more turn would exceed the overlap,
           * or crowd the first new turn out of the chunk, or take the predecessor's whole */
          if (s->first > p->first + 1)
            {
              guint more = ov + tokens[s->first - 1];

              g_assert_true (more > overlap || more + tokens[pend] > target);
            }
        }
    }
}

static void
test_spans_basic (void)
{
  guint tokens[40];
  g_autoptr (GArray) spans = NULL;

  for (guint i = 0; i < G_N_ELEMENTS (tokens); i++)
    tokens[i] = 8;
  spans = catchup_chunk_spans (tokens, G_N_ELEMENTS (tokens), CATCHUP_CHUNK_TOKENS, CATCHUP_CHUNK_OVERLAP);
  /* 8-token turns: 16 to a chunk, the next one starts 4 turns (32 tokens) back */
  g_assert_cmpuint (spans->len, ==, 3);
  g_assert_cmpuint (g_array_index (spans, CatchupChunkSpan, 0).first, ==, 0);
  g_assert_cmpuint (g_array_index (spans, CatchupChunkSpan, 0).n, ==, 16);
  g_assert_cmpuint (g_array_index (spans, CatchupChunkSpan, 0).tokens, ==, 128);
  g_assert_cmpuint (g_array_index (spans, CatchupChunkSpan, 1).first, ==, 12);
  g_assert_cmpuint (g_array_index (spans, CatchupChunkSpan, 1).n, ==, 16);
  g_assert_cmpuint (g_array_index (spans, CatchupChunkSpan, 2).first, ==, 24);
  g_assert_cmpuint (g_array_index (spans, CatchupChunkSpan, 2).n, ==, 16);
  check_spans (tokens, G_N_ELEMENTS (tokens), CATCHUP_CHUNK_TOKENS, CATCHUP_CHUNK_OVERLAP);
}

static void
test_spans_empty (void)
{
  g_autoptr (GArray) spans = catchup_chunk_spans (NULL, 0, CATCHUP_CHUNK_TOKENS, CATCHUP_CHUNK_OVERLAP);
  guint one = 5;
  g_autoptr (GArray) single = catchup_chunk_spans (&one, 1, CATCHUP_CHUNK_TOKENS, CATCHUP_CHUNK_OVERLAP);

  g_assert_nonnull (spans);
  g_assert_cmpuint (spans->len, ==, 0);
  g_assert_cmpuint (single->len, ==, 1);
  g_assert_cmpuint (g_array_index (single, CatchupChunkSpan, 0).first, ==, 0);
  g_assert_cmpuint (g_array_index (single, CatchupChunkSpan, 0).n, ==, 1);
  g_assert_cmpuint (g_array_index (single, CatchupChunkSpan, 0).tokens, ==, 5);
}

static void
test_spans_long_turn (void)
{
  const guint tokens[] = { 10, 10, 10, 300, 10, 10, 129, 129, 12 };
  g_autoptr (GArray) spans = catchup_chunk_spans (tokens, G_N_ELEMENTS (tokens), CATCHUP_CHUNK_TOKENS,
                                                  CATCHUP_CHUNK_OVERLAP);
  guint alone = 0;

  check_spans (tokens, G_N_ELEMENTS (tokens), CATCHUP_CHUNK_TOKENS, CATCHUP_CHUNK_OVERLAP);
  for (guint c = 0; c < spans->len; c++)
    {
      const CatchupChunkSpan *s = &g_array_index (spans, CatchupChunkSpan, c);

      if (tokens[s->first] > CATCHUP_CHUNK_TOKENS)
        {
          g_assert_cmpuint (s->n, ==, 1);
          g_assert_cmpuint (s->tokens, ==, tokens[s->first]);
          alone++;
        }
    }
  g_assert_cmpuint (alone, ==, 3);
  /* the turns before the long one are not repeated as a chunk of their own that adds nothing */
  g_assert_cmpuint (g_array_index (spans, CatchupChunkSpan, 0).n, ==, 3);
  g_assert_cmpuint (g_array_index (spans, CatchupChunkSpan, 1).first, ==, 3);
}

/* A turn that fits alone but not after the overlap: the next chunk starts with it rather than with a
 * repetition of its predecessor's tail. */
static void
test_spans_no_redundant_chunk (void)
{
  const guint tokens[] = { 30, 30, 30, 30, 110, 5, 5 };
  g_autoptr (GArray) spans = catchup_chunk_spans (tokens, G_N_ELEMENTS (tokens), CATCHUP_CHUNK_TOKENS,
                                                  CATCHUP_CHUNK_OVERLAP);

  check_spans (tokens, G_N_ELEMENTS (tokens), CATCHUP_CHUNK_TOKENS, CATCHUP_CHUNK_OVERLAP);
  g_assert_cmpuint (spans->len, ==, 2);
  g_assert_cmpuint (g_array_index (spans, CatchupChunkSpan, 0).n, ==, 4);
  g_assert_cmpuint (g_array_index (spans, CatchupChunkSpan, 1).first, ==, 4);
  g_assert_cmpuint (g_array_index (spans, CatchupChunkSpan, 1).n, ==, 3);
}

static void
test_spans_random (void)
{
  g_autoptr (GRand) rand = g_rand_new_with_seed (20260301);

  for (guint round = 0; round < 300; round++)
    {
      guint n = g_rand_int_range (rand, 0, 120);
      g_autofree guint *tokens = g_new (guint, n + 1);
      guint target = round % 3 ? CATCHUP_CHUNK_TOKENS : 40, overlap = round % 3 ? CATCHUP_CHUNK_OVERLAP : 10;

      for (guint i = 0; i < n; i++)
        /* mostly chat-sized turns, now and then a paste */
        tokens[i] = g_rand_int_range (rand, 0, 10) ? g_rand_int_range (rand, 3, 40) : g_rand_int_range (rand, 40, 400);
      check_spans (tokens, n, target, overlap);
    }
}

/* Cutting the input at any chunk's first turn yields the same chunks from there on: what lets the index
 * re-chunk a room's tail alone. */
static void
test_spans_suffix (void)
{
  g_autoptr (GRand) rand = g_rand_new_with_seed (77);

  for (guint round = 0; round < 50; round++)
    {
      guint n = g_rand_int_range (rand, 1, 150);
      g_autofree guint *tokens = g_new (guint, n);
      g_autoptr (GArray) all = NULL;

      for (guint i = 0; i < n; i++)
        tokens[i] = g_rand_int_range (rand, 0, 12) ? g_rand_int_range (rand, 2, 45) : g_rand_int_range (rand, 100, 300);
      all = catchup_chunk_spans (tokens, n, CATCHUP_CHUNK_TOKENS, CATCHUP_CHUNK_OVERLAP);
      for (guint c = 0; c < all->len; c++)
        {
          guint first = g_array_index (all, CatchupChunkSpan, c).first;
          g_autoptr (GArray) tail = catchup_chunk_spans (tokens + first, n - first, CATCHUP_CHUNK_TOKENS,
                                                         CATCHUP_CHUNK_OVERLAP);

          g_assert_cmpuint (tail->len, ==, all->len - c);
          for (guint k = 0; k < tail->len; k++)
            {
              const CatchupChunkSpan *a = &g_array_index (all, CatchupChunkSpan, c + k);
              const CatchupChunkSpan *b = &g_array_index (tail, CatchupChunkSpan, k);

              g_assert_cmpuint (a->first, ==, b->first + first);
              g_assert_cmpuint (a->n, ==, b->n);
              g_assert_cmpuint (a->tokens, ==, b->tokens);
            }
        }
    }
}

/* ---------- the room index (catchup-index.c through the store) ---------- */

static const char *const words[] = {
  "deploy", "staging", "cluster", "cache", "invoice", "printer", "lunch", "meeting", "ticket", "review",
  "branch", "release", "dashboard", "backup", "rollback", "config", "database", "latency", "budget",
  "laptop", "vendor", "sprint", "standup", "monitor", "alert", "proxy", "certificate", "migration",
};
static const char *const speakers[] = { "ann", "bo", "cy", "dee" };

/* Message i of a deterministic room: lengths vary from a couple of words to a paste-sized line. */
static CatchupMessage *
room_message (guint i, guint salt)
{
  guint len = (i * 7 + salt) % 11 == 0 ? 90 + i % 70 : 2 + (i * 13 + salt) % 23;
  g_autoptr (GString) text = g_string_new (NULL);
  g_autofree char *id = g_strdup_printf ("m%04u", i);

  for (guint w = 0; w < len; w++)
    g_string_append_printf (text, "%s%s", w ? " " : "", words[(i * 31 + w * 17 + salt) % G_N_ELEMENTS (words)]);
  return catchup_message_new (id, 1700000000 + (gint64) i * 60, speakers[(i + salt) % G_N_ELEMENTS (speakers)],
                              text->str);
}

typedef struct {
  CatchupStore *store;
  gint64 room;
} Db;

static void
db_open (Db *db)
{
  db->store = test_store_with_room (":memory:", "prpl-irc", "me@irc.example", "#ops", &db->room);
}

static void
db_close (Db *db)
{
  g_clear_pointer (&db->store, catchup_store_close);
}

static void
db_add (Db *db, GPtrArray *msgs)
{
  g_autoptr (GError) error = NULL;

  g_assert_true (catchup_store_add_batch (db->store, db->room, msgs, NULL, &error));

  g_assert_no_error (error);

  g_assert_true (catchup_index_update (db->store, db->room, &error));
  g_assert_no_error (error);
}

static void
db_add_one (Db *db, CatchupMessage *m)
{
  g_autoptr (GPtrArray) one = g_ptr_array_new ();

  g_ptr_array_add (one, m);
  db_add (db, one);
}

static void
exec_ok (CatchupStore *store, const char *sql)
{
  g_autoptr (GError) error = NULL;

  g_assert_true (catchup_db_exec (catchup_store_db (store), sql, &error));
  g_assert_no_error (error);
}

static gint64
sql_int (CatchupStore *store, const char *sql)
{
  sqlite3_stmt *st = NULL;
  gint64 v;

  g_assert_nonnull (st = catchup_db_prepare (catchup_store_db (store), sql, NULL));
  g_assert_cmpint (sqlite3_step (st), ==, SQLITE_ROW);
  v = sqlite3_column_int64 (st, 0);
  sqlite3_reset (st);
  return v;
}

/* The room's chunks as text, by message id (rows differ between stores): "id id id | tokens | vec". */
static char *
chunk_signature (Db *db)
{
  g_autoptr (GString) out = g_string_new (NULL);
  sqlite3_stmt *st = NULL;

  g_assert_nonnull (st = catchup_db_prepare (catchup_store_db (db->store), "SELECT rows, tokens, hex(vec), first_row, last_row "
                                       "FROM chunks WHERE room = ? ORDER BY first_ts, first_row", NULL));
  sqlite3_bind_int64 (st, 1, db->room);
  while (sqlite3_step (st) == SQLITE_ROW)
    {
      const gint64 *rows = sqlite3_column_blob (st, 0);
      guint n = sqlite3_column_bytes (st, 0) / sizeof (gint64), tokens = 0;

      g_assert_cmpuint (n, >, 0);
      for (guint i = 0; i < n; i++)
        {
          gint64 row;
          g_autoptr (GError) error = NULL;
          g_autoptr (CatchupMessage) m = NULL;

          memcpy (&row, rows + i, sizeof row);
          row = GINT64_FROM_LE (row);
          if (i == 0)
            g_assert_cmpint (row, ==, sqlite3_column_int64 (st, 3));
          if (i == n - 1)
            g_assert_cmpint (row, ==, sqlite3_column_int64 (st, 4));
          m = catchup_store_get_message_by_row (db->store, row, &error);
          g_assert_no_error (error);
          tokens += catchup_text_count_turn (m->speaker, m->text);
          g_string_append_printf (out, "%s ", m->id);
        }
      /* the stored count is the turns' count, within the target unless the chunk is one long turn */
      g_assert_cmpint (sqlite3_column_int (st, 1), ==, tokens);
      if (n > 1)
        g_assert_cmpuint (tokens, <=, CATCHUP_CHUNK_TOKENS);
      {
        /* the vector by its checksum: the same text must give the same stored vector */
        g_autofree char *vec = g_compute_checksum_for_string (G_CHECKSUM_MD5,
                                                              (const char *) sqlite3_column_text (st, 2), -1);

        g_string_append_printf (out, "| %d | %.8s\n", sqlite3_column_int (st, 1), vec);
      }
    }
  sqlite3_reset (st);
  return g_string_free (g_steal_pointer (&out), FALSE);
}

/* The chunk FTS index as its vocabulary: term, documents, occurrences. */
static char *
fts_signature (Db *db)
{
  g_autoptr (GString) out = g_string_new (NULL);
  sqlite3_stmt *st = NULL;

  exec_ok (db->store, "CREATE VIRTUAL TABLE IF NOT EXISTS temp.test_vocab USING fts5vocab (main, chunks_fts, row)");
  g_assert_nonnull (st = catchup_db_prepare (catchup_store_db (db->store), "SELECT term, doc, cnt FROM temp.test_vocab ORDER BY term", NULL));
  while (sqlite3_step (st) == SQLITE_ROW)
    g_string_append_printf (out, "%s %d %d\n", sqlite3_column_text (st, 0), sqlite3_column_int (st, 1),
                            sqlite3_column_int (st, 2));
  sqlite3_reset (st);
  return g_string_free (g_steal_pointer (&out), FALSE);
}

static void
check_fts (Db *db)
{
  exec_ok (db->store, "INSERT INTO chunks_fts (chunks_fts) VALUES ('integrity-check')");
  g_assert_cmpint (sql_int (db->store, "SELECT count(*) FROM chunks_fts"), ==,
                   sql_int (db->store, "SELECT count(*) FROM chunks"));
}

/* The incremental index of `inc` equals chunking the same messages afresh in one batch. */
static void
assert_same_index (Db *inc, GPtrArray *all)
{
  Db fresh;
  g_autofree char *a = NULL, *b = NULL, *fa = NULL, *fb = NULL;

  db_open (&fresh);
  db_add (&fresh, all);
  a = chunk_signature (inc);
  b = chunk_signature (&fresh);
  g_assert_cmpstr (a, ==, b);
  check_fts (inc);
  fa = fts_signature (inc);
  fb = fts_signature (&fresh);
  g_assert_cmpstr (fa, ==, fb);
  db_close (&fresh);
}

static GPtrArray *
room_messages (guint n, guint salt)
{
  GPtrArray *msgs = g_ptr_array_new_with_free_func ((GDestroyNotify) catchup_message_free);

  for (guint i = 0; i < n; i++)
    g_ptr_array_add (msgs, room_message (i, salt));
  return msgs;
}

static void
test_index_batch (void)
{
  g_autoptr (GPtrArray) all = room_messages (120, 0);
  Db db;
  g_autofree char *sig = NULL;

  db_open (&db);
  db_add (&db, all);
  g_assert_cmpint (sql_int (db.store, "SELECT count(*) FROM chunks"), >, 5);
  /* the chunks cover every message, and the tokens column is the turns' count */
  g_assert_cmpint (sql_int (db.store, "SELECT count(*) FROM chunks WHERE tokens > 128 AND length(rows) > 8"),
                   ==, 0);
  check_fts (&db);
  /* a second batch of the same messages changes nothing */
  sig = chunk_signature (&db);
  db_add (&db, all);
  {
    g_autofree char *again = chunk_signature (&db);

    g_assert_cmpstr (sig, ==, again);
  }
  assert_same_index (&db, all);
  db_close (&db);
}

static void
test_index_append_one_at_a_time (void)
{
  g_autoptr (GPtrArray) all = room_messages (90, 3);
  Db db;

  db_open (&db);
  for (guint i = 0; i < all->len; i++)
    {
      db_add_one (&db, all->pdata[i]);
      if (i % 10 == 9 || i == all->len - 1)
        {
          g_autoptr (GPtrArray) prefix = g_ptr_array_new ();

          for (guint k = 0; k <= i; k++)
            g_ptr_array_add (prefix, all->pdata[k]);
          assert_same_index (&db, prefix);
        }
    }
  db_close (&db);
}

static void
test_index_append_batches (void)
{
  g_autoptr (GPtrArray) all = room_messages (100, 5);
  Db db;

  db_open (&db);
  for (guint i = 0; i < all->len; i += 7)
    {
      g_autoptr (GPtrArray) part = g_ptr_array_new ();

      for (guint k = i; k < MIN (i + 7, all->len); k++)
        g_ptr_array_add (part, all->pdata[k]);
      db_add (&db, part);
    }
  assert_same_index (&db, all);
  db_close (&db);
}

/* History playback: a message that arrives late with an older time sorts into the middle of the room. At
 * every position, the index must come out as if the room had been chunked with it from the start. */
static void
test_index_late_message (void)
{
  g_autoptr (GPtrArray) base = room_messages (40, 1);

  for (guint pos = 0; pos <= base->len; pos++)
    for (guint size = 0; size < 2; size++)
      {
        g_autofree char *id = g_strdup_printf ("late%u-%u", pos, size);
        /* a short line (it fits where a boundary was) or a long one */
        g_autoptr (CatchupMessage) late = catchup_message_new (id, 1700000000 + (gint64) pos * 60 - 30, "eve",
                                                               size ? "the staging proxy certificate expired and the "
                                                               "rollback of the dashboard config is waiting on the vendor "
                                                               "ticket that cy filed after the standup meeting"
                                                               : "cache ok");
        g_autoptr (GPtrArray) all = g_ptr_array_new ();
        Db db;

        db_open (&db);
        db_add (&db, base);
        db_add_one (&db, late);
        for (guint i = 0; i < base->len; i++)
          {
            if (i == pos)
              g_ptr_array_add (all, late);
            g_ptr_array_add (all, base->pdata[i]);
          }
        if (pos == base->len)
          g_ptr_array_add (all, late);
        assert_same_index (&db, all);
        db_close (&db);
      }
}

/* Several late messages in one batch, spread over the room, mixed with new ones at the end. */
static void
test_index_late_batch (void)
{
  g_autoptr (GPtrArray) all = room_messages (80, 2);
  g_autoptr (GPtrArray) first = g_ptr_array_new (), second = g_ptr_array_new ();
  Db db;

  for (guint i = 0; i < all->len; i++)
    g_ptr_array_add (i % 9 == 4 || i >= 70 ? second : first, all->pdata[i]);
  db_open (&db);
  db_add (&db, first);
  db_add (&db, second);
  assert_same_index (&db, all);
  db_close (&db);
}

/* The chunks of one room of `inc` equal chunking `all` afresh in a store of its own. */
static void
assert_same_chunks (Db *inc, GPtrArray *all)
{
  Db fresh;
  g_autofree char *a = NULL, *b = NULL;

  db_open (&fresh);
  db_add (&fresh, all);
  a = chunk_signature (inc);
  b = chunk_signature (&fresh);
  g_assert_cmpstr (a, ==, b);
  db_close (&fresh);
}

static GPtrArray *
slice (GPtrArray *all, guint from, guint to)
{
  GPtrArray *part = g_ptr_array_new ();

  for (guint i = from; i < to; i++)
    g_ptr_array_add (part, all->pdata[i]);
  return part;
}

/* Two rooms written in turns, one message each, then a flood in one (more new rows after the other room's
 * indexed ones than the index reads by row) and a late line in the quiet one: each room's index is its
 * messages chunked afresh, whoever wrote the rows between its updates. */
static void
test_index_rooms_interleaved (void)
{
  g_autoptr (GPtrArray) quiet = room_messages (61, 4);
  g_autoptr (GPtrArray) busy = room_messages (17000, 9);
  g_autoptr (GPtrArray) quiet_seen = NULL, flood = NULL, want = NULL;
  g_autoptr (GError) error = NULL;
  g_autoptr (CatchupMessage) late = catchup_message_new ("late", 1700000000 + 20 * 60 - 30, "eve", "cache ok");
  Db a, b;

  db_open (&a);
  b.store = a.store;
  b.room = catchup_store_ensure_room (a.store, "prpl-irc", "me@irc.example", "#busy", &error);
  g_assert_no_error (error);
  for (guint i = 0; i < 40; i++)
    {
      db_add_one (&a, quiet->pdata[i]);
      db_add_one (&b, busy->pdata[i]);
    }
  quiet_seen = slice (quiet, 0, 40);
  assert_same_chunks (&a, quiet_seen);
  flood = slice (busy, 40, busy->len);
  db_add (&b, flood);
  /* after the flood: a late line that sorts into the middle, then the rest at the end */
  db_add_one (&a, late);
  for (guint i = 40; i < quiet->len; i++)
    db_add_one (&a, quiet->pdata[i]);
  want = slice (quiet, 0, quiet->len);
  g_ptr_array_insert (want, 20, late);
  assert_same_chunks (&a, want);
  assert_same_chunks (&b, busy);
  check_fts (&a);
  db_close (&a);
}

static void
test_index_clear_and_forget (void)
{
  g_autoptr (GPtrArray) all = room_messages (60, 6);
  g_autoptr (GPtrArray) other = room_messages (50, 8);
  g_autoptr (GError) error = NULL;
  Db db, second;
  gint64 room2;
  g_autofree char *before = NULL, *after = NULL;

  db_open (&db);
  db_add (&db, all);
  /* a second room in the same store, whose index must survive the first one's removal */
  room2 = catchup_store_ensure_room (db.store, "prpl-irc", "me@irc.example", "#other", &error);
  g_assert_no_error (error);
  second.store = db.store;
  second.room = room2;
  for (guint i = 0; i < other->len; i++)
    {
      CatchupMessage *m = other->pdata[i];
      g_autofree char *id = g_strdup_printf ("o-%s", m->id);

      g_free (m->id);
      m->id = g_steal_pointer (&id);
    }
  db_add (&second, other);
  before = chunk_signature (&second);

  g_assert_true (catchup_index_clear (db.store, db.room, &error));
  g_assert_no_error (error);
  {
    g_autofree char *sql = g_strdup_printf ("SELECT count(*) FROM chunks WHERE room = %" G_GINT64_FORMAT, db.room);

    g_assert_cmpint (sql_int (db.store, sql), ==, 0);
  }
  check_fts (&db);
  /* rebuilt from nothing: the same index as before */
  g_assert_true (catchup_index_update (db.store, db.room, &error));
  g_assert_no_error (error);
  check_fts (&db);
  {
    g_autofree char *sig = chunk_signature (&db);
    Db fresh;
    g_autofree char *want = NULL;

    db_open (&fresh);
    db_add (&fresh, all);
    want = chunk_signature (&fresh);
    g_assert_cmpstr (sig, ==, want);
    db_close (&fresh);
  }

  g_assert_true (catchup_retention_forget_room (db.store, db.room, &error));
  g_assert_no_error (error);
  check_fts (&db);
  after = chunk_signature (&second);
  g_assert_cmpstr (before, ==, after);
  /* only the other room's terms are left in the FTS index */
  {
    Db fresh;
    g_autofree char *fa = fts_signature (&db), *fb = NULL;

    db_open (&fresh);
    db_add (&fresh, other);
    fb = fts_signature (&fresh);
    g_assert_cmpstr (fa, ==, fb);
    db_close (&fresh);
  }
  g_assert_true (catchup_retention_forget_room (db.store, room2, &error));
  g_assert_no_error (error);
  check_fts (&db);
  g_assert_cmpint (sql_int (db.store, "SELECT count(*) FROM chunks"), ==, 0);
  g_assert_cmpint (sql_int (db.store, "SELECT count(*) FROM temp.test_vocab"), ==, 0);
  db_close (&db);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/catchup/chunk/basic", test_spans_basic);
  g_test_add_func ("/catchup/chunk/empty", test_spans_empty);
  g_test_add_func ("/catchup/chunk/long-turn", test_spans_long_turn);
  g_test_add_func ("/catchup/chunk/no-redundant-chunk", test_spans_no_redundant_chunk);
  g_test_add_func ("/catchup/chunk/random-properties", test_spans_random);
  g_test_add_func ("/catchup/chunk/suffix", test_spans_suffix);
  g_test_add_func ("/catchup/index/batch", test_index_batch);
  g_test_add_func ("/catchup/index/append-one-at-a-time", test_index_append_one_at_a_time);
  g_test_add_func ("/catchup/index/append-batches", test_index_append_batches);
  g_test_add_func ("/catchup/index/late-message", test_index_late_message);
  g_test_add_func ("/catchup/index/late-batch", test_index_late_batch);
  g_test_add_func ("/catchup/index/clear-and-forget", test_index_clear_and_forget);
  g_test_add_func ("/catchup/index/rooms-interleaved", test_index_rooms_interleaved);
  return g_test_run ();
}
