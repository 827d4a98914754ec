#pragma once
#include <stdint.h>
#ifdef __cplusplus
extern "C" {
#endif
#define STACK_PAINT 0xDEADBEEFu
void semihost_write0(const char* s);
__attribute__((noreturn)) void semihost_exit(int code);
/* Bytes of stack ever used (deepest word no longer holding the paint), and the stack's size. */
uint32_t stack_high_water(void);
uint32_t stack_size(void);
#ifdef __cplusplus
}
#endif
