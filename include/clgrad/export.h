/* CLG_API marks the public symbols; everything else in the library has hidden visibility. */
#ifndef CLGRAD_EXPORT_H
#define CLGRAD_EXPORT_H

#if defined(_WIN32)
#define CLG_API __declspec(dllexport)
#elif defined(__GNUC__)
#define CLG_API __attribute__((visibility("default")))
#else
#define CLG_API
#endif

#endif
