/*
 * bench-speed — how import and catch-up memory construction scale with the size of a room's history.
 *
 * Histories of about 10K, 40K, 160K and 2M tokens are cut from the shared corpora (the team room(s), LoCoMo's
 * conversations and the IRC logs, concatenated and repeated as needed, re-timed onto one clock), written as
 * JSON Lines and imported into a fresh database each. Then one catch-up — the memory for the last messages of
 * the room — is built repeatedly. Import and each method's runs happen in child processes so that every row's
 * peak RSS is its own, pinned to one CPU. Nothing here passes or fails: it prints a table.
 *
 * usage: bench-speed [--shared DIR] [--sizes 10k,40k,160k,2m] [--method remember,hybrid] [--runs 20]
 *                    [--budget 1024] [--window 60] [--workdir DIR]
 */
#define _GNU_SOURCE 1
#include "config.h"

#include <errno.h>
#include <glib/gstdio.h>
#include <json-glib/json-glib.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>

#include "catchup.h"

#define BENCH_ROOM "bench"
/* Turns of the synthetic clock are this far apart; only their order matters to the core. */
#define BENCH_STEP_SECONDS 30
#define BENCH_EPOCH 1577836800 /* 2020-01-01T00:00:00Z */

typedef struct {
  char *speaker;
  char *text;
} Turn;

static void
turn_free (gpointer p)
{
  Turn *t = p;

  g_free (t->speaker);
  g_free (t->text);
  g_free (t);
}

static void
corpus_add (GPtrArray *corpus, const char *speaker, const char *text)
{
  Turn *t;

  if (speaker == NULL || text == NULL || *speaker == '\0' || *text == '\0')
    return;
  t = g_new (Turn, 1);
  t->speaker = g_strdup (speaker);
  t->text = g_strstrip (g_strdup (text));
  g_ptr_array_add (corpus, t);
}

static int
compare_paths (gconstpointer a, gconstpointer b)
{
  return strcmp (*(const char *const *) a, *(const char *const *) b);
}

/* Sorted file names in dir ending in suffix, as full paths. */
static GPtrArray *
list_files (const char *dir, const char *suffix)
{
  GPtrArray *files = g_ptr_array_new_with_free_func (g_free);
  g_autoptr (GDir) d = g_dir_open (dir, 0, NULL);
  const char *name;

  while (d != NULL && (name = g_dir_read_name (d)) != NULL)
    if (g_str_has_suffix (name, suffix))
      g_ptr_array_add (files, g_build_filename (dir, name, NULL));
  g_ptr_array_sort (files, compare_paths);
  return files;
}

/* Every line of every file in dir ending in suffix, in name order, through load_line. */
static gboolean
load_files (GPtrArray *corpus, const char *dir, const char *suffix, void (*load_line) (GPtrArray *, const char *),
            GError **error)
{
  g_autoptr (GPtrArray) files = list_files (dir, suffix);

  for (guint i = 0; i < files->len; i++)
    {
      g_autofree char *data = NULL;
      g_auto (GStrv) lines = NULL;

      if (!g_file_get_contents (g_ptr_array_index (files, i), &data, NULL, error))
        return FALSE;
      lines = g_strsplit (data, "\n", -1);
      for (guint k = 0; lines[k] != NULL; k++)
        load_line (corpus, lines[k]);
    }
  return TRUE;
}

static void
load_jsonl_line (GPtrArray *corpus, const char *line)
{
  g_autoptr (JsonParser) parser = json_parser_new ();
  JsonObject *o;

  if (*line == '\0' || !json_parser_load_from_data (parser, line, -1, NULL))
    return;
  o = json_node_get_object (json_parser_get_root (parser));
  corpus_add (corpus, json_object_get_string_member_with_default (o, "speaker", NULL),
              json_object_get_string_member_with_default (o, "text", NULL));
}

