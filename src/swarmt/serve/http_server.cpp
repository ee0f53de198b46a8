#include "swarmt/serve/http_server.h"

#include <httplib.h>
#include <signal.h>

#include <atomic>
#include <chrono>
#include <iostream>
#include <thread>

#include "swarmt/core/error.h"
#include "swarmt/serve/api_error.h"
#include "swarmt/serve/completion_request.h"

namespace swarmt::serve {
namespace {

std::atomic<int> g_stop_signal{0};

extern "C" void on_stop_signal(int signal) { g_stop_signal.store(signal); }

// JSON as text; invalid UTF-8 (which no response should hold) is replaced, never thrown.
std::string to_text(const Json& json) { return json.dump(-1, ' ', false, Json::error_handler_t::replace); }

void send_json(httplib::Response& res, int status, const Json& json) {
  res.status = status;
  res.set_content(to_text(json), "application/json");
}

void send_error(httplib::Response& res, const ApiError& e) { send_json(res, e.status, error_body(e)); }

// Runs a handler, answering every failure with an OpenAI error body.
template <typename Handler>
httplib::Server::Handler guarded(Handler handler) {
  return [handler](const httplib::Request& req, httplib::Response& res) {
    try {
      handler(req, res);
    } catch (const ApiError& e) {
      send_error(res, e);
    } catch (const Error& e) {
      if (e.kind() == ErrorKind::BadInput) {
        send_error(res, ApiError(400, "invalid_request_error", e.what()));
      } else {
        send_error(res, ApiError(500, "server_error", str_cat("internal error: ", e.what())));
      }
    } catch (const std::bad_alloc&) {
      send_error(res, ApiError(503, "server_error", "out of memory while serving this request"));
    } catch (const std::exception& e) {
      send_error(res, ApiError(500, "server_error", str_cat("internal error: ", e.what())));
    }
  };
}

Json parse_body(const httplib::Request& req, bool allow_empty) {
  if (allow_empty && req.body.find_first_not_of(" \t\r\n") == std::string::npos) return nullptr;
  check_json_nesting(req.body);
  try {
    return Json::parse(req.body);
  } catch (const Json::exception& e) {
    throw invalid_request("", str_cat("the request body is not valid JSON: ", e.what()));
  }
}

// Equal strings in a time that does not depend on where they differ.
bool same_secret(const std::string& a, const std::string& b) {
  unsigned char diff = a.size() == b.size() ? 0 : 1;
  const size_t n = std::max(a.size(), b.size());
  for (size_t i = 0; i < n; ++i) {
    const char x = i < a.size() ? a[i] : 0, y = i < b.size() ? b[i] : 0;
    diff |= static_cast<unsigned char>(x ^ y);
  }
  return diff == 0;
}

void stream_completion(std::shared_ptr<PreparedCompletion> prepared, httplib::Response& res) {
  res.set_header("Cache-Control", "no-cache");
  res.set_chunked_content_provider("text/event-stream", [prepared](size_t, httplib::DataSink& sink) {
    auto event = [&sink](const std::string& data) {
      const std::string line = "data: " + data + "\n\n";
      return sink.write(line.data(), line.size());
    };
    try {
      prepared->run([&](const Json& chunk) { return event(to_text(chunk)); });
      event("[DONE]");
    } catch (const ApiError& e) {
      event(to_text(error_body(e)));
    } catch (const std::exception& e) {
      event(to_text(error_body(500, "server_error", str_cat("generation failed: ", e.what()))));
    }
    sink.done();
    return true;
  });
}

}  // namespace

int run_http_server(ModelService& service, const HttpOptions& options) {
  SWARMT_CHECK_INPUT(options.threads >= 1 && options.threads <= 1024, "--parallel must be in 1..1024, got ", options.threads);
  SWARMT_CHECK_INPUT(options.port >= 0 && options.port <= 65535, "--port must be in 0..65535, got ", options.port);
  httplib::Server server;
  const int threads = options.threads;
  server.new_task_queue = [threads] { return new httplib::ThreadPool(static_cast<size_t>(threads)); };
  server.set_payload_max_length(options.max_body_bytes);
  server.set_read_timeout(options.timeout_seconds, 0);
  server.set_write_timeout(options.timeout_seconds, 0);

  const std::string api_key = options.api_key;
  server.set_pre_routing_handler([api_key](const httplib::Request& req, httplib::Response& res) {
    if (api_key.empty() || same_secret(req.get_header_value("Authorization"), "Bearer " + api_key))
      return httplib::Server::HandlerResponse::Unhandled;
    send_error(res, ApiError(401, "authentication_error", "missing or wrong API key: send 'Authorization: Bearer <key>'",
                             "", "invalid_api_key"));
    return httplib::Server::HandlerResponse::Handled;
  });
  // Statuses httplib sets itself (no route, a body past the limit, a bad request line) get a JSON body too.
  const size_t max_body = options.max_body_bytes;
  server.set_error_handler([max_body](const httplib::Request& req, httplib::Response& res) {
    if (!res.body.empty()) return;
    if (res.status == 404) {
      send_error(res, ApiError(404, "not_found_error", str_cat("no such path: ", req.method, " ", req.path)));
    } else if (res.status == 413) {
      send_error(res, ApiError(413, "invalid_request_error", str_cat("the request body is larger than the server's limit of ",
                                                                     max_body, " bytes (--max-body-bytes)")));
    } else {
      send_error(res, ApiError(res.status, "invalid_request_error", str_cat("HTTP ", res.status)));
    }
  });

  server.Get("/health", guarded([&service](const httplib::Request&, httplib::Response& res) {
    send_json(res, 200, service.health());
  }));
  server.Get("/v1/models", guarded([&service](const httplib::Request&, httplib::Response& res) {
    send_json(res, 200, service.models());
  }));
  for (const bool chat : {false, true}) {
    server.Post(chat ? "/v1/chat/completions" : "/v1/completions",
                guarded([&service, chat](const httplib::Request& req, httplib::Response& res) {
                  std::shared_ptr<PreparedCompletion> prepared =
                      service.prepare(parse_body(req, false), chat, req.get_header_value("X-Session-Id"));
                  if (prepared->stream()) {
                    stream_completion(std::move(prepared), res);
                  } else {
                    send_json(res, 200, prepared->run({}));
                  }
                }));
  }
  server.Get("/v1/sessions", guarded([&service](const httplib::Request&, httplib::Response& res) {
    send_json(res, 200, service.list_sessions());
  }));
  server.Delete(R"(/v1/sessions/([^/]+))", guarded([&service](const httplib::Request& req, httplib::Response& res) {
    send_json(res, 200, service.delete_session(req.matches[1]));
  }));
  server.Post(R"(/v1/sessions/([^/]+)/save)", guarded([&service](const httplib::Request& req, httplib::Response& res) {
    send_json(res, 200, service.save_session(req.matches[1], parse_body(req, true)));
  }));
  server.Post(R"(/v1/sessions/([^/]+)/load)", guarded([&service](const httplib::Request& req, httplib::Response& res) {
    send_json(res, 200, service.load_session(req.matches[1], parse_body(req, true)));
  }));

  int port = options.port;
  if (port == 0) {
    port = server.bind_to_any_port(options.host);
    SWARMT_CHECK_INPUT(port > 0, "cannot listen on ", options.host, " (any port)");
  } else {
    SWARMT_CHECK_INPUT(server.bind_to_port(options.host, port), "cannot listen on ", options.host, ":", port,
                       " (in use, or not an address of this machine)");
  }
  // A client that goes away mid-stream must not kill the server with SIGPIPE.
  ::signal(SIGPIPE, SIG_IGN);
  struct sigaction action {};
  action.sa_handler = on_stop_signal;
  sigemptyset(&action.sa_mask);
  ::sigaction(SIGTERM, &action, nullptr);
  ::sigaction(SIGINT, &action, nullptr);
  std::atomic<bool> finished{false};
  std::thread watcher([&] {
    while (!finished.load()) {
      if (g_stop_signal.load() != 0) {
        server.stop();
        return;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  });
  std::cout << "listening on http://" << options.host << ":" << port << std::endl;
  server.listen_after_bind();  // returns once stopped, after the requests in flight have ended
  finished.store(true);
  watcher.join();
  if (g_stop_signal.load() != 0) std::cerr << "swarmt serve: stopped by signal " << g_stop_signal.load() << std::endl;
  return 0;
}

}  // namespace swarmt::serve
