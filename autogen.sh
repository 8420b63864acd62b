#!/bin/sh
# Regenerates the build system from configure.ac and the Makefile.am files.
set -e
cd "$(dirname "$0")"
autoreconf -fi
