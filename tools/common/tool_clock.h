/* Wall-clock time for the tools' timings and progress displays. */
#ifndef CLGRAD_TOOL_CLOCK_H
#define CLGRAD_TOOL_CLOCK_H

/* Seconds on the monotonic clock (differences only: the origin is arbitrary). */
double tool_now(void);

#endif
