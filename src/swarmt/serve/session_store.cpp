#include "swarmt/serve/session_store.h"

#include "swarmt/core/error.h"
#include "swarmt/core/memory_budget.h"
#include "swarmt/serve/api_error.h"

namespace swarmt::serve {

SessionLease::SessionLease(SessionStore* store, std::shared_ptr<Session> session, std::unique_lock<std::mutex> lock,
                           bool created)
    : store_(store), session_(std::move(session)), lock_(std::move(lock)), created_(created) {}

SessionLease::~SessionLease() {
  if (session_->id.empty()) store_->release_stateless();
}

void SessionLease::drop() {
  if (!session_->id.empty()) store_->erase(session_->id);
}

SessionStore::SessionStore(StreamFactory factory, int64_t reserve_bytes, int64_t budget_bytes, int64_t max_sessions)
    : factory_(std::move(factory)), reserve_bytes_(reserve_bytes), budget_bytes_(budget_bytes), max_sessions_(max_sessions) {}

std::unique_ptr<SessionLease> SessionStore::acquire(const std::string& id, bool create) {
  std::shared_ptr<Session> session;
  bool created = false;
  {
    std::lock_guard<std::mutex> guard(mutex_);
    auto it = id.empty() ? sessions_.end() : sessions_.find(id);
    if (it != sessions_.end()) {
      session = it->second;
    } else {
      if (!create) throw ApiError(404, "not_found_error", str_cat("no session '", id, "'"), "session_id");
      const int64_t states = static_cast<int64_t>(sessions_.size()) + stateless_ + 1;
      if (!id.empty() && static_cast<int64_t>(sessions_.size()) + 1 > max_sessions_)
        throw ApiError(503, "server_error", str_cat("the server holds its maximum of ", max_sessions_,
                                                    " sessions (--max-sessions): delete one (DELETE /v1/sessions/{id})"),
                       "", "too_many_sessions");
      if (states * reserve_bytes_ > budget_bytes_)
        throw ApiError(503, "server_error", str_cat("no memory for another session: ", states - 1, " states of up to ",
                                                    format_bytes(reserve_bytes_), " each fill the budget of ",
                                                    format_bytes(budget_bytes_), " (--memory-budget)"),
                       "", "memory_budget_exceeded");
      session = std::make_shared<Session>();
      session->id = id;
      session->stream = factory_();
      created = true;
      if (id.empty()) {
        ++stateless_;
      } else {
        sessions_[id] = session;
      }
    }
  }
  std::unique_lock<std::mutex> lock(session->busy, std::try_to_lock);
  if (!lock.owns_lock())
    throw ApiError(409, "conflict_error", str_cat("session '", id, "' is busy with another request; retry when it ends"),
                   "session_id", "session_busy");
  return std::make_unique<SessionLease>(this, std::move(session), std::move(lock), created);
}

void SessionStore::release_stateless() {
  std::lock_guard<std::mutex> guard(mutex_);
  --stateless_;
}

void SessionStore::erase(const std::string& id) {
  std::lock_guard<std::mutex> guard(mutex_);
  sessions_.erase(id);
}

std::vector<SessionStore::Info> SessionStore::list() const {
  std::lock_guard<std::mutex> guard(mutex_);
  std::vector<Info> out;
  for (const auto& [id, session] : sessions_) {
    Info info;
    info.id = id;
    std::unique_lock<std::mutex> lock(session->busy, std::try_to_lock);
    info.busy = !lock.owns_lock();
    if (!info.busy) {
      info.tokens = session->tokens();
      info.state_bytes = session->stream->state_bytes();
    }
    out.push_back(info);
  }
  return out;
}

int64_t SessionStore::sessions() const {
  std::lock_guard<std::mutex> guard(mutex_);
  return static_cast<int64_t>(sessions_.size());
}

int64_t SessionStore::reserved_bytes() const {
  std::lock_guard<std::mutex> guard(mutex_);
  return (static_cast<int64_t>(sessions_.size()) + stateless_) * reserve_bytes_;
}

}  // namespace swarmt::serve
