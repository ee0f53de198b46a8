// The server's sessions: streaming states by id, each used by one request at a time, with the memory
// they may grow to reserved against a budget (see serve/model_service.h for the rules).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "swarmt/infer/token_stream.h"

namespace swarmt::serve {

struct Session {
  std::string id;                              // "" = a stateless request's
  std::unique_ptr<infer::TokenStream> stream;
  std::vector<int64_t> pending;                // generated tokens not fed yet (the last of a reply)
  std::string kind;                            // what it has read: "" (nothing), "text" or "chat"
  std::mutex busy;                             // held by the request using it
  int64_t tokens() const { return stream->position() + static_cast<int64_t>(pending.size()); }
};

class SessionStore;

// A session held by one request; releases it (and a stateless request's reservation) when destroyed.
class SessionLease {
 public:
  SessionLease(SessionStore* store, std::shared_ptr<Session> session, std::unique_lock<std::mutex> lock, bool created);
  ~SessionLease();
  SessionLease(const SessionLease&) = delete;
  SessionLease& operator=(const SessionLease&) = delete;
  Session& session() { return *session_; }
  bool created() const { return created_; }  // this request created it
  // Drops the session from the store (its state is inconsistent, or the client deleted it).
  void drop();

 private:
  SessionStore* store_;
  std::shared_ptr<Session> session_;
  std::unique_lock<std::mutex> lock_;
  bool created_;
};

class SessionStore {
 public:
  using StreamFactory = std::function<std::unique_ptr<infer::TokenStream>()>;
  // reserve_bytes: what one session's state may grow to; budget_bytes: for all of them together.
  SessionStore(StreamFactory factory, int64_t reserve_bytes, int64_t budget_bytes, int64_t max_sessions);

  // The session `id` ("" = a new stateless one), held for the caller. Absent: created when `create`, else
  // ApiError 404. Busy: 409. No room (max_sessions, memory budget): 503.
  std::unique_ptr<SessionLease> acquire(const std::string& id, bool create);

  struct Info {
    std::string id;
    int64_t tokens = -1;       // -1 while busy (its request is changing it)
    int64_t state_bytes = -1;
    bool busy = false;
  };
  std::vector<Info> list() const;
  int64_t sessions() const;
  int64_t reserved_bytes() const;
  int64_t reserve_bytes() const { return reserve_bytes_; }
  int64_t budget_bytes() const { return budget_bytes_; }
  int64_t max_sessions() const { return max_sessions_; }

 private:
  friend class SessionLease;
  void release_stateless();
  void erase(const std::string& id);

  StreamFactory factory_;
  int64_t reserve_bytes_, budget_bytes_, max_sessions_;
  mutable std::mutex mutex_;
  std::map<std::string, std::shared_ptr<Session>> sessions_;
  int64_t stateless_ = 0;  // stateless requests running now
};

}  // namespace swarmt::serve
