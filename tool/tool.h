#pragma once

/* The command-line tool's shared parts: exit statuses, option parsing, output, the model's options, and the
 * subcommands (one file each: tool-memory.c, tool-ask.c, tool-history.c). */

#include <glib/gi18n.h>
#include <json-glib/json-glib.h>
#include <stdio.h>

#include "catchup.h"

G_BEGIN_DECLS

/* Exit statuses: scripts tell a mistyped command line from a failed run. */
enum {
  TOOL_EXIT_OK = 0,
  TOOL_EXIT_FAILURE = 1,
  TOOL_EXIT_USAGE = 2,
};

#define TOOL_MAX_BUDGET 1000000

/* --- errors and options shared by the subcommands --- */

/* Usage mistakes are reported as G_OPTION_ERROR, everything else is a failure of the run. */
/* Everything printed that came from chat, a model or a file goes through the one sanitiser: no escape
 * sequence, control character, bidi override or line break of theirs reaches the terminal. */
#define SAFE(name, text) g_autofree char *name = catchup_text_sanitize (text)

int tool_fail (GError *error);

gboolean usage_error (GError **error, const char *format, ...) G_GNUC_PRINTF (2, 3);

/* Parses one subcommand's options; argv[0] is the subcommand's name. */
gboolean tool_parse (int *argc, char ***argv, const char *parameters, const char *summary, const char *description,
                     const GOptionEntry *entries, GError **error);

/* Reading commands must not leave an empty database behind a typo in --db. */
CatchupStore *tool_open_store (const char *option, gboolean create, GError **error);

gboolean tool_require (const char *value, const char *option, GError **error);

gboolean tool_parse_length (const char *name, CatchupLength *out, GError **error);

/* "FIRST..LAST", message ids as the room knows them (ids may hold ':' or '.', but not "..") */
gboolean tool_parse_range (const char *text, char **first, char **last, GError **error);

/* TIME for --since: ISO 8601 ("2026-03-02T09:00:00Z", a bare date is midnight UTC) or an age such as 45m,
 * 2h, 1d, 1w counted back from now. */
gboolean tool_parse_since (const char *text, gint64 now, gint64 *out, GError **error);

/* --- output --- */
void json_member_string (JsonBuilder *b, const char *name, const char *value);

void json_member_int (JsonBuilder *b, const char *name, gint64 value);

void json_member_bool (JsonBuilder *b, const char *name, gboolean value);

void json_member_time (JsonBuilder *b, const char *name, gint64 ts);

void json_add_message (JsonBuilder *b, const CatchupMessage *msg);

/* "memory", "gaps" and "tokens": the members every memory-producing command shares. */
void json_add_memory (JsonBuilder *b, const CatchupMemory *mem);

guint window_tokens (GPtrArray *window);

void json_add_window (JsonBuilder *b, GPtrArray *window, guint tokens);

/* Starts the top-level object with what every memory command echoes back about its request. */
JsonBuilder *json_begin (const char *room, const char *method, guint budget);

/* Writes the finished document as UTF-8 whatever the locale: it is meant for programs. */
int json_emit (JsonBuilder *b);

void print_turn (const CatchupMessage *msg, const char *note);

void print_memory (const CatchupMemory *mem);

/* --- the model --- */

G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (CatchupLlmConfig, catchup_llm_config_clear)

/* The method that insists on the model: benchmarks name it to be sure they measure the model path. */
#define METHOD_REMEMBER_MODEL "remember-model"

typedef struct {
  char *endpoint;
  char *model;
  char *embed_model;
  char *api_key_env;
  char *config;
  int timeout;
  gboolean no_model;
} ModelArgs;

void model_args_clear (ModelArgs *m);

G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (ModelArgs, model_args_clear)

