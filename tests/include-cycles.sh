#!/bin/sh
# core/'s modules depend one way (docs/architecture.md): reads every #include "catchup-*.h" of core/ and fails,
# naming each cycle, when a module includes one that includes it back, directly or through others.
# A module is a .c/.h pair; a private header (catchup-x-private.h) and a source file without a header of its own
# (catchup-summary-topics.c) belong to the module whose name is the longest prefix of theirs. The umbrella
# header core/catchup.h includes everything and is no module. On success prints the modules in an order in
# which each depends only on modules before it.
srcdir=${top_srcdir:-$(dirname "$0")/..}
core=$srcdir/core
if [ ! -d "$core" ]; then
  echo "core/ not found under $srcdir" >&2
  exit 99
fi
cd "$core" || exit 99
headers=$(ls catchup-*.h 2>/dev/null | sed 's/\.h$//' | tr '\n' ' ')
# one line per include: "file included-header"
grep -E '^[[:space:]]*#[[:space:]]*include[[:space:]]*"catchup-[^"]*\.h"' catchup-*.c catchup-*.h 2>/dev/null |
  sed -E 's/^([^:]*):[[:space:]]*#[[:space:]]*include[[:space:]]*"([^"]*)\.h".*/\1 \2/' |
  awk -v headers="$headers" '
    function module_of(name,    parts, n, i, cand) {
      sub(/\.[ch]$/, "", name)
      sub(/-private$/, "", name)
      n = split(name, parts, "-")
      for (i = n; i >= 1; i--) {
        cand = parts[1]
        for (j = 2; j <= i; j++)
          cand = cand "-" parts[j]
        if (cand in is_header)
          return cand
      }
      return name
    }
    # depth-first search; a grey node met again closes a cycle: the path from it to here
    function visit(m,    k, e, i, path) {
      colour[m] = 1
      stack[++depth] = m
      for (k = 1; k <= nout[m]; k++) {
        e = out[m, k]
        if (colour[e] == 1) {
          path = e
          for (i = depth; i >= 1 && stack[i] != e; i--)
            ;
          for (i = i + 1; i <= depth; i++)
            path = path " -> " stack[i]
          path = path " -> " e
          if (!(path in reported)) {
            reported[path] = 1
            printf "cycle: %s\n", path > "/dev/stderr"
            cycles++
          }
        } else if (colour[e] == 0)
          visit(e)
      }
      depth--
      colour[m] = 2
      order[++norder] = m
    }
    BEGIN {
      n = split(headers, hs, " ")
      for (i = 1; i <= n; i++)
        is_header[hs[i]] = 1
      delete is_header["catchup"]
    }
    {
      from = module_of($1)
      to = module_of($2)
      if ($1 == "catchup.h" || from == to || !(to in is_header))
        next
      modules[from] = 1
      modules[to] = 1
      if (!((from, to) in edge)) {
        edge[from, to] = 1
        out[from, ++nout[from]] = to
      }
    }
    END {
      # a fixed order of visits, so the report is the same on every machine
      nm = 0
      for (m in modules)
        names[++nm] = m
      for (i = 2; i <= nm; i++)
        for (j = i; j > 1 && names[j - 1] > names[j]; j--) {
          t = names[j]; names[j] = names[j - 1]; names[j - 1] = t
        }
      for (i = 1; i <= nm; i++) {
        m = names[i]
        for (k = 2; k <= nout[m]; k++)
          for (l = k; l > 1 && out[m, l - 1] > out[m, l]; l--) {
            t = out[m, l]; out[m, l] = out[m, l - 1]; out[m, l - 1] = t
          }
      }
      for (i = 1; i <= nm; i++)
        if (colour[names[i]] == 0)
          visit(names[i])
      if (cycles > 0) {
        printf "%d include cycle(s) among the modules of core/\n", cycles > "/dev/stderr"
        exit 1
      }
      printf "ok: %d modules of core/ depend one way:\n", nm
      for (i = 1; i <= norder; i++)
        printf "  %s\n", order[i]
    }'
