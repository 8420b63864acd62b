#include "config.h"

#include "catchup-retrieve.h"