/* LoCoMo: conversations of sessions of turns; a shared photo is kept as its caption, as the benchmarks do. */
static gboolean
load_locomo (GPtrArray *corpus, const char *path, GError **error)
{
  g_autoptr (JsonParser) parser = json_parser_new ();
  JsonArray *convs;

  if (!json_parser_load_from_file (parser, path, error))
    return FALSE;
  convs = json_node_get_array (json_parser_get_root (parser));
  for (guint c = 0; c < json_array_get_length (convs); c++)
    {
      JsonObject *conv = json_object_get_object_member (json_array_get_object_element (convs, c), "conversation");

      for (guint s = 1; s < 100; s++)
        {
          g_autofree char *key = g_strdup_printf ("session_%u", s);
          JsonArray *turns;

          if (!json_object_has_member (conv, key))
            continue;
          turns = json_object_get_array_member (conv, key);
          for (guint t = 0; t < json_array_get_length (turns); t++)
            {
              JsonObject *turn = json_array_get_object_element (turns, t);
              const char *caption = json_object_get_string_member_with_default (turn, "blip_caption", NULL);
              g_autofree char *text = caption != NULL
                ? g_strdup_printf ("%s [shares a photo: %s]",
                                   json_object_get_string_member_with_default (turn, "text", ""), caption)
                : g_strdup (json_object_get_string_member_with_default (turn, "text", ""));

              corpus_add (corpus, json_object_get_string_member_with_default (turn, "speaker", NULL), text);
            }
        }
    }
  return TRUE;
}

/* "[HH:MM] <nick> text", possibly after "channel YYYY-MM-DD "; event lines are skipped. */
static void
load_irc_line (GPtrArray *corpus, const char *line)
{
  const char *open = strchr (line, '[');
  const char *close = open != NULL ? strchr (open, ']') : NULL;
  const char *nick, *end;
  g_autofree char *speaker = NULL;
  g_autofree char *text = NULL;

  if (close == NULL || !g_ascii_isdigit (open[1]))
    return;
  nick = close + 1;
  while (*nick == ' ')
    nick++;
  if (*nick != '<' || (end = strchr (nick, '>')) == NULL)
    return;
  speaker = g_strndup (nick + 1, end - nick - 1);
  /* Some logs carry stray control bytes (IRC colours); the store wants valid UTF-8. */
  text = g_utf8_make_valid (end + 1, -1);
  corpus_add (corpus, speaker, text);
}

static GPtrArray *
load_corpus (const char *shared, GError **error)
{
  g_autoptr (GPtrArray) corpus = g_ptr_array_new_with_free_func (turn_free);
  g_autofree char *rooms = g_build_filename (shared, "data", "rooms", NULL);
  g_autofree char *locomo = g_build_filename (shared, "data", "locomo", "locomo10.json", NULL);
  g_autofree char *irc_dev = g_build_filename (shared, "data", "irc-ubuntu", "dev", NULL);
  g_autofree char *irc_new = g_build_filename (shared, "data", "irc-ubuntu", "new-domains", NULL);

  if (!load_files (corpus, rooms, ".jsonl", load_jsonl_line, error) || !load_locomo (corpus, locomo, error)
      || !load_files (corpus, irc_dev, ".raw.txt", load_irc_line, error)
      || !load_files (corpus, irc_new, ".ascii.txt", load_irc_line, error))
    return NULL;
  if (corpus->len == 0)
    {
      g_set_error (error, G_FILE_ERROR, G_FILE_ERROR_NOENT, "no chat turns found under %s/data", shared);
      return NULL;
    }
  return g_steal_pointer (&corpus);
}

/* --- one history --- */

typedef struct {
  guint64 messages;
  guint64 tokens;
  guint64 raw_bytes;  /* "speaker: text\n" of every turn, the size of a plain log */
} HistoryInfo;

/* Writes the first `tokens` tokens of the corpus (repeated as often as needed) as one room's JSON Lines. */
static gboolean
write_history (GPtrArray *corpus, guint64 tokens, const char *path, HistoryInfo *info, GError **error)
{
  g_autoptr (GString) out = g_string_new (NULL);
  g_autoptr (JsonGenerator) gen = json_generator_new ();

  memset (info, 0, sizeof *info);
  for (guint64 i = 0; info->tokens < tokens; i++)
    {
      const Turn *t = g_ptr_array_index (corpus, i % corpus->len);
      g_autoptr (JsonBuilder) b = json_builder_new ();
      g_autoptr (JsonNode) root = NULL;
      g_autofree char *id = g_strdup_printf ("h%07" G_GUINT64_FORMAT, i + 1);
      g_autofree char *ts = catchup_time_format_iso (BENCH_EPOCH + (gint64) i * BENCH_STEP_SECONDS);
      g_autofree char *line = NULL;

      json_builder_begin_object (b);
      json_builder_set_member_name (b, "id");
      json_builder_add_string_value (b, id);
      json_builder_set_member_name (b, "room");
      json_builder_add_string_value (b, BENCH_ROOM);
      json_builder_set_member_name (b, "ts");
      json_builder_add_string_value (b, ts);
      json_builder_set_member_name (b, "speaker");
      json_builder_add_string_value (b, t->speaker);
      json_builder_set_member_name (b, "text");
      json_builder_add_string_value (b, t->text);
      json_builder_end_object (b);
      root = json_builder_get_root (b);
      json_generator_set_root (gen, root);
      line = json_generator_to_data (gen, NULL);
      g_string_append (out, line);
      g_string_append_c (out, '\n');

      info->messages++;
      info->tokens += catchup_text_count_turn (t->speaker, t->text);
      info->raw_bytes += strlen (t->speaker) + 2 + strlen (t->text) + 1;
    }
  return g_file_set_contents (path, out->str, (gssize) out->len, error);
}

