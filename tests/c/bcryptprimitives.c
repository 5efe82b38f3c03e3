/* A stand-in for Windows' bcryptprimitives.dll, for the test harness under Wine only.
 *
 * Rust's std on Windows takes its random bytes from ProcessPrng in bcryptprimitives.dll, which
 * every Windows 10 and 11 has, and Wine 8 lacks. This DLL sits beside fmu_run.exe (never in an
 * FMU) and answers with BCryptGenRandom, which Wine implements. */
#include <windows.h>
#include <bcrypt.h>

__declspec(dllexport) BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T size) {
    while (size > 0) {
        ULONG chunk = size > 0x40000000 ? 0x40000000 : (ULONG)size;
        if (BCryptGenRandom(NULL, data, chunk, BCRYPT_USE_SYSTEM_PREFERRED_RNG) != 0) return FALSE;
        data += chunk;
        size -= chunk;
    }
    return TRUE;
}
