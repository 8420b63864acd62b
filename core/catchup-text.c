#include "config.h"

#include "catchup-text.h"
