// HIPCPU_ASAN: 1 when AddressSanitizer instruments this translation unit,
// under g++ (__SANITIZE_ADDRESS__) and clang (__has_feature) alike.
#pragma once

#if defined(__SANITIZE_ADDRESS__)
#define HIPCPU_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define HIPCPU_ASAN 1
#endif
#endif
#ifndef HIPCPU_ASAN
#define HIPCPU_ASAN 0
#endif

#if HIPCPU_ASAN
#include <sanitizer/asan_interface.h>
#endif
