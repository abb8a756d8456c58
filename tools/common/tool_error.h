/* A library failure as a person reads it: the library's message without the API function
 * names that lead it ("clg_train: ", which say where in the library, not what to change), and
 * without the status's enum name; an internal error asks to be reported. */
#ifndef CLGRAD_TOOLS_TOOL_ERROR_H
#define CLGRAD_TOOLS_TOOL_ERROR_H

#include "clgrad/clgrad.h"

/* The text for status st with the library's message msg (NULL or empty: the status alone, in
 * words). Valid until the next call on this thread. */
const char *tool_message(clg_status st, const char *msg);

#endif