#define ENTRIES_MODEL(m) \
  { "endpoint", 0, 0, G_OPTION_ARG_STRING, &(m).endpoint, \
    N_("OpenAI-compatible model server, e.g. http://localhost:11434/v1 (default: $CATCHUP_ENDPOINT, else the " \
       "config file)"), N_("URL") }, \
  { "model", 0, 0, G_OPTION_ARG_STRING, &(m).model, N_("Chat model for gap detection and the summary"), \
    N_("NAME") }, \
  { "embed-model", 0, 0, G_OPTION_ARG_STRING, &(m).embed_model, N_("Embedding model for dense retrieval"), \
    N_("NAME") }, \
  { "api-key-env", 0, 0, G_OPTION_ARG_STRING, &(m).api_key_env, \
    N_("Environment variable holding the API key (default: CATCHUP_API_KEY)"), N_("VAR") }, \
  { "timeout", 0, 0, G_OPTION_ARG_INT, &(m).timeout, N_("Seconds one model request may take"), N_("S") }, \
  { "config", 0, 0, G_OPTION_ARG_FILENAME, &(m).config, \
    N_("Model settings file (default: purple-catchup/model.conf in the user's config directory)"), N_("FILE") }, \
  { "no-model", 0, 0, G_OPTION_ARG_NONE, &(m).no_model, N_("Use the built-in methods only"), NULL }

/* Settings in rising precedence: the config file, $CATCHUP_ENDPOINT/$CATCHUP_MODEL/$CATCHUP_EMBED_MODEL, the
 * options. TRUE with *configured FALSE when nothing names an endpoint. */
gboolean model_config (const ModelArgs *m, CatchupLlmConfig *config, gboolean *configured, GError **error);

void json_add_model (JsonBuilder *b, const CatchupModelReport *r);

/* One line per catch-up, so that the cost of the model is never a surprise. */
void print_model (const CatchupModelReport *r, gboolean with_notice);

/* Stores the model vectors of every room in rooms (gint64 ids) that a model catch-up reads. The dimension is
 * asked of the server once: this is background work, not a catch-up. */
gboolean embed_rooms (CatchupStore *store, GArray *rooms, const CatchupLlmConfig *config, gboolean prune, guint *computed,
                      GError **error);

GArray *all_rooms (CatchupStore *store, GError **error);

gboolean has_embed_model (const CatchupLlmConfig *config, gboolean configured);

/* --- subcommands --- */

typedef struct {
  char *db;
  char *room;
  char *method_name;
  int budget;
  gboolean json;
  ModelArgs model;
} MemoryArgs;

void memory_args_clear (MemoryArgs *a);
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (MemoryArgs, memory_args_clear)

#define MEMORY_ARGS_INIT { NULL, NULL, NULL, CATCHUP_DEFAULT_BUDGET, FALSE, { 0 } }

/* Opens the store, finds the room and checks the options common to memory, recall and summarize; config gets
 * the model's settings (always initialised, cleared by the caller), opts->model points at it when an endpoint
 * is configured. */
CatchupStore *memory_args_open (const MemoryArgs *a, gint64 *room, CatchupOptions *copts, CatchupLlmConfig *config,
                                GError **error);

/* The method as the user named it ("remember-model" stays itself in the output). */
const char *method_label (const MemoryArgs *a, CatchupMethod method);

#define DB_HELP N_("History database (default: $CATCHUP_DB, else ~/.purple/catchup/history.db)")
#define ENTRY_DB(a) { "db", 0, 0, G_OPTION_ARG_FILENAME, &(a).db, DB_HELP, N_("DB") }
#define ENTRY_ROOM(a) \
  { "room", 'r', 0, G_OPTION_ARG_STRING, &(a).room, N_("Room name, or PROTOCOL/ACCOUNT/NAME"), N_("ROOM") }
#define ENTRY_BUDGET(a) \
  { "budget", 'b', 0, G_OPTION_ARG_INT, &(a).budget, N_("Memory budget in tokens (default: 1024)"), N_("N") }
#define ENTRY_METHOD(a) \
  { "method", 'm', 0, G_OPTION_ARG_STRING, &(a).method_name, \
    N_("none, recent, full, sparse, dense, hybrid, remember, gaps or remember-model (remember that fails without " \
       "a model; default: remember)"), N_("METHOD") }
#define ENTRY_JSON(a) \
  { "json", 0, 0, G_OPTION_ARG_NONE, &(a).json, N_("Print JSON instead of text"), NULL }

/* The subcommands: argv[0] is the subcommand's name; they return an exit status. */
int cmd_memory (int argc, char **argv);
int cmd_recall (int argc, char **argv);
int cmd_ask (int argc, char **argv);
int cmd_summarize (int argc, char **argv);
int cmd_rooms (int argc, char **argv);
int cmd_import (int argc, char **argv);
int cmd_embed (int argc, char **argv);

G_END_DECLS
