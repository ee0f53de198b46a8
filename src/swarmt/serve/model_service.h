// The model side of `swarmt serve`: sessions, completions and saved states, with no HTTP in it (the
// HTTP layer, serve/http_server.h, maps paths to these calls and ApiError to status codes).
//
// Sessions. A request with a session id (the "session_id" field or the X-Session-Id header) runs on that
// session's streaming state, created by its first request: the state holds everything the session read
// and generated, so the next request sends only what is new (a completion's next text, or a chat's new
// messages: see tokenizer::ChatFormat::render_continuation). What a session holds after a request: the
// prompt and every generated token (also those past a stop string, and those generated before a client
// went away); never the end-of-sequence token that ended a reply. A request without a session id runs on
// a fresh state that is dropped after it.
//
// One request at a time per session: a request to a busy session is refused (409), never interleaved.
// Memory: each session reserves what its state can grow to (a constant for SWAX and ARMT; for full
// attention, the KV cache of --ctx-size tokens); a new session (or a stateless request) that would take
// the reservations past the budget, or past --max-sessions, is refused (503). Saved states
// (save_session / load_session) are files in --state-dir (models/model_state_file.h).
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "swarmt/core/json.h"

namespace swarmt::infer {
class LoadedModel;
}

namespace swarmt::serve {

struct ServiceOptions {
  std::string model_name;        // "" = the model directory's name
  std::string state_dir;         // "" = saving and loading states is off
  int64_t max_sessions = 64;
  int64_t ctx_size = 4096;       // the most tokens a session may hold when its state grows with them
  int64_t max_tokens = 4096;     // the largest max_tokens a request may ask for
  int64_t memory_budget = 0;     // bytes for session states; 0 = half the memory available at start
};

// A checked request, holding its session until it has run (or been dropped).
class PreparedCompletion {
 public:
  virtual ~PreparedCompletion() = default;
  virtual bool stream() const = 0;
  // Runs it. Streaming: each chunk goes to on_chunk (false from it means the client is gone: generation
  // stops, the session stays consistent). Returns the whole response (non-streaming) or the last usage
  // chunk, if asked for (null otherwise).
  virtual Json run(const std::function<bool(const Json&)>& on_chunk) = 0;
};

class ModelService {
 public:
  // BadInput for options that cannot work (a --state-dir that is not a writable directory, ...).
  static std::unique_ptr<ModelService> create(std::shared_ptr<const infer::LoadedModel> model,
                                              const ServiceOptions& options);
  virtual ~ModelService() = default;

  virtual std::string model_name() const = 0;
  virtual std::string describe() const = 0;
  virtual Json models() const = 0;  // GET /v1/models
  virtual Json health() const = 0;  // GET /health

  // Parses and checks `body` and takes its session (ApiError on anything wrong: nothing has run yet).
  // `header_session`: the X-Session-Id header ("" = none); given with a different body session_id: 400.
  virtual std::unique_ptr<PreparedCompletion> prepare(const Json& body, bool chat, const std::string& header_session) = 0;

  virtual Json list_sessions() const = 0;                                    // GET /v1/sessions
  virtual Json delete_session(const std::string& id) = 0;                    // DELETE /v1/sessions/{id}
  virtual Json save_session(const std::string& id, const Json& body) = 0;    // POST /v1/sessions/{id}/save
  virtual Json load_session(const std::string& id, const Json& body) = 0;    // POST /v1/sessions/{id}/load
};

}  // namespace swarmt::serve
