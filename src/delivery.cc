#include "src/delivery.h"

namespace zkr {
namespace internal {

void Deliver(Dispatcher& dispatcher, std::shared_ptr<CallbackGate> gate,
             std::function<void()> call, IfStopped if_stopped) {
  std::function<void()> task =
      gate == nullptr ? std::move(call)
                      : [gate = std::move(gate), call = std::move(call)] { gate->Run(call); };
  if (if_stopped == IfStopped::kDrop) {
    dispatcher.PostUnlessStopped(std::move(task));
  } else {
    dispatcher.Post(std::move(task));
  }
}

}  // namespace internal
}  // namespace zkr
