/* Reading a whole text file for the tools. */
#ifndef CLGRAD_TOOLS_TEXT_FILE_H
#define CLGRAD_TOOLS_TEXT_FILE_H

/* The file's bytes as a NUL-terminated string (malloc'd), or NULL. */
char *read_text_file(const char *path);

#endif