static guint64
file_size (const char *path)
{
  struct stat st;

  return stat (path, &st) == 0 ? (guint64) st.st_size : 0;
}

/* The database with whatever SQLite still keeps beside it. */
static guint64
db_bytes (const char *db)
{
  g_autofree char *wal = g_strconcat (db, "-wal", NULL);

  return file_size (db) + file_size (wal);
}

/* --- the measured phases, each in its own process --- */

/* CPU time of this process in seconds: on a shared machine wall time also measures the neighbours. */
static double
cpu_seconds (void)
{
  struct timespec ts;

  if (clock_gettime (CLOCK_PROCESS_CPUTIME_ID, &ts) != 0)
    return 0;
  return ts.tv_sec + ts.tv_nsec / 1e9;
}

static long
peak_rss_kb (void)
{
  struct rusage ru;

  return getrusage (RUSAGE_SELF, &ru) == 0 ? ru.ru_maxrss : 0;
}

/* One core, as the plugin's worker would get on a busy desktop; ignore failure (not Linux, cgroup rules). */
static void
pin_to_one_cpu (void)
{
#ifdef __linux__
  cpu_set_t set;
  int cpu = sched_getcpu ();

  if (cpu < 0)
    return;
  CPU_ZERO (&set);
  CPU_SET (cpu, &set);
  sched_setaffinity (0, sizeof set, &set);
#endif
}

static int
phase_import (const char *db, const char *file)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (CatchupStore) store = catchup_store_open (db, &error);
  g_autoptr (CatchupImportResult) result = catchup_import_result_new ();
  gint64 t0;
  double secs, cpu0;

  if (store == NULL)
    goto fail;
  t0 = g_get_monotonic_time ();
  cpu0 = cpu_seconds ();
  if (!catchup_import_jsonl (store, file, 0, result, NULL, &error))
    goto fail;
  g_clear_pointer (&store, catchup_store_close);
  secs = (g_get_monotonic_time () - t0) / 1e6;
  g_print ("inserted=%" G_GUINT64_FORMAT " malformed=%" G_GUINT64_FORMAT " seconds=%.6f cpu=%.6f rss_kb=%ld\n",
           result->inserted, result->malformed, secs, cpu_seconds () - cpu0, peak_rss_kb ());
  return 0;

fail:
  g_printerr ("bench-speed: import: %s\n", error->message);
  return 1;
}

static int
compare_doubles (gconstpointer a, gconstpointer b)
{
  double x = *(const double *) a, y = *(const double *) b;

  return (x > y) - (x < y);
}

/* Nearest-rank percentile of sorted values. */
static double
percentile (GArray *sorted, double p)
{
  guint rank = (guint) (p * sorted->len + 0.999999);

  rank = CLAMP (rank, 1, sorted->len);
  return g_array_index (sorted, double, rank - 1);
}

