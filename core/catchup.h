#pragma once

/* The core library's umbrella header: the plugin and the command-line tool include only this. */

#include "catchup-error.h"
#include "catchup-message.h"
#include "catchup-text.h"
#include "catchup-store.h"
#include "catchup-import.h"
#include "catchup-chunk.h"
#include "catchup-embed.h"
#include "catchup-index.h"
#include "catchup-retrieve.h"
#include "catchup-gaps.h"
#include "catchup-memory.h"
#include "catchup-summary.h"
#include "catchup-embed-cache.h"
#include "catchup-llm.h"
#include "catchup-llm-embed.h"
#include "catchup-llm-gaps.h"
#include "catchup-llm-prompt.h"
#include "catchup-llm-select.h"
#include "catchup-llm-summary.h"
#include "catchup-engine.h"
