/* JSON output shared by the tools' --json modes. */
#ifndef CLGRAD_TOOLS_JSON_OUT_H
#define CLGRAD_TOOLS_JSON_OUT_H

/* Prints s to stdout as a JSON string: quotes and backslashes escaped, control characters as
 * \u00XX. */
void json_string(const char *s);

#endif
