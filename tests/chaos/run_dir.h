// The directory of one chaos run: the ledger, the fenced resource, and the
// worker and server logs. Removed at the end unless the run asks to keep it
// for inspection.
// Thread-safety: not thread-safe; use from one thread at a time.
#ifndef ZKRECIPES_TESTS_CHAOS_RUN_DIR_H_
#define ZKRECIPES_TESTS_CHAOS_RUN_DIR_H_

#include <string>

namespace zkr {
namespace chaos {

// A fresh directory `<$TMPDIR or /tmp>/zkr-chaos-XXXXXX`, removed at the end
// unless keep() was called; path() is "" if it could not be created.
class RunDirectory {
 public:
  RunDirectory();
  RunDirectory(const RunDirectory&) = delete;
  RunDirectory& operator=(const RunDirectory&) = delete;
  ~RunDirectory();

  const std::string& path() const { return path_; }
  // Keeps the directory, and prints its path when done.
  void keep() { keep_ = true; }

 private:
  std::string path_;
  bool keep_ = false;
};

}  // namespace chaos
}  // namespace zkr

#endif  // ZKRECIPES_TESTS_CHAOS_RUN_DIR_H_
