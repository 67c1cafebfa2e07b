// Deliver: the one way a callback reaches the session's dispatcher thread
// (src/dispatcher.h): user completions, watches, listeners and observer
// reports all go through it, in the order delivered.
//
// With a CallbackGate (src/callback_gate.h) the call is dropped if the gate
// is closed by the time its turn comes, and its owner's Close() waits for
// it while it runs; without one (null) it always runs. Once the dispatcher
// has stopped (the session is being destroyed) a call runs inline on the
// delivering thread, or is dropped with IfStopped::kDrop (reports that
// must never run on the caller's thread).
//
// Thread safety: callable from any thread, the ZooKeeper completion thread
// included; never blocks on a running callback.
#ifndef ZKRECIPES_SRC_DELIVERY_H_
#define ZKRECIPES_SRC_DELIVERY_H_

#include <functional>
#include <memory>
#include <tuple>
#include <type_traits>
#include <utility>

#include "src/callback_gate.h"
#include "src/dispatcher.h"

namespace zkr {
namespace internal {

enum class IfStopped { kRunInline, kDrop };

// Runs `call` on `dispatcher`'s thread, through `gate` unless it is null.
void Deliver(Dispatcher& dispatcher, std::shared_ptr<CallbackGate> gate,
             std::function<void()> call, IfStopped if_stopped = IfStopped::kRunInline);

// Delivers `fn(values...)`, the values moved (a move-only value may pass).
// `fn` must be copyable (a std::function is).
template <typename Fn, typename... Values>
void DeliverCall(Dispatcher& dispatcher, std::shared_ptr<CallbackGate> gate, Fn fn,
                 Values... values) {
  auto moved = std::make_shared<std::tuple<Values...>>(std::move(values)...);
  Deliver(dispatcher, std::move(gate),
          [fn = std::move(fn), moved]() mutable { std::apply(fn, std::move(*moved)); });
}

// `fn` as a callback that delivers: calling the result with some arguments
// delivers `fn(arguments)` (DeliverCall). Empty `fn`: an empty callback.
// (A callback called once can keep its `fn` and call DeliverCall itself:
// one allocation less while it waits.)
template <typename... Args>
std::function<void(Args...)> Delivering(Dispatcher& dispatcher,
                                        std::shared_ptr<CallbackGate> gate,
                                        std::function<void(Args...)> fn) {
  if (!fn) return nullptr;
  auto shared = std::make_shared<std::function<void(Args...)>>(std::move(fn));
  Dispatcher* target = &dispatcher;
  return [target, gate = std::move(gate), shared](Args... args) {
    DeliverCall(
        *target, gate, [shared](std::decay_t<Args>&&... values) { (*shared)(std::move(values)...); },
        std::decay_t<Args>(std::forward<Args>(args))...);
  };
}

}  // namespace internal
}  // namespace zkr

#endif  // ZKRECIPES_SRC_DELIVERY_H_