static int
phase_memory (const char *db, const char *method_name, guint runs, guint budget, guint window_n)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (CatchupStore) store = catchup_store_open (db, &error);
  g_autoptr (GPtrArray) window = NULL;
  g_autoptr (GArray) ms = g_array_new (FALSE, FALSE, sizeof (double));
  g_autoptr (GArray) cpu_ms = g_array_new (FALSE, FALSE, sizeof (double));
  CatchupWindow spec = { .kind = CATCHUP_WINDOW_LAST, .last_n = window_n };
  CatchupMemoryOptions opts;
  gint64 room;
  guint tokens = 0, turns = 0, gaps = 0;
  double first = 0;

  catchup_memory_options_init (&opts);
  opts.budget = budget;
  if (!catchup_method_from_string (method_name, &opts.method))
    {
      g_printerr ("bench-speed: unknown method %s\n", method_name);
      return 1;
    }
  if (store == NULL || (room = catchup_store_find_room (store, BENCH_ROOM, &error)) <= 0
      || (window = catchup_engine_window (store, room, &spec, &error)) == NULL)
    goto fail;
  for (guint i = 0; i < runs; i++)
    {
      gint64 t0 = g_get_monotonic_time ();
      double cpu0 = cpu_seconds ();
      g_autoptr (CatchupMemory) mem = catchup_memory_build (store, room, window, &opts, NULL, &error);
      /* a catch-up is memory, the records the summary reads and the built-in summary: all are timed */
      g_autoptr (GPtrArray) records = mem ? catchup_summary_records_load (store, room, window, NULL, &error) : NULL;
      CatchupSummaryOptions sopts;
      catchup_summary_options_init (&sopts);
      sopts.records = records;
      g_autoptr (CatchupSummary) summary = records ? catchup_summary_extractive (window, mem, &sopts) : NULL;
      double elapsed = (g_get_monotonic_time () - t0) / 1e3;
      double cpu = (cpu_seconds () - cpu0) * 1e3;

      if (mem == NULL || records == NULL || summary == NULL)
        goto fail;
      if (i == 0)
        first = elapsed;
      g_array_append_val (ms, elapsed);
      g_array_append_val (cpu_ms, cpu);
      tokens = mem->tokens;
      turns = mem->turns->len;
      gaps = mem->gaps != NULL ? mem->gaps->len : 0;
    }
  g_array_sort (ms, compare_doubles);
  g_array_sort (cpu_ms, compare_doubles);
  g_print ("first_ms=%.3f median_ms=%.3f p90_ms=%.3f cpu_median_ms=%.3f tokens=%u turns=%u gaps=%u rss_kb=%ld\n",
           first, percentile (ms, 0.5), percentile (ms, 0.9), percentile (cpu_ms, 0.5), tokens, turns, gaps,
           peak_rss_kb ());
  return 0;

fail:
  g_printerr ("bench-speed: memory: %s\n", error->message);
  return 1;
}

/* --- the driver --- */

/* Runs this program again for one phase and returns its "key=value ..." line as a table. */
static GHashTable *
run_phase (const char *self, const char *const *args, GError **error)
{
  g_autoptr (GPtrArray) argv = g_ptr_array_new ();
  g_autofree char *out = NULL;
  g_auto (GStrv) fields = NULL;
  GHashTable *values;
  int status;

  g_ptr_array_add (argv, (gpointer) self);
  for (guint i = 0; args[i] != NULL; i++)
    g_ptr_array_add (argv, (gpointer) args[i]);
  g_ptr_array_add (argv, NULL);
  if (!g_spawn_sync (NULL, (char **) argv->pdata, NULL, G_SPAWN_CHILD_INHERITS_STDIN, NULL, NULL, &out, NULL,
                     &status, error)
      || !g_spawn_check_wait_status (status, error))
    return NULL;
  values = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  fields = g_strsplit_set (g_strstrip (out), " ", -1);
  for (guint i = 0; fields[i] != NULL; i++)
    {
      char *eq = strchr (fields[i], '=');

      if (eq != NULL)
        g_hash_table_insert (values, g_strndup (fields[i], eq - fields[i]), g_strdup (eq + 1));
    }
  return values;
}

static double
value (GHashTable *values, const char *key)
{
  const char *v = g_hash_table_lookup (values, key);

  return v != NULL ? g_ascii_strtod (v, NULL) : 0;
}

static gboolean
parse_size (const char *text, guint64 *out)
{
  char *end = NULL;
  double n = g_ascii_strtod (text, &end);

  if (end == text || n <= 0)
    return FALSE;
  if (*end == 'k' || *end == 'K')
    n *= 1e3, end++;
  else if (*end == 'm' || *end == 'M')
    n *= 1e6, end++;
  *out = (guint64) n;
  return *end == '\0';
}

typedef struct {
  char *shared;
  char *sizes;
  char *methods;
  char *workdir;
  int runs, budget, window;
  char *phase, *db, *file;
  gboolean keep;       /* the databases stay in a --workdir of the user's */
} BenchArgs;

