#include "swarmt/serve/session_store.h"

#include <gtest/gtest.h>

#include "swarmt/serve/api_error.h"

namespace swarmt::serve {
namespace {

// A stream that only counts what it is fed.
class CountingStream : public infer::TokenStream {
 public:
  at::Tensor feed(const at::Tensor& tokens) override {
    position_ += tokens.numel();
    return at::zeros({4});
  }
  int64_t state_bytes() const override { return 100; }
  int64_t state_bytes_after(int64_t) const override { return 100; }
  int64_t position() const override { return position_; }
  FileDigest save(const std::string&, const std::map<std::string, std::string>&) override { return {}; }
  std::map<std::string, std::string> load(const std::string&) override { return {}; }

 private:
  int64_t position_ = 0;
};

SessionStore counting_store(int64_t budget_states, int64_t max_sessions) {
  return SessionStore([] { return std::make_unique<CountingStream>(); }, 100, 100 * budget_states, max_sessions);
}

int status_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const ApiError& e) {
    return e.status;
  }
  return 200;
}

TEST(SessionStore, a_session_keeps_its_state_and_is_used_by_one_request_at_a_time) {
  auto store = counting_store(10, 10);
  {
    auto lease = store.acquire("a", /*create=*/true);
    EXPECT_TRUE(lease->created());
    lease->session().stream->feed(at::zeros({5}, at::kLong));
    EXPECT_EQ(status_of([&] { store.acquire("a", true); }), 409);  // busy while the lease lives
  }
  auto again = store.acquire("a", true);
  EXPECT_FALSE(again->created());
  EXPECT_EQ(again->session().tokens(), 5);
  EXPECT_EQ(status_of([&] { store.acquire("missing", /*create=*/false); }), 404);
}

TEST(SessionStore, new_sessions_past_the_budget_or_the_maximum_are_refused_until_one_goes) {
  auto by_budget = counting_store(/*budget_states=*/3, /*max_sessions=*/10);
  by_budget.acquire("a", true);
  by_budget.acquire("b", true);
  {
    auto stateless = by_budget.acquire("", true);  // the third state: a stateless request's
    EXPECT_EQ(by_budget.reserved_bytes(), 300);
    EXPECT_EQ(status_of([&] { by_budget.acquire("c", true); }), 503);
  }
  EXPECT_EQ(by_budget.reserved_bytes(), 200);  // the stateless request ended
  by_budget.acquire("c", true);
  EXPECT_EQ(status_of([&] { by_budget.acquire("d", true); }), 503);
  by_budget.acquire("a", false)->drop();
  EXPECT_EQ(status_of([&] { by_budget.acquire("d", true); }), 200);

  auto by_count = counting_store(10, /*max_sessions=*/1);
  by_count.acquire("a", true);
  EXPECT_EQ(status_of([&] { by_count.acquire("b", true); }), 503);
  EXPECT_EQ(status_of([&] { by_count.acquire("", true); }), 200);  // stateless requests are not sessions
}

}  // namespace
}  // namespace swarmt::serve
