#include "config.h"

#include "catchup-index.h"