static void
bench_args_clear (BenchArgs *a)
{
  g_free (a->shared);
  g_free (a->sizes);
  g_free (a->methods);
  g_free (a->workdir);
  g_free (a->phase);
  g_free (a->db);
  g_free (a->file);
}
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (BenchArgs, bench_args_clear)

static void
print_header (void)
{
  g_print ("%-8s %8s %9s %9s %9s %7s %7s | %-8s %8s %8s %8s %8s %6s %4s %7s\n", "history", "messages",
           "import/s", "/cpu-s", "db B/msg", "db/raw", "rss MB", "method", "first ms", "med ms", "p90 ms", "cpu ms",
           "tokens", "gaps", "rss MB");
}

static gboolean
bench_size (const BenchArgs *a, const char *self, GPtrArray *corpus, guint64 size, char **methods,
            GError **error)
{
  g_autofree char *file = g_strdup_printf ("%s/history-%" G_GUINT64_FORMAT ".jsonl", a->workdir, size);
  g_autofree char *db = g_strdup_printf ("%s/history-%" G_GUINT64_FORMAT ".db", a->workdir, size);
  g_autofree char *db_wal = g_strconcat (db, "-wal", NULL);
  g_autofree char *db_shm = g_strconcat (db, "-shm", NULL);
  g_autofree char *runs = g_strdup_printf ("%d", a->runs);
  g_autofree char *budget = g_strdup_printf ("%d", a->budget);
  g_autofree char *window = g_strdup_printf ("%d", a->window);
  g_autoptr (GHashTable) imp = NULL;
  const char *import_args[] = { "--phase", "import", "--db", db, "--file", file, NULL };
  HistoryInfo info;
  guint64 bytes;

  g_unlink (db);
  g_unlink (db_wal);
  g_unlink (db_shm);
  if (!write_history (corpus, size, file, &info, error))
    return FALSE;
  imp = run_phase (self, import_args, error);
  g_unlink (file);
  if (imp == NULL)
    return FALSE;
  if (value (imp, "inserted") != info.messages)
    g_printerr ("bench-speed: %.0f of %" G_GUINT64_FORMAT " messages imported\n", value (imp, "inserted"),
                info.messages);
  bytes = db_bytes (db);
  for (guint m = 0; methods[m] != NULL; m++)
    {
      const char *memory_args[] = { "--phase", "memory", "--db", db, "--method", methods[m], "--runs", runs,
                                    "--budget", budget, "--window", window, NULL };
      g_autoptr (GHashTable) mem = run_phase (self, memory_args, error);
      g_autofree char *label = g_strdup_printf ("%.0fK", info.tokens / 1e3);

      if (mem == NULL)
        return FALSE;
      if (m == 0)
        g_print ("%-8s %8" G_GUINT64_FORMAT " %9.0f %9.0f %9.0f %7.2f %7.1f | ", label, info.messages,
                 value (imp, "inserted") / MAX (value (imp, "seconds"), 1e-9),
                 value (imp, "inserted") / MAX (value (imp, "cpu"), 1e-9), (double) bytes / info.messages,
                 (double) bytes / info.raw_bytes, value (imp, "rss_kb") / 1024);
      else
        g_print ("%-8s %8s %9s %9s %9s %7s %7s | ", "", "", "", "", "", "", "");
      g_print ("%-8s %8.2f %8.2f %8.2f %8.2f %6.0f %4.0f %7.1f\n", methods[m], value (mem, "first_ms"),
               value (mem, "median_ms"), value (mem, "p90_ms"), value (mem, "cpu_median_ms"), value (mem, "tokens"),
               value (mem, "gaps"), value (mem, "rss_kb") / 1024);
    }
  if (!a->keep)
    {
      g_unlink (db);
      g_unlink (db_wal);
      g_unlink (db_shm);
    }
  return TRUE;
}

