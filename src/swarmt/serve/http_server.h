// The HTTP side of `swarmt serve` (cpp-httplib): OpenAI's paths over a ModelService, errors as OpenAI's
// error bodies, server-sent events for streams, bearer-key authentication, and a clean stop on
// SIGTERM / SIGINT: the listening socket closes, requests in flight run to their end, then it returns.
//
//   GET  /health                      GET  /v1/models
//   POST /v1/completions              POST /v1/chat/completions
//   GET  /v1/sessions                 DELETE /v1/sessions/{id}
//   POST /v1/sessions/{id}/save       POST /v1/sessions/{id}/load
#pragma once

#include <cstddef>
#include <string>

#include "swarmt/serve/model_service.h"

namespace swarmt::serve {

struct HttpOptions {
  std::string host = "127.0.0.1";
  int port = 8080;                    // 0: any free port (printed when listening)
  std::string api_key;                // "": no authentication
  int threads = 4;                    // connections served at once
  size_t max_body_bytes = 8u << 20;   // larger bodies are refused (413)
  int timeout_seconds = 60;           // reading a request, writing a response
};

// Serves until SIGTERM or SIGINT; prints "listening on http://HOST:PORT" to stdout once bound.
// Returns 0 after a signal; BadInput if it cannot listen.
int run_http_server(ModelService& service, const HttpOptions& options);

}  // namespace swarmt::serve
