#include "config.h"

#include "catchup-embed.h"