int
main (int argc, char **argv)
{
  g_auto (BenchArgs) a = { NULL, NULL, NULL, NULL, 20, CATCHUP_DEFAULT_BUDGET, 60, NULL, NULL, NULL, FALSE };
  const GOptionEntry entries[] = {
    { "shared", 0, 0, G_OPTION_ARG_FILENAME, &a.shared, "Shared material with data/ (default: ../shared)", "DIR" },
    { "sizes", 0, 0, G_OPTION_ARG_STRING, &a.sizes, "History sizes in tokens (default: 10k,40k,160k,2m)", "LIST" },
    { "method", 'm', 0, G_OPTION_ARG_STRING, &a.methods, "Methods to time, comma separated (default: remember)",
      "LIST" },
    { "runs", 'n', 0, G_OPTION_ARG_INT, &a.runs, "Memory constructions per history and method (default: 20)", "N" },
    { "budget", 'b', 0, G_OPTION_ARG_INT, &a.budget, "Memory budget in tokens (default: 1024)", "N" },
    { "window", 'w', 0, G_OPTION_ARG_INT, &a.window, "Window: the last N messages (default: 60)", "N" },
    { "workdir", 0, 0, G_OPTION_ARG_FILENAME, &a.workdir, "Keep databases here (default: a temporary folder)",
      "DIR" },
    { "phase", 0, G_OPTION_FLAG_HIDDEN, G_OPTION_ARG_STRING, &a.phase, NULL, NULL },
    { "db", 0, G_OPTION_FLAG_HIDDEN, G_OPTION_ARG_FILENAME, &a.db, NULL, NULL },
    { "file", 0, G_OPTION_FLAG_HIDDEN, G_OPTION_ARG_FILENAME, &a.file, NULL, NULL },
    G_OPTION_ENTRY_NULL
  };
  g_autoptr (GOptionContext) context = g_option_context_new (NULL);
  g_autoptr (GError) error = NULL;
  g_autoptr (GPtrArray) corpus = NULL;
  g_auto (GStrv) sizes = NULL;
  g_auto (GStrv) methods = NULL;
  CatchupMethod method;

  g_option_context_set_summary (context, "Time history import and catch-up memory construction by history size.");
  g_option_context_add_main_entries (context, entries, NULL);
  if (!g_option_context_parse (context, &argc, &argv, &error))
    {
      g_printerr ("bench-speed: %s\n", error->message);
      return 2;
    }
  if (a.runs < 1 || a.budget < 1 || a.window < 1)
    {
      g_printerr ("bench-speed: --runs, --budget and --window must be positive\n");
      return 2;
    }
  if (a.phase != NULL)
    {
      pin_to_one_cpu ();
      if (g_strcmp0 (a.phase, "import") == 0 && a.db != NULL && a.file != NULL)
        return phase_import (a.db, a.file);
      if (g_strcmp0 (a.phase, "memory") == 0 && a.db != NULL && a.methods != NULL)
        return phase_memory (a.db, a.methods, a.runs, a.budget, a.window);
      g_printerr ("bench-speed: bad --phase arguments\n");
      return 2;
    }

  methods = g_strsplit (a.methods != NULL ? a.methods : "remember", ",", -1);
  for (guint m = 0; methods[m] != NULL; m++)
    if (!catchup_method_from_string (methods[m], &method))
      {
        g_printerr ("bench-speed: unknown method %s\n", methods[m]);
        return 2;
      }
  sizes = g_strsplit (a.sizes != NULL ? a.sizes : "10k,40k,160k,2m", ",", -1);
  corpus = load_corpus (a.shared != NULL ? a.shared : "../shared", &error);
  if (corpus == NULL)
    {
      g_printerr ("bench-speed: %s (give --shared DIR)\n", error->message);
      return 1;
    }
  a.keep = a.workdir != NULL;
  if (a.workdir == NULL)
    {
      a.workdir = g_dir_make_tmp ("bench-speed-XXXXXX", &error);
      if (a.workdir == NULL)
        {
          g_printerr ("bench-speed: %s\n", error->message);
          return 1;
        }
    }
  else if (g_mkdir_with_parents (a.workdir, 0700) != 0)
    {
      g_printerr ("bench-speed: %s: %s\n", a.workdir, g_strerror (errno));
      return 1;
    }
  g_print ("corpus: %u turns; window: last %d messages; budget %d; %d runs each; one CPU\n", corpus->len,
           a.window, a.budget, a.runs);
  print_header ();
  for (guint i = 0; sizes[i] != NULL; i++)
    {
      guint64 size;

      if (!parse_size (sizes[i], &size))
        {
          g_printerr ("bench-speed: bad size %s (like 40k or 2m)\n", sizes[i]);
          return 2;
        }
      if (!bench_size (&a, argv[0], corpus, size, methods, &error))
        {
          g_printerr ("bench-speed: %s\n", error->message);
          return 1;
        }
    }
  if (!a.keep)
    g_rmdir (a.workdir);
  return 0;
}
