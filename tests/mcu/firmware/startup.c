/* Minimal Cortex-M startup: vector table, reset handler (FPU on, .data copied, .bss zeroed, the
   stack painted for the high-water mark), semihosting output and exit. No newlib runtime. */
#include <stdint.h>

#include "startup.h"

extern uint32_t __data_start[], __data_end[], __data_load[], __bss_start[], __bss_end[];
extern uint32_t __stack_limit[], __stack_top[];
extern void (*__init_array_start[])(void);
extern void (*__init_array_end[])(void);

int main(void);
void Reset_Handler(void);

static void Fault_Handler(void) {
  semihost_write0("FAULT\n");
  semihost_exit(1);
}

__attribute__((section(".isr_vector"), used)) void (*const g_vectors[16])(void) = {
    (void (*)(void))__stack_top, Reset_Handler, Fault_Handler, Fault_Handler,
    Fault_Handler, Fault_Handler, Fault_Handler, 0, 0, 0, 0, Fault_Handler, Fault_Handler, 0,
    Fault_Handler, Fault_Handler,
};

static int semihost(int op, const void* arg) {
  register int r0 __asm__("r0") = op;
  register const void* r1 __asm__("r1") = arg;
  __asm__ volatile("bkpt 0xab" : "+r"(r0) : "r"(r1) : "memory");
  return r0;
}

void semihost_write0(const char* s) { semihost(0x04, s); }  /* SYS_WRITE0 */

void semihost_exit(int code) {
  /* SYS_EXIT: ADP_Stopped_ApplicationExit makes QEMU exit 0, RunTimeErrorUnknown exit 1. */
  semihost(0x18, (const void*)(uintptr_t)(code == 0 ? 0x20026 : 0x20023));
  for (;;) {
  }
}

/* The stack is painted up to this far below the reset handler's own frame. */
#define PAINT_MARGIN 64u

uint32_t stack_high_water(void) {
  const uint32_t* p = __stack_limit;
  while (p < __stack_top && *p == STACK_PAINT) ++p;
  return (uint32_t)((uintptr_t)__stack_top - (uintptr_t)p);
}

uint32_t stack_size(void) { return (uint32_t)((uintptr_t)__stack_top - (uintptr_t)__stack_limit); }

__attribute__((noreturn)) void Reset_Handler(void) {
  /* CP10/CP11 full access before any floating-point instruction. */
  *(volatile uint32_t*)0xE000ED88u |= 0xFu << 20;
  __asm__ volatile("dsb\n isb" ::: "memory");
  for (uint32_t *s = __data_load, *d = __data_start; d < __data_end;) *d++ = *s++;
  for (uint32_t* d = __bss_start; d < __bss_end;) *d++ = 0;
  uint32_t sp;
  __asm__ volatile("mov %0, sp" : "=r"(sp));
  for (volatile uint32_t* p = __stack_limit; (uintptr_t)p < sp - PAINT_MARGIN;) *p++ = STACK_PAINT;
  for (void (**f)(void) = __init_array_start; f < __init_array_end; ++f) (*f)();
  semihost_exit(main());
}
