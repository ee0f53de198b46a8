// Errors of the HTTP API, answered as OpenAI answers them:
//   HTTP <status>  {"error": {"message": ..., "type": ..., "param": <field or null>, "code": <code or null>}}
// Thrown anywhere below the HTTP layer; BadInput from the engine (a tampered state file, a prompt past the
// memory) becomes a 400 with its message.
#pragma once

#include <stdexcept>
#include <string>

#include "swarmt/core/json.h"

namespace swarmt::serve {

struct ApiError : std::runtime_error {
  ApiError(int status, std::string type, const std::string& message, std::string param = "", std::string code = "")
      : std::runtime_error(message), status(status), type(std::move(type)), param(std::move(param)), code(std::move(code)) {}
  int status;
  std::string type;   // "invalid_request_error", "authentication_error", "not_found_error", ...
  std::string param;  // the request field at fault ("" = none)
  std::string code;   // machine-readable detail ("context_length_exceeded", ...; "" = none)
};

// 400 invalid_request_error naming `param`.
inline ApiError invalid_request(const std::string& param, const std::string& message, std::string code = "") {
  return ApiError(400, "invalid_request_error", message, param, std::move(code));
}

inline Json error_body(int status, const std::string& type, const std::string& message, const std::string& param = "",
                       const std::string& code = "") {
  return Json{{"error",
               {{"message", message},
                {"type", type},
                {"param", param.empty() ? Json(nullptr) : Json(param)},
                {"code", code.empty() ? Json(nullptr) : Json(code)}}}};
}

inline Json error_body(const ApiError& e) { return error_body(e.status, e.type, e.what(), e.param, e.code); }

}  // namespace swarmt::serve
