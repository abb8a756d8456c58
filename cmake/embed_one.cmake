# cmake -DIN=file.cl -DOUT=file.c -DNAME=family -P embed_one.cmake
file(READ ${IN} hex HEX)
file(SHA256 ${IN} sha)
string(LENGTH "${hex}" hex_len)
math(EXPR len "${hex_len} / 2")
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "'\\\\x\\1'," bytes "${hex}")
# Wrap lines so the generated file stays readable by compilers and people.
string(REGEX REPLACE "((('[^']*',){16}))" "\\1\n" bytes "${bytes}")
file(WRITE ${OUT} "/* Generated from ${NAME}.cl by cmake/embed_one.cmake; do not edit. */
#include <stddef.h>
const char clg__cl_${NAME}[] = {
${bytes}'\\0'};
const size_t clg__cl_${NAME}_len = ${len};
const char clg__cl_${NAME}_sha256[] = \"${sha}\";
")
