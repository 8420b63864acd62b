#include "config.h"

#include "catchup-engine.h"
