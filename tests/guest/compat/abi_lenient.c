// SPDX-License-Identifier: MIT
/*
 * abi_lenient for 32-bit callers: the same cases through the compat
 * ioctls (the 3.4 ABI's 16-byte ALLOC among them).
 */
#if !defined(__i386__)
#error "build this with gcc -m32"
#endif

_Static_assert(sizeof(void *) == 4, "32-bit caller");

#include "../abi_lenient.c"
