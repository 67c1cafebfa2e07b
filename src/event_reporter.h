// EventReporter: hands the session's events to the user's Observer
// (zkrecipes/observer.h), on the dispatcher thread, in the order reported.
//
// With no observer, on() is false and Report() does nothing: call sites test
// on() before reading a clock or building an event, so an unobserved session
// pays one branch. Thread-safe; Report() never blocks and never runs the
// observer on the calling thread (an event reported once the dispatcher has
// stopped, as the session is destroyed, is dropped).
#ifndef ZKRECIPES_SRC_EVENT_REPORTER_H_
#define ZKRECIPES_SRC_EVENT_REPORTER_H_

#include <memory>
#include <utility>

#include "src/delivery.h"
#include "src/dispatcher.h"
#include "zkrecipes/observer.h"

namespace zkr {
namespace internal {

class EventReporter {
 public:
  EventReporter(std::shared_ptr<Observer> observer, Dispatcher* dispatcher)
      : observer_(std::move(observer)), dispatcher_(dispatcher) {}

  bool on() const { return observer_ != nullptr; }

  // Posts `(observer->*method)(event)`, e.g. Report(&Observer::OnRetry, retry).
  template <typename Event>
  void Report(void (Observer::*method)(const Event&), Event event) const {
    if (observer_ == nullptr) return;
    Deliver(
        *dispatcher_, /*gate=*/nullptr,
        [observer = observer_, method, event = std::move(event)] {
          ((*observer).*method)(event);
        },
        IfStopped::kDrop);
  }

 private:
  const std::shared_ptr<Observer> observer_;
  Dispatcher* const dispatcher_;
};

}  // namespace internal
}  // namespace zkr

#endif  // ZKRECIPES_SRC_EVENT_REPORTER_H_
