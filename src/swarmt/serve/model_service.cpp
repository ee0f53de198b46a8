#include "swarmt/serve/model_service.h"

#include <chrono>
#include <filesystem>
#include <random>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include "swarmt/core/error.h"
#include "swarmt/core/memory_budget.h"
#include "swarmt/core/memory_usage.h"
#include "swarmt/infer/generate.h"
#include "swarmt/infer/loaded_model.h"
#include "swarmt/serve/api_error.h"
#include "swarmt/serve/completion_request.h"
#include "swarmt/serve/session_store.h"
#include "swarmt/tokenizer/chat_format.h"
#include "swarmt/tokenizer/stop_strings.h"
#include "swarmt/tokenizer/stream_decoder.h"

namespace fs = std::filesystem;

namespace swarmt::serve {
namespace {

int64_t unix_seconds() {
  return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// swarmt keeps freed heap memory for reuse (core/malloc_tuning.h): right for training steps, wrong for a
// server, where one long prompt's activations would stay in the RSS of every worker thread's arena for
// the life of the process. After a long prompt the server gives them back.
constexpr size_t kTrimAfterPromptTokens = 4096;

void give_back_freed_memory() {
#if defined(__GLIBC__)
  malloc_trim(0);
#endif
}

// A request id: its kind and a counter unique in this process.
std::string next_request_id(const char* kind) {
  static std::atomic<int64_t> counter{0};
  return str_cat(kind, "-", unix_seconds(), "-", ++counter);
}

class ModelServiceImpl;

class PreparedCompletionImpl : public PreparedCompletion {
 public:
  PreparedCompletionImpl(const ModelServiceImpl& service, CompletionRequest request, std::unique_ptr<SessionLease> lease,
                         std::vector<int64_t> prompt_ids, infer::GenerateOptions generate,
                         std::vector<std::string> stop_strings)
      : service_(service), request_(std::move(request)), lease_(std::move(lease)), prompt_ids_(std::move(prompt_ids)),
        generate_(std::move(generate)), stop_strings_(std::move(stop_strings)),
        id_(next_request_id(request_.chat ? "chatcmpl" : "cmpl")), created_(unix_seconds()) {}

  bool stream() const override { return request_.stream; }
  Json run(const std::function<bool(const Json&)>& on_chunk) override;

 private:
  Json chunk(const Json& choice) const;

  const ModelServiceImpl& service_;
  CompletionRequest request_;
  std::unique_ptr<SessionLease> lease_;
  std::vector<int64_t> prompt_ids_;
  infer::GenerateOptions generate_;
  std::vector<std::string> stop_strings_;
  std::string id_;
  int64_t created_;
};

class ModelServiceImpl : public ModelService {
 public:
  ModelServiceImpl(std::shared_ptr<const infer::LoadedModel> model, const ServiceOptions& options)
      : model_(std::move(model)), options_(options), created_(unix_seconds()) {
    SWARMT_CHECK_INPUT(options_.max_sessions >= 1, "--max-sessions must be at least 1, got ", options_.max_sessions);
    SWARMT_CHECK_INPUT(options_.ctx_size >= 1, "--ctx-size must be at least 1, got ", options_.ctx_size);
    SWARMT_CHECK_INPUT(options_.max_tokens >= 1, "--max-tokens must be at least 1, got ", options_.max_tokens);
    SWARMT_CHECK_INPUT(options_.memory_budget >= 0, "--memory-budget must not be negative");
    if (!options_.state_dir.empty()) {
      std::error_code ec;
      fs::create_directories(options_.state_dir, ec);
      SWARMT_CHECK_INPUT(fs::is_directory(options_.state_dir), "--state-dir ", options_.state_dir,
                         ": not a directory and cannot be created (", ec.message(), ")");
    }
    if (options_.model_name.empty()) options_.model_name = fs::path(model_->dir()).lexically_normal().filename().string();
    if (options_.model_name.empty() || options_.model_name == ".")
      options_.model_name = fs::path(model_->dir()).lexically_normal().parent_path().filename().string();
    if (model_->has_tokenizer() && model_->tokenizer_config() && !model_->tokenizer_config()->chat_template.empty()) {
      try {
        chat_ = tokenizer::ChatFormat::from_config(*model_->tokenizer_config());
      } catch (const Error& e) {
        chat_error_ = e.what();
      }
    } else {
      chat_error_ = str_cat(model_->dir(), " has no chat_template in tokenizer_config.json");
    }
    // What a session may grow to: a fresh state taking ctx_size tokens. A state that grows further with
    // twice as many is a full-attention KV cache: its sessions are held to ctx_size tokens.
    auto fresh = model_->new_stream();
    const int64_t at_ctx = fresh->state_bytes_after(options_.ctx_size);
    grows_ = fresh->state_bytes_after(2 * options_.ctx_size) > at_ctx;
    reserve_ = std::max<int64_t>(at_ctx, 1);
    int64_t budget = options_.memory_budget;
    if (budget == 0) {
      const int64_t available = available_memory_bytes();
      budget = available > 0 ? available / 2 : int64_t(1) << 32;
    }
    SWARMT_CHECK_INPUT(budget >= reserve_, "--memory-budget ", format_bytes(budget), " does not hold one session (",
                       format_bytes(reserve_), grows_ ? str_cat(" for ", options_.ctx_size, " tokens: lower --ctx-size") : "",
                       ")");
    sessions_ = std::make_unique<SessionStore>([loaded = model_] { return loaded->new_stream(); }, reserve_, budget,
                                               options_.max_sessions);
  }

  std::string model_name() const override { return options_.model_name; }
  std::string describe() const override {
    return str_cat(model_->describe(), "; a session's state takes up to ", format_bytes(reserve_),
                   grows_ ? str_cat(" (", options_.ctx_size, " tokens of KV cache)") : " whatever it reads");
  }

  Json models() const override {
    return Json{{"object", "list"},
                {"data", Json::array({Json{{"id", options_.model_name},
                                           {"object", "model"},
                                           {"created", created_},
                                           {"owned_by", "swarmt"},
                                           {"session_state_bytes", reserve_},
                                           {"context_limit", grows_ ? Json(options_.ctx_size) : Json(nullptr)}}})}};
  }

  Json health() const override {
    return Json{{"status", "ok"},
                {"model", options_.model_name},
                {"sessions", sessions_->sessions()},
                {"max_sessions", sessions_->max_sessions()},
                {"reserved_bytes", sessions_->reserved_bytes()},
                {"memory_budget_bytes", sessions_->budget_bytes()},
                {"session_state_bytes", reserve_},
                {"rss_bytes", current_rss_bytes()}};
  }

  std::unique_ptr<PreparedCompletion> prepare(const Json& body, bool chat, const std::string& header_session) override;

  Json list_sessions() const override {
    Json data = Json::array();
    for (const auto& info : sessions_->list()) {
      data.push_back(Json{{"id", info.id},
                          {"busy", info.busy},
                          {"tokens", info.busy ? Json(nullptr) : Json(info.tokens)},
                          {"state_bytes", info.busy ? Json(nullptr) : Json(info.state_bytes)}});
    }
    return Json{{"object", "list"}, {"data", data}};
  }

  Json delete_session(const std::string& id) override {
    check_session_id(id, "session_id");
    auto lease = sessions_->acquire(id, /*create=*/false);
    lease->drop();
    return Json{{"id", id}, {"object", "session"}, {"deleted", true}};
  }

  Json save_session(const std::string& id, const Json& body) override;
  Json load_session(const std::string& id, const Json& body) override;

  const infer::LoadedModel& model() const { return *model_; }

 private:
  friend class PreparedCompletionImpl;
  std::string state_path(const std::string& id, const Json& body, std::string* name) const;
  std::vector<int64_t> prompt_ids(const CompletionRequest& request, const Session& session) const;

  std::shared_ptr<const infer::LoadedModel> model_;
  ServiceOptions options_;
  int64_t created_;
  std::optional<tokenizer::ChatFormat> chat_;
  std::string chat_error_;
  bool grows_ = false;
  int64_t reserve_ = 0;
  std::unique_ptr<SessionStore> sessions_;
};

std::vector<int64_t> ModelServiceImpl::prompt_ids(const CompletionRequest& r, const Session& session) const {
  const bool fresh = session.tokens() == 0;
  std::vector<int32_t> ids;
  if (r.chat) {
    if (!chat_) throw invalid_request("messages", str_cat("this model cannot chat: ", chat_error_, " (use /v1/completions)"));
    if (!fresh && session.kind != "chat")
      throw invalid_request("session_id", str_cat("session '", session.id, "' holds a text completion, not a chat"));
    std::vector<tokenizer::ChatMessage> messages;
    for (const auto& m : r.messages) messages.push_back({m.role, m.content});
    ids = fresh ? chat_->encode(model_->tokenizer(), messages, /*add_generation_prompt=*/true)
                : model_->tokenizer().encode(chat_->render_continuation(messages), /*add_special_tokens=*/false);
  } else if (r.prompt_text) {
    if (!model_->has_tokenizer())
      throw invalid_request("prompt", str_cat(model_->dir(), " has no tokenizer.json: send the prompt as token ids"));
    if (!fresh && session.kind == "chat")
      throw invalid_request("session_id", str_cat("session '", session.id, "' holds a chat: continue it on /v1/chat/completions"));
    // The special tokens (a BOS) start a text, not its continuation.
    ids = model_->tokenizer().encode(*r.prompt_text, /*add_special_tokens=*/fresh);
  } else {
    const int64_t vocab = model_->model()->vocab_size();
    for (size_t i = 0; i < r.prompt_ids.size(); ++i)
      if (r.prompt_ids[i] >= vocab)
        throw invalid_request(str_cat("prompt[", i, "]"), str_cat("token id ", r.prompt_ids[i], " is out of range: the "
                                                                  "model's vocabulary has ", vocab, " ids (0..", vocab - 1, ")"));
    if (!fresh && session.kind == "chat")
      throw invalid_request("session_id", str_cat("session '", session.id, "' holds a chat: continue it on /v1/chat/completions"));
    return r.prompt_ids;
  }
  return std::vector<int64_t>(ids.begin(), ids.end());
}

std::unique_ptr<PreparedCompletion> ModelServiceImpl::prepare(const Json& body, bool chat, const std::string& header_session) {
  RequestLimits limits;
  limits.max_tokens = options_.max_tokens;
  CompletionRequest request = parse_completion_request(body, chat, limits);
  if (!header_session.empty()) {
    check_session_id(header_session, "X-Session-Id");
    if (!request.session_id.empty() && request.session_id != header_session)
      throw invalid_request("session_id", str_cat("'session_id' '", request.session_id, "' differs from the X-Session-Id header '",
                                                  header_session, "'"));
    request.session_id = header_session;
  }
  auto lease = sessions_->acquire(request.session_id, /*create=*/true);
  Session& session = lease->session();
  std::vector<int64_t> ids;
  try {
    ids = prompt_ids(request, session);
  } catch (const Error& e) {  // the tokenizer's (Gemma's roles that do not alternate, ...)
    if (lease->created()) lease->drop();
    if (e.kind() != ErrorKind::BadInput) throw;
    throw invalid_request(chat ? "messages" : "prompt", e.what());
  } catch (const ApiError&) {
    if (lease->created()) lease->drop();
    throw;
  }
  if (ids.empty() && session.pending.empty()) {
    if (lease->created()) lease->drop();
    throw invalid_request(chat ? "messages" : "prompt", session.tokens() == 0 ? "the prompt is empty"
                                                                               : "nothing new to read: send a prompt");
  }
  const int64_t total = session.tokens() + static_cast<int64_t>(ids.size()) + request.max_tokens;
  if (grows_ && total > options_.ctx_size) {
    if (lease->created()) lease->drop();
    throw invalid_request("max_tokens", str_cat("this request needs ", total, " tokens of context (", session.tokens(),
                                                " held by the session + ", ids.size(), " of prompt + ", request.max_tokens,
                                                " max_tokens), past the server's limit of ", options_.ctx_size,
                                                " (--ctx-size) for this full-attention model"),
                          "context_length_exceeded");
  }
  infer::GenerateOptions g;
  g.max_new_tokens = request.max_tokens;
  g.sampling.temperature = request.temperature;
  g.sampling.top_p = request.top_p;
  g.sampling.top_k = request.top_k;
  g.sampling.seed = request.seed ? *request.seed : std::random_device{}();
  std::vector<std::string> stops = request.stop;
  if (!request.ignore_eos) {
    g.stop_ids = model_->stop_ids();
    if (chat && chat_) {
      for (int32_t id : chat_->stop_ids(model_->tokenizer())) g.stop_ids.push_back(id);
      for (const auto& s : chat_->stop_strings()) stops.push_back(s);
    }
  }
  if (model_->has_tokenizer()) g.vocab_limit = model_->tokenizer().vocab_size();
  return std::make_unique<PreparedCompletionImpl>(*this, std::move(request), std::move(lease), std::move(ids),
                                                  std::move(g), std::move(stops));
}

Json PreparedCompletionImpl::chunk(const Json& choice) const {
  return Json{{"id", id_},
              {"object", request_.chat ? "chat.completion.chunk" : "text_completion"},
              {"created", created_},
              {"model", service_.model_name()},
              {"choices", Json::array({choice})}};
}

Json PreparedCompletionImpl::run(const std::function<bool(const Json&)>& on_chunk) {
  Session& session = lease_->session();
  const bool has_text = service_.model().has_tokenizer();
  std::optional<tokenizer::StreamDecoder> decoder;
  if (has_text) decoder.emplace(service_.model().tokenizer(), /*skip_special_tokens=*/true);
  tokenizer::StopStringFilter filter(stop_strings_);
  std::string text;
  bool client_gone = false;
  auto send = [&](const Json& choice) {
    if (request_.stream && !client_gone && !on_chunk(chunk(choice))) client_gone = true;
  };
  // A chunk per piece of text; with return_tokens, a chunk per token (its text may be "": a character
  // still incomplete, or held back as a possible stop string).
  auto emit = [&](const std::string& delta, const Json& ids) {
    if (delta.empty() && ids.empty()) return;
    text += delta;
    Json choice = request_.chat ? Json{{"index", 0}, {"delta", {{"content", delta}}}, {"finish_reason", nullptr}}
                                : Json{{"index", 0}, {"text", delta}, {"logprobs", nullptr}, {"finish_reason", nullptr}};
    if (!ids.empty()) choice["token_ids"] = ids;
    send(choice);
  };
  if (request_.chat) send(Json{{"index", 0}, {"delta", {{"role", "assistant"}, {"content", ""}}}, {"finish_reason", nullptr}});

  std::vector<int64_t> feed = session.pending;
  feed.insert(feed.end(), prompt_ids_.begin(), prompt_ids_.end());
  std::vector<int64_t> token_ids;
  auto on_token = [&](int64_t id) {
    token_ids.push_back(id);
    const std::string delta = decoder ? filter.push(decoder->push(static_cast<int32_t>(id))) : std::string();
    emit(delta, request_.return_tokens || !decoder ? Json::array({id}) : Json::array());
    return !filter.stopped() && !client_gone;
  };
  infer::GenerateResult result;
  try {
    result = infer::generate(*session.stream, feed, generate_, on_token);
  } catch (...) {
    // The state may hold part of this request: a session that cannot say what it read is dropped.
    lease_->drop();
    throw;
  }
  // Every token fed, then the generated ones not fed yet (generate() feeds each but the last).
  session.pending.assign(result.tokens.begin() + result.decode_steps, result.tokens.end());
  if (feed.size() >= kTrimAfterPromptTokens) give_back_freed_memory();
  session.kind = request_.chat ? "chat" : "text";
  if (decoder && !filter.stopped()) emit(filter.push(decoder->flush()) + filter.flush(), Json::array());

  const std::string finish = (filter.stopped() || result.stop_reason == "stop_id") ? "stop" : "length";
  const int64_t prompt_tokens = static_cast<int64_t>(prompt_ids_.size());
  const int64_t completion_tokens = static_cast<int64_t>(result.tokens.size());
  Json usage{{"prompt_tokens", prompt_tokens},
             {"completion_tokens", completion_tokens},
             {"total_tokens", prompt_tokens + completion_tokens},
             {"session_tokens", session.id.empty() ? Json(nullptr) : Json(session.tokens())}};
  if (request_.stream) {
    if (request_.chat) {
      send(Json{{"index", 0}, {"delta", Json::object()}, {"finish_reason", finish}});
    } else {
      send(Json{{"index", 0}, {"text", ""}, {"logprobs", nullptr}, {"finish_reason", finish}});
    }
    if (request_.include_usage) {
      Json last = chunk(Json::object());
      last["choices"] = Json::array();
      last["usage"] = usage;
      if (!client_gone) on_chunk(last);
    }
    return nullptr;
  }
  Json choice = request_.chat ? Json{{"index", 0},
                                     {"message", {{"role", "assistant"}, {"content", text}}},
                                     {"logprobs", nullptr},
                                     {"finish_reason", finish}}
                              : Json{{"index", 0}, {"text", text}, {"logprobs", nullptr}, {"finish_reason", finish}};
  if (!has_text || request_.return_tokens) choice["token_ids"] = token_ids;  // no tokenizer: ids are the answer
  Json response{{"id", id_},
                {"object", request_.chat ? "chat.completion" : "text_completion"},
                {"created", created_},
                {"model", service_.model_name()},
                {"choices", Json::array({choice})},
                {"usage", usage}};
  if (!session.id.empty()) response["session_id"] = session.id;
  return response;
}

std::string ModelServiceImpl::state_path(const std::string& id, const Json& body, std::string* name) const {
  check_session_id(id, "session_id");
  if (options_.state_dir.empty())
    throw ApiError(400, "invalid_request_error", "saving and loading states is off: start the server with --state-dir DIR");
  if (!body.is_null() && !body.is_object()) throw invalid_request("", "the request body must be a JSON object or empty");
  *name = id;
  if (body.is_object()) {
    for (const auto& [key, value] : body.items()) {
      if (key != "name") throw invalid_request(key, str_cat("unknown field '", key, "' (only 'name')"));
      if (!value.is_string()) throw invalid_request("name", "'name' must be a string");
      *name = value.get<std::string>();
      check_session_id(*name, "name");
    }
  }
  return (fs::path(options_.state_dir) / (*name + ".state")).string();
}

Json ModelServiceImpl::save_session(const std::string& id, const Json& body) {
  std::string name;
  const std::string path = state_path(id, body, &name);
  auto lease = sessions_->acquire(id, /*create=*/false);
  Session& session = lease->session();
  const auto t0 = std::chrono::steady_clock::now();
  std::map<std::string, std::string> meta{{"pending", Json(session.pending).dump()}, {"kind", session.kind}};
  const FileDigest digest = session.stream->save(path, meta);
  return Json{{"id", id},
              {"object", "session.state"},
              {"name", name},
              {"bytes", digest.bytes},
              {"sha256", digest.sha256},
              {"tokens", session.tokens()},
              {"state_bytes", session.stream->state_bytes()},
              {"seconds", seconds_since(t0)}};
}

Json ModelServiceImpl::load_session(const std::string& id, const Json& body) {
  std::string name;
  const std::string path = state_path(id, body, &name);
  if (!fs::is_regular_file(path))
    throw ApiError(404, "not_found_error", str_cat("no saved state named '", name, "'"), "name");
  auto lease = sessions_->acquire(id, /*create=*/true);
  Session& session = lease->session();
  const auto t0 = std::chrono::steady_clock::now();
  // Everything is checked before the session changes: a refused file leaves it as it was.
  auto fresh = model_->new_stream();
  std::map<std::string, std::string> meta;
  std::vector<int64_t> pending;
  try {
    meta = fresh->load(path);
    const Json p = Json::parse(meta["pending"], nullptr, /*allow_exceptions=*/false);
    SWARMT_CHECK_INPUT(p.is_array() && p.size() <= 1, path, ": entry 'pending' is not a list of at most one token id");
    for (const auto& v : p) {
      SWARMT_CHECK_INPUT(v.is_number_integer() && v.get<int64_t>() >= 0 && v.get<int64_t>() < model_->model()->vocab_size(),
                         path, ": entry 'pending' holds ", v.dump(), ", not a token id of this model");
      pending.push_back(v.get<int64_t>());
    }
    SWARMT_CHECK_INPUT(meta["kind"] == "" || meta["kind"] == "text" || meta["kind"] == "chat", path,
                       ": entry 'kind' is '", meta["kind"], "'");
    SWARMT_CHECK_INPUT(!grows_ || fresh->position() + static_cast<int64_t>(pending.size()) <= options_.ctx_size, path,
                       ": the state holds ", fresh->position(), " tokens, past --ctx-size ", options_.ctx_size);
  } catch (const Error& e) {
    if (lease->created()) lease->drop();
    if (e.kind() != ErrorKind::BadInput) throw;
    throw ApiError(400, "invalid_request_error", e.what(), "name", "invalid_state_file");
  }
  session.stream = std::move(fresh);
  session.pending = std::move(pending);
  session.kind = meta["kind"];
  return Json{{"id", id},
              {"object", "session.state"},
              {"name", name},
              {"tokens", session.tokens()},
              {"state_bytes", session.stream->state_bytes()},
              {"seconds", seconds_since(t0)}};
}

}  // namespace

std::unique_ptr<ModelService> ModelService::create(std::shared_ptr<const infer::LoadedModel> model,
                                                   const ServiceOptions& options) {
  return std::make_unique<ModelServiceImpl>(std::move(model), options);
}

}  // namespace swarmt::serve
