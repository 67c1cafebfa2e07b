// The calling process's id and its host's name, as every queue
// participant's id (`<host>_<pid>_<random>`) and a lock node's data carry
// them. Each is a system call to read (glibc keeps no copy of the pid), and
// an acquisition needs them several times, so both are read once and kept:
// a child made by fork() reads its own pid again (a handler registered with
// pthread_atfork forgets the parent's); the host name is read once per
// process, so a host renamed while the process runs keeps the old name in
// new participant ids, which stay unique by their random part.
// Thread-safe.
#ifndef ZKRECIPES_SRC_PROCESS_IDENTITY_H_
#define ZKRECIPES_SRC_PROCESS_IDENTITY_H_

#include <sys/types.h>

#include <string>

namespace zkr {
namespace internal {

pid_t ProcessId();

// The host name, or "unknown-host" when it cannot be read.
const std::string& HostName();

}  // namespace internal
}  // namespace zkr

#endif  // ZKRECIPES_SRC_PROCESS_IDENTITY_H_
