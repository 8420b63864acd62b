#include "config.h"

#include <math.h>
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "catchup-embed.h"
#include "catchup-text.h"

/*
 * The default embedder: feature hashing. Each term adds its weight to one of CATCHUP_EMBED_DIM dimensions
 * with a hash-chosen sign, which is a random projection of the sparse bag of features. Besides whole terms
 * it uses character trigrams of each term (with word boundaries), so that "backport" meets "backports" and
 * "big-endian" meets "bigendian", which whole-word BM25 misses.
 */

#define TRIGRAM_WEIGHT 0.35f

static void
add_feature (float *v, const char *feat, gsize len, float w)
{
  guint32 h = 2166136261u; /* FNV-1a */

  for (gsize i = 0; i < len; i++)
    h = (h ^ (guchar) feat[i]) * 16777619u;
  v[h % CATCHUP_EMBED_DIM] += (h & 0x80000000u) ? w : -w;
}

static void
add_trigrams (float *v, const char *term)
{
  char stack[64];
  gsize len = strlen (term);
  /* "^term$" and its NUL: long terms (URLs, hashes, base64) are common in chat and get a buffer of their own */
  g_autofree char *heap = len + 3 > sizeof stack ? g_malloc (len + 3) : NULL;
  char *buf = heap != NULL ? heap : stack;
  const char *p;

  /* a tag byte in front of every trigram: trigram "cat" stays apart from the word "cat" */
  gboolean ascii = TRUE;

  buf[0] = '^';
  memcpy (buf + 1, term, len);
  buf[len + 1] = '$';
  buf[len + 2] = '\0';
  for (gsize i = 0; i < len; i++)
    ascii = ascii && (guchar) term[i] < 0x80;
  /* most chat is ASCII: a character is a byte, and the trigrams are the byte triples the loop below finds */
  for (gsize i = 0; ascii && i + 3 <= len + 2; i++)
    {
      char tri[4] = { '\x01', buf[i], buf[i + 1], buf[i + 2] };

      add_feature (v, tri, sizeof tri, TRIGRAM_WEIGHT);
    }
  for (p = buf; !ascii && *p; p = g_utf8_next_char (p))
    {
      const char *e = p;
      char tri[1 + 3 * 6];

      for (int k = 0; k < 3 && *e; k++)
        e = g_utf8_next_char (e);
      if (g_utf8_pointer_to_offset (p, e) < 3)
        break;
      tri[0] = '\x01';
      memcpy (tri + 1, p, e - p);
      add_feature (v, tri, 1 + (e - p), TRIGRAM_WEIGHT);
    }
}

void
catchup_embed_hashed_terms (GPtrArray *terms, float *out)
{
  g_autoptr (GHashTable) seen = g_hash_table_new (g_str_hash, g_str_equal);
  double norm = 0;

  memset (out, 0, sizeof (float) * CATCHUP_EMBED_DIM);
  for (guint i = 0; i < terms->len; i++)
    {
      const char *t = terms->pdata[i];

      /* repeated terms count once: chat repeats words for emphasis, not for meaning */
      if (!g_hash_table_add (seen, (gpointer) t))
        continue;
      gsize len = strlen (t);

      add_feature (out, t, len, 1.0f);
      /* more than three characters: a byte count of four or more is needed for that, and enough for ASCII */
      if (len > 3 && g_utf8_strlen (t, -1) > 3)
        add_trigrams (out, t);
    }
  for (guint d = 0; d < CATCHUP_EMBED_DIM; d++)
    norm += (double) out[d] * out[d];
  if (norm > 0)
    {
      double length = sqrt (norm);

      for (guint d = 0; d < CATCHUP_EMBED_DIM; d++)
        out[d] = (float) (out[d] / length);
    }
}

void
catchup_embed_hashed (const char *text, float *out)
{
  g_autoptr (GPtrArray) terms = catchup_text_terms (text, TRUE);

  catchup_embed_hashed_terms (terms, out);
}

float
catchup_vec_dot (const float *a, const float *b, guint dim)
{
  float s = 0;

  for (guint d = 0; d < dim; d++)
    s += a[d] * b[d];
  return s;
}

void
catchup_vec_quantize (const float *v, gint8 *out, guint dim)
{
  for (guint d = 0; d < dim; d++)
    out[d] = (gint8) lrintf (CLAMP (v[d], -1.0f, 1.0f) * 127.0f);
}

#ifdef __SSE2__
G_STATIC_ASSERT (CATCHUP_EMBED_DIM % 16 == 0);

/* The dense pass's inner loop, run for every chunk and gap. pmaddwd multiplies eight pairs of 16-bit values
 * and adds neighbours in one step, which the compiler does not find for int8 on baseline x86-64: a byte is
 * widened by unpacking it with itself and shifting back (SSE2 has no sign-extending load). */
static gint32
dot_i8 (const gint8 *a, const gint8 *b)
{
  __m128i sum = _mm_setzero_si128 ();

  for (guint d = 0; d < CATCHUP_EMBED_DIM; d += 16)
    {
      __m128i x = _mm_loadu_si128 ((const __m128i *) (const void *) (a + d));
      __m128i y = _mm_loadu_si128 ((const __m128i *) (const void *) (b + d));
      __m128i lo = _mm_madd_epi16 (_mm_srai_epi16 (_mm_unpacklo_epi8 (x, x), 8),
                                   _mm_srai_epi16 (_mm_unpacklo_epi8 (y, y), 8));
      __m128i hi = _mm_madd_epi16 (_mm_srai_epi16 (_mm_unpackhi_epi8 (x, x), 8),
                                   _mm_srai_epi16 (_mm_unpackhi_epi8 (y, y), 8));

      sum = _mm_add_epi32 (sum, _mm_add_epi32 (lo, hi));
    }
  sum = _mm_add_epi32 (sum, _mm_shuffle_epi32 (sum, _MM_SHUFFLE (1, 0, 3, 2)));
  sum = _mm_add_epi32 (sum, _mm_shuffle_epi32 (sum, _MM_SHUFFLE (2, 3, 0, 1)));
  return _mm_cvtsi128_si32 (sum);
}
#else
static gint32
dot_i8 (const gint8 *a, const gint8 *b)
{
  gint32 s = 0;

  for (guint d = 0; d < CATCHUP_EMBED_DIM; d++)
    s += (gint32) a[d] * (gint32) b[d];
  return s;
}
#endif

float
catchup_vec_dot_qq (const gint8 *a, const gint8 *b)
{
  return (float) dot_i8 (a, b) / (127.0f * 127.0f);
}

static gboolean
default_embed (CatchupEmbedder *self, const char *const *texts, guint n, gboolean is_query, float *out,
               GCancellable *cancellable, GError **error)
{
  for (guint i = 0; i < n; i++)
    {
      if (g_cancellable_set_error_if_cancelled (cancellable, error))
        return FALSE;
      catchup_embed_hashed (texts[i], out + (gsize) i * CATCHUP_EMBED_DIM);
    }
  return TRUE;
}

CatchupEmbedder *
catchup_embedder_new_default (void)
{
  CatchupEmbedder *e = g_new0 (CatchupEmbedder, 1);

  e->name = "hashed-ngrams-256";
  e->dim = CATCHUP_EMBED_DIM;
  e->embed = default_embed;
  return e;
}

gboolean
catchup_embedder_is_default (const CatchupEmbedder *embedder)
{
  return embedder == NULL || embedder->embed == default_embed;
}

void
catchup_embedder_free (CatchupEmbedder *embedder)
{
  if (embedder == NULL)
    return;
  if (embedder->free)
    embedder->free (embedder);
  else
    g_free (embedder);
}
